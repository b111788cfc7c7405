"""logs"""

"""Attempt logs: writing them (transcript), cleaning them, and extracting structured records."""

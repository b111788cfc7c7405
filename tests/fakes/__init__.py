"""Test doubles: fake agent CLIs and a fake clock."""

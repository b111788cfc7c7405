"""aidd: a supervisor that runs AI coding-agent CLIs unattended, in loops, on one project."""

__version__ = "0.1.0"

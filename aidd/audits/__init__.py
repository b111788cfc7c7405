"""Audits: their definitions (front matter, resolution, reports) and the findings they write."""

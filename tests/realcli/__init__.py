"""Ground truth about the real agent CLIs: a mock model server, CLI launch helpers, recorders."""

"""`aidd watch`: a read-only, full-screen view of a project's run (issue 30, docs/watch.md)."""

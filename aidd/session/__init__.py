"""The attempt engine: pty, idle machine, process tree, one agent run (SUP-10..43)."""

"""Agent CLI adapters: one module per CLI behind one interface (ADP-1)."""

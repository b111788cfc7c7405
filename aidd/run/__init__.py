"""One run, bottom up: phases and outcomes (values), signals, preflight, journal, lifecycle,
header, prompting, iteration, decisions, and the loop (supervisor)."""

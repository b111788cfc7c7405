"""`aidd --doctor`: one finding per check of the set-up (the CLI, its login, the machine, git,
the project, the lock, the configuration, the endpoints), shown as text or JSON; a run shows
the cheap checks' warnings and failures before its first attempt."""

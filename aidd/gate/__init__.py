"""The validation gate: the project's own checks, run by aidd, judged against a baseline."""

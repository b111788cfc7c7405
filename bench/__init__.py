"""Benchmarks: `python bench/run.py` (all) or `python bench/<name>_bench.py` (one)."""

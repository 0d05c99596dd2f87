"""Benchmarks: scripts that print figures (`python bench/<name>.py`), never timed asserts."""

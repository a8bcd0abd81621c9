"""skriskrank benchmarks: run each one with ``python -m benchmarks.<name>``."""

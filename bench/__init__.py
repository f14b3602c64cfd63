"""Benchmarks: see docs/BENCHMARKS.md."""

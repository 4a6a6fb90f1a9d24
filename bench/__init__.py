"""Benchmarks: `make bench` (all) or `python -m bench NAME...`; each prints its figures."""

"""Benchmarks: run on a GPU machine with `python -m benchmarks TABLE... [--data DIR] [--out DIR]`."""

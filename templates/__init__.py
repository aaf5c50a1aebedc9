"""Jinja2 CUDA templates: engine skeletons (skeleton/) and per-problem kernels."""

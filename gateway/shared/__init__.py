"""Plumbing every room uses: Prometheus metrics and background-task helpers."""

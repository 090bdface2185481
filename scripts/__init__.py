"""Operator scripts: the release check and its podman helpers (not part of the installed package)."""

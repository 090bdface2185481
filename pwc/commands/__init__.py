"""Command modules of the `pwc` CLI; each registers its own sub-parsers."""

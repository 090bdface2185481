"""``python -m pwc``: the same entry point as the ``pwc`` console script."""

from __future__ import annotations

from pwc.cli import run

if __name__ == "__main__":
    run()

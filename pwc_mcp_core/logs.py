"""Logging setup shared by every pwc-mcp process (gateway, workers, stdio): content-free lines on stderr.

The request line logger is ``pwc_mcp.requests`` (pwc-mcp.md §2.6). aiohttp's access
log is off and httpx/httpcore are held at WARNING: their lines carry addresses and
catalog URLs with queries and paper references.
"""

from __future__ import annotations

import logging
from typing import TextIO

__all__ = ["configure_logging"]


def configure_logging(level: str, *, stream: TextIO | None = None) -> None:
    """Configure the root logger once, at ``level`` (``LOG_LEVEL``), writing to ``stream`` (stderr)."""
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s %(message)s", stream=stream)
    logging.getLogger("aiohttp.access").disabled = True
    for name in ("httpx", "httpcore", "mcp"):
        logging.getLogger(name).setLevel(logging.WARNING)

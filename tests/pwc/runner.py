"""Run ``pwc.cli.main`` in-process against a real HTTP server and capture its output."""

from __future__ import annotations

import io
from dataclasses import dataclass

from pwc.cli import main
from pwc.transport import Client

__all__ = ["Result", "run_pwc"]


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_pwc(url: str, *argv: str, isatty: bool = False, timeout: float = 10.0) -> Result:
    """``pwc <argv>`` against the API at ``url`` (captured unless ``isatty``)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with Client(url, timeout=timeout) as client:
        code = main(list(argv), client=client, stdout=stdout, stderr=stderr, isatty=isatty)
    return Result(code, stdout.getvalue(), stderr.getvalue())

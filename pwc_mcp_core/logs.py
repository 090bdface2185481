"""Logging setup shared by every pwc-mcp process (gateway, workers, stdio): content-free lines on stderr.

The request line logger is ``pwc_mcp.requests`` (docs/tool-contract.md §2.6). aiohttp's access
log is off and httpx/httpcore are held at WARNING: their lines carry addresses and
catalog URLs with queries and paper references.

Lines are written in batches (:class:`BatchingStreamHandler`): one write system call
per request line cost a busy gateway about a fifth of its throughput. A line waits at
most ``FLUSH_INTERVAL_S``; warnings and errors, a full batch and process exit flush at once.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import Final, TextIO

__all__ = ["BatchingStreamHandler", "LineFormatter", "configure_logging"]

FLUSH_INTERVAL_S: Final = 0.2
BATCH_LINES: Final = 256
_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s %(message)s"


class LineFormatter(logging.Formatter):
    """``logging.Formatter`` with the timestamp text made once per second, not once per line.

    ``time.strftime`` was the largest single cost of a request line; the output is
    the same as the standard formatter's (``2026-12-01 10:00:00,123``).
    """

    def __init__(self, fmt: str = _FORMAT) -> None:
        super().__init__(fmt)
        self._second: tuple[int, str] = (-1, "")  # one tuple: threads may format concurrently

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802 - stdlib name
        if datefmt is not None:
            return super().formatTime(record, datefmt)
        second = int(record.created)
        cached = self._second
        if cached[0] != second:
            cached = self._second = (second, time.strftime(self.default_time_format, self.converter(record.created)))
        return self.default_msec_format % (cached[1], record.msecs)


class BatchingStreamHandler(logging.Handler):
    """Format records at once, write them in batches to ``stream``.

    Args:
        stream: where lines go (default ``sys.stderr``, looked up when writing).
        interval_s: the longest a line waits before a background thread writes it.
        batch_lines: a batch this large is written at once by the logging thread.
    """

    def __init__(self, stream: TextIO | None = None, *, interval_s: float = FLUSH_INTERVAL_S,
                 batch_lines: int = BATCH_LINES) -> None:
        super().__init__()
        self._stream = stream
        self._lines: list[str] = []
        self._batch_lines = batch_lines
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._start_flusher()
        # gunicorn forks its processes after logging is configured; threads do not survive a fork.
        os.register_at_fork(after_in_child=self._start_flusher)

    def _start_flusher(self) -> None:
        threading.Thread(target=self._flush_forever, name="pwc-mcp-log-flush", daemon=True).start()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:  # noqa: BLE001 - logging must never break the caller
            self.handleError(record)
            return
        with self.lock:
            self._lines.append(line)
            urgent = record.levelno >= logging.WARNING or len(self._lines) >= self._batch_lines
        if urgent:
            self.flush()

    def flush(self) -> None:
        with self.lock:
            lines, self._lines = self._lines, []
        if not lines:
            return
        stream = self._stream or sys.stderr
        try:
            stream.write("\n".join(lines) + "\n")
            stream.flush()
        except (OSError, ValueError):  # stderr closed at shutdown: nothing left to tell
            pass

    def close(self) -> None:
        self._stop.set()
        self.flush()
        super().close()

    def _flush_forever(self) -> None:
        while not self._stop.wait(self._interval_s):
            self.flush()


def configure_logging(level: str, *, stream: TextIO | None = None) -> None:
    """Configure the root logger once, at ``level`` (``LOG_LEVEL``), writing to ``stream`` (stderr)."""
    # Lines carry none of the caller, thread or process fields: skip collecting them
    # (the logging HOWTO's "Optimization" section names these switches).
    logging._srcfile = None  # noqa: SLF001 - documented switch: no caller frame lookup
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    root = logging.getLogger()
    if not root.handlers:
        handler = BatchingStreamHandler(stream)
        handler.setFormatter(LineFormatter())
        root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("aiohttp.access").disabled = True
    for name in ("httpx", "httpcore", "mcp"):
        logging.getLogger(name).setLevel(logging.WARNING)

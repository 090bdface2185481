"""Logging setup shared by every pwc-mcp process (gateway, workers, stdio): content-free lines on stderr.

The request line logger is ``pwc_mcp.requests`` (docs/tool-contract.md §2.6). aiohttp's access
log is off and httpx/httpcore are held at WARNING: their lines carry addresses and
catalog URLs with queries and paper references.

Records of the libraries that serve HTTP (``aiohttp.*``, ``asyncio``) pass
:class:`ContentFreeFilter` on the way out: their arguments (client addresses, request
lines), exception texts and tracebacks are dropped; what remains is the message template
and the exception's type, at INFO for a client's own fault (a malformed request, an
aborted body) and ERROR otherwise. gunicorn's records (``gunicorn.error``) use the same
handler and format (``gateway.process.serving.gunicorn_logger_class``). A record that cannot be
formatted is reported as one content-free line, never as a dump of its arguments.

Lines are written in batches (:class:`BatchingStreamHandler`): one write system call
per request line cost a busy gateway about a fifth of its throughput. A line waits at
most ``FLUSH_INTERVAL_S``; warnings and errors, a full batch and process exit flush at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import threading
import time
from typing import Final, TextIO

__all__ = ["BatchingStreamHandler", "ContentFreeFilter", "LineFormatter", "configure_logging"]

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

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # stdlib name
        if datefmt is not None:
            return super().formatTime(record, datefmt)
        second = int(record.created)
        cached = self._second
        if cached[0] != second:
            cached = self._second = (second, time.strftime(self.default_time_format, self.converter(record.created)))
        return (self.default_msec_format or "%s,%03d") % (cached[1], record.msecs)


_THIRD_PARTY: Final = ("aiohttp", "asyncio")
_LEADING_WORDS: Final = re.compile(r"[A-Za-z ,'-]*")
_PLACEHOLDER: Final = re.compile(r"%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa%]")
# Exceptions a client causes: malformed HTTP, a body cut short, a connection dropped. The
# HTTP server's own ones are matched by name, since this layer does not import it.
_CLIENT_FAULTS: Final[tuple[type[BaseException], ...]] = (ConnectionError, TimeoutError, asyncio.CancelledError,
                                                          EOFError)
_CLIENT_FAULT_NAMES: Final = frozenset({"HttpProcessingError", "ClientPayloadError"})


def _is_client_fault(exc: BaseException) -> bool:
    if isinstance(exc, _CLIENT_FAULTS):
        return True
    return any(cls.__name__ in _CLIENT_FAULT_NAMES and cls.__module__.startswith("aiohttp")
               for cls in type(exc).__mro__)


class ContentFreeFilter(logging.Filter):
    """Reduce ``aiohttp.*`` and ``asyncio`` records to their message template and exception type.

    ``"Error handling request from %s"`` + an address + a traceback becomes
    ``Error handling request from - error=BadStatusLine`` at INFO (a client's fault) or ERROR
    (anything else, with the innermost frame's ``file:line`` but no text). Other loggers'
    records pass unchanged. Always returns True: nothing is dropped, only reduced.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(_THIRD_PARTY):
            return True
        template = record.msg if isinstance(record.msg, str) else type(record.msg).__name__
        if record.name == "asyncio":  # asyncio pre-formats reprs of tasks and callbacks into msg
            template = _LEADING_WORDS.match(template).group(0).strip()[:60]  # type: ignore[union-attr]
        text = _PLACEHOLDER.sub("-", template.split("\n", 1)[0])[:120]
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None:
            client_fault = _is_client_fault(exc)
            text += f" error={type(exc).__name__}"
            if client_fault:
                record.levelno, record.levelname = logging.INFO, "INFO"
            else:
                tb = exc.__traceback__
                while tb is not None and tb.tb_next is not None:
                    tb = tb.tb_next
                if tb is not None:
                    text += f" at={os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"
        record.msg, record.args = text, ()
        record.exc_info = record.exc_text = record.stack_info = None
        return True


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
        # gunicorn forks its processes after logging is configured: lines still waiting are
        # written before the fork (else every child inherits and writes them again), and the
        # flusher thread, which does not survive a fork, is started again in the child.
        os.register_at_fork(before=self.flush, after_in_child=self._after_fork_in_child)

    def _after_fork_in_child(self) -> None:
        self._lines = []
        self._start_flusher()

    def _start_flusher(self) -> None:
        threading.Thread(target=self._flush_forever, name="pwc-mcp-log-flush", daemon=True).start()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception as exc:  # noqa: BLE001 - logging must never break the caller
            # Not handleError: the stdlib's report dumps the record's arguments (addresses, values).
            line = (f"{self._fallback_time()} ERROR pwc_mcp.logs logging_error logger={record.name} "
                    f"level={record.levelname} error={type(exc).__name__}")
        with self._buffer_lock():
            self._lines.append(line)
            urgent = record.levelno >= logging.WARNING or len(self._lines) >= self._batch_lines
        if urgent:
            self.flush()

    @staticmethod
    def _fallback_time() -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())

    def _buffer_lock(self) -> threading.RLock:
        lock = self.lock
        assert lock is not None  # logging.Handler.__init__ creates it
        return lock

    def flush(self) -> None:
        with self._buffer_lock():
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
    # The process id stays collected: gunicorn's messages and formats use it.
    logging._srcfile = None  # documented switch: no caller frame lookup
    logging.logThreads = False
    logging.logMultiprocessing = False
    logging.captureWarnings(True)  # warnings become formatted lines too, not raw stderr text
    root = logging.getLogger()
    if not root.handlers:
        handler = BatchingStreamHandler(stream)
        handler.setFormatter(LineFormatter())
        handler.addFilter(ContentFreeFilter())
        root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("aiohttp.access").disabled = True
    for name in ("httpx", "httpcore", "mcp"):
        logging.getLogger(name).setLevel(logging.WARNING)

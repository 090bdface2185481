"""Logging: the batching handler (lines arrive late by at most the flush interval, urgent ones at
once) and the line formatter (the standard layout, the timestamp text made once per second)."""

from __future__ import annotations

import io
import logging
import time

from pwc_mcp_core.runtime.logs import BatchingStreamHandler, LineFormatter


def _logger(handler: logging.Handler) -> logging.Logger:
    logger = logging.getLogger(f"test-batching-{id(handler)}")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    return logger


def test_info_lines_are_written_together_within_the_interval() -> None:
    stream = io.StringIO()
    handler = BatchingStreamHandler(stream, interval_s=0.05)
    logger = _logger(handler)
    logger.info("one")
    logger.info("two")
    deadline = time.monotonic() + 5
    while stream.getvalue() != "one\ntwo\n" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stream.getvalue() == "one\ntwo\n"
    handler.close()


def test_a_warning_flushes_everything_before_it_at_once() -> None:
    stream = io.StringIO()
    handler = BatchingStreamHandler(stream, interval_s=60)
    logger = _logger(handler)
    logger.info("queued")
    assert stream.getvalue() == ""
    logger.warning("urgent")
    assert stream.getvalue() == "queued\nurgent\n"
    handler.close()


def test_a_full_batch_and_closing_flush() -> None:
    stream = io.StringIO()
    handler = BatchingStreamHandler(stream, interval_s=60, batch_lines=3)
    logger = _logger(handler)
    for n in range(4):
        logger.info("line %d", n)
    assert stream.getvalue() == "line 0\nline 1\nline 2\n"
    handler.close()
    assert stream.getvalue().endswith("line 3\n")


def _record(created: float, message: str) -> logging.LogRecord:
    record = logging.LogRecord("pwc_mcp.requests", logging.INFO, __file__, 1, message, None, None)
    record.created, record.msecs = created, (created - int(created)) * 1000
    return record


def test_lines_match_the_standard_formatter_across_seconds() -> None:
    ours, standard = LineFormatter(), logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s")
    for created in (1_700_000_000.123, 1_700_000_000.987, 1_700_000_001.004, 1_700_000_000.5):
        record = _record(created, "mcp_request tool=list_tasks status=200")
        assert ours.format(record) == standard.format(record)


def test_an_explicit_date_format_is_honoured() -> None:
    record = _record(1_700_000_000.0, "x")
    assert LineFormatter().formatTime(record, "%Y") == logging.Formatter().formatTime(record, "%Y")

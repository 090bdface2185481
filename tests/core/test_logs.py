"""The log line formatter: the standard layout, with the timestamp text made once per second."""

from __future__ import annotations

import logging

from pwc_mcp_core.logs import LineFormatter


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

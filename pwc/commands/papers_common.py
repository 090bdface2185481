"""Flags and checks shared by ``search`` and the ``paper`` commands (``docs/cli-contract.md`` §2.1, §2.5, §3.3).

Fail-closed confirmation (§3.3): when the user asks the catalog to filter,
the response must echo every requested filter in ``applied_filters``;
otherwise the command refuses the (possibly unfiltered) results with exit 4.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
from collections.abc import Mapping, Sequence

from pwc.errors import ResponseError, UsageError

__all__ = [
    "add_coverage_flag",
    "add_date_flags",
    "add_json_flag",
    "check_date_order",
    "confirm_authors",
    "confirm_filters",
    "iso",
]


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """``--json``: print the ``{"schema_version":"v1","data":…}`` envelope (§1.2)."""
    parser.add_argument("--json", action="store_true", help="print one line of JSON")


def add_coverage_flag(parser: argparse.ArgumentParser) -> None:
    """``--implementation-coverage``: two extra paper-table columns (presentation only, §1.3)."""
    parser.add_argument("--implementation-coverage", action="store_true",
                        help="add official_implementation and code_repositories columns")


def add_date_flags(parser: argparse.ArgumentParser) -> None:
    """``--start-date`` / ``--end-date`` (ISO dates, inclusive)."""
    parser.add_argument("--start-date", type=dt.date.fromisoformat, metavar="YYYY-MM-DD",
                        help="earliest publication date (inclusive)")
    parser.add_argument("--end-date", type=dt.date.fromisoformat, metavar="YYYY-MM-DD",
                        help="latest publication date (inclusive); must not be before --start-date")


def check_date_order(args: argparse.Namespace) -> None:
    """Raise ``UsageError("start date must be on or before end date")`` when start > end (§2.1)."""
    if args.start_date and args.end_date and args.start_date > args.end_date:
        raise UsageError("start date must be on or before end date")


def iso(value: dt.date | None) -> str | None:
    """``YYYY-MM-DD`` or None."""
    return value.isoformat() if value else None


def confirm_filters(payload: object, requested: Mapping[str, str], message: str) -> None:
    """Fail closed unless ``payload.applied_filters`` echoes every requested filter (§3.3).

    Comparison: ``str(applied.get(key, ""))`` casefolded equals the requested
    value casefolded (so JSON ``true`` passes as ``"true"``). Raises
    ``ResponseError(message)`` (exit 4) on any miss.
    """
    if not requested:
        return
    applied = payload.get("applied_filters") if isinstance(payload, dict) else None
    if not isinstance(applied, dict):
        raise ResponseError(message)
    for key, value in requested.items():
        if str(applied.get(key, "")).casefold() != str(value).casefold():
            raise ResponseError(message)


AUTHOR_MESSAGE = ("Papers API did not confirm the requested author filters; "
                  "the server must be upgraded before using --author")


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _author_matches(reference: str, entry: Mapping[str, object]) -> bool:
    # confirm_authors checked ``entry`` first: ``id`` is a string of digits, ``name`` a string.
    ref = reference.strip()
    if ref.isdigit():
        return int(ref) == int(str(entry["id"]))
    if ref.startswith("@"):
        handle = entry.get("hf_username")
        return isinstance(handle, str) and handle.casefold() == ref[1:].casefold()
    return _norm(ref) == _norm(str(entry["name"]))


def confirm_authors(payload: object, references: Sequence[str]) -> None:
    """Fail closed unless every ``--author`` reference matches a confirmed author (§3.3).

    ``applied_filters.authors`` must be a non-empty list of objects with a
    numeric-string ``id`` and a non-empty ``name``. Digits match ``id`` as
    integers, ``@user`` matches ``hf_username``, anything else matches the
    whitespace-normalised, casefolded ``name``. Raises ``ResponseError``.
    """
    if not references:
        return
    applied = payload.get("applied_filters") if isinstance(payload, dict) else None
    authors = applied.get("authors") if isinstance(applied, dict) else None
    if not isinstance(authors, list) or not authors:
        raise ResponseError(AUTHOR_MESSAGE)
    for entry in authors:
        if not (isinstance(entry, dict) and isinstance(entry.get("id"), str)
                and re.fullmatch(r"[0-9]+", entry["id"])
                and isinstance(entry.get("name"), str) and entry["name"].strip()):
            raise ResponseError(AUTHOR_MESSAGE)
    for reference in references:
        if not any(_author_matches(reference, entry) for entry in authors):
            raise ResponseError(AUTHOR_MESSAGE)

"""Argument rules the schemas cannot express: date checks and the fall-back-and-explain plans.

* Publication dates (docs/tool-contract.md §3.3 #1, #5): checked before any catalog call.
* ``list_tasks`` (§3.3 #11): an absent ``limit`` is 25, but grouped output
  keeps the CLI's own page size (grouping with a page size is a CLI usage error).
* ``list_benchmarks`` (§3.3 #21): combinations the CLI rejects are rewritten
  and each rewrite is explained in a note instead of failing.
"""

from __future__ import annotations

import re
from datetime import date

from pwc_mcp_core.errors import ToolError
from pwc_mcp_core.protocol.json_types import JsonObject

__all__ = ["check_dates", "plan_list_benchmarks", "plan_list_tasks"]

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
TRENDING_NOTE = "order_by=trending needs task; ordered by name instead"
AREA_NOTE = "area cannot be combined with filters; returned the filtered list"
GROUP_NOTE = "group_by_area cannot be combined with filters; returned the filtered list"


def _parse_date(value: str) -> date:
    try:
        if not _ISO_DATE.fullmatch(value):
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError:
        raise ToolError("invalid_argument: publication dates must use YYYY-MM-DD") from None


def check_dates(arguments: JsonObject) -> None:
    """Validate ``published_after`` / ``published_before`` when present.

    Raises:
        ToolError: ``invalid_argument: publication dates must use YYYY-MM-DD`` or
            ``invalid_argument: published_after must be on or before published_before``.
    """
    after, before = arguments.get("published_after"), arguments.get("published_before")
    start = _parse_date(after) if isinstance(after, str) else None
    end = _parse_date(before) if isinstance(before, str) else None
    if start and end and start > end:
        raise ToolError("invalid_argument: published_after must be on or before published_before")


def plan_list_tasks(arguments: JsonObject) -> tuple[JsonObject, list[str]]:
    """Grouped task lists leave ``limit`` unset (the CLI rejects a page size with grouping)."""
    if arguments.get("group_by_area") and arguments.get("limit") is None:
        return {**arguments, "limit": None}, []
    return arguments, []


def plan_list_benchmarks(arguments: JsonObject) -> tuple[JsonObject, list[str]]:
    """Rewrite a ``list_benchmarks`` call the CLI would reject, with a note per rewrite.

    Returns:
        (arguments to run, notes). ``limit: None`` / ``page: 1`` mean "the CLI's own grouped paging".
    """
    args = dict(arguments)
    notes: list[str] = []
    if args.get("order_by") == "trending" and not args.get("task"):
        args["order_by"] = None
        notes.append(TRENDING_NOTE)
    flat_filters = any((
        args.get("task"), args.get("search"), args.get("include_descendants"),
        args.get("is_open") is not None, args.get("order_by"),
        args.get("order_direction", "asc") != "asc",
    ))
    if args.get("area") and flat_filters:
        args["area"] = None
        notes.append(AREA_NOTE)
    if args.get("group_by_area") and flat_filters:
        args["group_by_area"] = False
        notes.append(GROUP_NOTE)
    if args.get("group_by_area") or args.get("area"):
        args["page"] = 1
        args["limit"] = None
    return args, notes

"""``pwc trends``: papers per year for a task, method or benchmark and the share with code
(``docs/cli-contract.md`` §2.24).

The entity is matched exactly like ``pwc task``/``pwc method``/``pwc benchmark`` (§3.2). Every count
is the ``count`` of the catalog's paper list (``papers/``, one result per page) filtered by the
entity's id, and confirmed by ``applied_filters`` (§3.3):

1. the list ordered by date, oldest first and newest first: every paper of the entity and its
   first and last publication year (the default range, :func:`pwc.trends.year_range`);
2. per year of the range inside that span: the papers with a one-year date window, then (when
   there are any) the same with ``has_code=true``. Years outside the span are 0 without a call.

Counts are cached as long as taxonomy answers (``TAXONOMY_TTL_S``): a past year's count is stable.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pwc.arguments import int_range
from pwc.cache import TAXONOMY_TTL_S
from pwc.commands.papers_common import add_json_flag, confirm_filters
from pwc.errors import NotFoundError, ResponseError, UsageError
from pwc.names import (
    BENCHMARK_FIELDS,
    ENTITY_FIELDS,
    METHOD_FIELDS,
    find_named,
    not_found,
)
from pwc.render import Output, result_list, result_total
from pwc.trends import (
    KINDS,
    MAX_YEARS,
    RECENT_YEARS,
    TrendsPayload,
    trends_markdown,
    trends_payload,
    year_range,
)

if TYPE_CHECKING:  # the transport (httpx) is imported only where a call is made
    from pwc.transport import Client

__all__ = ["register", "render_trends", "run_trends", "write_trends_chart"]

FIRST_YEAR, LAST_YEAR = 1900, 2100
# kind → (list path for the name lookup, match fields, label, the papers/ filter it feeds)
_LOOKUP = {
    "task": ("tasks/", ENTITY_FIELDS, "Task", "task"),
    "method": ("methods/", METHOD_FIELDS, "Method", "method"),
    "benchmark": ("datasets/", BENCHMARK_FIELDS, "Benchmark", "dataset"),
}
CONFIRM_MESSAGE = ("Papers API did not confirm the trend filters; the catalog must be upgraded "
                   "before using trends")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``trends`` to the top-level sub-parsers."""
    parser = subparsers.add_parser(
        "trends", help="papers per year for a task, method or benchmark, and the share with code",
        description="Papers per year for one task, method or benchmark (exactly one), and how many have code.")
    parser.add_argument("--task", help="exact task name, slug or ID")
    parser.add_argument("--method", help="exact method name, full name, slug or ID")
    parser.add_argument("--benchmark", help="exact benchmark (dataset) name, full name, slug or ID")
    parser.add_argument("--from-year", type=int_range("--from-year", FIRST_YEAR, LAST_YEAR),
                        help=f"first year (default: the last {RECENT_YEARS} years of its papers)")
    parser.add_argument("--to-year", type=int_range("--to-year", FIRST_YEAR, LAST_YEAR),
                        help="last year (default: the year of its newest paper)")
    parser.add_argument("--chart", metavar="FILE", help="also write a bar chart of the years as a PNG file")
    add_json_flag(parser)
    parser.set_defaults(handler=run_trends, renderer=render_trends, write_files=write_trends_chart)


def _chosen(args: argparse.Namespace) -> tuple[str, str]:
    given = [(kind, str(getattr(args, kind)).strip()) for kind in KINDS
             if getattr(args, kind, None) is not None and str(getattr(args, kind)).strip()]
    if len(given) != 1:
        raise UsageError("trends needs exactly one of --task, --method or --benchmark")
    return given[0]


def _entity(kind: str, name: str, client: Client) -> Mapping[str, object]:
    """The record ``name`` names exactly (§3.2); ``NotFoundError`` with the closest names and what to do."""
    path, fields, label, _filter = _LOOKUP[kind]
    found, candidates = find_named(
        lambda query: result_list(client.get_json(path, {"q": query, "page": 1, "page_size": 100})), name, fields)
    if found is None:
        error = not_found(label, name, candidates, name_only=kind != "method")
        raise NotFoundError(f"{error}; give its exact name, slug or ID (search the {kind} list to find it)")
    if found.get("id") is None:
        raise ResponseError("API returned an unexpected response shape")
    return found


def _count(client: Client, filters: dict[str, str], order_dir: str = "asc") -> tuple[int, str | None]:
    """(papers matching ``filters``, publication date of the first one in date order)."""
    params = {**filters, "page": 1, "page_size": 1, "order_by": "date_published", "order_dir": order_dir}
    payload = client.get_json("papers/", params, ttl_s=TAXONOMY_TTL_S)
    confirm_filters(payload, filters, CONFIRM_MESSAGE)
    total = result_total(payload)
    if total is None:
        raise ResponseError("papers API returned no count")
    rows = result_list(payload)
    published = rows[0].get("published") if rows else None
    return total, published if isinstance(published, str) and len(published) >= 4 else None


def _year(date: str | None) -> int | None:
    return int(date[:4]) if date and date[:4].isdigit() else None


def run_trends(args: argparse.Namespace, client: Client) -> TrendsPayload:
    """Papers per year of the entity and how many have code (module docstring); raises ``UsageError``
    (exit 2) for a wrong flag combination or range and ``NotFoundError`` (exit 4) for an unknown name."""
    kind, name = _chosen(args)
    if args.from_year is not None and args.to_year is not None and args.from_year > args.to_year:
        raise UsageError("--from-year must not be after --to-year")
    entity = _entity(kind, name, client)
    base = {_LOOKUP[kind][3]: str(entity["id"])}
    total, oldest = _count(client, base, "asc")
    _newest_total, newest = _count(client, base, "desc") if total else (0, None)
    first, last = _year(oldest), _year(newest)
    span = year_range(first, last, args.from_year, args.to_year)
    counts: list[tuple[int, int, int]] = []
    if span is not None:
        start, end = span
        if end - start + 1 > MAX_YEARS:
            raise UsageError(f"--from-year {start} to --to-year {end} is {end - start + 1} years; "
                             f"at most {MAX_YEARS}")
        for year in range(start, end + 1):
            papers = code = 0
            if first is not None and last is not None and first <= year <= last:
                window = {**base, "start_date": f"{year}-01-01", "end_date": f"{year}-12-31"}
                papers, _ = _count(client, window)
                code = _count(client, {**window, "has_code": "true"})[0] if papers else 0
            counts.append((year, papers, code))
    return trends_payload(kind, entity, counts, total=total, span=(first, last))


def render_trends(payload: TrendsPayload, args: argparse.Namespace, out: Output) -> None:
    """The trend as Markdown: heading, summary sentence, the year table (``pwc.trends``)."""
    out.lines(trends_markdown(payload))


def write_trends_chart(payload: TrendsPayload, args: argparse.Namespace) -> None:
    """``--chart FILE``: write the bar chart (``pwc.chart.trends_png``); ``UsageError`` when the file
    cannot be written."""
    if not args.chart:
        return
    from pwc.chart import trends_png, write_chart

    write_chart(args.chart, lambda: trends_png(payload))

"""``pwc paper …`` (``docs/cli-contract.md`` §2.2–§2.9): the parser tree and the paper listings.

Detail commands (info, evaluations, read, lineage list) live in
:mod:`pwc.commands.papers_detail`; shared flags and fail-closed checks in
:mod:`pwc.commands.papers_common`.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING

from pwc.arguments import PAGE_MAX, int_range
from pwc.commands import papers_detail as detail
from pwc.commands import papers_find
from pwc.commands.papers_common import (
    add_coverage_flag,
    add_date_flags,
    add_json_flag,
    check_date_order,
    confirm_authors,
    confirm_filters,
    iso,
)
from pwc.errors import HTTPStatusError, UsageError
from pwc.json_types import JsonValue
from pwc.references import resolve_paper
from pwc.render import Output, pagination_hint, render_paper_table, result_list
from pwc.transport import quote_ref

if TYPE_CHECKING:  # the transport (httpx) is imported only where a call is made
    from pwc.transport import Client

__all__ = ["register", "render_papers", "run_list", "run_recent", "run_related", "run_trending"]

MAX_AUTHORS = 10
CATALOG_MESSAGE = ("Papers API did not confirm the requested catalog filters; "
                   "the server must be upgraded before using these flags")
_CATALOG_FILTERS = ("task", "method", "conference", "framework", "organization")
PAPER_HELP = "arXiv ID, numeric paper ID, or exact paper title"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``paper`` and its sub-commands."""
    paper = subparsers.add_parser("paper", help="inspect and list papers", description="Inspect and list papers.")
    commands = paper.add_subparsers(dest="paper_command", required=True)

    info = commands.add_parser("info", help="show one paper")
    info.add_argument("paper", metavar="PAPER", help=PAPER_HELP)
    info.add_argument("--include-resources", action="store_true",
                      help="add repositories, project pages and Hugging Face artifacts")
    info.add_argument("--include-evals", action="store_true", help="add every evaluation of the paper")
    add_json_flag(info)
    info.set_defaults(handler=detail.run_info, renderer=detail.render_info)

    evals = commands.add_parser("evaluations", help="list a paper's evaluations (merged)")
    evals.add_argument("paper", metavar="PAPER", help=PAPER_HELP)
    evals.add_argument("--page", type=int_range("--page", 1, PAGE_MAX), default=1, help="page (1-100, default 1)")
    evals.add_argument("--page-size", "--limit", dest="page_size", type=int_range("--page-size", 1, 100), default=20,
                       help="rows per page (1-100, default 20)")
    add_json_flag(evals)
    evals.set_defaults(handler=detail.run_evaluations, renderer=detail.render_evaluations)

    read = commands.add_parser("read", help="print a paper's Markdown text")
    read.add_argument("paper", metavar="PAPER", help="modern ArXiv ID or exact paper title")
    add_json_flag(read)
    read.set_defaults(handler=detail.run_read, renderer=detail.render_read)

    _register_list(commands)

    recent = commands.add_parser("recent", help="recently published papers")
    recent.add_argument("--limit", type=int_range("--limit", 1, 100), default=10, help="1-100, default 10")
    add_coverage_flag(recent)
    add_json_flag(recent)
    recent.set_defaults(handler=run_recent, renderer=render_papers)

    trending = commands.add_parser("trending", help="trending papers")
    trending.add_argument("--limit", type=int_range("--limit", 1, 100), default=20, help="1-100, default 20")
    trending.add_argument("--max-age-days", type=int_range("--max-age-days", 1, 365), default=180,
                          help="only papers published in the last N days (1-365, default 180)")
    trending.add_argument("--min-velocity", type=_finite_float, help="minimum trending velocity")
    add_coverage_flag(trending)
    add_json_flag(trending)
    trending.set_defaults(handler=run_trending, renderer=render_papers)

    related = commands.add_parser("related", help="papers related to a paper")
    related.add_argument("paper", metavar="PAPER", help=PAPER_HELP)
    related.add_argument("--limit", type=int_range("--limit", 1, 20), default=4, help="1-20, default 4")
    add_coverage_flag(related)
    add_json_flag(related)
    related.set_defaults(handler=run_related, renderer=render_papers)

    lineage = commands.add_parser("lineage", help="paper lineage (predecessors and successors)")
    lineage_commands = lineage.add_subparsers(dest="lineage_command", required=True)
    lineage_list = lineage_commands.add_parser("list", help="list a paper's predecessors and successors")
    lineage_list.add_argument("paper", metavar="PAPER", help=PAPER_HELP)
    add_json_flag(lineage_list)
    lineage_list.set_defaults(handler=detail.run_lineage, renderer=detail.render_lineage)

    papers_find.register(commands)
    from pwc.commands import papers_cite  # cite and verify (§2.21, §2.22)

    papers_cite.register(commands)


def _finite_float(text: str) -> float:
    """A finite float (``nan``/``inf`` are rejected as argparse type errors)."""
    value = float(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _register_list(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("list", help="list papers with catalog filters")
    parser.add_argument("--page", type=int_range("--page", 1, PAGE_MAX), default=1, help="page (1-100, default 1)")
    parser.add_argument("--page-size", "--limit", dest="page_size", type=int_range("--page-size", 1, 100), default=20,
                        help="rows per page (1-100, default 20)")
    parser.add_argument("--search", help="text search within the listing")
    add_date_flags(parser)
    parser.add_argument("--task", help="exact task name, slug or ID")
    parser.add_argument("--method", help="exact method name, full name, slug or ID")
    parser.add_argument("--conference", help="exact conference name, slug or ID")
    parser.add_argument("--framework", help="exact framework name, slug or ID")
    parser.add_argument("--organization", help="exact organization name, slug or ID")
    parser.add_argument("--author", action="append", default=[],
                        help="author name, numeric author ID or @hf_username (repeatable, max 10; ANDed)")
    parser.add_argument("--all-versions", action="store_true", help="include every arXiv version")
    parser.add_argument("--order-by", choices=("trending", "date_published", "citation_count"),
                        default="trending", help="sort field (default trending)")
    parser.add_argument("--order-dir", choices=("asc", "desc"), default="desc", help="default desc")
    parser.add_argument("--include-resources", action="store_true", help="include code and resource links")
    parser.add_argument("--has-official-implementation", action="store_true",
                        help="only papers with an official code implementation")
    add_coverage_flag(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=run_list, renderer=render_papers)


def author_error_message(error: HTTPStatusError) -> str:
    """The usage message for an HTTP 404/409/422 answer to an ``--author`` request (§3.3)."""
    try:
        detail = json.loads(error.detail).get("detail")
    except (ValueError, AttributeError):
        detail = None
    if isinstance(detail, str) and detail:
        return detail
    if isinstance(detail, dict) and detail.get("code") == "ambiguous_author":
        options = []
        for candidate in detail.get("candidates") or []:
            if not isinstance(candidate, dict) or not str(candidate.get("id", "")).isdigit():
                continue
            extra = f", @{candidate['hf_username']}" if candidate.get("hf_username") else ""
            options.append(f"--author {candidate['id']} ({candidate.get('name')}{extra})")
        if options:
            return f"{detail.get('reference')} is ambiguous; retry with " + " or ".join(options)
    return f"author filter request failed ({error.status})"


def run_list(args: argparse.Namespace, client: Client) -> JsonValue:
    """GET ``papers/`` with the catalog filters, then fail closed on unconfirmed filters (§2.5)."""
    check_date_order(args)
    authors = list(args.author or [])
    if len(authors) > MAX_AUTHORS:
        raise UsageError(f"at most {MAX_AUTHORS} author filters are allowed")
    params: dict[str, object] = {
        "page": args.page, "page_size": args.page_size, "search": args.search,
        "start_date": iso(args.start_date), "end_date": iso(args.end_date),
        **{name: getattr(args, name) for name in _CATALOG_FILTERS},
        "author": authors or None, "latest_only": not args.all_versions,
        "order_by": args.order_by, "order_dir": args.order_dir,
        "include_resources": args.include_resources,
    }
    if args.has_official_implementation:
        params["has_official_implementation"] = True
    try:
        payload = client.get_json("papers/", params)
    except HTTPStatusError as error:
        if authors and error.status in (404, 409, 422):
            raise UsageError(author_error_message(error)) from None
        raise
    requested = {name: getattr(args, name) for name in _CATALOG_FILTERS if getattr(args, name)}
    requested.update({k: v for k, v in (("start_date", iso(args.start_date)),
                                        ("end_date", iso(args.end_date))) if v})
    if args.has_official_implementation:
        requested["has_official_implementation"] = "true"
    confirm_filters(payload, requested, CATALOG_MESSAGE)
    confirm_authors(payload, authors)
    result_list(payload)
    return payload


def run_recent(args: argparse.Namespace, client: Client) -> JsonValue:
    """GET ``papers/recent`` with ``limit``; raw response (§2.6)."""
    payload = client.get_json("papers/recent", {"limit": args.limit})
    result_list(payload)
    return payload


def run_trending(args: argparse.Namespace, client: Client) -> JsonValue:
    """GET ``papers/trending`` with ``limit, max_age_days, min_velocity``; raw response (§2.7)."""
    payload = client.get_json("papers/trending", {"limit": args.limit, "max_age_days": args.max_age_days,
                                                  "min_velocity": args.min_velocity})
    result_list(payload)
    return payload


def run_related(args: argparse.Namespace, client: Client) -> JsonValue:
    """GET ``papers/<ref>/related`` with ``limit``; raw response (§2.8)."""
    ref = resolve_paper(args.paper, client)
    payload = client.get_json(f"papers/{quote_ref(ref)}/related", {"limit": args.limit})
    result_list(payload)
    return payload


def render_papers(payload: object, args: argparse.Namespace, out: Output) -> None:
    """The standard paper table for list, recent, trending and related; the hint only for list."""
    render_paper_table(out, payload, coverage=args.implementation_coverage)
    # Only `paper list` has --page; recent, trending and related never suggest one (pwc/QUIRKS.md).
    if hasattr(args, "page"):
        pagination_hint(out, payload, page=args.page, page_size=args.page_size, rows=len(result_list(payload)))

"""``pwc search QUERY`` (``docs/cli-contract.md`` §2.1): search papers by title, topic, author or arXiv ID."""

from __future__ import annotations

import argparse
from typing import Any

from pwc.cli import int_range
from pwc.commands.papers_common import (
    add_coverage_flag,
    add_date_flags,
    add_json_flag,
    check_date_order,
    iso,
)
from pwc.errors import ResponseError
from pwc.render import Output, pagination_hint, render_paper_table, result_list

__all__ = ["register", "render_search", "run_search"]

OFFICIAL_MESSAGE = ("Papers API did not confirm has_official_implementation; "
                    "refusing unfiltered results")


def register(subparsers: Any) -> None:
    """Add the ``search`` parser."""
    parser = subparsers.add_parser("search", help="search papers by title, topic, author or arXiv ID",
                                   description="Search papers by title, topic, author or arXiv ID.")
    parser.add_argument("query", metavar="QUERY",
                        help="title, topic, author or arXiv ID (put -- before a query starting with -)")
    parser.add_argument("--limit", type=int_range("--limit", 1, 100), default=10,
                        help="results per page (1-100, default 10)")
    parser.add_argument("--page", type=int_range("--page", 1, 100), default=1,
                        help="result page (1-100, default 1)")
    parser.add_argument("--mode", choices=("hybrid", "keyword", "semantic"), default="hybrid",
                        help="search mode (default hybrid)")
    add_date_flags(parser)
    parser.add_argument("--has-official-implementation", action="store_true",
                        help="only papers with an official code implementation")
    add_coverage_flag(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=run_search, renderer=render_search)


def run_search(args: argparse.Namespace, client: Any) -> Any:
    """GET ``papers/search``; returns the raw response (§2.1).

    Raises ``UsageError`` for reversed dates (before any request) and
    ``ResponseError`` when ``--has-official-implementation`` is not confirmed.
    """
    check_date_order(args)
    params = {"q": args.query, "page": args.page, "page_size": args.limit, "mode": args.mode,
              "start_date": iso(args.start_date), "end_date": iso(args.end_date)}
    if args.has_official_implementation:
        params["has_official_implementation"] = True
    payload = client.get_json("papers/search", params)
    if args.has_official_implementation:
        applied = payload.get("applied_filters") if isinstance(payload, dict) else None
        value = applied.get("has_official_implementation") if isinstance(applied, dict) else None
        if value not in ("true", True):
            raise ResponseError(OFFICIAL_MESSAGE)
    result_list(payload)  # shape check: exit 4 on a malformed envelope even in --json mode
    return payload


def render_search(payload: Any, args: argparse.Namespace, out: Output) -> None:
    """The standard paper table (§1.3) and the pagination hint."""
    render_paper_table(out, payload, coverage=args.implementation_coverage)
    pagination_hint(out, payload, page=args.page, page_size=args.limit,
                    rows=len(result_list(payload)))

"""``pwc search QUERY`` (``docs/cli-contract.md`` §2.1): search papers by title, topic, author or arXiv ID."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from pwc.abstracts import ABSTRACT_CHARS, cut_abstract
from pwc.arguments import PAGE_MAX, int_range
from pwc.commands.papers_common import (
    add_coverage_flag,
    add_date_flags,
    add_json_flag,
    check_date_order,
    iso,
)
from pwc.errors import ResponseError, UsageError
from pwc.json_types import JsonObject, JsonValue
from pwc.render import Output, pagination_hint, paper_rows, result_list, write_table

if TYPE_CHECKING:  # the transport (httpx) is imported only where a call is made
    from pwc.transport import Client

__all__ = ["cut_abstracts", "entity_hints", "register", "render_search", "run_search", "weak_note"]

OFFICIAL_MESSAGE = ("Papers API did not confirm has_official_implementation; "
                    "refusing unfiltered results")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``search`` parser."""
    parser = subparsers.add_parser("search", help="search papers by title, topic, author or arXiv ID",
                                   description="Search papers by title, topic, author or arXiv ID.")
    parser.add_argument("query", metavar="QUERY",
                        help="title, topic, author or arXiv ID (put -- before a query starting with -)")
    parser.add_argument("--limit", type=int_range("--limit", 1, 100), default=10,
                        help="results per page (1-100, default 10)")
    parser.add_argument("--page", type=int_range("--page", 1, PAGE_MAX), default=1,
                        help="result page (1-100, default 1)")
    parser.add_argument("--mode", choices=("hybrid", "keyword", "semantic"), default="hybrid",
                        help="search mode (default hybrid)")
    add_date_flags(parser)
    parser.add_argument("--has-official-implementation", action="store_true",
                        help="only papers with an official code implementation")
    parser.add_argument("--abstracts", dest="include_abstracts", action="store_true",
                        help="include each result's abstract, cut at a sentence end within --abstract-chars")
    parser.add_argument("--abstract-chars", type=int_range("--abstract-chars", 50, 2000), default=ABSTRACT_CHARS,
                        help=f"characters per abstract, at most (50-2000, default {ABSTRACT_CHARS})")
    add_coverage_flag(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=run_search, renderer=render_search)


def run_search(args: argparse.Namespace, client: Client) -> JsonValue:
    """GET ``papers/search``; returns the raw response (§2.1).

    Raises ``UsageError`` for reversed dates (before any request) and
    ``ResponseError`` when ``--has-official-implementation`` is not confirmed.
    """
    if not args.query.strip():  # the catalog would answer 422, an exit 3 that reads like a server fault
        raise UsageError("the query must not be empty: give a title, topic, author or arXiv ID")
    check_date_order(args)
    params = {"q": args.query, "page": args.page, "page_size": args.limit, "mode": args.mode,
              "start_date": iso(args.start_date), "end_date": iso(args.end_date)}
    if args.has_official_implementation:
        params["has_official_implementation"] = True
    abstracts = bool(getattr(args, "include_abstracts", False))
    if abstracts:
        params["abstracts"] = True
    payload = client.get_json("papers/search", params)
    if args.has_official_implementation:
        applied = payload.get("applied_filters") if isinstance(payload, dict) else None
        value = applied.get("has_official_implementation") if isinstance(applied, dict) else None
        if value not in ("true", True):
            raise ResponseError(OFFICIAL_MESSAGE)
    result_list(payload)  # shape check: exit 4 on a malformed envelope even in --json mode
    if abstracts and isinstance(payload, dict):
        cut_abstracts(payload, getattr(args, "abstract_chars", ABSTRACT_CHARS))
    return payload


def cut_abstracts(payload: JsonObject, budget: int) -> None:
    """Cut each result's ``abstract`` in place (:func:`pwc.abstracts.cut_abstract`); record
    ``abstract_chars`` (the budget) and ``abstracts_cut`` (how many were cut) in ``payload``."""
    cut = 0
    for item in result_list(payload):
        text = item.get("abstract")
        if isinstance(text, str):
            item["abstract"], was_cut = cut_abstract(text, budget)
            cut += was_cut
    payload["abstract_chars"] = budget
    payload["abstracts_cut"] = cut


def _shown(value: object) -> str:
    return " ".join(str(value).split())


def entity_hints(payload: object) -> list[tuple[str, str, str | None]]:
    """``(type, name, filter)`` of each entity the query named (``matched_entities``); ``filter`` is
    ``task=slug`` / ``method=slug`` when the catalog gives one."""
    found = payload.get("matched_entities") if isinstance(payload, dict) else None
    out: list[tuple[str, str, str | None]] = []
    for entity in found if isinstance(found, list) else []:
        if not isinstance(entity, dict) or not entity.get("name"):
            continue
        narrow = entity.get("filter")
        pairs = [f"{key}={value}" for key, value in narrow.items()] if isinstance(narrow, dict) else []
        out.append((_shown(entity.get("type") or "entity"), _shown(entity["name"]), " ".join(pairs) or None))
    return out


def weak_note(payload: object, rows: int) -> str | None:
    """Say so when results came back but none is a strong match (``strong_count`` 0)."""
    if rows and isinstance(payload, dict) and payload.get("strong_count") == 0:
        return ("No strong match: no result holds all the query's words, is close in meaning or is tagged "
                "with what it names; these are the nearest papers, not necessarily relevant.")
    return None


def render_search(payload: object, args: argparse.Namespace, out: Output) -> None:
    """The standard paper table (§1.3), ``match`` when results carry it, ``abstract`` with
    ``--abstracts``; hints on stderr: named entities and their filters, no strong match, cut
    abstracts, the next page."""
    items = result_list(payload)
    headers, rows = paper_rows(items, coverage=args.implementation_coverage)
    if any("match" in item for item in items):
        headers.append("match")
        for row, item in zip(rows, items, strict=True):
            row.append(item.get("match"))
    if getattr(args, "include_abstracts", False):
        headers.append("abstract")
        for row, item in zip(rows, items, strict=True):
            row.append(item.get("abstract"))
    write_table(out, headers, rows, right=("year", "citations", "code_repositories"))
    for kind, name, narrow in entity_hints(payload):
        out.hint(f"# matched {kind}: {name}" + (f" (narrow: pwc paper list --{narrow.replace('=', ' ')})"
                                                 if narrow else ""))
    note = weak_note(payload, len(items))
    if note:
        out.hint(f"# {note}")
    if isinstance(payload, dict) and payload.get("abstracts_cut"):
        out.hint(f"# {payload['abstracts_cut']} abstracts cut to {payload.get('abstract_chars')} characters; "
                 "pwc paper info ID shows one whole")
    pagination_hint(out, payload, page=args.page, page_size=args.limit, rows=len(items))

"""Papers per year for one task, method or benchmark, and the share of them with code
(docs/cli-contract.md §2.24).

``pwc trends`` reads the counts from the catalog's paper list (``papers/`` with the entity filter,
a one-year ``start_date``/``end_date`` window and ``has_code=true``); this module turns them into
the payload ``pwc trends --json`` and the ``get_trends`` tool answer with, and its text view:

* ``years`` has one row per year of the range, a year without papers as 0 (never missing);
* ``share_with_code`` is ``with_code / papers`` rounded to 3 places, None for a year without papers;
* ``span`` is the first and last publication year of all the entity's papers (None without dated
  ones), so a reader can tell a quiet year inside the span from one outside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict, cast

from pwc.markdown import md_table
from pwc.render import EM_DASH, counted, md_escape, thousands

__all__ = ["KINDS", "MAX_YEARS", "RECENT_YEARS", "TrendsPayload", "share", "trends_markdown", "trends_payload",
           "year_range"]

KINDS = ("task", "method", "benchmark")
"""What a trend is counted for, in flag order."""
MAX_YEARS = 30
"""The widest range one call counts (two catalog calls per year with papers)."""
RECENT_YEARS = 10
"""The default range: the last ten years of the entity's papers."""


class TrendsEntity(TypedDict):
    """The entity a trend counts, its fields as text (None when the catalog gave none)."""

    id: str | None
    name: str | None
    slug: str | None


class TrendsYear(TypedDict):
    """One year's row: papers, papers with code and their share (None without papers)."""

    year: int
    papers: int
    with_code: int
    share_with_code: float | None


class TrendsTotals(TypedDict):
    """The sums over the years of the range."""

    papers: int
    with_code: int
    share_with_code: float | None


class TrendsSpan(TypedDict):
    """The first and last publication year of all the entity's papers (None without dated ones)."""

    first_year: int | None
    last_year: int | None


class TrendsPayload(TypedDict):
    """What :func:`trends_payload` returns (``pwc trends --json`` data)."""

    kind: str
    entity: TrendsEntity
    from_year: int | None
    to_year: int | None
    years: list[TrendsYear]
    totals: TrendsTotals
    all_papers: int
    span: TrendsSpan


def share(part: int, whole: int) -> float | None:
    """``part / whole`` rounded to 3 places; None when ``whole`` is 0 (no papers, no share)."""
    return round(part / whole, 3) if whole else None


def year_range(first: int | None, last: int | None, from_year: int | None,
               to_year: int | None) -> tuple[int, int] | None:
    """The years to count: the ones given, else the entity's last :data:`RECENT_YEARS` years of papers.

    ``first``/``last`` are the entity's first and last publication years (None without dated
    papers). Returns None when nothing is given and the entity has no dated papers.
    """
    if to_year is None:
        to_year = last if last is not None else from_year
        if to_year is not None and from_year is not None and to_year < from_year:
            to_year = from_year
    if to_year is None:
        return None
    if from_year is None:
        from_year = max(first if first is not None else to_year, to_year - RECENT_YEARS + 1)
        from_year = min(from_year, to_year)
    return from_year, to_year


def trends_payload(kind: str, entity: Mapping[str, object], years: Sequence[tuple[int, int, int]], *,
                   total: int, span: tuple[int | None, int | None]) -> TrendsPayload:
    """The ``--json`` data: ``{"kind", "entity", "from_year", "to_year", "years", "totals", "all_papers",
    "span"}``. ``years`` holds ``(year, papers, with_code)`` in year order; ``total`` counts every
    paper of the entity, any date (undated ones too)."""
    rows: list[TrendsYear] = [
        {"year": year, "papers": papers, "with_code": code, "share_with_code": share(code, papers)}
        for year, papers, code in years]
    papers_sum = sum(papers for _year, papers, _code in years)
    code_sum = sum(code for _year, _papers, code in years)
    return {
        "kind": kind,
        "entity": {"id": _text(entity.get("id")), "name": _text(entity.get("name")),
                   "slug": _text(entity.get("slug"))},
        "from_year": rows[0]["year"] if rows else None,
        "to_year": rows[-1]["year"] if rows else None,
        "years": rows,
        "totals": {"papers": papers_sum, "with_code": code_sum, "share_with_code": share(code_sum, papers_sum)},
        "all_papers": total,
        "span": {"first_year": span[0], "last_year": span[1]},
    }


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _percent(value: object) -> str:
    return f"{value * 100:.0f}%" if isinstance(value, float) else EM_DASH


def trends_markdown(data: Mapping[str, object]) -> list[str]:
    """The text view: a heading, one summary sentence and a ``Year|Papers|With code|Share`` table.

    ``data`` is a :func:`trends_payload` (or its JSON round trip through the MCP layer).
    """
    # Trusted shape: built by trends_payload; the fields are only formatted, never computed on.
    payload = cast("TrendsPayload", data)
    entity: Mapping[str, object] = payload.get("entity") or {}
    name = entity.get("name") or entity.get("slug") or entity.get("id") or "?"
    ident = f", ID {md_escape(entity['id'])}" if entity.get("id") is not None else ""
    lines = [f"# Papers per year: {md_escape(name)} ({payload['kind']}{ident})", ""]
    span = payload["span"]
    rows = payload["years"]
    all_papers = counted(payload["all_papers"], "paper")
    if not rows:
        return [*lines, f"{all_papers} in the catalog, none with a publication date."]
    totals = payload["totals"]
    known = (f"; its papers span {span['first_year']}-{span['last_year']}" if span["first_year"] is not None
             else "; none of its papers has a publication date")
    years = (f"in {payload['from_year']}" if payload["from_year"] == payload["to_year"]
             else f"from {payload['from_year']} to {payload['to_year']}")
    lines.append(f"{counted(totals['papers'], 'paper')} {years}, "
                 f"{thousands(totals['with_code'])} with code ({_percent(totals['share_with_code'])}); "
                 f"{all_papers} in the catalog over all dates{known}.")
    lines.append("")
    table = [[str(row["year"]), thousands(row["papers"]), thousands(row["with_code"]), _percent(row["share_with_code"])]
             for row in rows]
    lines += md_table(["Year", "Papers", "With code", "Share"], table, ["-", "-:", "-:", "-:"], compact=True)
    return lines

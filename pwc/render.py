"""Output primitives of the `pwc` CLI: cells, tables, headings, links, JSON envelope, hints.

Everything writes to an explicit :class:`Output` (never to ``sys.stdout``), so
``pwc.cli.main`` and the in-process query layer can capture it. Rules come
from ``docs/cli-contract.md`` §1.2 (output modes), §1.3 (standard paper table) and
§4.2 (list envelope).

Quirk fix (§7): ``is_open: null`` renders as ``unknown`` (:func:`open_cell`),
not ``no``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO
from urllib.parse import quote

from pwc import API_CONTRACT_VERSION
from pwc.arguments import PAGE_MAX
from pwc.errors import ResponseError
from pwc.json_types import JsonObject

__all__ = [
    "EM_DASH",
    "SITE_URL",
    "Output",
    "absolute_url",
    "clean_cell",
    "entity_link",
    "format_table",
    "heading",
    "json_envelope",
    "md_escape",
    "open_cell",
    "pagination_hint",
    "paper_rows",
    "paper_url",
    "render_paper_table",
    "result_list",
    "result_total",
    "site_url",
    "thousands",
    "write_table",
]

EM_DASH = "—"
SITE_URL = "https://paperswithcode.co"

# §1.2: entity kind -> site path segment.
_SITE_KINDS = {
    "paper": "paper",
    "task": "tasks",
    "method": "methods",
    "benchmark": "benchmark",
    "conference": "conferences",
    "organization": "orgs",
    "framework": "frameworks",
}


@dataclass
class Output:
    """Where a renderer writes: ``stdout`` (data), ``stderr`` (hints) and whether stdout is a TTY."""

    stdout: TextIO
    stderr: TextIO
    isatty: bool = False

    def line(self, text: str = "") -> None:
        """Write ``text`` plus a newline to stdout."""
        self.stdout.write(text + "\n")

    def lines(self, texts: Iterable[str]) -> None:
        """Write each string as one stdout line."""
        for text in texts:
            self.line(text)

    def hint(self, text: str) -> None:
        """Write ``text`` plus a newline to stderr (pagination hints, warnings)."""
        self.stderr.write(text + "\n")


def clean_cell(value: object) -> str:
    """Table cell text (§1.2): None → "", ``\\`` → ``\\\\``, TAB → ``\\t``, CR dropped, LF → ``\\n``."""
    if value is None:
        return ""
    text = str(value)
    return (text.replace("\\", "\\\\").replace("\t", "\\t")
            .replace("\r", "").replace("\n", "\\n"))


def md_escape(value: object) -> str:
    """Markdown-escaped text (§1.2); a missing or empty value renders as an em dash.

    Unlike the reference (whose falsy check turns ``0`` into a dash), ``0`` and
    ``False`` render as themselves: only None, "" and empty containers are missing.
    """
    if value is None or value == "" or value == [] or value == {}:
        return EM_DASH
    text = value if type(value) is str else str(value)
    # Most cells hold none of the four characters: four C-level scans beat four copies.
    if "\\" not in text and "|" not in text and "\r" not in text and "\n" not in text:
        return text
    return (text.replace("\\", "\\\\").replace("|", "\\|")
            .replace("\r", " ").replace("\n", " "))


def open_cell(row: Mapping[str, object]) -> str:
    """The Open cell of evaluation tables: ``yes``/``no``; ``is_open: null`` → ``unknown`` (quirk fix).

    A missing ``is_open`` key counts as ``yes`` (§2.3).
    """
    if "is_open" not in row:
        return "yes"
    value = row["is_open"]
    if value is None:
        return "unknown"
    return "yes" if value else "no"


def thousands(value: object) -> str:
    """``1234`` → ``1,234``; non-numbers are returned as ``str(value)``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:,}"


def format_table(headers: Sequence[str], rows: Iterable[Sequence[object]], *,
                 right: Iterable[str] = (), aligned: bool) -> str:
    """A table as text (§1.2), each line newline-terminated.

    TSV when ``aligned`` is false; otherwise columns padded to their widest
    cell, separated by two spaces, ``right`` columns right-justified and the
    last column unpadded unless it is right-aligned. Cells go through
    :func:`clean_cell`.
    """
    body = [[clean_cell(cell) for cell in row] for row in rows]
    head = [clean_cell(h) for h in headers]
    if not aligned:
        return "".join("\t".join(cells) + "\n" for cells in [head, *body])
    right_set = set(right)
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    out = []
    for cells in [head, *body]:
        parts = []
        for i, cell in enumerate(cells):
            last = i == len(cells) - 1
            if headers[i] in right_set:
                parts.append(cell.rjust(widths[i]))
            elif last:
                parts.append(cell)
            else:
                parts.append(cell.ljust(widths[i]))
        out.append("  ".join(parts) + "\n")
    return "".join(out)


def write_table(out: Output, headers: Sequence[str], rows: Iterable[Sequence[object]], *,
                right: Iterable[str] = (), always_aligned: bool = False) -> None:
    """Write a table: aligned on a TTY or when ``always_aligned``, else TSV (§1.2)."""
    out.stdout.write(format_table(headers, rows, right=right, aligned=out.isatty or always_aligned))


def heading(name: object, out: Output, level: int = 1) -> str:
    """Entity heading: the plain name on a TTY, else ``# <escaped name>``; missing → ``Unnamed``."""
    text = str(name) if name not in (None, "") else "Unnamed"
    if out.isatty:
        return text
    return "#" * level + " " + md_escape(text)


def entity_link(label: str, url: str, out: Output) -> str:
    """``Label: URL`` on a TTY, else ``[Label](URL)`` (§1.2)."""
    return f"{label}: {url}" if out.isatty else f"[{label}]({url})"


def absolute_url(url: str) -> str:
    """A site-relative URL (``/paper/…``) made absolute on ``SITE_URL``; others unchanged."""
    return SITE_URL + url if url.startswith("/") else url


def site_url(kind: str, slug: object = None, ident: object = None) -> str:
    """Public site link (§1.2): ``https://paperswithcode.co/<segment>/<slug or id>``.

    ``kind`` is one of paper, task, method, benchmark, conference, organization,
    framework. Paper references keep only ``.`` safe; the others keep ``-``.
    Raises ``KeyError`` for an unknown kind (a programming error).
    """
    value = slug if slug not in (None, "") else ident
    safe = "." if kind == "paper" else "-"
    return f"{SITE_URL}/{_SITE_KINDS[kind]}/{quote(str(value if value is not None else ''), safe=safe)}"


def paper_url(ref: object) -> str:
    """``https://paperswithcode.co/paper/<ref>`` with ``ref`` percent-encoded (``.`` safe)."""
    return site_url("paper", ref)


def json_envelope(payload: object) -> str:
    """The one-line ``--json`` output: compact ``{"schema_version":"v1","data":…}``, UTF-8 kept."""
    return json.dumps({"schema_version": API_CONTRACT_VERSION, "data": payload},
                      ensure_ascii=False, separators=(",", ":"))


def result_list(payload: object) -> list[JsonObject]:
    """The rows of a list response (§4.2): a bare array, or ``results`` (else ``items``).

    Non-object items are skipped. Raises ``ResponseError`` when the payload is
    neither an object nor an array, or an object without a list.
    """
    items: object
    if isinstance(payload, list):
        items = payload
    elif isinstance(payload, dict):
        items = payload.get("results")
        if items is None:
            items = payload.get("items")
        if not isinstance(items, list):
            raise ResponseError("API response did not contain a result list")
    else:
        raise ResponseError("API returned an unexpected response shape")
    return [item for item in items if isinstance(item, dict)]


def result_total(payload: object) -> int | None:
    """The total of a list response: ``count``, or ``total`` when count is missing or 0; None if unknown."""
    if not isinstance(payload, dict):
        return None
    count = payload.get("count")
    if not count:
        total = payload.get("total")
        if isinstance(total, int) and not isinstance(total, bool):
            return total
    if isinstance(count, int) and not isinstance(count, bool):
        return count
    return None


def pagination_hint(out: Output, payload: object, *, page: int = 1, page_size: int | None = None,
                    rows: int = 0) -> None:
    """Write ``# more: rerun with --page <page+1>`` to stderr when the total exceeds page × size.

    ``page_size`` falls back to ``rows`` (the number of rows shown). Only for
    commands that have a ``--page`` flag (quirk fix: never for lists without one).
    """
    total = result_total(payload)
    size = page_size if page_size else rows
    if total is not None and total > page * size:
        if page >= PAGE_MAX:  # no --page reaches further: say how to get at the rest
            out.hint(f"# more: {total} in all; --page stops at {PAGE_MAX}: narrow the filters, or show more rows per page")
        else:
            out.hint(f"# more: rerun with --page {page + 1}")


def paper_rows(items: Iterable[Mapping[str, object]], *, coverage: bool) -> tuple[list[str], list[list[object]]]:
    """Headers and rows of the standard paper table (§1.3)."""
    headers = ["id", "title", "year", "citations"]
    if coverage:
        headers += ["official_implementation", "code_repositories"]
    rows = []
    for item in items:
        published = item.get("published") or item.get("date_published")
        row: list[object] = [
            item.get("arxiv_id") or item.get("id"),
            item.get("title"),
            str(published)[:4] if published else None,
            item.get("citation_count"),
        ]
        if coverage:
            row += ["true" if item.get("has_official_implementation") is True else "false",
                    item.get("code_repository_count")]
        rows.append(row)
    return headers, rows


def render_paper_table(out: Output, payload: object, *, coverage: bool = False) -> None:
    """Write the standard paper table (§1.3) for a list response (TSV captured, aligned on a TTY)."""
    headers, rows = paper_rows(result_list(payload), coverage=coverage)
    write_table(out, headers, rows, right=("year", "citations", "code_repositories"))


# ---------------------------------------------------------------------------
# Added by cli-B (taxonomy and leaderboard commands); append-only block.
# ---------------------------------------------------------------------------


def md_link(label: object, url: str) -> str:
    """``[label](url)`` with ``\\``, ``[`` and ``]`` escaped in the label (as §2.2 lineage items)."""
    text = str(label).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return f"[{text}]({url})"


def counted(value: object, noun: str, plural: str | None = None) -> str:
    """``1 paper`` / ``2,389 papers``; a missing or non-numeric count is ``unknown papers``."""
    plural = plural or noun + "s"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"unknown {plural}"
    return f"{value:,} {noun if value == 1 else plural}"


def section(out: Output, title: str) -> None:
    """A detail section: an empty line, ``## title`` (plain ``title`` on a TTY), an empty line."""
    out.line()
    out.line(title if out.isatty else f"## {title}")
    out.line()

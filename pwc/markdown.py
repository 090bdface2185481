"""Markdown building blocks shared by the CLI's captured output and the MCP text content.

The CLI writes Markdown when stdout is not a terminal (leaderboards, evaluation
tables); the MCP server renders the same facts as the ``content`` text of every
tool result. Both build their tables and cells here so the two agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pwc.render import md_escape

__all__ = ["md_cell", "md_table", "pipe_row"]


def md_cell(value: object) -> str:
    """A compact table cell: :func:`pwc.render.md_escape`, but a missing value is empty, not ``—``."""
    # The common cells first, without a call: most text needs no escaping (``type(value) is str``
    # rather than ``kind is str`` so mypy narrows ``value``).
    kind = type(value)
    if type(value) is str:
        if "\\" not in value and "|" not in value and "\r" not in value and "\n" not in value:
            return value
        return md_escape(value)
    if kind is int or kind is float:  # numbers need no escaping
        return str(value)
    if value is None or value == [] or value == {}:
        return ""
    return md_escape(value)


def pipe_row(cells: Iterable[str]) -> str:
    """``| a | b |`` (cells already escaped)."""
    return "| " + " | ".join(cells) + " |"


def md_table(headers: Sequence[str], rows: Iterable[Sequence[str]], align: Sequence[str] | None = None, *,
             drop_empty: bool = False, compact: bool = False) -> list[str]:
    """A GitHub-flavoured Markdown table as lines: header, separator, one line per row.

    ``rows`` hold escaped cell strings; ``align`` gives each column's separator
    (``---``, ``---:``, ``:---:``; default ``---``). With ``drop_empty``, columns whose
    cells are all empty are left out (a column of missing values carries no fact).
    ``compact`` writes the minimal GFM form ``a|b`` with a ``-|-`` separator (no outer
    pipes or padding), which Markdown readers parse as the same table.
    """
    body = [list(row) for row in rows]
    seps = list(align) if align is not None else ["-" if compact else "---"] * len(headers)
    keep = [i for i in range(len(headers)) if not drop_empty or any(row[i] for row in body)]
    line = (lambda cells: "|".join(cells)) if compact else pipe_row
    lines = [line([headers[i] for i in keep]), line([seps[i] for i in keep])]
    lines += [line([row[i] for i in keep]) for row in body]
    return lines

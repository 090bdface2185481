"""The agent instructions sent in ``initialize`` and ``server/discover`` (docs/tool-contract.md §1.7).

They describe the tools, so they live beside the tool registry and quote its hosted row cap
rather than repeating the number. `server_instructions` appends one line saying what data the
catalog serves when the catalog says so (`data_source.DataSource.instructions_line`).
"""

from __future__ import annotations

from typing import Final

from pwc_mcp_core.tools.data_source import DataSource
from pwc_mcp_core.tools.definitions import LIMIT_CAP

__all__ = ["SERVER_INSTRUCTIONS", "server_instructions"]

SERVER_INSTRUCTIONS: Final = (
    "Papers With Code research catalog (read-only). "
    "Use search_papers to find papers by relevance (hybrid mode by default; semantic for concepts, "
    "keyword for exact phrases), and the list_* tools for deterministic filters such as task, date or "
    "conference. Pass the slugs and IDs that list and search tools return to the exact lookup tools "
    "(get_paper_info, get_task, get_benchmark, get_method, ...) instead of guessing names. "
    "Paper references may be arXiv IDs, catalog IDs, arXiv/Hugging Face/Papers With Code URLs or exact titles. "
    f"Dates are YYYY-MM-DD. List tools return at most {LIMIT_CAP} rows; follow their pagination fields for more. "
    "read_paper returns the paper's Markdown in chunks: call it again with the returned cursor until no cursor "
    "is returned. The text content is compact Markdown carrying the same facts as structuredContent (IDs, "
    "titles, authors, dates, metrics with values, ranks, next page, the read_paper cursor); the tools without "
    "typed fields (task and method lists, conferences, organizations, frameworks) and cite_papers, "
    "verify_references and get_sota_history also put the pwc CLI's JSON payload in its `data` field. Leaderboard ranks are only comparable within one task scope, "
    "and metric direction (higher or lower is better) is stated when known. "
    "'Official implementation' means code the catalog designates as official, not an audit; an evaluation's "
    "is_open may be null when unknown. A tool result with isError explains what to change; fix the argument "
    "and retry rather than repeating the same call."
)


def server_instructions(source: DataSource | None = None) -> str:
    """`SERVER_INSTRUCTIONS`, plus the data line of ``source`` when the catalog's provenance is known."""
    return SERVER_INSTRUCTIONS if source is None else f"{SERVER_INSTRUCTIONS} {source.instructions_line()}"

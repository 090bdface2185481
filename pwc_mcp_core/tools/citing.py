"""``cite_papers``: every reference resolved as the other paper tools resolve it, then one ``pwc paper cite``.

Each distinct reference goes through :func:`pwc_mcp_core.tools.paper_resolution.resolve_paper`
(docs/tool-contract.md §5: arXiv ids and URLs, numeric ids, Hugging Face and Papers With Code
URLs, slugs included, exact titles, the unique short name before a title's colon such as
``BERT``, DOIs and public metadata). The canonical ids of the references that resolved are cited
by one ``pwc paper cite`` call; a reference that did not resolve keeps its place in ``items``
with its status (``not_found``, ``ambiguous``, ``lookup_failed``) and the resolver's reason, and,
in BibTeX, a ``%`` comment in the text. Items name the reference as the caller wrote it.
"""

from __future__ import annotations

from typing import cast

from pwc.commands.papers_cite import cite_text
from pwc.errors import PwcError
from pwc.queries import query
from pwc.transport import Client
from pwc_mcp_core.errors import ToolError
from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue
from pwc_mcp_core.tools.error_texts import tool_error_text
from pwc_mcp_core.tools.paper_resolution import resolve_paper
from pwc_mcp_core.tools.projections.results import structured
from pwc_mcp_core.tools.registry import ToolSpec

__all__ = ["cite_papers"]

# Resolver error prefix (docs/tool-contract.md §3.1) → the item status of pwc paper cite.
_STATUS = {"not_found": "not_found", "ambiguous": "ambiguous"}


def _failure(exc: Exception) -> JsonObject:
    """``{status, message}`` of a reference the resolver refused; a catalog failure is ``lookup_failed``."""
    prefix, _, message = tool_error_text(exc).partition(": ")
    return {"status": _STATUS.get(prefix, "lookup_failed"), "message": message or prefix}


def cite_papers(tool: ToolSpec, arguments: JsonObject, client: Client) -> tuple[JsonObject, str]:
    """Run ``cite_papers``: resolve each distinct reference, then one ``pwc paper cite`` on the ids found.

    Returns ``(structuredContent, text)`` exactly as for a plain command (``citations`` projection).
    """
    raw = arguments.get("papers")
    refs = [" ".join(str(ref).split()) for ref in (raw if isinstance(raw, list) else [])]
    fmt = str(arguments.get("format") or "bibtex")
    answers: dict[str, str | JsonObject] = {}
    notes: dict[str, str] = {}
    for ref in refs:
        if ref in answers:
            continue
        try:
            resolved = resolve_paper(ref, client)
        except (ToolError, PwcError) as exc:
            answers[ref] = _failure(exc)
            continue
        answers[ref] = resolved.canonical
        if resolved.note:
            notes[ref] = resolved.note
    canonical = list(dict.fromkeys(answer for answer in answers.values() if isinstance(answer, str)))
    cited: dict[str, JsonValue] = {}
    payload: JsonObject = {"format": fmt, "cited": 0, "text": ""}
    if canonical:
        options: dict[str, object] = {**tool.to_options(arguments), "papers": canonical}
        payload = cast(JsonObject, query(tool.command, options, client))
        listed = payload.get("items")
        cited = dict(zip(canonical, listed if isinstance(listed, list) else [], strict=True))
    items: list[JsonObject] = []
    for ref in refs:
        answer = answers[ref]
        if isinstance(answer, str):
            item = cited[answer]
            assert isinstance(item, dict)
            items.append({**item, "reference": ref, **({"note": notes[ref]} if ref in notes else {})})
        else:
            items.append({"reference": ref, **answer})
    payload = {**payload, "count": len(refs), "items": [*items]}
    if fmt == "bibtex":  # the failures, as comments, in their places
        payload["text"] = cite_text(items, [], fmt)
    return structured(tool.output, payload, tool.effective(arguments), [], tool.name)

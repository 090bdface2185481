"""``resources/read`` for the five templates of docs/tool-contract.md §7 (names in :mod:`pwc_mcp_core.tools.templates`).

* ``pwc://papers/{paper}`` → compact JSON of ``get_paper_info`` (defaults);
* ``pwc://papers/{paper}/markdown`` → ``read_paper``'s text: the whole Markdown when it fits
  one chunk, else the first chunk and a last line naming the ``read_paper`` call (with its
  cursor) that continues it, framed as untrusted third-party text (tool-contract §4.6);
* ``pwc://papers/{paper}/citation{?format}`` → ``cite_papers``'s text for that one paper
  (``format`` bibtex, the default, ris or csl-json; the MIME type follows the format);
* ``pwc://tasks/{task}`` → compact JSON of ``get_task`` (benchmark_limit 10);
* ``pwc://benchmarks/{benchmark}`` → compact JSON of ``get_benchmark`` (page 1, limit 20).

``pwc://paper/…`` (singular, as issue texts spell it) reads the same as ``pwc://papers/…``; the
plural is canonical (the one ``resources/templates/list`` names). Variables are percent-decoded;
only the citation takes a query, and only its ``format``. Unknown or malformed URIs and every failure
raise :class:`ResourceError` (code -32002 on the legacy era, -32602 on the
modern one; ``data.uri``) — never an empty ``contents``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar
from urllib.parse import parse_qsl, unquote

from pwc_mcp_core.errors import ResourceError
from pwc_mcp_core.protocol.json_types import JsonObject
from pwc_mcp_core.protocol.jsonrpc import compact
from pwc_mcp_core.tools.error_texts import tool_error_text
from pwc_mcp_core.tools.registry import ToolSpec, get_tool
from pwc_mcp_core.tools.templates import CITATION_MIME_TYPES
from pwc_mcp_core.tools.validation import validate_arguments

__all__ = ["parse_uri", "read_resource"]

R = TypeVar("R")
# (tool, validated arguments, runtime) → (structuredContent, text)
ToolRunner = Callable[[ToolSpec, JsonObject, R], tuple[JsonObject, str]]

_SCHEME = "pwc://"
_MAX_URI = 2048
# template → (tool, argument name, fixed arguments, MIME type)
_READERS: dict[str, tuple[str, str, JsonObject, str]] = {
    "paper": ("get_paper_info", "paper", {}, "application/json"),
    "markdown": ("read_paper", "paper", {}, "text/markdown"),
    "citation": ("cite_papers", "papers", {}, CITATION_MIME_TYPES["bibtex"]),
    "task": ("get_task", "task", {"benchmark_limit": 10}, "application/json"),
    "benchmark": ("get_benchmark", "benchmark", {"page": 1, "limit": 20}, "application/json"),
}


def _code(era: str) -> int:
    return -32602 if era == "modern" else -32002


def _query(query: str) -> dict[str, str] | None:
    """The citation query's ``{"format": …}`` (empty when absent); None for anything else in it."""
    if not query:
        return {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        return None
    if len(pairs) != 1 or pairs[0][0] != "format":
        return None
    return {"format": pairs[0][1].strip().lower()}


def parse_uri(uri: object) -> tuple[str, str, dict[str, str]] | None:
    """``(template kind, decoded variable, query arguments)`` for a supported URI, else None.

    Kinds: ``paper``, ``markdown``, ``citation``, ``task``, ``benchmark``. Only ``citation``
    takes a query (``?format=``); its value is checked when the resource is read.
    """
    if not isinstance(uri, str) or len(uri) > _MAX_URI or not uri.startswith(_SCHEME):
        return None
    collection, _, rest = uri[len(_SCHEME):].partition("/")
    kind = {"papers": "paper", "paper": "paper", "tasks": "task", "benchmarks": "benchmark"}.get(collection)
    if kind is None or not rest or "#" in rest:
        return None
    rest, question, query = rest.partition("?")
    if kind == "paper" and rest.endswith("/markdown"):
        kind, rest = "markdown", rest[: -len("/markdown")]
    elif kind == "paper" and rest.endswith("/citation"):
        kind, rest = "citation", rest[: -len("/citation")]
    if kind not in ("paper", "markdown", "citation") and "/" in rest:
        return None
    options = _query(query) if kind == "citation" else ({} if not question else None)
    value = unquote(rest).strip()
    return (kind, value, options) if value and options is not None else None


def read_resource(uri: object, runtime: R, era: str, *, run_tool: ToolRunner[R]) -> JsonObject:
    """Read one resource; returns ``{"contents": [{"uri", "mimeType", "text"}]}``.

    ``run_tool`` is ``execution.run_tool``, passed in so that this module does not import
    the executor that imports it (no import cycle).

    Raises:
        ResourceError: unknown/malformed URI (``Resource not found: <uri>``) or a failed read
            (``Error reading resource <uri>: <tool error text>``).
    """
    parsed = parse_uri(uri)
    safe_uri = uri[:_MAX_URI] if isinstance(uri, str) else ""
    if parsed is None:
        raise ResourceError(f"Resource not found: {safe_uri}", code=_code(era), uri=safe_uri)
    kind, value, options = parsed
    tool_name, argument, fixed, mime = _READERS[kind]
    tool = get_tool(tool_name)
    assert tool is not None
    try:
        arguments = validate_arguments(tool, {argument: [value] if kind == "citation" else value,
                                              **fixed, **options})
        content, _text = run_tool(tool, arguments, runtime)
    except Exception as exc:  # noqa: BLE001 - every failure is a JSON-RPC error for resources
        raise ResourceError(f"Error reading resource {safe_uri}: {tool_error_text(exc)}",
                            code=_code(era), uri=safe_uri) from None
    if kind == "citation":
        text, mime = _citation(content, safe_uri, era)
    elif kind == "markdown":
        if content.get("in_catalog") is False or content.get("markdown") is None:
            raise ResourceError(f"Error reading resource {safe_uri}: not_found: the paper is not in the catalog; "
                                "no Markdown is available", code=_code(era), uri=safe_uri)
        # read_paper's text: the paper framed as untrusted third-party text, and for a paper longer than
        # one chunk, on a last line, the read_paper call (cursor included) that continues it.
        text = _text
    else:
        text = compact(content)
    return {"contents": [{"uri": safe_uri, "mimeType": mime, "text": text}]}


def _citation(content: JsonObject, uri: str, era: str) -> tuple[str, str]:
    """(citation text, MIME type) of a one-paper ``cite_papers`` result; its failure is the read's."""
    data = content.get("data")
    items = content.get("items")
    item = items[0] if isinstance(items, list) and items and isinstance(items[0], dict) else {}
    if item.get("status") != "ok" or not isinstance(data, dict):
        status = str(item.get("status") or "not_found").replace("lookup_failed", "upstream_error")
        raise ResourceError(f"Error reading resource {uri}: {status}: {item.get('message') or 'no citation'}",
                            code=_code(era), uri=uri)
    fmt = str(content.get("format") or "bibtex")
    return str(data.get("text") or ""), CITATION_MIME_TYPES.get(fmt, CITATION_MIME_TYPES["bibtex"])

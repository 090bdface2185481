"""``execute(call, runtime) -> bytes``: run one ``tools/call`` or ``resources/read`` (ARCHITECTURE §2).

Sync (a worker thread calls it), never raises, and returns the JSON-RPC
response body without ``jsonrpc``/``id``: ``b'{"result": ...}'`` or
``b'{"error": ...}'`` (stdlib json, compact, UTF-8). Tool flow: unknown tool
→ ``-32602``; arguments validated against ``inputSchema`` before any catalog
call (failures are ``isError`` results); paper references resolved first
(docs/tool-contract.md §5; outside the catalog → public metadata; for ``cite_papers``
each reference of the list, :mod:`pwc_mcp_core.tools.citing`); the CLI command runs
in-process (``pwc.queries.query``); the payload becomes ``structuredContent``
(``data`` + typed projections) and a Markdown text of the same facts. Failures map
through :mod:`pwc_mcp_core.tools.error_texts`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from pwc.cache import Cache
from pwc.errors import HTTPStatusError, UsageError
from pwc.names import closeness, find_exact, first_word
from pwc.render import result_list
from pwc.transport import Client
from pwc_mcp_core.errors import ResourceError, ToolError
from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue
from pwc_mcp_core.protocol.jsonrpc import dumps
from pwc_mcp_core.protocol.versions import RESOURCE_READ_TTL_MS, modern_result_extras
from pwc_mcp_core.runtime.cache_metrics import InstrumentedCache
from pwc_mcp_core.runtime.caches import ChunkCache
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools.charts import chart_content
from pwc_mcp_core.tools.cursors import CursorCodec
from pwc_mcp_core.tools.error_texts import INTERNAL_ERROR, error_result, tool_error_text
from pwc_mcp_core.tools.projections.leaderboards import (
    METRIC_SELECTORS,
    local_page,
    metric_note,
    order_by_metric,
    unknown_metric_error,
)
from pwc_mcp_core.tools.projections.results import public_paper_result, structured
from pwc_mcp_core.tools.projections.text_papers import (
    available_at,
    paper_list_text,
    read_paper_text,
)
from pwc_mcp_core.tools.registry import ToolSpec, get_tool
from pwc_mcp_core.tools.validation import compile_validators, validate_arguments

__all__ = ["Runtime", "execute", "run_tool", "warm"]

logger = logging.getLogger(__name__)

INVALID_PARAMS = -32602
# Room left under the 2 MiB bound for the caller's `{"jsonrpc":"2.0","id":…,` prefix.
_ENVELOPE_MARGIN = 4096
RESULT_TOO_LARGE = "upstream_error: the result is too large for one response; request fewer rows (smaller limit)"
DATA_NOTE = "data omitted: the CLI payload did not fit the 2 MiB response bound; the projections are complete"
CLI_ROW_LIMIT = 100  # `pwc benchmark --limit` range is 1-100
_PAPER_TOOLS = frozenset({"get_paper_info", "get_paper_evaluations", "get_related_papers", "get_paper_lineage"})
# List-tool filter arguments that name a catalog entity: argument → (noun, search endpoint, tool listing them).
_FILTER_ENTITIES: dict[str, tuple[str, str, str]] = {
    "task": ("task", "tasks/", "list_tasks"),
    "method": ("method", "methods/", "list_methods"),
    "conference": ("conference", "conferences/", "list_conferences"),
    "organization": ("organization", "organizations/", "list_organizations"),
}


@dataclass
class Runtime:
    """Per-process execution state: the catalog ``client`` (with the shared cache), the cursor
    codec, the Markdown chunk cache and the settings (``CoreSettings``)."""

    settings: CoreSettings
    client: Client
    cursor_codec: CursorCodec
    chunk_cache: ChunkCache

    @classmethod
    def build(cls, settings: CoreSettings, cache: Cache | None = None) -> Runtime:
        """One ``pwc.transport.Client(settings.api_url, timeout=settings.catalog_timeout_s, cache=cache)``;
        ``cache`` is wrapped in an ``InstrumentedCache`` so hits, misses and catalog calls are counted.

        Raises:
            ValueError: no current cursor key (``current cursor secret is required``).
        """
        keys = tuple(settings.cursor_keys) or ("",)
        codec = CursorCodec(keys[0], keys[1] if len(keys) > 1 else None)
        counted = InstrumentedCache(cache) if cache is not None else None
        client = Client(settings.api_url, timeout=settings.catalog_timeout_s, cache=counted,
                        max_bytes=settings.max_body_bytes)
        return cls(settings=settings, client=client, cursor_codec=codec, chunk_cache=ChunkCache())

    @property
    def max_bytes(self) -> int:
        """The response bound (``settings.max_body_bytes``)."""
        return self.settings.max_body_bytes


def _dump(body: Mapping[str, object]) -> bytes:
    return dumps(body)


def warm() -> None:
    """Build the per-process tables every call needs: the tool catalogue (about 30 ms, with
    the CLI parser it probes) and the argument validators.

    Call it once before threads start taking calls: each of several threads that start
    cold would build them again, all holding the GIL (a fresh worker's first calls waited
    up to 0.4 s at p99 for this).
    """
    compile_validators()


def execute(call: Call, runtime: Runtime) -> bytes:
    """Run ``call`` and return the serialized JSON-RPC response body; never raises."""
    try:
        if call.kind == "completion/complete":
            return _dump({"result": {"completion": _completion(call, runtime)}})
        if call.kind == "resources/read":
            return _dump(_resource_body(call, runtime))
        return _fit(_tool_body(call, runtime), runtime.max_bytes - _ENVELOPE_MARGIN, call)
    except Exception as exc:  # noqa: BLE001 - the contract is "never raises"
        logger.error("execute failed type=%s", type(exc).__name__)
        if call.kind == "resources/read":
            return _dump({"error": {"code": -32603, "message": "internal error reading the resource"}})
        return _dump({"result": _finish(error_result(INTERNAL_ERROR), call)})


def _completion(call: Call, runtime: Runtime) -> JsonObject:
    """Catalog values for a completion; a catalog failure is no values, never an error."""
    from pwc_mcp_core.tools.completion import EMPTY, VOCABULARIES, catalog_completion

    typed = call.arguments.get("value")
    if call.name not in VOCABULARIES or not isinstance(typed, str):
        return dict(EMPTY)
    try:
        return catalog_completion(call.name, typed, runtime.client)
    except Exception as exc:  # noqa: BLE001 - completion is a hint
        logger.warning("completion failed type=%s", type(exc).__name__)
        return dict(EMPTY)


def _finish(result: JsonObject, call: Call) -> JsonObject:
    if call.era == "modern":
        result.update(modern_result_extras())
    return result


def _tool_body(call: Call, runtime: Runtime) -> JsonObject:
    tool = get_tool(call.name)
    if tool is None:
        name = call.name[:64]
        return {"error": {"code": INVALID_PARAMS, "message": f"Unknown tool: {name}"}}
    try:
        arguments = validate_arguments(tool, call.arguments)
        content, text = run_tool(tool, arguments, runtime)
        items: list[JsonValue] = [{"type": "text", "text": text}]
        image = chart_content(tool.name, content, runtime.client)
        items += [image] if image is not None else []
        result: JsonObject = {"content": items, "structuredContent": content}
    except Exception as exc:  # noqa: BLE001 - every failure becomes an isError result
        result = error_result(tool_error_text(exc, frozenset(param.name for param in tool.params)))
    return {"result": _finish(result, call)}


def _fit(body: JsonObject, limit: int, call: Call) -> bytes:
    """Serialize, dropping ``data`` (then the whole result) if it would exceed the response bound."""
    raw = _dump(body)
    if len(raw) <= limit:
        return raw
    result = body.get("result", {})
    content = result.get("structuredContent") if isinstance(result, dict) else None
    if isinstance(content, dict) and content.get("data") is not None:
        content["data"], content["data_note"] = None, DATA_NOTE
        raw = _dump(body)
        if len(raw) <= limit:
            return raw
    return _dump({"result": _finish(error_result(RESULT_TOO_LARGE), call)})


def run_tool(tool: ToolSpec, arguments: JsonObject, runtime: Runtime) -> tuple[JsonObject, str]:
    """Run a validated tool call; returns ``(structuredContent, text)``.

    Raises:
        ToolError, pwc.errors.PwcError: mapped to ``isError`` text by the caller.
    """
    from pwc.queries import query

    if tool.name == "read_paper":
        return _read_paper(arguments, runtime)
    if tool.name == "cite_papers":
        from pwc_mcp_core.tools.citing import cite_papers

        return cite_papers(tool, arguments, runtime.client)
    if tool.name == "find_in_paper":
        from pwc_mcp_core.tools.finding import find_in_paper, find_in_paper_text

        found = find_in_paper(arguments, tool.to_options(arguments), runtime)
        return found, find_in_paper_text(found)
    effective = tool.effective(arguments)
    options = tool.to_options(arguments)
    _planned, notes = tool.plan(arguments)
    chosen = None
    if tool.name in _PAPER_TOOLS:
        from pwc_mcp_core.tools.paper_resolution import resolve_paper

        resolved = resolve_paper(str(arguments["paper"]), runtime.client)
        if not resolved.in_catalog:
            return _outside_catalog(tool, effective, resolved.external or {}, runtime)
        options["paper"] = resolved.canonical
        chosen = resolved.note
    if tool.name == "get_benchmark":
        page = effective.get("page")
        payload, notes = _leaderboard(tool, options, page if isinstance(page, int) and page else 1, runtime)
    else:
        try:
            payload = query(tool.command, options, runtime.client)
        except HTTPStatusError as exc:
            if exc.status == 404:
                _name_the_missing_filter(effective, runtime.client)
            raise
    if tool.name == "list_benchmarks" and effective.get("limit") is None:
        # Grouped: the CLI pages areas, so the caller's own limit and page page the benchmarks.
        effective = {**effective, "limit": arguments.get("limit"), "page": arguments.get("page", 1)}
    content, text = structured(tool.output, payload, effective, notes, tool.name)
    # An answer chosen among several candidates says so, first.
    return (content, f"{chosen}\n{text}") if chosen else (content, text)


def _name_the_missing_filter(arguments: JsonObject, client: Client) -> None:
    """A list call the catalog answered with 404: name the filter argument that matches no record,
    with the closest names and the tool that lists valid values (as ``get_task`` does).

    Raises:
        ToolError: ``not_found:`` naming the argument; returns when every named entity exists.
    """
    for argument, (noun, endpoint, lister) in _FILTER_ENTITIES.items():
        value = arguments.get(argument)
        if not isinstance(value, str) or not value.strip():
            continue
        candidates = result_list(client.get_json(endpoint, {"q": value.strip(), "page": 1, "page_size": 100}))
        if find_exact(candidates, value, ("name", "full_name", "slug", "id")) is not None:
            continue
        wider = first_word(value) if not candidates else None
        if wider:
            candidates = result_list(client.get_json(endpoint, {"q": wider, "page": 1, "page_size": 100}))
        ranked = sorted((c for c in candidates if c.get("slug")),
                        key=lambda c: -closeness(value, c))[:3]
        closest = ", ".join(f"{c['slug']} ({c.get('name') or c['slug']})" for c in ranked)
        raise ToolError(f"not_found: no {noun} matches {argument}={value.strip()!r}"
                        + (f"; closest {noun}s: {closest}" if closest else "")
                        + f". Pass a slug, name or ID from {lister}.")


def _leaderboard(tool: ToolSpec, options: dict[str, object], page: int,
                 runtime: Runtime) -> tuple[object, list[str]]:
    """Run ``pwc benchmark --name``; a metric the leaderboard lacks → the unfiltered leaderboard plus
    ``metric_note`` (seed README). Pages locally when the CLI has no ``--page``."""
    from pwc.queries import query

    given = options.get("limit")
    limit = given if isinstance(given, int) and given else 20
    local = "page" not in options
    ordered = local and not options.get("sort") and not options.get("pareto")
    if local:
        if page * limit > CLI_ROW_LIMIT:
            raise ToolError(f"invalid_argument: page × limit must be at most {CLI_ROW_LIMIT} for a leaderboard; "
                            "narrow it with metric filters instead")
        # Without an explicit order every row the CLI can return is fetched, so the metric order
        # below is the same on every page.
        options = {**options, "limit": CLI_ROW_LIMIT if ordered else page * limit}
    try:
        payload, notes = query(tool.command, options, runtime.client), []
    except UsageError as exc:
        if not unknown_metric_error(str(exc)):
            raise
        notes = [metric_note(str(exc))]
        unfiltered = {**options, **{key: None for key in METRIC_SELECTORS if key in options}}
        if local:  # the unfiltered leaderboard is the default one: fetched whole and ordered best-first
            ordered = True
            unfiltered["limit"] = CLI_ROW_LIMIT
        payload = query(tool.command, unfiltered, runtime.client)
    if ordered:
        requested = [str(name) for key in ("require_metrics", "min", "max") for name in _names(options.get(key))]
        payload = order_by_metric(payload, requested if not notes else [])
    return (local_page(payload, page, limit, max_rows=CLI_ROW_LIMIT) if local else payload), notes


def _names(value: object) -> list[object]:
    """The metric names of a ``require_metrics`` list or a ``min``/``max`` mapping (its keys)."""
    return list(value) if isinstance(value, (list, dict)) else []


def _outside_catalog(tool: ToolSpec, effective: JsonObject, record: JsonObject,
                     runtime: Runtime) -> tuple[JsonObject, str]:
    """A paper only public metadata knows (seed README): info → the record; related → a catalog
    search for its public title; evaluations and lineage do not exist outside the catalog."""
    from pwc.queries import query

    note = str(record.get("note") or "This paper is not in the Papers With Code catalog.")
    if tool.name == "get_paper_info":
        return public_paper_result(str(effective["paper"]), record)
    title = record.get("title")
    if tool.name != "get_related_papers" or not isinstance(title, str) or not title.strip():
        raise ToolError(f"not_found: {note.rstrip('.')}; the catalog records no "
                        f"{'evaluations' if tool.name == 'get_paper_evaluations' else 'lineage or related papers'} "
                        "for it. Use get_paper_info for its public metadata.")
    payload = query(("search",), {"query": title.strip()[:500], "limit": effective.get("limit")}, runtime.client)
    content, _text = structured("paper_page", payload, {"page": 1, "limit": effective.get("limit")}, [])
    listed = record.get("available_at")
    links = [link for link in listed or [] if isinstance(link, dict) and link.get("url")] if isinstance(listed, list) else []
    content.update(in_catalog=False, note=note, available_at=[*links])
    cite = available_at(links)
    items, nxt = content["items"], content["next_page"]
    return content, paper_list_text([item for item in items if isinstance(item, dict)] if isinstance(items, list) else [],
                                    nxt if isinstance(nxt, int) else None,
                                    f"From a catalog search for the paper's public title. {note}"
                                    + (f" {cite}" if cite else ""))


def _read_paper(arguments: JsonObject, runtime: Runtime) -> tuple[JsonObject, str]:
    from pwc_mcp_core.tools.reading import read_paper

    result = read_paper(arguments, runtime)
    return result, read_paper_text(result)


def _resource_body(call: Call, runtime: Runtime) -> JsonObject:
    from pwc_mcp_core.tools.resources import read_resource

    try:
        result = read_resource(call.name, runtime, call.era, run_tool=run_tool)
    except ResourceError as exc:
        return {"error": {"code": exc.code, "message": str(exc), "data": {"uri": exc.uri}}}
    if call.era == "modern":
        result.update(modern_result_extras(ttl_ms=RESOURCE_READ_TTL_MS))
    return {"result": result}


"""`McpServer`: the JSON-RPC server (method routing) for both protocol eras, with no HTTP in it (ARCHITECTURE.md §2).

The gateway (and `stdio`) hands it a raw body and the request headers and
gets a `Reply` back. Static results are serialized once at construction;
``tools/call`` and ``resources/read`` become a `Call` for the `Dispatcher`
(`pwc_mcp_core.runtime.dispatch`), whose one `Outcome` `McpServer.answer` maps through one
table into the JSON-RPC reply. `McpServer.handle` does it all; an edge that admits calls
itself (the gateway) uses `prepare`, dispatches the `Pending` call, then `answer`.

Status rules (docs/protocol.md §1.2, §2, §6.2; table `jsonrpc.HTTP_STATUS`):

* invalid JSON → 400 -32700, batch / not a request object / bad id → 400 -32600 (``id: null``);
* notifications and client responses → 202, empty body;
* unsupported ``MCP-Protocol-Version`` → 400: -32022 with ``data.supported``/``requested``
  when the body carries a modern ``_meta`` envelope, else -32600 (a non-modern error, so
  dual-era clients fall back to ``initialize``; §6.4);
* legacy errors travel with 200; modern -32602/-32020/-32021/-32022 → 400, -32601 → 404;
* dispatch outcomes (`answer`): `Answer` → the body spliced (an error body gets its status
  from the table); `Refused` → the limit's JSON-RPC refusal (429 ``rate_limit_exceeded``,
  503 ``server_saturated`` or ``limits_unavailable``, with ``Retry-After``); `Unavailable`
  → 503 -32603 with ``Retry-After: 1``; `TimedOut` → 200 -32603 "the tool call timed out"
  (a JSON-RPC answer the client session can match to its request; proxies would turn a
  504 into an opaque failure); `TooLarge` → 503 JSON-RPC refusal
  ``data.error = "response_too_large"`` (`refusals.refusal_body`, with the request id;
  docs/tool-contract.md §2.4).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from pwc_mcp_core.errors import ProtocolError, ToolError
from pwc_mcp_core.mcp_server.legacy_era import (
    initialize_bodies,
    initialize_version,
    legacy_static_bodies,
    set_level,
)
from pwc_mcp_core.mcp_server.modern_era import (
    LEGACY_ONLY_METHODS,
    discover_body,
    modern_result,
    modern_static_bodies,
)
from pwc_mcp_core.protocol.eras import (
    NOT_JSON,
    PROTOCOL_HEADER,
    UNPARSED,
    Classification,
    _Marker,
    check_modern_request,
    classify,
    is_semantic_search,
    lower_headers,
    parse_body,
    route,
)
from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue
from pwc_mcp_core.protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    Era,
    encode_id,
    error_response,
    has_result_object,
    http_status,
    insert_into_result,
    result_body,
    splice_id,
)
from pwc_mcp_core.protocol.refusals import REFUSALS, refusal_body
from pwc_mcp_core.protocol.versions import (
    LATEST_LEGACY_VERSION,
    MODERN_VERSIONS,
    PROTOCOL_VERSION_META_KEY,
    RESOURCE_READ_TTL_MS,
    SUPPORTED_VERSIONS,
)
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.runtime.dispatch import (
    Answer,
    Deferred,
    Dispatcher,
    Outcome,
    Refused,
    TimedOut,
    Unavailable,
    refusal_of,
)
from pwc_mcp_core.tools import completion, prompts
from pwc_mcp_core.tools.apps import TOOL_VIEWS, view_contents
from pwc_mcp_core.tools.data_source import DataSource
from pwc_mcp_core.tools.instructions import server_instructions

__all__ = ["Classification", "McpServer", "Pending", "Reply", "classify"]

logger = logging.getLogger(__name__)

_JSON: Final = {"Content-Type": "application/json"}
_LIST_METHODS: Final = frozenset({"tools/list", "resources/list", "resources/templates/list", "prompts/list"})
_EXECUTED: Final = frozenset({"tools/call", "resources/read"})
_DYNAMIC: Final[dict[str, Callable[[JsonObject], JsonObject]]] = {
    "prompts/get": prompts.get_prompt,
}
COMPLETION_DEADLINE_S: Final = 5.0
"""A completion is a typing hint: a slower catalog answers no values rather than hold the client."""
_RESULT_TYPE: Final = b'"resultType":"complete"'


@dataclass(frozen=True, slots=True)
class Reply:
    """An HTTP-shaped answer: ``status``, ``body`` (``None`` for 202) and extra ``headers``."""

    status: int
    body: bytes | None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Pending:
    """A request `McpServer.prepare` turned into a `Call` for the dispatcher; ``id_json`` is its id."""

    call: Call
    id_json: bytes


class McpServer:
    """Dispatch one JSON-RPC message per call, for both protocol eras.

    Args:
        settings: `CoreSettings` (call deadline, response bound).
        dispatcher: the `Dispatcher` running ``tools/call``/``resources/read`` (and the
            catalog look-ups of ``completion/complete``).
        tools: the ``tools`` list of the ``tools/list`` result; default
            `registry.tool_list_result()` (imported lazily).
    """

    def __init__(self, settings: CoreSettings, dispatcher: Dispatcher, *,
                 tools: Sequence[Mapping[str, JsonValue]] | None = None) -> None:
        if tools is None:
            from pwc_mcp_core.tools import (
                registry,  # lazy: the catalogue builds 21 schemas from the pwc parser
            )

            tools_result = registry.tool_list_result()
        else:
            tools_result = {"tools": [dict(t) for t in tools]}
        self._settings = settings
        self._dispatcher = dispatcher
        self.tool_names: frozenset[str] = frozenset(str(t["name"]) for t in tools_result["tools"])
        self._initialize = initialize_bodies()

        self._static: dict[str, dict[str, bytes]] = {
            "legacy": legacy_static_bodies(tools_result),
            "modern": modern_static_bodies(tools_result),
        }
        self._views = _view_bodies()
        self.data_source: DataSource | None = None

    def set_data_source(self, source: DataSource | None) -> None:
        """Show ``source`` (what data the catalog serves) in the instructions of ``initialize`` and
        ``server/discover``; None (provenance unknown) leaves them without a data line."""
        if source == self.data_source:
            return
        instructions = server_instructions(source)
        self._initialize = initialize_bodies(instructions)
        self._static["modern"] = {**self._static["modern"], "server/discover": discover_body(instructions)}
        self.data_source = source

    def classify(self, body: bytes, headers: Mapping[str, str]) -> Classification:
        """`eras.classify` with this server's tool names; never raises.

        A classification bug must not turn bad input into a 500: the request is then
        treated as an unknown, non-semantic one and `handle` answers it properly.
        """
        try:
            info = classify(body, headers, tool_names=self.tool_names)
            if info.is_semantic_search and not self.is_semantic_search(info.tool, _arguments(info.message)):
                info = dataclasses.replace(info, is_semantic_search=False)
            return info
        except Exception as exc:  # noqa: BLE001 - defence in depth, logged content-free
            logger.error("classify failed type=%s", type(exc).__name__)
            return Classification(method=None, tool=None, is_semantic_search=False, era="invalid",
                                  protocol_label="unknown")

    def is_semantic_search(self, tool: str | None, arguments: object) -> bool:
        """Whether a call counts against the semantic-search limit: `eras.is_semantic_search`, and
        the arguments pass the tool's validation (a call validation refuses runs no search, so it
        must not spend the budget: ``mode: null``, ``limit: 2**64``, a bad date)."""
        if not is_semantic_search(tool, arguments):
            return False
        from pwc_mcp_core.tools.registry import get_tool  # lazy, as the catalogue above
        from pwc_mcp_core.tools.validation import validate_arguments

        spec = get_tool(tool)
        if spec is None:
            return True
        try:
            validate_arguments(spec, arguments)
        except ToolError:
            return False
        return True

    async def handle(self, body: bytes, headers: Mapping[str, str], *, parsed: JsonValue | _Marker = UNPARSED,
                     admission: Deferred | None = None) -> Reply:
        """Answer one POSTed JSON-RPC message: `prepare`, dispatch, `answer`. Never raises.

        Args:
            body: the raw request body.
            headers: request headers; aiohttp's case-insensitive mapping or a plain dict.
            parsed: ``body`` already parsed (`Classification.message`), so it is not
                parsed twice; `UNPARSED` (default) parses it here.
            admission: handed to the dispatcher with a dispatched call (`Dispatcher.dispatch`).
        """
        prepared = await self.prepare(body, headers, parsed=parsed)
        if isinstance(prepared, Reply):
            return prepared
        try:
            outcome = await self._dispatcher.dispatch(prepared.call, admission)
        except Exception as exc:  # noqa: BLE001 - dispatchers never raise by contract; never leak detail
            logger.error("dispatcher failed kind=%s error=%s", prepared.call.kind, type(exc).__name__)
            return _error(prepared.call.era, prepared.id_json, INTERNAL_ERROR, "Internal error")
        return self.answer(prepared, outcome)

    async def prepare(self, body: bytes, headers: Mapping[str, str], *, parsed: JsonValue | _Marker = UNPARSED) -> Reply | Pending:
        """Answer everything that needs no dispatcher, or return the `Pending` call. Never raises.

        Arguments as `handle`.
        """
        headers = lower_headers(headers)
        version = headers.get(PROTOCOL_HEADER)
        era: Era = route(version) or "legacy"
        message = parse_body(body) if parsed is UNPARSED else parsed
        if message is NOT_JSON:
            return _error(era, b"null", PARSE_ERROR, "Parse error: the body is not valid JSON")
        if isinstance(message, list):
            return _error(era, b"null", INVALID_REQUEST, "Invalid Request: batch requests are not supported")
        if not isinstance(message, dict):
            return _error(era, b"null", INVALID_REQUEST, "Invalid Request: expected a JSON-RPC object")
        request_id = message.get("id")
        has_valid_id = type(request_id) is str or type(request_id) is int
        id_json = encode_id(request_id) if has_valid_id and isinstance(request_id, (str, int)) else b"null"
        method = message.get("method")
        if message.get("jsonrpc") != "2.0":
            return _error(era, id_json, INVALID_REQUEST, "Invalid Request: 'jsonrpc' must be \"2.0\"")
        if method is None and "id" in message and ("result" in message or "error" in message):
            return Reply(202, None)  # a client's response: nothing to answer
        if not isinstance(method, str):
            return _error(era, id_json, INVALID_REQUEST, "Invalid Request: 'method' must be a string")
        if "id" not in message:
            return Reply(202, None)  # notification
        if not has_valid_id:
            return _error(era, b"null", INVALID_REQUEST, "Invalid Request: 'id' must be a string or an integer")
        params = message.get("params")
        if params is None:
            params = {}
        try:
            if not isinstance(params, dict):
                raise ProtocolError(INVALID_PARAMS, "Invalid params: 'params' must be an object")
            if route(version) is None:
                return _unsupported_version(params, version or "", id_json)
            if era == "modern":
                check_modern_request(message, headers)
            return await self._route(era, method, params, id_json, version or LATEST_LEGACY_VERSION)
        except ProtocolError as exc:
            return _error(era, id_json, exc.code, exc.message, exc.data)
        except Exception as exc:  # noqa: BLE001 - a handler bug still answers the request, content-free
            # Every params field is type-checked before any lookup (tests/core/mcp_server/test_server_params.py);
            # this only keeps a future slip from becoming an HTTP 500.
            logger.error("mcp handler failure type=%s", type(exc).__name__)
            return _error(era, id_json, INTERNAL_ERROR, "Internal error: the server failed to handle this request")

    async def _route(self, era: Era, method: str, params: JsonObject, id_json: bytes,
                     protocol: str) -> Reply | Pending:
        static = self._static[era].get(method)
        if static is not None:
            if method in _LIST_METHODS and params.get("cursor") is not None:
                raise ProtocolError(INVALID_PARAMS, "Invalid cursor: every list fits one page")
            return Reply(200, splice_id(id_json, static), _JSON)
        if method == "resources/read":
            view = self._views[era].get(uri) if isinstance(uri := params.get("uri"), str) else None
            if view is not None:  # an MCP Apps page: static, answered here without a worker
                return Reply(200, splice_id(id_json, view), _JSON)
        if method in _EXECUTED:
            return Pending(self._call(era, method, params, protocol), id_json)
        if era == "legacy":
            if method == "initialize":
                return Reply(200, splice_id(id_json, self._initialize[initialize_version(params)]), _JSON)
            if method == "logging/setLevel":
                return Reply(200, splice_id(id_json, result_body(set_level(params))), _JSON)
        if method == "completion/complete":
            result = await self._complete(params, era, protocol)
            if era == "modern":
                result = modern_result(result)
            return Reply(200, splice_id(id_json, result_body(result)), _JSON)
        handler = _DYNAMIC.get(method)
        if handler is None:
            message = "Method not found" if method not in LEGACY_ONLY_METHODS else \
                "Method not found: removed in protocol version 2026-07-28"
            raise ProtocolError(METHOD_NOT_FOUND, message, method)
        result = handler(params)
        if era == "modern":
            result = modern_result(result)
        return Reply(200, splice_id(id_json, result_body(result)), _JSON)

    async def _complete(self, params: JsonObject, era: Era, protocol: str) -> Mapping[str, object]:
        """``completion/complete``: `completion.target` here, the catalog look-up on the dispatcher.

        The dispatcher runs it where tool calls run (a thread, or a worker in Redis mode), so
        the event loop never waits on the catalog. Any outcome but an answer is no values.
        """
        vocabulary, typed = completion.target(params)  # ProtocolError for a malformed request
        if vocabulary is None:
            return {"completion": dict(completion.EMPTY)}
        fixed = completion.fixed_completion(vocabulary, typed)
        if fixed is not None:
            return {"completion": fixed}
        deadline = time.time() + min(self._settings.call_deadline_s, COMPLETION_DEADLINE_S)
        outcome = await self._dispatcher.dispatch(  # admitted as a plain request, no lease
            Call("completion/complete", vocabulary, {"value": typed}, era, protocol, deadline))
        if not isinstance(outcome, Answer):
            return {"completion": dict(completion.EMPTY)}
        try:
            found = json.loads(outcome.body)["result"]["completion"]
        except (ValueError, KeyError, TypeError) as exc:  # a hint, never an error page
            logger.warning("completion failed type=%s", type(exc).__name__)
            return {"completion": dict(completion.EMPTY)}
        if not isinstance(found, dict) or not isinstance(found.get("values"), list):
            return {"completion": dict(completion.EMPTY)}
        return {"completion": found}

    def tool_call(self, name: str, arguments: JsonObject, *, protocol: str = LATEST_LEGACY_VERSION) -> Call:
        """The legacy-era ``tools/call`` of ``name`` with ``arguments`` (REST), deadline from now.

        Raises:
            ProtocolError: ``name`` is not a served tool.
        """
        return self._call("legacy", "tools/call", {"name": name, "arguments": arguments}, protocol)

    def _call(self, era: Era, method: str, params: JsonObject, protocol: str) -> Call:
        deadline = time.time() + self._settings.call_deadline_s
        if method == "resources/read":
            uri = params.get("uri")
            if not isinstance(uri, str):
                raise ProtocolError(INVALID_PARAMS, "resources/read requires a string 'uri'")
            return Call("resources/read", uri, {}, era, protocol, deadline)
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str):
            raise ProtocolError(INVALID_PARAMS, "tools/call requires a string 'name'")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ProtocolError(INVALID_PARAMS, "tools/call 'arguments' must be an object")
        if name not in self.tool_names:
            raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}")
        return Call("tools/call", name, arguments, era, protocol, deadline)

    def answer(self, pending: Pending, outcome: Outcome) -> Reply:
        """The JSON-RPC reply to a dispatched call: the one outcome → reply table (module docstring)."""
        id_json, era = pending.id_json, pending.call.era
        if isinstance(outcome, Answer):
            body = outcome.body
            if has_result_object(body):
                if era == "modern" and b'"resultType"' not in body:
                    body = insert_into_result(body, _RESULT_TYPE)
                return Reply(200, splice_id(id_json, body), _JSON)
            return Reply(_error_status(era, body), splice_id(id_json, body), _JSON)
        if isinstance(outcome, Refused):
            code, retry = refusal_of(outcome.decision)
            return Reply(REFUSALS[code].status, refusal_body(code, id_json=id_json, retry_after_s=retry,
                                                             limit_bytes=self._settings.max_body_bytes,
                                                             limit=outcome.decision.kind),
                         {**_JSON, "Retry-After": str(retry)})
        if isinstance(outcome, Unavailable):
            reply = _error(era, id_json, INTERNAL_ERROR, "The tool service is temporarily unavailable; retry shortly")
            return Reply(503, reply.body, {**_JSON, "Retry-After": "1"})
        if isinstance(outcome, TimedOut):
            return _error(era, id_json, INTERNAL_ERROR, "the tool call timed out")
        body = refusal_body(  # TooLarge
            "response_too_large", id_json=id_json, limit_bytes=self._settings.max_body_bytes)
        return Reply(REFUSALS["response_too_large"].status, body, _JSON)


def _view_bodies() -> dict[str, dict[str, bytes]]:
    """Era → ``ui://`` URI → the serialized ``resources/read`` result of that MCP Apps view."""
    bodies: dict[str, dict[str, bytes]] = {"legacy": {}, "modern": {}}
    for uri in set(TOOL_VIEWS.values()):
        contents = view_contents(uri)
        assert contents is not None  # every TOOL_VIEWS URI names a shipped page
        bodies["legacy"][uri] = result_body(contents)
        bodies["modern"][uri] = result_body(modern_result(contents, ttl_ms=RESOURCE_READ_TTL_MS))
    return bodies


def _arguments(message: object) -> object:
    """``params.arguments`` of a parsed request (None when absent or not an object's member)."""
    params = message.get("params") if isinstance(message, dict) else None
    return params.get("arguments") if isinstance(params, dict) else None


def _error(era: Era, id_json: bytes, code: int, message: str, data: object = None) -> Reply:
    return Reply(http_status(era, code), error_response(id_json, code, message, data), _JSON)


def _error_status(era: Era, body: bytes) -> int:
    """HTTP status of an executor error body (small, so parsing it is cheap)."""
    try:
        code = json.loads(body)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return 200
    return http_status(era, code) if type(code) is int else 200


def _unsupported_version(params: JsonObject, version: str, id_json: bytes) -> Reply:
    """400 for an unknown ``MCP-Protocol-Version`` (docs/protocol.md §1.5, §6.2, §6.4)."""
    meta = params.get("_meta")
    if isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta:
        # The same list server/discover advertises (the conformance suite checks they agree).
        data = {"supported": list(MODERN_VERSIONS), "requested": version}
        return _error("modern", id_json, UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data)
    message = "Bad Request: unsupported MCP-Protocol-Version; supported: " + ", ".join(SUPPORTED_VERSIONS)
    return _error("legacy", id_json, INVALID_REQUEST, message)

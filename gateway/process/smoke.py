"""`pwc-mcp smoke URL`: the deployment smoke test (seed "Release": health, /mcp, continuation).

Checks, in order, printing one line per step and stopping at the first failure:

1. ``GET /health`` answers 200 with ``status: ok`` (polled for ``--wait`` seconds,
   because a fresh gateway reports not-ready until its first catalog probe);
2. ``POST /mcp`` ``initialize`` negotiates a protocol version;
3. ``tools/list`` returns every tool;
4. one tool call (``list_conferences``) succeeds;
5. the ``read_paper`` continuation contract: a read that returns a cursor is
   continued to the end; every step must advance and the last must not be truncated.

``URL`` is the server's base URL (``https://mcp.example.org``) or its ``/mcp``
endpoint. Exit status: 0 all passed, 1 a check failed, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO

import httpx

from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue
from pwc_mcp_core.tools.definitions import TOOL_DEFS

__all__ = ["main"]

_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
_DEFAULT_PAPERS = ("2412.19437", "2101.03961", "1706.03762")
_EXPECTED_TOOLS = frozenset(tool.name for tool in TOOL_DEFS)  # this release's tools
_MAX_CHUNKS = 200


class SmokeFailure(Exception):
    """A check failed; the message says which and why."""


def _object(value: JsonValue) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _list(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []


def _text(value: JsonValue) -> str:
    return value if isinstance(value, str) else ""


class _Session:
    def __init__(self, base_url: str, timeout_s: float) -> None:
        self.base_url = base_url
        self._http = httpx.Client(timeout=timeout_s, follow_redirects=False)
        self._ids = itertools.count(1)

    def close(self) -> None:
        self._http.close()

    def get(self, path: str) -> httpx.Response:
        try:
            return self._http.get(f"{self.base_url}{path}")
        except httpx.HTTPError as exc:
            raise SmokeFailure(f"GET {path} failed: {type(exc).__name__}: {exc}") from None

    def rpc(self, method: str, params: JsonObject | None = None) -> JsonObject:
        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params or {}}
        headers = dict(_HEADERS)
        if method != "initialize":
            headers["MCP-Protocol-Version"] = "2025-11-25"
        try:
            response = self._http.post(f"{self.base_url}/mcp", json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise SmokeFailure(f"POST /mcp {method} failed: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            raise SmokeFailure(f"POST /mcp {method} answered HTTP {response.status_code}: {response.text[:200]}")
        try:
            message: JsonValue = response.json()
        except ValueError:
            raise SmokeFailure(f"POST /mcp {method} did not answer JSON") from None
        if not isinstance(message, dict):
            raise SmokeFailure(f"POST /mcp {method} did not answer a JSON object")
        if "error" in message:
            raise SmokeFailure(f"{method} returned JSON-RPC error {message['error']}")
        return _object(message.get("result"))

    def call_tool(self, name: str, arguments: JsonObject) -> JsonObject:
        result = self.rpc("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            text = " ".join(_text(_object(block).get("text")) for block in _list(result.get("content")))
            raise SmokeFailure(f"{name} returned an error result: {text[:300]}")
        return _object(result.get("structuredContent"))


def _check_health(session: _Session, wait_s: float) -> str:
    deadline = time.monotonic() + wait_s
    while True:
        response = session.get("/health")
        try:
            status = _object(response.json()).get("status")
        except ValueError:
            status = None
        if response.status_code == 200 and status == "ok":
            return "ready"
        if time.monotonic() >= deadline:
            raise SmokeFailure(f"/health answered HTTP {response.status_code}: {response.text[:200]}")
        time.sleep(1)


def _check_initialize(session: _Session) -> str:
    result = session.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                        "clientInfo": {"name": "pwc-mcp-smoke", "version": "1"}})
    version = result.get("protocolVersion")
    if not version:
        raise SmokeFailure("initialize returned no protocolVersion")
    return f"protocol {version}, server {_object(result.get('serverInfo')).get('version', '?')}"


def _check_tools(session: _Session) -> str:
    tools = _list(session.rpc("tools/list").get("tools"))
    names = {name for tool in tools if isinstance(name := _object(tool).get("name"), str)}
    if names != _EXPECTED_TOOLS:
        missing, extra = sorted(_EXPECTED_TOOLS - names), sorted(names - _EXPECTED_TOOLS)
        raise SmokeFailure(f"tools/list returned {len(tools)} tools, expected {len(_EXPECTED_TOOLS)}"
                           + (f"; missing {', '.join(missing)}" if missing else "")
                           + (f"; unexpected {', '.join(extra)}" if extra else ""))
    return f"{len(tools)} tools"


def _check_tool_call(session: _Session) -> str:
    data = session.call_tool("list_conferences", {})
    if data.get("schema_version") != "v1":
        raise SmokeFailure("list_conferences returned no versioned structured content")
    return "list_conferences ok"


def _check_continuation(session: _Session, papers: Sequence[str]) -> str:
    reasons = []
    for paper in papers:
        try:
            first = session.call_tool("read_paper", {"paper": paper})
        except SmokeFailure as exc:  # e.g. a candidate without stored Markdown: try the next one
            reasons.append(f"{paper}: {exc}")
            continue
        if first.get("next_cursor"):
            break
        reasons.append(f"{paper}: fits one chunk")
    else:
        raise SmokeFailure(f"no paper needed a continuation cursor ({'; '.join(reasons)}); "
                           "pass --paper with a paper whose Markdown exceeds one chunk")
    total, chunk = len(_text(first.get("markdown")).encode()), first
    for count in range(2, _MAX_CHUNKS + 1):
        cursor = chunk["next_cursor"]
        chunk = session.call_tool("read_paper", {"paper": paper, "cursor": cursor})
        text = _text(chunk.get("markdown"))
        if not text:
            raise SmokeFailure(f"read_paper chunk {count} of {paper} was empty")
        total += len(text.encode())
        if not chunk.get("next_cursor"):
            if chunk.get("truncated"):
                raise SmokeFailure(f"read_paper chunk {count} of {paper} is truncated but has no cursor")
            return f"{paper}: {count} chunks, {total} bytes"
        if chunk["next_cursor"] == cursor:
            raise SmokeFailure(f"read_paper chunk {count} of {paper} did not advance")
    raise SmokeFailure(f"read_paper of {paper} did not finish within {_MAX_CHUNKS} chunks")


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None) -> int:
    """Run the smoke test; returns the exit status (0 passed, 1 failed, 2 usage)."""
    out = out or sys.stdout
    parser = argparse.ArgumentParser(
        prog="pwc-mcp smoke", description="Smoke-test a deployed pwc-mcp server.",
        epilog="The certificate is checked against certifi's CA bundle (Mozilla's); for a staging, "
               "self-signed or company one, set SSL_CERT_FILE to its CA bundle.")
    parser.add_argument("url", help="base URL of the server, e.g. https://mcp.example.org (or its /mcp endpoint)")
    parser.add_argument("--paper", action="append", help="paper to read in chunks (repeatable; first that needs "
                        "a cursor is used)")
    parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait for /health to be ready")
    parser.add_argument("--timeout", type=float, default=40.0, help="seconds per HTTP request")
    args = parser.parse_args(argv)
    base_url = args.url.rstrip("/").removesuffix("/mcp")
    if not base_url.startswith(("http://", "https://")):
        parser.error("URL must start with http:// or https://")
    session = _Session(base_url, args.timeout)
    steps: list[tuple[str, Callable[[], str]]] = [
        ("health", lambda: _check_health(session, args.wait)),
        ("initialize", lambda: _check_initialize(session)),
        ("tools/list", lambda: _check_tools(session)),
        ("tools/call", lambda: _check_tool_call(session)),
        ("read_paper continuation", lambda: _check_continuation(session, args.paper or _DEFAULT_PAPERS)),
    ]
    try:
        for name, check in steps:
            try:
                detail = check()
            except SmokeFailure as exc:
                print(f"FAIL {name}: {exc}", file=out)
                return 1
            print(f"ok   {name}: {detail}", file=out)
    finally:
        session.close()
    print("smoke test passed", file=out)
    return 0

"""Gateway test helpers: settings, fake dispatchers and a JSON-RPC poster."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import pytest

from gateway.process.settings import GatewaySettings
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import DEFAULT_MAX_BODY_BYTES, CoreSettings
from pwc_mcp_core.runtime.dispatch import Deferred, Outcome, PoolState, bounded

# Nothing listens here: the catalog probe fails fast unless a test provides a catalog.
UNREACHABLE_API = "http://127.0.0.1:9/api/v1"
TOOL_RESULT = b'{"result":{"content":[{"type":"text","text":"ok"}],"structuredContent":{"ok":true},"isError":false}}'
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


# A stand-in tool list for admission tests, so they do not depend on the full catalogue.
FAKE_TOOLS = [
    {"name": name, "title": name, "description": f"{name} <test>", "inputSchema": {"type": "object"},
     "outputSchema": {"type": "object"}}
    for name in ("search_papers", "list_tasks", "get_paper_info")
]


def make_settings(*, lease_ttl_s: float | None = None, **core: Any) -> GatewaySettings:
    """Gateway settings with a test cursor key and ``core`` overrides (e.g. ``request_limit=3``)."""
    base = CoreSettings(cursor_keys=("test-cursor-key",), api_url=UNREACHABLE_API)
    return GatewaySettings(core=dataclasses.replace(base, **core), health_fail_interval_s=0.2,
                           lease_ttl_s=lease_ttl_s)


class FakeDispatcher:
    """A `Dispatcher` answering every call with ``reply`` (bounded like every dispatcher's
    answer), or with ``outcome`` when set; when ``gate`` is set, calls wait for it first."""

    runs_admission = False

    def __init__(self, reply: bytes = TOOL_RESULT, *, blocking: bool = False, live_workers: int = 1,
                 outcome: Outcome | None = None, max_response_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.reply = reply
        self.max_response_bytes = max_response_bytes
        self.outcome = outcome
        self.calls: list[Call] = []
        self.gate = asyncio.Event()
        self.started = asyncio.Condition()
        self.live_workers = live_workers
        if not blocking:
            self.gate.set()

    def pool_state(self) -> PoolState:
        return PoolState(self.live_workers, 0, 0)

    async def dispatch(self, call: Call, admission: Deferred | None = None) -> Outcome:
        async with self.started:
            self.calls.append(call)
            self.started.notify_all()
        await self.gate.wait()
        return self.outcome if self.outcome is not None else bounded(self.reply, self.max_response_bytes)

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def wait_started(self, count: int) -> None:
        """Wait (bounded) until ``count`` calls are inside the dispatcher."""
        async with asyncio.timeout(5):
            async with self.started:
                await self.started.wait_for(lambda: len(self.calls) >= count)


def rpc(method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def tool_call(name: str = "list_tasks", arguments: dict[str, Any] | None = None) -> bytes:
    return rpc("tools/call", {"name": name, "arguments": arguments or {}})


@pytest.fixture
def fake_dispatcher() -> FakeDispatcher:
    return FakeDispatcher()

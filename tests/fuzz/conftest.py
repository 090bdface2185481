"""Fuzzing harness: one real embedded gateway per module and a keep-alive HTTP client.

Limits: requests/min and semantic searches/min are raised so the fuzzer is never
throttled, but the per-client concurrency limit stays at its default (4): the fuzz
requests are sequential, so any 429 would mean a leaked concurrency slot.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ServerProcess, start_pwc_mcp

FUZZ_ENV = {"PWC_MCP_REQUEST_LIMIT": "10000", "PWC_MCP_SEMANTIC_LIMIT": "10000",
            "PWC_MCP_CHUNK_BYTES": "1024", "PWC_MCP_CATALOG_TIMEOUT": "10", "LOG_LEVEL": "WARNING"}
BASE_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25"}
CONCURRENCY_LIMIT = 4


@pytest.fixture(scope="module")
def embedded_gateway(catalog_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """An embedded ``pwc-mcp gateway`` (no Redis) over the sample catalog, for one module."""
    logs: Path = tmp_path_factory.mktemp("fuzz")
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, **FUZZ_ENV}, log_path=logs / "gateway.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    """A keep-alive client with a hang bound of 30 s per request."""
    with httpx.Client(timeout=30.0) as client:
        yield client


def post_json(client: httpx.Client, url: str, payload: Any, headers: dict[str, str] | None = None
              ) -> tuple[httpx.Response, bytes]:
    """POST ``payload`` serialized as JSON; returns the answer and the exact bytes sent."""
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8", errors="surrogatepass")
    return client.post(url, content=body, headers={**BASE_HEADERS, **(headers or {})}), body


def tool_call(name: str, arguments: Any, request_id: Any = 1) -> dict[str, Any]:
    """A ``tools/call`` request envelope."""
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}

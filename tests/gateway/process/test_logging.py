"""Logs and metrics are content-free (docs/tool-contract.md §2.6, seed "Safety and operations")."""

from __future__ import annotations

import logging

import pytest

from gateway.process.app import create_app
from tests.gateway.conftest import (
    FAKE_TOOLS,
    JSON_HEADERS,
    FakeDispatcher,
    make_settings,
    rpc,
    tool_call,
)

SECRETS = {
    "query": "zebra-quantum-secret-query",
    "reference": "2401.99999-secret-ref",
    "xff": "198.51.100.77",
    "client": "secret-client-token",
    "name": "secret_tool_name",
    "protocol": "1999-01-01-secret",
}


async def test_nothing_a_client_sends_reaches_logs_or_metrics(aiohttp_client, caplog: pytest.LogCaptureFixture,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    client = await aiohttp_client(create_app(make_settings(), dispatcher=FakeDispatcher(), tools=FAKE_TOOLS))
    sent = [
        (tool_call("search_papers", {"query": SECRETS["query"]}), {"X-Forwarded-For": SECRETS["xff"]}),
        (tool_call("get_paper_info", {"paper": SECRETS["reference"]}), {"X-PwC-MCP-Client": SECRETS["client"]}),
        (rpc("tools/call", {"name": SECRETS["name"], "arguments": {"paper": SECRETS["reference"]}}),
         {"Mcp-Name": SECRETS["name"], "MCP-Protocol-Version": SECRETS["protocol"]}),
        (b"not json " + SECRETS["query"].encode(), {"Mcp-Name": SECRETS["name"]}),
    ]
    for body, headers in sent:
        await client.post("/mcp", data=body, headers={**JSON_HEADERS, **headers})
    metrics_text = await (await client.get("/metrics")).text()
    captured = capsys.readouterr()
    logs = "\n".join(record.getMessage() for record in caplog.records) + captured.err + captured.out
    for label, secret in SECRETS.items():
        assert secret not in logs, label
        assert secret not in metrics_text, label
    request_lines = [r.getMessage() for r in caplog.records if r.name == "pwc_mcp.requests"]
    assert len(request_lines) == len(sent)
    assert "tool=search_papers" in request_lines[0] and "protocol=legacy" in request_lines[0]
    assert "tool=unknown" in request_lines[2] and "protocol=unknown" in request_lines[2]
    for line in request_lines:
        assert line.startswith("mcp_request tool=")
        for field in ("status=", "latency_ms=", "bytes=", "protocol=", "version="):
            assert field in line

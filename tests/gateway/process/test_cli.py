"""The ``pwc-mcp`` launcher as a real subprocess: config errors, gunicorn, demo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from pwc_mcp_core.tools.definitions import TOOL_DEFS
from tests.helpers import free_port, stop_process, wait_http

REPO = Path(__file__).resolve().parents[3]
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PWC_", "PROMETHEUS_"))}
    env.update({"PYTHONUNBUFFERED": "1", "PWC_MCP_HOST": "127.0.0.1"}, **extra)
    return env


def launch(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gateway", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen]]:
    started: list[subprocess.Popen] = []
    yield started
    for proc in started:
        stop_process(proc)


@pytest.mark.parametrize(("command", "env", "needle"), [
    pytest.param(["gateway"], {}, "PWC_MCP_CURSOR_KEY_CURRENT", id="gateway-missing-cursor-key"),
    pytest.param(["serve"], {}, "PWC_MCP_CURSOR_KEY_CURRENT", id="serve-missing-cursor-key"),
    pytest.param(["gateway"], {"PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32, "PWC_MCP_REQUEST_LIMIT": "0"},
                 "PWC_MCP_REQUEST_LIMIT", id="bad-limit"),
    pytest.param(["gateway"], {"PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32, "PWC_MCP_ALLOWED_ORIGINS": "*"},
                 "wildcard", id="wildcard-origin"),
    pytest.param(["gateway", "--processes", "2"], {"PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32, "PWC_MCP_GATEWAY_TIMEOUT": "1"},
                 "PWC_MCP_GATEWAY_TIMEOUT must be an integer between 2 and 3600", id="bad-process-timeout"),
])
def test_a_configuration_error_stops_startup_with_one_clear_line(command: list[str], env: dict[str, str],
                                                                  needle: str) -> None:
    result = subprocess.run([sys.executable, "-m", "gateway", *command], cwd=REPO, env=base_env(**env),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", [["serve"], ["demo"], ["gateway", "--processes", "2"]],
                         ids=["serve", "demo", "gateway-2"])
def test_a_busy_port_is_one_line_and_exit_2(command: list[str], redis_url: str) -> None:
    import socket

    with socket.socket() as busy:  # e.g. Gradio on 7860
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        for extra in ({}, {"PWC_MCP_REDIS_URL": redis_url}) if command == ["serve"] else ({},):
            env = base_env(PORT=str(port), PWC_MCP_CURSOR_KEY_CURRENT="k" * 32, **extra)
            result = subprocess.run([sys.executable, "-m", "gateway", *command], cwd=REPO, env=env,
                                    capture_output=True, text=True, timeout=60, check=False)
            assert result.returncode == 2, result.stderr
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1 and f"127.0.0.1:{port}" in lines[0] and "in use" in lines[0], lines


def test_smoke_and_unknown_commands_do_not_trace() -> None:
    result = subprocess.run([sys.executable, "-m", "gateway", "nope"], cwd=REPO, env=base_env(),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr


@pytest.mark.slow  # starts a whole deployment (several processes)
def test_gunicorn_with_two_processes_serves_mcp_and_merged_metrics(processes: list[subprocess.Popen]) -> None:
    port = free_port()
    proc = launch(["gateway", "--processes", "2"], base_env(PORT=str(port), PWC_MCP_CURSOR_KEY_CURRENT="k" * 32,
                                                           PWC_API_URL="http://127.0.0.1:9/api/v1"))
    processes.append(proc)
    base = f"http://127.0.0.1:{port}"
    wait_http(f"{base}/health", proc=proc, timeout_s=60, ok_statuses=(200, 503))
    with httpx.Client(base_url=base, timeout=10) as client:
        for i in range(6):
            response = client.post("/mcp", content=json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}),
                                   headers={**HEADERS, "X-PwC-MCP-Client": "gunicorn-test"})
            assert response.status_code == 200
            assert response.json() == {"jsonrpc": "2.0", "id": i, "result": {}}
        tools = client.post("/mcp", content=b'{"jsonrpc":"2.0","id":9,"method":"tools/list"}', headers=HEADERS)
        assert len(tools.json()["result"]["tools"]) == len(TOOL_DEFS)
        secret_headers = {**HEADERS, "X-Forwarded-For": "198.51.100.99", "X-PwC-MCP-Client": "secret-client-x",
                          "Mcp-Name": "secret-name-x", "MCP-Protocol-Version": "secret-version-x"}
        client.post("/mcp", headers=secret_headers, content=json.dumps({
            "jsonrpc": "2.0", "id": 10, "method": "tools/call",
            "params": {"name": "search_papers", "arguments": {"query": "secret-query-x"}}}))
        text = client.get("/metrics").text
    stop_process(proc)
    stderr = proc.stderr.read()
    assert "mcp_request tool=" in stderr
    for secret in ("198.51.100.99", "secret-client-x", "secret-name-x", "secret-version-x", "secret-query-x"):
        assert secret not in stderr and secret not in text
    counted = [line for line in text.splitlines()
               if line.startswith("pwc_mcp_requests_total{") and 'status="200"' in line]
    assert sum(float(line.rsplit(" ", 1)[1]) for line in counted) == 7  # summed over both processes


@pytest.mark.slow  # starts a whole deployment (several processes)
@pytest.mark.timeout(180)
def test_demo_serves_the_sample_catalog_offline(processes: list[subprocess.Popen]) -> None:
    port, catalog_port = free_port(), free_port()
    proc = launch(["demo"], base_env(PORT=str(port), PWC_DEMO_CATALOG_PORT=str(catalog_port)))
    processes.append(proc)
    base = f"http://127.0.0.1:{port}"
    wait_http(f"{base}/health", proc=proc, timeout_s=120)
    # The quick start's third command: the catalog answers where the banner says.
    api = f"http://127.0.0.1:{catalog_port}/api/v1"
    assert httpx.get(f"{api}/tasks/?page_size=1", timeout=10).status_code == 200
    with httpx.Client(base_url=base, timeout=30) as client:
        assert client.get("/health").json()["checks"]["catalog"] == "ok"
        for _ in range(100):  # the provenance is fetched just after the first successful probe
            if (data := client.get("/.well-known/mcp").json()["data"])["provenance"] == "recorded":
                break
            time.sleep(0.05)
        assert data["kind"] == "sample"  # the demo says it serves the bundled sample, not the archive
        tools = client.post("/mcp", content=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', headers=HEADERS)
        assert len(tools.json()["result"]["tools"]) == len(TOOL_DEFS)
        call = client.post("/mcp", headers=HEADERS, content=json.dumps({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "list_tasks", "arguments": {"limit": 2}}}))
        assert call.status_code == 200
        assert "result" in call.json()
        search = client.post("/mcp", headers={**HEADERS, "X-PwC-MCP-Client": "demo-secret-client"},
                             content=json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
                                 "name": "search_papers", "arguments": {"query": "demo-secret-query"}}}))
        assert search.status_code == 200
    stop_process(proc)
    stderr = proc.stderr.read()
    assert "mcp_request tool=search_papers status=200" in stderr
    assert "demo-secret-query" not in stderr and "demo-secret-client" not in stderr
    assert "ephemeral" in stderr and "will not survive a restart" in stderr
    assert f"pwc-mcp demo: MCP server at http://127.0.0.1:{port}/mcp" in stderr
    assert f"sample catalog API at {api}; for the pwc CLI: export PWC_API_URL={api}" in stderr
    assert "Traceback" not in stderr


@pytest.mark.slow  # starts a whole deployment (several processes)
@pytest.mark.timeout(180)
def test_serve_with_redis_runs_a_gateway_and_workers(processes: list[subprocess.Popen], redis_url: str,
                                                     catalog_url: str) -> None:
    port = free_port()
    proc = launch(["serve", "--workers", "1"], base_env(PORT=str(port), PWC_MCP_CURSOR_KEY_CURRENT="k" * 32,
                                                       PWC_MCP_REDIS_URL=redis_url, PWC_API_URL=catalog_url))
    processes.append(proc)
    base = f"http://127.0.0.1:{port}"
    wait_http(f"{base}/health", proc=proc, timeout_s=120)
    with httpx.Client(base_url=base, timeout=30) as client:
        assert client.get("/health").json()["checks"] == {"redis": "ok", "workers": 1, "catalog": "ok"}
        call = client.post("/mcp", headers=HEADERS, content=json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "list_tasks", "arguments": {"limit": 1}}}))
        assert call.status_code == 200
        assert call.json()["result"].get("isError") is not True
    proc.send_signal(15)
    assert proc.wait(timeout=60) == 0

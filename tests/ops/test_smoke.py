"""`pwc-mcp smoke` passes against a running stack and fails clearly against a broken one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import PWC_MCP_BIN, start_pwc_mcp
from tests.helpers import free_port

pytestmark = pytest.mark.slow


def _smoke(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PWC_MCP_BIN), "smoke", *args], capture_output=True, text=True, timeout=120)


def test_smoke_passes_against_a_running_stack(catalog_url: str, tmp_path: Path) -> None:
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url}, log_path=tmp_path / "gateway.log")
    try:
        result = _smoke(server.base_url, "--wait", "30")
    finally:
        server.stop()
    assert result.returncode == 0, result.stdout + result.stderr
    for step in ("health", "initialize", "tools/list", "tools/call", "read_paper continuation"):
        assert f"ok   {step}" in result.stdout
    assert "smoke test passed" in result.stdout


def test_smoke_fails_clearly_on_a_wrong_port() -> None:
    result = _smoke(f"http://127.0.0.1:{free_port()}", "--wait", "0")
    assert result.returncode == 1
    assert result.stdout.startswith("FAIL health: GET /health failed: ConnectError")
    assert "Traceback" not in result.stdout + result.stderr


def test_smoke_fails_clearly_when_the_catalog_is_down(tmp_path: Path) -> None:
    dead_catalog = f"http://127.0.0.1:{free_port()}/api/v1"
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": dead_catalog}, log_path=tmp_path / "gateway.log")
    try:
        result = _smoke(server.base_url, "--wait", "3")
    finally:
        server.stop()
    assert result.returncode == 1
    assert result.stdout.startswith("FAIL health: /health answered HTTP 503")
    assert "Traceback" not in result.stdout + result.stderr


def test_smoke_refuses_a_url_without_scheme() -> None:
    result = _smoke("mcp.example.org")
    assert result.returncode == 2
    assert "URL must start with http://" in result.stderr

"""The HTTP+SSE transport with the TypeScript SDK's ``SSEClientTransport`` (v1 and v2) and the Inspector CLI.

Both are installed from npm (with Node 22, which the Inspector needs) into a cache directory
on first use. The cluster: ``pwc-mcp gateway --processes 2`` on Redis and a separately
started ``pwc-mcp worker``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

from pwc_mcp_core.tools.definitions import TOOL_DEFS
from tests.conftest import ServerProcess, start_pwc_mcp
from tests.integration.conftest import Cluster
from tests.integration.test_sse_clients import SSE_ENV, routed_total, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

TOOLBOX = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pwc-mcp-tests" / "node-clients"
# The TypeScript SDK v1 (sdk) and v2 (client), and the Inspector.
PACKAGES = ("node@22", "@modelcontextprotocol/sdk@1.32.2", "@modelcontextprotocol/client@2.4.0",
            "@modelcontextprotocol/inspector@0.22.0")
SCRIPT = Path(__file__).parent / "node" / "sse_sessions.mjs"
SESSIONS = 16


@pytest.fixture(scope="session")
def node_toolbox() -> Path:
    """The toolbox directory with Node 22, the TS SDK and the Inspector (installed once)."""
    bin_dir = TOOLBOX / "node_modules" / ".bin"
    TOOLBOX.mkdir(parents=True, exist_ok=True)
    # Parallel workers (and other checkouts) share the directory: one installs, the rest wait.
    with FileLock(TOOLBOX.parent / "node-clients.lock", timeout=600):
        if not ((bin_dir / "node").exists() and (bin_dir / "mcp-inspector").exists()
                and all((TOOLBOX / "node_modules" / "@modelcontextprotocol" / name).is_dir()
                        for name in ("sdk", "client"))):
            npm = shutil.which("npm")
            if npm is None:
                pytest.fail("npm is required (.ci/run installs it)")
            subprocess.run([npm, "install", "--prefix", str(TOOLBOX), "--no-audit", "--no-fund", "--silent",
                            *PACKAGES], check=True, timeout=400)
        shutil.copy(SCRIPT, TOOLBOX / SCRIPT.name)  # ESM resolves packages beside the script
    return TOOLBOX


def node_env(toolbox: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{toolbox / 'node_modules' / '.bin'}{os.pathsep}{os.environ['PATH']}"}


def run_ts_sessions(toolbox: Path, url: str, sessions: int, flavour: str, **env: str) -> dict:
    result = subprocess.run([str(toolbox / "node_modules" / ".bin" / "node"), str(toolbox / SCRIPT.name), url,
                             str(sessions), flavour, str(len(TOOL_DEFS))], capture_output=True, text=True, timeout=120,
                            env={**node_env(toolbox), **env})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def run_inspector(toolbox: Path, url: str, *args: str) -> dict:
    result = subprocess.run([str(toolbox / "node_modules" / ".bin" / "mcp-inspector"), "--cli", url,
                             "--transport", "sse", *args], capture_output=True, text=True, timeout=120,
                            env=node_env(toolbox), cwd=toolbox)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads(result.stdout)


@pytest.fixture
def two_process_gateway(cluster_factory: Callable[..., Cluster], tmp_path: Path) -> ServerProcess:
    cluster = cluster_factory(gateways=0, workers=0, **SSE_ENV)
    cluster.add_worker()
    gateway = start_pwc_mcp("gateway", "--processes", "2", env={**cluster.env, **SSE_ENV},
                            log_path=tmp_path / "gateway2.log")
    cluster.gateways.append(gateway)
    cluster.wait_ready(gateway)
    return gateway


def test_typescript_sdk_and_inspector_over_sse_across_two_gateway_processes(
        node_toolbox: Path, two_process_gateway: ServerProcess) -> None:
    url = f"{two_process_gateway.base_url}/sse"
    for flavour in ("v1", "v2"):
        summary = run_ts_sessions(node_toolbox, url, SESSIONS, flavour)
        assert summary == {"ok": True, "sessions": SESSIONS, "server": "pwc"}, flavour

    listed = run_inspector(node_toolbox, url, "--method", "tools/list")
    assert len(listed["tools"]) == len(TOOL_DEFS)
    called = run_inspector(node_toolbox, url, "--method", "tools/call", "--tool-name", "get_task",
                           "--tool-arg", "task=image-classification")
    assert not called.get("isError") and called["structuredContent"]["schema_version"] == "v1"

    logs = two_process_gateway.log_text
    wait_until(lambda: len(re.findall(r"sse_stream status=200", logs())) >= 2 * SESSIONS + 2)
    assert routed_total(logs()) > 0, "no answer crossed between the two processes"

"""compose.yaml: the production stack comes up, passes `pwc-mcp smoke` with 2 workers, and
recovers from a Redis restart with no manual step.

podman-compose runs compose.yaml unchanged plus an override that only moves each service to
host networking on free loopback ports (no bridge network; the catalog import needs none)
and never pulls.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from scripts.podman_local import BASES, PodmanEnv
from tests.conftest import PWC_MCP_BIN
from tests.container.conftest import REPO_ROOT
from tests.helpers import free_port

pytestmark = [pytest.mark.container, pytest.mark.slow, pytest.mark.timeout(600)]

COMPOSE_BIN = Path(sys.executable).parent / "podman-compose"


@dataclass
class Stack:
    """A running compose project and how to reach it."""

    podman: PodmanEnv
    argv: list[str]
    project: str
    base_url: str

    def compose(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.argv, *args], check=False, cwd=REPO_ROOT, env=self.podman.env, capture_output=True,
                              text=True, timeout=timeout)

    def health(self) -> dict[str, Any]:
        try:
            return dict(httpx.get(f"{self.base_url}/health", timeout=5).json())
        except (httpx.HTTPError, ValueError):
            return {}

    def wait_ready(self, workers: int, timeout_s: float = 150) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        body: dict[str, Any] = {}
        while time.monotonic() < deadline:
            body = self.health()
            if body.get("status") == "ok" and body.get("checks", {}).get("workers") == workers:
                return body
            time.sleep(1)
        logs = self.podman.podman("ps", "-a", "--format", "{{.Names}} {{.Status}}", check=False).stdout
        raise AssertionError(f"stack not ready with {workers} workers: {body}\n{logs}")


def _override(redis_port: int, catalog_port: int, gateway_port: int) -> dict[str, Any]:
    redis_url = f"redis://127.0.0.1:{redis_port}/0"
    api_url = f"http://127.0.0.1:{catalog_port}/api/v1"
    app_env = {"PWC_API_URL": api_url, "PWC_MCP_REDIS_URL": redis_url}
    probe = "import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=4)"
    services: dict[str, dict[str, Any]] = {
        "redis": {"network_mode": "host",
                  "command": ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no", "--dir", "/tmp"],
                  "healthcheck": {"test": ["CMD", "redis-cli", "-p", str(redis_port), "ping"]}},
        "catalog-import": {"network_mode": "none"},
        "catalog": {"network_mode": "host",
                    "command": ["pwc-catalog", "serve", "--db", "/data/catalog.db", "--host", "127.0.0.1",
                                "--port", str(catalog_port)],
                    "healthcheck": {"test": ["CMD", "python3", "-c", probe, f"{api_url}/tasks/?page_size=1"]}},
        "gateway": {"network_mode": "host",
                    "environment": {**app_env, "PWC_MCP_HOST": "127.0.0.1", "PORT": str(gateway_port)},
                    "healthcheck": {"test": ["CMD", "python3", "-c", probe,
                                             f"http://127.0.0.1:{gateway_port}/health"]}},
        "worker": {"network_mode": "host", "environment": app_env},
    }
    for service in services.values():
        service["pull_policy"] = "never"
    return {"services": services}


@pytest.fixture
def stack(podman: PodmanEnv, image: str, tmp_path: Path) -> Iterator[Stack]:
    podman.import_base(BASES["redis"])
    gateway_port = free_port()
    override = tmp_path / "compose.test.yaml"
    override.write_text(json.dumps(_override(free_port(), free_port(), gateway_port)), encoding="utf-8")
    project = f"pwc-mcp-test-{secrets.token_hex(3)}"
    podman.env.update(PWC_MCP_CURSOR_KEY_CURRENT=secrets.token_hex(32), PWC_MCP_PORT=str(gateway_port))
    argv = [str(COMPOSE_BIN), "-p", project, "-f", str(REPO_ROOT / "compose.yaml"), "-f", str(override)]
    running = Stack(podman, argv, project, f"http://127.0.0.1:{gateway_port}")
    try:
        up = running.compose("up", "-d", "--no-build")
        assert up.returncode == 0, up.stdout[-3000:] + up.stderr[-3000:]
        yield running
    finally:
        down = running.compose("down", "-v", "-t", "40")
        assert down.returncode == 0, down.stdout[-3000:] + down.stderr[-3000:]
        for key in ("PWC_MCP_CURSOR_KEY_CURRENT", "PWC_MCP_PORT"):
            podman.env.pop(key, None)
        left = podman.podman("ps", "-aq", "--filter", f"label=io.podman.compose.project={project}").stdout
        assert not left.strip(), f"compose down left containers: {left}"


def test_compose_stack_passes_smoke_with_two_workers_and_survives_a_redis_restart(stack: Stack) -> None:
    body = stack.wait_ready(workers=2)
    assert body["checks"] == {"redis": "ok", "workers": 2, "catalog": "ok"}
    smoke = subprocess.run([str(PWC_MCP_BIN), "smoke", stack.base_url, "--wait", "60"], capture_output=True,
                           text=True, timeout=180, check=False)
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert "ok   read_paper continuation" in smoke.stdout

    # Redis restarts (empty: no persistence); gateway and workers reconnect on their own.
    restarted = stack.podman.podman("restart", f"{stack.project}_redis_1", check=False)
    assert restarted.returncode == 0, restarted.stderr
    stack.wait_ready(workers=2, timeout_s=90)
    # README's check, from inside the gateway container.
    again = stack.compose("exec", "-T", "gateway", "pwc-mcp", "smoke", stack.base_url, "--wait", "60", timeout=180)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "smoke test passed" in again.stdout


def test_catalog_import_takes_a_mounted_folder_in_the_published_layout(podman: PodmanEnv, image: str,
                                                                       tmp_path: Path) -> None:
    """README "Compose": PWC_CATALOG_DUMPS names a folder as `pwc-catalog download` leaves it
    (parquet shards, one folder per dataset), and catalog-import imports all of it."""
    from bench.gen_catalog import generate

    archive = tmp_path / "pwc-archive"
    generate(400, 200, archive, 3, fmt="parquet")
    for path in [archive, *archive.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)  # the image runs as uid 10001
    project = f"pwc-mcp-import-{secrets.token_hex(3)}"
    override = tmp_path / "compose.import.yaml"
    override.write_text(json.dumps({"services": {"catalog-import": {"network_mode": "none",
                                                                    "pull_policy": "never"}}}),
                        encoding="utf-8")
    argv = [str(COMPOSE_BIN), "-p", project, "-f", str(REPO_ROOT / "compose.yaml"), "-f", str(override)]
    env = {**podman.env, "PWC_MCP_CURSOR_KEY_CURRENT": secrets.token_hex(32), "PWC_CATALOG_DUMPS": str(archive)}

    def compose(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*argv, *args], check=False, cwd=REPO_ROOT, env=env, capture_output=True,
                              text=True, timeout=300)

    try:
        up = compose("up", "--no-build", "catalog-import")
        assert up.returncode == 0, up.stdout[-3000:] + up.stderr[-3000:]
        logs = podman.podman("logs", f"{project}_catalog-import_1", check=False)
        imported = logs.stdout + logs.stderr
        assert "papers-with-abstracts/train-00000-of-00004.parquet (papers): read" in imported, imported[-3000:]
        assert "imported " in imported and "error:" not in imported
        info = podman.podman("run", "--rm", "--network", "none", "-v", f"{project}_catalog-data:/data", image,
                             "pwc-catalog", "info", "--db", "/data/catalog.db", "--json", check=False)
        assert info.returncode == 0, info.stderr
        assert json.loads(info.stdout)["counts"]["papers"] == 400
    finally:
        down = compose("down", "-v")
        assert down.returncode == 0, down.stdout[-3000:] + down.stderr[-3000:]

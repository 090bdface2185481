"""The image: it builds, its default command passes `pwc-mcp smoke`, bad config and SIGTERM.

Build: ``Dockerfile`` on the locally made ``python:3.12-slim`` (no registry). Runs use host
networking on free loopback ports, hardened as compose.yaml runs them (no capabilities,
no-new-privileges, read-only root, tmpfs /tmp).
"""

from __future__ import annotations

import json
import secrets
import subprocess
import threading
import time

import pytest

from scripts.podman_local import PodmanEnv
from tests.conftest import PWC_MCP_BIN
from tests.container.conftest import wait_listening
from tests.fault.conftest import (  # noqa: F401
    RpcAnswer,
    call_tool,
    faulty_catalog,
    unique_search,
    wait_until,
)
from tests.fault.faulty_catalog import FaultyCatalog
from tests.helpers import free_port

pytestmark = [pytest.mark.container, pytest.mark.slow, pytest.mark.timeout(600)]

HARDENED = ("--pull=never", "--network=host", "--cap-drop=ALL", "--security-opt=no-new-privileges",
            "--read-only", "--tmpfs=/tmp")


def _run(podman: PodmanEnv, image: str, port: int, *env: str) -> str:
    name = f"pwc-mcp-test-{secrets.token_hex(4)}"
    args = ["run", "-d", "--name", name, *HARDENED, "-e", f"PORT={port}", "-e", "PWC_MCP_HOST=127.0.0.1"]
    for item in env:
        args += ["-e", item]
    podman.podman(*args, image)
    return name


def _logs(podman: PodmanEnv, name: str) -> str:
    result = podman.podman("logs", name, check=False)
    return result.stdout + result.stderr


def test_image_builds_non_root_with_a_healthcheck(podman: PodmanEnv, image: str) -> None:
    inspected = json.loads(podman.podman("image", "inspect", image).stdout)[0]
    config = inspected["Config"]
    assert config["User"] == "pwc"
    assert "/health" in " ".join(inspected["Healthcheck"]["Test"])
    assert "PWC_MCP_HOST=0.0.0.0" in config["Env"] and "PORT=7860" in config["Env"]
    assert "7860/tcp" in config["ExposedPorts"]


def test_default_command_is_the_offline_demo_and_passes_smoke(podman: PodmanEnv, image: str) -> None:
    port = free_port()
    name = _run(podman, image, port)
    try:
        wait_listening(port)
        smoke = subprocess.run([str(PWC_MCP_BIN), "smoke", f"http://127.0.0.1:{port}", "--wait", "60"],
                               capture_output=True, text=True, timeout=180, check=False)
        assert smoke.returncode == 0, smoke.stdout + smoke.stderr + _logs(podman, name)
        assert "ok   read_paper continuation" in smoke.stdout
        # No cursor key: the demo's warning, not a refusal.
        assert "WARNING using an ephemeral random cursor key" in _logs(podman, name)
        health = podman.podman("healthcheck", "run", name, check=False)
        assert health.returncode == 0, health.stdout + health.stderr
        started = time.monotonic()
        podman.podman("stop", "-t", "40", name)
        assert time.monotonic() - started < 40
        state = json.loads(podman.podman("inspect", name).stdout)[0]["State"]
        assert state["ExitCode"] == 0, _logs(podman, name)
        assert "Traceback" not in _logs(podman, name)
    finally:
        podman.podman("rm", "-f", name, check=False)


def test_serve_without_a_cursor_key_refuses_with_one_line(podman: PodmanEnv, image: str) -> None:
    result = podman.podman("run", "--rm", "--pull=never", "--network=none", "--read-only", "--tmpfs=/tmp",
                           "-e", "PWC_API_URL=http://127.0.0.1:9/api/v1", image, check=False, timeout=120)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if "level=" not in line]  # podman's own notes
    assert len(lines) == 1 and "PWC_MCP_CURSOR_KEY_CURRENT is required" in lines[0], result.stderr


def test_sigterm_drains_the_call_in_flight(podman: PodmanEnv, image: str,
                                           faulty_catalog: FaultyCatalog) -> None:
    port = free_port()
    name = _run(podman, image, port, f"PWC_API_URL={faulty_catalog.api_url}",
                f"PWC_MCP_CURSOR_KEY_CURRENT={secrets.token_hex(32)}")
    try:
        wait_listening(port)
        faulty_catalog.delay(3.0)
        answers: list[RpcAnswer] = []
        caller = threading.Thread(target=lambda: answers.append(
            call_tool(f"http://127.0.0.1:{port}/mcp", "search_papers", unique_search("container-drain"))))
        caller.start()
        wait_until(lambda: faulty_catalog.hits >= 1, timeout_s=30, what="the call reaching the catalog")
        podman.podman("kill", "--signal", "TERM", name)
        caller.join(timeout=60)
        assert answers and answers[0].status == 200 and not answers[0].is_tool_error, answers
        exit_code = podman.podman("wait", name, timeout=60).stdout.strip()
        assert exit_code == "0", _logs(podman, name)
    finally:
        podman.podman("rm", "-f", name, check=False)

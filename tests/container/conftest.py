"""Fixtures for the container tests: podman confined to a private directory, the built image.

The session's podman (`scripts/podman_local.py`) has its own configuration and storage under
a temporary directory, no registry (public ones blocked, ``--pull=never``), runc and
netavark; it is reset at the end. Containers use host networking, so all traffic stays on
loopback. Without podman and its tools the tests skip and say why; ``bash .ci/run``
installs them.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts.podman_local import BASES, PodmanEnv, missing_tools

REPO_ROOT = Path(__file__).resolve().parents[2]

IMAGE = "localhost/pwc-mcp:latest"
"""The tag compose.yaml runs, so the compose test reuses the build."""


def wait_listening(port: int, timeout_s: float = 90.0) -> None:
    """Wait until something accepts TCP connections on 127.0.0.1:``port``.

    Raises:
        RuntimeError: nothing listened within ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"nothing listened on 127.0.0.1:{port} within {timeout_s}s")


@pytest.fixture(scope="session")
def podman(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PodmanEnv]:
    """A private podman with the local ``python:3.12-slim`` base imported."""
    missing = missing_tools()
    if missing:
        pytest.skip(f"container tests need {', '.join(missing)} (bash .ci/run installs them)")
    env = PodmanEnv.create(tmp_path_factory.mktemp("podman"))
    try:
        env.import_base(BASES["python"])
        yield env
    finally:
        env.reset()


@pytest.fixture(scope="session")
def image(podman: PodmanEnv) -> str:
    """The image built from this checkout (the build itself is `test_image_builds_non_root_with_a_healthcheck`)."""
    built = podman.build(REPO_ROOT, IMAGE)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    return IMAGE

"""Fixtures for the container tests: podman confined to a private directory, the built image.

The session's podman (`scripts/podman_local.py`) has its own configuration and storage under
a temporary directory, no registry (public ones blocked, ``--pull=never``), runc and
netavark; it is reset at the end. Containers use host networking, so all traffic stays on
loopback. Without podman and its tools the tests skip and say why; ``bash .ci/run``
installs them.
"""

from __future__ import annotations

import contextlib
import io
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts.podman_local import BASES, PodmanEnv, main, missing_tools

REPO_ROOT = Path(__file__).resolve().parents[2]

IMAGE = "localhost/pwc-mcp:latest"
"""The tag compose.yaml runs, so the compose test reuses the build."""
BUILD_ARGV = ("build", "--tag", IMAGE)
"""The README's offline build command (``uv run scripts/podman_local.py build``) with its default tag
spelled out; the `image` fixture runs exactly it, in the session's private storage."""


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
    """The image built from this checkout by the documented command (`BUILD_ARGV`)."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        status = main(["--root", str(podman.root), *BUILD_ARGV])
    assert status == 0, output.getvalue()[-8000:]
    assert f"built {IMAGE}" in output.getvalue()
    return IMAGE

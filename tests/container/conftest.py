"""Fixtures for the container tests: podman confined to a private directory, the built image.

The session's podman (`scripts/podman_local.py`) has its own configuration and storage, no
registry (public ones blocked, ``--pull=never``), runc and netavark. The storage is kept
between runs under ``$XDG_CACHE_HOME/pwc-mcp/test-podman/KEY`` (default ``~/.cache``), KEY a hash
of what the image's dependency layers are made of (`STORE_INPUTS` and the base tarball's
name), so a run imports the base and installs the dependencies only when those change;
podman's layer cache still rebuilds the source layers from this checkout every time. One
run at a time holds the store (a file lock); a second concurrent run, or
``PWC_MCP_TEST_PODMAN_CACHE=0``, uses a fresh temporary store as before. A store podman
cannot read, or one the build fails in, is reset and built from scratch. Stores with
another KEY are removed. Containers use host networking, so all traffic stays on loopback.
Without podman and its tools the tests skip and say why; ``bash .ci/run`` installs them.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import filelock
import pytest

from scripts.podman_local import BASES, PodmanEnv, base_tarball_name, cache_dir, main, missing_tools

REPO_ROOT = Path(__file__).resolve().parents[2]

IMAGE = "localhost/pwc-mcp:latest"
"""The tag compose.yaml runs, so the compose test reuses the build."""
BUILD_ARGV = ("build", "--tag", IMAGE)
"""The README's offline build command (``uv run scripts/podman_local.py build``) with its default tag
spelled out; the `image` fixture runs exactly it, in the session's private storage."""
STORE_INPUTS = ("Dockerfile", "pyproject.toml", "uv.lock")
"""The checkout's files the kept store's key covers: the Dockerfile and its dependency layer's inputs."""


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


def store_key() -> str:
    """The kept store's key: a hash of `STORE_INPUTS` and the python base tarball's name (its recipe)."""
    digest = hashlib.sha256(base_tarball_name(BASES["python"]).encode())
    for name in STORE_INPUTS:
        digest.update(b"\0" + name.encode() + b"\0" + (REPO_ROOT / name).read_bytes())
    return digest.hexdigest()[:16]


def _wipe(path: Path) -> None:
    """Remove ``path``; files podman made for mapped user ids need its user namespace to go."""
    subprocess.run(["podman", "unshare", "rm", "-rf", str(path)], check=False, capture_output=True, timeout=300)
    shutil.rmtree(path, ignore_errors=True)


def _usable(env: PodmanEnv) -> bool:
    return env.podman("images", "-q", check=False, timeout=120).returncode == 0


@contextlib.contextmanager
def kept_store(tmp: Path) -> Iterator[tuple[PodmanEnv, bool]]:
    """``(env, kept)``: the kept store for this key when free (held locked), else a fresh one in ``tmp``."""
    parent = cache_dir() / "test-podman"
    if os.environ.get("PWC_MCP_TEST_PODMAN_CACHE", "1") != "0":
        parent.mkdir(parents=True, exist_ok=True)
        lock = filelock.FileLock(parent / "lock")
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            pass  # another run holds it: fall through to a private store
        else:
            try:
                key = store_key()
                for other in parent.iterdir():
                    if other.is_dir() and other.name != key:
                        _wipe(other)
                env = PodmanEnv.create(parent / key)
                if not _usable(env):
                    _wipe(parent / key)
                    env = PodmanEnv.create(parent / key)
                yield env, True
            finally:
                lock.release()
            return
    yield PodmanEnv.create(tmp), False


@pytest.fixture(scope="session")
def podman(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PodmanEnv]:
    """A private podman with the local ``python:3.12-slim`` base imported (the kept store when free)."""
    missing = missing_tools()
    if missing:
        pytest.skip(f"container tests need {', '.join(missing)} (bash .ci/run installs them)")
    with kept_store(tmp_path_factory.mktemp("podman")) as (env, kept):
        try:
            env.import_base(BASES["python"])
            yield env
        finally:
            if kept:  # keep the images and build cache; drop what this run made around them
                for args in (("rm", "-af", "-t", "0"), ("pod", "rm", "-af"), ("volume", "prune", "-f"),
                             ("network", "prune", "-f"), ("image", "prune", "-f")):
                    env.podman(*args, check=False, timeout=300)
            else:
                env.reset()


def _build(podman: PodmanEnv) -> tuple[int, str]:
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        status = main(["--root", str(podman.root), *BUILD_ARGV])
    return status, output.getvalue()


@pytest.fixture(scope="session")
def image(podman: PodmanEnv) -> str:
    """The image built from this checkout by the documented command (`BUILD_ARGV`)."""
    status, output = _build(podman)
    if status != 0 and podman.root.parent == cache_dir() / "test-podman":  # a damaged kept store: once more from scratch
        podman.reset()
        podman.import_base(BASES["python"])
        status, output = _build(podman)
    assert status == 0, output[-8000:]
    assert f"built {IMAGE}" in output
    return IMAGE

"""The worker pool is Rust-free: a running worker maps no Rust extension module.

The check reads ``/proc/<pid>/maps`` of a real worker process after it ran a
tool call (so lazily imported modules are loaded too), and looks inside every
mapped shared object for the marks rustc leaves in a binary.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO_ROOT
from tests.integration.conftest import Cluster, cluster_factory  # noqa: F401  (fixture)

# Strings rustc's standard library leaves in every binary it links, stripped or not.
RUST_MARKS = (b"rustc version", b"/rustc/", b"rust_begin_unwind", b"RUST_BACKTRACE", b"library/core/src")
KNOWN_RUST_MODULES = ("orjson", "pydantic_core", "rpds", "jiter", "cryptography", "tiktoken")

pytestmark = pytest.mark.slow


def is_rust_binary(path: Path) -> bool:
    data = path.read_bytes()
    return any(mark in data for mark in RUST_MARKS)


def mapped_shared_objects(pid: int) -> set[Path]:
    maps = Path(f"/proc/{pid}/maps").read_text(encoding="utf-8")
    return {Path(match) for match in re.findall(r"(/\S+\.so(?:\.[\d.]+)?)$", maps, flags=re.M)}


def test_the_rust_detector_recognises_a_rust_extension() -> None:
    import orjson  # a Rust extension (the catalog service uses it): the detector must see it

    (extension,) = Path(orjson.__file__).parent.glob("*.so")
    assert is_rust_binary(extension)
    import aiohttp._http_parser as parser  # Cython, not Rust

    assert not is_rust_binary(Path(parser.__file__))


def test_a_worker_that_ran_calls_has_loaded_no_rust_extension(cluster_factory) -> None:
    cluster: Cluster = cluster_factory(gateways=1, workers=1)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "search_papers", "arguments": {"query": "transformer", "mode": "keyword"}}}
    response = httpx.post(cluster.gateways[0].mcp_url, json=call, timeout=60,
                          headers={"Content-Type": "application/json", "Accept": "application/json"})
    assert response.status_code == 200
    assert "result" in response.json()
    # The chart loads matplotlib, numpy, Pillow, kiwisolver and contourpy (C and C++) in the worker.
    chart = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "get_sota_history", "arguments": {"benchmark": "ImageNet"}}}
    drawn = httpx.post(cluster.gateways[0].mcp_url, json=chart, timeout=60,
                       headers={"Content-Type": "application/json", "Accept": "application/json"})
    assert [item["type"] for item in drawn.json()["result"]["content"]] == ["text", "image"]

    worker_pid = cluster.workers[0].proc.pid
    objects = mapped_shared_objects(worker_pid)
    assert objects, "no shared objects mapped: wrong pid?"
    site_packages = [path for path in objects if "site-packages" in str(path) or str(REPO_ROOT) in str(path)]
    rust = sorted(str(path) for path in objects if path.exists() and is_rust_binary(path))
    assert rust == []
    named = sorted(str(path) for path in site_packages if any(name in str(path) for name in KNOWN_RUST_MODULES))
    assert named == []

"""``pwc-catalog serve --processes N``: several read-only processes behind one port."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.helpers import free_port, stop_process, wait_http

REPO_ROOT = Path(__file__).resolve().parents[2]


def _children(pid: int) -> set[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return {int(p) for p in path.read_text().split()} if path.exists() else set()


@pytest.mark.slow
def test_serve_with_processes_answers_from_several_processes_and_stops_them_all(catalog_db: Path,
                                                                                tmp_path: Path) -> None:
    port = free_port()
    # gunicorn's control socket would go to $HOME/.gunicorn/gunicorn.ctl, one path for every gunicorn
    # on the host (the gateway's too): the catalog opens none.
    env = {key: value for key, value in os.environ.items() if key != "XDG_RUNTIME_DIR"} | {"HOME": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "catalog", "serve", "--db", str(catalog_db), "--port", str(port),
                             "--processes", "2"], cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}/api/v1"
    try:
        wait_http(f"{base}/tasks/?page=1&page_size=1", proc=proc, timeout_s=60)
        deadline = time.monotonic() + 30
        while len(_children(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        workers = _children(proc.pid)
        assert len(workers) == 2
        with httpx.Client(timeout=10) as client:
            for _ in range(20):
                response = client.get(f"{base}/papers/", params={"page_size": 1})
                assert response.status_code == 200 and response.json()["count"] > 0
    finally:
        stop_process(proc, timeout_s=40)
    assert proc.returncode == 0
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)
    assert proc.stderr is not None
    with proc.stderr:
        stderr = proc.stderr.read().decode()
    assert "Traceback" not in stderr
    # A started control server is waited for and logged before a graceful stop returns: after the
    # exit, its directory and its log line are there or they never will be.
    assert not (tmp_path / ".gunicorn").exists() and "Control socket" not in stderr


def test_serve_rejects_a_bad_process_count_in_one_line(catalog_db: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "catalog", "serve", "--db", str(catalog_db), "--processes", "0"],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1
    assert "--processes must be 1-64" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_the_session_catalog_keeps_answering_past_a_pipe_buffer_of_access_lines(catalog_server) -> None:
    """The fixture's catalog logs to a file: 1,500 requests (≈ twice a 64 KiB pipe of access lines) all answer."""
    with httpx.Client(timeout=10) as client:
        for _ in range(1500):
            response = client.get(f"{catalog_server.api_url}/tasks/", params={"page": 1, "page_size": 1})
            assert response.status_code == 200
    log = catalog_server.log_text()
    assert len(log.encode()) > 64 * 1024 and "GET" in log
    assert "page_size" not in log  # access lines name the route, never the query

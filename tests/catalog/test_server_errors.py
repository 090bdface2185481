"""Bad input gets a 4xx JSON detail, never a 500; unexpected failures become a content-free 500."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from catalog.store import core as store
from tests.helpers import free_port, stop_process, wait_http

BASE = "/api/v1"

BAD = [
    pytest.param("papers/9999999", {}, 404, id="unknown-paper"),
    pytest.param("papers/no-such-slug/related", {}, 404, id="unknown-related"),
    pytest.param("research/papers/9999/lineage", {}, 404, id="unknown-lineage"),
    pytest.param("tasks/999", {}, 404, id="unknown-task"),
    pytest.param("tasks/999/page", {}, 404, id="unknown-task-page"),
    pytest.param("tasks/nope/trending-benchmarks", {}, 404, id="unknown-trend-task"),
    pytest.param("methods/999", {}, 404, id="unknown-method"),
    pytest.param("conferences/nope", {}, 404, id="unknown-conference"),
    pytest.param("organizations/nope", {}, 404, id="unknown-organization"),
    pytest.param("datasets/999/evaluations/", {}, 404, id="unknown-dataset"),
    pytest.param("evaluations/", {"paper_id": "999999"}, 404, id="unknown-eval-paper"),
    pytest.param("tasks/", {"area_id": "99"}, 404, id="unknown-area"),
    pytest.param("datasets/", {"task": "nope"}, 404, id="unknown-dataset-task"),
    pytest.param("no/such/route", {}, 404, id="unknown-route"),
    pytest.param("papers/", {"page": "0"}, 422, id="page-zero"),
    pytest.param("papers/", {"page": "abc"}, 422, id="page-text"),
    pytest.param("papers/", {"page_size": "101"}, 422, id="page-size-cap"),
    pytest.param("areas/", {"page_size": "501"}, 422, id="areas-cap"),
    pytest.param("methods/", {"page_size": "501"}, 422, id="methods-cap"),
    pytest.param("papers/", {"start_date": "2026-13-01"}, 422, id="bad-date"),
    pytest.param("papers/search", {"q": "x", "start_date": "2020-02-01", "end_date": "2020-01-01"}, 422,
                 id="date-order"),
    pytest.param("papers/search", {}, 422, id="missing-q"),
    pytest.param("papers/search", {"q": "x", "mode": "fuzzy"}, 422, id="bad-mode"),
    pytest.param("papers/search", {"q": "x" * 501}, 422, id="long-q"),
    pytest.param("papers/", {"order_by": "stars"}, 422, id="bad-order-by"),
    pytest.param("papers/", {"order_dir": "up"}, 422, id="bad-order-dir"),
    pytest.param("tasks/", {"ordering": "-None"}, 422, id="bad-ordering"),
    pytest.param("datasets/", {"ordering": "--name"}, 422, id="double-dash"),
    pytest.param("evaluations/", {"ordering": "x"}, 422, id="bad-eval-ordering"),
    pytest.param("papers/", {"latest_only": "maybe"}, 422, id="bad-bool"),
    pytest.param("papers/trending", {"max_age_days": "366"}, 422, id="max-age"),
    pytest.param("papers/trending", {"min_velocity": "nan"}, 422, id="nan-velocity"),
    pytest.param("papers/1/related", {"limit": "21"}, 422, id="related-limit"),
    pytest.param("papers/recent", {"limit": "1e3"}, 422, id="float-limit"),
    pytest.param("evaluations/", {"max_parameters_exclusive": "0"}, 422, id="max-params"),
    pytest.param("areas/with-task-benchmarks/", {"benchmarks_per_task": "11"}, 422, id="per-task"),
    pytest.param("papers/search", {"q": "\" AND OR NEAR( *"}, 200, id="fts-syntax-is-inert"),
    pytest.param("papers/search", {"q": "'; DROP TABLE papers; --", "mode": "semantic"}, 200, id="sql-is-inert"),
    pytest.param("papers/", {"search": "\" AND OR NEAR( * {title}:"}, 200, id="list-search-fts-syntax-is-inert"),
    pytest.param("papers/", {"search": "😀 ∑"}, 200, id="list-search-without-words"),
    pytest.param("papers/", {"search": "x" * 501}, 422, id="list-search-too-long"),
]


@pytest.mark.parametrize(("search", "found"), [("attention", True), ("ATTENTION is all", True), ("atten", False),
                                               ("😀", False)])
async def test_the_list_search_filter_matches_whole_words_of_title_or_abstract(api, search: str,
                                                                               found: bool) -> None:
    body = await (await api.get(f"{BASE}/papers/", params={"search": search})).json()
    assert (body["count"] > 0) == found, body
    assert body["applied_filters"]["search"] == search


@pytest.mark.parametrize(("path", "params", "status"), BAD)
async def test_bad_input_answers_4xx_json_never_500(api, path: str, params: dict, status: int) -> None:
    response = await api.get(f"{BASE}/{path}", params=params)
    assert response.status == status, await response.text()
    body = await response.json()
    if status >= 400:
        assert isinstance(body["detail"], str) and body["detail"]


async def test_wrong_method_is_a_json_405(api) -> None:
    response = await api.post(f"{BASE}/papers/")
    assert response.status == 405
    assert (await response.json())["detail"] == "Method not allowed"


async def test_an_unexpected_exception_is_a_content_free_500(api, monkeypatch, caplog) -> None:
    def explode(*args, **kwargs):
        raise RuntimeError("secret query text")

    monkeypatch.setattr(store, "paper_lineage", explode)
    with caplog.at_level(logging.INFO):
        response = await api.get(f"{BASE}/research/papers/1/lineage")
    assert response.status == 500
    assert await response.json() == {"detail": "Internal server error"}
    assert "secret" not in caplog.text
    assert "RuntimeError" in caplog.text and "paper_lineage" in caplog.text


async def test_access_log_holds_method_route_and_status_only(api, caplog) -> None:
    with caplog.at_level(logging.INFO, logger="catalog.access"):
        await api.get(f"{BASE}/papers/search", params={"q": "private words"})
    lines = [r.getMessage() for r in caplog.records if r.name == "catalog.access"]
    assert lines and lines[-1].startswith("GET papers_search 200 ")
    assert "private" not in caplog.text


@pytest.mark.slow
def test_cli_serves_a_database_over_http(catalog_db: Path) -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "catalog", "serve", "--db", str(catalog_db), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/api/v1/tasks/?page=1&page_size=1", proc=proc, timeout_s=30)
    finally:
        stop_process(proc)


@pytest.mark.parametrize(("argv", "code", "fragment"), [
    pytest.param(["serve", "--db", "/nonexistent/x.db"], 1, "catalog database not found", id="missing-db"),
    pytest.param(["serve"], 2, "one of the arguments", id="no-source"),
    pytest.param(["serve", "--db", "x", "--port", "0"], 1, "--port", id="bad-port"),
])
def test_cli_errors_are_one_line_without_traceback(argv: list[str], code: int, fragment: str, tmp_path) -> None:
    result = subprocess.run([sys.executable, "-m", "catalog", *argv], capture_output=True, text=True, timeout=60,
                            cwd=Path(__file__).resolve().parents[2])
    assert result.returncode == code
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr


def _raw(port: int, request: bytes) -> tuple[int, str, bytes]:
    """Send ``request`` as is and read the whole answer: ``(status, content type, body)``."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    content_type = next((line.split(": ", 1)[1] for line in lines if line.lower().startswith("content-type:")), "")
    return int(lines[0].split()[1]), content_type, body


MARK = b"SECRETMARK"
UNPARSEABLE = [
    pytest.param(b"G<T /api/v1/tasks/" + MARK + b" HTTP/1.1\r\nHost: x\r\n\r\n", id="bad-method"),
    pytest.param(b"GET /api/v1/tasks/?q=" + MARK + b"a" * (33 * 1024) + b" HTTP/1.1\r\nHost: x\r\n\r\n",
                 id="request-line-over-32k"),
    pytest.param(b"GET /api/v1/tasks/ HTTP/1.1\r\nHost: x\r\nX-Big: " + MARK + b"b" * 9000 + b"\r\n\r\n",
                 id="header-over-8k"),
    pytest.param(b"GET /api/v1/tasks/ HTTP/1.1\r\nHost: x\r\nBad Header" + MARK + b": 1\r\n\r\n", id="bad-header"),
    pytest.param(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + MARK + b"\r\n\r\n", id="tls-on-plain-http"),
]


@pytest.fixture(scope="module", params=[1, 2], ids=["one-process", "gunicorn"])
def served(request, catalog_db: Path, tmp_path_factory: pytest.TempPathFactory):
    port = free_port()
    log = tmp_path_factory.mktemp("catalog-log") / "stderr.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "catalog", "serve", "--db", str(catalog_db), "--port", str(port),
                                 "--processes", str(request.param)], stdout=sink, stderr=sink)
    try:
        wait_http(f"http://127.0.0.1:{port}/api/v1/tasks/?page=1&page_size=1", proc=proc, timeout_s=60)
        yield port, log
    finally:
        stop_process(proc, timeout_s=40)


@pytest.mark.parametrize("request_bytes", UNPARSEABLE)
def test_unparseable_http_gets_a_json_400_that_echoes_nothing(served, request_bytes: bytes) -> None:
    port, log = served
    status, content_type, body = _raw(port, request_bytes)
    assert status == 400 and content_type.startswith("application/json")
    assert json.loads(body)["detail"].startswith("Bad request: ")
    assert MARK not in body
    text = log.read_bytes()
    assert MARK not in text and b"Traceback" not in text
    refusals = [line for line in text.splitlines() if b"request refused" in line]
    assert refusals and not any(b"127.0.0.1" in line for line in refusals)  # content-free: no address


@pytest.mark.parametrize("processes", ["1", "2"])
def test_serve_on_a_busy_port_is_one_line_and_exit_2(catalog_db: Path, processes: str) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "catalog", "serve", "--db", str(catalog_db), "--port", str(port),
                                 "--processes", processes], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"error: cannot listen on 127.0.0.1:{port}: the port is in use; "
                                     "stop the other server or pass --port with a free port")
    assert "serving" not in result.stderr + result.stdout

"""The catalog client against real local HTTP servers (docs/cli-contract.md §4.1, §5)."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pwc.cache import MARKDOWN_TTL_S, SEARCH_TTL_S
from pwc.errors import HTTPStatusError, RequestTimeout, ResponseError, TransportError
from pwc.transport import Client, encode_params, quote_ref
from tests.helpers import free_port
from tests.pwc.runner import run_pwc
from tests.pwc.stub import Reply, stub_catalog

RELEASE = threading.Event()


class _Misbehaving(BaseHTTPRequestHandler):
    """Endpoints that hang, stream forever or lie about their size."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.startswith(("/api/v1/hang", "/api/v1/research/")):
            RELEASE.wait(timeout=10)  # released by the fixture teardown
            return
        if self.path.startswith("/api/v1/endless"):
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"x" * 65536
            try:
                for _ in range(1000):  # 64 MiB at most; the client must hang up long before
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            except OSError:
                return
            return
        if self.path.startswith("/api/v1/understated"):
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                self.wfile.write(b"{}" + b" " * (3 * 1024 * 1024))
            except OSError:
                pass
            return
        if self.path.startswith("/api/v1/liar"):
            self.send_response(200)
            self.send_header("Content-Length", str(3 * 1024 * 1024))
            self.end_headers()
            self.wfile.write(b"{}")
            return
        self.send_response(404)
        self.end_headers()


@pytest.fixture
def misbehaving_url() -> Iterator[str]:
    RELEASE.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Misbehaving)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api/v1"
    RELEASE.set()
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_encode_params_drops_none_and_repeats_lists():
    params = {"author": ["Kaiming He", "@yilundu"], "x": None, "flag": False, "d": dt.date(2026, 8, 1)}
    assert encode_params(params) == [("author", "Kaiming He"), ("author", "@yilundu"),
                                     ("flag", "false"), ("d", "2026-08-01")]


def test_repeated_params_are_form_encoded_on_the_wire():
    with stub_catalog({"papers/": {"results": []}}) as stub, Client(stub.url) as client:
        client.get_json("papers/", {"author": ["Kaiming He", "@yilundu"]})
    assert stub.calls == [("papers/", {"author": ["Kaiming He", "@yilundu"]})]


def test_quote_ref_keeps_only_dot_safe():
    assert quote_ref("math.GT/0309136") == "math.GT%2F0309136"


def test_requests_are_anonymous_with_cli_headers_and_default_timeout(monkeypatch):
    monkeypatch.delenv("PWC_API_URL", raising=False)
    with stub_catalog({"research/papers/2501.01234/read": "# Paper"}) as stub, Client(stub.url) as client:
        response = client.get_text("research/papers/2501.01234/read")
        assert client.timeout == 30.0
    assert response.text == "# Paper" and response.status == 200
    assert response.headers["content-type"].startswith("text/plain")
    seen = stub.headers_seen[0]
    assert "authorization" not in seen
    assert seen["user-agent"] == "pwc-cli/0.4.1"
    assert seen["accept"] == "application/json, text/plain;q=0.9"
    assert Client("http://x", timeout=25).timeout == 25


def test_base_url_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("PWC_API_URL", "http://example.test/api/v1/")
    assert Client().url("papers/search") == "http://example.test/api/v1/papers/search"
    monkeypatch.delenv("PWC_API_URL")
    assert Client().base_url == "https://paperswithcode.co/api/v1"


def test_connection_refused_is_a_transport_error_exit_3():
    url = f"http://127.0.0.1:{free_port()}/api/v1"
    with Client(url) as client, pytest.raises(TransportError, match="^API request failed: "):
        client.get_json("papers/search")
    result = run_pwc(url, "search", "x")
    assert (result.code, result.out) == (3, "")
    assert result.err.startswith("pwc: API request failed: ")


def test_read_timeout_exits_3(misbehaving_url):
    with Client(misbehaving_url, timeout=0.3) as client, pytest.raises(RequestTimeout):
        client.get_json("hang")
    result = run_pwc(misbehaving_url, "paper", "read", "2501.01234", timeout=0.3)
    assert (result.code, result.out, result.err) == (3, "", "pwc: API request timed out\n")


def test_timeout_on_the_read_endpoint_exits_3(misbehaving_url):
    with Client(misbehaving_url, timeout=0.3) as client, pytest.raises(RequestTimeout):
        client.get_text("hang/read")


def test_streamed_body_over_the_cap_is_refused_without_reading_it_all(misbehaving_url):
    with Client(misbehaving_url) as client, pytest.raises(ResponseError, match="exceeded the client byte limit"):
        client.get_json("endless")


def test_declared_content_length_over_the_cap_is_refused_before_reading(misbehaving_url):
    with Client(misbehaving_url) as client, pytest.raises(ResponseError, match="exceeded the client byte limit"):
        client.get_json("liar")


def test_understated_content_length_never_yields_more_than_declared(misbehaving_url):
    with Client(misbehaving_url) as client:
        assert client.get_json("understated") == {}


def test_small_cap_applies_to_actual_bytes():
    with stub_catalog({"big": "y" * 5000}) as stub, Client(stub.url, max_bytes=4096) as client:
        with pytest.raises(ResponseError):
            client.get_text("big")


def test_invalid_json_exits_4():
    with stub_catalog({"papers/search": Reply(b"{not json", headers={"Content-Type": "application/json"})}) as stub:
        result = run_pwc(stub.url, "search", "x")
    assert (result.code, result.err) == (4, "pwc: API returned invalid JSON\n")


@pytest.mark.parametrize(("status", "body", "message"), [
    pytest.param(404, {"detail": "Not Found"}, 'API request failed (404): {"detail": "Not Found"}', id="404-string"),
    pytest.param(409, {"detail": {"code": "changed"}}, 'API request failed (409): {"detail": {"code": "changed"}}',
                 id="409-structured"),
    pytest.param(422, "bad input", "API request failed (422): bad input", id="422-text"),
    pytest.param(500, "x" * 5000, "API request failed (500): " + "x" * 4096, id="500-truncated"),
])
def test_http_errors_exit_3_with_status_and_detail(status, body, message):
    with stub_catalog({"papers/search": Reply(body, status=status)}) as stub:
        with Client(stub.url) as client, pytest.raises(HTTPStatusError) as info:
            client.get_json("papers/search")
        result = run_pwc(stub.url, "search", "x")
    assert info.value.status == status
    assert (result.code, result.out, result.err) == (3, "", f"pwc: {message}\n")


class _RecordingCache:
    def __init__(self) -> None:
        self.store: dict[str, bytes] = {}
        self.ttls: list[float] = []

    def fetch(self, key, ttl_s, loader):
        self.ttls.append(ttl_s)
        if key not in self.store:
            self.store[key] = loader()
        return self.store[key]


def test_cache_serves_repeats_and_keeps_status_and_headers():
    cache = _RecordingCache()
    with stub_catalog({"papers/search": {"results": []},
                       "research/papers/1/read": Reply("md", headers={"X-Pwc-Truncated": "0"})}) as stub:
        with Client(stub.url, cache=cache) as client:
            assert client.get_json("papers/search", {"q": "a", "page": 1}) == {"results": []}
            assert client.get_json("papers/search", {"page": 1, "q": "a"}) == {"results": []}
            first = client.get_text("research/papers/1/read", {"content_version": "ab"})
            again = client.get_text("research/papers/1/read", {"content_version": "ab"})
    assert stub.paths() == ["papers/search", "research/papers/1/read"]
    assert again == first and again.headers["x-pwc-truncated"] == "0"
    assert cache.ttls == [SEARCH_TTL_S, SEARCH_TTL_S, MARKDOWN_TTL_S, MARKDOWN_TTL_S]


def test_errors_are_never_cached():
    cache = _RecordingCache()
    with stub_catalog({"papers/search": Reply({"detail": "x"}, status=503)}) as stub:
        with Client(stub.url, cache=cache) as client:
            for _ in range(2):
                with pytest.raises(HTTPStatusError):
                    client.get_json("papers/search")
    assert len(stub.calls) == 2 and cache.store == {}


def test_malformed_base_url_is_a_transport_error():
    with Client("http://[not-a-host/api/v1") as client, pytest.raises(TransportError, match="^API request failed"):
        client.get_json("papers/search")


def _trickling_server(stage: str) -> tuple[int, threading.Event]:
    """A socket server that trickles one byte every 50 ms, in its headers or its body."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
        prefix, slow = (b"", head) if stage == "headers" else (head, b"[" + b"1," * 50000)
        conn.sendall(prefix)
        for byte in slow:
            if stop.wait(0.05):
                break
            try:
                conn.sendall(bytes([byte]))
            except OSError:
                break
        conn.close()
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1], stop


@pytest.mark.parametrize("stage", ["headers", "body"])
def test_timeout_is_a_wall_clock_bound_over_a_trickling_response(stage: str) -> None:
    import time

    from pwc.errors import RequestTimeout
    from pwc.transport import Client

    port, stop = _trickling_server(stage)
    started = time.monotonic()
    with Client(f"http://127.0.0.1:{port}/api/v1", timeout=1.0) as client, pytest.raises(RequestTimeout):
        client.get_json("tasks/")
    stop.set()
    assert time.monotonic() - started < 1.8


def test_within_tightens_the_bound_for_the_calling_thread() -> None:
    import time

    from pwc.errors import RequestTimeout
    from pwc.transport import Client

    port, stop = _trickling_server("body")
    started = time.monotonic()
    with Client(f"http://127.0.0.1:{port}/api/v1", timeout=30.0) as client, client.within(0.5), \
            pytest.raises(RequestTimeout):
        client.get_json("tasks/")
    stop.set()
    assert time.monotonic() - started < 1.3

"""The documented production path, attacked: nginx → 2 gunicorn gateway processes → Redis → workers.

One module-scoped deployment, built the way systemd runs it: the shipped
``nginx/pwc-mcp.conf`` rendered for loopback, ``pwc-mcp gateway --processes 2``, a real
redis-server and two ``pwc-mcp worker`` processes started separately. One regression case
per defect of issue 15 (and the SDK-readable refusals of issue 12 item 3), each through
nginx, plus the gateway directly where the defect lived there.

Each test client speaks from its own loopback address (127.0.0.N), so nginx and the
gateway see separate clients with separate budgets, and the logs can be searched for
those addresses. Three nginx instances share the one gateway: ``edge`` (the shipped limits,
the header timeout cut to 2 s so the idle-connection case takes seconds), ``relaxed`` (edge
limits raised for the conformance suite, which sends hundreds of requests from one
address), ``dead`` (its upstream is a closed port: nginx's own 502) and ``impatient`` (a 1 s
``proxy_read_timeout`` and a 2 s ``client_body_timeout``, so nginx's own 504 and 408 take
seconds, plus test-only locations that make nginx answer 500 and 503 itself). The gunicorn
worker-timeout case runs its own 2-process gateway with ``PWC_MCP_GATEWAY_TIMEOUT=3``.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import signal
import socket
import ssl
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from filelock import FileLock

from tests.conftest import REPO_ROOT, RedisServer, ServerProcess, start_pwc_mcp
from tests.helpers import free_port, refusal_error, stop_process, wait_http
from tests.ops.test_nginx import NGINX, RenderedSite, render_site

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
SECRET_QUERY = "zebra-quantum-production-secret"
SEMANTIC_LIMIT = 3
EDGE_TIMEOUT_S = 2  # the test render's client_header_timeout (the shipped 10 s would cost the idle case 10 s)
EDGE_OVERRIDES = {"client_header_timeout 10s;": f"client_header_timeout {EDGE_TIMEOUT_S}s;"}
IMPATIENT_READ_S, IMPATIENT_BODY_S = 1, 2
# The shipped catch-all, with test-only locations before it that make nginx itself answer 500/503.
CATCH_ALL = "    location / {\n        return 404;\n    }"
IMPATIENT_OVERRIDES = {
    "proxy_read_timeout 60s;": f"proxy_read_timeout {IMPATIENT_READ_S}s;",
    "client_body_timeout 10s;": f"client_body_timeout {IMPATIENT_BODY_S}s;",
    CATCH_ALL: "    location = /test-500 { return 500; }\n    location = /test-503 { return 503; }\n" + CATCH_ALL,
}
RELAXED_OVERRIDES = {"rate=10r/s;": "rate=2000r/s;", "burst=40 nodelay;": "burst=2000 nodelay;",
                     "burst=120 nodelay;": "burst=2000 nodelay;",
                     "limit_conn pwc_mcp_conn_per_ip 32;": "limit_conn pwc_mcp_conn_per_ip 512;"}


def ip(n: int) -> str:
    """The loopback source address of test client ``n``."""
    return f"127.0.0.{n}"


@dataclass
class Nginx:
    site: RenderedSite
    proc: subprocess.Popen

    @property
    def url(self) -> str:
        return f"https://localhost:{self.site.https_port}"

    def log_text(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted((self.site.prefix / "logs").glob("*.log")))


@dataclass
class Deployment:
    gateway: ServerProcess
    workers: list[ServerProcess]
    edge: Nginx
    relaxed: Nginx
    dead: Nginx
    impatient: Nginx
    env: dict[str, str]
    client_addresses: set[str] = field(default_factory=set)

    def client(self, n: int, **kwargs: Any) -> httpx.Client:
        """An httpx client speaking from 127.0.0.n (TLS verification off: throwaway certificates)."""
        self.client_addresses.add(ip(n))
        transport = httpx.HTTPTransport(local_address=ip(n), verify=False)
        return httpx.Client(transport=transport, verify=False, timeout=kwargs.pop("timeout", 15), **kwargs)

    def gateway_pids(self) -> list[int]:
        """The gunicorn worker processes (children of the arbiter)."""
        return child_pids(self.gateway.proc.pid)


def child_pids(parent: int) -> list[int]:
    """Live (not zombie) children of ``parent``: a gunicorn master's gateway processes."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return sorted(pids)


def _start_nginx(directory: Path, gateway_port: int, *, https_port: int | None = None,
                 overrides: dict[str, str] | None = None) -> Nginx:
    site = render_site(directory, gateway_port, https_port=https_port, overrides=overrides, worker_connections=1024)
    proc = subprocess.Popen([NGINX, "-c", str(site.conf), "-p", str(site.prefix), "-g", "daemon off;"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    nginx = Nginx(site, proc)
    return nginx


@pytest.fixture(scope="module")
def deployment(redis_server: RedisServer, catalog_url: str,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    import redis

    if redis_server.proc.poll() is not None:
        redis_server.start()
    redis.Redis.from_url(redis_server.url).flushall()
    logs = tmp_path_factory.mktemp("production")
    gateway_port, relaxed_port = free_port(), free_port()
    env = {
        "PWC_MCP_REDIS_URL": redis_server.url, "PWC_API_URL": catalog_url,
        # nginx passes $host (no port); direct clients use 127.0.0.1:port.
        "PWC_MCP_ALLOWED_HOSTS": "localhost,localhost:*,127.0.0.1:*",
        # The conformance DNS-rebinding scenario sends the endpoint's own Origin.
        "PWC_MCP_ALLOWED_ORIGINS": f"https://localhost:{relaxed_port},http://localhost:{relaxed_port}",
        "PWC_MCP_REQUEST_LIMIT": "10000", "PWC_MCP_SEMANTIC_LIMIT": str(SEMANTIC_LIMIT),
        "PWC_MCP_CONCURRENCY_LIMIT": "64", "PWC_MCP_WORKER_THREADS": "4", "LOG_LEVEL": "INFO",
    }
    workers = [start_pwc_mcp("worker", env=env, wait_path=None, log_path=logs / f"worker-{n}.log") for n in range(2)]
    gateway = start_pwc_mcp("gateway", "--processes", "2", env=env, port=gateway_port,
                            log_path=logs / "gateway.log")
    nginxes: list[Nginx] = []
    try:
        wait_http(f"{gateway.base_url}/health", timeout_s=60, proc=gateway.proc)
        nginxes = [_start_nginx(tmp_path_factory.mktemp("edge"), gateway_port, overrides=EDGE_OVERRIDES),
                   _start_nginx(tmp_path_factory.mktemp("relaxed"), gateway_port, https_port=relaxed_port,
                                overrides={**EDGE_OVERRIDES, **RELAXED_OVERRIDES}),
                   _start_nginx(tmp_path_factory.mktemp("dead"), free_port()),
                   _start_nginx(tmp_path_factory.mktemp("impatient"), gateway_port,
                                overrides={**EDGE_OVERRIDES, **IMPATIENT_OVERRIDES})]
        for nginx in nginxes:
            _wait_nginx(nginx)
        yield Deployment(gateway, workers, *nginxes, env=env)
    finally:
        for nginx in nginxes:
            stop_process(nginx.proc)
        try:
            stop_gateway(gateway)
        finally:
            for worker in workers:
                worker.stop()


def stop_gateway(gateway: ServerProcess) -> None:
    """SIGTERM the gunicorn master; fail if any of its gateway processes outlives it.

    A process that hung in its shutdown (a background task that swallowed its
    cancellation) used to stay behind as an orphan once the master was killed.
    """
    children = child_pids(gateway.proc.pid)
    gateway.stop()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in children):
        time.sleep(0.1)
    survivors = [pid for pid in children if Path(f"/proc/{pid}").exists()]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert not survivors, f"gateway processes {survivors} did not exit on SIGTERM:\n{gateway.log_text()[-2000:]}"


def _wait_nginx(nginx: Nginx) -> None:
    """Wait until nginx answers anything over TLS."""
    for _ in range(100):
        if nginx.proc.poll() is not None:
            raise RuntimeError(f"nginx exited: {nginx.proc.stderr.read().decode() if nginx.proc.stderr else ''}")
        try:
            httpx.get(f"{nginx.url}/mcp", verify=False, timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("nginx did not start")


def _jsonrpc_refusal(response: httpx.Response, error: str, *, retry: bool) -> dict[str, Any]:
    """Assert ``response`` is the JSON-RPC refusal ``error`` and return its parsed body."""
    assert response.headers["content-type"].startswith("application/json"), response.text[:200]
    body = response.json()
    assert refusal_error(body) == error, body
    data = body["error"]["data"]
    assert isinstance(body["error"]["code"], int) and body["error"]["message"]
    if retry:
        assert int(response.headers["retry-after"]) == data["retry_after_s"] >= 1, (response.headers, body)
        assert "retry after" in body["error"]["message"]
    return body


def test_mcp_answers_through_nginx(deployment: Deployment) -> None:
    with deployment.client(10) as client:
        response = client.post(f"{deployment.edge.url}/mcp", content=PING, headers=HEADERS)
    assert response.status_code == 200 and response.json()["result"] == {}
    assert len(deployment.gateway_pids()) == 2


# --- item 1: compressed request bodies -------------------------------------------------------------

def gzip_bomb(inflated_mib: int = 1900) -> bytes:
    """A valid gzip member inflating to ``inflated_mib`` MiB of zeros (~1 KiB per MiB)."""
    zeros = bytes(1 << 20)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    deflate.compress(zeros)
    deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(zeros) + deflate.flush(zlib.Z_FULL_FLUSH)  # identical for every MiB after a full flush
    crc = 0
    for _ in range(inflated_mib):
        crc = zlib.crc32(zeros, crc)
    return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + block * inflated_mib + deflate.flush()
            + struct.pack("<II", crc, (inflated_mib << 20) & 0xFFFFFFFF))


def _raw_post(address: tuple[str, int], body: bytes, headers: dict[str, str], *, source: str) -> tuple[int, bytes]:
    """POST over a plain socket (exact headers, ``Connection: close``); returns status and body."""
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    request = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{address[1]}\r\nContent-Length: {len(body)}\r\n"
               f"Connection: close\r\n{head}\r\n").encode() + body
    with socket.create_connection(address, timeout=15, source_address=(source, 0)) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, data.split(b"\r\n\r\n", 1)[1]


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd", "GZIP, identity"])
def test_a_compressed_body_is_refused_415_before_it_is_read(deployment: Deployment, encoding: str) -> None:
    invalid = b"\x1f\x8b\x08\x00garbage"
    deployment.client_addresses.add(ip(11))
    status, body = _raw_post(("127.0.0.1", deployment.gateway.port), invalid,
                             {**HEADERS, "Content-Encoding": encoding}, source=ip(11))
    assert status == 415, body
    answer = json.loads(body)
    assert refusal_error(answer) == "unsupported_content_encoding"
    assert "uncompressed" in answer["error"]["message"]
    assert not re.search(r"pip|install|brotli|zstandard|package", answer["error"]["message"], re.I)
    with deployment.client(11) as client:
        response = client.post(f"{deployment.edge.url}/mcp", content=invalid,
                               headers={**HEADERS, "Content-Encoding": encoding, "Connection": "close"})
    assert response.status_code == 415
    _jsonrpc_refusal(response, "unsupported_content_encoding", retry=False)


def test_gzip_bombs_delay_no_other_client_and_cause_no_502(deployment: Deployment) -> None:
    bomb = gzip_bomb()
    assert len(bomb) < 2 * 1024 * 1024
    stop = time.monotonic() + 4.0
    bomb_headers = {**HEADERS, "Content-Encoding": "gzip"}

    def bombs(n: int) -> list[int]:
        statuses = []
        with deployment.client(20 + n) as client:
            while time.monotonic() < stop:
                url = deployment.edge.url if n % 2 else f"{deployment.gateway.base_url}"
                statuses.append(client.post(f"{url}/mcp", content=bomb, headers=bomb_headers).status_code)
                time.sleep(0.1)  # stay mostly under the edge's 10 r/s per address
        return statuses

    def pings(n: int) -> list[tuple[int, float]]:
        seen = []
        with deployment.client(30 + n) as client:
            while time.monotonic() < stop:
                started = time.perf_counter()
                status = client.post(f"{deployment.edge.url}/mcp", content=PING, headers=HEADERS).status_code
                seen.append((status, time.perf_counter() - started))
                time.sleep(0.05)
        return seen

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        bomb_runs = [pool.submit(bombs, n) for n in range(4)]
        ping_runs = [pool.submit(pings, n) for n in range(4)]
        bomb_statuses = [s for run in bomb_runs for s in run.result()]
        ping_results = [p for run in ping_runs for p in run.result()]
    # Refused unread (415), or by the edge's per-address rate limit (429); never a 5xx.
    assert bomb_statuses.count(415) >= 8 and set(bomb_statuses) <= {415, 429}, bomb_statuses
    statuses = [status for status, _ in ping_results]
    assert set(statuses) == {200}, statuses  # no 502, no time-out
    worst = max(latency for _, latency in ping_results)
    # Inflating one bomb on the event loop took 7-9 s and delayed pings by up to 4.5 s.
    assert worst < 1.5, f"a ping took {worst:.2f} s while bombs were refused"


# --- item 2: keep-alive alignment, no 502 after a stall --------------------------------------------

def test_a_stalled_gateway_process_causes_no_502_through_nginx(deployment: Deployment) -> None:
    def ping(n: int) -> int:
        with deployment.client(40 + n % 4) as client:
            return client.post(f"{deployment.edge.url}/mcp", content=PING, headers=HEADERS).status_code

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        assert set(pool.map(ping, range(32))) == {200}  # nginx now holds idle connections to both processes
        victim = deployment.gateway_pids()[0]
        os.kill(victim, signal.SIGSTOP)
        try:
            during = [pool.submit(ping, n) for n in range(16)]
            time.sleep(4)  # longer than gunicorn's old 2 s keep-alive; shorter than proxy_read_timeout
        finally:
            os.kill(victim, signal.SIGCONT)
        after = list(pool.map(ping, range(48)))
        statuses = [f.result() for f in during] + after
    assert statuses.count(502) == 0 and set(statuses) == {200}, statuses


# --- item 3: gunicorn's worker timeout replaces a stalled process; nginx keeps answering JSON ------

PROCESS_TIMEOUT_S = 3  # PWC_MCP_GATEWAY_TIMEOUT of this case's own gateway (the shipped default is 60 s)


@pytest.fixture
def short_timeout_gateway(deployment: Deployment, tmp_path: Path) -> Iterator[tuple[ServerProcess, Nginx]]:
    """A second 2-process gateway (same Redis and workers) with a 3 s worker timeout, behind its own nginx."""
    gateway = start_pwc_mcp("gateway", "--processes", "2", log_path=tmp_path / "gateway.log",
                            env={**deployment.env, "PWC_MCP_GATEWAY_TIMEOUT": str(PROCESS_TIMEOUT_S)})
    nginx: Nginx | None = None
    try:
        (tmp_path / "nginx").mkdir()
        nginx = _start_nginx(tmp_path / "nginx", gateway.port, overrides=EDGE_OVERRIDES)
        _wait_nginx(nginx)
        yield gateway, nginx
    finally:
        if nginx is not None:
            stop_process(nginx.proc)
        stop_gateway(gateway)


def _wait_for(condition: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return bool(condition())


def test_a_process_stalled_past_the_worker_timeout_is_replaced_and_nginx_answers_only_json(
        deployment: Deployment, short_timeout_gateway: tuple[ServerProcess, Nginx]) -> None:
    gateway, nginx = short_timeout_gateway
    assert _wait_for(lambda: len(child_pids(gateway.proc.pid)) == 2, 10)

    def ping(n: int) -> httpx.Response:
        with deployment.client(80 + n % 4) as client:
            return client.post(f"{nginx.url}/mcp", content=PING, headers=HEADERS)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        assert {r.status_code for r in pool.map(ping, range(16))} == {200}  # nginx holds connections to both
        before = child_pids(gateway.proc.pid)
        victim = before[0]
        os.kill(victim, signal.SIGSTOP)
        stalled_at = time.monotonic()
        try:
            during = [pool.submit(ping, n) for n in range(8)]
            replaced = _wait_for(lambda: victim not in (pids := child_pids(gateway.proc.pid)) and len(pids) == 2,
                                 PROCESS_TIMEOUT_S + 10)
            replaced_after = time.monotonic() - stalled_at
        finally:
            if victim in child_pids(gateway.proc.pid):
                os.kill(victim, signal.SIGCONT)
        assert replaced, f"the stopped process {victim} was not replaced: {child_pids(gateway.proc.pid)}"
        # Killed by the arbiter's timeout (heartbeat age > 3 s, checked about once a second), not earlier.
        assert PROCESS_TIMEOUT_S <= replaced_after < PROCESS_TIMEOUT_S + 5, replaced_after
        during_responses = [f.result() for f in during]
        after = list(pool.map(ping, range(32)))
    for response in during_responses + after:
        assert response.headers["content-type"].startswith("application/json"), response.text[:200]
        assert b"<html" not in response.content.lower()
    # The stalled process's in-flight requests die with it: nginx's own JSON 502, nothing else.
    for response in during_responses:
        assert response.status_code in (200, 502), response.text[:200]
        if response.status_code == 502:
            _jsonrpc_refusal(response, "server_unavailable", retry=True)
    assert [r.status_code for r in after] == [200] * len(after)
    assert _wait_for(lambda: "WORKER TIMEOUT (pid:%d)" % victim in gateway.log_text()
                     and gateway.log_text().count("Booting worker") >= 3, 5)
    time.sleep(0.5)  # the batching handler writes within 0.2 s
    text = gateway.log_text()
    assert text.count("Booting worker") == 3, text[-3000:]  # two at start, one replacement: no boot timed out
    assert re.search(r"^\S+ \S+ CRITICAL gunicorn\.error WORKER TIMEOUT \(pid:%d\)$" % victim, text, re.M), text[-3000:]
    bad = [line for line in text.splitlines() if line.strip() and not LINE.match(line)]
    assert not bad, bad[:5]
    for marker in ("Traceback", "Logging error", 'File "', *deployment.client_addresses):
        assert marker not in text, marker


# --- item 4: unhashable params --------------------------------------------------------------------

@pytest.mark.parametrize("level", [[], {}, ["debug"], {"debug": 1}])
def test_set_level_with_an_unhashable_level_is_invalid_params_not_500(deployment: Deployment, level: Any) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "logging/setLevel", "params": {"level": level}})
    with deployment.client(12) as client:
        response = client.post(f"{deployment.edge.url}/mcp", content=body, headers=HEADERS)
    assert response.status_code == 200
    assert response.json()["error"]["code"] == -32602 and response.json()["id"] == 4


# Every params field of every method, given an unhashable or wrongly typed value, through nginx.
VALID_PARAMS: dict[str, dict[str, Any]] = {
    "initialize": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    "tools/list": {"cursor": "x"},
    "tools/call": {"name": "search_papers", "arguments": {"query": "q", "limit": 1, "mode": "keyword"}},
    "resources/list": {"cursor": "x"},
    "resources/templates/list": {"cursor": "x"},
    "resources/read": {"uri": "pwc://papers/x"},
    "prompts/list": {"cursor": "x"},
    "prompts/get": {"name": "x", "arguments": {}},
    "completion/complete": {"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": "b"}},
    "logging/setLevel": {"level": "info"},
    "ping": {"_meta": {}},
}
BAD_VALUES: tuple[Any, ...] = ([], {}, 1.5, [["nested"]], {"k": []})


def test_no_params_field_of_any_method_reaches_an_unhashable_or_mistyped_lookup(deployment: Deployment) -> None:
    cases = [(method, {**valid, key: bad}) for method, valid in VALID_PARAMS.items()
             for key in dict.fromkeys((*valid, "_meta")) for bad in BAD_VALUES]
    assert len(cases) >= 100

    def send(n: int) -> tuple[Any, ...] | None:
        method, params = cases[n]
        body = json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params})
        with deployment.client(100 + n) as client:  # one address each: no case spends another's budget
            response = client.post(f"{deployment.relaxed.url}/mcp", content=body, headers=HEADERS)
        answer = response.json() if response.headers.get("content-type", "").startswith("application/json") else None
        fine = (response.status_code == 200 and isinstance(answer, dict) and answer.get("id") == n
                and ("result" in answer or answer["error"]["code"] != -32603))
        return None if fine else (method, params, response.status_code, response.text[:200])

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        failures = [f for f in pool.map(send, range(len(cases))) if f]
    assert not failures, failures
    assert "Traceback" not in deployment.gateway.log_text()


# --- item 5: one address cannot take every connection -----------------------------------------------

def _tls(sock: socket.socket) -> ssl.SSLSocket:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context.wrap_socket(sock, server_hostname="localhost")


def test_idle_connections_of_one_address_are_closed_and_others_keep_being_served(deployment: Deployment) -> None:
    port = deployment.edge.site.https_port
    deployment.client_addresses.add(ip(50))
    idle = [socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(ip(50), 0))
            for _ in range(300)]
    try:
        with deployment.client(51) as client:
            assert client.post(f"{deployment.edge.url}/mcp", content=PING, headers=HEADERS).status_code == 200
        time.sleep(EDGE_TIMEOUT_S + 1.5)
        closed = 0
        for sock in idle:
            sock.settimeout(0.5)
            try:
                closed += sock.recv(1) == b""
            except ConnectionResetError:
                closed += 1
            except TimeoutError:
                pass
        assert closed == len(idle), f"{len(idle) - closed} idle connections still open after client_header_timeout"
    finally:
        for sock in idle:
            sock.close()


def test_limit_conn_refuses_one_address_beyond_32_requests_in_progress(deployment: Deployment) -> None:
    port = deployment.edge.site.https_port
    deployment.client_addresses.add(ip(52))
    head = (b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b"Accept: application/json\r\nContent-Length: 1000\r\n\r\n")

    def connect(_: int) -> ssl.SSLSocket:
        for _attempt in range(3):  # a handshake can lose the race with the 2 s header timeout on a busy box
            try:
                sock = _tls(socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(ip(52), 0)))
            except ssl.SSLError:
                continue
            sock.sendall(head)  # headers sent, body never: the request stays in progress (10 s body timeout)
            return sock
        raise AssertionError("TLS handshakes keep failing")

    def answer(sock: ssl.SSLSocket) -> bytes:
        sock.settimeout(1.0)
        try:
            return sock.recv(65536)
        except (TimeoutError, ssl.SSLError, OSError):
            return b""

    # Eight handshakes at a time: forty at once on 2 busy cores can each outlast the 2 s header timeout.
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        slow = list(pool.map(connect, range(40)))
    with concurrent.futures.ThreadPoolExecutor(40) as pool:
        try:
            answers = list(pool.map(answer, slow))
            refused = [data for data in answers if data.startswith(b"HTTP/1.1 429")]
            assert len(refused) == 8, [data[:20] for data in answers]  # 32 in progress, the rest refused
            assert b"Retry-After: 1" in refused[0] and b'"rate_limit_exceeded"' in refused[0]
            with deployment.client(53) as client:  # another address is not affected
                assert client.post(f"{deployment.edge.url}/mcp", content=PING, headers=HEADERS).status_code == 200
        finally:
            for sock in slow:
                sock.close()


def test_a_body_that_stops_arriving_is_cut_off_after_client_body_timeout(deployment: Deployment) -> None:
    port = deployment.impatient.site.https_port
    deployment.client_addresses.add(ip(54))
    sock = _tls(socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(ip(54), 0)))
    try:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     b"Accept: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":")
        started = time.monotonic()
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except (ConnectionResetError, ssl.SSLError):
            pass
        elapsed = time.monotonic() - started
    finally:
        sock.close()
    # Closed by the 2 s test body timeout (shipped: 10 s), long before the socket's own 10 s.
    assert IMPATIENT_BODY_S - 0.5 <= elapsed < IMPATIENT_BODY_S + 3, elapsed
    assert b"<html" not in data.lower(), data[:300]  # nginx closes without an answer (its 408 page is never sent)


# --- item 6: nginx's own answers are JSON-RPC refusals -------------------------------------------------

def test_the_edge_rate_limit_answers_a_jsonrpc_429_with_retry_after(deployment: Deployment) -> None:
    with deployment.client(60) as client:
        # Past /mcp's burst (120) at full speed.
        responses = [client.post(f"{deployment.edge.url}/mcp", content=PING, headers=HEADERS) for _ in range(250)]
    limited = [r for r in responses if r.status_code == 429]
    assert limited, [r.status_code for r in responses]
    _jsonrpc_refusal(limited[0], "rate_limit_exceeded", retry=True)


def test_nginx_502_413_and_404_are_json(deployment: Deployment) -> None:
    with deployment.client(61) as client:
        down = client.post(f"{deployment.dead.url}/mcp", content=PING, headers=HEADERS)
        too_large = client.post(f"{deployment.edge.url}/mcp", content=b"x" * (2 * 1024 * 1024 + 1), headers=HEADERS)
        chunked = client.post(f"{deployment.edge.url}/mcp", content=iter([b" " * 65536] * 48), headers=HEADERS)
        missing = client.get(f"{deployment.edge.url}/metrics")
    assert down.status_code == 502
    _jsonrpc_refusal(down, "server_unavailable", retry=True)
    for response in (too_large, chunked):  # by Content-Length and by counting a chunked body
        assert response.status_code == 413
        _jsonrpc_refusal(response, "request_too_large", retry=False)
    assert missing.status_code == 404 and missing.json() == {"error": "not_found"}


@pytest.mark.parametrize(("status", "error"), [(500, "edge_error"), (503, "server_unavailable")])
def test_nginx_own_500_and_503_are_jsonrpc_refusals_with_retry_after(deployment: Deployment, status: int,
                                                                      error: str) -> None:
    with deployment.client(64) as client:  # test-only locations answering `return <status>;`
        response = client.get(f"{deployment.impatient.url}/test-{status}")
    assert response.status_code == status
    _jsonrpc_refusal(response, error, retry=True)


class _Stopped:
    """Both gateway processes SIGSTOPped for the ``with`` body (an upstream that never answers)."""

    def __init__(self, deployment: Deployment) -> None:
        self.pids = deployment.gateway_pids()
        assert len(self.pids) == 2

    def __enter__(self) -> None:
        for pid in self.pids:
            os.kill(pid, signal.SIGSTOP)

    def __exit__(self, *_: object) -> None:
        for pid in self.pids:
            os.kill(pid, signal.SIGCONT)


def test_nginx_504_is_a_jsonrpc_refusal_with_retry_after(deployment: Deployment) -> None:
    with deployment.client(65) as client:
        assert client.post(f"{deployment.impatient.url}/mcp", content=PING, headers=HEADERS).status_code == 200
        with _Stopped(deployment):
            started = time.monotonic()
            response = client.post(f"{deployment.impatient.url}/mcp", content=PING, headers=HEADERS)
            waited = time.monotonic() - started
        after = client.post(f"{deployment.impatient.url}/mcp", content=PING, headers=HEADERS)
    assert response.status_code == 504, response.text[:300]
    body = _jsonrpc_refusal(response, "gateway_timeout", retry=True)
    assert response.headers["retry-after"] == "5" and "Gateway timeout" in body["error"]["message"]
    assert IMPATIENT_READ_S <= waited < IMPATIENT_READ_S + 2, waited  # the test render's proxy_read_timeout
    assert after.status_code == 200


async def test_the_python_sdk_reads_nginx_504_as_an_mcp_error(deployment: Deployment) -> None:
    import httpx2
    from mcp import Client, MCPError
    from mcp.client.streamable_http import streamable_http_client

    deployment.client_addresses.add(ip(66))
    http = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(local_address=ip(66), verify=False),
                              verify=False, timeout=httpx2.Timeout(30))
    async with Client(streamable_http_client(f"{deployment.impatient.url}/mcp", http_client=http),
                      mode="legacy") as client:
        arguments = {"query": SECRET_QUERY, "limit": 1, "mode": "keyword"}
        with _Stopped(deployment), pytest.raises(MCPError) as timed_out:
            await client.call_tool("search_papers", arguments)
        assert not (await client.call_tool("search_papers", arguments)).is_error  # the session survives the 504
    error = timed_out.value.error
    assert error.data["error"] == "gateway_timeout" and error.data["retry_after_s"] == 5, error
    assert "Gateway timeout" in error.message and "text/html" not in repr(timed_out.value), error


async def test_the_python_sdk_reads_nginx_and_gateway_refusals_as_mcp_errors(deployment: Deployment) -> None:
    import httpx2
    from mcp import Client, MCPError
    from mcp.client.streamable_http import streamable_http_client

    def sdk_client(url: str, n: int) -> Client:
        deployment.client_addresses.add(ip(n))
        http = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(local_address=ip(n), verify=False),
                                  verify=False, timeout=httpx2.Timeout(30))
        return Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy")

    # The gateway's 429 (semantic-search limit, Redis), through nginx.
    async with sdk_client(deployment.edge.url, 62) as client:
        for _ in range(SEMANTIC_LIMIT):
            await client.call_tool("search_papers", {"query": SECRET_QUERY, "limit": 1})
        with pytest.raises(MCPError) as refused:
            await client.call_tool("search_papers", {"query": SECRET_QUERY, "limit": 1})
    error = refused.value.error
    assert error.data["error"] == "rate_limit_exceeded" and error.data["retry_after_s"] >= 1, error
    assert "Rate limit exceeded" in error.message and "retry after" in error.message
    # nginx's own 502: the SDK reports the same shape instead of "Server returned an error response".
    with pytest.raises(Exception) as down:  # initialize fails inside the SDK's task group
        async with sdk_client(deployment.dead.url, 63):
            pass
    assert "server_unavailable" in repr(down.value) or "Server unavailable" in repr(down.value), repr(down.value)


TS_CLIENT = r"""
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
(async () => {
  const client = new Client({ name: "refusal-check", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
  const out = [];
  for (let i = 0; i < Number(process.argv[3]) + 1; i++) {
    try {
      await client.callTool({ name: "search_papers", arguments: { query: "ts secret", limit: 1 } });
      out.push({ ok: true });
    } catch (e) {
      out.push({ ok: false, code: e.code ?? null, message: String(e.message), data: e.data ?? null });
    }
  }
  console.log(JSON.stringify(out));
  await client.close();
})().catch((e) => { console.error(String(e)); process.exit(3); });
"""


def test_the_typescript_sdk_surfaces_the_refusal_message_and_code(deployment: Deployment,
                                                                tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("conformance_run", REPO_ROOT / "conformance" / "run.py")
    assert spec is not None and spec.loader is not None
    toolbox = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(toolbox)
    node = toolbox.ensure_toolbox() / "node"  # Node 22 from npm, shared with the conformance run
    sdk = REPO_ROOT / "tests" / "ops" / ".ts-sdk"
    sdk.mkdir(exist_ok=True)
    with FileLock(sdk.parent / ".ts-sdk.lock", timeout=900):  # one install across parallel workers
        if not (sdk / "node_modules" / "@modelcontextprotocol" / "sdk").exists():
            subprocess.run(["npm", "install", "--prefix", str(sdk), "--no-audit", "--no-fund", "--silent",
                            "@modelcontextprotocol/sdk@1.32.2"], check=True, timeout=600)
    script = tmp_path / "refusal.js"
    script.write_text(TS_CLIENT, encoding="utf-8")
    # Node cannot bind a source address for fetch: it speaks from 127.0.0.1, whose semantic
    # budget nothing else in this module spends. Direct to the gateway, where the 429 is made.
    result = subprocess.run([str(node), str(script), deployment.gateway.mcp_url, str(SEMANTIC_LIMIT)],
                            env={**os.environ, "NODE_PATH": str(sdk / "node_modules")},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    outcomes = json.loads(result.stdout.strip().splitlines()[-1])
    assert [o["ok"] for o in outcomes[:SEMANTIC_LIMIT]] == [True] * SEMANTIC_LIMIT, outcomes
    last = outcomes[-1]
    assert not last["ok"] and "Rate limit exceeded" in last["message"] and "rate_limit_exceeded" in json.dumps(last)


# --- item 8: duplicate X-Forwarded-For lines ---------------------------------------------------------

def test_duplicate_forwarded_for_lines_are_combined_so_a_forged_first_line_buys_no_budget(
        deployment: Deployment) -> None:
    call = json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                       "params": {"name": "search_papers", "arguments": {"query": "xff", "limit": 1}}})
    statuses = []
    transport = httpx.HTTPTransport(local_address=ip(70))
    with httpx.Client(transport=transport, timeout=30) as client:
        for n in range(SEMANTIC_LIMIT + 2):
            # A client's forged first line, then the line a trusted proxy (HAProxy's
            # `option forwardfor`) appended with the real address.
            headers = [*HEADERS.items(), ("X-Forwarded-For", f"198.51.100.{n}"), ("X-Forwarded-For", "203.0.113.9")]
            statuses.append(client.post(deployment.gateway.mcp_url, content=call, headers=headers).status_code)
    assert statuses[:SEMANTIC_LIMIT] == [200] * SEMANTIC_LIMIT and statuses[SEMANTIC_LIMIT:] == [429, 429], statuses
    # Through nginx, which replaces every X-Forwarded-For line with the connecting address.
    with deployment.client(72) as client:
        through_nginx = [client.post(f"{deployment.edge.url}/mcp", content=call, headers=[
            *HEADERS.items(), ("X-Forwarded-For", f"198.51.100.{n}"), ("X-Forwarded-For", f"203.0.113.{n}")]).status_code
            for n in range(SEMANTIC_LIMIT + 2)]
    assert through_nginx == [200] * SEMANTIC_LIMIT + [429, 429], through_nginx


# --- item 9: aiohttp's own body bound answers the documented 413 and is recorded ---------------------

def _requests_total(deployment: Deployment, status: int) -> float:
    text = httpx.get(f"{deployment.gateway.base_url}/metrics").text
    pattern = re.compile(r'^pwc_mcp_requests_total\{[^}]*status="%d"[^}]*tool="unknown"[^}]*\} (\S+)$' % status, re.M)
    alt = re.compile(r'^pwc_mcp_requests_total\{[^}]*tool="unknown"[^}]*status="%d"[^}]*\} (\S+)$' % status, re.M)
    return sum(float(v) for v in pattern.findall(text) + alt.findall(text))


def test_oversized_bodies_get_the_documented_413_and_are_logged_and_counted(deployment: Deployment) -> None:
    before = _requests_total(deployment, 413)

    def chunked() -> Iterator[bytes]:
        for _ in range(48):
            yield b" " * 65536

    transport = httpx.HTTPTransport(local_address=ip(71))
    with httpx.Client(transport=transport, timeout=30) as client:
        by_length = client.post(deployment.gateway.mcp_url, content=b"x" * (2 * 1024 * 1024 + 1), headers=HEADERS)
        by_counting = client.post(deployment.gateway.mcp_url, content=chunked(), headers=HEADERS)
        # Used to be inflated by aiohttp and answered "Maximum request body size 2097152 exceeded."
        small_bomb = client.post(deployment.gateway.mcp_url, content=zlib.compress(bytes(3 * 1024 * 1024)),
                                 headers={**HEADERS, "Content-Encoding": "deflate"})
    for response in (by_length, by_counting):
        assert response.status_code == 413
        _jsonrpc_refusal(response, "request_too_large", retry=False)
    assert small_bomb.status_code == 415 and b"Maximum request body size" not in small_bomb.content
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (
            _requests_total(deployment, 413) < before + 2
            or deployment.gateway.log_text().count("mcp_request tool=unknown status=413") < 2):
        time.sleep(0.2)  # log lines are written in batches, within 0.2 s
    assert _requests_total(deployment, 413) >= before + 2
    assert deployment.gateway.log_text().count("mcp_request tool=unknown status=413") >= 2


# --- item 10: the official conformance suite through the shipped site -----------------------------------

def test_the_official_conformance_suite_passes_through_nginx(deployment: Deployment) -> None:
    result = subprocess.run([sys.executable, str(REPO_ROOT / "conformance" / "run.py"),
                             "--url", f"{deployment.relaxed.url}/mcp"], cwd=REPO_ROOT,
                            env={**os.environ, "NODE_TLS_REJECT_UNAUTHORIZED": "0"},
                            capture_output=True, text=True, timeout=540)
    tail = (result.stdout + result.stderr)[-6000:]
    assert result.returncode == 0, tail
    assert "== conformance 2025-11-25: passed" in result.stdout
    assert "== conformance 2026-07-28: passed" in result.stdout


# --- items 3 and 7: every log line formatted and content-free (runs last: it kills a process) -----------

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+ \S.*$")


def _abort_mid_body(port: int, source: str) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0)) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 5000\r\n\r\n{\"jsonrpc\":")
    # closed with 4,989 bytes missing


def _malformed(port: int, source: str, payload: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0)) as sock:
        sock.sendall(payload)
        try:
            sock.recv(4096)
        except OSError:
            pass


def test_every_gateway_line_is_formatted_and_content_free(deployment: Deployment) -> None:
    port = deployment.gateway.port
    attacker = ip(77)
    deployment.client_addresses.add(attacker)
    size_before = len(deployment.gateway.log_text())
    for _ in range(100):
        _abort_mid_body(port, attacker)
    for payload in (b"GARBAGE /mcp HTTP/1.1\r\n\r\n", b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
                    b"POST /mcp HTTP/1.1\r\nBad Header\r\n\r\n", b"\x16\x03\x01\x00\xa5\x01\x00\x00",
                    b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n"):
        _malformed(port, attacker, payload)
    with deployment.client(78) as client:
        client.post(f"{deployment.edge.url}/mcp?q={SECRET_QUERY}", headers={**HEADERS, "User-Agent": SECRET_QUERY},
                    content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                        "name": "search_papers", "arguments": {"query": SECRET_QUERY, "mode": "keyword"}}}))
    # gunicorn's own lines: a worker killed as the OOM killer would, and its replacement booting.
    victim = deployment.gateway_pids()[-1]
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (
            "was sent SIGKILL" in deployment.gateway.log_text()
            and deployment.gateway.log_text().count("Booting worker") >= 3):
        time.sleep(0.2)
    time.sleep(0.5)  # the batching handler writes within 0.2 s
    text = deployment.gateway.log_text()
    assert "was sent SIGKILL! Perhaps out of memory?" in text
    assert text.count("Booting worker") >= 3  # two at start, one replacement
    added = len(text) - size_before
    assert added < 40_000, f"100 aborted bodies and 5 malformed requests added {added} bytes of log"
    lines = [line for line in text.splitlines() if line.strip()]
    bad = [line for line in lines if not LINE.match(line)]
    assert not bad, bad[:5]
    for marker in ("Traceback", "Logging error", 'File "', SECRET_QUERY, *deployment.client_addresses):
        assert marker not in text, marker
    # nginx: the content-free access format, nothing a client sent.
    for nginx in (deployment.edge, deployment.relaxed, deployment.dead, deployment.impatient):
        logged = nginx.log_text()
        for marker in (SECRET_QUERY, "Mozilla", "python-httpx", *deployment.client_addresses):
            assert marker not in logged, marker
    access = (deployment.edge.site.prefix / "logs" / "pwc-mcp.access.log").read_text()
    assert re.search(r"^\S+ POST /mcp 200 \d+ [\d.]+ 200 HTTP/1.1$", access, re.M), access[-500:]


def test_the_embedded_gateway_logs_client_faults_content_free(tmp_path: Path) -> None:
    """The single-process gateway (``web.run_app``) used to log "Error handling request from 127.0.0.1"
    with a traceback for each of these."""
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": "http://127.0.0.1:9/api/v1"},
                           log_path=tmp_path / "embedded.log")
    try:
        for _ in range(20):
            _abort_mid_body(server.port, ip(79))
        for payload in (b"GARBAGE /mcp HTTP/1.1\r\n\r\n", b"POST /mcp HTTP/1.1\r\nBad Header\r\n\r\n",
                        b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n"):
            _malformed(server.port, ip(79), payload)
        status, _ = _raw_post(("127.0.0.1", server.port), b"\x1f\x8b\x08\x00garbage",
                              {**HEADERS, "Content-Encoding": "gzip"}, source=ip(79))
        assert status == 415
        time.sleep(0.5)
    finally:
        server.stop()
    text = server.log_text()
    assert "mcp_request tool=unknown status=415" in text
    for marker in ("Traceback", "Logging error", ip(79), "127.0.0.1 "):
        assert marker not in text, marker
    assert all(LINE.match(line) for line in text.splitlines() if line.strip()), text[-2000:]

"""The legacy SSE and REST surfaces attacked on the production path (issue 21).

One module-scoped deployment: the shipped ``nginx/pwc-mcp.conf`` rendered for loopback,
``pwc-mcp gateway --processes 2``, a real redis-server and two ``pwc-mcp worker`` processes.
Each case goes through nginx, or straight to the gateway where the defect lived there (a
deployment without nginx: compose, the Space), with the official Python SDK's SSE client
and langchain-mcp-adapters where a client was affected. Clients through nginx speak from
their own loopback address (127.0.0.N); direct clients name themselves (``X-PwC-MCP-Client``).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
import redis

from pwc_mcp_core.cluster import redis_keys
from tests.conftest import RedisServer, ServerProcess, start_pwc_mcp
from tests.helpers import refusal_error, stop_process, wait_http
from tests.ops.test_production_path import (
    Nginx,
    _start_nginx,
    _wait_nginx,
    child_pids,
    ip,
    stop_gateway,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

REQUEST_LIMIT = 600
WRITE_TIMEOUT_S = 2
HEARTBEAT_S = 1
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@dataclass
class Prod:
    gateway: ServerProcess
    workers: list[ServerProcess]
    edge: Nginx
    redis: RedisServer
    env: dict[str, str]

    @property
    def direct(self) -> str:
        return self.gateway.base_url

    def gateway_pids(self) -> list[int]:
        """The gunicorn gateway processes (children of the master)."""
        return child_pids(self.gateway.proc.pid)

    def client(self, n: int, **kwargs: Any) -> httpx.Client:
        """An httpx client speaking from 127.0.0.n (throwaway certificates: no verification)."""
        transport = httpx.HTTPTransport(local_address=ip(n), verify=False)
        return httpx.Client(transport=transport, verify=False, timeout=kwargs.pop("timeout", 15), **kwargs)


@pytest.fixture(scope="module")
def prod(redis_server: RedisServer, catalog_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prod]:
    import redis

    if redis_server.proc.poll() is not None:
        redis_server.start()
    redis.Redis.from_url(redis_server.url).flushall()
    logs = tmp_path_factory.mktemp("sse-rest")
    env = {
        "PWC_MCP_REDIS_URL": redis_server.url, "PWC_API_URL": catalog_url,
        "PWC_MCP_ALLOWED_HOSTS": "localhost,localhost:*,127.0.0.1:*",
        "PWC_MCP_REQUEST_LIMIT": str(REQUEST_LIMIT), "PWC_MCP_CONCURRENCY_LIMIT": "64",
        "PWC_MCP_SSE_WRITE_TIMEOUT_S": str(WRITE_TIMEOUT_S), "PWC_MCP_SSE_HEARTBEAT_S": str(HEARTBEAT_S),
        "PWC_MCP_SSE_MAX_STREAMS_PER_CLIENT": "16", "LOG_LEVEL": "INFO",
    }
    workers = [start_pwc_mcp("worker", env=env, wait_path=None, log_path=logs / f"worker-{n}.log") for n in range(2)]
    gateway = start_pwc_mcp("gateway", "--processes", "2", env=env, log_path=logs / "gateway.log")
    edge: Nginx | None = None
    try:
        wait_http(f"{gateway.base_url}/health", timeout_s=60, proc=gateway.proc)
        edge = _start_nginx(tmp_path_factory.mktemp("edge"), gateway.port)
        _wait_nginx(edge)
        yield Prod(gateway, workers, edge, redis_server, env)
    finally:
        if edge is not None:
            stop_process(edge.proc)
        try:
            stop_gateway(gateway)
        finally:
            for worker in workers:
                worker.stop()


def me(name: str) -> dict[str, str]:
    return {**JSON_HEADERS, "X-PwC-MCP-Client": name}


def tool_call(name: str, arguments_json: str, request_id: int = 1) -> bytes:
    """A tools/call body with the arguments as raw JSON text (so 1e400 and NaN reach the server as sent)."""
    return (f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
            f'"params":{{"name":"{name}","arguments":{arguments_json}}}}}').encode()


def raw_exchange(port: int, data: bytes, *, wait_s: float = 3.0, host: str = "127.0.0.1") -> bytes:
    """Send ``data`` on a fresh connection and read until the server closes it or ``wait_s`` passes."""
    with socket.create_connection((host, port)) as sock:
        sock.sendall(data)
        sock.settimeout(wait_s)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except TimeoutError:
            pass
    return out


# --- item 1: 64-bit overflow in a query string -------------------------------------------------

@pytest.mark.parametrize("query", [
    "search_papers?query=x&limit=18446744073709551616", "search_papers?query=x&limit=-9223372036854775809",
    "list_conferences?year=99999999999999999999", "search_papers?query=x&page=" + "1" + "0" * 30,
    "list_trending_papers?min_velocity=1e400",
])
def test_rest_query_numbers_beyond_64_bits_get_422_json(prod: Prod, query: str) -> None:
    with prod.client(20) as http:
        response = http.get(f"{prod.edge.url}/v1/tools/{query}")
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["error"].startswith("invalid_argument:")


# --- item 2: non-finite numbers in Redis mode ----------------------------------------------------

@pytest.fixture(scope="module")
def embedded(catalog_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, "PWC_MCP_ALLOWED_HOSTS": "127.0.0.1:*"},
                           log_path=tmp_path_factory.mktemp("embedded") / "gateway.log")
    yield server
    server.stop()


@pytest.mark.parametrize("value", ["1e400", "NaN", "-Infinity"])
def test_non_finite_numbers_get_the_embedded_modes_invalid_argument(prod: Prod, embedded: ServerProcess,
                                                                   value: str) -> None:
    body = tool_call("list_trending_papers", f'{{"min_velocity":{value}}}')
    answers = []
    for base in (prod.direct, embedded.base_url):
        response = httpx.post(f"{base}/mcp", content=body, headers=me("nonfinite"), timeout=30)
        assert response.status_code == 200, response.text
        result = response.json()["result"]
        assert result["isError"]
        answers.append(result["content"][0]["text"])
    assert answers[0] == answers[1]
    assert answers[0].startswith("invalid_argument: min_velocity must")


def test_non_finite_numbers_over_sse_messages(prod: Prod) -> None:
    async def scenario() -> str:
        async with httpx2.AsyncClient(timeout=30, headers={"X-PwC-MCP-Client": "nonfinite-sse"}) as http, \
                http.stream("GET", f"{prod.direct}/sse") as stream:
            events = stream.aiter_lines()
            endpoint = await _endpoint(events)
            posted = await http.post(f"{prod.direct}{endpoint}", headers=JSON_HEADERS,
                                     content=tool_call("list_trending_papers", '{"min_velocity":NaN}', 5))
            assert posted.status_code == 202
            return json.loads(await _next_data(events))["result"]["content"][0]["text"]

    assert asyncio.run(asyncio.wait_for(scenario(), 60)).startswith("invalid_argument: min_velocity must")


async def _endpoint(lines: Any) -> str:
    async for line in lines:
        if line.startswith("data: /messages"):
            return line[6:]
    raise AssertionError("the stream ended before its endpoint event")


async def _next_data(lines: Any) -> str:
    async for line in lines:
        if line.startswith("data: "):
            return line[6:]
    raise AssertionError("the stream ended")


# --- item 3: a Redis stall does not end the cluster's streams ------------------------------------

def test_sse_streams_survive_an_8_second_redis_stall(prod: Prod) -> None:
    async def scenario() -> None:
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=60),
                                      headers={"X-PwC-MCP-Client": "stall"}) as http:
            streams, endpoints, lines = [], [], []
            for _ in range(10):
                context = http.stream("GET", f"{prod.direct}/sse")
                stream = await context.__aenter__()
                assert stream.status_code == 200
                iterator = stream.aiter_lines()
                endpoints.append(await _endpoint(iterator))
                streams.append(context)
                lines.append(iterator)
            os.kill(prod.redis.proc.pid, signal.SIGSTOP)
            try:
                await asyncio.sleep(8)
            finally:
                os.kill(prod.redis.proc.pid, signal.SIGCONT)
            await asyncio.sleep(4)  # two renewals after the stall
            for n, endpoint in enumerate(endpoints):
                body = f'{{"jsonrpc":"2.0","id":{100 + n},"method":"ping"}}'.encode()
                posted = await http.post(f"{prod.direct}{endpoint}", content=body, headers=JSON_HEADERS)
                assert posted.status_code == 202, (n, posted.status_code, posted.text)
                answer = json.loads(await asyncio.wait_for(_next_data(lines[n]), 10))
                assert answer["id"] == 100 + n
            for context in streams:
                await context.__aexit__(None, None, None)

    asyncio.run(asyncio.wait_for(scenario(), 120))


# --- item 4: a dead holder's sessions answer 404 at once -----------------------------------------

def test_messages_for_a_dead_holders_session_get_404_at_once(prod: Prod) -> None:
    async def scenario() -> None:
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=60),
                                      headers={"X-PwC-MCP-Client": "holder-death"}) as http:
            contexts, endpoints, streams = [], [], []
            holders: dict[str, bytes] = {}
            names: dict[str, str] = {}
            store = redis.Redis.from_url(prod.redis.url)
            # Streams until both gateway processes hold some: the kernel may hand one process
            # many accepts in a row, so a fixed count need not spread (session records name holders).
            while len(set(holders.values())) < 2 or len(endpoints) < 8:
                assert len(endpoints) < 64, "every stream landed on one gateway process"
                # One client identity per stream (and its messages): when the kernel hands one
                # process many accepts in a row, one identity would reach its stream cap (16).
                name = f"holder-death-{len(endpoints)}"
                context = http.stream("GET", f"{prod.direct}/sse", headers={"X-PwC-MCP-Client": name})
                stream = await context.__aenter__()
                assert stream.status_code == 200, (stream.status_code, await stream.aread())
                # Keep the line iterator: a dropped one closes the connection (httpcore closes an
                # abandoned stream), and the server frees a closed stream's session at once.
                lines = stream.aiter_lines()
                endpoint = await _endpoint(lines)
                holder = store.hget(redis_keys.sse_session(endpoint.rsplit("=", 1)[1]), "holder")
                assert isinstance(holder, bytes), endpoint
                holders[endpoint] = holder
                names[endpoint] = name
                endpoints.append(endpoint)
                contexts.append(context)
                streams.append((stream, lines))
            store.close()
            victim = prod.gateway_pids()[0]
            os.kill(victim, signal.SIGKILL)
            await _until_dead(victim)  # its sockets close when it exits, not when the signal is sent
            by_holder: dict[bytes, set[int]] = {}
            for endpoint in endpoints:
                body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tasks","arguments":{}}}'
                status = (await http.post(f"{prod.direct}{endpoint}", content=body,
                                          headers={**JSON_HEADERS, "X-PwC-MCP-Client": names[endpoint]})).status_code
                by_holder.setdefault(holders[endpoint], set()).add(status)
            # At once: the first message for each of the victim's sessions gets 404, the survivor's 202.
            assert sorted(by_holder.values(), key=sorted) == [{202}, {404}], by_holder
            for context in contexts:
                try:
                    await context.__aexit__(None, None, None)
                except httpx2.HTTPError:
                    pass

    try:
        asyncio.run(asyncio.wait_for(scenario(), 90))
    finally:
        wait_for_processes(prod, 2)


async def _until_dead(pid: int, timeout_s: float = 10.0) -> None:
    """Wait until process ``pid`` has exited: gone, or a zombie not yet reaped with no thread
    left. (Its leader turns zombie before its other threads have exited, and its sockets close
    with the last of them.)"""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            threads = len(os.listdir(f"/proc/{pid}/task"))
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return
        if state in ("Z", "X") and threads <= 1:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"process {pid} still runs {timeout_s:.0f} s after SIGKILL")


def wait_for_processes(prod: Prod, count: int) -> None:
    """Wait until gunicorn has replaced a killed gateway process."""
    deadline = time.monotonic() + 60
    while len(child_pids(prod.gateway.proc.pid)) < count and time.monotonic() < deadline:
        time.sleep(0.2)
    wait_http(f"{prod.direct}/health", timeout_s=60, ok_statuses=(200, 503))


# --- item 5: a reader that stops reading loses its stream -----------------------------------------

def test_a_stream_whose_reader_stopped_reading_is_closed_and_frees_its_session(prod: Prod) -> None:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", prod.gateway.port))
    sock.sendall(f"GET /sse HTTP/1.1\r\nHost: 127.0.0.1:{prod.gateway.port}\r\n"
                 "X-PwC-MCP-Client: stopped-reader\r\n\r\n".encode())
    head = b""
    while b"session_id=" not in head or not head.endswith(b"\n\n"):
        head += sock.recv(1)
    endpoint = head.split(b"data: ", 1)[1].split(b"\n", 1)[0].decode()
    record = redis_keys.sse_session(endpoint.split("=", 1)[1])
    store = redis.Redis.from_url(prod.redis.url)
    listing = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'  # about 44 KB, answered by the gateway
    with httpx.Client(base_url=prod.direct, headers=me("stopped-reader"), timeout=15) as http:
        status, posted = 202, 0
        while status == 202 and posted < REQUEST_LIMIT - 10:
            status = http.post(endpoint, content=listing).status_code
            posted += 1
    # Not reading: the stream's write waits on a full socket until its deadline, then the
    # connection is aborted and the session (its record and its place under the caps) freed.
    deadline = time.monotonic() + WRITE_TIMEOUT_S + 5
    while store.exists(record) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not store.exists(record), f"the session is still held after {posted} messages"
    sock.settimeout(5)
    with pytest.raises((ConnectionResetError, TimeoutError)):
        while sock.recv(65536):
            pass
        raise ConnectionResetError  # EOF: closed as well
    sock.close()


# --- item 6: every error path is counted --------------------------------------------------------

@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/v1/tools/no_such_tool", None),
    ("POST", "/v1/tools/list_tasks", b"[1, 2]"),
    ("GET", "/v1/tools/search_papers?query=x&limit=18446744073709551616", None),
    ("POST", "/messages?session_id=guessed", b'{"jsonrpc":"2.0","id":1,"method":"ping"}'),
    ("GET", "/v1/nothing/here", None),
])
def test_error_paths_count_against_the_client_limit(prod: Prod, method: str, path: str, body: bytes | None) -> None:
    who = "count-" + "".join(c for c in f"{method}{path}" if c.isalnum())[:40]
    with httpx.Client(base_url=prod.direct, headers=me(who), timeout=15) as http:
        statuses = [http.request(method, path, content=body).status_code for _ in range(REQUEST_LIMIT + 5)]
    assert statuses[0] in (400, 404, 422)
    assert statuses[-1] == 429, statuses[-10:]
    if path.startswith("/messages"):
        assert "sse_message status=404" in prod.gateway.log_text()  # logged, content-free


# --- item 9: a refused /messages POST also reaches the stream -------------------------------------

def test_python_sdk_over_sse_raises_at_once_on_a_429(prod: Prod) -> None:
    from mcp import Client, MCPError
    from mcp.client.sse import sse_client

    who = "sdk-429"

    async def scenario() -> float:
        async with Client(sse_client(f"{prod.direct}/sse", headers={"X-PwC-MCP-Client": who}), mode="legacy") as c:
            async with httpx2.AsyncClient(base_url=prod.direct, headers=me(who)) as http:
                for _ in range(REQUEST_LIMIT):
                    await http.get("/v1/tools/no_such_tool")
            started = time.monotonic()
            with pytest.raises(MCPError) as raised:
                await c.call_tool("get_task", {"task": "image-classification"})
            assert "Rate limit exceeded" in str(raised.value)
            return time.monotonic() - started

    assert asyncio.run(asyncio.wait_for(scenario(), 60)) < 5


# --- item 8: every refusal is JSON in its surface's shape -----------------------------------------

def test_host_and_origin_refusals_are_json_rpc_and_rest(prod: Prod) -> None:
    mcp = httpx.post(f"{prod.direct}/mcp", content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                     headers={**JSON_HEADERS, "Host": "evil.example"})
    assert (mcp.status_code, refusal_error(mcp.content)) == (421, "invalid_host")
    origin = httpx.post(f"{prod.direct}/mcp", content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                        headers={**JSON_HEADERS, "Origin": "https://evil.example"})
    assert (origin.status_code, refusal_error(origin.content)) == (403, "invalid_origin")
    rest = httpx.get(f"{prod.direct}/v1/tools/list_tasks", headers={"Origin": "https://evil.example"})
    assert rest.status_code == 403 and rest.json()["error"].startswith("invalid_origin:")


def test_python_sdk_reads_a_host_refusal(prod: Prod) -> None:
    from mcp import Client, MCPError
    from mcp.client.streamable_http import streamable_http_client

    async def scenario() -> None:
        async with httpx2.AsyncClient(headers={"Host": "evil.example"}) as http:
            with pytest.raises((MCPError, ExceptionGroup)) as raised:
                async with Client(streamable_http_client(f"{prod.direct}/mcp", http_client=http)) as c:
                    await c.list_tools()
            errors = raised.value.exceptions if isinstance(raised.value, ExceptionGroup) else [raised.value]
            while any(isinstance(e, ExceptionGroup) for e in errors):
                errors = [x for e in errors for x in (e.exceptions if isinstance(e, ExceptionGroup) else [e])]
            assert any(isinstance(e, MCPError) and "Invalid Host header" in str(e) for e in errors), errors

    asyncio.run(asyncio.wait_for(scenario(), 30))


@pytest.mark.parametrize(("method", "path", "status"), [
    ("GET", "/v1/tools/list_tasks/extra", 404), ("GET", "/v1/nope", 404), ("PUT", "/v1/tools/list_tasks", 405),
    ("DELETE", "/v1/tools", 405), ("GET", "/messages", 405), ("POST", "/sse", 405), ("GET", "/nowhere", 404),
])
def test_router_refusals_are_json(prod: Prod, method: str, path: str, status: int) -> None:
    response = httpx.request(method, f"{prod.direct}{path}", headers={"X-PwC-MCP-Client": "router"})
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    if path.startswith("/v1/"):
        assert error.split(":", 1)[0] in ("not_found", "method_not_allowed")
    if status == 405:
        assert response.headers["Allow"]


@pytest.mark.parametrize("request_bytes", [
    b"FOO<script> /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Bad: \x01secret-header\r\n\r\n",
    b"GET /" + b"a" * 10000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
])
def test_unparseable_requests_get_json_400_without_an_echo(prod: Prod, request_bytes: bytes) -> None:
    answer = raw_exchange(prod.gateway.port, request_bytes)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.") and b" 400 " in head.split(b"\r\n")[0]
    assert b"application/json" in head
    assert json.loads(body)["error"].startswith("bad_request:")
    assert b"script" not in body and b"secret" not in body and b"aaaa" not in body


def test_too_many_streams_is_a_json_rpc_refusal(prod: Prod) -> None:
    async def scenario() -> None:
        async with httpx2.AsyncClient(timeout=30, headers={"X-PwC-MCP-Client": "stream-cap"}) as http:
            contexts = []
            for _ in range(16):
                context = http.stream("GET", f"{prod.direct}/sse")
                assert (await context.__aenter__()).status_code == 200
                contexts.append(context)
            refused = await http.get(f"{prod.direct}/sse")
            assert refused.status_code == 429 and refused.headers["Retry-After"]
            assert refusal_error(refused.content) == "too_many_streams"
            for context in contexts:
                await context.__aexit__(None, None, None)

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_nginx_own_refusals_are_json(prod: Prod) -> None:
    port = prod.edge.site.https_port
    import ssl

    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE

    def tls_exchange(data: bytes) -> tuple[int, bytes, bytes]:
        with socket.create_connection(("127.0.0.1", port)) as raw, \
                context.wrap_socket(raw, server_hostname="localhost") as sock:
            sock.sendall(data)
            sock.settimeout(5)
            out = b""
            try:
                while chunk := sock.recv(65536):
                    out += chunk
            except (TimeoutError, ssl.SSLError):
                pass
        head, _, body = out.partition(b"\r\n\r\n")
        return int(head.split(b" ")[1]), head, body

    cases = {
        400: b"GET /mcp HTTP/1.1\r\nHost: localhost\r\nHost: other\r\n\r\n",
        -400: b"GET /mcp HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n",
        -401: b"G<T /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n",
        414: b"GET /v1/tools/list_tasks?x=" + b"a" * 10000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n",
        501: b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: foo\r\n\r\n",
    }
    for status, data in cases.items():
        got, head, body = tls_exchange(data)
        assert got == (400 if status < 0 else status), (status, head)
        assert b"application/json" in head, head
        assert json.loads(body)["error"], body


def test_nginx_refusals_under_v1_follow_the_rest_schema(prod: Prod) -> None:
    with prod.client(30) as http:
        too_large = http.post(f"{prod.edge.url}/v1/tools/list_tasks", content=b"{" + b" " * (3 * 1024 * 1024) + b"}",
                              headers={"Content-Type": "application/json"})
        assert too_large.status_code == 413 and too_large.json()["error"].startswith("request_too_large:")
        statuses = [http.get(f"{prod.edge.url}/v1/tools/no_such_tool") for _ in range(80)]
    limited = [r for r in statuses if r.status_code == 429]
    assert limited, [r.status_code for r in statuses]
    assert limited[0].json()["error"].startswith("rate_limited:") and limited[0].headers["Retry-After"] == "1"
    with prod.client(31) as http:  # outside /v1/ nginx's refusals stay JSON-RPC
        # /mcp has its own zone (burst 120): past it at full speed.
        mcp_limited = [http.post(f"{prod.edge.url}/mcp", content=b"{}", headers=JSON_HEADERS) for _ in range(200)]
    assert refusal_error(next(r for r in mcp_limited if r.status_code == 429).content) == "rate_limit_exceeded"


# --- item 7: /openapi.json is limited, cached and compressed at the edge ---------------------------

def test_openapi_is_limited_revalidated_and_compressed_at_the_edge(prod: Prod) -> None:
    with prod.client(40) as http:
        first = http.get(f"{prod.edge.url}/openapi.json", headers={"Accept-Encoding": "gzip"})
        assert first.status_code == 200 and first.headers["content-encoding"] == "gzip"
        assert first.json()["servers"] == [{"url": prod.edge.url}]
        etag = first.headers["etag"]
        again = http.get(f"{prod.edge.url}/openapi.json", headers={"If-None-Match": etag})
        assert again.status_code == 304 and not again.content
        flood = [http.get(f"{prod.edge.url}/openapi.json", headers={"If-None-Match": etag}).status_code
                 for _ in range(60)]
    assert 429 in flood, flood


# --- item 11: logs, control socket, startup lines --------------------------------------------------

def test_the_access_log_never_writes_a_client_chosen_method(prod: Prod) -> None:
    with prod.client(50) as http:
        http.request("XSECRETMETHOD", f"{prod.edge.url}/mcp")
        http.request("GET", f"{prod.edge.url}/health")
    time.sleep(0.5)
    log = prod.edge.log_text()
    assert "XSECRETMETHOD" not in log
    assert " other /mcp " in log and " GET /health " in log


def test_gunicorn_startup_lines_appear_once_and_no_control_socket(prod: Prod) -> None:
    log = prod.gateway.log_text()
    assert log.count("Starting gunicorn") == 1
    assert log.count("gateway listening on") == 1
    inodes = set()
    for pid in [prod.gateway.proc.pid, *child_pids(prod.gateway.proc.pid)]:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            target = os.readlink(fd) if fd.is_symlink() else ""
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    unix = Path("/proc/net/unix").read_text().splitlines()[1:]
    paths = [line.split()[-1] for line in unix if len(line.split()) >= 8 and line.split()[6] in inodes]
    assert not [p for p in paths if "gunicorn" in p], paths


def test_nginx_readme_counts_the_published_routes() -> None:
    from tests.ops.test_nginx import SITE

    site = SITE.read_text(encoding="utf-8")
    published = [line for line in site.splitlines() if line.strip().startswith("location ")
                 and "@" not in line and "/pwc-mcp-errors/" not in line and line.strip() != "location / {"]
    readme = (SITE.parent / "README.md").read_text(encoding="utf-8")
    assert f"publishes only {len(published)} routes" in readme
    assert f"only {len(published)} routes are published" in (SITE.parents[1] / "README.md").read_text(encoding="utf-8")


# --- item 12: slow headers and bodies straight to the gateway -------------------------------------

def test_slow_headers_and_bodies_are_bounded_at_the_gateway(prod: Prod) -> None:
    from gateway.admission.checks import BODY_TIMEOUT_S
    from gateway.process.connection import HEADER_TIMEOUT_S

    port = prod.gateway.port
    partial_body = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                    "Content-Length: 1000\r\nX-PwC-MCP-Client: slow\r\n\r\n{\"jsonrpc\"").encode()
    partial_head = f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: a".encode()
    socks = []
    for data in [partial_body] * 50 + [partial_head] * 50:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(data)
        socks.append(sock)
    deadline = time.monotonic() + max(BODY_TIMEOUT_S, HEADER_TIMEOUT_S) + 5
    open_socks = list(socks)
    answers = []
    while open_socks and time.monotonic() < deadline:
        for sock in list(open_socks):
            sock.settimeout(0.05)
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            answers.append(chunk)
            if not chunk or b"request_incomplete" in chunk:
                open_socks.remove(sock)
    for sock in socks:
        sock.close()
    assert not open_socks, f"{len(open_socks)} connections still open"
    assert sum(b"request_incomplete" in a for a in answers) == 50


# --- Also: langchain-mcp-adapters over SSE through nginx --------------------------------------------

LANGCHAIN_SCRIPT = textwrap.dedent("""
    import asyncio, sys
    import httpx
    from langchain_mcp_adapters.client import MultiServerMCPClient

    def factory(headers=None, timeout=None, auth=None):
        transport = httpx.AsyncHTTPTransport(local_address=sys.argv[2], verify=False)
        return httpx.AsyncClient(headers=headers, timeout=timeout, auth=auth, verify=False, transport=transport)

    async def main():
        client = MultiServerMCPClient({"pwc": {"url": sys.argv[1], "transport": "sse",
                                               "httpx_client_factory": factory}})
        tools = {tool.name: tool for tool in await client.get_tools()}
        # One session per call, back to back: past the per-client stream cap (8) only when a
        # closed stream frees its place at once.
        for n in range(12):
            answer = await tools["get_task"].ainvoke({"task": "image-classification"})
            assert "image" in str(answer).lower(), answer
        print("calls=12 ok")

    asyncio.run(main())
""")


def test_langchain_mcp_adapters_over_sse_through_nginx(prod: Prod, tmp_path: Path) -> None:
    uv = subprocess.run(["uv", "--version"], capture_output=True, check=False)
    if uv.returncode != 0:
        pytest.skip("uv is not installed")
    script = tmp_path / "langchain_client.py"
    script.write_text(LANGCHAIN_SCRIPT, encoding="utf-8")
    # An isolated environment: langchain-mcp-adapters pins an older mcp than this project.
    run = subprocess.run(["uv", "run", "--no-project", "--with", "langchain-mcp-adapters==0.3.2", "python",
                          str(script), f"{prod.edge.url}/sse", ip(60)],
                         capture_output=True, text=True, timeout=300, check=False, env={**os.environ})
    if run.returncode != 0 and "No solution found" in run.stderr + run.stdout:
        pytest.skip("langchain-mcp-adapters could not be installed")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "calls=12 ok" in run.stdout


# --- item 8: a client generated from /openapi.json reads every refusal ------------------------------

GENERATED_CLIENT_SCRIPT = textwrap.dedent("""
    import json, sys
    import httpx
    from pwc_rest import Client
    from pwc_rest.api.tools import (cite_papers_get, find_in_paper_get, get_sota_history_get, list_tasks_get,
                                    search_papers_get, verify_references_get)
    from pwc_rest.models import Error

    edge, direct, address = sys.argv[1], sys.argv[2], sys.argv[3]
    seen = {}

    def error_of(response):
        assert isinstance(response.parsed, Error), (response.status_code, response.content[:200])
        return [response.status_code, response.parsed.error]

    foreign = Client(base_url=direct, headers={"Host": "evil.example"})
    seen["host"] = error_of(list_tasks_get.sync_detailed(client=foreign))
    origin = Client(base_url=direct, headers={"Origin": "https://evil.example"})
    seen["origin"] = error_of(list_tasks_get.sync_detailed(client=origin))
    plain = Client(base_url=direct, headers={"X-PwC-MCP-Client": "generated"})
    seen["overflow"] = error_of(search_papers_get.sync_detailed(client=plain, query="x", limit=2**64))
    # The tools added since the seed, through the generated functions (status and the JSON body).
    calls = {"cite": cite_papers_get.sync_detailed(client=plain, papers=["1706.03762", "1512.03385"]),
             "verify": verify_references_get.sync_detailed(client=plain, references=["arXiv:2103.14030"]),
             "find": find_in_paper_get.sync_detailed(client=plain, paper="1706.03762", query="label smoothing"),
             "history": get_sota_history_get.sync_detailed(client=plain, benchmark="ImageNet")}
    seen["added"] = {name: [r.status_code, json.loads(r.content)] for name, r in calls.items()}
    edge_client = Client(base_url=edge, verify_ssl=False, httpx_args={
        "transport": httpx.HTTPTransport(local_address=address, verify=False)})
    for _ in range(80):
        response = list_tasks_get.sync_detailed(client=edge_client, limit=1)
        if response.status_code == 429:
            seen["edge_429"] = error_of(response)
            break
    print(json.dumps(seen))
""")


def test_a_generated_openapi_client_reads_every_refusal(prod: Prod, tmp_path: Path) -> None:
    document = tmp_path / "openapi.json"
    document.write_bytes(httpx.get(f"{prod.direct}/openapi.json").content)
    tool = ["uv", "run", "--no-project", "--with", "openapi-python-client==0.29.1"]
    generated = subprocess.run([*tool, "openapi-python-client", "generate", "--path", str(document), "--meta", "none",
                                "--output-path", str(tmp_path / "pwc_rest")], capture_output=True, text=True,
                               timeout=300, check=False, cwd=tmp_path)
    if generated.returncode != 0 and "No solution found" in generated.stderr:
        pytest.skip("openapi-python-client could not be installed")
    assert generated.returncode == 0, generated.stderr[-2000:]
    script = tmp_path / "use_client.py"
    script.write_text(GENERATED_CLIENT_SCRIPT, encoding="utf-8")
    run = subprocess.run([*tool, "python", str(script), prod.edge.url, prod.direct, ip(70)], capture_output=True,
                         text=True, timeout=300, check=False, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["host"][0] == 421 and seen["host"][1].startswith("invalid_host:")
    assert seen["origin"][0] == 403 and seen["origin"][1].startswith("invalid_origin:")
    assert seen["overflow"][0] == 422 and seen["overflow"][1].startswith("invalid_argument:")
    assert seen["edge_429"][0] == 429 and seen["edge_429"][1].startswith("rate_limited:")
    added = seen["added"]
    assert all(status == 200 for status, _ in added.values()), added
    assert [item["key"] for item in added["cite"][1]["items"]] == ["vaswani2017attention", "he2016deep"]
    assert added["verify"][1]["items"][0]["status"] == "verified"
    assert added["find"][1]["passages"] and added["history"][1]["images"][0]["mimeType"] == "image/png"

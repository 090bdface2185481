"""The shipped nginx site, rendered for this machine and run by a real nginx in front of a real gateway."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO_ROOT, ServerProcess, start_pwc_mcp
from tests.helpers import free_port, stop_process

SITE = REPO_ROOT / "nginx" / "pwc-mcp.conf"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

pytestmark = pytest.mark.slow


@dataclass
class RenderedSite:
    conf: Path
    prefix: Path
    https_port: int


def _certificate(directory: Path) -> tuple[Path, Path]:
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )
    return cert, key


def render_site(directory: Path, gateway_port: int, *, https_port: int | None = None,
                overrides: dict[str, str] | None = None, worker_connections: int = 256) -> RenderedSite:
    """Render the site for loopback ports and throwaway certificates, wrapped in a minimal nginx.conf.

    ``overrides`` replaces further exact snippets of the shipped file (test limits); each
    must occur in it. Its logs go to ``directory/logs``.
    """
    if not Path(NGINX).exists():
        pytest.fail("nginx is not installed; .ci/run installs it")
    cert, key = _certificate(directory)
    http_port, https_port = free_port(), https_port or free_port()
    site = SITE.read_text(encoding="utf-8")
    replacements = {
        "listen 80;": f"listen 127.0.0.1:{http_port};",
        "listen 443 ssl http2;": f"listen 127.0.0.1:{https_port} ssl http2;",
        "server 127.0.0.1:7860": f"server 127.0.0.1:{gateway_port}",
        "/etc/letsencrypt/live/mcp.example.org/fullchain.pem": str(cert),
        "/etc/letsencrypt/live/mcp.example.org/privkey.pem": str(key),
        "/var/log/nginx/": f"{directory}/logs/",
        **(overrides or {}),
    }
    for old, new in replacements.items():
        assert old in site, f"the shipped site no longer contains {old!r}"
        site = site.replace(old, new)
    site = "\n".join(line for line in site.splitlines() if "listen [::]" not in line)
    (directory / "site.conf").write_text(site, encoding="utf-8")
    (directory / "logs").mkdir(exist_ok=True)
    conf = directory / "nginx.conf"
    # Started as root, nginx's workers would run as nobody, who cannot write the private temp dirs.
    user = "user root;" if os.geteuid() == 0 else ""
    conf.write_text(
        f"""
{user}
pid {directory}/nginx.pid;
error_log {directory}/logs/error.log warn;
worker_processes 1;
events {{ worker_connections {worker_connections}; }}
http {{
    access_log off;
    client_body_temp_path {directory}/body;
    proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi;
    uwsgi_temp_path {directory}/uwsgi;
    scgi_temp_path {directory}/scgi;
    include {directory}/site.conf;
}}
""",
        encoding="utf-8",
    )
    return RenderedSite(conf=conf, prefix=directory, https_port=https_port)


def test_the_site_configuration_passes_nginx_t(tmp_path: Path) -> None:
    site = render_site(tmp_path, gateway_port=free_port())
    result = subprocess.run([NGINX, "-t", "-c", str(site.conf), "-p", str(site.prefix)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "test is successful" in result.stderr


@pytest.fixture(scope="module")
def gateway(catalog_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """An embedded-mode gateway allowing 3 requests/min per client, behind which nginx runs.

    The default Host allowlist (``localhost:*``): the site forwards ``Host $host``, without a port."""
    logs = tmp_path_factory.mktemp("gateway")
    server = start_pwc_mcp(
        "gateway",
        env={"PWC_API_URL": catalog_url, "PWC_MCP_REQUEST_LIMIT": "3", "PWC_MCP_ALLOWED_HOSTS": ""},
        log_path=logs / "gateway.log",
    )
    yield server
    server.stop()


@pytest.fixture(scope="module")
def nginx_url(gateway: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    site = render_site(tmp_path_factory.mktemp("nginx"), gateway.port)
    proc = subprocess.Popen(
        [NGINX, "-c", str(site.conf), "-p", str(site.prefix), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    url = f"https://localhost:{site.https_port}"
    try:
        wait_http_tls(f"{url}/.well-known/mcp", proc)
        yield url
    finally:
        stop_process(proc)


def wait_http_tls(url: str, proc: subprocess.Popen) -> None:
    for _ in range(100):
        if proc.poll() is not None:
            raise RuntimeError(f"nginx exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            if httpx.get(url, verify=False, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})


def test_mcp_works_through_nginx(nginx_url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    response = httpx.post(f"{nginx_url}/mcp", json=body, headers=HEADERS, verify=False)
    assert response.status_code == 200, response.text
    assert response.json()["result"]["protocolVersion"] == "2025-11-25"


def test_the_gateway_sees_the_connecting_address_not_the_clients_forwarded_header(nginx_url: str) -> None:
    # Limit is 3/min per identity. Each request claims a different X-Forwarded-For (and a
    # client name); if either were trusted, no request would be limited.
    responses = [
        httpx.post(f"{nginx_url}/mcp", content=PING, verify=False,
                   headers={**HEADERS, "X-Forwarded-For": f"198.51.100.{n}", "X-PwC-MCP-Client": f"c{n}"})
        for n in range(5)
    ]
    statuses = [response.status_code for response in responses]
    assert statuses[-1] == 429, statuses
    assert statuses.count(200) <= 3
    # The gateway's reason phrase (the refusal's message) passes nginx, for clients that show only it.
    assert responses[-1].reason_phrase.startswith("Rate limit exceeded (requests per client per minute)")


def test_a_body_over_2_mib_is_refused_at_the_edge(nginx_url: str) -> None:
    response = httpx.post(f"{nginx_url}/mcp", content=b"x" * (2 * 1024 * 1024 + 1), headers=HEADERS, verify=False)
    assert response.status_code == 413


def test_plain_http_on_the_tls_port_gets_json_saying_to_use_https(nginx_url: str) -> None:
    response = httpx.get(nginx_url.replace("https://", "http://", 1) + "/health")
    assert response.status_code == 400
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.json()["error"].startswith("https_required:")


@pytest.mark.parametrize("path", ["/metrics", "/", "/mcp/", "/admin"])
def test_only_the_public_routes_are_published(nginx_url: str, path: str) -> None:
    assert httpx.get(f"{nginx_url}{path}", verify=False).status_code == 404


def own_client(address: str) -> httpx.Client:
    """A client speaking from its own loopback address: its own budget under the 3/min limit."""
    return httpx.Client(verify=False, transport=httpx.HTTPTransport(local_address=address, verify=False))


def test_health_and_docs_are_published(nginx_url: str) -> None:
    with own_client("127.0.0.2") as client:
        assert client.get(f"{nginx_url}/health").status_code in (200, 503)
        assert client.head(f"{nginx_url}/health").status_code in (200, 503)
        assert client.get(f"{nginx_url}/docs", headers={"Accept": "application/json"}).status_code == 200
        # The documents count against the client's limit (3/min here), at the gateway too.
        statuses = [client.get(f"{nginx_url}/openapi.json").status_code for _ in range(3)]
        assert statuses == [200, 200, 429]


def test_docs_behind_nginx_name_the_https_endpoint(nginx_url: str) -> None:
    # nginx forwards Host ($host: no port), X-Forwarded-Proto and X-Forwarded-Port; the gateway
    # trusts them from loopback, so a site on a non-443 port keeps its port (issue 21 item 11).
    base = nginx_url  # https://localhost:<port>
    with own_client("127.0.0.3") as client:
        docs = client.get(f"{nginx_url}/docs", headers={"Accept": "application/json"}).json()
        assert docs["endpoint_url"] == f"{base}/mcp"
        discovery = client.get(f"{nginx_url}/.well-known/mcp").json()
        assert discovery["documentation_url"] == f"{base}/docs"
        assert discovery["setup_url"] == f"{base}/docs#connect"  # the self-hosted server's own page
        card = client.get(f"{nginx_url}/.well-known/mcp/server-card.json").json()  # published, counted
        assert [remote["url"] for remote in card["remotes"]] == [f"{base}/mcp", f"{base}/sse"]
        openapi = client.get(f"{nginx_url}/openapi.json", headers={"Accept-Encoding": "gzip"})
        assert openapi.headers["Content-Encoding"] == "gzip"  # httpx inflates it
        assert openapi.json()["servers"] == [{"url": base}]


def test_the_readme_names_every_route_the_site_publishes() -> None:
    """README "Deploy" step 5 lists the proxied routes of the shipped site, no more, no fewer."""
    import re

    site = SITE.read_text(encoding="utf-8")
    published = {path for path in re.findall(r"location =? ?(/[^ ]*) \{", site)
                 if path != "/" and not path.startswith("/pwc-mcp-errors/")}
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    step = next(line for line in readme.splitlines() if line.startswith("# 5. nginx:"))
    assert set(re.findall(r"(/[a-z0-9./-]+)", step.split(":", 2)[2])) == published
    assert f"only {len(published)} routes" in step

"""``/docs`` for someone connecting, and ``/.well-known/mcp`` pointing at it (issue 12 item 7).

The page is checked as a browser renders it: a real headless Chromium loads ``/docs``
from a running ``pwc-mcp gateway`` and the test reads the DOM it dumps.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import fastjsonschema
import httpx
import pytest
from aiohttp.test_utils import make_mocked_request
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from gateway.admission.security import SecurityPolicy
from gateway.surfaces.docs import DocsPage, docs_document
from gateway.surfaces.docs_html import (
    EXAMPLE_CHART_CALL,
    example_chart,
    parameter_rows,
    render_html,
)
from gateway.surfaces.public_url import PublicUrl
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools import registry
from pwc_mcp_core.tools.examples import EXAMPLE_CALLS
from tests.conftest import ServerProcess, start_pwc_mcp

REPO = Path(__file__).resolve().parents[3]
GATEWAY_CHART = (REPO / "gateway" / "static" / "sota-history-imagenet.png").read_bytes()
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
TOOLS = registry.tool_list_result()["tools"]


class Peer:
    """A transport whose peer address make_mocked_request reports as ``request.remote``."""

    def __init__(self, address: str) -> None:
        self.address = address

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return (self.address, 40000) if name == "peername" else default


def mocked(host: str, peer: str = "127.0.0.1", **headers: str):
    return make_mocked_request("GET", "/docs", headers={"Host": host, **headers}, transport=Peer(peer))


@pytest.fixture
def public_url() -> PublicUrl:
    policy = SecurityPolicy.from_lists(["mcp.example.org", "localhost:*"], [])
    return PublicUrl(policy, (), 7860)


@pytest.mark.parametrize(("host", "peer", "headers", "expected"), [
    pytest.param("mcp.example.org", "127.0.0.1", {}, "http://mcp.example.org", id="allowlisted"),
    pytest.param("MCP.example.org", "127.0.0.1", {"X-Forwarded-Proto": "https"}, "https://mcp.example.org",
                 id="proxied-https-from-loopback"),
    pytest.param("mcp.example.org", "203.0.113.9", {"X-Forwarded-Proto": "https"}, "http://mcp.example.org",
                 id="forwarded-proto-from-a-stranger-ignored"),
    pytest.param("evil.example.com", "127.0.0.1", {}, "http://mcp.example.org", id="forged-host-replaced"),
    pytest.param("localhost:9999", "127.0.0.1", {"X-Forwarded-Proto": "gopher"}, "http://localhost:9999",
                 id="any-port-entry-and-unknown-proto"),
    # nginx forwards `Host $host` (no port), the scheme and its own port, never the upstream's.
    pytest.param("localhost", "127.0.0.1", {"X-Forwarded-Proto": "https", "X-Forwarded-Port": "443"},
                 "https://localhost", id="nginx-host-without-port"),
    pytest.param("localhost", "127.0.0.1", {"X-Forwarded-Proto": "https", "X-Forwarded-Port": "8443"},
                 "https://localhost:8443", id="nginx-on-another-port"),
    pytest.param("localhost", "127.0.0.1", {"X-Forwarded-Port": "\u00b2"}, "http://localhost",
                 id="superscript-forwarded-port-ignored"),
    pytest.param("localhost", "127.0.0.1", {"X-Forwarded-Port": "\u0668\u0660\u0668\u0660"}, "http://localhost",
                 id="arabic-indic-forwarded-port-ignored"),
    pytest.param("localhost", "127.0.0.1", {"X-Forwarded-Port": "99999999"}, "http://localhost",
                 id="out-of-range-forwarded-port-ignored"),
    pytest.param("localhost:99999999", "127.0.0.1", {}, "http://mcp.example.org", id="out-of-range-host-port"),
    pytest.param("localhost:\u00b2", "127.0.0.1", {}, "http://mcp.example.org", id="superscript-host-port"),
    pytest.param("localhost:\u0668\u0660", "127.0.0.1", {}, "http://mcp.example.org", id="arabic-indic-host-port"),
    pytest.param("localhost:08000", "127.0.0.1", {}, "http://localhost:8000", id="port-normalized"),
])
def test_the_base_url_respects_the_host_allowlist_and_trusted_proxies(public_url: PublicUrl, host: str, peer: str,
                                                                      headers: dict, expected: str) -> None:
    assert public_url.base(mocked(host, peer, **headers)) == expected


def test_the_json_document_carries_connection_facts_limits_and_both_versions() -> None:
    core = CoreSettings(cursor_keys=("k",), request_limit=42, semantic_limit=7, max_body_bytes=1048576)
    doc = DocsPage(TOOLS, core).document("https://mcp.example.org")
    assert doc["endpoint"] == "/mcp" and doc["endpoint_url"] == "https://mcp.example.org/mcp"
    assert doc["docs_url"] == "https://mcp.example.org/docs"
    assert doc["protocol_versions"] == ["2025-11-25", "2026-07-28"]
    assert doc["limits"]["requests_per_minute"] == 42 and doc["limits"]["semantic_searches_per_minute"] == 7
    assert doc["limits"]["max_body_bytes"] == 1048576
    configs = doc["configurations"]
    assert configs["vscode"] == {"servers": {"pwc": {"type": "http", "url": "https://mcp.example.org/mcp"}}}
    assert configs["streamable_http"]["mcpServers"]["pwc"]["url"] == "https://mcp.example.org/mcp"
    assert "https://mcp.example.org/mcp" in configs["claude_desktop"]["mcpServers"]["pwc"]["args"]
    assert configs["stdio"]["mcpServers"]["pwc"]["args"][-1] == "stdio"
    assert "--transport http" in configs["inspector_command"]
    assert {t["name"] for t in doc["resource_templates"]} == {"paper-info", "paper-markdown", "paper-citation",
                                                                "task", "benchmark"}
    assert {p["name"] for p in doc["prompts"]} == {"find_papers", "compare_leaderboard", "survey_task"}


def test_every_example_call_is_valid_for_its_tool() -> None:
    assert set(EXAMPLE_CALLS) == {t["name"] for t in TOOLS}
    for tool in docs_document(TOOLS)["tools"]:
        fastjsonschema.compile(tool["inputSchema"])(tool["example"])


def test_parameter_rows_show_type_required_default_and_constraints() -> None:
    search = next(t for t in TOOLS if t["name"] == "search_papers")
    rows = {r["name"]: r for r in parameter_rows(search["inputSchema"])}
    assert rows["query"]["required"] == "yes" and rows["query"]["type"] == "string"
    assert rows["limit"]["default"] == "10" and "1–25" in rows["limit"]["description"]
    assert 'one of "hybrid", "keyword", "semantic"' in rows["mode"]["description"]


def test_hostile_text_is_escaped_everywhere() -> None:
    hostile = '"><script>alert(1)</script><img src=x onerror=alert(1)>'
    tool = {"name": f"t{hostile}", "title": hostile, "description": hostile,
            "inputSchema": {"type": "object", "required": [hostile],
                            "properties": {hostile: {"type": "string", "description": hostile, "default": hostile,
                                                     "enum": [hostile]}}}}
    doc = {**docs_document([tool]), "endpoint_url": f"http://h/{hostile}", "docs_url": "x"}
    from gateway.surfaces.docs import configurations

    page = render_html({**doc, "configurations": configurations(doc["endpoint_url"])})
    # The one <img> is the example chart (a data: URI); hostile text never makes another.
    assert "<script" not in page and page.count("<img") == 1 and 'onerror=alert(1)>' not in page
    assert "&lt;script&gt;" in page


class Dom(HTMLParser):
    """Collects, from Chromium's dumped DOM, the ids, the tables by class and code texts."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.tables: dict[str, int] = {}
        self.texts: dict[str, str] = {}
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if attributes.get("id"):
            self.ids.add(attributes["id"] or "")
            self._open.append(attributes["id"] or "")
        if tag == "table":
            cls = attributes.get("class") or ""
            self.tables[cls] = self.tables.get(cls, 0) + 1

    def handle_data(self, data: str) -> None:
        for element_id in self._open:
            self.texts[element_id] = self.texts.get(element_id, "") + data

    def handle_endtag(self, tag: str) -> None:
        if tag == "code" and self._open and self._open[-1] == "endpoint-url":
            self._open.pop()


@pytest.fixture(scope="module")
def gateway(catalog_url: str, tmp_path_factory: pytest.TempPathFactory):
    """One gateway process over the sample catalog for the module (request limit 77, shown on the page)."""
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, "PWC_MCP_REQUEST_LIMIT": "77",
                                           "PWC_MCP_SEMANTIC_LIMIT": "10000"},
                           log_path=tmp_path_factory.mktemp("docs-gateway") / "gateway.log")
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.slow  # starts a headless browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_headless_chromium_renders_the_docs_with_tool_tables(gateway, tmp_path: Path) -> None:
    url = f"{gateway.base_url}/docs"
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'chromium'}",
         "--dump-dom", url],
        capture_output=True, text=True, timeout=90, check=True).stdout
    parsed = Dom()
    parsed.feed(dom)
    assert parsed.texts["endpoint-url"] == f"{gateway.base_url}/mcp"
    assert parsed.tables["params"] == len(TOOLS) - sum(1 for t in TOOLS if not t["inputSchema"].get("properties"))
    assert {f"tool-{t['name']}" for t in TOOLS} <= parsed.ids
    assert {"connect", "config-http", "config-stdio", "config-claude-desktop", "config-vscode", "config-inspector",
            "protocols", "limits", "resource-templates", "prompts", "other-surfaces", "tools"} <= parsed.ids
    assert f'href="{gateway.base_url}/openapi.json"' in dom and f"{gateway.base_url}/sse" in dom
    assert parsed.tables["resource-templates"] == parsed.tables["prompts"] == parsed.tables["limits"] == 1
    assert "2025-11-25" in dom and "2026-07-28" in dom and "<code>77</code>" in dom
    assert "<script" not in dom
    assert {"example-chart", "example-chart-image"} <= parsed.ids and 'src="data:image/png;base64,' in dom


def test_the_page_shows_the_example_chart_and_the_call_that_makes_it() -> None:
    """Issue 32 item 5: the chart inlined from gateway/static, captioned with its tool and arguments."""
    page = render_html({**docs_document(TOOLS), "endpoint_url": "http://h/mcp"})
    section = page.split('<section id="example-chart">', 1)[1].split("</section>", 1)[0]
    src = section.split('src="', 1)[1].split('"', 1)[0]
    assert src == example_chart() and base64.b64decode(src.removeprefix("data:image/png;base64,")) == GATEWAY_CHART
    assert ("get_sota_history", EXAMPLE_CALLS["get_sota_history"]) == EXAMPLE_CHART_CALL
    assert "<code>get_sota_history</code>" in section and "&#34;benchmark&#34;: &#34;ImageNet&#34;" in section
    assert "<figcaption>" in section and "ui://pwc/sota-history.html" in section


def test_the_example_chart_is_what_the_tool_draws_on_the_sample_catalog(catalog_url: str, tmp_path: Path) -> None:
    """The gateway's copy, the README's copy and a fresh render of the same call are one PNG."""
    from tests.pwc.runner import run_pwc

    target = tmp_path / "chart.png"
    result = run_pwc(catalog_url, "benchmark", "history", "--name", "ImageNet", "--chart", str(target))
    assert result.code == 0, result.err
    assert target.read_bytes() == GATEWAY_CHART == (REPO / "docs" / "sota-history-imagenet.png").read_bytes()


def test_well_known_and_docs_json_point_at_this_server(gateway) -> None:
    discovery = httpx.get(f"{gateway.base_url}/.well-known/mcp", timeout=10).json()
    assert discovery["documentation_url"] == f"{gateway.base_url}/docs"
    docs = httpx.get(discovery["documentation_url"], headers={"Accept": "application/json"}, timeout=10).json()
    assert docs["endpoint_url"] == f"{gateway.base_url}/mcp" and len(docs["tools"]) == len(TOOLS)
    forged = httpx.get(f"{gateway.base_url}/.well-known/mcp", headers={"Host": "evil.example.com"}, timeout=10)
    assert "evil" not in forged.json()["documentation_url"]


async def test_every_documented_example_call_works_on_the_sample_catalog(gateway: ServerProcess) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        docs = (await http.get(f"{gateway.base_url}/docs?format=json")).json()
    assert len(docs["tools"]) < 77  # one call each, within the module gateway's request limit
    async with Client(streamable_http_client(docs["endpoint_url"]), mode="legacy") as client:
        for tool in docs["tools"]:
            result = await client.call_tool(tool["name"], tool["example"])
            assert not result.is_error, (tool["name"], result.content)


def test_the_page_template_ships_in_the_gateway_package() -> None:
    """The Jinja2 template is package data (hatch's wheel takes every file under ``gateway/``)."""
    from importlib.resources import files

    template = files("gateway").joinpath("templates/docs.html.j2")
    assert template.is_file() and "<!doctype html>" in template.read_text(encoding="utf-8")


def test_hostile_text_in_attributes_stays_inside_its_quotes() -> None:
    page = render_html({"name": "n", "tools": [{"name": "x\" onmouseover=\"alert(1)", "inputSchema": {}}]})
    assert 'onmouseover="alert' not in page and 'id="tool-x&#34; onmouseover=&#34;alert(1)"' in page

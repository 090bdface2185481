"""The MCP Apps view of get_sota_history (issue 32 item 4): the tool's ``_meta.ui``, the ``ui://``
resource on both eras, and a page that loads nothing and allows only its own inline code.

The page drawing a real result in Chromium is tests/integration/test_apps_view.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser

from pwc_mcp_core.mcp_server.server import McpServer, Pending
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools import registry
from pwc_mcp_core.tools.apps import (
    APP_MIME_TYPE,
    SOTA_HISTORY_URI,
    TOOL_VIEWS,
    tool_meta,
    view_html,
)
from tests.core.mcp_server.test_modern_era import modern
from tests.core.mcp_server.test_server import FakeDispatcher, request


def server(executor: FakeDispatcher | None = None) -> McpServer:
    return McpServer(CoreSettings(cursor_keys=("k",)), executor or FakeDispatcher())


def test_only_get_sota_history_names_a_view_and_its_meta_is_small() -> None:
    tools = {t["name"]: t for t in registry.tool_list_result()["tools"]}
    assert tools["get_sota_history"]["_meta"] == {"ui": {"resourceUri": "ui://pwc/sota-history.html"}}
    assert [name for name, tool in tools.items() if "_meta" in tool] == list(TOOL_VIEWS) == ["get_sota_history"]
    assert len(json.dumps(tools["get_sota_history"]["_meta"], separators=(",", ":"))) < 60
    assert tool_meta("search_papers") is None


async def test_tools_list_carries_the_meta_on_both_eras() -> None:
    mcp = server()
    for body, headers in ((request("tools/list"), {}), modern("tools/list")):
        reply = await mcp.handle(body, headers)
        tools = {t["name"]: t for t in json.loads(reply.body)["result"]["tools"]}
        assert tools["get_sota_history"]["_meta"]["ui"]["resourceUri"] == SOTA_HISTORY_URI


async def test_the_view_is_read_without_a_worker_on_both_eras() -> None:
    executor = FakeDispatcher()
    mcp = server(executor)
    legacy = json.loads((await mcp.handle(request("resources/read", {"uri": SOTA_HISTORY_URI}), {})).body)
    body, headers = modern("resources/read", {"uri": SOTA_HISTORY_URI}, name=SOTA_HISTORY_URI)
    reply = await mcp.handle(body, headers)
    current = json.loads(reply.body)["result"]
    assert reply.status == 200 and executor.calls == []
    (content,) = legacy["result"]["contents"]
    assert content == {"uri": SOTA_HISTORY_URI, "mimeType": APP_MIME_TYPE, "text": view_html(SOTA_HISTORY_URI),
                       "_meta": {"ui": {"prefersBorder": True}}}
    assert current["contents"] == [content]
    assert (current["resultType"], current["ttlMs"], current["cacheScope"]) == ("complete", 300_000, "public")


async def test_another_ui_uri_goes_to_the_resource_reader_and_a_bad_uri_is_still_an_error() -> None:
    mcp = server()
    prepared = await mcp.prepare(request("resources/read", {"uri": "ui://pwc/other.html"}), {})
    assert isinstance(prepared, Pending) and prepared.call.name == "ui://pwc/other.html"
    for bad in ({"uri": ["ui://pwc/sota-history.html"]}, {"uri": {"a": 1}}, {}):
        reply = await mcp.handle(request("resources/read", bad), {})
        assert json.loads(reply.body)["error"]["code"] == -32602


async def test_a_host_without_the_extension_sees_the_same_lists_and_capabilities() -> None:
    """resources/list stays empty (the spec lets UI-only resources be left out); initialize and
    server/discover advertise nothing new."""
    mcp = server()
    listed = json.loads((await mcp.handle(request("resources/list"), {})).body)["result"]
    init = json.loads((await mcp.handle(request("initialize", {"protocolVersion": "2025-11-25"}), {})).body)
    discover = json.loads((await mcp.handle(*modern("server/discover"))).body)["result"]
    assert listed == {"resources": []}
    assert "extensions" not in init["result"]["capabilities"] and "extensions" not in discover["capabilities"]


class Page(HTMLParser):
    """Tags with their attributes, and the text of each inline script and style."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.inline: dict[str, list[str]] = {"script": [], "style": []}
        self._open: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._open = tag if tag in self.inline else None

    def handle_data(self, data: str) -> None:
        if self._open:
            self.inline[self._open].append(data)

    def handle_endtag(self, tag: str) -> None:
        self._open = None


def test_the_page_loads_nothing_and_its_policy_allows_only_its_own_inline_code() -> None:
    html = view_html(SOTA_HISTORY_URI)
    assert html is not None and html.startswith("<!doctype html>")
    page = Page()
    page.feed(html)
    csp = next(a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert csp is not None
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    for kind in ("script", "style"):
        (body,) = page.inline[kind]
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert directives[f"{kind}-src"] == f"'sha256-{digest}'"
    assert directives["default-src"] == "'none'" and directives["connect-src"] == "'none'"
    assert directives["img-src"] == "data:" and directives["base-uri"] == "'none'"
    assert "unsafe" not in csp and "http" not in csp
    # Nothing fetched: no src/href but the arXiv links the script builds, no link tag, no CSS import or url().
    assert not [t for t, a in page.tags if t in ("link", "iframe", "img", "object", "embed") or "src" in a]
    assert not re.search(r"@import|url\(|https?://(?!arxiv\.org/abs/|www\.w3\.org/2000/svg)", html)
    assert " style=" not in html  # a style attribute would need 'unsafe-inline'


def test_the_page_speaks_the_spec_messages() -> None:
    html = view_html(SOTA_HISTORY_URI) or ""
    for method in ("ui/initialize", "ui/notifications/initialized", "ui/notifications/tool-result",
                   "ui/notifications/tool-input", "ui/notifications/tool-cancelled",
                   "ui/notifications/size-changed", "ui/notifications/host-context-changed", "ui/resource-teardown"):
        assert f'"{method}"' in html, method
    assert '"2026-01-26"' in html

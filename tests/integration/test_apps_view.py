"""The MCP Apps view of get_sota_history drawn by a browser, the way a host shows it (issue 32 item 4).

A gateway serves the sample catalog; the official SDK client finds the view through the tool's
``_meta.ui.resourceUri``, reads it, and calls the tool. Two hosts render the view in a sandboxed
iframe in headless Chromium and hand it the result:

* ``apps_host.html``: a minimal host written from the spec (``ui/initialize`` answered, then
  ``tool-input`` and ``tool-result`` after ``ui/notifications/initialized``);
* ``apps_sdk_host.html``: the ext-apps SDK's own host side, ``AppBridge`` and
  ``PostMessageTransport`` from ``@modelcontextprotocol/ext-apps`` (installed from npm into a
  cache directory on first use and bundled with esbuild), which checks every message the view
  sends against the SDK's schemas.

The test reads what the view drew from the host's report and checks the screenshot has the
chart's ink in it.
"""

from __future__ import annotations

import html
import io
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from PIL import Image

from pwc_mcp_core.tools.apps import APP_MIME_TYPE, SOTA_HISTORY_URI, view_html
from tests.conftest import start_pwc_mcp

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
HOSTS = {"spec": Path(__file__).with_name("apps_host.html"), "ext-apps": Path(__file__).with_name("apps_sdk_host.html")}
ARGUMENTS = {"benchmark": "ImageNet"}
TOOLBOX = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pwc-mcp-tests" / "ext-apps"
PACKAGES = ("@modelcontextprotocol/ext-apps@2.0.4", "esbuild@0.25")
BUNDLE_ENTRY = ('import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";\n'
                "window.McpAppsHost = { AppBridge, PostMessageTransport };\n")


def _ext_apps_bundle() -> Path:
    """``app-bridge.iife.js``: the SDK's host side for a browser page (installed and bundled once)."""
    bundle = TOOLBOX / "app-bridge.iife.js"
    if bundle.is_file():
        return bundle
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the ext-apps SDK host cannot be built")
    TOOLBOX.mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, "install", "--prefix", str(TOOLBOX), "--no-audit", "--no-fund", "--silent", *PACKAGES],
                   check=True, timeout=400)
    (TOOLBOX / "entry.mjs").write_text(BUNDLE_ENTRY, encoding="utf-8")
    subprocess.run([str(TOOLBOX / "node_modules" / ".bin" / "esbuild"), "entry.mjs", "--bundle", "--format=iife",
                    "--platform=browser", "--minify", "--log-level=warning", f"--outfile={bundle.name}"],
                   cwd=TOOLBOX, check=True, timeout=120)
    return bundle


def _script_json(value: object) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(value).replace("<", "\\u003c")


def _report(dom: str) -> dict[str, Any]:
    """The host's ``#report`` JSON from Chromium's dumped DOM."""
    report: dict[str, Any] = json.loads(html.unescape(dom.split('<pre id="report">', 1)[1].split("</pre>", 1)[0]))
    return report


def _host_page(tmp_path: Path, host: str, view: str, result: dict[str, Any], name: str = "host.html") -> Path:
    page = tmp_path / name
    page.write_text(HOSTS[host].read_text(encoding="utf-8").replace("__VIEW__", _script_json(view))
                    .replace("__RESULT__", _script_json(result)).replace("__ARGS__", _script_json(ARGUMENTS)),
                    encoding="utf-8")
    return page


async def _view_and_result(catalog_url: str, tmp_path: Path) -> tuple[str, dict[str, Any]]:
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, "PWC_MCP_REQUEST_LIMIT": "1000"},
                           log_path=tmp_path / "gateway.log")
    try:
        async with Client(streamable_http_client(server.mcp_url), mode="legacy") as client:
            tool = next(t for t in (await client.list_tools()).tools if t.name == "get_sota_history")
            assert tool.meta is not None
            uri = tool.meta["ui"]["resourceUri"]
            (content,) = (await client.read_resource(uri)).contents
            result = await client.call_tool("get_sota_history", ARGUMENTS)
    finally:
        server.stop()
    assert content.mime_type == APP_MIME_TYPE and str(content.uri) == uri
    return content.text, result.model_dump(by_alias=True, exclude_none=True, mode="json")


def _chromium(page: Path, tmp_path: Path, *output: str) -> str:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         f"--user-data-dir={tmp_path / 'chromium'}", "--window-size=860,1000", "--virtual-time-budget=8000",
         *output, page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True, cwd=tmp_path).stdout


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("host", list(HOSTS))
async def test_a_host_renders_the_chart_and_table_from_the_tool_result(catalog_url: str, tmp_path: Path,
                                                                       host: str) -> None:
    if host == "ext-apps":
        shutil.copy(_ext_apps_bundle(), tmp_path / "app-bridge.iife.js")
    view, result = await _view_and_result(catalog_url, tmp_path)
    page = _host_page(tmp_path, host, view, result)
    report = _report(_chromium(page, tmp_path, "--dump-dom"))
    # The handshake in the spec's order, and nothing from the view before the host answered.
    assert report.get("failure") is None
    assert report["seen"][:2] == ["ui/initialize", "ui/notifications/initialized"] and not report["early"]
    assert "ui/notifications/size-changed" in report["seen"] and report["height"].endswith("px")
    assert report["init"]["appInfo"]["name"] == "pwc-sota-history"
    assert report["init"]["appCapabilities"] == {"availableDisplayModes": ["inline"]}
    if host == "spec":
        assert report["init"]["protocolVersion"] == "2026-01-26"
    # The chart and the table of the sample ImageNet board (10 dated results, 3 steps).
    data = result["structuredContent"]["data"]
    assert report["hidden"] is False and report["status"] == ""
    assert report["title"] == "ImageNet: Top 1 Accuracy, state of the art over time"
    assert "Best 88.55 % by ViT-H/14 since 2020-10-22" in report["summary"]
    assert (report["dots"], report["marks"], report["lines"]) == (len(data["points"]) + 1, len(data["steps"]), 1)
    assert [row[:4] for row in report["rows"]] == [["2020-10-22", "ViT-H/14", "88.55", "+4.25"],
                                                   ["2019-05-28", "EfficientNet-B7", "84.3", "+5.73"],
                                                   ["2015-12-10", "ResNet-152", "78.57", "first"]]
    assert report["rows"][0][4] == "An Image is Worth 16x16 Words: Transformers for Image Recognition at Scale"
    assert report["theme"] == "light"

    _chromium(page, tmp_path, f"--screenshot={tmp_path / 'view.png'}")
    shot = Image.open(io.BytesIO((tmp_path / "view.png").read_bytes())).convert("RGB")
    chart = shot.crop((20, 90, 840, 500))  # the iframe's chart area below the title and summary
    colours = chart.getcolors(maxcolors=1 << 16) or []
    ink = sum(n for n, (r, g, b) in colours if r + g + b < 200)  # the step line, marks and labels
    grey = sum(n for n, (r, g, b) in colours if 150 < r < 200 and abs(r - b) < 30)  # the every-result dots
    assert ink > 2000 and grey > 50, (ink, grey)


_BOARD: dict[str, Any] = {
    "benchmark": {"name": "Board"}, "task": None, "metric": "Accuracy", "unit": None, "direction": "higher",
    "direction_known": True, "metrics": ["Accuracy", "F1"], "left_out": {"without_date": 2},
    "steps": [{"date": "2020-01-01", "value": 1.5, "model": "<script>alert(1)</script>", "improvement": None,
               "paper": {"title": "<img src=x onerror=alert(1)>", "arxiv_id": "2001.00001"}}],
    "points": [["2020-01-01", 1.5], ["2021-06-01", 1.2]],
    "span": {"first": "2020-01-01", "last": "2021-06-01", "results": 2, "best_held_days": 517},
}


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize(("case", "result"), [
    pytest.param("error", {"content": [{"type": "text", "text": "invalid_argument: unknown metric: X"}],
                           "isError": True}, id="error-result-shows-its-text"),
    pytest.param("empty", {"content": [], "structuredContent": {"data": {**_BOARD, "steps": [], "points": []}}},
                 id="board-without-dated-results"),
    pytest.param("hostile", {"content": [], "structuredContent": {"data": _BOARD}}, id="markup-in-data-is-text"),
])
def test_the_view_shows_errors_empty_boards_and_markup_as_text(tmp_path: Path, case: str,
                                                                result: dict[str, Any]) -> None:
    page = _host_page(tmp_path, "spec", view_html(SOTA_HISTORY_URI) or "", result)
    report = _report(_chromium(page, tmp_path, "--dump-dom"))
    if case == "error":
        assert report["hidden"] is True and report["status"] == "invalid_argument: unknown metric: X"
    elif case == "empty":
        assert report["hidden"] is False and report["dots"] == report["marks"] == 0 and report["rows"] == []
        assert report["summary"] == "No dated result with a value for Accuracy. Metrics on this board: Accuracy, F1."
    else:
        assert report["rows"] == [["2020-01-01", "<script>alert(1)</script>", "1.5", "first",
                                   "<img src=x onerror=alert(1)>"]]  # a ui/open-link link: the host offers openLinks
        assert (report["dots"], report["marks"]) == (3, 1) and "held 517 days" in report["summary"]

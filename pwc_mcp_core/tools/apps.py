"""MCP Apps views (the ``io.modelcontextprotocol/ui`` extension, spec 2026-01-26; docs/tool-contract.md §7.1).

A host that renders MCP Apps reads the ``ui://`` resource a tool names in ``_meta.ui.resourceUri``
and shows it in a sandboxed iframe beside the tool's result, which it hands to the page over
``postMessage`` (``ui/notifications/tool-result``). ``get_sota_history`` names
`SOTA_HISTORY_URI`: a self-contained page (``views/sota-history.html``) whose inline script draws
the chart and the table of state-of-the-art steps from the result's ``structuredContent``.

The page loads nothing: no external script, font or style. Its Content-Security-Policy (a
``<meta>`` tag) allows only its own inline script and style, by SHA-256 hash, computed here
when the page is loaded, so the file stays editable without hand-kept hashes. The resource's
``_meta.ui`` declares no ``csp`` domains, so a host applies the spec's restrictive default.

A host without the extension sees the tool's small ``_meta`` and nothing else: the view is not in
``resources/list`` (the spec lets servers leave UI-only resources out) and the result is unchanged.
"""

from __future__ import annotations

import base64
import hashlib
import re
from functools import cache
from importlib import resources
from typing import Final

from pwc_mcp_core.protocol.json_types import JsonObject

__all__ = ["APP_MIME_TYPE", "EXTENSION_ID", "SOTA_HISTORY_URI", "TOOL_VIEWS", "tool_meta", "view_contents",
           "view_html"]

EXTENSION_ID: Final = "io.modelcontextprotocol/ui"
APP_MIME_TYPE: Final = "text/html;profile=mcp-app"
SOTA_HISTORY_URI: Final = "ui://pwc/sota-history.html"

TOOL_VIEWS: Final[dict[str, str]] = {"get_sota_history": SOTA_HISTORY_URI}
"""Tool name → the ``ui://`` view a host renders its results with."""

_FILES: Final[dict[str, str]] = {SOTA_HISTORY_URI: "sota-history.html"}
_PLACEHOLDER: Final = "CSP_PLACEHOLDER"
_INLINE = re.compile(r"<(script|style)>(.*?)</\1>", re.DOTALL)


def tool_meta(tool: str) -> JsonObject | None:
    """The ``_meta`` of ``tool`` in ``tools/list``: ``{"ui": {"resourceUri": …}}``, or None."""
    uri = TOOL_VIEWS.get(tool)
    return {"ui": {"resourceUri": uri}} if uri is not None else None


def _csp(page: str) -> str:
    """The page's policy: nothing but its own inline script and style (by hash) and data: images."""
    hashes: dict[str, list[str]] = {"script": [], "style": []}
    for kind, body in _INLINE.findall(page):
        digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode("ascii")
        hashes[kind].append(f"'sha256-{digest}'")
    return ("default-src 'none'; script-src " + " ".join(hashes["script"]) + "; style-src "
            + " ".join(hashes["style"]) + "; img-src data:; connect-src 'none'; base-uri 'none'; "
            "form-action 'none'")


@cache
def view_html(uri: str) -> str | None:
    """The HTML of the view at ``uri`` with its CSP filled in; None for an unknown URI."""
    name = _FILES.get(uri)
    if name is None:
        return None
    page = resources.files("pwc_mcp_core.tools").joinpath("views", name).read_text(encoding="utf-8")
    return page.replace(_PLACEHOLDER, _csp(page), 1)


def view_contents(uri: str) -> JsonObject | None:
    """The ``resources/read`` result of a view: one ``text/html;profile=mcp-app`` content; None
    for an unknown URI."""
    html = view_html(uri)
    if html is None:
        return None
    return {"contents": [{"uri": uri, "mimeType": APP_MIME_TYPE, "text": html,
                          "_meta": {"ui": {"prefersBorder": True}}}]}

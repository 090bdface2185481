"""The properties every answer to a fuzzed ``POST /mcp`` must have.

* never a 5xx other than the documented 503s: JSON-RPC refusals whose ``data.error`` is
  ``server_saturated`` | ``limits_unavailable`` | ``response_too_large``, or a JSON-RPC
  -32603 (executor unavailable);
* never a traceback or an internal detail (file paths, exception class names) — unless the
  request itself carried that text (an echoed argument is not a leak);
* a JSON-RPC answer carries the request's id (or ``null`` when the id was unreadable).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import httpx

__all__ = ["DOCUMENTED_503", "NO_ID", "check_answer"]

DOCUMENTED_503: Final = frozenset({"server_saturated", "limits_unavailable", "response_too_large"})
NO_ID: Final = object()
"""Sentinel: the request had no usable id (unparseable, a batch, a notification)."""

_LEAK_PATTERNS: Final = (
    re.compile(r"Traceback \(most recent call last\)"),
    re.compile(r'File "[^"]+", line \d+'),
    re.compile(r"(?:/[\w.-]+)+\.py\b"),
    re.compile(r"site-packages"),
)
# Exception class names are only a leak in error text (a paper may well mention "ValueError").
_CLASS_NAME: Final = re.compile(r"\b(?:[A-Z][a-z0-9]+)+(?:Error|Exception)\b")


def _error_texts(body: Any) -> list[str]:
    """Human-readable error strings of a parsed answer: JSON-RPC error messages and isError texts."""
    texts: list[str] = []
    for item in body if isinstance(body, list) else [body]:
        if not isinstance(item, dict):
            continue
        error = item.get("error")
        if isinstance(error, dict):
            texts.append(json.dumps(error, ensure_ascii=False))
        elif isinstance(error, str):
            texts.append(error)
        result = item.get("result")
        if isinstance(result, dict) and result.get("isError"):
            texts.append(json.dumps(result.get("content"), ensure_ascii=False))
    return texts


def check_answer(response: httpx.Response, request: bytes, request_id: Any = NO_ID) -> Any:
    """Assert the properties above for one answer; return the parsed body (or the text).

    Args:
        response: the HTTP answer.
        request: the exact request body bytes (to tell an echo from a leak).
        request_id: the id the request carried, or :data:`NO_ID`.
    """
    status = response.status_code
    text = response.text
    try:
        body: Any = response.json() if text else None
    except ValueError:
        body = text
    assert status < 500 or status == 503, f"HTTP {status}: {text[:300]}"
    if status == 503:
        error = body.get("error") if isinstance(body, dict) else None
        data = error.get("data") if isinstance(error, dict) else None
        documented = isinstance(error, dict) and (
            (isinstance(data, dict) and data.get("error") in DOCUMENTED_503) or error.get("code") == -32603)
        assert documented, f"undocumented 503: {text[:300]}"
    echoed = request.decode("utf-8", errors="replace")
    for pattern in _LEAK_PATTERNS:
        match = pattern.search(text)
        assert match is None or match.group(0) in echoed, f"internal detail leaked: {match.group(0)!r}"
    for error_text in _error_texts(body) if not isinstance(body, str) else [body]:
        for match in _CLASS_NAME.finditer(error_text):
            assert match.group(0) in echoed, f"exception class name leaked: {match.group(0)!r} in {error_text[:300]}"
    if isinstance(body, dict) and body.get("jsonrpc") == "2.0" and "id" in body:
        if request_id is NO_ID:
            assert body["id"] is None, f"id {body['id']!r} for a request without a usable id"
        else:
            assert body["id"] in (request_id, None), f"id {body['id']!r} != {request_id!r}"
            assert body["id"] == request_id or "error" in body, "a result with a null id"
    return body

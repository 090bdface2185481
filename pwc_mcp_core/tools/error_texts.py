"""Turn a failed tool run into the one-line, prefixed text an agent can act on.

The prefixes and the mapping table are docs/tool-contract.md §3.1 ("Error message
mapping for catalog failures"), with the seed-required prefixes
``not_found:``, ``ambiguous:``, ``invalid_argument:``, ``upstream_error:``,
``upstream_timeout:`` and ``rate_limited:``. CLI usage errors keep their
message behind ``invalid_argument:``. Nothing here logs a message, query or
reference: only exception class names.
"""

from __future__ import annotations

import json
import logging
import re

from pwc.errors import (
    AmbiguousError,
    AreaNotFoundError,
    HTTPStatusError,
    NotFoundError,
    PwcError,
    RequestTimeout,
    TransportError,
    UsageError,
)
from pwc_mcp_core.errors import ToolError
from pwc_mcp_core.protocol.json_types import JsonObject
from pwc_mcp_core.tools.definitions import PARAM_RENAMES

__all__ = [
    "GENERIC_UPSTREAM",
    "INTERNAL_ERROR",
    "TIMED_OUT",
    "error_result",
    "tool_error_text",
]

logger = logging.getLogger(__name__)

GENERIC_UPSTREAM = ("upstream_error: the Papers With Code catalog request failed; retry after 5 s, "
                    "and later if it keeps failing (the catalog is then unavailable)")
INTERNAL_ERROR = "internal_error: the tool failed unexpectedly"
NOT_FOUND_HTTP = "not_found: the requested catalog record does not exist"
RATE_LIMITED = "rate_limited: the Papers With Code catalog is rate limiting; retry later"
TIMED_OUT = ("upstream_timeout: the Papers With Code catalog timed out; retry after 5 s, or ask for less "
             "(a smaller limit, a narrower filter)")
REJECTED = "invalid_argument: the catalog rejected the request"

# Messages the CLI and the reference resolver raise for a lookup that found
# nothing (or too much); they are safe to show because they only echo the
# caller's own input and catalog names (§3.1 table).
_LOOKUP_PREFIXES = (
    "Task not found",
    "Method not found",
    "Benchmark not found",
    "Conference not found",
    "Organization not found",
    "Framework not found",
    "Area not found",
    "Paper title not found",
    "Paper title is ambiguous",
    "Paper not found",
    "Paper URL not supported",
    "Paper reference cannot be empty",
    "Too many results to resolve paper title",
    "Papers API did not confirm",
)
_UNPRINTABLE = re.compile(r"[^\x20-\x7e\u00a0-\uffff]")
# CLI usage messages speak of flags and other commands; a tool's caller knows only its parameters.
_CLI_PREFIX = re.compile(r"^pwc(?: [a-z-]+)*: (?:argument )?")
_FLAG = re.compile(r"--([a-z][a-z-]*)")
_CLI_ADVICE = (
    (re.compile(r"; use --flat for the complete task endpoint$"), "; leave out group_by_area to page or filter"),
    (re.compile(r"; use --flat to search tasks$"), "; leave out group_by_area to search tasks"),
    (re.compile(r"; drop --flat$"), ""),
)
_FLAG_NAMES = {"name": "the name", "page-size": "limit", "group-by-area": "group_by_area"}
_DETAIL_LIMIT = 200


# Catalog query parameters → the tool parameters that feed them, first one the tool has wins.
_CATALOG_NAMES: dict[str, tuple[str, ...]] = {
    "q": ("query", "search"), "page_size": ("limit",), "start_date": ("published_after",),
    "end_date": ("published_before",), "author": ("authors",), "order_dir": ("order_direction",),
}
_CATALOG_WORD = re.compile(r"\b(" + "|".join(_CATALOG_NAMES) + r")\b")


def _clean_detail(detail: str, parameters: frozenset[str] = frozenset()) -> str:
    """Upstream 400/422 body as one line in the tool's terms: the message of a JSON body
    (``{"detail": "..."}``; a JSON body without one gives ""), the catalog's parameter names
    as the tool's (``q`` → ``query``) where ``parameters`` has them, non-printables → spaces,
    trimmed, cut to 200 chars."""
    detail = _UNPRINTABLE.sub(" ", detail).strip()
    try:
        body = json.loads(detail)
    except ValueError:
        body = detail
    if isinstance(body, dict):
        found = next((body[key] for key in ("detail", "message", "error") if isinstance(body.get(key), str)), "")
        body = found
    text = body if isinstance(body, str) else ""

    def rename(match: re.Match[str]) -> str:
        chosen = [name for name in _CATALOG_NAMES[match.group(1)] if name in parameters]
        return chosen[0] if chosen else match.group(1)

    if parameters:
        text = _CATALOG_WORD.sub(rename, text)
    return _UNPRINTABLE.sub(" ", text).strip()[:_DETAIL_LIMIT].strip()


def _lookup_text(message: str) -> str:
    prefix = "ambiguous" if "ambiguous" in message.casefold() else "not_found"
    return f"{prefix}: {message}"


def tool_error_text(exc: BaseException, parameters: frozenset[str] = frozenset()) -> str:
    """The ``isError`` text for ``exc`` (docs/tool-contract.md §3.1 mapping table).

    ``ToolError`` messages already carry their prefix and pass through;
    ``pwc`` errors are mapped by class, HTTP status and message prefix; any
    other exception is an internal error (type name logged, nothing else).
    A catalog 400/422 gives its message, never its raw JSON body, naming the
    tool's ``parameters`` instead of the catalog's query parameters.
    """
    if isinstance(exc, ToolError):
        return str(exc)
    if isinstance(exc, UsageError):
        return f"invalid_argument: {mcp_words(str(exc))}"
    if isinstance(exc, HTTPStatusError):
        if exc.status == 404:
            return NOT_FOUND_HTTP
        if exc.status in (400, 422):
            detail = _clean_detail(exc.detail or "", parameters)
            return f"invalid_argument: {detail}" if detail else REJECTED
        if exc.status == 429:
            return RATE_LIMITED
        logger.warning("generic catalog error type=%s status=%d", type(exc).__name__, exc.status)
        return GENERIC_UPSTREAM
    if isinstance(exc, RequestTimeout):
        return TIMED_OUT
    if isinstance(exc, AreaNotFoundError):
        return area_not_found_text(exc)
    if isinstance(exc, PwcError):
        message = str(exc)
        if isinstance(exc, TransportError) and ("timeout" in message.lower() or "timed out" in message.lower()):
            return TIMED_OUT
        if message.startswith(_LOOKUP_PREFIXES):
            return _lookup_text(message)
        if isinstance(exc, AmbiguousError):
            return f"ambiguous: {message}"
        if isinstance(exc, NotFoundError):
            return f"not_found: {message}"
        logger.warning("generic catalog error type=%s", type(exc).__name__)
        return GENERIC_UPSTREAM
    logger.error("tool failed unexpectedly type=%s", type(exc).__name__)
    return INTERNAL_ERROR


_AREA_LISTED = 20


def area_not_found_text(exc: AreaNotFoundError) -> str:
    """An ``area`` argument that names no area, as the other filter misses read: the argument, the
    closest areas (by :func:`pwc.names.closeness`) and the values to choose from, slugs first."""
    from pwc.names import closeness

    def close(area: dict[str, object]) -> int:
        # An acronym of the name ("nlp", "cv") is as close as a prefix.
        initials = "".join(word[0] for word in re.findall(r"[0-9a-z]+", str(area.get("name") or "").casefold()))
        return 3 if len(initials) > 1 and initials == exc.query.strip().casefold() else closeness(exc.query, area)

    areas = [a for a in exc.areas if a.get("slug") or a.get("name")]
    ranked = sorted((a for a in areas if close(a) > 0), key=lambda a: -close(a))
    closest = ", ".join(f"{a.get('slug') or a.get('name')} ({a.get('name') or a.get('slug')})" for a in ranked[:3])
    names = sorted((str(a.get("slug") or a.get("name")) for a in areas), key=str.casefold)
    listed = ", ".join(names[:_AREA_LISTED]) + (f", … ({len(names)} in all)" if len(names) > _AREA_LISTED else "")
    return (f"not_found: no area matches area={exc.query.strip()!r}"
            + (f"; closest areas: {closest}" if closest else "")
            + ". Pass an area's slug, name or ID" + (f"; choose from: {listed}." if listed else "."))


def mcp_words(message: str) -> str:
    """A CLI usage message in the tool's terms: no ``pwc benchmark: argument`` prefix, flags named as
    parameters (``--max-parameters`` → ``max_parameters``, ``--page-size`` → ``limit``), and no advice
    to use a CLI-only flag such as ``--flat``."""
    text = _CLI_PREFIX.sub("", message)
    for pattern, advice in _CLI_ADVICE:
        text = pattern.sub(advice, text)

    def parameter(match: re.Match[str]) -> str:
        flag = match.group(1)
        if flag in _FLAG_NAMES:
            return _FLAG_NAMES[flag]
        dest = flag.replace("-", "_")
        return PARAM_RENAMES.get(dest, dest)

    return _FLAG.sub(parameter, text).replace("pagination", "limit or page")


def error_result(text: str) -> JsonObject:
    """The MCP ``tools/call`` result for a tool failure: one text block, ``isError: true``."""
    return {"content": [{"type": "text", "text": text}], "isError": True}

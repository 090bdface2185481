"""Paper references of the CLI (``docs/cli-contract.md`` §3.1).

Identifiers pass through unchanged and unverified (a missing paper surfaces
as HTTP 404, exit 3): all digits, a modern arXiv ID (``2501.01234``,
optional ``v2``) or a legacy one (``cs/0101001``, ``math.GT/0309136v1``).
Anything else is an exact title, looked up in the first 20 keyword-search
results. The CLI parses no URLs here (that is the MCP layer's job, §3.7); only
``paper cite`` and ``paper verify`` read them (§2.21, §2.22).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pwc.errors import AmbiguousError, NotFoundError, ResponseError
from pwc.render import result_list

if TYPE_CHECKING:  # the transport (httpx) is imported only where a call is made
    from pwc.transport import Client

__all__ = ["ARXIV_LEGACY", "ARXIV_MODERN", "is_identifier", "normalize_title", "resolve_paper"]

# The one definition of an arXiv ID (without a version suffix), used with fullmatch; the MCP
# layer's resolver and cursor check build on these two.
ARXIV_MODERN = re.compile(r"[0-9]{4}\.[0-9]{4,5}")
"""A modern arXiv ID: ``YYMM.NNNNN`` (4 or 5 digits after the dot)."""
ARXIV_LEGACY = re.compile(r"[a-z][a-z0-9.\-]*/[0-9]{7}", re.IGNORECASE)
"""A legacy arXiv ID: ``archive[.subject]/YYMMNNN``, case-insensitive."""
_ARXIV_VERSIONED = re.compile(rf"(?:{ARXIV_MODERN.pattern}|{ARXIV_LEGACY.pattern})(v[0-9]+)?", re.IGNORECASE)


def is_identifier(ref: str) -> bool:
    """True for a numeric ID or a modern/legacy arXiv ID (version suffix allowed)."""
    return ref.isdigit() or bool(_ARXIV_VERSIONED.fullmatch(ref))


def normalize_title(title: object) -> str:
    """Collapse whitespace runs to one space and casefold."""
    return " ".join(str(title).split()).casefold()


def _key(item: Mapping[str, object]) -> str | None:
    for field in ("arxiv_id", "route_identifier", "id"):
        value = item.get(field)
        if value not in (None, ""):
            return str(value)
    return None


def resolve_paper(ref: str, client: Client) -> str:
    """Resolve a CLI paper reference to the identifier used in upstream paths.

    Raises ``ResponseError("Paper reference cannot be empty")``,
    ``NotFoundError("Paper title not found: …[; closest results: …]")`` or
    ``AmbiguousError("Paper title is ambiguous: …")`` (all exit 4).
    """
    ref = ref.strip()
    if not ref:
        raise ResponseError("Paper reference cannot be empty")
    if is_identifier(ref):
        return ref
    payload = client.get_json("papers/search", {"q": ref, "page": 1, "page_size": 20, "mode": "keyword"})
    items = result_list(payload)
    wanted = normalize_title(ref)
    matches: dict[str, str] = {}
    for item in items:
        key = _key(item)
        if key is not None and normalize_title(item.get("title") or "") == wanted:
            matches.setdefault(key, str(item.get("title")))
    if len(matches) == 1:
        return next(iter(matches))
    if matches:
        listed = "; ".join(f"{title} ({key})" for key, title in matches.items())
        raise AmbiguousError(f"Paper title is ambiguous: {ref}; {listed}")
    message = f"Paper title not found: {ref}"
    if items:
        closest = "; ".join(f"{item.get('title') or 'Untitled'} ({_key(item) or 'unknown ID'})"
                            for item in items[:3])
        message += f"; closest results: {closest}"
    raise NotFoundError(message)

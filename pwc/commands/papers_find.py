"""``pwc paper find PAPER QUERY`` (``docs/cli-contract.md`` §2.25): the passages of one paper for a query.

One upstream call for the passages: the catalog's ``research/papers/<ref>/passages``, which ranks
the paragraphs by keyword and by meaning (a passage may never use the query's words). Against
an upstream that answers 404 there (one that is not this project's catalog, or a paper it has
no text for), one read of the paper's whole Markdown (``research/papers/<ref>/read``, cached
like every record), ranked by keyword with :mod:`paper_passages`. Both rank the same
paragraphs at the same byte offsets. Besides the query's own words (stemmed), the
catalog's vocabulary widens it: when the query is exactly the name, full name or slug of a
method or task, its other names join the query at a lower weight (``GAN`` also finds
"generative adversarial network"). No passage matching is a result with no passages.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from typing import TYPE_CHECKING, TypedDict

from paper_passages import excerpt, index_for, mark, phrases, query_terms
from pwc.arguments import int_range
from pwc.commands.papers_common import add_json_flag
from pwc.errors import HTTPStatusError, PwcError, UsageError
from pwc.json_types import JsonValue
from pwc.names import find_exact
from pwc.references import resolve_paper
from pwc.render import Output, result_list
from pwc.transport import quote_ref

if TYPE_CHECKING:  # the transport (httpx) is imported only where a call is made
    from pwc.transport import Client

__all__ = ["FindPassage", "FindPayload", "register", "render_find", "run_find", "vocabulary"]


class FindPassage(TypedDict):
    """One passage: ``offset`` in bytes, ``text`` the paper's exact text from there, ``matched`` the
    query words it holds; ``score`` as the ranking gave it (the catalog's is passed on unchecked)."""

    offset: int
    heading: str | None
    text: str
    score: JsonValue
    matched: list[str]


class FindPayload(TypedDict):
    """``paper find --json`` data (:func:`run_find`)."""

    paper: str
    query: str
    content_version: JsonValue  # 64 hex digits, checked with ``str()`` on the catalog's answer
    total_bytes: int
    expanded_with: list[str]
    passages: list[FindPassage]

MAX_QUERY = 500
_VERSION = re.compile(r"[0-9a-f]{64}")
# Catalog vocabularies that name things a paper discusses: endpoint → the fields that name an entry.
_VOCABULARIES = (("methods/", ("name", "full_name", "slug")), ("tasks/", ("name", "slug")))


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``paper find`` to the ``paper`` sub-commands."""
    find = commands.add_parser("find", help="find the passages of a paper that match a query")
    find.add_argument("paper", metavar="PAPER", help="arXiv ID, numeric paper ID, or exact paper title")
    find.add_argument("query", metavar="QUERY", help="words or a phrase to find in the paper's full text")
    find.add_argument("--limit", type=int_range("--limit", 1, 20), default=5, help="passages (1-20, default 5)")
    add_json_flag(find)
    find.set_defaults(handler=run_find, renderer=render_find)


def vocabulary(query: str, client: Client) -> list[str]:
    """The other names of the method or task the query names exactly (empty when none, or when
    the catalog has no such list): ``GAN`` → ``["Generative Adversarial Network"]``."""
    names: list[str] = []
    for endpoint, fields in _VOCABULARIES:
        try:
            items = result_list(client.get_json(endpoint, {"q": query, "page": 1, "page_size": 20}))
        except PwcError:
            continue  # a catalog without this vocabulary: the query's own words still search
        hit = find_exact(items, query, fields)
        for field in fields[:2] if hit else ():
            value = hit.get(field) if hit else None
            if isinstance(value, str) and value.strip().casefold() != query.strip().casefold():
                names.append(value.strip())
    return list(dict.fromkeys(names))


def run_find(args: argparse.Namespace, client: Client) -> FindPayload:
    """``{"paper", "query", "content_version", "total_bytes", "expanded_with", "passages"}``; each
    passage ``{"offset", "heading", "text", "score", "matched"}`` (``offset`` in bytes, ``text``
    the paper's exact text from there, ``matched`` the query words it holds), best first."""
    query = str(args.query).strip()
    if not query or len(query) > MAX_QUERY:
        raise UsageError(f"QUERY must be 1-{MAX_QUERY} characters")
    ref = resolve_paper(args.paper, client)
    expansions = vocabulary(query, client)
    ranked = _from_catalog(ref, query, args.limit, expansions, client)
    if ranked is not None:
        return ranked
    response = client.get_text(f"research/papers/{quote_ref(ref)}/read")
    raw = response.text.encode("utf-8")
    version = response.headers.get("x-pwc-content-version", "")
    if not _VERSION.fullmatch(version):
        version = hashlib.sha256(raw).hexdigest()
    terms, phrase = query_terms(query)
    index = index_for(ref, version, response.text)
    matches = index.rank(terms, phrase, args.limit, phrases(expansions)) if terms else []
    passages: list[FindPassage] = []
    for found in matches:
        offset, text = excerpt(found.paragraph, terms)
        passages.append({"offset": offset, "heading": found.paragraph.heading, "text": text,
                         "score": found.score, "matched": list(found.matched)})
    return {"paper": ref, "query": query, "content_version": version, "total_bytes": len(raw),
            "expanded_with": expansions, "passages": passages}


def _from_catalog(ref: str, query: str, limit: int, expansions: list[str], client: Client) -> FindPayload | None:
    """The catalog's own ranking (keyword and meaning), or None when the upstream answers 404
    (no such endpoint, or no text: the Markdown read then says which) or a body of another shape."""
    try:
        body = client.get_json(f"research/papers/{quote_ref(ref)}/passages",
                               {"q": query, "limit": limit, "expand": expansions})
    except HTTPStatusError as exc:
        if exc.status == 404:
            return None
        raise
    if not isinstance(body, dict):
        return None
    items, version, total = body.get("passages"), body.get("content_version"), body.get("total_bytes")
    if not isinstance(items, list) or not _VERSION.fullmatch(str(version)) or not isinstance(total, int):
        return None
    passages: list[FindPassage] = []
    for item in items:
        if not isinstance(item, dict):
            return None
        offset, text = item.get("offset"), item.get("text")
        if not isinstance(offset, int) or not isinstance(text, str):
            return None
        heading = item.get("heading")
        matched = item.get("matched")
        passages.append({"offset": offset, "heading": heading if isinstance(heading, str) else None,
                         "text": text, "score": item.get("score"),
                         "matched": [m for m in matched if isinstance(m, str)] if isinstance(matched, list) else []})
    return {"paper": ref, "query": query, "content_version": version,
            "total_bytes": total, "expanded_with": expansions, "passages": passages[:limit]}


def render_find(payload: FindPayload, args: argparse.Namespace, out: Output) -> None:
    """Each passage under a heading line (section, byte offset, score), its matched words marked ``==…==``."""
    passages = payload.get("passages") or []
    terms, _phrase = query_terms(str(payload.get("query") or ""))
    if not passages:
        out.stdout.write(f"No passage of {payload.get('paper')} matches {payload.get('query')!r}.\n")
        return
    for number, passage in enumerate(passages, 1):
        section = f" {passage['heading']}" if passage.get("heading") else ""
        out.stdout.write(f"## {number}.{section} (byte {passage['offset']}, score {passage['score']})\n\n"
                         f"{mark(passage['text'], terms)}\n\n")

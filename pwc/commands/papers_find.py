"""``pwc paper find PAPER QUERY`` (``docs/cli-contract.md`` §2.21): the passages of one paper for a query.

One read of the paper's whole Markdown (``research/papers/<ref>/read``, cached like every record),
ranked by paragraph with :mod:`paper_passages`. Besides the query's own words (stemmed), the
catalog's vocabulary widens it: when the query is exactly the name, full name or slug of a
method or task, its other names join the query at a lower weight (``GAN`` also finds
"generative adversarial network"). No passage matching is a result with no passages.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from typing import Any

from paper_passages import excerpt, index_for, mark, phrases, query_terms
from pwc.cli import int_range
from pwc.commands.papers_common import add_json_flag
from pwc.errors import PwcError, UsageError
from pwc.names import find_exact
from pwc.references import resolve_paper
from pwc.render import Output, result_list
from pwc.transport import quote_ref

__all__ = ["register", "render_find", "run_find", "vocabulary"]

MAX_QUERY = 500
_VERSION = re.compile(r"[0-9a-f]{64}")
# Catalog vocabularies that name things a paper discusses: endpoint → the fields that name an entry.
_VOCABULARIES = (("methods/", ("name", "full_name", "slug")), ("tasks/", ("name", "slug")))


def register(commands: Any) -> None:
    """Add ``paper find`` to the ``paper`` sub-commands."""
    find = commands.add_parser("find", help="find the passages of a paper that match a query")
    find.add_argument("paper", metavar="PAPER", help="arXiv ID, numeric paper ID, or exact paper title")
    find.add_argument("query", metavar="QUERY", help="words or a phrase to find in the paper's full text")
    find.add_argument("--limit", type=int_range("--limit", 1, 20), default=5, help="passages (1-20, default 5)")
    add_json_flag(find)
    find.set_defaults(handler=run_find, renderer=render_find)


def vocabulary(query: str, client: Any) -> list[str]:
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


def run_find(args: argparse.Namespace, client: Any) -> dict[str, Any]:
    """``{"paper", "query", "content_version", "total_bytes", "expanded_with", "passages"}``; each
    passage ``{"offset", "heading", "text", "score", "matched"}`` (``offset`` in bytes, ``text``
    the paper's exact text from there, ``matched`` the query words it holds), best first."""
    query = str(args.query).strip()
    if not query or len(query) > MAX_QUERY:
        raise UsageError(f"QUERY must be 1-{MAX_QUERY} characters")
    ref = resolve_paper(args.paper, client)
    response = client.get_text(f"research/papers/{quote_ref(ref)}/read")
    raw = response.text.encode("utf-8")
    version = response.headers.get("x-pwc-content-version", "")
    if not _VERSION.fullmatch(version):
        version = hashlib.sha256(raw).hexdigest()
    expansions = vocabulary(query, client)
    terms, phrase = query_terms(query)
    index = index_for(ref, version, response.text)
    matches = index.rank(terms, phrase, args.limit, phrases(expansions)) if terms else []
    passages = []
    for found in matches:
        offset, text = excerpt(found.paragraph, terms)
        passages.append({"offset": offset, "heading": found.paragraph.heading, "text": text,
                         "score": found.score, "matched": list(found.matched)})
    return {"paper": ref, "query": query, "content_version": version, "total_bytes": len(raw),
            "expanded_with": expansions, "passages": passages}


def render_find(payload: dict[str, Any], args: argparse.Namespace, out: Output) -> None:
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

"""`completion/complete` for prompt arguments and resource-template variables, from the catalog.

Spec: https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/completion
(``values`` at most 100, optional ``total``, ``hasMore``).

Two halves, so the layering stays one-directional (ARCHITECTURE.md §2):

* `target` runs in the server (gateway or stdio, on the event loop): it checks the
  ``ref``/``argument`` shape and names the vocabulary (``task``, ``benchmark``,
  ``topic`` = tasks and methods, ``paper`` = titles and arXiv IDs), or ``None`` when
  the ref takes no such argument (no values, no catalog call). The citation template's
  ``format`` has fixed values (`fixed_completion`, answered by the server without a call).
* `catalog_completion` runs where tool calls run (the executor: a thread of the
  embedded process, or a worker in Redis mode), as a ``Call`` of kind
  ``completion/complete``. It asks the catalog through the runtime's cached
  transport, so the gateway never holds a catalog client, a slow catalog never
  blocks the event loop, and in Redis mode the answer is shared through the
  workers' Redis cache. Each answer is cached for the taxonomy TTL
  (`pwc.cache.TAXONOMY_TTL_S`, 600 s) under its own key.

Only names the catalog returned are offered. Matching is case-insensitive:
values starting with the typed text first, then values containing it, each group
in catalog order, duplicates dropped, at most 100. The catalog's own name search
(``q`` on ``tasks/``, ``datasets/``, ``methods/``; ``search`` on ``papers/``) selects
the candidates, one page of at most 100 per source; when a source has more
matches than that page, ``hasMore`` is true and ``total`` is omitted.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import re
from collections.abc import Iterable
from typing import Final

from pwc.cache import TAXONOMY_TTL_S
from pwc.render import result_list
from pwc.transport import Client
from pwc_mcp_core.errors import ProtocolError
from pwc_mcp_core.protocol.json_types import JsonObject
from pwc_mcp_core.protocol.jsonrpc import INVALID_PARAMS
from pwc_mcp_core.tools.prompts import PROMPTS
from pwc_mcp_core.tools.templates import CITATION_MIME_TYPES, TEMPLATE_ARGUMENTS

__all__ = ["EMPTY", "FIXED_VOCABULARIES", "MAX_VALUES", "VOCABULARIES", "catalog_completion", "fixed_completion",
           "rank", "target"]

MAX_VALUES: Final = 100
MAX_VALUE_CHARS: Final = 200
"""Typed text beyond this is cut before it is sent to the catalog."""
EMPTY: Final[JsonObject] = {"values": [], "total": 0, "hasMore": False}

# Vocabulary → catalog list sources: (path, search parameter, fields offered).
_PAPERS: Final = ("papers/", "search", ("arxiv_id", "title"))
VOCABULARIES: Final[dict[str, tuple[tuple[str, str, tuple[str, ...]], ...]]] = {
    # Slugs too: agents type them ("object-d"), and the prompts take a slug or a name.
    "task": (("tasks/", "q", ("name", "slug")),),
    "benchmark": (("datasets/", "q", ("name", "slug")),),
    "topic": (("tasks/", "q", ("name", "slug")), ("methods/", "q", ("name", "slug"))),
    "paper": (_PAPERS,),
}
"""Argument or template-variable name → the catalog lists its values come from."""
FIXED_VOCABULARIES: Final[dict[str, tuple[str, ...]]] = {"format": tuple(CITATION_MIME_TYPES)}
"""Template variables with a fixed set of values (no catalog call): the citation ``format``."""

_ARXIV_PREFIX = re.compile(r"\d{4}\.\d{0,5}(v\d+)?")
# A modern arXiv ID starts with its submission year and month (YYMM): "1706" and "1706.03"
# are completed from that month's papers, since no catalog search matches ID prefixes.
_ARXIV_MONTH = re.compile(r"(\d{2})(\d{2})(?:\.\d{0,5})?")
_WORD = re.compile(r"[0-9a-z]+")
_PROMPT_ARGUMENTS: Final = {p.name: p.argument for p in PROMPTS}


def target(params: JsonObject) -> tuple[str | None, str]:
    """``(vocabulary, typed value)`` for ``completion/complete`` ``params`` (``{ref, argument, context?}``).

    ``ref`` is ``{"type": "ref/prompt", "name"}`` or ``{"type": "ref/resource", "uri"}``
    (a URI template of `templates`).

    Raises:
        ProtocolError: -32602 for a malformed ``ref``/``argument``, an unknown prompt or
            template, or an argument the ref does not take (the message names the known ones).
    """
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise ProtocolError(INVALID_PARAMS, "completion/complete requires 'ref' and 'argument' objects")
    name, value = argument.get("name"), argument.get("value", "")
    if not isinstance(name, str) or not isinstance(value, str):
        raise ProtocolError(INVALID_PARAMS, "completion/complete 'argument' needs string 'name' and 'value'")
    kind = ref.get("type")
    if kind == "ref/prompt":
        prompt = ref.get("name")
        if not isinstance(prompt, str):
            raise ProtocolError(INVALID_PARAMS, "completion/complete 'ref.name' must be a string")
        expected = _PROMPT_ARGUMENTS.get(prompt)
    elif kind == "ref/resource":
        uri = ref.get("uri")
        if not isinstance(uri, str):
            raise ProtocolError(INVALID_PARAMS, "completion/complete 'ref.uri' must be a string")
        variables = TEMPLATE_ARGUMENTS.get(uri)
        expected = (name if name in variables else variables[0]) if variables else None
    else:
        raise ProtocolError(INVALID_PARAMS, "completion/complete 'ref.type' must be ref/prompt or ref/resource")
    if expected is None:
        known = ", ".join(sorted(_PROMPT_ARGUMENTS) if kind == "ref/prompt" else sorted(TEMPLATE_ARGUMENTS))
        what = "prompt" if kind == "ref/prompt" else "resource template"
        raise ProtocolError(INVALID_PARAMS, f"completion/complete: unknown {what}; known: {known}")
    if name != expected:
        raise ProtocolError(INVALID_PARAMS, f"completion/complete: this {'prompt' if kind == 'ref/prompt' else 'template'}"
                            f" takes the argument '{expected}', not the one given")
    if expected not in VOCABULARIES and expected not in FIXED_VOCABULARIES:
        return None, value
    return expected, value.strip()[:MAX_VALUE_CHARS]


def fixed_completion(vocabulary: str, typed: str) -> JsonObject | None:
    """The ``completion`` object of a fixed vocabulary (no catalog call), else None."""
    values = FIXED_VOCABULARIES.get(vocabulary)
    return rank(values, typed) if values is not None else None


def rank(candidates: Iterable[str], typed: str, *, more: bool = False) -> JsonObject:
    """``{"values": […≤100], "total": n, "hasMore": bool}`` for ``typed`` over ``candidates``.

    Prefix matches first, then substring matches (case-insensitive), each in the given
    order, duplicates dropped. ``more``: the candidates are a truncated page, so there
    may be further matches (``hasMore`` true, ``total`` omitted).
    """
    needle = typed.strip().lower()
    seen: set[str] = set()
    starts: list[str] = []
    contains: list[str] = []
    for value in candidates:
        key = value.lower()
        if key in seen or needle not in key:
            continue
        seen.add(key)
        (starts if key.startswith(needle) else contains).append(value)
    matches = starts + contains
    result: JsonObject = {"values": [*matches[:MAX_VALUES]], "hasMore": more or len(matches) > MAX_VALUES}
    if not more:
        result["total"] = len(matches)
    return result


def _page(client: Client, path: str, param: str, typed: str) -> tuple[list[JsonObject], bool]:
    params: JsonObject = {"page": 1, "page_size": MAX_VALUES}
    if typed:
        params[param] = typed
    payload = client.get_json(path, params)
    rows = result_list(payload)
    count = payload.get("count") if isinstance(payload, dict) else None
    more = (isinstance(count, int) and count > len(rows)) or (isinstance(payload, dict) and bool(payload.get("next")))
    return rows, more


def _offered(row: JsonObject, fields: tuple[str, ...], typed: str) -> list[str]:
    """A row's values for ``typed``: every field, except that a slug is offered only when the typed
    text matches the slug and not the name (``object-d`` → ``object-detection``; ``Object`` → the name)."""
    needle = typed.strip().lower()
    raw_name = row.get("name")
    name = raw_name.lower() if isinstance(raw_name, str) else ""
    offered: list[str] = []
    for field in fields:
        value = row.get(field)
        if not isinstance(value, str) or not value:
            continue
        if field != "slug" or (needle and needle not in name and needle in value.lower()):
            offered.append(value)
    return offered


def _candidates(vocabulary: str, typed: str, client: Client) -> tuple[list[str], bool]:
    values: list[str] = []
    more = False
    for path, param, fields in VOCABULARIES[vocabulary]:
        rows, truncated = _page(client, path, param, typed)
        more = more or truncated
        values += [value for row in rows for value in _offered(row, fields, typed)]
    if vocabulary == "paper" and _ARXIV_PREFIX.fullmatch(typed):
        # Titles and abstracts do not hold arXiv IDs; a complete ID is found by keyword search.
        payload = client.get_json("papers/search", {"q": typed, "mode": "keyword", "page": 1, "page_size": 10})
        values = [arxiv for row in result_list(payload) if isinstance(arxiv := row.get("arxiv_id"), str)] + values
    month = _ARXIV_MONTH.fullmatch(typed) if vocabulary == "paper" else None
    if month is not None and 1 <= int(month.group(2)) <= 12:
        year, number = 2000 + int(month.group(1)), int(month.group(2))
        last = calendar.monthrange(year, number)[1]
        payload = client.get_json("papers/", {"start_date": f"{year}-{number:02d}-01",
                                              "end_date": f"{year}-{number:02d}-{last:02d}",
                                              "page": 1, "page_size": MAX_VALUES})
        ids = sorted(arxiv for row in result_list(payload)
                     if isinstance(arxiv := row.get("arxiv_id"), str) and arxiv.startswith(typed))
        count = payload.get("count") if isinstance(payload, dict) else None
        more = more or (isinstance(count, int) and count > MAX_VALUES)
        values = ids + values
    return values, more


def catalog_completion(vocabulary: str, typed: str, client: Client) -> JsonObject:
    """The ``completion`` object for ``typed`` in ``vocabulary``, from the catalog behind ``client``.

    Cached in ``client.cache`` for `TAXONOMY_TTL_S` under a key of its own (``COMPLETE:``
    + digest, apart from the transport's ``GET:`` keys).

    Raises:
        KeyError: an unknown vocabulary.
        pwc.errors.PwcError: the catalog failed (never cached; the caller answers `EMPTY`).
    """
    if vocabulary not in VOCABULARIES:
        raise KeyError(vocabulary)
    digest = hashlib.sha256(json.dumps([vocabulary, typed.lower()]).encode("utf-8")).hexdigest()[:32]

    def load() -> bytes:
        values, more = _candidates(vocabulary, typed, client)
        found = rank(values, typed, more=more)
        words = _WORD.findall(typed.lower())
        if not found["values"] and len(words) > 1 and vocabulary != "paper":
            # "imagenet-1" matches nothing; its first word offers what the catalog has ("ImageNet").
            values, more = _candidates(vocabulary, words[0], client)
            found = rank(values, words[0], more=more)
        return json.dumps(found, ensure_ascii=False).encode("utf-8")

    result: JsonObject = json.loads(client.cache.fetch(f"COMPLETE:{digest}", TAXONOMY_TTL_S, load))
    return result

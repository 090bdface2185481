"""Exact entity-name matching and area resolution (``docs/cli-contract.md`` §3.2).

Matching is exact after stripping and casefolding, tried field by field in
priority order and, per field, in API order; the first hit wins (the CLI does
no ambiguity detection).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from pwc.errors import AreaNotFoundError, NotFoundError, ResponseError
from pwc.json_types import JsonObject, JsonValue

__all__ = [
    "AREAS_PARAMS",
    "BENCHMARK_FIELDS",
    "ENTITY_FIELDS",
    "METHOD_FIELDS",
    "area_name_map",
    "closeness",
    "find_area",
    "find_exact",
    "first_word",
    "not_found",
    "required_name",
    "resolve_area",
    "with_area_names",
]

ENTITY_FIELDS: tuple[str, ...] = ("name", "slug", "id")
METHOD_FIELDS: tuple[str, ...] = ("name", "full_name", "slug", "id")
BENCHMARK_FIELDS = METHOD_FIELDS
# GET areas/ with these parameters lists every area (task list, method list, details).
AREAS_PARAMS: dict[str, object] = {"page": 1, "page_size": 500, "ordering": "name"}


def _norm(value: object) -> str:
    return str(value).strip().casefold()


def required_name(name: str | None, entity: str) -> str:
    """The stripped ``--name`` of a detail command (docs/cli-contract.md §5).

    Raises:
        ResponseError: ``<entity> inspection requires --name`` (exit 4) when it is missing or blank.
    """
    if not name or not name.strip():
        raise ResponseError(f"{entity} inspection requires --name")
    return name.strip()


def find_exact(items: Iterable[object], query: str, fields: Sequence[str]) -> JsonObject | None:
    """The first dict in ``items`` whose ``str(field)`` equals ``query`` (stripped, casefolded).

    Fields are tried in order; for each, items in API order. Missing or None fields never match.
    """
    wanted = _norm(query)
    candidates = [item for item in items if isinstance(item, dict)]
    for name in fields:
        for item in candidates:
            value = item.get(name)
            if value is not None and _norm(value) == wanted:
                return item
    return None


_WORD = re.compile(r"[0-9a-z]+")


def closeness(query: str, item: Mapping[str, object]) -> int:
    """How close an item's name or slug is to ``query``: 3 a prefix either way, 2 a substring either
    way, 1 a shared word of 3+ letters (``neurips`` in ``NeurIPS 2017``), else 0."""
    wanted = _norm(query)
    words = {w for w in _WORD.findall(wanted) if len(w) >= 3 and not w.isdigit()}
    best = 0
    for field in ("name", "slug", "full_name"):
        value = item.get(field)
        if not value:
            continue
        have = _norm(value)
        if have.startswith(wanted) or wanted.startswith(have):
            return 3
        if wanted in have or have in wanted:
            best = max(best, 2)
        elif words & set(_WORD.findall(have)):
            best = max(best, 1)
    return best


def not_found(label: str, query: str, items: Iterable[object], *, name_only: bool = False) -> NotFoundError:
    """``<Label> not found: <query>; closest results: A, B, C`` (suffix omitted without candidates).

    Candidates are the 3 items closest to the query (:func:`closeness`; ties in API order), each
    by its ``name`` (else ``slug`` unless ``name_only``).
    """
    dicts = [item for item in items if isinstance(item, dict)]
    ranked = sorted(dicts, key=lambda item: -closeness(query, item))
    names: list[str] = []
    for item in ranked:
        value = item.get("name") or (None if name_only else item.get("slug"))
        if value:
            names.append(str(value))
        if len(names) == 3:
            break
    message = f"{label} not found: {query}"
    if names:
        message += f"; closest results: {', '.join(names)}"
    return NotFoundError(message)


def first_word(query: str) -> str | None:
    """The query's first word when the query has more than one (``imagenet`` of ``imagenet-1k``): a
    second, wider search for candidates when the whole query finds none."""
    words = _WORD.findall(_norm(query))
    return words[0] if len(words) > 1 else None


def find_named(search: Callable[[str], Sequence[object]], name: str,
               fields: Sequence[str]) -> tuple[JsonObject | None, Sequence[object]]:
    """The record ``name`` names exactly among ``search(name)`` (:func:`find_exact`), and the
    candidates to suggest when none does: when the whole name finds nothing at all, those of its
    first word (:func:`first_word`: "imagenet-1k" finds nothing; "imagenet" finds the names)."""
    candidates = search(name)
    found = find_exact(candidates, name, fields)
    if found is None and not candidates and (wider := first_word(name)):
        candidates = search(wider)
    return found, candidates


def find_area(areas: Iterable[object], query: str) -> JsonObject | None:
    """The area whose ``id``, ``name`` or ``slug`` equals ``query`` (stripped, casefolded), else None:
    ``Computer Vision`` and ``computer-vision`` name the same area."""
    return find_exact(areas, query, ("id", "name", "slug"))


def resolve_area(areas: Sequence[object], query: str) -> JsonObject:
    """Like ``find_area`` but raises ``AreaNotFoundError`` (a ``NotFoundError``) listing every area name
    sorted case-insensitively, and carrying the areas so a caller can suggest the closest."""
    area = find_area(areas, query)
    if area is None:
        names = sorted((str(a.get("name")) for a in areas if isinstance(a, dict) and a.get("name")),
                       key=str.casefold)
        raise AreaNotFoundError(f"Area not found: {query}; available areas: {', '.join(names)}", query,
                                [a for a in areas if isinstance(a, dict)])
    return area


def area_name_map(areas: Iterable[object]) -> dict[str, str]:
    """``{str(area id): area name}`` for looking up a row's ``area_id``."""
    return {str(a.get("id")): str(a.get("name") or "") for a in areas
            if isinstance(a, Mapping) and a.get("id") is not None}


def with_area_names(payload: JsonValue, names: Mapping[str, str]) -> JsonValue:
    """A list payload whose rows carry ``area_name`` beside their ``area_id`` (when the area is
    known), so the JSON, like the table, names the area and not only its number."""
    results = payload.get("results") if isinstance(payload, dict) else None
    if not isinstance(payload, dict) or not isinstance(results, list):
        return payload
    rows: list[JsonValue] = [{**row, "area_name": names[str(row.get("area_id"))]}
                             if isinstance(row, dict) and names.get(str(row.get("area_id"))) else row
                             for row in results]
    return {**payload, "results": rows}

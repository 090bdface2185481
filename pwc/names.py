"""Exact entity-name matching and area resolution (``docs/cli-contract.md`` §3.2).

Matching is exact after stripping and casefolding, tried field by field in
priority order and, per field, in API order; the first hit wins (the CLI does
no ambiguity detection).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pwc.errors import NotFoundError, ResponseError

__all__ = [
    "AREAS_PARAMS",
    "BENCHMARK_FIELDS",
    "ENTITY_FIELDS",
    "METHOD_FIELDS",
    "area_name_map",
    "find_area",
    "find_exact",
    "not_found",
    "required_name",
    "resolve_area",
]

ENTITY_FIELDS: tuple[str, ...] = ("name", "slug", "id")
METHOD_FIELDS: tuple[str, ...] = ("name", "full_name", "slug", "id")
BENCHMARK_FIELDS = METHOD_FIELDS
# GET areas/ with these parameters lists every area (task list, method list, details).
AREAS_PARAMS: dict[str, Any] = {"page": 1, "page_size": 500, "ordering": "name"}


def _norm(value: Any) -> str:
    return str(value).strip().casefold()


def required_name(name: str | None, entity: str) -> str:
    """The stripped ``--name`` of a detail command (docs/cli-contract.md §5).

    Raises:
        ResponseError: ``<entity> inspection requires --name`` (exit 4) when it is missing or blank.
    """
    if not name or not name.strip():
        raise ResponseError(f"{entity} inspection requires --name")
    return name.strip()


def find_exact(items: Iterable[Any], query: str, fields: Sequence[str]) -> dict | None:
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


def not_found(label: str, query: str, items: Iterable[Any], *, name_only: bool = False) -> NotFoundError:
    """``<Label> not found: <query>; closest results: A, B, C`` (suffix omitted without candidates).

    Candidates are the first 3 items' ``name`` (else ``slug`` unless ``name_only``).
    """
    names: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        value = item.get("name") or (None if name_only else item.get("slug"))
        if value:
            names.append(str(value))
        if len(names) == 3:
            break
    message = f"{label} not found: {query}"
    if names:
        message += f"; closest results: {', '.join(names)}"
    return NotFoundError(message)


def find_area(areas: Iterable[Any], query: str) -> dict | None:
    """The area whose ``id`` or ``name`` equals ``query`` (stripped, casefolded), else None."""
    return find_exact(areas, query, ("id", "name"))


def resolve_area(areas: Sequence[Any], query: str) -> dict:
    """Like ``find_area`` but raises ``NotFoundError`` listing every area name sorted case-insensitively."""
    area = find_area(areas, query)
    if area is None:
        names = sorted((str(a.get("name")) for a in areas if isinstance(a, dict) and a.get("name")),
                       key=str.casefold)
        raise NotFoundError(f"Area not found: {query}; available areas: {', '.join(names)}")
    return area


def area_name_map(areas: Iterable[Any]) -> dict[str, str]:
    """``{str(area id): area name}`` for looking up a row's ``area_id``."""
    return {str(a.get("id")): str(a.get("name") or "") for a in areas
            if isinstance(a, Mapping) and a.get("id") is not None}

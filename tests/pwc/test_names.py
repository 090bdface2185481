"""Unit tests for ``pwc.names``: exact entity matching and area resolution (§3.2)."""

from __future__ import annotations

import pytest

from pwc.errors import AreaNotFoundError, NotFoundError
from pwc.names import (
    BENCHMARK_FIELDS,
    ENTITY_FIELDS,
    METHOD_FIELDS,
    area_name_map,
    find_area,
    find_exact,
    not_found,
    resolve_area,
)

ITEMS = [
    {"id": 1, "slug": "vit", "name": "ViT", "full_name": "Vision Transformer"},
    {"id": 2, "slug": "vision-transformer", "name": "Vision Transformer", "full_name": "ViT-Large"},
    {"id": 3, "slug": "x", "name": "2"},
]


@pytest.mark.parametrize(("query", "fields", "expected_id"), [
    pytest.param("  vision TRANSFORMER ", METHOD_FIELDS, 2, id="name-beats-full-name"),
    pytest.param("vit-large", METHOD_FIELDS, 2, id="full-name"),
    pytest.param("VIT", ENTITY_FIELDS, 1, id="casefolded-name"),
    pytest.param("2", ENTITY_FIELDS, 3, id="name-beats-id"),
    pytest.param("1", BENCHMARK_FIELDS, 1, id="id-as-string"),
    pytest.param("vision transformer", ("full_name",), 1, id="api-order-within-a-field"),
    pytest.param("ViT-Large", ENTITY_FIELDS, None, id="field-not-tried"),
])
def test_find_exact_tries_fields_in_priority_order(query: str, fields: tuple, expected_id: int | None) -> None:
    match = find_exact([*ITEMS, "not a dict"], query, fields)
    assert (match or {}).get("id") == expected_id


@pytest.mark.parametrize(("items", "name_only", "message"), [
    pytest.param(ITEMS + [{"name": "four"}], False, "Task not found: q; closest results: ViT, Vision Transformer, 2",
                 id="first-three"),
    pytest.param([{"slug": "s"}, {"name": "n"}], False, "Task not found: q; closest results: s, n", id="slug-fallback"),
    pytest.param([{"slug": "s"}, {"name": "n"}], True, "Task not found: q; closest results: n", id="name-only"),
    pytest.param([], False, "Task not found: q", id="no-candidates"),
])
def test_not_found_message(items: list, name_only: bool, message: str) -> None:
    error = not_found("Task", "q", items, name_only=name_only)
    assert isinstance(error, NotFoundError)
    assert str(error) == message
    assert error.exit_code == 4


AREAS = [{"id": 1, "name": "vision"}, {"id": 6, "name": "Audio"}, {"id": 9, "name": "Biology"},
         {"id": 12, "name": "Computer Code", "slug": "computer-code"}]


@pytest.mark.parametrize(("query", "expected"), [
    pytest.param("VISION", 1, id="name"), pytest.param("6", 6, id="id"), pytest.param(" 9 ", 9, id="stripped"),
    pytest.param("computer-code", 12, id="slug"), pytest.param("Computer-Code", 12, id="slug-any-case"),
    pytest.param("Computer Code", 12, id="display-name"),
])
def test_area_resolution(query: str, expected: int) -> None:
    assert find_area(AREAS, query)["id"] == expected
    assert resolve_area(AREAS, query)["id"] == expected


def test_unknown_area_lists_names_sorted_case_insensitively() -> None:
    with pytest.raises(NotFoundError, match="^Area not found: Robotics; available areas: Audio, Biology, "
                                            "Computer Code, vision$") as missed:
        resolve_area(AREAS, "Robotics")
    assert isinstance(missed.value, AreaNotFoundError)  # it carries what a caller suggests from
    assert (missed.value.query, missed.value.areas) == ("Robotics", AREAS)


def test_area_name_map_keys_ids_as_strings() -> None:
    assert area_name_map([*AREAS, {"name": "no id"}]) == {"1": "vision", "6": "Audio", "9": "Biology", "12": "Computer Code"}

"""JSON value types shared by every layer (``pwc_mcp_core.protocol.json_types`` re-exports them).

``JsonValue`` is what ``json.loads`` returns; ``JsonObject`` is a decoded JSON object. Code
reading a ``JsonValue`` narrows it with ``isinstance`` first; functions that only serialize
their argument take ``object`` or ``Mapping[str, object]`` instead (a ``dict[str, str]`` is not
a ``JsonObject``: dict is invariant).
"""

from __future__ import annotations

from typing import TypeAlias

__all__ = ["JsonObject", "JsonValue", "json_list", "json_objects"]

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"


def json_list(value: JsonValue) -> list[JsonValue]:
    """``value`` when it is a JSON array, else none (a missing or null list, or another type)."""
    return value if isinstance(value, list) else []


def json_objects(value: JsonValue) -> list[JsonObject]:
    """The objects of a JSON array; anything else (a missing or null list, a non-object item) is none."""
    return [item for item in json_list(value) if isinstance(item, dict)]

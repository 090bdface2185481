"""JSON value types for the catalog (the catalog imports no other package, so it spells them itself,
as ``pwc.json_types`` does for the rest).

``JsonValue`` is what ``json.loads`` returns; ``JsonObject`` is a decoded JSON object. Code reading
a ``JsonValue`` narrows it with ``isinstance`` first; functions that only serialize their argument
take ``object`` instead (a ``dict[str, str]`` is not a ``JsonObject``: dict is invariant).
"""

from __future__ import annotations

from typing import TypeAlias

__all__ = ["JsonObject", "JsonValue"]

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"

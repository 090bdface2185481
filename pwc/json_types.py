"""JSON value types shared by every layer (``pwc_mcp_core.protocol.json_types`` re-exports them).

``JsonValue`` is what ``json.loads`` returns; ``JsonObject`` is a decoded JSON object.
Functions that only read JSON take ``Mapping``/``Sequence`` forms (covariant, so a
``dict[str, str]`` is accepted); functions that build JSON return ``JsonObject``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

__all__ = ["JsonMapping", "JsonObject", "JsonValue", "ReadOnlyJson"]

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"
ReadOnlyJson: TypeAlias = (
    "bool | int | float | str | Sequence[ReadOnlyJson] | Mapping[str, ReadOnlyJson] | None"
)
JsonMapping: TypeAlias = "Mapping[str, ReadOnlyJson]"

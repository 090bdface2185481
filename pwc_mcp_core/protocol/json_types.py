"""JSON value types for the core and the gateway (defined once in ``pwc.json_types``)."""

from __future__ import annotations

from pwc.json_types import JsonObject, JsonValue

__all__ = ["JsonObject", "JsonValue"]

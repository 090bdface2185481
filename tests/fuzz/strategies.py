"""Hypothesis strategies for fuzzing ``POST /mcp``: JSON values, envelopes, headers, tool arguments.

``arguments_for(schema)`` draws tool arguments that *satisfy* a tool's inputSchema
(the subset the catalogue generates: object/string/integer/number/boolean/array/null,
enum, bounds, lengths, required, additionalProperties) and ``mutated_arguments`` breaks
them: a wrong type for one field, an unknown field, a required field dropped, an
out-of-range number.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = ["HEADER_NAMES", "arguments_for", "header_values", "json_values", "mutated_arguments",
           "request_ids"]

HEADER_NAMES = ("Content-Type", "Accept", "MCP-Protocol-Version", "Mcp-Method", "Mcp-Name", "Origin", "Host",
                "X-Forwarded-For", "X-PwC-MCP-Client")

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=40),
)
json_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)), max_leaves=12)
"""Any JSON-serializable value (no NaN/Infinity)."""

request_ids = st.one_of(st.integers(min_value=-(2**63), max_value=2**63), st.text(max_size=30))
"""Ids valid for MCP (string or integer)."""

# Header values httpx can send: printable latin-1, no CR/LF.
# Values an HTTP client can actually send: h11 refuses leading or trailing whitespace.
header_values = st.one_of(
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=60).map(str.strip),
    st.text(alphabet=st.characters(min_codepoint=0xA1, max_codepoint=0xFF), min_size=1, max_size=20),
    st.sampled_from(["application/json", "text/plain", "*/*", "application/json; charset=latin-1",
                     "2025-11-25", "2026-07-28", "2025-06-18", "1999-01-01", "tools/call", "initialize",
                     "https://claude.ai", "null", "http://evil.example", "localhost:1", "127.0.0.1, 10.0.0.1",
                     "=?base64?dG9vbHMvY2FsbA==?=", "=?base64?!!!?=", ""]),
)


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type", "string")
    return list(kind) if isinstance(kind, list) else [kind]


def _for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    options = []
    for kind in _types(schema):
        if kind == "string":
            options.append(st.text(min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 60), 60)))
        elif kind == "integer":
            options.append(st.integers(min_value=schema.get("minimum"), max_value=schema.get("maximum")))
        elif kind == "number":
            options.append(st.floats(min_value=schema.get("minimum"), max_value=schema.get("maximum"),
                                     allow_nan=False, allow_infinity=False))
        elif kind == "boolean":
            options.append(st.booleans())
        elif kind == "null":
            options.append(st.none())
        elif kind == "array":
            items = schema.get("items", {"type": "string"})
            options.append(st.lists(_for(items), min_size=schema.get("minItems", 0),
                                    max_size=min(schema.get("maxItems", 4), 4)))
        elif kind == "object":
            options.append(arguments_for(schema))
    return st.one_of(options) if options else json_values


@st.composite
def arguments_for(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments valid for ``schema``: every required property, a random subset of the others."""
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    chosen = {name for name in properties if name in required or draw(st.booleans())}
    return {name: draw(_for(properties[name])) for name in sorted(chosen)}


@st.composite
def mutated_arguments(draw: st.DrawFn, schema: dict[str, Any]) -> Any:
    """Arguments for ``schema`` with one deliberate defect (or not an object at all)."""
    arguments = draw(arguments_for(schema))
    properties: dict[str, Any] = schema.get("properties", {})
    mutation = draw(st.sampled_from(["wrong-type", "unknown-field", "drop-required", "out-of-range",
                                     "not-an-object", "huge-string"]))
    if mutation == "not-an-object":
        return draw(st.one_of(st.lists(json_values, max_size=3), _scalars))
    if mutation == "unknown-field":
        arguments[draw(st.text(min_size=1, max_size=20).filter(lambda k: k not in properties))] = draw(json_values)
    elif mutation == "drop-required" and schema.get("required"):
        arguments.pop(draw(st.sampled_from(schema["required"])), None)
    elif properties:
        name = draw(st.sampled_from(sorted(properties)))
        spec = properties[name]
        if mutation == "wrong-type":
            arguments[name] = draw(json_values.filter(lambda v, s=spec: not _matches_type(v, s)))
        elif mutation == "out-of-range":
            arguments[name] = draw(st.sampled_from([-1, 0, 10**6, 10**30, -(10**30), 2**63, 1e308, -1e308]))
        else:
            arguments[name] = draw(st.sampled_from(["x" * 70_000, "é" * 40_000, "\x00" * 1000, "\ud7ff" * 5000]))
    return arguments


def _matches_type(value: Any, schema: dict[str, Any]) -> bool:
    checks = {"string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
              "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
              "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
              "null": lambda v: v is None, "array": lambda v: isinstance(v, list),
              "object": lambda v: isinstance(v, dict)}
    return any(checks.get(kind, lambda v: True)(value) for kind in _types(schema))

"""Tool argument validation against each tool's ``inputSchema`` with fastjsonschema.

Validators are compiled once per tool per process. A failure raises
``ToolError("invalid_argument: <field> <what was wrong>")`` — a tool result
with ``isError``, never a protocol error — before any catalog call (task
brief; docs/tool-contract.md §3.1). Messages name the parameter but never echo a value
(values can be huge or private).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import cache

import fastjsonschema

from pwc_mcp_core.errors import ToolError
from pwc_mcp_core.protocol.json_types import JsonObject
from pwc_mcp_core.tools.argument_rules import check_dates
from pwc_mcp_core.tools.registry import ToolSpec, get_tool, tools

__all__ = ["compile_validators", "validate_arguments"]

_NAME_LIMIT = 64
_NAMES = re.compile(r"\{(.*)\}|\[(.*)\]")


@cache
def _validator(name: str) -> Callable[[object], object]:
    tool = get_tool(name)
    assert tool is not None  # callers look the tool up first
    schema = {key: value for key, value in tool.input_schema.items() if key != "$schema"}
    validate: Callable[[object], object] = fastjsonschema.compile(schema, use_default=False)
    return validate


def compile_validators() -> None:
    """Compile every tool's validator now (about 25 ms for the 24 tools).

    ``functools.cache`` does not make concurrent first callers wait for one another, so
    threads that all start with a cold cache would each compile the same validator.
    """
    for tool in tools():
        _validator(tool.name)


def _names(message: str) -> str:
    """``{'a', 'b'}`` / ``['a']`` inside a fastjsonschema message → ``a, b`` (each name cut short)."""
    match = _NAMES.search(message)
    raw = (match.group(1) or match.group(2)) if match else ""
    names = sorted(part.strip().strip("'\"")[:_NAME_LIMIT] for part in raw.split(",") if part.strip())
    return ", ".join(names[:10])


def _explain(exc: fastjsonschema.JsonSchemaValueException, tool: ToolSpec) -> str:
    field = ".".join(str(part) for part in exc.path[1:]) if exc.path else ""
    if exc.rule == "additionalProperties" and not field:
        properties = tool.input_schema["properties"]
        allowed = ", ".join(properties) if isinstance(properties, dict) else ""
        return f"unknown parameter(s): {_names(exc.message)}; allowed: {allowed}"
    if exc.rule == "required" and not field:
        return f"missing required parameter(s): {_names(exc.message)}"
    if exc.rule == "enum":
        allowed = exc.definition.get("enum", []) if isinstance(exc.definition, dict) else []
        return f"{field} must be one of: {', '.join(map(str, allowed))}"
    text = exc.message.removeprefix("data.").removeprefix("data ")
    if field.split(".")[0] == "pareto":  # say the form, not only the broken rule
        base = f"{field} has an invalid format" if exc.rule == "pattern" else text[:200]
        return (f"{base}; pareto takes 2-10 objectives, each METRIC:higher or METRIC:lower, "
                'e.g. ["Top 1 Accuracy:higher", "Params:lower"]')
    if exc.rule == "pattern":  # fastjsonschema echoes the regex; keep the field and the rule
        return f"{field} has an invalid format"
    return text[:300]


def validate_arguments(tool: ToolSpec, arguments: object) -> JsonObject:
    """Check ``arguments`` against ``tool.input_schema`` and the date rules; returns them unchanged.

    Raises:
        ToolError: ``invalid_argument: <which field, what was wrong>``.
    """
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ToolError("invalid_argument: arguments must be an object")
    try:
        _validator(tool.name)(arguments)
    except fastjsonschema.JsonSchemaValueException as exc:
        raise ToolError(f"invalid_argument: {_explain(exc, tool)}") from None
    for name, value in arguments.items():
        if not _finite(value):
            # JSON has no NaN or Infinity; a lenient parser lets them through, nothing serializes them.
            raise ToolError(f"invalid_argument: {name[:_NAME_LIMIT]} must hold finite numbers only")
    check_dates(arguments)
    return arguments


def _finite(value: object) -> bool:
    """False for a NaN or infinite float anywhere inside ``value`` (schema-valid values are shallow)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True

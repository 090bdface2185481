"""The 21 MCP tools, generated from the ``pwc`` parser (seed "Public contract"; docs/tool-contract.md §3.1, §3.3).

Every research flag of a command (``pwc.queries.query_options``) becomes a
parameter: its JSON type, enum, bounds and default are read off the argparse
action (range-checked integer types are probed for their bounds), renamed per
``definitions.PARAM_RENAMES``, and refined by the tool's overrides. The
hand-written facts (titles, descriptions, caps, MCP-only parameters) live in
:mod:`pwc_mcp_core.tools.definitions`; output schemas in
:mod:`pwc_mcp_core.tools.output_schemas`. ``tests/core/tools/test_parity.py`` fails when
the two drift.
"""

from __future__ import annotations

import argparse
import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from functools import cache

from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue
from pwc_mcp_core.tools import argument_rules
from pwc_mcp_core.tools.apps import tool_meta
from pwc_mcp_core.tools.definitions import (
    BENCHMARK_PAGE,
    DEFAULT_DESCRIPTIONS,
    LIMIT_CAP,
    PARAM_RENAMES,
    TOOL_DEFS,
    ToolDef,
)
from pwc_mcp_core.tools.output_schemas import DIALECT, OUTPUT_SCHEMAS, published

__all__ = ["ANNOTATIONS", "Param", "ToolSpec", "get_tool", "tool_list_result", "tools"]

ANNOTATIONS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True}
_MAX_TEXT = 500
_FLAG = re.compile(r"--([a-z][a-z-]*)")
_PROBE_SPAN = 2**63
_PLANS: dict[str, Callable[[JsonObject], tuple[JsonObject, list[str]]]] = {
    "list_tasks": argument_rules.plan_list_tasks,
    "list_benchmarks": argument_rules.plan_list_benchmarks,
}


def _number(value: JsonValue) -> float:
    """A metric threshold: validation allowed numbers only."""
    if isinstance(value, int | float):
        return float(value)
    raise TypeError("metric threshold is not a number")


@dataclass(frozen=True)
class Param:
    """One tool parameter: its MCP ``name``, the CLI ``dest`` it feeds (None = MCP-only) and schema."""

    name: str
    dest: str | None
    schema: JsonObject

    @property
    def default(self) -> JsonValue:
        return self.schema.get("default")

    def convert(self, value: JsonValue) -> object:
        """MCP value → CLI option value (metric thresholds as floats, empty author lists omitted)."""
        if isinstance(value, dict):
            return {str(key): _number(item) for key, item in value.items()}
        if isinstance(value, list):
            return list(value) or None
        return value


@dataclass(frozen=True)
class ToolSpec:
    """A generated tool: ``name``, ``title``, ``description``, ``command``, ``input_schema``,
    ``output_schema``, ``annotations`` and the parameter map behind :meth:`to_options`.
    ``output`` names the result builder (``projections.results.structured``) and output schema.
    ``output_schema`` is the strict schema results are tested against; ``tools/list`` publishes
    :func:`~pwc_mcp_core.tools.output_schemas.published` of it."""

    name: str
    title: str
    description: str
    command: tuple[str, ...]
    input_schema: JsonObject
    output_schema: JsonObject
    params: tuple[Param, ...]
    output: str = "query"
    forced: JsonObject = field(default_factory=dict)
    annotations: dict[str, bool] = field(default_factory=lambda: dict(ANNOTATIONS))

    def plan(self, arguments: JsonObject) -> tuple[JsonObject, list[str]]:
        """Apply the tool's fall-back rules (``argument_rules``); returns (arguments, notes)."""
        rule = _PLANS.get(self.name)
        return rule(arguments) if rule else (arguments, [])

    def to_options(self, arguments: JsonObject) -> dict[str, object]:
        """Validated MCP arguments → ``pwc.queries`` options keyed by CLI dest (docs/tool-contract.md §3.3 vectors).

        Absent parameters take their MCP default (None when there is none, i.e. the CLI default).
        """
        effective = self.effective(arguments)
        options: dict[str, object] = {param.dest: param.convert(effective[param.name]) for param in self.params if param.dest}
        options.update(self.forced)
        return options

    def effective(self, arguments: JsonObject) -> JsonObject:
        """Every parameter's value after the fall-back plan: given, else its MCP default, else None."""
        planned, _notes = self.plan(arguments)
        return {param.name: planned.get(param.name, param.default) for param in self.params}

    def describe(self) -> JsonObject:
        """The ``Tool`` object of ``tools/list`` (docs/protocol.md §4.2), with ``_meta.ui`` for a
        tool an MCP Apps host renders with a view (`apps.tool_meta`)."""
        described: JsonObject = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": published(self.output_schema),
            "annotations": {"title": self.title, **self.annotations},
        }
        meta = tool_meta(self.name)
        if meta is not None:
            described["_meta"] = meta
        return described


def _accepts(parse: Callable[[str], object], value: int) -> bool:
    try:
        result = parse(str(value))
    except (ValueError, TypeError, ArithmeticError, argparse.ArgumentTypeError):
        return False
    return isinstance(result, int) and not isinstance(result, bool)


def _edge(parse: Callable[[str], object], inside: int, outside: int) -> int:
    """Binary-search the accepted integer nearest ``outside`` (``inside`` is accepted, ``outside`` not)."""
    while abs(outside - inside) > 1:
        middle = (inside + outside) // 2
        if _accepts(parse, middle):
            inside = middle
        else:
            outside = middle
    return inside


def _probe(parse: Callable[[str], object] | None, default: object) -> JsonObject:
    """JSON Schema type (and integer bounds) of an argparse ``type`` callable, found by calling it."""
    if parse is None or parse is str:
        return {"type": "string"}
    if parse is float:
        return {"type": "number"}
    for sample, kind in (("2020-01-02", date), ("1.5", float)):
        try:
            if isinstance(parse(sample), kind):
                return {"type": "string", "maxLength": 10} if kind is date else {"type": "number"}
        except Exception:  # noqa: BLE001 - any failure just means "not this kind"
            pass
    seeds = [default] if isinstance(default, int) and not isinstance(default, bool) else []
    seed = next((s for s in [*seeds, 1, 0, 10, 2000] if _accepts(parse, s)), None)
    if seed is None:
        return {"type": "string"}
    schema: JsonObject = {"type": "integer"}
    if not _accepts(parse, -_PROBE_SPAN):
        schema["minimum"] = _edge(parse, seed, -_PROBE_SPAN)
    if not _accepts(parse, _PROBE_SPAN):
        schema["maximum"] = _edge(parse, seed, _PROBE_SPAN)
    return schema


def _help(action: argparse.Action) -> str | None:
    if not action.help or action.help == argparse.SUPPRESS:
        return None
    try:
        return action.help % {"default": action.default}
    except (KeyError, TypeError, ValueError):
        return action.help


def _action_schema(action: argparse.Action) -> JsonObject:
    """The generated JSON Schema of one research flag (before renames and overrides)."""
    if isinstance(action, argparse._StoreTrueAction):
        schema: JsonObject = {"type": "boolean", "default": False}
    elif isinstance(action, argparse._AppendAction):
        schema = {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": _MAX_TEXT}}
    elif action.choices is not None and {str(c) for c in action.choices} == {"true", "false"}:
        schema = {"type": ["boolean", "null"], "default": None}
    elif action.choices is not None:
        enum: list[JsonValue] = [str(c) for c in action.choices]
        schema = {"type": "string", "enum": enum}
    else:
        schema = _probe(action.type if callable(action.type) else None, action.default)
        if schema["type"] == "string" and "maxLength" not in schema:
            schema["maxLength"] = _MAX_TEXT
    if not action.option_strings:
        schema["minLength"] = 1
    if "default" not in schema and isinstance(action.default, bool | int | float | str):
        schema["default"] = action.default
    described = _help(action)
    if described:
        # Point at MCP parameter names, not terminal flags ("--task" → "task").
        schema["description"] = _FLAG.sub(lambda m: m.group(1).replace("-", "_"), described)
    return schema


def _param_name(tool: ToolDef, dest: str, dests: set[str]) -> str:
    if dest == "name" and tool.entity:
        return tool.entity
    if dest == "page_size" and "limit" not in dests:
        return "limit"
    return PARAM_RENAMES.get(dest, dest)


def _capped(name: str, schema: JsonObject) -> JsonObject:
    """Hosted cap: every ``limit`` is at most 25, its default too (seed "Safety and operations")."""
    if name == "limit" and schema.get("type") == "integer":
        maximum = schema.get("maximum", LIMIT_CAP)
        schema["maximum"] = min(maximum, LIMIT_CAP) if isinstance(maximum, int) else LIMIT_CAP
        default_value = schema.get("default")
        if isinstance(default_value, int):
            schema["default"] = min(default_value, LIMIT_CAP)
        default = f", default {schema['default']}" if "default" in schema else ""
        schema["description"] = f"Rows per page ({schema.get('minimum', 1)}-{schema['maximum']}{default})."
    return schema


def _merge(schema: JsonObject, override: JsonObject) -> JsonObject:
    if "type" in override:  # a structured parameter replaces the generated one outright
        return copy.deepcopy(override)
    return {**schema, **copy.deepcopy(override)}


def research_options(command: tuple[str, ...]) -> dict[str, argparse.Action]:
    """``pwc.queries.query_options(command)`` (the parser's research flags by dest)."""
    from pwc.queries import query_options

    return query_options(command)


def build_tool(tool: ToolDef) -> ToolSpec:
    """Generate one :class:`ToolSpec` from the parser and ``tool``'s hand-written facts."""
    actions = research_options(tool.command)
    params: list[Param] = []
    required: list[str] = []
    for dest, action in actions.items():
        name = _param_name(tool, dest, set(actions))
        schema = _capped(name, _action_schema(action))
        if name in tool.overrides:
            schema = _merge(schema, tool.overrides[name])
        if not action.option_strings or name == tool.entity:
            required.append(name)
            schema.pop("default", None)
            schema.setdefault("minLength", 1)
        schema.setdefault("description", DEFAULT_DESCRIPTIONS.get(name, name.replace("_", " ")))
        params.append(Param(name, dest, schema))
    params.extend(Param(name, None, copy.deepcopy(schema)) for name, schema in tool.extras.items())
    if tool.name == "get_benchmark" and "page" not in actions:
        # The CLI leaderboard has no --page: execution pages merged rows itself (leaderboards.py).
        params.append(Param("page", None, copy.deepcopy(BENCHMARK_PAGE)))
    input_schema: JsonObject = {
        "$schema": DIALECT,
        "type": "object",
        "properties": {param.name: param.schema for param in params},
        "required": list[JsonValue](required),
        "additionalProperties": False,
    }
    return ToolSpec(
        name=tool.name, title=tool.title, description=tool.description, command=tool.command,
        input_schema=input_schema, output_schema=copy.deepcopy(OUTPUT_SCHEMAS[tool.output]),
        params=tuple(params), output=tool.output, forced=dict(tool.forced),
    )


@cache
def tools() -> tuple[ToolSpec, ...]:
    """All the tools in the seed's order (built once per process)."""
    return tuple(build_tool(tool) for tool in TOOL_DEFS)


@cache
def _by_name() -> dict[str, ToolSpec]:
    return {tool.name: tool for tool in tools()}


def get_tool(name: object) -> ToolSpec | None:
    """The tool called ``name``, or None for an unknown name."""
    return _by_name().get(name) if isinstance(name, str) else None


def tool_list_result() -> dict[str, list[JsonObject]]:
    """The static ``tools/list`` result ``{"tools": [...]}`` (deterministic order)."""
    return {"tools": [tool.describe() for tool in tools()]}


def __getattr__(name: str) -> tuple[ToolSpec, ...]:
    # ``catalogue.TOOLS`` (ARCHITECTURE §2) is built lazily: the parser is only imported on first use.
    if name == "TOOLS":
        return tools()
    raise AttributeError(name)

"""The three prompts: `find_papers`, `compare_leaderboard`, `survey_task` (docs/tool-contract.md §7, exact texts).

Each takes one required string argument and returns one user message whose
text embeds the argument as a Python ``repr`` (single quotes unless the value
holds one), as the reference server did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pwc_mcp_core.errors import ProtocolError
from pwc_mcp_core.protocol.json_types import JsonObject
from pwc_mcp_core.protocol.jsonrpc import INVALID_PARAMS

__all__ = ["PROMPTS", "PromptSpec", "get_prompt", "prompts_list_result"]


@dataclass(frozen=True, slots=True)
class PromptSpec:
    """One prompt: its name, title, description, single argument and message template."""

    name: str
    title: str
    description: str
    argument: str
    argument_description: str
    template: str  # str.format template with one ``{value}`` slot holding repr(argument)

    def render(self, value: str) -> str:
        """The exact user-message text for ``value``."""
        return self.template.format(value=repr(value))


PROMPTS: Final = (
    PromptSpec(
        name="find_papers",
        title="Find papers",
        description="Find papers about a topic and cite their canonical URLs.",
        argument="topic",
        argument_description="Research topic or concept, e.g. 'vision transformers'.",
        template="Find papers about {value}. Use semantic search for concepts, then inspect the most relevant "
        "papers and cite their canonical URLs.",
    ),
    PromptSpec(
        name="compare_leaderboard",
        title="Compare a leaderboard",
        description="Inspect a benchmark leaderboard, its metric direction and evaluation settings.",
        argument="benchmark",
        argument_description="Benchmark (dataset) slug or name, e.g. 'imagenet' or 'ImageNet'.",
        template="Inspect the {value} benchmark. Explain metric direction and evaluation settings, and do not "
        "compare ranks from different task scopes.",
    ),
    PromptSpec(
        name="survey_task",
        title="Survey a research task",
        description="Survey a research task: its benchmarks, representative papers and methods.",
        argument="task",
        argument_description="Task slug or name, e.g. 'image-classification'.",
        template="Survey the {value} task. Resolve its slug, inspect high-coverage benchmarks, then summarize "
        "representative papers and methods.",
    ),
)
_BY_NAME: Final = {p.name: p for p in PROMPTS}


def prompts_list_result() -> JsonObject:
    """The legacy-era ``prompts/list`` result (one page, no cursor)."""
    return {"prompts": [
        {"name": p.name, "title": p.title, "description": p.description,
         "arguments": [{"name": p.argument, "description": p.argument_description, "required": True}]}
        for p in PROMPTS
    ]}


def get_prompt(params: JsonObject) -> JsonObject:
    """The ``prompts/get`` result for ``params`` (``{name, arguments}``; docs/protocol.md §4.5).

    Raises:
        ProtocolError: -32602 for an unknown prompt, a missing, empty or non-string argument.
    """
    name = params.get("name")
    spec = _BY_NAME.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ProtocolError(INVALID_PARAMS, f"Unknown prompt: {name}" if isinstance(name, str) else
                            "prompts/get requires a string 'name'")
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ProtocolError(INVALID_PARAMS, "prompts/get 'arguments' must be an object of strings")
    value = arguments.get(spec.argument)
    if not isinstance(value, str) or not value.strip():
        raise ProtocolError(INVALID_PARAMS, f"Missing required argument '{spec.argument}' for prompt {spec.name}")
    return {
        "description": spec.description,
        "messages": [{"role": "user", "content": {"type": "text", "text": spec.render(value)}}],
    }

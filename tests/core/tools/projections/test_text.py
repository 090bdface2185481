"""The result text on the stub catalog's richer rows: several rank scopes, harnesses, splits, shots.

The sample-catalog run (tests/integration/test_text_first.py) has one scope per
row; these rows carry each model result under two task scopes.
"""

from __future__ import annotations

from typing import Any

import pytest

from pwc_mcp_core.tools.execution import Runtime
from pwc_mcp_core.tools.projections.untrusted import unframe
from tests.core.tools.test_execution import ARGUMENTS, call_tool
from tests.core.tools.tools_stub import runtime, stub  # noqa: F401 - fixtures
from tests.text_facts import missing_facts


def result(runtime: Runtime, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    body = call_tool(runtime, name, arguments)["result"]
    assert not body.get("isError"), body["content"][0]["text"]
    return body["structuredContent"], "\n".join(block["text"] for block in body["content"] if block["type"] == "text")


@pytest.mark.parametrize("name", list(ARGUMENTS))
def test_every_fact_of_the_projections_is_in_the_text(runtime: Runtime, name: str) -> None:
    structured, text = result(runtime, name, ARGUMENTS[name])
    assert missing_facts(name, structured, text) == [], text


def test_a_row_under_two_tasks_shows_both_ranks_with_their_scope(runtime: Runtime) -> None:
    structured, text = result(runtime, "get_benchmark", ARGUMENTS["get_benchmark"])
    row = structured["evaluations"][0]
    scopes = [f"#{s['rank']} in {s['task_name']}" for s in row["rank_scopes"]]
    assert len(scopes) == 2 and "; ".join(scopes) in text


def test_read_paper_text_names_the_cursor_and_the_call_that_continues(runtime: Runtime) -> None:
    structured, text = result(runtime, "read_paper", {"paper": "1706.03762"})
    if structured["truncated"]:
        assert f'cursor="{structured["next_cursor"]}"' in text and 'paper="1706.03762"' in text
    else:
        assert "end of paper" in text
    assert unframe(text) == [structured["markdown"]]

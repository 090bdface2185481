"""NaN and Infinity arguments get a clear invalid_argument result; no encoder writes them."""

from __future__ import annotations

import pytest

from pwc_mcp_core.errors import ToolError
from pwc_mcp_core.protocol.jsonrpc import compact, dumps
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.tools.registry import get_tool
from pwc_mcp_core.tools.validation import validate_arguments


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_metric_threshold_is_an_invalid_argument(value: float) -> None:
    with pytest.raises(ToolError, match=r"^invalid_argument: minimum_metrics must hold finite numbers only$"):
        validate_arguments(get_tool("get_benchmark"), {"benchmark": "imagenet", "minimum_metrics": {"Top 1": value}})


def test_finite_numbers_pass() -> None:
    arguments = {"benchmark": "imagenet", "minimum_metrics": {"Top 1": 80.5}}
    assert validate_arguments(get_tool("get_benchmark"), arguments) == arguments


def test_the_one_encoder_refuses_nan_everywhere() -> None:
    for encode in (compact, dumps):
        with pytest.raises(ValueError):
            encode({"x": float("nan")})
    assert compact({"é": [1, 2.5]}) == '{"é":[1,2.5]}'


@pytest.mark.parametrize("value", [float("inf"), float("-inf")])
def test_the_call_envelope_carries_non_finite_arguments_to_the_workers_validation(value: float) -> None:
    # Redis mode must answer what the embedded mode answers (issue 21 item 2), so the queue
    # envelope carries the client's value and the worker's validation refuses it by name.
    call = Call(kind="tools/call", name="list_trending_papers", arguments={"min_velocity": value})
    rebuilt = Call.from_json(call.to_json())
    assert rebuilt == call
    with pytest.raises(ToolError, match=r"^invalid_argument: min_velocity must"):
        validate_arguments(get_tool("list_trending_papers"), rebuilt.arguments)

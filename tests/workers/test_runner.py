"""`workers.runner.Runner`: runs one call in the calling thread against the sample catalog."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from pwc_mcp_core.runtime.dispatch import TOO_LARGE, Answer
from pwc_mcp_core.tools.execution import Runtime
from tests.workers.conftest import result_of, tool_call
from workers.runner import Runner
from workers.settings import WorkerSettings


def test_a_call_and_its_serialized_form_give_the_same_answer(make_runner: Callable[..., Runner]) -> None:
    runner = make_runner()
    call = tool_call("search_papers")
    answer = runner.run_here(call)
    assert isinstance(answer, Answer) and "papers" in result_of(answer.body)["content"][0]["text"]  # type: ignore[index]
    assert runner.run_here(call.to_json().decode()) == answer


def test_refusals_are_answers_not_exceptions(make_runner: Callable[..., Runner]) -> None:
    runner = make_runner()
    unknown = runner.run_here(tool_call("no_such_tool", {}))
    assert isinstance(unknown, Answer) and json.loads(unknown.body)["error"]["message"] == "Unknown tool: no_such_tool"
    invalid = runner.run_here(tool_call("search_papers", {"query": 5}))
    assert isinstance(invalid, Answer) and result_of(invalid.body)["isError"] is True


def test_a_call_past_its_deadline_gets_no_body(make_runner: Callable[..., Runner]) -> None:
    assert make_runner().run_here(tool_call("search_papers", seconds=-1)) is None


def test_a_string_that_is_no_call_raises_value_error(make_runner: Callable[..., Runner]) -> None:
    """The worker drops such an entry (acknowledged, no reply): ``test_worker.py``."""
    with pytest.raises(ValueError):
        make_runner().run_here("not a call")


def test_a_body_over_the_bound_is_too_large(make_runner: Callable[..., Runner]) -> None:
    assert make_runner(max_response_bytes=2000).run_here(tool_call("search_papers")) is TOO_LARGE


def test_warm_builds_the_runtime_once_and_reports_a_failure(settings: WorkerSettings,
                                                             runtimes: list[Runtime]) -> None:
    def factory() -> Runtime:
        runtimes.append(Runtime.build(settings.core))
        return runtimes[-1]

    runner = Runner(factory, 1, settings.core.max_body_bytes)
    runner.warm()
    assert runner.run_here(tool_call("search_papers")) is not None
    assert len(runtimes) == 1

    def broken() -> Runtime:
        raise RuntimeError("no runtime")

    with pytest.raises(RuntimeError, match="no runtime"):
        Runner(broken, 1, settings.core.max_body_bytes).warm()

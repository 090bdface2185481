"""In-process query layer (docs/cli-contract.md §2.20, §1.4, §6 case 59)."""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json

import pytest

from pwc.cli import build_parser, main
from pwc.errors import NotFoundError, UsageError
from pwc.queries import RESEARCH_COMMANDS, build_argv, query, query_options
from pwc.transport import Client
from tests.pwc.stub import stub_catalog


def _leaves(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if prefix and (not subs or not subs[0].required):
        found.append(prefix)  # runnable: a leaf, or a detail form with an optional `list`
    for action in subs:
        for name, child in action.choices.items():
            found += _leaves(child, (*prefix, name))
    return found


def test_research_commands_are_every_runnable_command_but_version():
    assert len(RESEARCH_COMMANDS) == 26
    assert sorted(RESEARCH_COMMANDS) == sorted(c for c in _leaves(build_parser()) if c != ("version",))


def test_query_options_exclude_presentation_flags():
    options = query_options(("search",))
    assert set(options) == {"query", "limit", "page", "mode", "start_date", "end_date", "has_official_implementation",
                            "include_abstracts", "abstract_chars"}
    assert options["limit"].default == 10


def test_benchmark_list_options_match_the_reference():
    assert set(query_options(("benchmark", "list"))) == {
        "page", "page_size", "search", "task", "group_by_area", "area", "benchmarks_per_task",
        "include_descendants", "min_eval_count", "is_open", "order_by", "order_dir"}


def test_build_argv_for_a_benchmark_leaderboard():
    argv = build_argv(("benchmark",), {"name": "COCO", "limit": 5, "is_open": "true", "max_parameters": None,
                                       "require_metrics": ["mAP", "FPS"], "min": {"mAP": 40}, "max": {"FPS": 10.5},
                                       "pareto": ["mAP:higher", "FPS:lower"]})
    assert argv == ["--name", "COCO", "--limit", "5", "--is-open", "true", "--require-metrics", "mAP,FPS",
                    "--min", "mAP=40", "--max", "FPS=10.5", "--pareto", "mAP:higher,FPS:lower"]


def test_build_argv_puts_positionals_after_double_dash_and_formats_values():
    argv = build_argv(("paper", "list"), {"author": ["A", "@b"], "start_date": dt.date(2026, 8, 1),
                                          "all_versions": True, "include_resources": False})
    assert argv == ["--author", "A", "--author", "@b", "--start-date", "2026-08-01", "--all-versions"]
    assert build_argv(("search",), {"query": "-vit", "limit": 3}) == ["--limit", "3", "--", "-vit"]


@pytest.mark.parametrize(("command", "options", "message"), [
    pytest.param(("search",), {"query": "x", "limit": 0}, "--limit must be 1-100", id="range"),
    pytest.param(("search",), {"query": "x", "json": True}, "unknown option(s) for pwc search: json", id="unknown"),
    pytest.param(("search",), {"query": "x", "start_date": "2026-13-01"}, "invalid", id="date"),
    pytest.param(("search",), {"query": "x", "has_official_implementation": "yes"},
                 "--has-official-implementation expects a boolean", id="bool"),
    pytest.param(("search",), {}, "required: QUERY", id="missing-positional"),
    pytest.param(("version",), {}, "pwc version is not a read-only research command", id="version"),
    pytest.param(("paper", "edit"), {}, "not a read-only research command", id="edit"),
    pytest.param(("search",), {"query": "x", "start_date": "2026-08-02", "end_date": "2026-08-01"},
                 "start date must be on or before end date", id="date-order"),
])
def test_invalid_queries_raise_usage_errors_instead_of_exiting(command, options, message):
    with stub_catalog({}) as stub, Client(stub.url) as client, pytest.raises(UsageError) as info:
        query(command, options, client)
    assert message in str(info.value)
    assert stub.calls == []


BODY = {"count": 1, "results": [{"arxiv_id": "2501.01234", "title": "T"}], "applied_filters": {}}


def test_query_returns_exactly_what_json_prints_and_writes_nothing(capsys):
    with stub_catalog({"papers/search": BODY, "research/papers/2501.01234/read": "# Md"}) as stub:
        with Client(stub.url) as client:
            data = query(("search",), {"query": "vision", "limit": 3}, client)
            markdown = query(("paper", "read"), {"paper": "2501.01234"}, client)
            out = io.StringIO()
            main(["search", "vision", "--limit", "3", "--json"], client=client, stdout=out, stderr=io.StringIO())
    assert capsys.readouterr() == ("", "")
    assert json.loads(out.getvalue())["data"] == data == BODY
    assert markdown == {"paper": "2501.01234", "markdown": "# Md"}
    assert stub.calls[0] == stub.calls[2]


def test_query_propagates_command_errors():
    with stub_catalog({"papers/search": {"results": []}}) as stub, Client(stub.url) as client:
        with pytest.raises(NotFoundError):
            query(("paper", "info"), {"paper": "Unknown Title"}, client)


def test_parsed_command_lines_are_cached_but_every_caller_gets_its_own_namespace() -> None:
    from pwc.queries import _parse_cached, _parsed

    argv = ("paper", "list", "--page-size", "3", "--task", "x")
    first = _parsed(argv)
    first.json = True
    for value in vars(first).values():
        if isinstance(value, list):
            value.append("mutated")
    second = _parsed(argv)
    assert _parse_cached.cache_info().hits >= 1
    assert not getattr(second, "json", False)
    assert all("mutated" not in v for v in vars(second).values() if isinstance(v, list))

"""Parser tree, entry point and exit-code mapping (docs/cli-contract.md §1.1, §5)."""

from __future__ import annotations

import argparse
import io
import subprocess
import sys

import pytest

from pwc.cli import PwcParser, build_parser, main
from pwc.errors import NotFoundError
from tests.helpers import free_port


def _main(*argv: str, client: object = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), client=client, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", [pytest.param(["--version"], id="flag"), pytest.param(["version"], id="command")])
def test_version_prints_version_and_api_contract_without_network(argv):
    assert _main(*argv, client=object()) == (0, "pwc 0.4.1\tapi v1\n", "")


def test_console_module_runs():
    done = subprocess.run([sys.executable, "-m", "pwc", "--version"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "pwc 0.4.1\tapi v1\n")


@pytest.mark.parametrize(("argv", "prog", "message"), [
    pytest.param([], "pwc", "the following arguments are required: command", id="no-command"),
    pytest.param(["paper"], "pwc paper", "the following arguments are required: paper_command", id="paper-alone"),
    pytest.param(["search", "x", "--limit", "0"], "pwc search", "argument --limit: --limit must be 1-100",
                 id="limit-range"),
    pytest.param(["search", "x", "--limit", "abc"], "pwc search", "argument --limit: invalid int value: 'abc'",
                 id="limit-not-int"),
    pytest.param(["search", "x", "--page", "101"], "pwc search", "argument --page: --page must be 1-100",
                 id="page-range"),
    pytest.param(["search", "x", "--mode", "fuzzy"], "pwc search", "argument --mode: invalid choice",
                 id="mode-choice"),
    pytest.param(["search", "x", "--start-date", "2026-13-01"], "pwc search",
                 "argument --start-date: invalid fromisoformat value: '2026-13-01'", id="bad-date"),
    pytest.param(["search"], "pwc search", "the following arguments are required: QUERY", id="missing-query"),
    pytest.param(["search", "x", "--bogus"], "pwc search", "unrecognized arguments: --bogus", id="unknown-flag"),
    pytest.param(["conference", "list", "--limit", "0"], "pwc conference list", "unrecognized arguments: --limit 0",
                 id="unknown-flag-of-a-nested-command"),
    pytest.param(["paper", "related", "x", "--limit", "21"], "pwc paper related",
                 "argument --limit: --limit must be 1-20", id="related-limit"),
    pytest.param(["paper", "trending", "--max-age-days", "366"], "pwc paper trending",
                 "argument --max-age-days: --max-age-days must be 1-365", id="max-age"),
    pytest.param(["paper", "trending", "--min-velocity", "nan"], "pwc paper trending",
                 "argument --min-velocity: expected a finite number", id="min-velocity-nan"),
    pytest.param(["paper", "list", "--page-size", "101"], "pwc paper list",
                 "argument --page-size/--limit: --page-size must be 1-100", id="list-page-size"),
    pytest.param(["paper", "list", "--order-by", "stars"], "pwc paper list", "argument --order-by: invalid choice",
                 id="order-by"),
    pytest.param(["paper", "evaluations", "x", "--page-size", "0"], "pwc paper evaluations",
                 "--page-size must be 1-100", id="evaluations-page-size"),
    pytest.param(["paper", "lineage"], "pwc paper lineage", "the following arguments are required",
                 id="lineage-alone"),
])
def test_parse_errors_print_usage_and_hint_and_exit_2(argv, prog, message):
    code, out, err = _main(*argv, client=object())
    assert code == 2 and out == ""
    assert err.startswith("usage: ")
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"{prog}: error: ") and message in last
    assert last.endswith(f"; run '{prog} --help'")


def test_help_lists_commands_on_stdout():
    code, out, _ = _main("--help")
    assert code == 0 and "{search,paper," in out and "Papers With Code research CLI" in out


def test_parser_is_introspectable():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {"search", "paper", "version"} <= set(sub.choices)


def _toy_parser() -> PwcParser:
    parser = PwcParser(prog="toy")
    commands = parser.add_subparsers(dest="command", required=True)
    thing = commands.add_parser("thing")
    thing.add_argument("--json", action="store_true")
    thing.add_argument("--is-open", choices=("true", "false"))
    lists = thing.add_subparsers(dest="thing_command")
    listing = lists.add_parser("list")
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--is-open", choices=("true", "false"))
    for level in (thing, listing):
        level.add_argument("--tag", action="append", default=[])
    return parser


@pytest.mark.parametrize(("argv", "json_flag", "is_open"), [
    pytest.param(["thing", "--json", "list"], True, None, id="parent-json-kept"),
    pytest.param(["thing", "--is-open", "true", "list"], False, "true", id="parent-is-open-kept"),
    pytest.param(["thing", "--is-open", "true", "list", "--is-open", "false"], False, "false", id="deeper-wins"),
    pytest.param(["thing", "list", "--json"], True, None, id="child-only"),
    pytest.param(["thing", "list"], False, None, id="defaults"),
])
def test_flags_given_before_list_are_not_overwritten(argv, json_flag, is_open):
    args = _toy_parser().parse_args(argv)
    assert (args.json, args.is_open) == (json_flag, is_open)


def test_repeatable_flags_shared_by_both_levels_still_parse():
    assert _toy_parser().parse_args(["thing", "--tag", "a", "list", "--tag", "b"]).tag == ["b"]


def test_shared_flags_between_levels_share_their_defaults():
    """The keep-parent-value rule relies on parent and child agreeing on defaults."""

    def walk(parser: argparse.ArgumentParser) -> list[tuple[str, object, object]]:
        found = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                mine = {a.dest: a.default for a in parser._actions}
                for child in action.choices.values():
                    found += [(a.dest, mine[a.dest], a.default) for a in child._actions
                              if a.dest in mine and a.dest != "help" and not isinstance(a, argparse._SubParsersAction)]
                    found += walk(child)
        return found

    assert [item for item in walk(build_parser()) if item[1] != item[2]] == []


class _Exploding:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def get_json(self, *args, **kwargs):
        raise self.exc

    get_text = get_json


@pytest.mark.parametrize(("exc", "code", "message"), [
    pytest.param(NotFoundError("Paper title not found: x"), 4, "pwc: Paper title not found: x\n", id="pwc-error"),
    pytest.param(TimeoutError(), 3, "pwc: API request timed out\n", id="timeout"),
    pytest.param(KeyError("secret"), 1, "pwc: unexpected error: KeyError\n", id="unexpected"),
])
def test_errors_map_to_one_stderr_line_and_exit_code(exc, code, message):
    assert _main("search", "x", client=_Exploding(exc)) == (code, "", message)


def test_connection_failure_through_default_client(monkeypatch):
    monkeypatch.setenv("PWC_API_URL", f"http://127.0.0.1:{free_port()}/api/v1")
    code, out, err = _main("search", "x")
    assert (code, out) == (3, "") and err.startswith("pwc: API request failed: ")


def test_closed_pipe_stops_quietly_without_traceback():
    from tests.pwc.stub import stub_catalog

    rows = [{"arxiv_id": f"2501.{i:05d}", "title": "t" * 80} for i in range(3000)]
    with stub_catalog({"papers/search": {"count": 3000, "results": rows}}) as stub:
        proc = subprocess.Popen([sys.executable, "-m", "pwc", "search", "x"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env={**__import__("os").environ, "PWC_API_URL": stub.url})
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # the reader is gone before the first write
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=60)
    assert code == 141 and "Traceback" not in err and err == ""

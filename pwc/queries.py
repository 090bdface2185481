"""In-process research queries for the MCP layer (``docs/cli-contract.md`` §2.20, §1.4).

``query(command, options, client)`` runs a read-only command exactly as
``pwc <command> … --json`` would and returns its ``data`` payload, without
writing to stdout and without exiting: parse errors raise ``UsageError``.
Options are keyed by argparse destination (``query_options``), and turned
into a command line by ``build_argv`` so that every CLI validation applies.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pwc.cli import RaisingParser, build_parser, parse_args
from pwc.errors import UsageError

if TYPE_CHECKING:  # the transport (httpx) is imported only where a call is made
    from pwc.transport import Client

__all__ = ["PRESENTATION_DESTS", "RESEARCH_COMMANDS", "build_argv", "query", "query_options"]

RESEARCH_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("search",),
    ("paper", "info"), ("paper", "evaluations"), ("paper", "read"), ("paper", "list"),
    ("paper", "recent"), ("paper", "trending"), ("paper", "related"), ("paper", "lineage", "list"),
    ("task",), ("task", "list"), ("method",), ("method", "list"),
    ("conference",), ("conference", "list"), ("organization",), ("organization", "list"),
    ("framework",), ("framework", "list"), ("benchmark",), ("benchmark", "list"),
    ("paper", "find"),
    ("paper", "cite"), ("paper", "verify"),
    ("benchmark", "history"),
    ("trends",),
)
# §1.4: these only shape terminal output; JSON ignores them.
PRESENTATION_DESTS = frozenset({"json", "implementation_coverage", "flat", "chart"})

_parser: argparse.ArgumentParser | None = None
_parser_lock = threading.Lock()


def _query_parser() -> argparse.ArgumentParser:
    """The shared raising parser (parsing does not mutate it, so threads may share it)."""
    global _parser
    with _parser_lock:
        if _parser is None:
            _parser = build_parser(RaisingParser)
        return _parser


def _leaf(command: Sequence[str]) -> argparse.ArgumentParser:
    parser = _query_parser()
    for name in command:
        subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subparsers or name not in subparsers[0].choices:
            raise UsageError(f"unknown command: pwc {' '.join(command)}")
        parser = subparsers[0].choices[name]
    return parser


def query_options(command: Sequence[str]) -> dict[str, argparse.Action]:
    """The command's own argparse actions by ``dest`` (no help, version, sub-command
    selectors or presentation flags). Raises ``UsageError`` for an unknown command."""
    return {
        action.dest: action for action in _leaf(command)._actions
        if not isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction))
        and action.dest not in PRESENTATION_DESTS
    }


def _flag(action: argparse.Action) -> str:
    longs = [s for s in action.option_strings if s.startswith("--")]
    return (longs or action.option_strings)[0]


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()[:10]
    return str(value)


def build_argv(command: Sequence[str], options: Mapping[str, object]) -> list[str]:
    """Command-line arguments (after the command words) for ``options`` keyed by dest.

    None leaves the default; store-true flags need a real bool (``<flag>
    expects a boolean``); a mapping becomes ``NAME=VALUE`` items; append flags
    repeat once per item, other list values are comma-joined; dates are ISO,
    bools ``true``/``false``; positionals go last after ``--``. Raises
    ``UsageError`` for unknown option names.
    """
    actions = query_options(command)
    unknown = sorted(set(options) - set(actions))
    if unknown:
        raise UsageError(f"unknown option(s) for pwc {' '.join(command)}: {', '.join(unknown)}")
    argv: list[str] = []
    positionals: list[str] = []
    for dest, value in options.items():
        if value is None:
            continue
        action = actions[dest]
        if not action.option_strings:
            # A many-valued positional (``paper cite REF...``) takes one argument per item.
            items = value if isinstance(value, (list, tuple)) else [value]
            positionals.extend(_text(item) for item in items)
            continue
        flag = _flag(action)
        if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
            if not isinstance(value, bool):
                raise UsageError(f"{flag} expects a boolean")
            if value != action.default:
                argv.append(flag)
            continue
        if isinstance(value, Mapping):
            value = [f"{key}={_text(item)}" for key, item in value.items()]
        if isinstance(action, argparse._AppendAction):
            items = value if isinstance(value, (list, tuple)) else [value]
            for item in items:
                argv += [flag, _text(item)]
        elif isinstance(value, (list, tuple)):
            argv += [flag, ",".join(_text(item) for item in value)]
        else:
            argv += [flag, _text(value)]
    if positionals:
        argv += ["--", *positionals]
    return argv


def query(command: Sequence[str], options: Mapping[str, object], client: Client) -> object:
    """Run a read-only research command in-process and return its ``--json`` ``data``.

    Raises ``UsageError`` for non-research commands (``pwc <cmd> is not a
    read-only research command``) and invalid options, and any other
    :mod:`pwc.errors` error the command raises. Writes nothing to stdout.
    """
    command = tuple(command)
    if command not in RESEARCH_COMMANDS:
        raise UsageError(f"pwc {' '.join(command)} is not a read-only research command")
    args = _parsed(tuple([*command, *build_argv(command, options)]))
    args.json = True
    return args.handler(args, client)


def _parsed(argv: tuple[str, ...]) -> argparse.Namespace:
    """``parse_args`` of ``argv``, from a bounded cache: a fresh namespace per call.

    Parsing a command line was about a quarter of the CPU of a cached tool call, and
    agents repeat the same calls. Handlers may set attributes, so each caller gets its
    own copy (lists copied too); errors are not cached.
    """
    cached = _parse_cached(argv)
    return argparse.Namespace(**{k: list(v) if isinstance(v, list) else v for k, v in vars(cached).items()})


@functools.lru_cache(maxsize=1024)
def _parse_cached(argv: tuple[str, ...]) -> argparse.Namespace:
    return parse_args(_query_parser(), list(argv))

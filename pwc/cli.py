"""The `pwc` argument parser and entry point (``docs/cli-contract.md`` §1, §5).

Registration pattern (every command module under ``pwc.commands`` follows it):

* ``register(subparsers)`` adds the module's parsers to the top-level
  sub-parser action and, per runnable command, calls
  ``parser.set_defaults(handler=run_x, renderer=render_x)``.
* ``run_x(args, client) -> payload`` is pure: it talks to the catalog only
  through ``client`` (a :class:`pwc.transport.Client`), never prints, raises
  only :mod:`pwc.errors`, and returns exactly the ``data`` of ``--json``.
* ``render_x(payload, args, out)`` writes the text form to
  ``out: pwc.render.Output`` (stdout, stderr, ``isatty``).
* Range-checked integers use :func:`pwc.arguments.int_range`; dates use
  ``datetime.date.fromisoformat``.

Parent and ``list`` levels (§1.1 quirk fix): when a sub-command declares a
flag its parent also declares (``task --json list``, ``benchmark --is-open
true list``), a value given at either level is kept; the deeper level wins
when both are given. The reference let the sub-parser's defaults overwrite
the parent's value. Levels that share a flag must share its default.
Repeatable (append) flags are not carried over.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn, TextIO, TypedDict, Unpack

from pwc import API_CONTRACT_VERSION, __version__
from pwc.errors import PwcError, UsageError
from pwc.render import Output, json_envelope

if TYPE_CHECKING:  # the transport (httpx) is imported only where a call is made
    from pwc.transport import Client

__all__ = ["COMMAND_MODULES", "PwcParser", "RaisingParser", "build_parser",
           "main", "parse_args", "run"]

logger = logging.getLogger(__name__)

COMMAND_MODULES = ("search", "papers", "tasks", "methods", "entities", "benchmarks", "trends")
VERSION_LINE = f"pwc {__version__}\tapi {API_CONTRACT_VERSION}"

_UNSET = object()  # marks a shared flag the sub-command line did not give
_ACCUMULATING = (argparse._AppendAction, argparse._AppendConstAction, argparse._CountAction)


class ParserOptions(TypedDict, total=False):
    """The keywords of ``argparse.ArgumentParser`` (what ``add_parser`` passes a sub-parser's class)."""

    prog: str | None
    usage: str | None
    description: str | None
    epilog: str | None
    parents: Sequence[argparse.ArgumentParser]
    formatter_class: type[argparse.HelpFormatter]
    prefix_chars: str
    fromfile_prefix_chars: str | None
    argument_default: object
    conflict_handler: str
    add_help: bool
    allow_abbrev: bool
    exit_on_error: bool


class PwcParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors end with ``; run '<prog> --help'`` and exit 2 (§1.1).

    Its sub-parser action keeps values given before the sub-command (module docstring).
    """

    def __init__(self, **kwargs: Unpack[ParserOptions]) -> None:
        super().__init__(**kwargs)
        self.register("action", "parsers", _SubParsersKeepingParentValues)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}; run '{self.prog} --help'\n")


class RaisingParser(PwcParser):
    """A parser that raises :class:`UsageError` instead of printing and exiting (in-process queries)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise UsageError(message.strip() if message else f"{self.prog} exited ({status})")


# typeshed makes the sub-parser action generic; the runtime class is not subscriptable.
if TYPE_CHECKING:
    _SubParsersAction = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    _SubParsersAction = argparse._SubParsersAction


class _SubParsersKeepingParentValues(_SubParsersAction):
    """Sub-parser action that lets a flag given before the sub-command survive (§1.1 quirk fix).

    The child parses into a namespace pre-filled with a sentinel for every
    destination the parent already holds; sentinels left untouched mean "not
    given at this level", so the parent's value is kept.
    """

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Sequence[str] | None, option_string: str | None = None) -> None:
        values = list(values or [])
        name, arg_strings = values[0], values[1:]
        if self.dest is not argparse.SUPPRESS:
            setattr(namespace, self.dest, name)
        try:
            child = self._name_parser_map[name]
        except KeyError:
            choices = ", ".join(map(repr, self._name_parser_map))
            raise argparse.ArgumentError(self, f"invalid choice: {name!r} (choose from {choices})") from None
        held = set(vars(namespace))
        # Accumulating actions (append, count) build on the current value, so they keep
        # argparse's behaviour: the child's default.
        shared = {a.dest for a in child._actions if a.dest in held and a.dest != argparse.SUPPRESS
                  and not isinstance(a, _ACCUMULATING)}
        subnamespace = argparse.Namespace(**{dest: _UNSET for dest in shared})
        subnamespace, extras = child.parse_known_args(arg_strings, subnamespace)
        for key, value in vars(subnamespace).items():
            if value is not _UNSET:
                setattr(namespace, key, value)
        if extras:  # the sub-command's own error, so its hint names its --help (not the root's)
            child.error(f"unrecognized arguments: {' '.join(extras)}")


def _run_version(args: argparse.Namespace, client: Client) -> str:
    return VERSION_LINE


def _render_version(payload: str, args: argparse.Namespace, out: Output) -> None:
    out.line(payload)


def build_parser(parser_class: type[PwcParser] = PwcParser) -> argparse.ArgumentParser:
    """The full ``pwc`` parser tree (introspectable; MCP tool schemas are generated from it).

    ``parser_class`` is :class:`PwcParser` for the terminal and
    :class:`RaisingParser` for :mod:`pwc.queries`; sub-parsers inherit it.
    """
    parser = parser_class(
        prog="pwc",
        description="Papers With Code research CLI",
        epilog=("examples:\n"
                '  pwc search "small VLMs" --limit 10\n'
                "  pwc paper info 2501.01234\n"
                '  pwc task --name "scene-text-recognition"\n'
                '  pwc organization --name "NVIDIA"\n'
                "  pwc benchmark list --task OCR\n"
                '  pwc benchmark --name "SWE-Bench Pro"\n'),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=VERSION_LINE)
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(f"pwc.commands.{name}").register(subparsers)
    version = subparsers.add_parser("version", help="print the CLI and API contract versions")
    version.set_defaults(handler=_run_version, renderer=_render_version)
    return parser


def parse_args(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``argv`` with ``parser``; unknown arguments are a parse error of the leaf parser."""
    args = parser.parse_args(list(argv))
    if not hasattr(args, "handler"):
        parser.error("the following arguments are required: command")
    return args


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _silence_stdout(stdout: TextIO) -> None:
    """Point the real stdout at /dev/null so the interpreter's final flush cannot fail again."""
    if stdout is sys.stdout:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass


def main(argv: Sequence[str] | None = None, *, client: Client | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None, isatty: bool | None = None) -> int:
    """Run one ``pwc`` command line and return its exit code (§5).

    0 success; 2 parse or usage error; 3 network/HTTP error or any timeout;
    4 unusable response or failed lookup; 1 unexpected error (``pwc:
    unexpected error: <type>``, never a traceback). ``client`` defaults to a
    :class:`pwc.transport.Client` built from ``PWC_API_URL``; ``isatty``
    defaults to ``stdout.isatty()``.
    """
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    out = Output(stdout=stdout, stderr=stderr, isatty=_isatty(stdout) if isatty is None else isatty)
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            args = parse_args(build_parser(), argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    own_client = None
    try:
        if client is None:
            from pwc.transport import Client

            client = own_client = Client()
        # task list / benchmark list group automatically on a terminal, which decides their calls.
        args.isatty = out.isatty
        payload = args.handler(args, client)
        # Files a command writes besides stdout (`benchmark history --chart FILE`).
        if getattr(args, "write_files", None) is not None:
            args.write_files(payload, args)
        if getattr(args, "json", False):
            out.line(json_envelope(payload))
        else:
            args.renderer(payload, args, out)
        return 0
    except PwcError as exc:
        stderr.write(f"pwc: {exc}\n")
        return exc.exit_code
    except TimeoutError:
        stderr.write("pwc: API request timed out\n")
        return 3
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`pwc … | head`): stop quietly, like other Unix tools.
        _silence_stdout(stdout)
        return 141
    except Exception as exc:  # the CLI never shows a traceback
        logger.debug("unexpected error in pwc command", exc_info=True)
        stderr.write(f"pwc: unexpected error: {type(exc).__name__}\n")
        return 1
    finally:
        if own_client is not None:
            own_client.close()


def run() -> None:
    """Console-script entry point: ``sys.exit(main())``."""
    sys.exit(main())

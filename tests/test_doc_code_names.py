"""Every code name the documents cite exists in the code (issue 34 §5).

The prose documents (README.md, ARCHITECTURE.md, RELIABILITY.md, BENCHMARKS.md, docs/*.md) and
the code's own docstrings and comments cite code in backticks. Each span that looks like code is
checked against the checkout:

* a file path whose first folder is one of the checkout (``catalog/importer/ranking.py``,
  ``bench/``), or a bare ``*.py``/``*.lua`` name, names a tracked file or folder (API routes such as
  ``tasks/`` and data folders are not the checkout's; Markdown files: tests/test_doc_citations.py);
* a dotted name that starts at a project package (``pwc_mcp_core.runtime.dispatch.bounded``)
  resolves from there: its longest leading part is a module, and every following segment is a
  word of that module (of any module inside, for a package);
* another dotted name (``queue.reply_commands``, ``McpServer.answer``, ``papers.trend``) resolves
  in a module whose name ends with its leading parts, else each segment is a word of the code;
* a bare identifier that is code-shaped (with an underscore, in camel case, or followed by ``(``:
  ``MAX_BYTES``, ``McpServer``, ``bounded(body, limit)``) is a word of the code.

"A word of the code" is a word of a tracked Python file outside its docstrings and comments (so a
citation never vouches for itself) or of a tracked non-Markdown file; a Prometheus ``*_total``
sample counts as its counter, and a type name such as ``PaperSummary`` as the output schema
``PAPER_SUMMARY`` (``pwc_mcp_core.tools.output_schemas``).

Spans with spaces (commands), literals (``"lower"``, ``{...}``), flags and URLs are not code names
and are skipped. ``NOT_CODE`` lists the few code-shaped spans that name something outside this
checkout on purpose.
"""

from __future__ import annotations

import ast
import functools
import io
import os
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pwc", "pwc_mcp_core", "gateway", "workers", "catalog", "metric_rules", "paper_passages", "web_serving", "bench",
            "conformance", "tests")
"""Top-level folders whose modules a dotted citation may start at."""
DOCUMENTS = ("README.md", "ARCHITECTURE.md", "RELIABILITY.md", "BENCHMARKS.md")
NOT_CODE = frozenset({
    # Placeholders: an arXiv ID's shape, a version suffix, a command's functions, an example class.
    "vN", "NNNN.NNNNN", "YYMM.NNNNN", "run_x", "render_x", "FooError",
    # Protocol fields and SQLite's own table, named by the documents, never spelled by this code.
    "nextCursor", "sqlite_stat1",
    # redis-py's cluster client, named as what a move to Redis Cluster would use (ARCHITECTURE.md).
    "RedisCluster", "redis.asyncio.RedisCluster",
    # Names of the libraries this code uses (aiohttp, redis-py, multidict, gunicorn, the Hugging
    # Face Hub, datasets, pyarrow, pandas).
    "web.run_app", "SentinelManagedConnection", "CIMultiDictProxy", "ContextVar", "max_requests",
    "get_hf_file_metadata", "hf_raise_for_status", "xetHash", "push_to_hub", "pyarrow.json.read_json",
    "pandas_read_json", "pa.Table.from_pandas", "convert_dates",
})
_SPAN = re.compile(r"(?<!`)``?([^`\n]+?)``?(?!`)")
# One worker runs every test here, so the checkout's modules are parsed once (the cached
# `_source`, `_all_names`), not once per worker.
pytestmark = pytest.mark.xdist_group("test_doc_code_names")
_ROLE = re.compile(r":(?:func|class|meth|data|mod|attr|obj|exc):`~?\.?([^`\n]+)`")
_CALLABLE = re.compile(r"([A-Za-z_][\w.]*?)(?:\(.*\))?(?:\s*->.*)?")
_PATH = re.compile(r"[\w.-]+(?:/[\w.-]+)*(?:/|\.(?:py|lua|toml|sh|yml|yaml|conf|service|json|j2|mjs|html|md|db|txt))")
_SOURCE_FILE = re.compile(r"[\w-]+\.(?:py|lua)")
_CODE_SHAPED = re.compile(r"_|[a-z0-9][A-Z]|[A-Z][a-z]+[A-Z]")
_WORD = re.compile(r"[A-Za-z_]\w*")


@functools.cache
def _tracked() -> tuple[str, ...]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return tuple(line for line in out.splitlines() if (ROOT / line).is_file())


@functools.cache
def _modules() -> dict[str, Path]:
    """Dotted module name → file, for every tracked Python module."""
    found = {}
    for line in _tracked():
        if line.endswith(".py"):
            parts = Path(line).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            found[".".join(parts)] = ROOT / line
    return found


def _statements(nodes: list[ast.stmt]) -> list[ast.stmt]:
    """Every statement, nested ones included (expressions are not walked: docstrings are statements)."""
    found: list[ast.stmt] = []
    stack: list[ast.AST] = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            found.append(node)
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(node, name, None) or [])
    return found


def _docstrings(tree: ast.Module) -> list[tuple[int, int, str]]:
    """``(first line, last line, text)`` of every string statement: docstrings, attribute docstrings."""
    return [(node.lineno, node.end_lineno or node.lineno, node.value.value) for node in _statements(tree.body)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)]


@functools.cache
def _source(path: Path) -> tuple[str, ast.Module]:
    text = path.read_text(encoding="utf-8")
    return text, ast.parse(text)


_COMMENT = re.compile(r"#.*$", re.MULTILINE)
_TICKED_COMMENT = re.compile(r"#[^\n]*`")


@functools.cache
def _names_in(path: Path) -> frozenset[str]:
    """Every word of a Python file's code and strings: its docstrings and comments left out, so a
    citation never counts as what it cites."""
    text, tree = _source(path)
    lines = text.splitlines()
    for first, last, _ in _docstrings(tree):
        lines[first - 1:last] = [""] * (last - first + 1)
    return frozenset(_WORD.findall(_COMMENT.sub("", "\n".join(lines))))


@functools.cache
def _package_names(module: str) -> frozenset[str]:
    """The names of a module, and for a package those of every module inside it."""
    modules = _modules()
    inside = [path for name, path in modules.items() if name == module or name.startswith(module + ".")]
    return frozenset().union(*(_names_in(path) for path in inside))


@functools.cache
def _all_names() -> frozenset[str]:
    names = set().union(*(_names_in(path) for path in _modules().values()))
    for line in _tracked():
        if not line.endswith((".py", ".md", ".png", ".lock")):
            names.update(_WORD.findall((ROOT / line).read_text(encoding="utf-8", errors="replace")))
    names.update(_modules())  # dotted module names and their segments
    names.update(part for module in _modules() for part in module.split("."))
    return frozenset(names)


def _module_for(parts: list[str]) -> tuple[str, int] | None:
    """The project module the leading parts name from its package, and how many parts that takes."""
    modules = _modules()
    for count in range(len(parts), 0, -1):
        head = ".".join(parts[:count])
        if head in modules:
            return head, count
    return None


def _in_checkout(cited: str, source: str) -> bool:
    """Whether a path's first folder is one of the checkout (from its root or the citing file's
    folder); other paths (API routes such as ``tasks/``, data folders, other projects' files) are
    not the checkout's, and neither are paths that leave it (``../shared/data/...``, the data
    beside a clone, present or not)."""
    parts = Path(cited.removeprefix("./")).parts
    ups = next((i for i, part in enumerate(parts) if part != ".."), len(parts))
    for base in (ROOT, (ROOT / source).parent):
        first = Path(os.path.normpath(base.joinpath(*parts[:ups + 1])))  # its first folder, past any ".."
        if first.exists() and first.is_relative_to(ROOT):
            return True
    return False


def _path_exists(cited: str, source: str) -> bool:
    cited = cited.removeprefix("./")
    if "/" not in cited:  # a bare source file name: any tracked file of that name
        return any(Path(line).name == cited for line in _tracked())
    base = str(Path(source).parent / cited) if "/" in source else cited
    for line in _tracked():
        for wanted in (cited.rstrip("/"), base.rstrip("/")):
            if line == wanted or line.startswith(wanted + "/") or line.endswith("/" + wanted):
                return True
    return (ROOT / cited).exists()


def problem(span: str, source: str) -> str | None:
    """Why the backticked ``span`` cited in ``source`` names nothing in the checkout, else None."""
    span = span.strip()
    if span in NOT_CODE or "<" in span or "*" in span or "{" in span:
        return None
    if _PATH.fullmatch(span):
        if ("/" in span and not _in_checkout(span, source)) or ("/" not in span and not _SOURCE_FILE.fullmatch(span)):
            return None  # not a path of the checkout; Markdown files: tests/test_doc_citations.py
        return None if _path_exists(span, source) else "no such file"
    match = _CALLABLE.fullmatch(span)
    if match is None:
        return None
    name = match.group(1).rstrip(".")
    if name in NOT_CODE:
        return None
    parts = name.split(".")
    if len(parts) == 1:
        if not (_CODE_SHAPED.search(name) or match.end(1) < len(span)) or _known(name):
            return None
        return "no such name in the code"
    if any(not part for part in parts):
        return None
    if parts[0] in PACKAGES:
        found = _module_for(parts)
        if found is None:
            return "no such module"
        module, count = found
        missing = [part for part in parts[count:] if part not in _package_names(module)]
        return f"{module} has no {missing[0]}" if missing else None
    # ``queue.reply_commands``, ``McpServer.answer``, ``papers.trend``: a module named by its last
    # segments that has the rest, else names found anywhere in the code.
    for module, count in _modules_ending(parts):
        if all(part in _package_names(module) for part in parts[count:]):
            return None
    missing = [part for part in parts if not _known(part)]
    return f"no such name in the code: {missing[0]}" if missing else None


def _known(name: str) -> bool:
    """A name of the code; also a Prometheus counter's ``_total`` sample of a known counter, and
    an output schema's type name (``PaperSummary`` for ``output_schemas.PAPER_SUMMARY``)."""
    names = _all_names()
    screaming = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()
    return name in names or name.removesuffix("_total") in names or screaming in _package_names(
        "pwc_mcp_core.tools.output_schemas")


def _modules_ending(parts: list[str]) -> list[tuple[str, int]]:
    """Every project module whose dotted name ends with leading parts of ``parts``, with how many."""
    return [(name, count) for count in range(len(parts), 0, -1) for name in _modules()
            if name == ".".join(parts[:count]) or name.endswith("." + ".".join(parts[:count]))]


def _markdown_spans(path: Path) -> list[tuple[int, str]]:
    """Backticked spans of a Markdown file, outside fenced blocks."""
    spans, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            spans.extend((number, span) for span in _SPAN.findall(line))
    return spans


def _python_spans(path: Path) -> list[tuple[int, str]]:
    """Backticked spans (and Sphinx roles) of a Python file's docstrings and comments."""
    text, tree = _source(path)
    chunks = [(first, doc) for first, _, doc in _docstrings(tree)]
    tokens = tokenize.generate_tokens(io.StringIO(text).readline) if _TICKED_COMMENT.search(text) else iter(())
    for token in tokens:
        if token.type == tokenize.COMMENT:
            chunks.append((token.start[0], token.string))
    spans = []
    for line, chunk in chunks:
        for offset, row in enumerate(chunk.splitlines()):
            spans.extend((line + offset, span) for span in _ROLE.findall(row))
            spans.extend((line + offset, span) for span in _SPAN.findall(_ROLE.sub("", row)))
    return spans


def _unresolved(files: list[str], spans_of: object) -> list[str]:
    missing = []
    for source in files:
        for line, span in spans_of(ROOT / source):  # type: ignore[operator]
            why = problem(span, source)
            if why is not None:
                missing.append(f"{source}:{line}: `{span}`: {why}")
    return missing


@pytest.mark.slow  # reads every module of the checkout
def test_every_code_name_the_documents_cite_exists() -> None:
    files = [*DOCUMENTS, *sorted(line for line in _tracked() if re.fullmatch(r"docs/[^/]+\.md", line))]
    missing = _unresolved(files, _markdown_spans)
    assert not missing, "documents cite code that does not exist:\n" + "\n".join(missing)


@pytest.mark.slow  # reads every module of the checkout
def test_every_code_name_the_docstrings_and_comments_cite_exists() -> None:
    files = [line for line in _tracked() if line.endswith(".py") and not line.startswith("tests/fixtures/")]
    missing = _unresolved(files, _python_spans)
    assert not missing, "docstrings and comments cite code that does not exist:\n" + "\n".join(missing)


@pytest.mark.slow  # reads every module of the checkout too (every name of the code)
def test_the_check_finds_a_name_that_does_not_exist() -> None:
    missing = "_NO" + "WHERE_NAMED"  # spelled in two parts: a string of this file counts as code
    assert problem(f"gateway.surfaces.rest.{missing}", "README.md") == f"gateway.surfaces.rest has no {missing}"
    assert problem(missing, "gateway/surfaces/rest.py") == "no such name in the code"
    assert problem(f"McpServer.{missing}", "ARCHITECTURE.md") == f"no such name in the code: {missing}"
    assert problem("pwc_mcp_core.nowhere.thing", "README.md") == "pwc_mcp_core has no nowhere"
    assert problem("catalog/importer/nowhere.py", "README.md") == "no such file"
    assert problem("../catalog/importer/nowhere.py", "docs/README.md") == "no such file"
    # Data beside a clone is not the checkout's, present or not.
    assert problem("../shared/data/nowhere.json", "README.md") is None
    assert problem("../shared/data/nowhere.json", "bench/relevance.py") is None
    assert problem("gateway.surfaces.rest._outcome", "README.md") is None
    assert problem("queue.reply_commands", "ARCHITECTURE.md") is None
    assert problem("execute(call: Call, runtime: Runtime) -> bytes", "ARCHITECTURE.md") is None
    assert problem("uv run pytest -q", "README.md") is None

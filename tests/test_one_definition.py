"""One definition per fact (issue 34 §3), checked on the source with `ast`.

* the 2 MiB bound is written once (``pwc.transport.MAX_BYTES``); the MCP layer's default reads it;
* ``TOO_LARGE`` is one object, the `TooLarge` outcome; a reply crosses Redis in one format (``cluster/replies.py``);
* metric values have one parser (``metric_rules.values``), with no copy in the CLI or the catalog.
"""

from __future__ import annotations

import ast
import functools
import operator
from pathlib import Path

import pytest

from pwc.transport import MAX_BYTES
from pwc_mcp_core.cluster import replies
from pwc_mcp_core.runtime import core_settings, dispatch

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pwc", "pwc_mcp_core", "gateway", "workers", "metric_rules", "paper_passages", "web_serving")
"""The packages scanned (the catalog, a separate service with its own request bound, is checked by name)."""
_MIB2 = 2 * 1024 * 1024
# One worker runs every test here, so the sources are parsed once (`_trees`), not once per worker.
pytestmark = pytest.mark.xdist_group("test_one_definition")


@functools.cache
def _trees() -> dict[str, ast.Module]:
    return {str(path.relative_to(ROOT)): ast.parse(path.read_text(encoding="utf-8"))
            for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))}


_OPERATORS = {ast.Mult: operator.mul, ast.Pow: operator.pow, ast.LShift: operator.lshift}


def _constant(node: ast.expr) -> object:
    """The value of an integer expression of literals (``2 * 1024 * 1024``, ``2 << 20``), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _constant(node.left), _constant(node.right)
        if isinstance(left, int) and isinstance(right, int):
            return _OPERATORS[type(node.op)](left, right)
    return None


def _assigned(name: str) -> list[str]:
    """The file of every module- or class-level assignment to ``name``."""
    found = []
    for where, tree in _trees().items():
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                found.append(where)
    return found


def test_the_2_mib_bound_is_written_once() -> None:
    written = [where for where, tree in _trees().items() for node in ast.walk(tree) if isinstance(node, ast.BinOp | ast.Constant) and _constant(node) == _MIB2]
    assert written == ["pwc/transport.py"]
    assert core_settings.DEFAULT_MAX_BODY_BYTES is MAX_BYTES == _MIB2


def test_too_large_is_one_object() -> None:
    assert _assigned("TOO_LARGE") == ["pwc_mcp_core/cluster/outcomes.py"]
    assert isinstance(dispatch.TOO_LARGE, dispatch.TooLarge)
    assert dispatch.bounded(b"xx", 1) is dispatch.TOO_LARGE


def test_a_reply_is_encoded_and_decoded_in_one_place() -> None:
    """The queue's one reply format: only ``cluster/replies.py`` defines its codec, and no answer,
    whatever its body, reads back as `TooLarge`."""
    defined = [where for where, tree in _trees().items() for node in ast.walk(tree)
               if isinstance(node, ast.FunctionDef) and node.name in ("encode_reply", "decode_reply")]
    assert defined == ["pwc_mcp_core/cluster/replies.py"] * 2
    for body in (b"", b"L", b"!response-too-large", b'{"result":{}}'):
        assert replies.decode_reply(replies.encode_reply("r", dispatch.Answer(body))) == ("r", dispatch.Answer(body))


def test_metric_values_have_one_parser() -> None:
    parsers = [where for name in ("metric_number", "metric_magnitude") for where, tree in _trees().items()
               for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == name]
    assert parsers == ["metric_rules/values.py", "metric_rules/values.py"]
    ranking = (ROOT / "catalog/importer/ranking.py").read_text(encoding="utf-8")
    assert "def metric_value" not in ranking and "float(" not in ranking



def test_a_metric_is_found_by_one_rule() -> None:
    """Exact name first, then ignoring case: ``metric_rules.find_metric``, not a loop per caller."""
    for path in ("catalog/importer/ranking.py", "pwc/leaderboard.py", "pwc/history.py"):
        text = (ROOT / path).read_text(encoding="utf-8")
        assert "find_metric(" in text, path
        assert "casefold() == " not in text, path

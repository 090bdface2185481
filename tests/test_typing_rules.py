"""Typing rules mypy cannot state on its own (issue 20 §3), checked on the source with `ast`.

Every aiohttp ``AppKey`` names the class of what it holds: ``AppKey("x", Cls)`` or an
annotation ``AppKey[Cls]``, never ``object`` or ``Any``, so ``app[KEY]`` is typed where it
is read. The strict mypy settings themselves live in pyproject.toml (``uv run mypy``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_UNTYPED = {"object", "Any"}


def _name(node: ast.expr | None) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _key_class(annotation: ast.expr | None) -> str:
    """``Cls`` of ``AppKey[Cls]`` inside an annotation (``Final[web.AppKey[Cls]]`` too)."""
    for node in ast.walk(annotation) if annotation is not None else ():
        if isinstance(node, ast.Subscript) and _name(node.value) == "AppKey":
            return _name(node.slice) or ast.unparse(node.slice)
    return ""


def _app_keys(path: Path) -> list[tuple[int, str]]:
    """``(line, class)`` of every ``AppKey(...)`` created in ``path`` ("" when none is named)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.AnnAssign | ast.Assign):
            continue
        annotation = node.annotation if isinstance(node, ast.AnnAssign) else None
        value = node.value
        if isinstance(value, ast.Call) and _name(value.func) == "AppKey":
            declared = _name(value.args[1]) if len(value.args) > 1 else _key_class(annotation)
            found.append((node.lineno, declared))
    return found


def test_every_app_key_names_the_class_it_holds() -> None:
    keys = {f"{path.relative_to(ROOT)}:{line}": cls
            for package in ("gateway", "pwc_mcp_core", "catalog")
            for path in sorted((ROOT / package).rglob("*.py"))
            for line, cls in _app_keys(path)}
    assert keys, "no AppKey found: the check is looking in the wrong place"
    assert {where: cls for where, cls in keys.items() if not cls or cls in _UNTYPED} == {}

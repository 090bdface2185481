"""Typing rules mypy cannot state on its own (issue 20 §3), checked on the source with `ast`.

Every aiohttp ``AppKey`` names the class of what it holds: ``AppKey("x", Cls)`` or an
annotation ``AppKey[Cls]``, never ``object`` or ``Any``, so ``app[KEY]`` is typed where it
is read. The strict mypy settings themselves live in pyproject.toml (``uv run mypy``); the
packages in :data:`STRICT` and the modules in :data:`STRICT_MODULES` keep them (every ``strict``
flag plus ``disallow_any_explicit``) and import no ``Any``.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_UNTYPED = {"object", "Any"}
STRICT = ("pwc_mcp_core", "gateway", "workers", "metric_rules", "paper_passages", "catalog")
"""Packages mypy checks with `strict = true` spelled out and no explicit ``Any``."""
STRICT_MODULES = ("pwc", "pwc.__main__", "pwc.abstracts", "pwc.cache", "pwc.chart", "pwc.citations", "pwc.cli", "pwc.commands", "pwc.commands.benchmarks", "pwc.commands.entities",
                  "pwc.commands.methods", "pwc.commands.papers", "pwc.commands.papers_cite", "pwc.commands.papers_common", "pwc.commands.papers_detail",
                  "pwc.commands.papers_find", "pwc.commands.search", "pwc.commands.tasks", "pwc.commands.trends", "pwc.errors",
                  "pwc.history", "pwc.json_types", "pwc.leaderboard", "pwc.markdown", "pwc.names", "pwc.queries", "pwc.references", "pwc.refparse", "pwc.render",
                  "pwc.transport", "pwc.trends")
"""Single modules of a package not yet strict as a whole, held to the same rules (issue 34 item 2)."""
_STRICT_FLAGS = ("disallow_any_explicit", "disallow_any_generics", "disallow_subclassing_any", "disallow_untyped_calls",
                 "disallow_untyped_defs", "disallow_incomplete_defs", "check_untyped_defs",
                 "disallow_untyped_decorators", "warn_return_any", "no_implicit_reexport", "extra_checks")


def _module_file(module: str) -> Path:
    """The source file of a dotted module name (a package's ``__init__.py``)."""
    path = ROOT.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _strict_files() -> list[Path]:
    files = [path for package in STRICT for path in sorted((ROOT / package).rglob("*.py"))]
    return files + [_module_file(module) for module in STRICT_MODULES]


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


def test_the_strict_packages_keep_every_strict_flag() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    flags: dict[str, set[str]] = {}
    for override in config.get("overrides", []):
        modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
        for module in modules:
            flags.setdefault(module, set()).update(flag for flag in _STRICT_FLAGS if override.get(flag) is True)
    assert {package: sorted(set(_STRICT_FLAGS) - flags.get(f"{package}.*", set())) for package in STRICT} \
        == {package: [] for package in STRICT}
    assert {module: sorted(set(_STRICT_FLAGS) - flags.get(module, set())) for module in STRICT_MODULES} \
        == {module: [] for module in STRICT_MODULES}
    assert all(package in config["files"] for package in STRICT)
    assert all(module.split(".")[0] in config["files"] and _module_file(module).is_file() for module in STRICT_MODULES)


def test_the_strict_packages_import_no_any() -> None:
    """``disallow_any_explicit`` flags ``Any`` in annotations; this also catches it imported for later."""
    offenders = []
    for path in _strict_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            imported = isinstance(node, ast.ImportFrom) and node.module in {"typing", "typing_extensions"} \
                and any(alias.name == "Any" for alias in node.names)
            spelled = isinstance(node, ast.Attribute) and node.attr == "Any" and _name(node.value) == "typing"
            if imported or spelled:
                offenders.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}")
    assert offenders == []

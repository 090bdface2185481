"""Typing rules mypy cannot state on its own (issue 20 §3), checked on the source with `ast`.

Every aiohttp ``AppKey`` names the class of what it holds: ``AppKey("x", Cls)`` or an
annotation ``AppKey[Cls]``, never ``object`` or ``Any``, so ``app[KEY]`` is typed where it
is read. The strict mypy settings themselves live in pyproject.toml (``uv run mypy``): strict
everywhere (``strict = true`` and ``disallow_any_explicit`` globally), no override for any of the
packages in :data:`STRICT`, and none of their files imports ``Any`` (issue 34 item 2).
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_UNTYPED = {"object", "Any"}
STRICT = ("pwc", "pwc_mcp_core", "gateway", "workers", "metric_rules", "paper_passages", "catalog", "web_serving")
"""Packages mypy checks with the global strict settings and no explicit ``Any``: every package."""
NOT_SHIPPED = ("bench", "tests")
"""What mypy checks with its default flags instead (an override relaxes them): nothing ships from
these; everything else in ``files`` (the packages, the conformance runner) is strict."""
_STRICT_FLAGS = ("disallow_any_explicit", "disallow_any_generics", "disallow_subclassing_any", "disallow_untyped_calls",
                 "disallow_untyped_defs", "disallow_incomplete_defs", "check_untyped_defs",
                 "disallow_untyped_decorators", "warn_return_any", "extra_checks", "warn_unused_ignores",
                 "warn_redundant_casts", "strict_equality")
# What an override may set that weakens the global strict settings (beside a strict flag set false).
_RELAXING = ("ignore_errors", "disable_error_code", "implicit_reexport", "allow_untyped_globals",
             "allow_redefinition", "follow_imports")


def _mypy_config() -> dict[str, object]:
    config: dict[str, object] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    return config


def _checked(module: str) -> str:
    """The entry of mypy's ``files`` an override pattern names, else "" (a third-party module, or
    one mypy only follows, such as ``scripts``)."""
    top = module.split(".")[0]
    files = _mypy_config()["files"]
    return top if isinstance(files, list) and top in files else ""


def _strict_files() -> list[Path]:
    return [path for package in STRICT for path in sorted((ROOT / package).rglob("*.py"))]


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


def test_mypy_is_strict_everywhere() -> None:
    config = _mypy_config()
    assert config.get("strict") is True and config.get("disallow_any_explicit") is True
    assert not any(config.get(flag) is False for flag in _STRICT_FLAGS)
    files = config["files"]
    assert isinstance(files, list)
    assert sorted(files) == sorted([*STRICT, *NOT_SHIPPED, "conformance"])


def test_no_override_relaxes_a_package() -> None:
    """Every override that weakens the strict settings names tests, benchmarks or modules mypy does not
    check (third-party ones) only; the packages and the conformance runner have no override at all."""
    overrides = _mypy_config().get("overrides", [])
    assert isinstance(overrides, list)
    named: dict[str, list[str]] = {}
    relaxing: dict[str, list[str]] = {}
    for override in overrides:
        modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
        weakens = [flag for flag in _STRICT_FLAGS if override.get(flag) is False] + \
            [key for key in _RELAXING if override.get(key)]
        for module in modules:
            top = _checked(module)
            if top and top not in NOT_SHIPPED:
                named.setdefault(module, []).extend(sorted(override))
            if weakens and top:
                relaxing.setdefault(top, []).extend(weakens)
    assert named == {}
    assert set(relaxing) <= set(NOT_SHIPPED)


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

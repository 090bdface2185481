"""The import layering of ARCHITECTURE.md (its opening map), checked on the source with `ast`.

pwc (sync, no Redis, no aiohttp) <- pwc_mcp_core <- workers, gateway; the
gateway never imports workers and the workers never import the gateway;
catalog is a separate service that imports none of them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN = {
    "pwc": {"redis", "aiohttp", "orjson", "asyncio", "pwc_mcp_core", "workers", "gateway", "catalog"},
    "pwc_mcp_core": {"workers", "gateway", "catalog", "aiohttp", "orjson"},
    "workers": {"gateway", "catalog", "aiohttp", "orjson"},
    "gateway": {"workers", "catalog"},
    "catalog": {"pwc", "pwc_mcp_core", "workers", "gateway"},
}


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_respect_layering(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"{package} has no modules"
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imported_roots(path) & FORBIDDEN[package])
        for path in files
        if _imported_roots(path) & FORBIDDEN[package]
    }
    assert offenders == {}

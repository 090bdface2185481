"""The import layering of ARCHITECTURE.md, checked on the source with `ast`.

Packages: pwc (sync, no Redis, no aiohttp) <- pwc_mcp_core <- workers, gateway; the gateway
never imports workers and the workers never import the gateway; catalog is a separate service
that imports none of them.

Inside pwc_mcp_core the subpackages form layers, lowest first: protocol < cluster < runtime < tools < mcp_server. A module imports only
its own subpackage, the layers below it and the root modules (errors); nothing imports back up,
and there is no import cycle between modules (imports inside functions count too). Every module
lives in a subpackage, so a new flat module fails here until it is placed.

The gateway never imports ``pwc``. Its rooms by concern, lowest first: shared < admission <
dispatch < surfaces < process (``GATEWAY_ROOMS``); a room is checked once it exists as a
package, and every gateway module but the package and ``__main__`` lives in a room.
Neither the gateway nor the catalog has an import cycle.

The catalog's rooms, lowest first: db < store < search < importer < api < serve
(``CATALOG_ROOMS``); only ``cli``, ``sample`` and ``__main__`` sit at its top. The database and
read-query rooms need nothing beyond the standard library, so the read path never waits on the
search stack's imports.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "pwc_mcp_core"
# One worker runs every test here, so each module is parsed once (`_imports`), not once per worker.
pytestmark = pytest.mark.xdist_group("test_layering")

SEARCH_STACK = {"numpy", "wordllama", "simsimd", "tokenizers", "safetensors", "pydantic"}
"""The catalog's semantic-search libraries (compiled, some Rust): the catalog's alone."""

FORBIDDEN = {
    "pwc": {"redis", "aiohttp", "orjson", "asyncio", "pwc_mcp_core", "workers", "gateway", "catalog"} | SEARCH_STACK,
    "pwc_mcp_core": {"workers", "gateway", "catalog", "aiohttp", "orjson"} | SEARCH_STACK,
    # A worker's Redis code lives in pwc_mcp_core.cluster too (redis-py's errors: cluster.errors).
    "workers": {"gateway", "catalog", "aiohttp", "orjson", "redis"} | SEARCH_STACK,
    # Redis code lives in pwc_mcp_core.cluster; the gateway calls it and imports no redis-py.
    "gateway": {"pwc", "workers", "catalog", "redis"} | SEARCH_STACK,
    "catalog": {"pwc", "pwc_mcp_core", "workers", "gateway"},
    # The one owner of metric direction, shared by the catalog and the MCP layer: a leaf.
    "metric_rules": {"pwc", "pwc_mcp_core", "workers", "gateway", "catalog", "redis", "aiohttp", "orjson",
                     "httpx"} | SEARCH_STACK,
    # How a paper splits into paragraphs and ranks by keyword, shared by pwc and the catalog: a leaf.
    "paper_passages": {"pwc", "pwc_mcp_core", "workers", "gateway", "catalog", "metric_rules", "redis", "aiohttp",
                       "orjson", "httpx"} | SEARCH_STACK,
    # Listening and serving an aiohttp app, shared by the gateway and the catalog: a leaf.
    "web_serving": {"pwc", "pwc_mcp_core", "workers", "gateway", "catalog", "metric_rules", "paper_passages",
                    "redis", "orjson", "httpx"} | SEARCH_STACK,
}

LAYERS = ('protocol', 'cluster', 'runtime', 'tools', 'mcp_server')
"""pwc_mcp_core's subpackages, lowest first."""
ROOT_MODULES = ('__init__', 'errors')
"""Modules directly in pwc_mcp_core/: importable by every layer, importing none."""


@functools.cache
def _imports(path: Path) -> list[tuple[str, int]]:
    """Every imported dotted name in ``path`` with its line (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.append((base, node.lineno))
            # ``from pwc_mcp_core.x import y`` may import the module pwc_mcp_core.x.y
            found.extend((f"{base}.{alias.name}", node.lineno) for alias in node.names)
    return found


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(package: str) -> dict[str, Path]:
    return {_module_name(path): path for path in sorted((ROOT / package).rglob("*.py"))}


def _core_modules() -> dict[str, Path]:
    return _modules("pwc_mcp_core")


GATEWAY_ROOMS = ("shared", "admission", "dispatch", "surfaces", "process")
"""The gateway's subpackages by concern, lowest first (checked once they exist as packages)."""
GATEWAY_TOP = ("gateway", "gateway.__main__")
"""Modules that stay at the top of gateway/ after the layout (the package and ``python -m gateway``)."""


def _room(module: str) -> str | None:
    """``gateway.surfaces.rest`` -> ``surfaces`` when gateway/surfaces/ is a package; else None."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] in GATEWAY_ROOMS and (ROOT / "gateway" / parts[1] / "__init__.py").exists():
        return parts[1]
    return None


def _layer(module: str) -> str | None:
    """``pwc_mcp_core.tools.execution`` -> ``tools``; root modules -> None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_respect_layering(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"{package} has no modules"
    offenders = {}
    for path in files:
        roots = {name.split(".")[0] for name, _ in _imports(path)} & FORBIDDEN[package]
        if roots:
            offenders[str(path.relative_to(ROOT))] = sorted(roots)
    assert offenders == {}


def test_every_core_module_lives_in_a_layer() -> None:
    flat = [name for name in _core_modules() if _layer(name) is None
            and name not in {"pwc_mcp_core", *(f"pwc_mcp_core.{m}" for m in ROOT_MODULES)}]
    assert flat == [], f"place these modules in one of {list(LAYERS)}: {flat}"
    assert sorted(p.name for p in CORE.iterdir() if p.is_dir() and (p / "__init__.py").exists()) == sorted(LAYERS)


def test_no_import_runs_back_up_between_layers() -> None:
    order = {name: rank for rank, name in enumerate(LAYERS)}
    modules = _core_modules()
    offenders = []
    for module, path in modules.items():
        own = _layer(module)
        for name, line in _imports(path):
            if not name.startswith("pwc_mcp_core.") or name not in modules:
                continue
            target = _layer(name)
            if own is None and target is not None:
                offenders.append(f"{path.relative_to(ROOT)}:{line}: root module imports {name}")
            elif own is not None and target is not None and order[target] > order[own]:
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {own} imports {name} ({target} is above)")
    assert offenders == []


def _cycles(modules: dict[str, Path]) -> list[list[str]]:
    graph = {module: sorted({name for name, _ in _imports(path) if name in modules and name != module})
             for module, path in modules.items()}
    # a package's __init__ importing its own children is not a cycle of the code
    graph = {m: [d for d in deps if not (d.startswith(m + ".") and modules[m].name == "__init__.py")]
             for m, deps in graph.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for module in graph:
        if module not in state:
            visit(module, [])
    return cycles


@pytest.mark.parametrize("package", ["pwc_mcp_core", "gateway", "catalog"])
def test_no_import_cycles_between_modules(package: str) -> None:
    cycles = _cycles(_modules(package))
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_gateway_rooms_import_only_downwards() -> None:
    order = {name: rank for rank, name in enumerate(GATEWAY_ROOMS)}
    modules = _modules("gateway")
    offenders = []
    for module, path in modules.items():
        own = _room(module)
        for name, line in _imports(path):
            target = _room(name) if name in modules else None
            if own is not None and target is not None and order[target] > order[own]:
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {own} imports {name} ({target} is above)")
    assert offenders == []


def test_once_laid_out_every_gateway_module_lives_in_a_room() -> None:
    if not any((ROOT / "gateway" / room / "__init__.py").exists() for room in GATEWAY_ROOMS):
        pytest.skip("the gateway is still flat: no room of GATEWAY_ROOMS is a package yet")
    flat = [m for m in _modules("gateway") if _room(m) is None and m not in GATEWAY_TOP
            and m.split(".")[1] not in GATEWAY_ROOMS]
    assert flat == [], f"place these modules in one of {list(GATEWAY_ROOMS)}: {flat}"


CATALOG_ROOMS = ("db", "store", "search", "importer", "api", "serve")
"""The catalog's subpackages by concern, lowest first."""
CATALOG_TOP = ("catalog", "catalog.__main__", "catalog.cli", "catalog.sample")
"""Modules at the top of catalog/: the package, the command line and the bundled sample."""
STDLIB_ROOMS = ("db", "store")
"""Catalog rooms that import nothing outside the standard library and the catalog."""


def _catalog_room(module: str) -> str | None:
    """``catalog.store.papers`` -> ``store``; the top modules -> None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in CATALOG_ROOMS else None


def test_every_catalog_module_lives_in_a_room() -> None:
    flat = [m for m in _modules("catalog") if _catalog_room(m) is None and m not in CATALOG_TOP
            and m.split(".")[-1] not in CATALOG_ROOMS]
    assert flat == [], f"place these modules in one of {list(CATALOG_ROOMS)}: {flat}"
    rooms = sorted(p.name for p in (ROOT / "catalog").iterdir() if (p / "__init__.py").exists())
    assert rooms == sorted(CATALOG_ROOMS)


def test_catalog_rooms_import_only_downwards() -> None:
    order = {name: rank for rank, name in enumerate(CATALOG_ROOMS)}
    modules = _modules("catalog")
    offenders = []
    for module, path in modules.items():
        own = _catalog_room(module)
        for name, line in _imports(path):
            if name not in modules:
                continue
            target = _catalog_room(name)
            if own is not None and target is None and name in CATALOG_TOP and name != "catalog":
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {own} imports the top module {name}")
            elif own is not None and target is not None and order[target] > order[own]:
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {own} imports {name} ({target} is above)")
    assert offenders == []


@pytest.mark.parametrize("room", STDLIB_ROOMS)
def test_catalog_storage_rooms_need_only_the_standard_library(room: str) -> None:
    import sys

    offenders = {}
    for path in sorted((ROOT / "catalog" / room).rglob("*.py")):
        roots = {name.split(".")[0] for name, _ in _imports(path) if name}
        foreign = sorted(r for r in roots if r not in sys.stdlib_module_names and r not in {"catalog", "__future__"})
        if foreign:
            offenders[str(path.relative_to(ROOT))] = foreign
    assert offenders == {}


def test_core_tests_mirror_the_layers() -> None:
    folders = sorted(p.name for p in (ROOT / "tests" / "core").iterdir()
                     if p.is_dir() and (p / "__init__.py").exists())
    assert set(folders) <= set(LAYERS), folders
    stray = sorted(p.name for p in (ROOT / "tests" / "core").glob("test_*.py"))
    assert stray == [], f"move these into tests/core/<layer>/: {stray}"


def _names_in_handlers(tree: ast.AST) -> list[tuple[str, int]]:
    """Every name an ``except`` clause or a ``contextlib.suppress(...)`` call mentions."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        exprs: list[ast.expr] = []
        line = 0
        if isinstance(node, ast.ExceptHandler) and node.type is not None:
            exprs, line = [node.type], node.lineno
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name) \
                and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "suppress":
            exprs, line = list(node.args), node.lineno
        for expr in exprs:
            for sub in ast.walk(expr):
                if isinstance(sub, ast.Name):
                    found.append((sub.id, line))
                elif isinstance(sub, ast.Attribute):
                    found.append((ast.unparse(sub), line))
    return found


def test_the_gateway_handles_no_redis_exception() -> None:
    """Redis failures reach the gateway as the cluster layer's `StoreUnavailable` (issue 20):
    no gateway module imports ``redis.exceptions`` (or an error class from ``redis``) or
    names a redis-py error in an ``except``/``suppress``."""
    offenders = []
    for path in sorted((ROOT / "gateway").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        rel = path.relative_to(ROOT)
        for name, line in _imports(path):
            leaf = name.rsplit(".", 1)[-1]
            if name.startswith("redis.exceptions") or (name.startswith("redis.") and leaf.endswith("Error")):
                offenders.append(f"{rel}:{line}: imports {name}")
        for name, line in _names_in_handlers(tree):
            if name.startswith("redis.") or name in {"RedisError", "ResponseError", "RedisConnectionError",
                                                     "RedisTimeoutError", "NoScriptError", "DataError"}:
                offenders.append(f"{rel}:{line}: catches {name}")
    assert offenders == [], offenders


PWC_FLOORS = (
    ("errors", "json_types", "arguments", "cache", "abstracts", "citations", "markdown", "render", "transport", "names",
     "references", "refparse", "leaderboard", "history", "trends", "chart"),
    ("commands",),
    ("cli", "queries", "__main__"),
)
"""pwc's floors, lowest first: the library the commands are made of, the commands (``pwc.commands.*``,
one module a command group), and the fronts that parse arguments and run a command's handler."""
WORKER_FLOORS = (("settings", "runner"), ("worker",), ("cli", "__main__"))
"""The worker's floors, lowest first: its settings and the runner of one call; the Redis consumer
loop; the command line."""


def _floors_hold(package: str, floors: tuple[tuple[str, ...], ...]) -> list[str]:
    """Imports within ``package`` that climb to a higher floor (each module's floor by its first
    name under the package; the package's ``__init__`` is below every floor)."""
    rank = {name: level for level, names in enumerate(floors) for name in names}
    modules = _modules(package)
    unplaced = sorted(m for m in modules if m != package and m.split(".")[1] not in rank)
    assert unplaced == [], f"place these modules on one of the floors of {package}: {unplaced}"
    offenders = []
    for module, path in modules.items():
        if module == package:
            continue
        own = rank[module.split(".")[1]]
        for name, line in _imports(path):
            parts = name.split(".")
            if parts[0] == package and len(parts) > 1 and parts[1] in rank and rank[parts[1]] > own:
                offenders.append(f"{path.relative_to(ROOT)}:{line}: imports {name} (a higher floor)")
    return offenders


@pytest.mark.parametrize(("package", "floors"), [("pwc", PWC_FLOORS), ("workers", WORKER_FLOORS)])
def test_pwc_and_worker_floors_import_only_downwards(package: str, floors: tuple[tuple[str, ...], ...]) -> None:
    assert _floors_hold(package, floors) == []

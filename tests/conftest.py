"""Suite-wide fixtures: a real redis-server and the self-hosted sample catalog, both started here.

Nothing here mocks Redis or the catalog: ``redis_server`` spawns its own
``redis-server`` on a free port (never the machine's 6379), and
``catalog_url`` runs ``python -m catalog serve --sample`` over HTTP.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pwc_mcp_core.cluster import redis_keys
from tests.helpers import free_port, spawn_redis, stop_process, wait_http

REPO_ROOT = Path(__file__).resolve().parent.parent


def _compile_once() -> None:
    """Cache compiled bytecode outside the checkout when the environment disables it.

    With ``PYTHONDONTWRITEBYTECODE`` set (container images set it), every xdist worker
    rewrote and compiled every test module, and every gateway, worker and catalog process
    the tests start compiled its imports again: minutes of CPU per run. The tests write
    bytecode to ``$XDG_CACHE_HOME/pwc-mcp-tests/pycache`` instead (``PYTHONPYCACHEPREFIX``),
    never beside the sources. Runs before the workers and child processes start, which
    inherit the environment.
    """
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pwc-mcp-tests" / "pycache"
    prefix = os.environ.setdefault("PYTHONPYCACHEPREFIX", str(cache))
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    sys.dont_write_bytecode = False
    sys.pycache_prefix = prefix


_compile_once()
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
FIXTURES = REPO_ROOT / "tests" / "fixtures"


# Tests run in parallel (pytest-xdist, `--dist loadgroup` in pyproject.toml). Each worker has
# its own session fixtures (redis-server, catalog) and temporary directories; the tests in a
# group run on one worker, one after another.
_SHARED_SCOPES = ("class", "module", "package", "session")
_GROUPS = {
    # One private podman, one image build: every container test on the worker that built it.
    "tests/container/": "container",
    # The second host's veth pair has fixed addresses: one namespace at a time.
    "tests/fault/test_two_hosts.py": "two-hosts",
}


_GROUPS_ENV = "PWC_TESTS_XDIST_GROUPS"
_FIRST = ("container",)
"""Groups handed out before any other: the container group (an image build, then a compose stack)
is the longest, minutes on one worker, and the run cannot end before it does."""


def _group_of(item: pytest.Item) -> str | None:
    """The xdist group of ``item``: its module when it uses a shared fixture defined below this file."""
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    path = item.nodeid.split("::", 1)[0]
    group = next((name for prefix, name in _GROUPS.items() if path.startswith(prefix)), None)
    if group is None:
        fixtureinfo = getattr(item, "_fixtureinfo", None)
        defs = fixtureinfo.name2fixturedefs.values() if fixtureinfo is not None else ()
        if any(d[-1].scope in _SHARED_SCOPES and d[-1].baseid not in ("", "tests") for d in defs if d):
            group = path
    return group


def pytest_configure(config: pytest.Config) -> None:
    """On the xdist controller, name the file where the workers leave the groups they collected."""
    if not hasattr(config, "workerinput") and config.getoption("dist", "no") == "loadgroup":
        os.environ[_GROUPS_ENV] = str(Path(tempfile.mkdtemp(prefix="pwc-xdist-")) / "groups")


def pytest_unconfigure(config: pytest.Config) -> None:
    """On the controller, remove the groups' directory made in :func:`pytest_configure`."""
    target = os.environ.get(_GROUPS_ENV)
    if target is not None and not hasattr(config, "workerinput"):
        shutil.rmtree(Path(target).parent, ignore_errors=True)
        del os.environ[_GROUPS_ENV]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the tests that share an expensive fixture on one xdist worker.

    A module-, class- or session-scoped fixture defined below this file (a deployment behind
    nginx, a fuzzing gateway, an imported catalog) is set up once per worker that runs one of
    its tests. Grouping those tests by module sets it up once, as a serial run does. The
    session fixtures here (redis-server, the sample catalog) are per worker and cheap.

    xdist 3.8's own ``loadgroup`` marks a group in the test id, which pytest 9 no longer lets
    it change: the workers write the groups to a file and the controller's scheduler
    (:func:`pytest_xdist_make_scheduler`) reads it.
    """
    target = os.environ.get(_GROUPS_ENV)
    workerinput = getattr(config, "workerinput", None)
    if target is None or workerinput is None:
        return
    groups = {item.nodeid: group for item in items if (group := _group_of(item)) is not None}
    part = Path(f"{target}.{workerinput['workerid']}")
    staged = Path(f"{part}.tmp")
    staged.write_text(json.dumps(groups), encoding="utf-8")
    staged.replace(part)


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``--dist loadgroup`` with the groups the workers wrote (see above); each other test alone."""
    if config.getoption("dist", "no") != "loadgroup" or _GROUPS_ENV not in os.environ:
        return None
    from xdist.scheduler import LoadScopeScheduling

    target = Path(os.environ[_GROUPS_ENV])

    class GroupScheduling(LoadScopeScheduling):
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:
                parts = sorted(p for p in target.parent.glob(f"{target.name}.gw*") if p.suffix != ".tmp")
                self.groups = json.loads(parts[0].read_text(encoding="utf-8")) if parts else {}
            return self.groups.get(nodeid, nodeid)

        def _assign_work_unit(self, node: object) -> None:
            # xdist hands out the largest groups (by test count) first; the longest come before them.
            for scope in _FIRST:
                if scope in self.workqueue:
                    self.workqueue.move_to_end(scope, last=False)
                    break
            super()._assign_work_unit(node)  # type: ignore[arg-type]

    return GroupScheduling(config, log)


_FAULT_ROWS: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the fault tallies (``tests/fault/accounting.py``) from each test's report."""
    _FAULT_ROWS.extend(str(value) for name, value in report.user_properties if name == "fault_tally")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the per-fault accounting table after a run that included fault tests."""
    if not _FAULT_ROWS:
        return
    terminalreporter.write_sep("-", "fault accounting")
    terminalreporter.write_line("| fault | sent | answered once | clear error | answered twice | hung |")
    terminalreporter.write_line("|---|---|---|---|---|---|")
    for row in _FAULT_ROWS:
        terminalreporter.write_line(row)


@dataclass
class RedisServer:
    """A running redis-server child process started by the tests."""

    port: int
    proc: subprocess.Popen
    dir: Path

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        """Stop the server (fault tests); ``start`` brings it back on the same port."""
        stop_process(self.proc)

    def start(self) -> None:
        self.proc = spawn_redis(self.port, self.dir)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A private redis-server for the whole session (flush it per test with ``redis_url``)."""
    workdir = tmp_path_factory.mktemp("redis")
    port = free_port()
    server = RedisServer(port=port, proc=spawn_redis(port, workdir), dir=workdir)
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """URL of the session redis-server, flushed before the test."""
    import redis

    if redis_server.proc.poll() is not None:
        redis_server.start()
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
    return redis_server.url


@dataclass
class CatalogServer:
    """The self-hosted catalog serving the bundled sample over HTTP."""

    port: int
    proc: subprocess.Popen
    log_path: Path

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v1"

    def log_text(self) -> str:
        """Everything the catalog wrote to stderr so far (its access log included)."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def start_catalog(*args: str) -> CatalogServer:
    """Start ``python -m catalog serve <args>`` on a free port and wait until it answers.

    The catalog writes an access line per request to stderr. It goes to a file, never to a
    pipe nobody reads: a full pipe (64 KiB, about 1,000 requests) would block the catalog's
    event loop and hang every later test that uses the session catalog.
    """
    port = free_port()
    log_dir = Path(tempfile.mkdtemp(prefix="pwc-catalog-"))
    log_path = log_dir / "stderr.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "catalog", "serve", *args, "--host", "127.0.0.1", "--port", str(port)],
            cwd=REPO_ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
            stdout=subprocess.DEVNULL, stderr=log,
        )
    server = CatalogServer(port=port, proc=proc, log_path=log_path)
    try:
        wait_http(f"{server.api_url}/tasks/?page=1&page_size=1", proc=proc, timeout_s=60)
    except RuntimeError:
        stop_process(proc)
        raise
    return server


@pytest.fixture(scope="session")
def catalog_server() -> Iterator[CatalogServer]:
    """The sample catalog (``pwc-catalog serve --sample``), one per test session."""
    server = start_catalog("--sample")
    yield server
    stop_process(server.proc)
    shutil.rmtree(server.log_path.parent, ignore_errors=True)


@pytest.fixture(scope="session")
def catalog_url(catalog_server: CatalogServer) -> str:
    """Base URL of the sample catalog API, e.g. ``http://127.0.0.1:PORT/api/v1``."""
    return catalog_server.api_url


@pytest.fixture(scope="session")
def pwc_archive() -> Path:
    """The repository's own leaderboard fixtures (``tests/fixtures/pwc-archive``, see its README)."""
    return FIXTURES / "pwc-archive"


@pytest.fixture(scope="session")
def paper_text() -> Path:
    """Full text of real papers, ``../shared/data/paper-text`` beside the checkout.

    The repository may not carry this text, so a test that needs it skips when the folder is absent.
    """
    folder = SHARED_DATA / "paper-text"
    if not folder.is_dir():
        pytest.skip(f"needs the paper full text in {folder} (not carried by the repository)")
    return folder


PWC_MCP_BIN = Path(sys.executable).parent / "pwc-mcp"
TEST_CURSOR_KEY = "test-cursor-key-0123456789abcdef"


@dataclass
class ServerProcess:
    """A ``pwc-mcp`` process (gateway, serve, worker or demo) started by a test."""

    port: int
    proc: subprocess.Popen
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/mcp"

    def log_text(self) -> str:
        """Everything the process wrote to stdout and stderr so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        stop_process(self.proc)


def start_pwc_mcp(*args: str, env: dict[str, str], log_path: Path, port: int | None = None,
                  wait_path: str | None = "/.well-known/mcp", timeout_s: float = 60.0) -> ServerProcess:
    """Start ``pwc-mcp <args>`` with ``env`` layered over the test environment.

    ``PORT``, ``PWC_MCP_HOST`` (127.0.0.1), a test cursor key and the test process's Redis
    namespace (so the test reads the keys the process writes) are set unless ``env``
    overrides them (a blank ``PWC_MCP_REDIS_NAMESPACE`` means the derived default). Waits until ``wait_path`` answers 200 (None: no wait).
    """
    port = port or free_port()
    full_env = {
        **os.environ,
        "PORT": str(port),
        "PWC_MCP_HOST": "127.0.0.1",
        "PWC_MCP_CURSOR_KEY_CURRENT": TEST_CURSOR_KEY,
        "PWC_MCP_REDIS_NAMESPACE": redis_keys.namespace(),
        "PYTHONUNBUFFERED": "1",
        **env,
    }
    log = log_path.open("ab")
    proc = subprocess.Popen([str(PWC_MCP_BIN), *args], cwd=REPO_ROOT, env=full_env, stdout=log, stderr=log)
    log.close()
    server = ServerProcess(port=port, proc=proc, log_path=log_path)
    if wait_path is not None:
        try:
            wait_http(f"{server.base_url}{wait_path}", proc=proc, timeout_s=timeout_s)
        except RuntimeError as exc:
            stop_process(proc)
            raise RuntimeError(f"{exc}\n--- log ---\n{server.log_text()[-4000:]}") from None
    return server

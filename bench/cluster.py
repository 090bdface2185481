"""Processes under test: start, wait, measure peak memory and always stop them.

Every child is started in its own session (``start_new_session``) so stopping it
also stops what it forked (gunicorn's processes); :class:`ProcessGroup` stops
everything it started on exit, on error and on Ctrl-C. Only 127.0.0.1 is used.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers import (  # the suite's process helpers serve the benchmark too
    free_port,
    wait_http,
)

__all__ = ["Proc", "ProcessGroup", "descendants", "free_port", "peak_rss_kib", "wait_http"]

logger = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parent.parent
PWC_MCP_BIN = Path(sys.executable).parent / "pwc-mcp"


def _status_kib(pid: int, field_name: str) -> int:
    """A ``kB`` field of ``/proc/<pid>/status`` (0 when the process is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def peak_rss_kib(pid: int) -> int:
    """Peak resident set size of ``pid`` in KiB (``VmHWM``)."""
    return _status_kib(pid, "VmHWM")


def descendants(pid: int) -> list[int]:
    """All live descendants of ``pid`` (scans ``/proc/*/stat`` parent ids)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue
        # the command name may contain spaces; fields after ")" are well formed
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry))
    found: list[int] = []
    stack = [pid]
    while stack:
        for child in parents.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


@dataclass
class Proc:
    """One started process: ``name`` (e.g. ``gateway``), its ``role`` and where it logs."""

    name: str
    role: str
    popen: subprocess.Popen
    log_path: Path
    port: int | None = None

    def pids(self) -> list[int]:
        """The process and its descendants (gunicorn master + its workers)."""
        return [self.popen.pid, *descendants(self.popen.pid)]

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""


@dataclass
class ProcessGroup:
    """Owns the processes started for a benchmark; ``stop_all`` (or ``with``) stops every one."""

    log_dir: Path
    procs: list[Proc] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)  # a fresh machine has none of it yet

    def __enter__(self) -> ProcessGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_all()

    def start(self, name: str, role: str, argv: list[str], env: dict[str, str] | None = None,
              port: int | None = None) -> Proc:
        """Start ``argv`` in a new session with ``env`` over ours; output goes to ``log_dir/name.log``."""
        log_path = self.log_dir / f"{name}.log"
        with log_path.open("ab") as log:
            popen = subprocess.Popen(argv, cwd=REPO_ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
                                     stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
        proc = Proc(name=name, role=role, popen=popen, log_path=log_path, port=port)
        self.procs.append(proc)
        return proc

    def start_redis(self) -> str:
        """A private ``redis-server`` on a free port (no persistence); returns its URL."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed")
        port = free_port()
        workdir = self.log_dir / "redis"
        workdir.mkdir(parents=True, exist_ok=True)
        proc = self.start("redis", "redis", [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                             "--appendonly", "no", "--dir", str(workdir), "--loglevel", "warning"],
                          port=port)
        import redis

        client = redis.Redis(host="127.0.0.1", port=port)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                client.ping()
                client.close()
                return f"redis://127.0.0.1:{port}/0"
            except redis.ConnectionError:
                if proc.popen.poll() is not None:
                    break
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def start_catalog(self, name: str, *source: str) -> tuple[Proc, str]:
        """``python -m catalog serve <source>`` on a free port; returns the process and its API URL."""
        port = free_port()
        proc = self.start(name, "catalog", [sys.executable, "-m", "catalog", "serve", *source,
                                            "--host", "127.0.0.1", "--port", str(port)], port=port)
        api = f"http://127.0.0.1:{port}/api/v1"
        try:
            wait_http(f"{api}/tasks/?page=1&page_size=1", proc=proc.popen, timeout_s=120)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}\n--- {name} log ---\n{proc.log_tail()}") from None
        return proc, api

    def start_pwc_mcp(self, name: str, role: str, args: list[str], env: dict[str, str],
                      wait_path: str | None = "/.well-known/mcp") -> Proc:
        """``pwc-mcp <args>`` with ``env``; waits for ``wait_path`` on ``env['PORT']`` unless None."""
        port = int(env["PORT"]) if "PORT" in env else None
        proc = self.start(name, role, [str(PWC_MCP_BIN), *args], env=env, port=port)
        if wait_path is not None and port is not None:
            try:
                wait_http(f"http://127.0.0.1:{port}{wait_path}", proc=proc.popen, timeout_s=60)
            except RuntimeError as exc:
                raise RuntimeError(f"{exc}\n--- {name} log ---\n{proc.log_tail()}") from None
        return proc

    def stop(self, proc: Proc, timeout_s: float = 10.0) -> None:
        """SIGTERM the process's session, SIGKILL after ``timeout_s``; reap it."""
        popen = proc.popen
        if popen.poll() is None:
            _signal_group(popen.pid, signal.SIGTERM)
            try:
                popen.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                _signal_group(popen.pid, signal.SIGKILL)
                popen.wait(timeout=timeout_s)
        # a forked child (gunicorn worker) may outlive its parent briefly
        _signal_group(popen.pid, signal.SIGKILL)
        if proc in self.procs:
            self.procs.remove(proc)

    def stop_all(self) -> None:
        """Stop every process still owned, newest first (gateways before workers before redis)."""
        for proc in reversed(list(self.procs)):
            try:
                self.stop(proc)
            except Exception as exc:  # noqa: BLE001 - keep stopping the others
                logger.warning("could not stop %s: %s", proc.name, type(exc).__name__)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    """Signal the session/process group we created for one child (its pid is the group id)."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass

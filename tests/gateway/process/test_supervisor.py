"""``pwc-mcp serve`` supervision: restart dead children, stop all on SIGTERM, stop on config errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

SCRIPT = """
import os, sys
from gateway.process.supervisor import Child, supervise
log, pidfile, flaky_code = sys.argv[1], sys.argv[2], sys.argv[3]
flaky = Child("flaky", [sys.executable, "-c",
    f"open({log!r}, 'a').write('x\\\\n'); import sys; sys.exit({flaky_code})"])
steady = Child("steady", [sys.executable, "-c",
    f"import os, time; open({pidfile!r}, 'w').write(str(os.getpid())); time.sleep(120)"])
sys.exit(supervise([flaky, steady], os.environ))
"""


def wait_for(predicate, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def start(tmp_path: Path, code: int) -> tuple[subprocess.Popen, Path, Path]:
    log, pidfile = tmp_path / "log", tmp_path / "pid"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(log), str(pidfile), str(code)], cwd=REPO,
                            stderr=subprocess.PIPE, text=True)
    return proc, log, pidfile


def test_a_dead_child_is_restarted_and_sigterm_stops_everything(tmp_path: Path) -> None:
    proc, log, pidfile = start(tmp_path, 3)
    try:
        wait_for(lambda: log.exists() and len(log.read_text().splitlines()) >= 2)
        wait_for(lambda: pidfile.exists() and pidfile.read_text().strip() != "")
        steady_pid = int(pidfile.read_text())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert not pid_alive(steady_pid)
        assert "restarting" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_child_configuration_error_stops_the_supervisor(tmp_path: Path) -> None:
    proc, log, pidfile = start(tmp_path, 2)
    try:
        assert proc.wait(timeout=60) == 2
        assert len(log.read_text().splitlines()) == 1
        if pidfile.exists() and pidfile.read_text().strip():
            assert not pid_alive(int(pidfile.read_text()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

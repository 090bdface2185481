"""Issue 14 item 6: pool gauges tell the truth after a gateway process dies.

Real processes: ``pwc-mcp gateway --processes 2`` (gunicorn, multiprocess metrics) and
one worker. A gateway child is SIGKILLed (gunicorn restarts it; ``child_exit`` marks it
dead), then the worker stops: ``/metrics`` must fall to 0 live workers, not keep the dead
child's last value. ``prometheus/alerts_test.yml`` proves the alert on it can fire.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.conftest import start_pwc_mcp
from tests.fault.conftest import wait_until
from tests.integration.conftest import Cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

PROMETHEUS = Path(__file__).resolve().parents[2] / "prometheus"


def _gauge(base_url: str, name: str) -> float | None:
    try:
        text = httpx.get(f"{base_url}/metrics", timeout=5).text
    except httpx.HTTPError:
        return None
    match = re.search(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.MULTILINE)
    return float(match.group(1)) if match else None


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def test_live_and_busy_gauges_forget_a_dead_gateway_process(
        faulty_cluster: Callable[..., Cluster], tmp_path: Path) -> None:
    cluster = faulty_cluster(workers=1, gateways=0)
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    gateway = start_pwc_mcp("gateway", "--processes", "2",
                            env={**cluster.env, "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)},
                            log_path=tmp_path / "gunicorn.log")
    cluster.gateways.append(gateway)
    cluster.wait_ready(gateway)
    wait_until(lambda: _gauge(gateway.base_url, "pwc_mcp_workers_live") == 1, timeout_s=10, what="1 live worker")
    children = wait_until(lambda: _children(gateway.proc.pid) if len(_children(gateway.proc.pid)) >= 2 else None,
                          timeout_s=10, what="two gunicorn children")
    os.kill(children[0], signal.SIGKILL)
    wait_until(lambda: children[0] not in _children(gateway.proc.pid) and len(_children(gateway.proc.pid)) >= 2,
               timeout_s=15, what="gunicorn replacing the killed child")
    cluster.workers[0].proc.terminate()
    cluster.workers[0].proc.wait(timeout=40)
    wait_until(lambda: _gauge(gateway.base_url, "pwc_mcp_workers_live") == 0, timeout_s=15,
               what="/metrics showing 0 live workers")
    assert _gauge(gateway.base_url, "pwc_mcp_workers_busy") == 0
    assert _gauge(gateway.base_url, "pwc_mcp_worker_threads") == 0


def test_the_no_live_workers_alert_can_fire() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is not installed; .ci/run installs Debian's prometheus package")
    result = subprocess.run([promtool, "test", "rules", "alerts_test.yml"], cwd=PROMETHEUS,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

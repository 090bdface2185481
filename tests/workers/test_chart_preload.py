"""A ready worker draws one throw-away chart in the background (`charts.preload`), so the first
``get_sota_history`` call it serves does not pay matplotlib's import (BENCHMARKS.md "First chart").

Run in a fresh interpreter: the test process may have imported matplotlib already.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow

_SCRIPT = """
import json, logging, sys, threading
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
from workers.settings import WorkerSettings
from workers.worker import Worker

class NoThreads:
    threads = 0

before = "matplotlib.figure" in sys.modules
settings = WorkerSettings.from_env({"PWC_MCP_REDIS_URL": "redis://127.0.0.1:9", "PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32,
                                    "PWC_MCP_WORKER_ID": "preload-test"})
Worker(settings, NoThreads())._start_consumers()
(preload,) = [t for t in threading.enumerate() if t.name == "pwc-chart-preload"]
preload.join(60)
print(json.dumps({"before": before, "after": "matplotlib.figure" in sys.modules and "pwc.chart" in sys.modules,
                  "daemon": preload.daemon, "done": not preload.is_alive()}))
"""


def test_a_ready_worker_preloads_the_chart_on_a_daemon_thread() -> None:
    done = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=120, check=True)
    assert json.loads(done.stdout) == {"before": False, "after": True, "daemon": True, "done": True}
    assert "chart preloaded duration_ms=" in done.stderr and "failed" not in done.stderr


def test_preload_never_raises() -> None:
    """A chart that cannot be drawn is a logged warning, never a dead thread's traceback."""
    script = ("import logging, sys\nlogging.basicConfig(stream=sys.stderr)\nimport pwc.chart\n"
              "def broken(payload): raise RuntimeError('no backend')\npwc.chart.history_png = broken\n"
              "from pwc_mcp_core.tools.charts import preload\npreload()\nprint('ok')\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "ok" and "chart preload failed type=RuntimeError" in done.stderr

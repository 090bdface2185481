"""The Prometheus files are valid, and every metric they use is exported by a running gateway."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO_ROOT, start_pwc_mcp

PROMETHEUS = REPO_ROOT / "prometheus"
_METRIC = re.compile(r"\bpwc_mcp_[a-z_]+\b")
_SUFFIXES = ("_bucket", "_count", "_sum", "_total", "_created")


def _promtool() -> str:
    tool = shutil.which("promtool")
    if tool is None:
        pytest.fail("promtool is not installed; .ci/run installs Debian's prometheus package")
    return tool


def test_the_scrape_configuration_is_valid() -> None:
    result = subprocess.run([_promtool(), "check", "config", "prometheus.yml"], cwd=PROMETHEUS,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_alert_rules_are_valid() -> None:
    result = subprocess.run([_promtool(), "check", "rules", "alerts.yml"], cwd=PROMETHEUS,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def _family(name: str) -> str:
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _used_metric_families() -> set[str]:
    text = (PROMETHEUS / "alerts.yml").read_text(encoding="utf-8")
    dashboard = json.loads((PROMETHEUS / "grafana-dashboard.json").read_text(encoding="utf-8"))
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    return {_family(name) for name in _METRIC.findall(text + "\n".join(exprs))}


def _exported_families(metrics_text: str) -> set[str]:
    return {_family(line.split()[2]) for line in metrics_text.splitlines() if line.startswith("# TYPE ")}


@pytest.mark.slow
def test_every_metric_the_rules_and_dashboard_use_is_exported(catalog_url: str, tmp_path: Path) -> None:
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, "PWC_MCP_REQUEST_LIMIT": "1"},
                           log_path=tmp_path / "gateway.log")
    try:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "list_conferences", "arguments": {}}}
        httpx.post(server.mcp_url, json=call, headers=headers, timeout=30)
        httpx.post(server.mcp_url, json=call, headers=headers, timeout=30)  # over the limit: a rejection
        metrics = httpx.get(f"{server.base_url}/metrics", timeout=10).text
    finally:
        server.stop()
    missing = _used_metric_families() - _exported_families(metrics)
    assert missing == set()

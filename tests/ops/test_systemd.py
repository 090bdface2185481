"""The shipped systemd units pass `systemd-analyze verify` with no warning."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

UNITS = REPO_ROOT / "systemd"


def _render(directory: Path) -> list[Path]:
    """Copy the units with the install prefix pointed at this checkout (ExecStart must exist)."""
    env_file = directory / "pwc-mcp.env"
    env_file.write_text((UNITS / "pwc-mcp.env.example").read_text(encoding="utf-8"), encoding="utf-8")
    for unit in [*UNITS.glob("pwc-mcp*"), UNITS / "pwc-catalog.service"]:
        if unit.suffix not in (".service", ".target"):
            continue
        text = unit.read_text(encoding="utf-8")
        text = text.replace("/opt/pwc-mcp", str(REPO_ROOT)).replace("/etc/pwc-mcp/pwc-mcp.env", str(env_file))
        (directory / unit.name).write_text(text, encoding="utf-8")
    template = directory / "pwc-mcp-worker@.service"
    instances = [directory / "pwc-mcp-worker@1.service", directory / "pwc-mcp-worker@2.service"]
    for instance in instances:
        shutil.copy(template, instance)
    return [directory / "pwc-mcp-gateway.service", *instances, directory / "pwc-mcp.target",
            directory / "pwc-catalog.service"]


def test_every_unit_verifies_without_warnings(tmp_path: Path) -> None:
    analyzer = shutil.which("systemd-analyze")
    if analyzer is None:
        pytest.fail("systemd-analyze is not installed; .ci/run installs it")
    units = _render(tmp_path)
    result = subprocess.run([analyzer, "verify", "--man=no", *map(str, units)], capture_output=True, text=True,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "", result.stderr


@pytest.mark.parametrize("unit", ["pwc-mcp-gateway.service", "pwc-mcp-worker@.service"])
@pytest.mark.parametrize(
    "directive",
    ["NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "RestrictAddressFamilies=", "MemoryMax=",
     "DynamicUser=yes", "EnvironmentFile=", "KillSignal=SIGTERM", "TimeoutStopSec=", "Restart="],
)
def test_services_carry_the_hardening_and_lifecycle_directives(unit: str, directive: str) -> None:
    assert directive in (UNITS / unit).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "directive",
    ["NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "RestrictAddressFamilies=", "MemoryMax=",
     "DynamicUser=yes", "StateDirectory=pwc-catalog", "KillSignal=SIGTERM", "TimeoutStopSec=", "Restart=",
     "--db /var/lib/pwc-catalog/catalog.db", "--processes "],
)
def test_the_catalog_service_serves_its_state_directory_from_several_processes(directive: str) -> None:
    assert directive in (UNITS / "pwc-catalog.service").read_text(encoding="utf-8")


def test_services_start_after_redis() -> None:
    for unit in ("pwc-mcp-gateway.service", "pwc-mcp-worker@.service"):
        text = (UNITS / unit).read_text(encoding="utf-8")
        assert "After=" in text and "redis-server.service" in text


# Read by the processes but not for an operator to set: the unit sets the worker's id per instance,
# the clock skew is a test seam, and the demo's catalog port belongs to `pwc-mcp demo` alone.
_NOT_IN_THE_EXAMPLE = {"PWC_MCP_WORKER_ID", "PWC_MCP_WORKER_CLOCK_SKEW_S", "PWC_DEMO_CATALOG_PORT"}


def test_the_env_example_lists_every_variable_the_units_processes_read() -> None:
    """`pwc-mcp.env.example` says "Every variable is listed": each name the gateway, the workers, the
    core and the CLI read from the environment appears there (set, or commented with its default)."""
    example = (UNITS / "pwc-mcp.env.example").read_text(encoding="utf-8")
    listed = set(re.findall(r"^#?([A-Z][A-Z0-9_]+)=", example, flags=re.MULTILINE))
    read: set[str] = set()
    for package in ("gateway", "workers", "pwc_mcp_core", "pwc", "web_serving"):
        for source in (REPO_ROOT / package).rglob("*.py"):
            read |= set(re.findall(r"\"((?:PWC_[A-Z0-9_]*[A-Z0-9])|PORT|LOG_LEVEL)\"", source.read_text(encoding="utf-8")))
    assert "PWC_MCP_CURSOR_KEY_CURRENT" in read and "PORT" in read  # the scan finds names at all
    assert sorted(read - listed - _NOT_IN_THE_EXAMPLE) == []

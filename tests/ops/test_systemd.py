"""The shipped systemd units pass `systemd-analyze verify` with no warning."""

from __future__ import annotations

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

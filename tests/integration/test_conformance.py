"""The official MCP conformance suite passes for 2025-11-25 and 2026-07-28, modulo its committed baseline."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_the_official_conformance_suite_passes_both_revisions() -> None:
    result = subprocess.run([sys.executable, str(REPO_ROOT / "conformance" / "run.py")], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=840)
    tail = (result.stdout + result.stderr)[-6000:]
    assert result.returncode == 0, tail
    assert "== conformance 2025-11-25: passed" in result.stdout
    assert "== conformance 2026-07-28: passed" in result.stdout

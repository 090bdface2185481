"""``scripts/release-check``: refuses a tag that is not ``pwc-mcp-<version>``, passes on this
tree, and fails when the image's smoke test fails (an image whose papers fit one chunk, so
the ``read_paper`` continuation cannot be checked)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from scripts.podman_local import PodmanEnv
from tests.container.conftest import REPO_ROOT

RELEASE_CHECK = REPO_ROOT / "scripts" / "release-check"


def _release_check(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(RELEASE_CHECK), *args], check=False, cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.parametrize("tag", ["v0.5.0", "pwc-mcp", "pwc-mcp-latest", "pwc-mcp-0.0.1", "release-pwc-mcp-0.5.0"])
def test_a_tag_that_is_not_pwc_mcp_version_is_refused(tag: str) -> None:
    result = _release_check(tag)
    assert result.returncode == 2
    assert result.stderr.startswith(f"release-check: tag {tag!r} ")
    assert len(result.stderr.splitlines()) == 1 and result.stdout == ""


@pytest.mark.container
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_release_check_passes_on_this_tree(podman: PodmanEnv, image: str) -> None:
    with open(REPO_ROOT / "pyproject.toml", "rb") as handle:
        version = tomllib.load(handle)["project"]["version"]
    result = _release_check(f"pwc-mcp-{version}", "--skip-tests", "--podman-root", str(podman.root), timeout=500)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok   read_paper continuation" in result.stdout
    assert result.stdout.rstrip().endswith(f"release check passed: pwc-mcp-{version} may be published")


@pytest.mark.container
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_release_check_fails_when_the_image_smoke_test_fails(podman: PodmanEnv, image: str,
                                                             tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO_ROOT, capture_output=True,
                           text=True, check=True).stdout.splitlines()
    for name in files:
        source = REPO_ROOT / name
        if source.is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tree / name)
    for markdown in (tree / "catalog" / "sample" / "markdown").iterdir():
        markdown.write_bytes(markdown.read_bytes()[:2000])

    result = _release_check("--skip-tests", "--context", str(tree), "--podman-root", str(podman.root), timeout=500)

    assert result.returncode == 1, result.stdout + result.stderr
    assert "ok   image build" in result.stdout
    assert "FAIL read_paper continuation: no paper needed a continuation cursor" in result.stdout
    assert "FAIL image smoke test: pwc-mcp smoke exited 1" in result.stdout
    assert "release check passed" not in result.stdout

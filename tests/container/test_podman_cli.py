"""The offline image build's command line, ``scripts/podman_local.py`` (issue 33 item 8).

Argument handling only, with podman stood in where a subcommand would start it: these run in
milliseconds and need no podman. The real build is the container tests' `image` fixture, which
runs the README's command (`BUILD_ARGV`) through the same `main`.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import filelock
import pytest

import scripts.podman_local as podman_local
from scripts.podman_local import COMMAND, DEFAULT_TAG, compose_command, main, run_command
from tests.container.conftest import BUILD_ARGV, IMAGE, REPO_ROOT, kept_store

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def documented(subcommand: str) -> list[str]:
    """The words after ``uv run scripts/podman_local.py`` on the README line running ``subcommand``."""
    pattern = re.compile(rf"^{re.escape(COMMAND)} ({re.escape(subcommand)}\b[^#\n]*)", re.MULTILINE)
    found = pattern.search(README)
    assert found, f"README has no `{COMMAND} {subcommand}` line"
    return shlex.split(found[1])


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """podman's tools present, bases imported and every command recorded instead of run."""
    ran: list[dict[str, Any]] = []

    def record(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        ran.append({"argv": argv, **kwargs})
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(podman_local, "missing_tools", lambda: [])
    monkeypatch.setattr(podman_local.PodmanEnv, "import_base", lambda self, base: base.tag)
    monkeypatch.setattr(podman_local.subprocess, "run", record)
    return ran


def test_the_readme_build_command_is_the_one_the_container_tests_run() -> None:
    parser = podman_local._parser()
    assert parser.parse_args(documented("build")) == parser.parse_args(list(BUILD_ARGV))
    assert DEFAULT_TAG == IMAGE  # the tag compose.yaml runs
    assert "image: localhost/pwc-mcp:latest" in (REPO_ROOT / "compose.yaml").read_text(encoding="utf-8")
    for subcommand in ("run", "compose", "env", "reset"):
        documented(subcommand)


def test_help_runs_with_plain_python_and_names_every_subcommand() -> None:
    result = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "podman_local.py"), "--help"],
                            capture_output=True, text=True, check=False, timeout=30)
    assert result.returncode == 0, result.stderr
    for subcommand in ("build", "run", "compose", "env", "reset"):
        assert re.search(rf"^\s+{subcommand}\s", result.stdout, flags=re.MULTILINE), subcommand


@pytest.mark.parametrize("argv", [[], ["push"], ["build", "--bogus"], ["run", "--port", "x"]])
def test_bad_arguments_exit_2_with_usage(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert "usage: podman_local.py" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [(["run", "--port", "0"], "--port 0 is not a TCP port"),
                                               (["compose"], "compose needs podman-compose arguments")])
def test_bad_values_exit_2_with_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_missing_tools_exit_2_naming_them(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(podman_local, "missing_tools", lambda: ["mmdebstrap", "runc"])
    assert main(["--root", str(tmp_path), "build"]) == 2
    assert "needs mmdebstrap, runc on the PATH" in capsys.readouterr().err
    assert not (tmp_path / "storage.conf").exists()  # nothing written before the check


def test_env_prints_exports_of_the_private_configuration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(tmp_path), "env"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"export {name}={tmp_path / file}" for name, file in
                     [("CONTAINERS_CONF", "containers.conf"), ("CONTAINERS_STORAGE_CONF", "storage.conf"),
                      ("CONTAINERS_REGISTRIES_CONF", "registries.conf")]]
    registries = (tmp_path / "registries.conf").read_text(encoding="utf-8")
    assert 'location = "docker.io"\nblocked = true' in registries
    assert f'graphroot = "{tmp_path}/storage"' in (tmp_path / "storage.conf").read_text(encoding="utf-8")


def test_build_prints_the_tag_and_the_run_command(stand_ins: list[dict[str, Any]], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(tmp_path), "build"]) == 0
    (built,) = stand_ins
    argv = built["argv"]
    assert argv[:2] == ["podman", "build"] and "--pull=never" in argv and argv[-1] == str(REPO_ROOT)
    assert argv[argv.index("-t") + 1] == IMAGE and "BASE=python:3.12-slim" in argv
    assert built["env"]["CONTAINERS_STORAGE_CONF"] == str(tmp_path / "storage.conf")
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"built {IMAGE} (storage: {tmp_path})"
    assert f"run it:  {COMMAND} --root {tmp_path} run" in out
    assert shlex.join(run_command(IMAGE, 7860)) in out


def test_a_failed_build_exits_1_with_podmans_output(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(podman_local, "missing_tools", lambda: [])
    monkeypatch.setattr(podman_local, "build_image", lambda env, context, tag: subprocess.CompletedProcess(
        [], 125, "STEP 1/9: FROM python:3.12-slim\n", "Error: no such image\n"))
    assert main(["--root", str(tmp_path), "build"]) == 1
    assert "podman build exited 125" in (err := capsys.readouterr().err) and "no such image" in err


def test_run_and_compose_run_podman_in_the_private_storage(stand_ins: list[dict[str, Any]], tmp_path: Path) -> None:
    assert main(["--root", str(tmp_path), "run", "--port", "7999", "-e", "PWC_API_URL=http://127.0.0.1:8000/api/v1"]) == 0
    assert main(["--root", str(tmp_path), "compose", "-f", "extra.yaml", "up", "-d"]) == 0
    run, compose = stand_ins
    assert run["argv"] == run_command(IMAGE, 7999, ["PWC_API_URL=http://127.0.0.1:8000/api/v1"])
    assert run["argv"][4:9] == ["--network=host", "-e", "PORT=7999", "-e", "PWC_MCP_HOST=127.0.0.1"]
    # Everything after `compose`, options included, goes to podman-compose unchanged.
    assert compose["argv"] == compose_command(["-f", "extra.yaml", "up", "-d"])
    assert compose["argv"][-6:] == ["-f", str(REPO_ROOT / "compose.yaml"), "-f", "extra.yaml", "up", "-d"]
    assert compose["cwd"] == REPO_ROOT
    for call in (run, compose):
        assert call["env"]["CONTAINERS_CONF"] == str(tmp_path / "containers.conf")


def test_a_busy_or_disabledkept_store_falls_back_to_a_fresh_one(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    parent = podman_local.cache_dir() / "test-podman"
    parent.mkdir(parents=True)
    with filelock.FileLock(parent / "lock"), kept_store(tmp_path / "busy") as (env, kept):
        assert (env.root, kept) == (tmp_path / "busy", False)  # another run holds the kept store
    monkeypatch.setenv("PWC_MCP_TEST_PODMAN_CACHE", "0")
    with kept_store(tmp_path / "off") as (env, kept):
        assert (env.root, kept) == (tmp_path / "off", False)
    assert [path.name for path in parent.iterdir()] == ["lock"]  # neither touched the kept stores

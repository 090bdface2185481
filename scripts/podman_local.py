#!/usr/bin/env python3
"""Podman with no registry: private configuration, locally made base images, the image build.

The offline image build as a command (standard library only, so plain ``python3`` runs it too)::

    uv run scripts/podman_local.py build            # the image localhost/pwc-mcp:latest, no registry
    uv run scripts/podman_local.py run              # the offline demo on http://127.0.0.1:7860/mcp
    uv run scripts/podman_local.py compose up -d    # compose.yaml with podman-compose, same storage
    eval "$(uv run scripts/podman_local.py env)"    # plain podman / podman-compose in this shell
    uv run scripts/podman_local.py reset            # remove the storage (the base tarballs stay)

Every subcommand takes ``--root DIR``: the private configuration and storage, by default
``~/.cache/pwc-mcp/podman`` (kept, so ``run`` and ``compose`` find what ``build`` made). ``build``
prints the tag and the command that runs it. Exit status: 0 done, 1 podman failed, 2 bad
arguments or a missing tool. ``scripts/release-check`` and ``tests/container`` build through the
same `build_image`; the container tests run ``main(["build", ...])`` itself.

* `PodmanEnv.create(root)` writes a private ``containers.conf`` (runtime ``runc``, because
  crun refuses hybrid cgroups; ``default_ulimits`` nofile = the hard limit, because podman's
  default fails; netavark), ``storage.conf`` (overlay, under ``root``) and ``registries.conf``
  (the public registries blocked), and points ``CONTAINERS_CONF``,
  ``CONTAINERS_STORAGE_CONF`` and ``CONTAINERS_REGISTRIES_CONF`` at them. Every command gets
  ``--pull=never`` where podman takes it.
* `base_tarball(name)` makes a Debian root filesystem with ``mmdebstrap --variant=minbase``
  from the mirror the host's apt sources name, with the host's extra CA certificates
  (``/usr/local/share/ca-certificates/*.crt``) installed, and caches it under
  ``~/.cache/pwc-mcp/`` (about 190 MB and a minute or two to make).
* `PodmanEnv.import_base` imports it as ``python:3.12-slim`` (or the Redis stand-in) with
  ``PIP_BREAK_SYSTEM_PACKAGES=1`` and ``SSL_CERT_FILE`` set, so the Dockerfile's
  ``FROM ${BASE}`` resolves locally.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["BASES", "DEFAULT_TAG", "Base", "PodmanEnv", "base_tarball", "base_tarball_name", "build_image",
           "cache_dir", "compose_command", "default_root", "main", "missing_tools", "run_command"]

HOST_CA_DIR: Final = Path("/usr/local/share/ca-certificates")
BLOCKED_REGISTRIES: Final = ("docker.io", "quay.io", "ghcr.io", "gcr.io", "registry.k8s.io",
                             "registry.fedoraproject.org", "registry.access.redhat.com", "public.ecr.aws")
TOOLS: Final = ("podman", "runc", "mmdebstrap", "slirp4netns")
REPO_ROOT: Final = Path(__file__).resolve().parent.parent
DEFAULT_TAG: Final = "localhost/pwc-mcp:latest"
"""The tag compose.yaml runs."""
COMMAND: Final = "uv run scripts/podman_local.py"
"""How the README calls this file."""


@dataclass(frozen=True)
class Base:
    """A locally made base image: the packages in it, the tag it gets and its ENV lines."""

    name: str
    packages: tuple[str, ...]
    tag: str
    env: tuple[str, ...]


BASES: Final = {
    "python": Base("python", ("python3", "python3-pip", "python3-venv", "python-is-python3", "ca-certificates"),
                   "python:3.12-slim",
                   ("PIP_BREAK_SYSTEM_PACKAGES=1", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
                    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")),
    # compose.yaml's Redis image, made the same way (Debian's redis-server, 7.0 on bookworm).
    "redis": Base("redis", ("redis-server",), "docker.io/library/redis:7-bookworm",
                  ("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",)),
}


def missing_tools() -> list[str]:
    """The tools this module needs that are not on the PATH."""
    return [tool for tool in TOOLS if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists()]


def _os_release() -> dict[str, str]:
    values: dict[str, str] = {}
    for line in Path("/etc/os-release").read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        values[key] = value.strip().strip('"')
    return values


def host_mirror() -> tuple[str, str]:
    """``(suite, mirror URI)``: the host's Debian codename and the first apt source serving it."""
    suite = _os_release().get("VERSION_CODENAME") or "bookworm"
    paths = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for path in paths:
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".sources":  # deb822 stanzas
            for stanza in re.split(r"\n\s*\n", text):
                fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", stanza, flags=re.MULTILINE))
                if "deb" in fields.get("Types", "").split() and suite in fields.get("Suites", "").split():
                    return suite, fields["URIs"].split()[0]
        else:
            for line in text.splitlines():
                parts = re.sub(r"\[[^]]*\]", "", line).split()
                if len(parts) >= 3 and parts[0] == "deb" and parts[2] == suite:
                    return suite, parts[1]
    return suite, "http://deb.debian.org/debian"


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/pwc-mcp`` (default ``~/.cache/pwc-mcp``)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "pwc-mcp"


def _host_certs() -> list[Path]:
    return sorted(HOST_CA_DIR.glob("*.crt")) if HOST_CA_DIR.is_dir() else []


def base_tarball_name(base: Base) -> str:
    """The file name `base_tarball` caches ``base`` under: it changes with everything that goes into it."""
    suite, mirror = host_mirror()
    digest = hashlib.sha256(repr((suite, mirror, base.packages)).encode())
    for cert in _host_certs():
        digest.update(cert.read_bytes())
    return f"base-{base.name}-{suite}-{digest.hexdigest()[:12]}.tar"


def base_tarball(base: Base, *, directory: Path | None = None) -> Path:
    """The cached root filesystem tarball of ``base``, made with mmdebstrap when missing.

    The cache key covers the suite, mirror, packages and the host's CA certificates, so a
    new certificate makes a new tarball. Concurrent callers wait on one lock.

    Raises:
        subprocess.CalledProcessError: mmdebstrap failed (its output is in the exception).
    """
    suite, mirror = host_mirror()
    certs = _host_certs()
    directory = directory or cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / base_tarball_name(base)
    with open(directory / f".{base.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            return target
        partial = target.with_name(f".{target.stem}.partial.tar")  # the suffix picks mmdebstrap's format
        hooks = ['mkdir -p "$1/usr/local/share/ca-certificates"']
        hooks += [f'cp {cert} "$1/usr/local/share/ca-certificates/"' for cert in certs]
        hooks += ['chroot "$1" sh -c "command -v update-ca-certificates >/dev/null || exit 0; update-ca-certificates"',
                  'rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin']
        argv = ["mmdebstrap", "--quiet", "--variant=minbase", f"--include={','.join(base.packages)}"]
        argv += [f"--customize-hook={hook}" for hook in hooks]
        argv += [suite, str(partial), mirror]
        subprocess.run(argv, check=True, capture_output=True, text=True)
        partial.rename(target)
        return target


class PodmanEnv:
    """Podman confined to a private configuration and storage under one directory."""

    def __init__(self, root: Path, env: Mapping[str, str]) -> None:
        self.root = root
        self.env = dict(env)

    @classmethod
    def create(cls, root: Path) -> PodmanEnv:
        """Write the private configuration under ``root`` and return the environment using it."""
        root.mkdir(parents=True, exist_ok=True)
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        hard = 1048576 if hard == resource.RLIM_INFINITY else hard
        (root / "containers.conf").write_text(
            "[containers]\n"
            f'default_ulimits = ["nofile={hard}:{hard}", "nproc=32768:32768"]\n'
            "[engine]\n"
            'runtime = "runc"\n'
            'pull_policy = "never"\n'
            'events_logger = "file"\n'
            'cgroup_manager = "cgroupfs"\n'
            f'tmp_dir = "{root}/tmp"\n'
            "[network]\n"
            'network_backend = "netavark"\n'
            f'network_config_dir = "{root}/networks"\n', encoding="utf-8")
        (root / "storage.conf").write_text(
            "[storage]\n"
            'driver = "overlay"\n'
            f'runroot = "{root}/run"\n'
            f'graphroot = "{root}/storage"\n', encoding="utf-8")
        blocked = "".join(f'[[registry]]\nlocation = "{name}"\nblocked = true\n' for name in BLOCKED_REGISTRIES)
        (root / "registries.conf").write_text("unqualified-search-registries = []\nshort-name-mode = \"disabled\"\n"
                                              + blocked, encoding="utf-8")
        env = dict(os.environ)
        env.update(CONTAINERS_CONF=str(root / "containers.conf"),
                   CONTAINERS_STORAGE_CONF=str(root / "storage.conf"),
                   CONTAINERS_REGISTRIES_CONF=str(root / "registries.conf"))
        return cls(root, env)

    def podman(self, *args: str, check: bool = True, timeout: float | None = 600,
               capture: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``podman ARGS`` in this environment.

        Raises:
            RuntimeError: with ``check``, a non-zero exit (the message holds podman's stderr).
        """
        result = subprocess.run(["podman", *args], env=self.env, check=False, timeout=timeout,
                                capture_output=capture, text=True)
        if check and result.returncode != 0:
            raise RuntimeError(f"podman {' '.join(args[:2])} exited {result.returncode}: {(result.stderr or '')[-2000:]}")
        return result

    def has_image(self, ref: str) -> bool:
        """True when ``ref`` is in this storage."""
        return self.podman("image", "exists", ref, check=False).returncode == 0

    def import_base(self, base: Base) -> str:
        """Import ``base`` (made or taken from the cache) unless present; returns its tag."""
        if not self.has_image(base.tag):
            tarball = base_tarball(base)
            changes: list[str] = []
            for line in base.env:
                changes += ["--change", f"ENV {line}"]
            self.podman("import", *changes, "--change", 'CMD ["/bin/sh"]', str(tarball), base.tag)
        return base.tag

    def build(self, context: Path, tag: str, *, base: str = BASES["python"].tag,
              extra: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
        """``podman build`` of ``context``'s Dockerfile on ``base`` (host network, no pulls).

        ``--format docker`` keeps the HEALTHCHECK (the OCI format has none).
        """
        return self.podman("build", "--pull=never", "--network=host", "--format=docker", "--build-arg",
                           f"BASE={base}", "-t", tag, *extra, str(context), check=False, timeout=900)

    def reset(self) -> None:
        """Remove every container, then this storage (``podman system reset -f``)."""
        self.podman("rm", "-af", "-t", "0", check=False, timeout=120)
        self.podman("system", "reset", "-f", check=False, timeout=300)


def build_image(env: PodmanEnv, context: Path, tag: str) -> subprocess.CompletedProcess[str]:
    """Import the local ``python:3.12-slim`` base (made when missing), then build ``context`` as ``tag``."""
    env.import_base(BASES["python"])
    return env.build(context, tag)


def default_root() -> Path:
    """The kept private configuration and storage: ``$XDG_CACHE_HOME/pwc-mcp/podman``."""
    return cache_dir() / "podman"


def _root_option(root: Path) -> str:
    return "" if root == default_root() else f" --root {shlex.quote(str(root))}"


def run_command(tag: str, port: int, env: Sequence[str] = ()) -> list[str]:
    """``podman run`` of the image on 127.0.0.1:``port`` (host network, as the container tests run it)."""
    argv = ["podman", "run", "--rm", "--pull=never", "--network=host", "-e", f"PORT={port}",
            "-e", "PWC_MCP_HOST=127.0.0.1"]
    for item in env:
        argv += ["-e", item]
    return [*argv, tag]


def _podman_compose() -> list[str]:
    """podman-compose from this environment (``uv run`` puts it beside the interpreter), the PATH, or uv."""
    beside = Path(sys.executable).parent / "podman-compose"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("podman-compose")
    return [found] if found else ["uv", "run", "--frozen", "podman-compose"]


def compose_command(args: Sequence[str], compose_file: Path = REPO_ROOT / "compose.yaml") -> list[str]:
    """podman-compose on ``compose_file`` with ``args`` (``up -d``, ``ps``, ``down -v``...)."""
    return [*_podman_compose(), "-f", str(compose_file), *args]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="podman_local.py", description="Build and run the pwc-mcp image with podman and no registry: the "
        "python:3.12-slim base is made locally with mmdebstrap from the host's apt mirror.")
    parser.add_argument("--root", type=Path, default=None,
                        help="private podman configuration and storage (default: ~/.cache/pwc-mcp/podman)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    build = commands.add_parser("build", help="build the image offline, then print its tag and the run command")
    build.add_argument("--tag", default=DEFAULT_TAG, help=f"image tag (default: {DEFAULT_TAG}, what compose.yaml runs)")
    build.add_argument("--context", type=Path, default=REPO_ROOT, help="source tree to build (default: this one)")
    run = commands.add_parser("run", help="run the image in the foreground (its default command: the offline demo)")
    run.add_argument("--tag", default=DEFAULT_TAG, help=f"image tag (default: {DEFAULT_TAG})")
    run.add_argument("--port", type=int, default=7860, help="port on 127.0.0.1 (default: 7860)")
    run.add_argument("-e", "--env", action="append", default=[], metavar="VAR=VALUE",
                     help="environment for the container, e.g. -e PWC_API_URL=... (repeatable)")
    commands.add_parser("compose", help="podman-compose on compose.yaml in the same storage "
                        "(the Redis base is made locally too); the rest of the line goes to it")
    commands.add_parser("env", help="print export lines that point podman at the private storage")
    commands.add_parser("reset", help="remove every container and the private storage")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (module docstring); returns the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    # Everything after ``compose`` is podman-compose's own command line, options included.
    split = next((i for i, word in enumerate(words) if word == "compose" and (i == 0 or words[i - 1] != "--root")),
                 len(words))
    words, passthrough = words[:split + 1], words[split + 1:]
    args = _parser().parse_args(words)
    args.args = passthrough[1:] if passthrough[:1] == ["--"] else passthrough
    root: Path = args.root if args.root is not None else default_root()
    if args.command == "run" and not 0 < args.port < 65536:
        print(f"podman_local.py: error: --port {args.port} is not a TCP port", file=sys.stderr)
        return 2
    if args.command == "compose" and not args.args:
        print("podman_local.py: error: compose needs podman-compose arguments, e.g. compose up -d", file=sys.stderr)
        return 2
    if args.command != "env":
        missing = missing_tools()
        if missing:
            print(f"podman_local.py: error: needs {', '.join(missing)} on the PATH (Debian: apt-get install -y "
                  "podman runc slirp4netns mmdebstrap; bash .ci/run installs them)", file=sys.stderr)
            return 2
    env = PodmanEnv.create(root)
    if args.command == "env":
        for name in ("CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF", "CONTAINERS_REGISTRIES_CONF"):
            print(f"export {name}={shlex.quote(env.env[name])}")
        return 0
    if args.command == "reset":
        env.reset()
        print(f"removed the containers and storage under {root}")
        return 0
    try:
        if args.command == "build":
            built = build_image(env, args.context, args.tag)
            if built.returncode != 0:
                print(f"podman build exited {built.returncode}:\n{(built.stdout + built.stderr)[-4000:]}",
                      file=sys.stderr)
                return 1
            print(f"built {args.tag} (storage: {root})")
            print(f"run it:  {COMMAND}{_root_option(root)} run    # http://127.0.0.1:7860/mcp, offline demo")
            print(f"or:      eval \"$({COMMAND}{_root_option(root)} env)\" && {shlex.join(run_command(args.tag, 7860))}")
            return 0
        if args.command == "run":
            return subprocess.run(run_command(args.tag, args.port, args.env), env=env.env, check=False).returncode
        env.import_base(BASES["redis"])
        return subprocess.run(compose_command(args.args), env=env.env, cwd=REPO_ROOT, check=False).returncode
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        detail = exc.stderr if isinstance(exc, subprocess.CalledProcessError) else str(exc)
        print(f"podman_local.py: {args.command} failed: {str(detail)[-4000:]}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

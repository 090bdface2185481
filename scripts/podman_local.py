"""Podman with no registry: private configuration, locally made base images, the image build.

Used by ``scripts/release-check`` and ``tests/container``. Standard library only.

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

import fcntl
import hashlib
import os
import re
import resource
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["BASES", "Base", "PodmanEnv", "base_tarball", "missing_tools"]

HOST_CA_DIR: Final = Path("/usr/local/share/ca-certificates")
BLOCKED_REGISTRIES: Final = ("docker.io", "quay.io", "ghcr.io", "gcr.io", "registry.k8s.io",
                             "registry.fedoraproject.org", "registry.access.redhat.com", "public.ecr.aws")
TOOLS: Final = ("podman", "runc", "mmdebstrap", "slirp4netns")


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


def base_tarball(base: Base, *, directory: Path | None = None) -> Path:
    """The cached root filesystem tarball of ``base``, made with mmdebstrap when missing.

    The cache key covers the suite, mirror, packages and the host's CA certificates, so a
    new certificate makes a new tarball. Concurrent callers wait on one lock.

    Raises:
        subprocess.CalledProcessError: mmdebstrap failed (its output is in the exception).
    """
    suite, mirror = host_mirror()
    certs = sorted(HOST_CA_DIR.glob("*.crt")) if HOST_CA_DIR.is_dir() else []
    digest = hashlib.sha256(repr((suite, mirror, base.packages)).encode())
    for cert in certs:
        digest.update(cert.read_bytes())
    directory = directory or cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"base-{base.name}-{suite}-{digest.hexdigest()[:12]}.tar"
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

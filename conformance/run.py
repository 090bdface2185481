"""Run the official MCP conformance suite against pwc-mcp, for 2025-11-25 and 2026-07-28.

Usage: ``uv run python conformance/run.py [--url http://localhost:PORT/mcp]``.
Without ``--url`` it starts ``pwc-mcp demo`` (bundled sample catalog, embedded
mode) on a free loopback port and stops it afterwards. The suite
(``@modelcontextprotocol/conformance``, pinned below) and Node 22 (it crashes
on Node 20; docs/protocol.md §7.4) are installed from npm into
``conformance/.toolbox`` on first use.

Each revision runs with ``--requirements`` and its expected-failures list
(``expected-failures-<revision>.yml``): scenarios that need the suite's fixture
tools/resources/prompts or server-to-client requests, which this read-only
server does not offer. A listed scenario that starts passing fails the run, so
the lists cannot go stale. Exit status: 0 when both revisions pass.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from filelock import FileLock

from gateway.process.demo import free_port

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TOOLBOX = HERE / ".toolbox"
PACKAGES = ("node@22", "@modelcontextprotocol/conformance@0.2.0-alpha.12")
REVISIONS = ("2025-11-25", "2026-07-28")


def ensure_toolbox() -> Path:
    """Install Node 22 and the pinned suite into the toolbox; return its ``.bin`` directory."""
    bin_dir = TOOLBOX / "node_modules" / ".bin"
    TOOLBOX.mkdir(exist_ok=True)
    # The test suite's parallel workers call this too: one installs, the others wait.
    with FileLock(HERE / ".toolbox.lock", timeout=900):
        if not (bin_dir / "conformance").exists():
            npm = shutil.which("npm")
            if npm is None:
                sys.exit("conformance: npm is required (apt-get install npm)")
            subprocess.run([npm, "install", "--prefix", str(TOOLBOX), "--no-audit", "--no-fund", "--silent",
                            *PACKAGES], check=True)
    return bin_dir


def start_demo() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "PORT": str(port), "PWC_MCP_HOST": "127.0.0.1",
           # The suite sends many requests from one address in seconds.
           "PWC_MCP_REQUEST_LIMIT": "10000", "PWC_MCP_SEMANTIC_LIMIT": "10000",
           "PWC_MCP_CONCURRENCY_LIMIT": "64",
           # The DNS-rebinding scenario sends this server's own localhost Origin and expects 2xx;
           # the allowlist stays exact (no wildcard), as in production.
           "PWC_MCP_ALLOWED_ORIGINS": f"http://localhost:{port},http://127.0.0.1:{port}"}
    proc = subprocess.Popen([str(Path(sys.executable).parent / "pwc-mcp"), "demo"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://localhost:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"conformance: pwc-mcp demo exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{base}/.well-known/mcp", timeout=2):
                return proc, f"{base}/mcp"
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    sys.exit("conformance: pwc-mcp demo did not start within 90 s")


def run_suite(bin_dir: Path, url: str, revision: str) -> int:
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = ["conformance", "server", "--url", url, "--requirements", revision,
               "--expected-failures", str(HERE / f"expected-failures-{revision}.yml"),
               "-o", str(HERE / "results" / revision)]
    print(f"== conformance {revision}: {' '.join(command)}", flush=True)
    return subprocess.run(command, env=env, cwd=HERE).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="MCP endpoint of a running server (must be a localhost URL)")
    parser.add_argument("--revision", choices=REVISIONS, action="append", help="run only this revision")
    args = parser.parse_args(argv)
    bin_dir = ensure_toolbox()
    proc, url = (None, args.url) if args.url else start_demo()
    try:
        statuses = {revision: run_suite(bin_dir, url, revision) for revision in args.revision or REVISIONS}
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=15)
    for revision, status in statuses.items():
        print(f"== conformance {revision}: {'passed' if status == 0 else f'FAILED ({status})'}")
    return 0 if all(status == 0 for status in statuses.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

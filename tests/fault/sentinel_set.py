"""A real Redis Sentinel deployment on free loopback ports: a master, a replica, three sentinels.

Sentinel settings are the issue's: ``down-after-milliseconds 1000`` (``down_after_ms``; a slow
election is 8000), ``failover-timeout 5000``, quorum 2. No persistence, so a killed node comes back empty (the worst case for lost writes).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis

from tests.helpers import free_port, stop_process

SERVICE = "pwcmaster"


def _binary() -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed; .ci/run installs it")
    return binary


def _wait_ping(port: int, proc: subprocess.Popen, what: str) -> None:
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1)
    try:
        for _ in range(200):
            try:
                client.ping()
                return
            except redis.ConnectionError:
                if proc.poll() is not None:
                    break
                time.sleep(0.05)
    finally:
        client.close()
    pytest.fail(f"{what} did not start on port {port}")


@dataclass
class Node:
    """One redis-server (data node or sentinel) child process."""

    port: int
    argv: list[str]
    proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_ping(self.port, self.proc, " ".join(self.argv[:2]))

    def kill(self) -> None:
        """SIGKILL: no shutdown, no last words to the replica."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2, socket_connect_timeout=1)


@dataclass
class SentinelSet:
    """Master, replica and three sentinels; `env` configures pwc-mcp processes for it."""

    workdir: Path
    down_after_ms: int = 1000
    data: list[Node] = field(default_factory=list)
    sentinels: list[Node] = field(default_factory=list)

    def start(self) -> None:
        binary = _binary()
        master_port = free_port()
        for index in range(2):
            port = master_port if index == 0 else free_port()
            node_dir = self.workdir / f"data{index}"
            node_dir.mkdir()
            argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                    "--dir", str(node_dir), "--daemonize", "no", "--loglevel", "warning"]
            if index == 1:
                argv += ["--replicaof", "127.0.0.1", str(master_port)]
            node = Node(port, argv)
            node.start()
            self.data.append(node)
        for index in range(3):
            port = free_port()
            conf = self.workdir / f"sentinel{index}.conf"
            conf.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {self.workdir}\n"
                f"sentinel monitor {SERVICE} 127.0.0.1 {master_port} 2\n"
                f"sentinel down-after-milliseconds {SERVICE} {self.down_after_ms}\n"
                f"sentinel failover-timeout {SERVICE} 5000\n"
                f"sentinel parallel-syncs {SERVICE} 1\n", encoding="utf-8")
            node = Node(port, [binary, str(conf), "--sentinel", "--loglevel", "warning"])
            node.start()
            self.sentinels.append(node)
        self.wait_settled(timeout_s=30)

    @property
    def env(self) -> dict[str, str]:
        """The two variables a deployer sets to use this Sentinel service."""
        return {"PWC_MCP_REDIS_SENTINELS": ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels),
                "PWC_MCP_REDIS_SENTINEL_MASTER": SERVICE}

    def live_sentinels(self) -> list[Node]:
        return [s for s in self.sentinels if s.proc is not None and s.proc.poll() is None]

    def master_port(self) -> int | None:
        """The master port the live sentinels agree on (``None``: no agreement yet)."""
        ports = set()
        for sentinel in self.live_sentinels():
            client = sentinel.client()
            try:
                state = client.sentinel_master(SERVICE)
            except redis.RedisError:
                return None
            finally:
                client.close()
            if "s_down" in str(state.get("flags")) or "o_down" in str(state.get("flags")):
                return None
            ports.add(int(state["port"]))
        return ports.pop() if len(ports) == 1 else None

    def node(self, port: int) -> Node:
        return next(n for n in self.data if n.port == port)

    def wait_settled(self, *, timeout_s: float) -> int:
        """Wait until every live sentinel names the same, healthy master with one replica and
        knows the other live sentinels (a failover needs their votes); returns its port."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            port = self.master_port()
            if port is not None and self._settled(port):
                return port
            time.sleep(0.2)
        pytest.fail(f"the sentinels did not settle within {timeout_s}s")

    def _settled(self, port: int) -> bool:
        others = len(self.live_sentinels()) - 1
        for sentinel in self.live_sentinels():
            client = sentinel.client()
            try:
                state = client.sentinel_master(SERVICE)
                replicas = client.sentinel_slaves(SERVICE)
            except redis.RedisError:
                return False
            finally:
                client.close()
            if int(state["num-other-sentinels"]) < others or not any(
                    "s_down" not in str(r.get("flags")) and r.get("master-link-status") == "ok" for r in replicas):
                return False
        role = self.node(port).client()
        try:
            return role.role()[0] in (b"master", "master")
        except redis.RedisError:
            return False
        finally:
            role.close()

    def stop(self) -> None:
        for node in [*self.sentinels, *self.data]:
            node.stop()

"""A real cluster for end-to-end tests: gateway and worker processes on a private redis-server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ServerProcess, start_pwc_mcp
from tests.helpers import wait_http


@dataclass
class Cluster:
    """Gateways and workers sharing one Redis and one catalog."""

    redis_url: str
    catalog_url: str
    logs: Path
    env: dict[str, str]
    gateways: list[ServerProcess] = field(default_factory=list)
    workers: list[ServerProcess] = field(default_factory=list)

    def add_gateway(self, **env: str) -> ServerProcess:
        server = start_pwc_mcp("gateway", env={**self.env, **env},
                               log_path=self.logs / f"gateway-{len(self.gateways)}.log")
        self.gateways.append(server)
        return server

    def add_worker(self, **env: str) -> ServerProcess:
        worker = start_pwc_mcp("worker", env={**self.env, **env}, wait_path=None,
                               log_path=self.logs / f"worker-{len(self.workers)}.log")
        self.workers.append(worker)
        return worker

    def wait_ready(self, gateway: ServerProcess | None = None, timeout_s: float = 30.0) -> None:
        """Wait until ``/health`` of ``gateway`` (default: the first) says ready (workers live, catalog up)."""
        wait_http(f"{(gateway or self.gateways[0]).base_url}/health", timeout_s=timeout_s)

    def stop(self) -> None:
        for process in [*self.workers, *self.gateways]:
            process.stop()


@pytest.fixture
def cluster_factory(redis_url: str, catalog_url: str, tmp_path: Path) -> Iterator[Callable[..., Cluster]]:
    """Build clusters: ``cluster_factory(gateways=1, workers=1, **env)``; all are stopped after the test."""
    built: list[Cluster] = []

    def build(gateways: int = 1, workers: int = 1, **env: str) -> Cluster:
        cluster = Cluster(
            redis_url=redis_url, catalog_url=catalog_url, logs=tmp_path,
            env={"PWC_MCP_REDIS_URL": redis_url, "PWC_API_URL": catalog_url, "PWC_MCP_WORKER_THREADS": "8", **env},
        )
        built.append(cluster)
        for _ in range(workers):
            cluster.add_worker()
        for _ in range(gateways):
            cluster.add_gateway()
        if workers:
            cluster.wait_ready()
        return cluster

    yield build
    for cluster in built:
        cluster.stop()

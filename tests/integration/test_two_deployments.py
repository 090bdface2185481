"""Two deployments on one Redis database never serve each other (issue 33 item 19).

Real processes: deployment A (a gateway and a worker) reads the sample catalog (20
conferences), deployment B (a gateway and a worker) an empty catalog; both on the same
redis-server database with the same cursor key, and neither sets ``PWC_MCP_REDIS_NAMESPACE``:
the namespace each derives from its catalog URL keeps the queues, liveness, limits and
caches apart. Before namespaces, A answered ``list_conferences`` with B's "0 conferences."
whenever B's worker took the call (they shared one queue and one cache).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.conftest import CatalogServer, start_catalog
from tests.fault.conftest import RAISED_LIMITS, call_tool, health, wait_until
from tests.helpers import stop_process
from tests.integration.conftest import Cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture
def empty_catalog(tmp_path: Path) -> Iterator[CatalogServer]:
    """A catalog service with no data at all (a fresh database)."""
    from catalog.db.schema import create_db

    path = tmp_path / "empty.db"
    create_db(path).close()
    server = start_catalog("--db", str(path))
    yield server
    stop_process(server.proc)


def _deployment(name: str, redis_url: str, catalog_url: str, logs: Path) -> Cluster:
    logs.mkdir()
    env = {"PWC_MCP_REDIS_URL": redis_url, "PWC_API_URL": catalog_url, "PWC_MCP_WORKER_THREADS": "4",
           "PWC_MCP_REDIS_NAMESPACE": "", **RAISED_LIMITS}  # blank: the derived default
    cluster = Cluster(redis_url=redis_url, catalog_url=catalog_url, logs=logs, env=env)
    cluster.add_worker(PWC_MCP_WORKER_ID=f"{name}-worker")
    cluster.add_gateway()
    return cluster


def _conferences(url: str, n: int) -> str:
    """The count line of a ``list_conferences`` answer ("20 conferences", "0 conferences.")."""
    answer = call_tool(url, "list_conferences", {}, client_id=f"conf-{n}", timeout_s=30)
    assert answer.status == 200 and not answer.is_tool_error, answer.body
    text = answer.tool_text
    return next((line for line in text.splitlines() if "conferences" in line), text[:80])


def test_two_deployments_on_one_redis_database_each_answer_from_their_own_catalog(
        redis_url: str, catalog_url: str, empty_catalog: CatalogServer, tmp_path: Path) -> None:
    deployments = [_deployment("a", redis_url, catalog_url, tmp_path / "a"),
                   _deployment("b", redis_url, empty_catalog.api_url, tmp_path / "b")]
    try:
        for deployment in deployments:  # each sees exactly its own worker
            gateway = deployment.gateways[0]
            wait_until(lambda g=gateway: health(g.base_url)[1].get("checks", {}).get("workers") == 1,
                       timeout_s=30, what="each gateway seeing its own one worker")
        a, b = (d.gateways[0].mcp_url for d in deployments)
        # Alternate, so that with one shared queue either worker would take calls of both.
        totals = [(_conferences(a, n), _conferences(b, n)) for n in range(6)]
        assert all("20 conferences" in on_a and on_b.startswith("0 conferences") for on_a, on_b in totals), totals
        for deployment in deployments:
            assert health(deployment.gateways[0].base_url)[1]["checks"]["workers"] == 1

        client = redis.Redis.from_url(redis_url)
        try:
            registries = sorted(key.decode() for key in client.scan_iter(match="pwcmcp:v1:{*}:workers"))
            caches = {key.decode().split(":")[2] for key in client.scan_iter(match="pwcmcp:v1:*:cache:*")}
        finally:
            client.close()
        assert len(registries) == 2, registries  # two namespaces, each with its own worker registry
        assert caches == {name.split(":")[2].strip("{}") for name in registries}, (caches, registries)
    finally:
        for deployment in deployments:
            deployment.stop()

"""A slow, failing or unreachable catalog: a clear ``isError`` result, nothing hangs, workers survive.

Fault 4 of issue 7: with ``PWC_MCP_CATALOG_TIMEOUT`` = 2 s and the catalog
answering after 4 s, the tool result is ``upstream_timeout: …``; a catalog
answering 5xx or refusing connections gives ``upstream_error: …``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.fault.accounting import tally
from tests.fault.conftest import assert_workers_alive, call_tool, unique_search
from tests.fault.faulty_catalog import FaultyCatalog
from tests.integration.conftest import Cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.mark.parametrize(("inject", "prefix"), [
    pytest.param(lambda proxy: proxy.delay(4.0), "upstream_timeout:", id="slower-than-catalog-timeout"),
    pytest.param(lambda proxy: proxy.fail(503), "upstream_error:", id="catalog-answers-503"),
    pytest.param(lambda proxy: proxy.fail(500), "upstream_error:", id="catalog-answers-500"),
    pytest.param(lambda proxy: proxy.refuse(), "upstream_error:", id="catalog-refuses-connections"),
])
def test_a_catalog_fault_gives_a_prefixed_tool_error_and_workers_survive(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog,
        inject: Callable[[FaultyCatalog], None], prefix: str, request: pytest.FixtureRequest) -> None:
    cluster = faulty_cluster(workers=2, PWC_MCP_CATALOG_TIMEOUT="2")
    url = cluster.gateways[0].mcp_url
    inject(faulty_catalog)

    answers = [call_tool(url, "search_papers", unique_search("fault"), timeout_s=30) for _ in range(3)]
    counted = tally(f"catalog fault: {request.node.callspec.id}", answers, deadline_s=30)
    assert counted.answered_twice == 0 and counted.hung == 0

    for answer in answers:
        assert answer.status == 200, answer.body
        assert answer.body["id"] == answer.request_id
        assert answer.is_tool_error, answer.body
        assert answer.tool_text.startswith(prefix), answer.tool_text
    faulty_catalog.heal()
    recovered = call_tool(url, "search_papers", unique_search("healed"), timeout_s=30)
    assert recovered.status == 200 and not recovered.is_tool_error, recovered.body
    assert_workers_alive(cluster, expected=2)


def test_an_embedded_gateway_reports_a_slow_catalog_as_upstream_timeout(
        faulty_catalog: FaultyCatalog, tmp_path) -> None:
    from tests.conftest import start_pwc_mcp
    from tests.fault.conftest import RAISED_LIMITS

    server = start_pwc_mcp("gateway", env={"PWC_API_URL": faulty_catalog.api_url, "PWC_MCP_CATALOG_TIMEOUT": "2",
                                           **RAISED_LIMITS}, log_path=tmp_path / "embedded.log")
    try:
        faulty_catalog.delay(4.0)
        answer = call_tool(server.mcp_url, "search_papers", unique_search("embedded"), timeout_s=30)
        assert answer.status == 200 and answer.is_tool_error, answer.body
        assert answer.tool_text.startswith("upstream_timeout:"), answer.tool_text
        assert server.proc.poll() is None
    finally:
        server.stop()

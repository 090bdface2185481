"""The REST surface end to end: gateway → Redis → worker → the sample catalog over HTTP."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from openapi_spec_validator import validate

from pwc_mcp_core.tools.definitions import TOOL_DEFS
from tests.integration.conftest import Cluster

pytestmark = pytest.mark.slow


def test_rest_calls_run_on_the_workers_and_answer_structured_content(cluster_factory: Callable[..., Cluster]) -> None:
    cluster = cluster_factory(gateways=1, workers=1, PWC_MCP_REQUEST_LIMIT="1000")
    base = cluster.gateways[0].base_url
    with httpx.Client(base_url=base, timeout=30) as http:
        assert len(http.get("/v1/tools").json()["tools"]) == len(TOOL_DEFS)
        cite = http.get("/v1/tools/cite_papers", params=[("papers", "1706.03762"), ("papers", "1512.03385"),
                                                         ("format", "ris")])
        assert cite.status_code == 200 and [i["key"] for i in cite.json()["items"]] == [
            "vaswani2017attention", "he2016deep"]
        checked = http.post("/v1/tools/verify_references", json={"references": ["arXiv:2103.14030"]})
        assert checked.status_code == 200 and checked.json()["items"][0]["status"] == "verified"
        task = http.post("/v1/tools/get_task", json={"task": "image-classification"})
        assert task.status_code == 200 and task.json()["schema_version"] == "v1"
        listed = http.get("/v1/tools/list_tasks", params={"limit": 2})
        assert listed.status_code == 200 and listed.json()["schema_version"] == "v1"
        missing = http.get("/v1/tools/get_task", params={"task": "no-such-task-anywhere"})
        assert missing.status_code == 404 and missing.json()["error"].startswith("not_found:")
        invalid = http.get("/v1/tools/search_papers", params={"query": "x", "limit": "500"})
        assert invalid.status_code == 422 and invalid.json()["error"].startswith("invalid_argument:")
        validate(http.get("/openapi.json").json())
    logs = cluster.gateways[0].log_text()
    assert "rest_request tool=get_task status=200" in logs and "protocol=rest" in logs
    assert "image-classification" not in logs and "no-such-task-anywhere" not in logs  # content-free
    assert "image-classification" not in cluster.workers[0].log_text()

"""A small real HTTP catalog (aiohttp in a background thread) for the tool tests.

It serves the payload shapes of docs/tool-contract.md §3.3's test vectors and records
every request (path + query) so tests can assert "no catalog call". The
leaderboard rows are real SQuAD1.1 rows from the shared
``evaluation-tables.json``, duplicated under a second task scope so the CLI
merge produces ``rank_scopes``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools.execution import Runtime
from tests.helpers import free_port

PAPER = {
    "id": "1706.03762", "arxiv_id": "1706.03762", "title": "Attention Is All You Need",
    "abstract": "The dominant sequence transduction models...", "authors": ["Ashish Vaswani", "Noam Shazeer"],
    "published": "2017-06-12", "citation_count": 100000, "url_abs": "https://arxiv.org/abs/1706.03762",
    "url_pdf": "https://arxiv.org/pdf/1706.03762", "has_official_implementation": True,
    "code_repository_count": 3,
    "tasks": [{"id": 1, "name": "Machine Translation", "slug": "machine-translation"}],
    "methods": [{"id": 7, "name": "Transformer", "slug": "transformer"}],
    "repositories": [{"url": "https://github.com/other/impl", "is_official": False},
                     {"url": "https://github.com/tensorflow/tensor2tensor", "is_official": True},
                     "https://github.com/plain/string"],
    "project_pages": ["https://example.org/attention"], "hf_models": ["https://huggingface.co/m"],
    "hf_datasets": [], "hf_spaces": [],
}
SUMMARY = {k: PAPER[k] for k in ("id", "arxiv_id", "title", "authors", "published", "citation_count", "url_abs",
                                 "has_official_implementation", "code_repository_count")}
BENCHMARK = {"id": 72, "name": "SQuAD1.1", "slug": "squad1-1", "full_name": "Stanford Question Answering Dataset",
             "description": "Reading comprehension", "paper_count": 217}
TASK = {"id": 5, "slug": "question-answering", "name": "Question Answering", "area_id": 2, "level": 1,
        "paper_count": 900, "benchmark_count": 2, "evaluation_count": 400}
AREA = {"id": 2, "name": "Natural Language Processing"}
METHOD = {"id": 7, "slug": "transformer", "name": "Transformer", "full_name": "Transformer", "area_id": 2,
          "introduced_year": 2017, "paper_count": 13086, "description": "Attention-based model",
          "source_paper_id": "1706.03762", "source_url": "/paper/1706.03762", "source_title": "Attention"}
CONFERENCE = {"id": 3, "slug": "neurips-2017", "name": "NeurIPS 2017", "year": 2017, "paper_count": 600,
              "location": "Long Beach"}
ORGANIZATION = {"id": 9, "slug": "google", "name": "Google", "paper_count": 158, "is_featured": True,
                "trending_rank": 1}
FRAMEWORKS = {"domains": [{"slug": "dl", "name": "Deep learning", "categories": [
    {"slug": "core", "name": "Core", "frameworks": [
        {"id": 1, "slug": "pytorch", "name": "PyTorch", "platforms": ["linux"], "paper_count": 5}]}]}]}
MARKDOWN = "abcdefgh"
# A paper only public metadata knows (seed README fallback).
OUTSIDE = {"arxiv_id": "2401.99999", "title": "Attention Is All You Need", "abstract": "Public abstract.",
           "authors": ["A. Author"], "source": "arxiv", "in_catalog": False,
           "note": "This paper is not in the Papers With Code catalog.",
           "available_at": [{"label": "arXiv", "url": "https://arxiv.org/abs/2401.99999"}]}


_NOT_FILTERS = ("page", "page_size", "order_by", "order_dir", "include_resources")


def squad_rows(pwc_archive: Path, limit: int = 30) -> list[dict[str, Any]]:
    """Real SQuAD1.1 leaderboard rows as catalog evaluation rows, each under two task scopes."""
    tables = json.loads((pwc_archive / "evaluation-tables.json").read_text())
    dataset = next(ds for task in tables for ds in task["datasets"] if ds["dataset"] == "SQuAD1.1")
    rows = []
    for rank, row in enumerate(dataset["sota"]["rows"][:limit], start=1):
        base = {
            "paper_id": f"p{rank}", "dataset_id": 72, "dataset_name": "SQuAD1.1", "model_name": row["model_name"],
            "metrics": row["metrics"], "best_metric": "F1", "paper_title": row["paper_title"] or None,
            "paper_published_date": row["paper_date"], "result_url": row["paper_url"] or f"/paper/p{rank}",
            "uses_additional_data": row.get("uses_additional_data"), "methodology": "0-shot dev split",
            "is_open": rank % 2 == 0, "split": "dev", "updated_at": "2024-01-01T00:00:00Z",
        }
        rows.append({**base, "id": f"e{rank}a", "task_id": 5, "task_name": "Question Answering",
                     "task_slug": "question-answering", "best_rank": rank})
        rows.append({**base, "id": f"e{rank}b", "task_id": 6, "task_name": "Reading Comprehension",
                     "task_slug": "reading-comprehension", "best_rank": rank + 1})
    return rows


class StubCatalog:
    """``base_url`` answers the catalog paths the tools use; ``requests`` records (path, query)."""

    def __init__(self, pwc_archive: Path) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.overrides: dict[str, Callable[[web.Request], web.StreamResponse]] = {}
        self.rows = squad_rows(pwc_archive)
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/api/v1"
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> StubCatalog:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("stub catalog did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_route("GET", "/api/v1/{path:.*}", self._handle)
        runner = web.AppRunner(app)
        self._loop.run_until_complete(runner.setup())
        self._loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", self.port).start())
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(runner.cleanup())

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.match_info["path"]
        query = dict(request.query)
        self.requests.append((path, query))
        if path in self.overrides:
            return self.overrides[path](request)
        if path.endswith("/read"):
            return web.Response(text=MARKDOWN, headers={
                "X-PwC-Content-Version": "a" * 64, "X-PwC-Truncated": "0"})
        payload = self.payload(path, query)
        if payload is None:
            return web.json_response({"detail": "Not found."}, status=404)
        return web.json_response(payload)

    def payload(self, path: str, query: dict[str, str]) -> Any:  # a routing table
        rows = self.rows
        table: dict[str, Any] = {
            "papers/search": {"count": 3, "next_page": 2, "results": [SUMMARY], "applied_filters": {}},
            # The paper list echoes its filters, as the catalog does (get_trends confirms them).
            "papers/": {"count": 1, "results": [SUMMARY], "applied_filters": {
                key: value for key, value in query.items() if key not in _NOT_FILTERS}},
            "papers/recent": [SUMMARY],
            "papers/trending": [SUMMARY],
            "papers/1706.03762": PAPER,
            "papers/1706.03762/related": [SUMMARY],
            "research/papers/1706.03762/lineage": {
                "paper": {"id": 900, "reference": "1706.03762", "title": PAPER["title"]},
                "predecessors": [{"id": 12, "reference": "1409.0473", "title": "Neural MT"}], "successors": []},
            "evaluations/": {"count": len(rows), "next_page": None, "results": rows[:4]},
            "tasks/": {"count": 1, "results": [TASK]},
            "tasks/5": TASK,
            "tasks/5/page": {"task": {**TASK, "description": "Answer questions"}, "parents": [],
                             "children": [{"id": 6, "slug": "reading-comprehension", "name": "Reading Comprehension"}],
                             "benchmarks": [BENCHMARK], "subtask_benchmarks": []},
            "tasks/5/trending-benchmarks": {"results": [{**BENCHMARK, "trend_score": 1.0}]},
            "tasks/5/papers": {"count": 1, "results": [SUMMARY]},
            "areas/": {"count": 1, "results": [AREA]},
            "areas/with-tasks/": {"results": [{**AREA, "tasks": [TASK]}]},
            "areas/with-task-benchmarks/": {"results": [{**AREA, "tasks": [{**TASK, "benchmarks": [BENCHMARK]}]}]},
            "methods/": {"count": 1, "results": [METHOD]},
            "methods/7": METHOD, "methods/transformer": METHOD,
            "conferences/": {"count": 1, "results": [CONFERENCE]},
            "conferences/neurips-2017": CONFERENCE,
            "organizations/": {"count": 1, "results": [ORGANIZATION]},
            "organizations/google": ORGANIZATION,
            "frameworks/": FRAMEWORKS,
            "datasets/": {"count": 1, "results": [BENCHMARK]},
            "papers/2401.99999/public-metadata": OUTSIDE,
        }
        if path == "datasets/72/evaluations/":
            page, size = int(query.get("page", 1)), int(query.get("page_size", 100))
            chunk = rows[(page - 1) * size: page * size]
            more = page * size < len(rows)
            return {"count": len(rows), "next_page": page + 1 if more else None, "results": chunk}
        if path.startswith("tasks/") and path.endswith("/trending-benchmarks"):
            return {"results": [{**BENCHMARK, "all_time_paper_count": 217, "trend_score": 1.0}]}
        return table.get(path)


@pytest.fixture(scope="module")
def stub(pwc_archive: Path) -> Iterator[StubCatalog]:
    """The stub catalog, one per test module (import this fixture where it is used)."""
    with StubCatalog(pwc_archive) as catalog:
        yield catalog


@pytest.fixture(scope="module")
def runtime(stub: StubCatalog) -> Runtime:
    """An execution runtime pointed at :func:`stub`."""
    return Runtime.build(CoreSettings(api_url=stub.base_url, cursor_keys=("test-secret",)))

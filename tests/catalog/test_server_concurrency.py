"""SQL runs in the server's thread pool: one slow query never stalls the other requests."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from catalog.api.app import create_app
from catalog.store import core as store


async def test_a_slow_query_does_not_stall_other_requests(aiohttp_client: Any, catalog_db: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    started, release = threading.Event(), threading.Event()
    original = store.paper_lineage

    def slow_lineage(conn: Any, ref: str) -> Any:
        started.set()
        assert release.wait(10), "the test never released the slow query"
        return original(conn, ref)

    monkeypatch.setattr(store, "paper_lineage", slow_lineage)
    client = await aiohttp_client(create_app(catalog_db))
    loop = asyncio.get_running_loop()
    slow = asyncio.ensure_future(client.get("/api/v1/research/papers/1706.03762/lineage"))
    try:
        assert await loop.run_in_executor(None, started.wait, 10)
        fast = await client.get("/api/v1/papers/1706.03762")
        assert fast.status == 200
        assert (await fast.json())["id"] == "1"
        assert not slow.done()
    finally:
        release.set()
    response = await asyncio.wait_for(slow, 10)
    assert response.status == 200

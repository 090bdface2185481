"""``pwc.transport.Client`` takes an httpx transport, so pure-logic tests can use ``httpx.MockTransport``."""

from __future__ import annotations

import httpx
import pytest

from pwc.errors import HTTPStatusError
from pwc.transport import Client


def test_a_mock_transport_answers_without_a_network() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path.endswith("/missing"):
            return httpx.Response(404, text="nope")
        return httpx.Response(200, json={"count": 0, "results": []})

    with Client("http://catalog.test/api/v1", transport=httpx.MockTransport(handler)) as client:
        assert client.get_json("tasks/", {"page": 1, "visible_only": True}) == {"count": 0, "results": []}
        with pytest.raises(HTTPStatusError):
            client.get_json("missing")
    assert str(seen[0].url) == "http://catalog.test/api/v1/tasks/?page=1&visible_only=true"
    assert seen[0].headers["user-agent"].startswith("pwc-cli/")

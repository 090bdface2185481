"""The rate-limit refusal tells an agent its options: when to retry and what does not count."""

from __future__ import annotations

import json

from pwc_mcp_core.protocol.refusals import refusal_body


def test_the_rate_limit_refusal_says_when_to_retry_and_that_keyword_search_is_not_semantic() -> None:
    body = json.loads(refusal_body("rate_limit_exceeded", limit_bytes=2 * 1024 * 1024, id_json=b"7", retry_after_s=12))
    message = body["error"]["message"]
    assert body["error"]["data"] == {"error": "rate_limit_exceeded", "retry_after_s": 12}
    assert message.startswith("Rate limit exceeded for this client; retry after 12 s.")
    assert "mode=keyword" in message and "do not count against it" in message


def _refusal(limit: str) -> dict:
    return json.loads(refusal_body("rate_limit_exceeded", limit_bytes=1, id_json=b"7", retry_after_s=12, limit=limit))


def test_each_limit_has_its_own_refusal_text_and_names_itself_in_data() -> None:
    bodies = {limit: _refusal(limit)["error"] for limit in ("requests", "semantic", "concurrency")}
    assert {limit: body["data"]["limit"] for limit, body in bodies.items()} == {
        "requests": "requests", "semantic": "semantic", "concurrency": "concurrency"}
    assert len({body["message"] for body in bodies.values()}) == 3
    for body in bodies.values():
        assert body["message"].startswith("Rate limit exceeded (") and "retry after 12 s" in body["message"]
    # Keyword mode helps only against the semantic limit, and only its text offers it.
    assert "go on now with search_papers mode=keyword" in bodies["semantic"]["message"]
    assert "keyword searches and every other tool included" in bodies["requests"]["message"]
    assert "keyword" not in bodies["concurrency"]["message"]


def test_an_unknown_limit_falls_back_to_the_general_text() -> None:
    body = _refusal("global")["error"]  # the global limit answers server_saturated, never this code
    assert body["message"].startswith("Rate limit exceeded for this client;") and "limit" not in body["data"]

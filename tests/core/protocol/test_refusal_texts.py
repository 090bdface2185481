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

"""The cursor envelope verifies its HMAC before it parses the payload (docs/tool-contract.md §4.4)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from pwc_mcp_core.tools.cursors import CursorCodec, InvalidCursor

SECRET = "current-secret"


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _signed(payload: bytes, secret: str = SECRET) -> str:
    part = _b64(payload)
    return f"{part}.{_b64(hmac.new(secret.encode(), part.encode('ascii'), hashlib.sha256).digest())}"


def test_an_unsigned_payload_never_reaches_the_json_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_parse(*args: object, **kwargs: object) -> object:
        raise AssertionError("parsed before the signature was checked")

    monkeypatch.setattr("pwc_mcp_core.tools.cursors.json.loads", no_parse)
    with pytest.raises(InvalidCursor):
        CursorCodec(SECRET).decode(_signed(b'{"kid": "x"}', secret="another-secret"))


def test_a_signed_payload_that_is_not_json_is_invalid() -> None:
    with pytest.raises(InvalidCursor):
        CursorCodec(SECRET).decode(_signed(b"\xff not json"))


def test_the_kid_inside_must_name_the_key_that_signed_it() -> None:
    rotated = CursorCodec("new-secret", SECRET, clock=lambda: 1000)
    payload = {"v": 1, "ref": "1706.03762", "paper": "1706.03762", "source": "arxiv", "version": "a" * 64,
               "offset": 5, "limit": 5, "kid": hashlib.sha256(SECRET.encode()).hexdigest()[:16], "exp": 2000}
    token = _signed(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode())  # format 1
    assert rotated.decode(token).offset == 5  # signed by the previous key, its kid names that key
    forged = _signed(json.dumps({**payload, "kid": "0" * 16}, sort_keys=True, separators=(",", ":")).encode())
    with pytest.raises(InvalidCursor):
        rotated.decode(forged)

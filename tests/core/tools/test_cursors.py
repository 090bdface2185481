"""Signed continuation cursors (docs/tool-contract.md §4.4; seed placeholder rule).

Format 2 is what the codec issues; format 1 (``<json>.<signature>``) is still decoded for one
release, so its tests build tokens with :func:`legacy` as the earlier codec did.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from pwc_mcp_core.tools.cursors import (
    CursorCodec,
    CursorReferenceMismatch,
    CursorState,
    ExpiredCursor,
    InvalidCursor,
    is_placeholder,
)

NOW = 1000
VERSION = "a" * 64


def codec(current: str = "current-secret", previous: str | None = None, now: float = NOW) -> CursorCodec:
    return CursorCodec(current, previous, clock=lambda: now)


def state(**changes: object) -> CursorState:
    base = {"ref": "1706.03762", "paper": "1706.03762", "source": "arxiv", "version": VERSION,
            "offset": 5, "limit": 5, "exp": NOW + 3600}
    base.update(changes)
    return CursorState(**base)  # type: ignore[arg-type]


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def resign(payload: dict, secret: str = "current-secret") -> str:
    """A correctly signed token for an arbitrary payload (to test state validation)."""
    part = b64(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode())
    sig = hmac.new(secret.encode(), part.encode(), hashlib.sha256).digest()
    return f"{part}.{b64(sig)}"


def legacy(st: CursorState, secret: str = "current-secret") -> str:
    """A format-1 token for ``st``, exactly as the codec issued them before format 2."""
    kid = hashlib.sha256(secret.encode()).hexdigest()[:16]
    return resign({"v": 1, "ref": st.ref, "paper": st.paper, "source": st.source, "version": st.version,
                   "offset": st.offset, "limit": st.limit, "kid": kid, "exp": st.exp}, secret)


def payload_of(token: str) -> dict:
    return json.loads(unb64(token.split(".")[0]))


def test_a_format_1_cursor_still_decodes_with_every_bound_field() -> None:
    token = legacy(state())
    assert codec().decode(token, "1706.03762") == state()


def test_an_empty_current_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="current cursor secret is required"):
        CursorCodec("")


@pytest.mark.parametrize("field,value", [
    pytest.param("ref", "other", id="ref"),
    pytest.param("paper", "1810.04805", id="paper"),
    pytest.param("source", "external", id="source"),
    pytest.param("version", "b" * 64, id="version"),
    pytest.param("offset", 6, id="offset"),
    pytest.param("limit", 65536, id="limit"),
    pytest.param("exp", NOW + 3599, id="exp"),
    pytest.param("kid", "0" * 16, id="kid"),
    pytest.param("v", 2, id="v"),
])
def test_a_tampered_field_makes_the_cursor_invalid(field: str, value: object) -> None:
    token = legacy(state())
    part, sig = token.split(".")
    payload = payload_of(token)
    payload[field] = value
    forged = b64(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode())
    with pytest.raises(InvalidCursor):
        codec().decode(f"{forged}.{sig}", "1706.03762")


@pytest.mark.parametrize("token", [
    pytest.param("abc.def", id="garbage-token"),
    pytest.param("x" * 3000, id="over-long"),
    pytest.param(b64(b"{}") + "." + b64(b"x" * 32), id="unsigned-empty-payload"),
    pytest.param(b64(b"[1]") + "." + b64(b"x" * 32), id="not-an-object"),
    pytest.param(b64(b"\xff\xfe") + "." + b64(b"x" * 32), id="not-utf8"),
    pytest.param(b64(b"x" * 3000)[:1500] + "." + b64(b"x" * 32), id="not-json"),
])
def test_malformed_or_over_long_cursors_are_invalid(token: str) -> None:
    with pytest.raises(InvalidCursor):
        codec().decode(token, "1706.03762")


def test_a_cursor_signed_with_an_unknown_key_is_invalid() -> None:
    token = codec("someone-else").encode(state())
    with pytest.raises(InvalidCursor):
        codec().decode(token, "1706.03762")


def test_a_known_kid_with_a_wrong_signature_is_invalid() -> None:
    token = legacy(state())
    part, _ = token.split(".")
    with pytest.raises(InvalidCursor):
        codec().decode(f"{part}.{b64(b'0' * 32)}", "1706.03762")


@pytest.mark.parametrize("change", [
    pytest.param({"offset": 0}, id="offset-zero"),
    pytest.param({"offset": True}, id="offset-bool"),
    pytest.param({"limit": 65537}, id="limit-too-big"),
    pytest.param({"source": "external"}, id="source-mismatch"),
    pytest.param({"paper": "not a paper"}, id="paper-shape"),
    pytest.param({"version": "A" * 64}, id="version-uppercase"),
    pytest.param({"extra": 1}, id="extra-key"),
    pytest.param({"v": True}, id="v-bool"),
])
def test_a_correctly_signed_but_invalid_state_is_invalid(change: dict) -> None:
    payload = payload_of(legacy(state()))
    payload.update(change)
    with pytest.raises(InvalidCursor):
        codec().decode(resign(payload), "1706.03762")


def test_an_expired_cursor_is_reported_as_expired() -> None:
    token = codec().encode(state(exp=NOW + 10))
    with pytest.raises(ExpiredCursor):
        codec(now=NOW + 10).decode(token, "1706.03762")


def test_tampering_wins_over_expiry_and_expiry_over_reference_mismatch() -> None:
    token = codec().encode(state(exp=NOW + 10))
    with pytest.raises(ExpiredCursor):
        codec(now=NOW + 20).decode(token, "another reference")
    with pytest.raises(InvalidCursor):
        codec(now=NOW + 20).decode(token[:-2] + "AA", "another reference")


@pytest.mark.parametrize("make", [pytest.param(lambda st: CursorCodec("old-secret", clock=lambda: 0).encode(st),
                                              id="format-2"),
                                  pytest.param(lambda st: legacy(st, "old-secret"), id="format-1")])
def test_rotation_accepts_the_previous_key_and_keeps_the_original_expiry(make) -> None:
    old = make(state(exp=1200))
    rotated = CursorCodec("new-secret", "old-secret", clock=lambda: 1100)
    decoded = rotated.decode(old, "1706.03762")
    assert decoded.exp == 1200
    renewed = rotated.encode(decoded)
    assert CursorCodec("new-secret", clock=lambda: 1100).decode(renewed, "1706.03762").exp == 1200
    with pytest.raises(InvalidCursor):
        CursorCodec("new-secret", clock=lambda: 1100).decode(old, "1706.03762")


def test_a_different_reference_is_reported_with_the_decoded_state() -> None:
    token = legacy(state())
    with pytest.raises(CursorReferenceMismatch) as info:
        codec().decode(token, "Attention Is All You Need")
    assert info.value.state == state()
    assert info.value.state.with_ref("x").ref == "x"


@pytest.mark.parametrize("bad", [
    pytest.param({"exp": NOW}, id="expired"),
    pytest.param({"exp": NOW + 3601}, id="beyond-one-hour"),
    pytest.param({"offset": -1}, id="offset-negative"),
    pytest.param({"paper": "x y"}, id="bad-paper"),
    pytest.param({"ref": ""}, id="empty-ref"),
    pytest.param({"ref": "x" * 501}, id="ref-too-long"),
    pytest.param({"version": "a" * 20}, id="version-neither-whole-nor-prefix"),
])
def test_encoding_refuses_invalid_states(bad: dict) -> None:
    with pytest.raises(ValueError):
        codec().encode(state(**bad))


def test_numeric_and_legacy_papers_can_be_continued() -> None:
    for paper, source in (("4242", "external"), ("math.GT/0309136", "arxiv")):
        token = legacy(state(paper=paper, source=source))
        assert codec().decode(token, "1706.03762").paper == paper


@pytest.mark.parametrize("value,placeholder", [
    pytest.param(None, True, id="none"),
    pytest.param("", True, id="empty"),
    pytest.param("next", True, id="next"),
    pytest.param("start", True, id="start"),
    pytest.param("  first ", True, id="first-padded"),
    pytest.param("   ", True, id="blank"),
    pytest.param("abcdefghijklmnop", True, id="sixteen-letters"),
    pytest.param("abcdefghijklmnopq", False, id="seventeen-letters"),
    pytest.param("%%%private%%%", False, id="punctuation"),
    pytest.param("next2", False, id="letters-and-digit"),
    pytest.param("eyJleHAiOjE3", False, id="half-token"),
    pytest.param("abc.def", False, id="token-shaped"),
    pytest.param("x" * 3000, False, id="over-long"),
])
def test_only_an_empty_value_or_a_short_word_is_a_placeholder(value: str | None, placeholder: bool) -> None:
    assert is_placeholder(value) is placeholder


# ---------------------------------------------------------------- format 2


def test_a_format_2_cursor_is_short_and_binds_every_field() -> None:
    for ref in ("1706.03762", ("Attention Is All You Need: " + "a long title " * 35).strip()):
        token = codec().encode(state(ref=ref, offset=90_000, limit=8192))
        assert len(token) <= 80 and "." not in token and "=" not in token
        decoded = codec().decode(token, ref)
        assert decoded == state(ref=ref, offset=90_000, limit=8192, version=VERSION[:16])


@pytest.mark.parametrize(("offset", "limit", "length"), [
    (8192, 8192, 67), (16_383, 8192, 67), (16_384, 8192, 68), (2_000_000, 8192, 68), (2_097_152, 8192, 70),
    (65_536, 65_536, 70), (8192, 16_384, 68), (33_554_432, 65_536, 71)])
def test_a_format_2_cursor_of_an_arxiv_paper_is_67_to_71_characters(offset: int, limit: int, length: int) -> None:
    """The documented length (README, docs/tool-contract.md §4.4): the offset and chunk size are varints."""
    expiry = 1_800_000_000  # a current unix time: five varint bytes
    token = codec(now=expiry - 3600).encode(state(offset=offset, limit=limit, exp=expiry))
    assert len(token) == length


@pytest.mark.parametrize("position", range(0, 52, 3))
def test_flipping_any_bit_of_a_format_2_cursor_makes_it_invalid(position: int) -> None:
    raw = bytearray(unb64(codec().encode(state())))
    raw[position % len(raw)] ^= 0x01
    with pytest.raises(InvalidCursor):
        codec().decode(b64(bytes(raw)), "1706.03762")


def test_format_2_checks_the_mac_before_any_field(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_parse(*args: object, **kwargs: object) -> object:
        raise AssertionError("a field was read before the MAC was checked")

    token = codec("someone-else").encode(state())
    monkeypatch.setattr("pwc_mcp_core.tools.cursors._read_varint", no_parse)
    with pytest.raises(InvalidCursor):
        codec().decode(token, "1706.03762")


def test_a_format_2_cursor_at_offset_zero_is_allowed() -> None:
    """find_in_paper points read_paper at a passage, which may be the paper's first byte."""
    assert codec().decode(codec().encode(state(offset=0)), "1706.03762").offset == 0


def test_format_2_expiry_wins_over_a_reference_mismatch_and_a_mismatch_carries_the_state() -> None:
    token = codec().encode(state(exp=NOW + 10))
    with pytest.raises(ExpiredCursor):
        codec(now=NOW + 20).decode(token, "another reference")
    with pytest.raises(CursorReferenceMismatch) as info:
        codec().decode(token, "another reference")
    assert info.value.state.paper == "1706.03762" and info.value.state.offset == 5


def test_a_signed_format_2_body_with_a_bad_layout_is_invalid() -> None:
    import hmac as hmac_

    def signed(body: bytes) -> str:
        return b64(body + hmac_.new(b"current-secret", b"pwc-cursor-v2\0" + body, hashlib.sha256).digest()[:16])

    good = unb64(codec().encode(state()))[:-16]
    for body in (b"\x03" + good[1:], good[:5], good + b" x", good[:-10] + b"not/a/paper"):
        with pytest.raises(InvalidCursor):
            codec().decode(signed(body), "1706.03762")

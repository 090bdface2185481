"""Signed opaque continuation cursors for ``read_paper`` (docs/tool-contract.md §4.4).

A cursor (format 2) is one URL-safe base64 token without padding, about 70 characters for an
arXiv paper, over these bytes::

    0x02 | exp | offset | limit | version prefix (8 bytes) | ref digest (6 bytes) | paper (ASCII) | MAC (16 bytes)

``exp``, ``offset`` and ``limit`` are unsigned LEB128 varints; the version prefix is the first
16 hex characters of the content version; the ref digest is the first 6 bytes of
sha256(reference); MAC = HMAC-SHA256(secret, ``b"pwc-cursor-v2\0"`` + the bytes before it), cut
to 16 bytes. The current key signs; the previous key (if any) is accepted for decoding only, so
keys rotate without accepting unsigned state. ``exp`` is fixed when reading starts and never
extended (also across rotation).

Decoding order: length/shape → constant-time MAC against each known key (before any field is
parsed) → exact layout and state validity → expiry → reference check. Tampering and expiry
therefore win over a reference mismatch.

Format 1 (``<payload>.<signature>``: compact JSON with ``v``, ``ref``, ``paper``, ``source``, the
whole ``version``, ``offset``, ``limit``, ``kid``, ``exp``, signed with HMAC-SHA256) is still
decoded, under the same rules, so a cursor an agent held across the upgrade keeps working for
its hour; only format 2 is issued.

Placeholders: an empty value or one short word (letters only, at most 16
characters: ``next``, ``start``, ``first``) is not a cursor; :func:`is_placeholder`
tells ``read_paper`` to read from the start. Anything else is a cursor and must
verify, so a token cut in half or ``%%%private%%%`` is refused instead of silently
reading from byte 0 again (an agent would take chunk 1 for chunk 3).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TypeGuard

from pwc.references import ARXIV_LEGACY, ARXIV_MODERN
from pwc_mcp_core.runtime.core_settings import cursor_key_id

__all__ = [
    "CURSOR_TTL_S",
    "CursorCodec",
    "CursorError",
    "CursorReferenceMismatch",
    "CursorState",
    "ExpiredCursor",
    "InvalidCursor",
    "is_placeholder",
    "ref_digest",
    "source_for",
]

CURSOR_TTL_S = 3600
MAX_TOKEN_CHARS = 2048
MAX_PAYLOAD_BYTES = 2048
MAX_LIMIT = 65536
MAX_OFFSET = 2**63 - 1
MAX_REF_CHARS = 500
VERSION_PREFIX = 16
"""Hex characters of the content version a format-2 cursor carries (64 bits)."""
_FORMAT = 2
_MAC_BYTES = 16
_DIGEST_BYTES = 6
_MAC_DOMAIN = b"pwc-cursor-v2\0"
_SHORT_RE = re.compile(r"[A-Za-z0-9_-]{40,400}")
_PREFIX_RE = re.compile(r"[0-9a-f]{16}")
_KEYS = frozenset({"v", "ref", "paper", "source", "version", "offset", "limit", "kid", "exp"})
_TOKEN_RE = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
_PLACEHOLDER_RE = re.compile(r"[A-Za-z]{1,16}")
_VERSION_RE = re.compile(r"[0-9a-f]{64}")
# Canonical ids: modern arXiv, catalog number, and legacy arXiv (an extension of
# §4.4 so legacy papers longer than one chunk can be continued too).
_PAPER_RE = re.compile(rf"{ARXIV_MODERN.pattern}|\d{{1,20}}|{ARXIV_LEGACY.pattern}", re.IGNORECASE)


class CursorError(Exception):
    """A continuation cursor could not be used."""


class InvalidCursor(CursorError):
    """Unsigned, tampered, signed with an unknown key, malformed or over-long."""


class ExpiredCursor(CursorError):
    """Correctly signed, but its fixed one-hour reading session is over."""


class CursorReferenceMismatch(CursorError):
    """Valid cursor, but issued for another reference string.

    ``state`` is the decoded cursor; the caller re-resolves the new reference
    and continues only if it names the same canonical paper.
    """

    def __init__(self, state: CursorState) -> None:
        super().__init__("continuation cursor was issued for another reference")
        self.state = state


@dataclass(frozen=True)
class CursorState:
    """Where a reading session continues.

    Attributes:
        ref: the reference string the cursor was issued for (trimmed, 1–500 chars); from a
            format-2 cursor, the reference it was checked against ("" when none was given).
        paper: canonical paper id (arXiv id or catalog number).
        source: ``"external"`` iff ``paper`` is all digits, else ``"arxiv"``.
        version: the content version the session is pinned to: 64 lower-case hex when known (a
            fresh read, a format-1 cursor), its first 16 hex characters when decoded from a
            format-2 cursor.
        offset: byte offset of the next chunk (≥ 1 in format 1, ≥ 0 in format 2).
        limit: chunk size in bytes (1–65,536).
        exp: unix seconds when the session's cursors stop being accepted.
    """

    ref: str
    paper: str
    source: str
    version: str
    offset: int
    limit: int
    exp: int

    def with_ref(self, ref: str) -> CursorState:
        """The same session bound to another reference of the same paper."""
        return replace(self, ref=ref)


def source_for(paper: str) -> str:
    """``"external"`` for an all-digit catalog id, else ``"arxiv"`` (§4.2)."""
    return "external" if paper.isdigit() else "arxiv"


def is_placeholder(value: str | None) -> bool:
    """True when ``value`` is no cursor at all: None, empty or blank, or one word of
    1–16 ASCII letters (``next``, ``start``, ``first``).

    Everything else is treated as a cursor and must then verify (`CursorCodec.decode`).
    """
    if value is None:
        return True
    text = value.strip()
    return not text or _PLACEHOLDER_RE.fullmatch(text) is not None


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _read_varint(raw: bytes, at: int) -> tuple[int, int]:
    """(value, next position); raises ValueError past the end or beyond 63 bits."""
    value = shift = 0
    while True:
        if at >= len(raw) or shift > 63:
            raise ValueError("bad varint")
        byte = raw[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            if len(_varint(value)) != shift // 7:  # one encoding per value
                raise ValueError("bad varint")
            return value, at


def ref_digest(reference: str) -> bytes:
    """The 6 bytes of sha256(reference) a format-2 cursor binds its reference with."""
    return hashlib.sha256(reference.strip().encode("utf-8")).digest()[:_DIGEST_BYTES]


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _state_is_valid(data: Mapping[str, object]) -> bool:
    ref, paper, source = data.get("ref"), data.get("paper"), data.get("source")
    version, offset, limit = data.get("version"), data.get("offset"), data.get("limit")
    return (
        isinstance(ref, str) and 1 <= len(ref) <= MAX_REF_CHARS and ref == ref.strip()
        and isinstance(paper, str) and _PAPER_RE.fullmatch(paper) is not None
        and source == source_for(paper)
        and isinstance(version, str) and _VERSION_RE.fullmatch(version) is not None
        and _is_int(offset) and 1 <= offset <= MAX_OFFSET
        and _is_int(limit) and 1 <= limit <= MAX_LIMIT
        and _is_int(data.get("exp"))
    )


class CursorCodec:
    """Signs and verifies continuation cursors with a current and an optional previous key.

    Args:
        current_secret: signs every new cursor; required (empty →
            ``ValueError("current cursor secret is required")``, §4.4).
        previous_secret: accepted for decoding only, during key rotation.
        clock: unix seconds (tests inject a fixed clock).
    """

    def __init__(self, current_secret: str | bytes, previous_secret: str | bytes | None = None, *,
                 clock: Callable[[], float] = time.time) -> None:
        if not current_secret:
            raise ValueError("current cursor secret is required")
        self._current = self._key(current_secret)
        self._keys = dict([self._current])
        if previous_secret:
            kid, secret = self._key(previous_secret)
            self._keys.setdefault(kid, secret)
        self._clock = clock

    @staticmethod
    def _key(secret: str | bytes) -> tuple[str, bytes]:
        raw = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
        return cursor_key_id(raw), raw

    def now(self) -> int:
        """Current unix time in whole seconds, from the codec's clock."""
        return int(self._clock())

    def new_expiry(self) -> int:
        """``exp`` for a reading session starting now (now + 3600 s)."""
        return self.now() + CURSOR_TTL_S

    def encode(self, state: CursorState) -> str:
        """Sign ``state`` with the current key as a format-2 cursor.

        Raises:
            ValueError: the state is invalid or ``exp`` is not in (now, now + 3600].
        """
        _kid, secret = self._current
        now = self.now()
        valid = (1 <= len(state.ref) <= MAX_REF_CHARS and state.ref == state.ref.strip()
                 and _PAPER_RE.fullmatch(state.paper) is not None and state.source == source_for(state.paper)
                 and (_VERSION_RE.fullmatch(state.version) or _PREFIX_RE.fullmatch(state.version)) is not None
                 and _is_int(state.offset) and 0 <= state.offset <= MAX_OFFSET
                 and _is_int(state.limit) and 1 <= state.limit <= MAX_LIMIT)
        if not valid or not now < state.exp <= now + CURSOR_TTL_S:
            raise ValueError("cursor state cannot be encoded")
        body = (bytes([_FORMAT]) + _varint(state.exp) + _varint(state.offset) + _varint(state.limit)
                + bytes.fromhex(state.version[:VERSION_PREFIX]) + ref_digest(state.ref)
                + state.paper.encode("ascii"))
        return _b64encode(body + self._mac(secret, body))

    @staticmethod
    def _mac(secret: bytes, body: bytes) -> bytes:
        return hmac.new(secret, _MAC_DOMAIN + body, hashlib.sha256).digest()[:_MAC_BYTES]

    def decode(self, token: str, reference: str | None = None) -> CursorState:
        """Verify ``token`` and return its state.

        Args:
            token: the cursor as received.
            reference: the trimmed reference of this call; when given and different
                from the cursor's, :class:`CursorReferenceMismatch` is raised last.

        Both formats are accepted (format 1 for one release, module doc).

        Raises:
            InvalidCursor: malformed, over-long, unknown key, bad signature or bad state.
            ExpiredCursor: ``exp <= now``.
            CursorReferenceMismatch: valid, but issued for another reference.
        """
        if len(token) > MAX_TOKEN_CHARS:
            raise InvalidCursor("invalid continuation cursor")
        token = token.strip()
        if "." not in token:
            return self._decode_short(token, reference)
        if _TOKEN_RE.fullmatch(token) is None:
            raise InvalidCursor("invalid continuation cursor")
        payload_part, signature_part = token.split(".")
        try:
            payload = _b64decode(payload_part)
            signature = _b64decode(signature_part)
        except (binascii.Error, ValueError) as exc:
            raise InvalidCursor("invalid continuation cursor") from exc
        if len(payload) > MAX_PAYLOAD_BYTES:
            raise InvalidCursor("invalid continuation cursor")
        # The signature is checked before the payload is parsed: unsigned bytes never reach the
        # JSON parser. The kid inside is then only trusted if it names the key that signed it.
        signed_by = next((kid for kid, secret in self._keys.items() if hmac.compare_digest(
            hmac.new(secret, payload_part.encode("ascii"), hashlib.sha256).digest(), signature)), None)
        if signed_by is None:
            raise InvalidCursor("invalid continuation cursor")
        try:
            data = json.loads(payload.decode("utf-8"))
        except ValueError as exc:
            raise InvalidCursor("invalid continuation cursor") from exc
        if not isinstance(data, dict) or data.get("kid") != signed_by:
            raise InvalidCursor("invalid continuation cursor")
        if set(data) != _KEYS or not (_is_int(data["v"]) and data["v"] == 1) or not _state_is_valid(data):
            raise InvalidCursor("invalid continuation cursor")
        state = CursorState(ref=data["ref"], paper=data["paper"], source=data["source"],
                            version=data["version"], offset=data["offset"], limit=data["limit"],
                            exp=data["exp"])
        if state.exp <= self.now():
            raise ExpiredCursor("expired continuation cursor")
        if reference is not None and reference.strip() != state.ref:
            raise CursorReferenceMismatch(state)
        return state

    def _decode_short(self, token: str, reference: str | None) -> CursorState:
        """Format 2 (module doc): the MAC is checked before any field is read."""
        if _SHORT_RE.fullmatch(token) is None:
            raise InvalidCursor("invalid continuation cursor")
        try:
            raw = _b64decode(token)
        except (binascii.Error, ValueError) as exc:
            raise InvalidCursor("invalid continuation cursor") from exc
        body, tag = raw[:-_MAC_BYTES], raw[-_MAC_BYTES:]
        if len(raw) <= _MAC_BYTES or not any(hmac.compare_digest(self._mac(secret, body), tag)
                                             for secret in self._keys.values()):
            raise InvalidCursor("invalid continuation cursor")
        try:
            if body[0] != _FORMAT:
                raise ValueError("format")
            exp, at = _read_varint(body, 1)
            offset, at = _read_varint(body, at)
            limit, at = _read_varint(body, at)
            version = body[at:at + 8].hex()
            digest = body[at + 8:at + 8 + _DIGEST_BYTES]
            paper = body[at + 8 + _DIGEST_BYTES:].decode("ascii")
        except (IndexError, ValueError) as exc:
            raise InvalidCursor("invalid continuation cursor") from exc
        if (_PREFIX_RE.fullmatch(version) is None or len(digest) != _DIGEST_BYTES
                or _PAPER_RE.fullmatch(paper) is None or not 0 <= offset <= MAX_OFFSET
                or not 1 <= limit <= MAX_LIMIT):
            raise InvalidCursor("invalid continuation cursor")
        given = reference.strip() if reference is not None else ""
        state = CursorState(ref=given, paper=paper, source=source_for(paper), version=version,
                            offset=offset, limit=limit, exp=exp)
        if exp <= self.now():
            raise ExpiredCursor("expired continuation cursor")
        if reference is not None and not hmac.compare_digest(ref_digest(given), digest):
            raise CursorReferenceMismatch(state)
        return state

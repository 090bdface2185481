"""Signed opaque continuation cursors for ``read_paper`` (docs/tool-contract.md §4.4).

Token = ``<payload>.<signature>``, both URL-safe base64 without padding.
Payload = compact JSON with sorted keys, exactly::

    {"exp": int, "kid": "<16 hex>", "limit": int, "offset": int, "paper": str,
     "ref": str, "source": "arxiv"|"external", "v": 1, "version": "<64 hex>"}

Signature = HMAC-SHA256(secret, ASCII payload part). ``kid`` = the first 16 hex
characters of sha256(secret). The current key signs; the previous key (if any)
is accepted for decoding only, so keys rotate without accepting unsigned state.
``exp`` is fixed when reading starts and never extended (also across rotation).

Decoding order: length/shape → constant-time HMAC against each known key (before the
payload is parsed) → the payload's kid names the signing key → exact key set, ``v``
and state validity → expiry → reference check. Tampering and expiry
therefore win over a reference mismatch.

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

__all__ = [
    "CURSOR_TTL_S",
    "CursorCodec",
    "CursorError",
    "CursorReferenceMismatch",
    "CursorState",
    "ExpiredCursor",
    "InvalidCursor",
    "is_placeholder",
    "source_for",
]

CURSOR_TTL_S = 3600
MAX_TOKEN_CHARS = 2048
MAX_PAYLOAD_BYTES = 2048
MAX_LIMIT = 65536
MAX_OFFSET = 2**63 - 1
MAX_REF_CHARS = 500
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
        ref: the reference string the cursor was issued for (trimmed, 1–500 chars).
        paper: canonical paper id (arXiv id or catalog number).
        source: ``"external"`` iff ``paper`` is all digits, else ``"arxiv"``.
        version: the content version (64 lower-case hex) the session is pinned to.
        offset: byte offset of the next chunk (≥ 1).
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
        return hashlib.sha256(raw).hexdigest()[:16], raw

    def now(self) -> int:
        """Current unix time in whole seconds, from the codec's clock."""
        return int(self._clock())

    def new_expiry(self) -> int:
        """``exp`` for a reading session starting now (now + 3600 s)."""
        return self.now() + CURSOR_TTL_S

    def encode(self, state: CursorState) -> str:
        """Sign ``state`` with the current key.

        Raises:
            ValueError: the state is invalid or ``exp`` is not in (now, now + 3600].
        """
        kid, secret = self._current
        data = {"v": 1, "ref": state.ref, "paper": state.paper, "source": state.source,
                "version": state.version, "offset": state.offset, "limit": state.limit,
                "kid": kid, "exp": state.exp}
        now = self.now()
        if not _state_is_valid(data) or not now < state.exp <= now + CURSOR_TTL_S:
            raise ValueError("cursor state cannot be encoded")
        payload = _b64encode(json.dumps(data, sort_keys=True, separators=(",", ":")).encode("utf-8"))
        signature = hmac.new(secret, payload.encode("ascii"), hashlib.sha256).digest()
        token = f"{payload}.{_b64encode(signature)}"
        if len(token) > MAX_TOKEN_CHARS:
            raise ValueError("cursor state cannot be encoded")
        return token

    def decode(self, token: str, reference: str | None = None) -> CursorState:
        """Verify ``token`` and return its state.

        Args:
            token: the cursor as received.
            reference: the trimmed reference of this call; when given and different
                from the cursor's, :class:`CursorReferenceMismatch` is raised last.

        Raises:
            InvalidCursor: malformed, over-long, unknown key, bad signature or bad state.
            ExpiredCursor: ``exp <= now``.
            CursorReferenceMismatch: valid, but issued for another reference.
        """
        if len(token) > MAX_TOKEN_CHARS:
            raise InvalidCursor("invalid continuation cursor")
        token = token.strip()
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

"""The one reply format of the call queue: a worker encodes an `Outcome`, the gateway decodes it.

A reply is one item of the gateway process's reply list::

    <rid> "\n" <tag> <payload>

``rid`` is the request id (ASCII, unique in its gateway process); ``tag`` is one byte:

* ``A`` — `Answer`; the payload is the body ``execute`` returned (``{"result":…}`` or
  ``{"error":…}``, never parsed here);
* ``L`` — `TooLarge`; no payload: a body over the worker's response bound never crosses Redis.

A call whose deadline passed gets no reply (nobody waits for it); the gateway's timer says
`TimedOut`. Stdlib only, so workers stay Rust-free.
"""

from __future__ import annotations

from typing import Final, TypeAlias

from pwc_mcp_core.cluster.outcomes import TOO_LARGE, Answer, TooLarge

__all__ = ["Replied", "decode_reply", "encode_reply"]

Replied: TypeAlias = Answer | TooLarge
"""The outcomes a reply carries."""

_ANSWER: Final = b"A"
_TOO_LARGE: Final = b"L"


def encode_reply(rid: str, outcome: Replied) -> bytes:
    """The reply item for ``outcome`` of the call ``rid``."""
    if isinstance(outcome, Answer):
        return b"".join((rid.encode("ascii"), b"\n", _ANSWER, outcome.body))
    return b"".join((rid.encode("ascii"), b"\n", _TOO_LARGE))


def decode_reply(raw: bytes) -> tuple[str, Replied]:
    """``(rid, outcome)`` of a reply item, the body left unparsed.

    Raises:
        ValueError: not a reply (no request id, or an unknown tag).
    """
    head, sep, rest = raw.partition(b"\n")
    tag = rest[:1]
    if not sep or not head:
        raise ValueError("reply without a request id")
    if tag == _ANSWER:
        return head.decode("ascii"), Answer(rest[1:])
    if tag == _TOO_LARGE and len(rest) == 1:
        return head.decode("ascii"), TOO_LARGE
    raise ValueError("reply with an unknown tag")

"""The outcomes of a dispatched call (ARCHITECTURE.md §2): exactly one of `Answer`, `Refused`,
`Unavailable`, `TimedOut`, `TooLarge`.

`pwc_mcp_core.runtime.dispatch` is the seam that hands them out; they are defined here, below it,
because the call queue's reply format (`pwc_mcp_core.cluster.replies`) carries them across Redis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pwc_mcp_core.cluster.admission import Decision

__all__ = ["TIMED_OUT", "TOO_LARGE", "Answer", "Outcome", "Refused", "TimedOut", "TooLarge", "Unavailable"]


@dataclass(frozen=True, slots=True)
class Answer:
    """The executor's body, without ``jsonrpc``/``id`` (``b'{"result":…}'`` or ``b'{"error":…}'``)."""

    body: bytes


@dataclass(frozen=True, slots=True)
class Refused:
    """The limits refused the call; ``decision`` says which limit and when to retry."""

    decision: Decision


@dataclass(frozen=True, slots=True)
class Unavailable:
    """The call could not run now (no live worker, queue full or unreachable, lost, shutting down).

    ``reason`` is a fixed, content-free phrase for logs; it is never shown to a client.
    """

    reason: str


@dataclass(frozen=True, slots=True)
class TimedOut:
    """No answer arrived before the call's deadline."""


@dataclass(frozen=True, slots=True)
class TooLarge:
    """The serialized answer exceeds the response bound (``max_body_bytes``); `TOO_LARGE` is the one instance.

    A worker replies with it in place of a body over the bound (`pwc_mcp_core.cluster.replies`),
    so the oversized body never crosses Redis."""


Outcome = Answer | Refused | Unavailable | TimedOut | TooLarge
"""Everything a dispatch can end in; the only thing that crosses the seam."""

TIMED_OUT: Final = TimedOut()
TOO_LARGE: Final = TooLarge()
"""The `TooLarge` outcome (a value without fields: one object serves every call)."""

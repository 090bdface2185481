"""Admission values shared by the limiter, the dispatchers and the surfaces (docs/tool-contract.md §2.3).

A request's admission is decided once and travels as one of these frozen values:
`Decision` (what the limits said), `Lease` (the concurrency slot an admitted call holds)
and `AdmissionScript` (the KEYS/ARGV of ``admission.lua`` when the dispatcher runs the
admission itself, in the same Redis round trip as the enqueue; handed to it as `Deferred`). `decision_from_code`
turns the script's integer reply into a `Decision`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["LIMITS_UNAVAILABLE", "AdmissionScript", "Decision", "Deferred", "Lease", "RefusalKind", "decision_from_code"]

RefusalKind = Literal["ok", "global", "requests", "semantic", "concurrency", "limits_unavailable"]
# Refusal kinds by the hundreds digit of an admission script's reply (admission.lua).
_KINDS: Final[dict[int, RefusalKind]] = {1: "global", 2: "requests", 3: "semantic", 4: "concurrency"}


@dataclass(frozen=True, slots=True)
class Lease:
    """One admitted request's hold on the concurrency budget."""

    lease_id: str
    client_hash: str


@dataclass(frozen=True, slots=True)
class Decision:
    """What the limits decided for one request.

    ``kind`` is ``"ok"`` or what refused: ``"global"`` (answer 503 ``server_saturated``),
    ``"requests"``, ``"semantic"`` or ``"concurrency"`` (429), ``"limits_unavailable"``
    (the limit store cannot be reached: 503, fail closed). ``retry_after_s`` is whole
    seconds (1..60), 0 when admitted.
    """

    allowed: bool
    kind: RefusalKind
    retry_after_s: int
    lease: Lease | None = None


LIMITS_UNAVAILABLE: Final = Decision(False, "limits_unavailable", 1)
"""The decision when the limit store cannot be reached: nothing is admitted uncounted."""


def decision_from_code(code: int, lease: Lease | None) -> Decision:
    """Decode an admission script's reply (``admission.lua``): 0 admits with ``lease``,
    ``kind * 100 + retry_after_s`` refuses.

    Raises:
        ValueError: the code names no refusal kind.
    """
    if code == 0:
        return Decision(True, "ok", 0, lease)
    kind = _KINDS.get(code // 100)
    if kind is None:
        raise ValueError(f"unknown admission code {code}")
    return Decision(False, kind, code % 100)


@dataclass(frozen=True, slots=True)
class AdmissionScript:
    """The KEYS and the first eight ARGV of ``admission.lua`` for one request.

    ``admit.lua`` appends whether to take leases; ``admit_enqueue.lua`` (run by the Redis
    dispatcher) appends the stream and the entry. ``lease`` is the lease the request takes.
    """

    keys: list[str]
    args: list[str | int]
    lease: Lease


@dataclass(frozen=True, slots=True)
class Deferred:
    """An admission the dispatcher runs itself, atomically with the enqueue (``admit_enqueue.lua``)."""

    script: AdmissionScript

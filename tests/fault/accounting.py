"""Per-fault accounting of what clients saw: the numbers RELIABILITY.md's table reports.

A fault test sends its calls, hands every outcome to :func:`tally`, and asserts the two
that must be zero. Every tally is also printed in the pytest terminal summary
(``tests/fault/conftest.py``), so a fault-suite run reports, for each fault: calls sent,
answered once, answered with a clear error, answered twice, hung past the deadline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["TALLIES", "Tally", "tally"]

# A call answered later than its deadline plus this margin counts as hung.
HANG_MARGIN_S = 3.0


@dataclass
class Tally:
    """What the clients of one fault saw."""

    fault: str
    sent: int = 0
    answered_once: int = 0
    clear_error: int = 0
    answered_twice: int = 0
    hung: int = 0
    other: int = 0

    def row(self) -> str:
        """One Markdown table row."""
        return (f"| {self.fault} | {self.sent} | {self.answered_once} | {self.clear_error} | "
                f"{self.answered_twice} | {self.hung} |")


TALLIES: list[Tally] = []


def _is_clear_error(answer: Any) -> bool:
    """A JSON-RPC error with a message, a refusal body naming its reason, or an isError
    result with text (the tool error texts say what failed and what to do)."""
    body = answer.body if isinstance(answer.body, dict) else {}
    error = body.get("error")
    if isinstance(error, dict):
        return bool(str(error.get("message", "")).strip())
    if isinstance(error, str):
        return bool(error.strip())
    return answer.is_tool_error and bool(answer.tool_text.strip())


def tally(fault: str, outcomes: list[Any], *, deadline_s: float) -> Tally:
    """Count ``outcomes`` (``RpcAnswer`` or the exception a client call raised, e.g. a
    client-side timeout) of one fault and record the tally.

    * answered once: HTTP 200 with exactly one JSON-RPC result for the request's id;
    * answered twice: more than one response message, or a result for another request's
      id (someone else's answer); a refusal sent before the request was parsed has no id;
    * clear error: a JSON-RPC error with a message, a refusal naming its reason
      (``limits_unavailable``, ``server_saturated``), or an isError result with its text;
    * hung: no answer, or one later than ``deadline_s`` + ``HANG_MARGIN_S``.
    """
    counted = Tally(fault=fault, sent=len(outcomes))
    for outcome in outcomes:
        if isinstance(outcome, BaseException) or outcome.elapsed_s > deadline_s + HANG_MARGIN_S:
            counted.hung += 1
        elif isinstance(outcome.body, list) or (isinstance(outcome.body, dict) and "result" in outcome.body
                                                 and outcome.body.get("id") != outcome.request_id):
            counted.answered_twice += 1
        elif outcome.status == 200 and "result" in outcome.body and not outcome.is_tool_error:
            counted.answered_once += 1
        elif _is_clear_error(outcome):
            counted.clear_error += 1
        else:
            counted.other += 1
    TALLIES.append(counted)
    return counted

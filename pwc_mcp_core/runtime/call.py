"""`Call`: one `tools/call`, `resources/read` or catalog-backed `completion/complete` handed to an
executor (ARCHITECTURE.md §2).

The gateway serializes it onto the Redis queue (`to_json`), a worker rebuilds
it (`from_json`) and runs `execution.execute(call, runtime)`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Final, Literal

from pwc_mcp_core.protocol.json_types import JsonValue
from pwc_mcp_core.protocol.jsonrpc import utf8

__all__ = ["Call", "CallKind"]

CallKind = Literal["tools/call", "resources/read", "completion/complete"]
Era = Literal["legacy", "modern"]
_KINDS: Final[dict[str, CallKind]] = {"tools/call": "tools/call", "resources/read": "resources/read",
                                      "completion/complete": "completion/complete"}
_ERAS: Final[dict[str, Era]] = {"legacy": "legacy", "modern": "modern"}
SCHEMA_VERSION: Final = 1
# The envelope carries the arguments as the client sent them, NaN and ±Infinity included
# (Python's json writes and reads them), so the worker's validation refuses them with the
# same invalid_argument message as the embedded mode instead of the queueing failing.
_ENVELOPE: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=True)


@dataclass(frozen=True, slots=True)
class Call:
    """An executable request.

    Attributes:
        kind: ``"tools/call"``, ``"resources/read"`` or ``"completion/complete"``.
        name: the tool name, the resource URI for ``resources/read``, or the vocabulary
            (`completion.VOCABULARIES`) for ``completion/complete``.
        arguments: the tool arguments (``{}`` for resources, ``{"value": typed}`` for a
            completion), not yet validated.
        era: ``"legacy"`` (2025-11-25 and older) or ``"modern"`` (2026-07-28); decides
            error codes (-32002 vs -32602) and the modern result fields.
        protocol: the protocol version string the client spoke.
        deadline: absolute deadline, unix seconds (``time.time()`` clock).
    """

    kind: CallKind
    name: str
    arguments: dict[str, JsonValue] = field(default_factory=dict)
    era: Era = "legacy"
    protocol: str = "2025-11-25"
    deadline: float = 0.0

    def to_json(self) -> bytes:
        """Compact UTF-8 JSON with a schema version ``v``."""
        payload = {"v": SCHEMA_VERSION, "kind": self.kind, "name": self.name, "arguments": self.arguments,
                   "era": self.era, "protocol": self.protocol, "deadline": self.deadline}
        return utf8(_ENVELOPE.encode(payload))

    @classmethod
    def from_json(cls, raw: bytes | str, *, deadline: float | None = None) -> Call:
        """Rebuild a `Call` written by `to_json`; ``deadline``, when given, replaces the envelope's
        (a worker's, converted from Redis's clock to its own).

        Raises:
            ValueError: not JSON, wrong schema version, or a field of the wrong type.
        """
        try:
            data: JsonValue = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError("call envelope is not valid JSON") from exc
        if not isinstance(data, dict) or data.get("v") != SCHEMA_VERSION:
            raise ValueError("call envelope has an unsupported schema version")
        kind, name, arguments = data.get("kind"), data.get("name"), data.get("arguments")
        era, protocol, written = data.get("era"), data.get("protocol"), data.get("deadline")
        kind = _KINDS.get(kind) if isinstance(kind, str) else None
        era = _ERAS.get(era) if isinstance(era, str) else None
        if (kind is None or not isinstance(name, str) or not isinstance(arguments, dict)
                or era is None or not isinstance(protocol, str)
                or not isinstance(written, (int, float)) or isinstance(written, bool)):
            raise ValueError("call envelope has a missing or mistyped field")
        return cls(kind=kind, name=name, arguments=arguments, era=era, protocol=protocol,
                   deadline=float(written) if deadline is None else deadline)

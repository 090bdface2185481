"""Gateway-only settings (readiness probe spacing, lease margin) on top of ``CoreSettings``.

Built once at the entry point with :meth:`GatewaySettings.from_env`; nothing below
reads ``os.environ`` (docs/style.md §7 practice 4). Listener, bounds, limits and the call
deadline live in :class:`pwc_mcp_core.runtime.core_settings.CoreSettings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from pwc_mcp_core.runtime.core_settings import CoreSettings

from gateway.limits import LimitSettings
from gateway.sse_sessions import SseSettings

__all__ = ["GatewaySettings", "LEASE_MARGIN_S"]

# A lease outlives the call deadline by this much, so only a dead gateway's leases lapse.
LEASE_MARGIN_S: Final = 10.0


@dataclass(frozen=True)
class GatewaySettings:
    """Everything the gateway process needs.

    Attributes:
        core: the shared settings (listener, limits, allowlists, trusted proxies,
            redis_url, cursor keys, body bound, call deadline).
        health_ok_interval_s, health_fail_interval_s: catalog readiness probe spacing
            after a success / a failure (30 s / 5 s, docs/tool-contract.md §1.3).
        lease_ttl_s: concurrency lease lifetime; default call deadline + 10 s.
        sse: caps and timers of the HTTP+SSE transport (``PWC_MCP_SSE_*``).
    """

    core: CoreSettings
    health_ok_interval_s: float = 30.0
    health_fail_interval_s: float = 5.0
    lease_ttl_s: float | None = None
    sse: SseSettings = SseSettings()

    @classmethod
    def from_env(cls, environ: Mapping[str, str], *, allow_ephemeral_cursor_key: bool = False) -> GatewaySettings:
        """Read every core variable (see ``CoreSettings``).

        Raises:
            ConfigError: a variable is invalid or the cursor key is missing; the message names it.
        """
        return cls(core=CoreSettings.from_env(environ, allow_ephemeral_cursor_key=allow_ephemeral_cursor_key),
                   sse=SseSettings.from_env(environ))

    @property
    def max_body_bytes(self) -> int:
        """Bound on request and serialized response bodies, bytes (2 MiB by default)."""
        return self.core.max_body_bytes

    @property
    def limits(self) -> LimitSettings:
        """The four limits from core settings, with leases outliving the call deadline."""
        ttl = self.lease_ttl_s if self.lease_ttl_s is not None else self.core.call_deadline_s + LEASE_MARGIN_S
        return LimitSettings(
            request_limit=self.core.request_limit,
            semantic_limit=self.core.semantic_limit,
            concurrency_limit=self.core.concurrency_limit,
            global_concurrency_limit=self.core.global_concurrency_limit,
            lease_ttl_s=ttl,
        )

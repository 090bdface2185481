"""Gateway-only settings (readiness probe spacing, lease margin) on top of ``CoreSettings``.

Built once at the entry point with :meth:`GatewaySettings.from_env`; nothing below
reads ``os.environ`` (docs/style.md §7 practice 4). Listener, bounds, limits and the call
deadline live in :class:`pwc_mcp_core.runtime.core_settings.CoreSettings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from gateway.admission.limits import LimitSettings
from gateway.surfaces.sse_sessions import SseSettings
from pwc_mcp_core.errors import ConfigError
from pwc_mcp_core.runtime.core_settings import CoreSettings, env_int

__all__ = ["LEASE_MARGIN_S", "PROCESS_TIMEOUT_ENV", "REFUSAL_STATUS_ENV", "GatewaySettings"]

# A lease outlives the call deadline by this much, so only a dead gateway's leases lapse.
LEASE_MARGIN_S: Final = 10.0
PROCESS_TIMEOUT_ENV: Final = "PWC_MCP_GATEWAY_TIMEOUT"
"""Seconds a gunicorn gateway process may miss its heartbeat before the master replaces it."""
REFUSAL_STATUS_ENV: Final = "PWC_MCP_REFUSAL_STATUS"
# Its values. Not imported from the surfaces: importing them here would create the metrics
# before `--processes` sets up their multiprocess directory.
REFUSAL_STATUSES: Final = ("http", "200")


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
        process_timeout_s: gunicorn's worker ``timeout`` (whole seconds, 2-3600): a gateway
            process whose event loop misses its 1 s heartbeat this long (stalled, stopped,
            wedged) is killed and replaced by the master; ``PWC_MCP_GATEWAY_TIMEOUT``,
            default ``max(60, 2 × call deadline)``. Only used with ``--processes`` > 1.
        refusal_status: ``http`` (default: a refusal keeps its 429/503 and ``Retry-After``) or
            ``200`` (``POST /mcp`` answers a refusal that names a request id with HTTP 200 and
            the same JSON-RPC error, ``Retry-After`` kept, for MCP SDKs on ``mcp`` 1.x that
            drop the body of a non-2xx answer); ``PWC_MCP_REFUSAL_STATUS``.
    """

    core: CoreSettings
    health_ok_interval_s: float = 30.0
    health_fail_interval_s: float = 5.0
    lease_ttl_s: float | None = None
    sse: SseSettings = field(default_factory=SseSettings)
    process_timeout_s: int = 60
    refusal_status: str = "http"

    @classmethod
    def from_env(cls, environ: Mapping[str, str], *, allow_ephemeral_cursor_key: bool = False) -> GatewaySettings:
        """Read every core variable (see ``CoreSettings``), the ``PWC_MCP_SSE_*`` ones and
        ``PWC_MCP_GATEWAY_TIMEOUT``.

        Raises:
            ConfigError: a variable is invalid or the cursor key is missing; the message names it.
        """
        core = CoreSettings.from_env(environ, allow_ephemeral_cursor_key=allow_ephemeral_cursor_key)
        # Heartbeats come from the event loop, not from calls: a long call never trips it.
        default_timeout = max(60, int(core.call_deadline_s) * 2)
        refusal_status = environ.get(REFUSAL_STATUS_ENV, "").strip().lower() or "http"
        if refusal_status not in REFUSAL_STATUSES:
            raise ConfigError(f"{REFUSAL_STATUS_ENV} must be http (refusals keep their 429/503) or 200 "
                              "(refusals of a request as HTTP 200 JSON-RPC errors)")
        return cls(core=core, sse=SseSettings.from_env(environ),
                   process_timeout_s=env_int(environ, PROCESS_TIMEOUT_ENV, default_timeout, 2, 3600),
                   refusal_status=refusal_status)

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

"""Where every Redis connection of the cluster comes from: a URL, or a master found through Sentinel.

`RedisTarget` is the typed setting (``PWC_MCP_REDIS_URL``, or ``PWC_MCP_REDIS_SENTINELS`` with
``PWC_MCP_REDIS_SENTINEL_MASTER``; see `target_from_env`), and the four factories below are the
only places that build redis-py pools and clients from it: `async_pool`/`sync_pool` for the
dedicated pipelined connections (`redis_pipe`), `async_client`/`sync_client` for the plain
clients (liveness probes, heartbeats, the shared cache).

With Sentinel every connection is redis-py's ``SentinelManagedConnection``: each (re)connection
asks the sentinels for the current master (a master they report down does not count), and a
connection that meets a demoted master (``READONLY``) is dropped, so the next command goes to
the new one. Connecting is retried with redis-py's ``Retry`` and a jittered backoff for about
``SentinelTarget.failover_wait_s`` (``PWC_MCP_REDIS_FAILOVER_WAIT_S``, by default the call
deadline): while no master exists (between the old one's death and the promotion), a command
waits for the new master instead of failing at once. Nothing is ever written on
a connection whose write might have reached Redis, so no retry runs a command twice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import redis
import redis.asyncio
from redis.asyncio.retry import Retry as AsyncRetry
from redis.asyncio.sentinel import Sentinel as AsyncSentinel
from redis.backoff import EqualJitterBackoff, NoBackoff
from redis.retry import Retry
from redis.sentinel import Sentinel

from pwc_mcp_core.errors import ConfigError

__all__ = ["FAILOVER_WAIT_S", "RedisTarget", "SentinelTarget", "async_client", "async_pool",
           "reconnect_wait_s", "sync_client", "sync_pool", "target_from_env"]

_REDIS_SCHEMES: Final = ("redis://", "rediss://", "unix://")
_ADDRESS: Final = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$")
_SENTINEL_ONLY: Final = ("PWC_MCP_REDIS_USERNAME", "PWC_MCP_REDIS_PASSWORD", "PWC_MCP_REDIS_SENTINEL_USERNAME",
                         "PWC_MCP_REDIS_SENTINEL_PASSWORD", "PWC_MCP_REDIS_TLS", "PWC_MCP_REDIS_TLS_CA_FILE",
                         "PWC_MCP_REDIS_DB", "PWC_MCP_REDIS_FAILOVER_WAIT_S")

# Sentinel promotes a replica a few seconds after the master dies (down-after-milliseconds
# plus an election: 2-3 s with down-after-milliseconds 1000, longer when an election is
# retried); (re)connecting keeps asking the sentinels for about `SentinelTarget.failover_wait_s`,
# then fails (a clear, retryable error to the client). The entry points set it to the call
# deadline, so a slow election gives slow answers, not errors; this is the fallback of a
# target built without it.
FAILOVER_WAIT_S: Final = 5.0
_BACKOFF_BASE_S: Final = 0.05
_BACKOFF_CAP_S: Final = 0.5
# The sentinels answer from memory: a slow one is a dead one.
_SENTINEL_TIMEOUT_S: Final = 0.5


@dataclass(frozen=True, slots=True)
class SentinelTarget:
    """The Redis master of one Sentinel service.

    Attributes:
        sentinels: ``(host, port)`` of each sentinel, asked in order.
        service: the master's service name (``sentinel monitor <service> ...``).
        username, password: ACL user and password of the master and replicas (``None``: none).
        sentinel_username, sentinel_password: the sentinels' own (``None``: none).
        tls: TLS to the sentinels and to the master.
        tls_ca_file: CA bundle that signs their certificates (``None``: the system's).
        db: database number on the master.
        failover_wait_s: how long a (re)connection keeps looking for a master while none
            exists (``PWC_MCP_REDIS_FAILOVER_WAIT_S``; `CoreSettings` defaults it to the call deadline).
    """

    sentinels: tuple[tuple[str, int], ...]
    service: str
    username: str | None = None
    password: str | None = None
    sentinel_username: str | None = None
    sentinel_password: str | None = None
    tls: bool = False
    tls_ca_file: str | None = None
    db: int = 0
    failover_wait_s: float = FAILOVER_WAIT_S

    def __repr__(self) -> str:
        hosts = ",".join(f"{host}:{port}" for host, port in self.sentinels)
        return f"SentinelTarget({hosts} master={self.service!r} tls={self.tls} db={self.db})"


# A URL (``redis://``, ``rediss://``, ``unix://``) or a Sentinel service.
RedisTarget = str | SentinelTarget


def target_from_env(env: Mapping[str, str]) -> RedisTarget | None:
    """The configured Redis (``None``: embedded mode) from already-stripped, non-blank variables.

    * ``PWC_MCP_REDIS_URL``: a ``redis://``, ``rediss://`` or ``unix://`` URL; or
    * ``PWC_MCP_REDIS_SENTINELS`` (comma-separated ``host:port``) with
      ``PWC_MCP_REDIS_SENTINEL_MASTER`` (the service name), and optionally
      ``PWC_MCP_REDIS_USERNAME``/``PWC_MCP_REDIS_PASSWORD`` (master and replicas),
      ``PWC_MCP_REDIS_SENTINEL_USERNAME``/``PWC_MCP_REDIS_SENTINEL_PASSWORD`` (the sentinels),
      ``PWC_MCP_REDIS_TLS`` (``1``: TLS to both), ``PWC_MCP_REDIS_TLS_CA_FILE``, ``PWC_MCP_REDIS_DB``.

    Raises:
        ConfigError: both forms set, half a Sentinel form, or a malformed value (one line).
    """
    url, sentinels, service = (env.get("PWC_MCP_REDIS_URL"), env.get("PWC_MCP_REDIS_SENTINELS"),
                               env.get("PWC_MCP_REDIS_SENTINEL_MASTER"))
    if url is not None and (sentinels is not None or service is not None):
        raise ConfigError("set either PWC_MCP_REDIS_URL or PWC_MCP_REDIS_SENTINELS with "
                          "PWC_MCP_REDIS_SENTINEL_MASTER, not both")
    if sentinels is None and service is None:
        extra = [name for name in _SENTINEL_ONLY if name in env]
        if extra == ["PWC_MCP_REDIS_FAILOVER_WAIT_S"]:
            raise ConfigError("PWC_MCP_REDIS_FAILOVER_WAIT_S applies only with PWC_MCP_REDIS_SENTINELS "
                              "(with PWC_MCP_REDIS_URL nobody promotes a new master: commands fail fast)")
        if extra:
            raise ConfigError(f"{extra[0]} applies only with PWC_MCP_REDIS_SENTINELS; "
                              "with PWC_MCP_REDIS_URL put credentials and TLS in the URL (rediss://user:pass@host)")
        if url is not None and not url.startswith(_REDIS_SCHEMES):
            raise ConfigError("PWC_MCP_REDIS_URL must be a redis://, rediss:// or unix:// URL (unset = embedded mode)")
        return url
    if sentinels is None or service is None:
        raise ConfigError("PWC_MCP_REDIS_SENTINELS and PWC_MCP_REDIS_SENTINEL_MASTER must be set together")
    addresses = []
    for entry in (item.strip() for item in sentinels.split(",")):
        match = _ADDRESS.fullmatch(entry)
        if match is None or not 1 <= int(match.group(2)) <= 65535:
            raise ConfigError("PWC_MCP_REDIS_SENTINELS must be comma-separated host:port entries "
                              "such as 10.0.0.5:26379,10.0.0.6:26379")
        addresses.append((match.group(1).strip("[]"), int(match.group(2))))
    tls = env.get("PWC_MCP_REDIS_TLS", "0")
    if tls not in ("0", "1"):
        raise ConfigError("PWC_MCP_REDIS_TLS must be 1 (TLS to the sentinels and the master) or 0")
    db = env.get("PWC_MCP_REDIS_DB", "0")
    if not re.fullmatch(r"\d{1,5}", db):
        raise ConfigError("PWC_MCP_REDIS_DB must be a database number such as 0")
    return SentinelTarget(
        sentinels=tuple(addresses), service=service, username=env.get("PWC_MCP_REDIS_USERNAME"),
        password=env.get("PWC_MCP_REDIS_PASSWORD"), sentinel_username=env.get("PWC_MCP_REDIS_SENTINEL_USERNAME"),
        sentinel_password=env.get("PWC_MCP_REDIS_SENTINEL_PASSWORD"), tls=tls == "1",
        tls_ca_file=env.get("PWC_MCP_REDIS_TLS_CA_FILE"), db=int(db))


def reconnect_wait_s(target: RedisTarget) -> float:
    """How much longer than a command's own timeout a caller may wait for a (re)connection:
    ``failover_wait_s`` with Sentinel (waiting out a promotion), 0 with a URL (fail fast)."""
    return 0.0 if isinstance(target, str) else target.failover_wait_s


def _failover_backoff() -> EqualJitterBackoff:
    return EqualJitterBackoff(cap=_BACKOFF_CAP_S, base=_BACKOFF_BASE_S)


def _failover_retries(target: SentinelTarget) -> int:
    """Retries that span at least about ``failover_wait_s``: once capped, equal jitter sleeps
    between half the cap and the cap, so ``1.5 × wait / cap`` of them sleep ``0.75–1.5 × wait``
    (the callers' own deadlines end the wait sooner)."""
    return max(1, int(target.failover_wait_s / _BACKOFF_CAP_S * 1.5))


def _tls_kwargs(target: SentinelTarget) -> dict[str, object]:
    if not target.tls:
        return {}
    return {"ssl": True, "ssl_ca_certs": target.tls_ca_file} if target.tls_ca_file else {"ssl": True}


def _sentinel_kwargs(target: SentinelTarget, retry: Retry | AsyncRetry) -> dict[str, object]:
    # No retry on a sentinel: a dead one is skipped at once for the next (redis-py's default
    # client retry would spend seconds on it at every master lookup).
    return {"socket_timeout": _SENTINEL_TIMEOUT_S, "socket_connect_timeout": _SENTINEL_TIMEOUT_S, "retry": retry,
            "username": target.sentinel_username, "password": target.sentinel_password, **_tls_kwargs(target)}


def _master_kwargs(target: SentinelTarget, socket_timeout: float | None, connect_timeout: float,
                   health_check_interval: float) -> dict[str, object]:
    return {"socket_timeout": socket_timeout, "socket_connect_timeout": connect_timeout,
            "health_check_interval": health_check_interval, "username": target.username,
            "password": target.password, "db": target.db, **_tls_kwargs(target)}


def async_client(target: RedisTarget, *, socket_timeout: float | None, connect_timeout: float,
                 health_check_interval: float = 0) -> redis.asyncio.Redis:
    """An asyncio client of ``target``'s master (with Sentinel: the current master, followed).

    Commands on a lost connection are retried on a new one while the failover lasts (the
    callers use it for idempotent probes: heartbeats, liveness, group creation).
    """
    if isinstance(target, str):
        return redis.asyncio.Redis.from_url(target, socket_connect_timeout=connect_timeout,
                                            socket_timeout=socket_timeout,
                                            health_check_interval=health_check_interval)
    # redis-py's Sentinel classes are untyped: the client they return is checked by its annotation.
    sentinel = AsyncSentinel(list(target.sentinels),  # type: ignore[no-untyped-call]
                             sentinel_kwargs=_sentinel_kwargs(target, AsyncRetry(NoBackoff(), 0)))
    client: redis.asyncio.Redis = sentinel.master_for(
        target.service, retry=AsyncRetry(_failover_backoff(), _failover_retries(target)),
        **_master_kwargs(target, socket_timeout, connect_timeout, health_check_interval))  # type: ignore[arg-type]
    return client


def sync_client(target: RedisTarget, *, socket_timeout: float | None, connect_timeout: float) -> redis.Redis:
    """A synchronous client of ``target``'s master (see `async_client`)."""
    if isinstance(target, str):
        return redis.Redis.from_url(target, socket_connect_timeout=connect_timeout, socket_timeout=socket_timeout)
    sentinel = Sentinel(list(target.sentinels),  # type: ignore[no-untyped-call]
                        sentinel_kwargs=_sentinel_kwargs(target, Retry(NoBackoff(), 0)))
    client: redis.Redis = sentinel.master_for(  # type: ignore[no-untyped-call]
        target.service, retry=Retry(_failover_backoff(), _failover_retries(target)),
        **_master_kwargs(target, socket_timeout, connect_timeout, 0))
    return client


def async_pool(target: RedisTarget, *, socket_timeout: float | None,
               connect_timeout: float) -> redis.asyncio.ConnectionPool:
    """A pool whose ``make_connection()`` gives a connection to ``target``'s master.

    With Sentinel, ``connect()`` asks the sentinels and waits out a failover (about
    ``failover_wait_s``); a URL connects once, at once.
    """
    if isinstance(target, str):
        return redis.asyncio.ConnectionPool.from_url(target, socket_connect_timeout=connect_timeout,
                                                     socket_timeout=socket_timeout, health_check_interval=0)
    return async_client(target, socket_timeout=socket_timeout, connect_timeout=connect_timeout).connection_pool


def sync_pool(target: RedisTarget, *, socket_timeout: float | None, connect_timeout: float) -> redis.ConnectionPool:
    """The synchronous sibling of `async_pool`."""
    if isinstance(target, str):
        return redis.ConnectionPool.from_url(target, socket_connect_timeout=connect_timeout,
                                             socket_timeout=socket_timeout, health_check_interval=0)
    return sync_client(target, socket_timeout=socket_timeout, connect_timeout=connect_timeout).connection_pool

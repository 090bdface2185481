"""Core settings, read once from the environment at the entry points (seed README "Configuration").

Nothing below the entry points reads `os.environ`: `gateway`, `workers` and
`stdio` call `CoreSettings.from_env(os.environ)` and pass the object down.
"""

from __future__ import annotations

import argparse
import hashlib
import ipaddress
import re
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Final

from pwc.transport import MAX_BYTES
from pwc_mcp_core.cluster import redis_keys
from pwc_mcp_core.cluster.redis_connect import RedisTarget, SentinelTarget, target_from_env
from pwc_mcp_core.errors import ConfigError

__all__ = [
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_ALLOWED_ORIGINS",
    "DEFAULT_API_URL",
    "DEFAULT_CHUNK_BYTES",
    "DEFAULT_MAX_BODY_BYTES",
    "MIN_CURSOR_KEY_CHARS",
    "CoreSettings",
    "checked_hosts",
    "checked_origins",
    "cursor_key_id",
    "env_int",
    "env_number",
    "int_option",
]

DEFAULT_API_URL: Final = "https://paperswithcode.co/api/v1"
DEFAULT_ALLOWED_HOSTS: Final = ("localhost:*", "127.0.0.1:*", "[::1]:*")
DEFAULT_ALLOWED_ORIGINS: Final = ("https://chatgpt.com", "https://claude.ai")
_LOG_LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# host[:port] or host:* — a wildcard only ever stands for the port (docs/protocol.md §1.6).
# [0-9], not \d: \d admits every Unicode digit ("²", Arabic-Indic digits).
_HOST_PATTERN: Final = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::([0-9]{1,5}|\*))?$")
_ORIGIN_PATTERN: Final = re.compile(r"^https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::[0-9]{1,5})?$")
_SECRET_FIELDS: Final = frozenset({"cursor_keys", "redis_url", "redis_sentinel"})
MIN_CURSOR_KEY_CHARS: Final = 32
"""Shortest cursor key accepted (README: ``openssl rand -hex 32`` gives 64 characters)."""
DEFAULT_CHUNK_BYTES: Final = 8192
"""``read_paper``'s chunk: the least context an agent spends before it reaches a fact, each chunk
within 8k tokens even in dense tables (BENCHMARKS.md "Reading agent"); read_paper caps any setting at 64 KiB."""
DEFAULT_MAX_BODY_BYTES: Final = MAX_BYTES
"""The 2 MiB bound on request bodies, catalog responses and serialized MCP responses (seed
"Safety and operations"); ``PWC_MCP_MAX_BODY_BYTES`` overrides it. Defined once, as the CLI's
catalog response cap ``pwc.transport.MAX_BYTES``."""
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class CoreSettings:
    """Every setting of the MCP server, gateway and workers. Built with `from_env`.

    Environment variables (blank values mean "use the default"):

    * ``PWC_API_URL`` → `api_url`: the catalog API base URL
      (default ``https://paperswithcode.co/api/v1``).
    * ``PWC_MCP_HOST`` → `host`: listener address (default ``127.0.0.1``; use ``0.0.0.0`` in containers).
    * ``PORT`` → `port`: HTTP port, 1–65535 (default 7860).
    * ``PWC_MCP_ALLOWED_HOSTS`` → `allowed_hosts`: comma-separated ``Host`` allowlist of
      ``host[:port]`` or ``host:*`` entries (any port, or none); a bare ``localhost`` does not
      match ``localhost:8080``. Default ``localhost:*,127.0.0.1:*,[::1]:*``. Other requests get 421.
    * ``PWC_MCP_ALLOWED_ORIGINS`` → `allowed_origins`: comma-separated browser ``Origin``
      allowlist (``scheme://host[:port]``). Default ``https://chatgpt.com,https://claude.ai``;
      an empty value allows no browser origin; a ``*`` entry is refused. Requests without
      ``Origin`` (native clients) are always allowed.
    * ``PWC_MCP_CURSOR_KEY_CURRENT`` → ``cursor_keys[0]``: secret that signs ``read_paper``
      continuation cursors, at least `MIN_CURSOR_KEY_CHARS` (32) characters. Required
      (``pwc-mcp demo`` generates an ephemeral one).
    * ``PWC_MCP_CURSOR_KEY_PREVIOUS`` → ``cursor_keys[1]``: optional previous secret still
      accepted during key rotation; at least 32 characters too.
    * ``PWC_MCP_REQUEST_LIMIT`` → `request_limit`: requests per client per minute (default 60).
    * ``PWC_MCP_SEMANTIC_LIMIT`` → `semantic_limit`: semantic or hybrid searches per client per
      minute (default 10; a ``search_papers`` call without ``mode`` is hybrid).
    * ``PWC_MCP_CONCURRENCY_LIMIT`` → `concurrency_limit`: concurrent requests per client (default 4).
    * ``PWC_MCP_GLOBAL_CONCURRENCY_LIMIT`` → `global_concurrency_limit`: concurrent requests
      across all clients (default 128); also sizes the tool thread pool.
      The four limits are integers 1–10000.
    * ``PWC_MCP_TRUSTED_PROXY_CIDRS`` → `trusted_proxy_cidrs`: comma-separated networks of a
      non-loopback reverse proxy whose right-most untrusted ``X-Forwarded-For`` hop is trusted
      (empty by default).
    * ``LOG_LEVEL`` → `log_level`: DEBUG, INFO, WARNING, ERROR or CRITICAL (default INFO).
      Logs are content-free at every level.
    * ``PWC_MCP_REDIS_URL`` → `redis_url`: ``redis://``, ``rediss://`` or ``unix://`` URL of the
      shared Redis; unset runs everything embedded in one process (in-memory queue, cache, limits).
    * ``PWC_MCP_REDIS_SENTINELS`` (comma-separated ``host:port``) with ``PWC_MCP_REDIS_SENTINEL_MASTER``
      (the service name) → `redis_sentinel`: instead of the URL, the master that Redis Sentinel
      reports, followed through failovers. Optional with them: ``PWC_MCP_REDIS_USERNAME``,
      ``PWC_MCP_REDIS_PASSWORD`` (master and replicas), ``PWC_MCP_REDIS_SENTINEL_USERNAME``,
      ``PWC_MCP_REDIS_SENTINEL_PASSWORD``, ``PWC_MCP_REDIS_TLS`` (``1``), ``PWC_MCP_REDIS_TLS_CA_FILE``,
      ``PWC_MCP_REDIS_DB`` (`pwc_mcp_core.cluster.redis_connect.target_from_env`). Setting both
      forms is a configuration error.
    * ``PWC_MCP_REDIS_FAILOVER_WAIT_S`` (Sentinel only) → ``redis_sentinel.failover_wait_s``: how
      long a command waits for a new master while none exists (an election), 1–900 seconds
      (default the call deadline, so a slow election gives slow answers, not errors).
    * ``PWC_MCP_REDIS_NAMESPACE`` → `redis_namespace`: the deployment's namespace in Redis, 1–64 of
      ``A-Z a-z 0-9 _ . -``; every key carries it, so deployments on one Redis database never
      serve each other. Default: 12 hex digits derived from ``PWC_API_URL`` and the current cursor
      key's id (`pwc_mcp_core.cluster.redis_keys.derived_namespace`), so processes that would
      answer alike share one namespace and any two that would not are apart.
    * ``PWC_MCP_WORKER_THREADS`` → `worker_threads`: tool threads, 1–10000. The embedded
      executor (no Redis) and stdio default to ``max(40, global_concurrency_limit)``; a Redis
      worker process defaults to 32 (``workers.settings.DEFAULT_THREADS``).
    * ``PWC_MCP_CATALOG_TIMEOUT`` → `catalog_timeout_s`: seconds per catalog request, 1–600 (default 25).
    * ``PWC_MCP_CALL_DEADLINE`` → `call_deadline_s`: seconds a tool call may take end to end,
      1–900 (default catalog timeout + 5).
    * ``PWC_MCP_MAX_BODY_BYTES`` → `max_body_bytes`: bound on request bodies, upstream
      responses and serialized MCP responses, 1024–67108864 (default 2 MiB = 2097152).
    * ``PWC_MCP_CHUNK_BYTES`` → `chunk_bytes`: ``read_paper`` chunk size, 1024–1048576
      (default 8192, `DEFAULT_CHUNK_BYTES`; ``read_paper`` reads at most 65536 per call whatever the setting).

    ``repr`` never shows the cursor keys or the Redis URL (it may hold a password).
    """

    @property
    def redis(self) -> RedisTarget | None:
        """The shared Redis (a URL or a Sentinel service); ``None`` in embedded mode."""
        return self.redis_sentinel if self.redis_sentinel is not None else self.redis_url

    api_url: str = DEFAULT_API_URL
    host: str = "127.0.0.1"
    port: int = 7860
    allowed_hosts: tuple[str, ...] = DEFAULT_ALLOWED_HOSTS
    allowed_origins: tuple[str, ...] = DEFAULT_ALLOWED_ORIGINS
    cursor_keys: tuple[str, ...] = ()
    cursor_key_ephemeral: bool = False
    request_limit: int = 60
    semantic_limit: int = 10
    concurrency_limit: int = 4
    global_concurrency_limit: int = 128
    trusted_proxy_cidrs: tuple[Network, ...] = ()
    log_level: str = "INFO"
    redis_url: str | None = None
    redis_sentinel: SentinelTarget | None = None
    worker_threads: int = 128
    catalog_timeout_s: float = 25.0
    call_deadline_s: float = 30.0
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    chunk_bytes: int = DEFAULT_CHUNK_BYTES
    redis_namespace: str = redis_keys.DEFAULT_NAMESPACE

    def __repr__(self) -> str:
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "cursor_keys":
                parts.append(f"cursor_keys=<{len(value)} redacted>")
            elif f.name in _SECRET_FIELDS and value is not None:
                parts.append(f"{f.name}=<redacted>")
            else:
                parts.append(f"{f.name}={value!r}")
        return f"CoreSettings({', '.join(parts)})"

    @classmethod
    def from_env(cls, environ: Mapping[str, str], *, allow_ephemeral_cursor_key: bool = False) -> CoreSettings:
        """Build the settings from environment variables (see the class docstring).

        Args:
            environ: usually ``os.environ``; only the variables above are read.
            allow_ephemeral_cursor_key: generate a random cursor key when
                ``PWC_MCP_CURSOR_KEY_CURRENT`` is unset (``pwc-mcp demo``, ``pwc-mcp stdio``);
                cursors then die with the process.

        Raises:
            ConfigError: a value is invalid; the message names the variable and what it accepts.
        """
        env = {k: v.strip() for k, v in environ.items() if v.strip()}
        current = env.get("PWC_MCP_CURSOR_KEY_CURRENT")
        ephemeral = False
        if current is None:
            if not allow_ephemeral_cursor_key:
                raise ConfigError("PWC_MCP_CURSOR_KEY_CURRENT is required: set it to a long random secret "
                                  "(for example the output of `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)")
            current, ephemeral = secrets.token_urlsafe(32), True
        keys = (current,) + ((env["PWC_MCP_CURSOR_KEY_PREVIOUS"],) if "PWC_MCP_CURSOR_KEY_PREVIOUS" in env else ())
        for name, key in zip(("PWC_MCP_CURSOR_KEY_CURRENT", "PWC_MCP_CURSOR_KEY_PREVIOUS"), keys, strict=False):
            if len(key) < MIN_CURSOR_KEY_CHARS:  # never the key itself in the message: it is a secret
                raise ConfigError(f"{name} is too short: use at least {MIN_CURSOR_KEY_CHARS} random characters, "
                                  "for example the output of `openssl rand -hex 32`")
        global_limit = env_int(env, "PWC_MCP_GLOBAL_CONCURRENCY_LIMIT", 128, 1, 10000)
        catalog_timeout = env_number(env, "PWC_MCP_CATALOG_TIMEOUT", 25.0, 1, 600)
        call_deadline = env_number(env, "PWC_MCP_CALL_DEADLINE", catalog_timeout + 5, 1, 900)
        redis_target = target_from_env(env)
        if isinstance(redis_target, SentinelTarget):
            redis_target = replace(redis_target, failover_wait_s=env_number(
                env, "PWC_MCP_REDIS_FAILOVER_WAIT_S", call_deadline, 1, 900))
        return cls(
            api_url=_api_url(env.get("PWC_API_URL", DEFAULT_API_URL)),
            host=env.get("PWC_MCP_HOST", "127.0.0.1"),
            port=env_int(env, "PORT", 7860, 1, 65535),
            allowed_hosts=_hosts(environ.get("PWC_MCP_ALLOWED_HOSTS")),
            allowed_origins=_origins(environ.get("PWC_MCP_ALLOWED_ORIGINS")),
            cursor_keys=keys,
            cursor_key_ephemeral=ephemeral,
            request_limit=env_int(env, "PWC_MCP_REQUEST_LIMIT", 60, 1, 10000),
            semantic_limit=env_int(env, "PWC_MCP_SEMANTIC_LIMIT", 10, 1, 10000),
            concurrency_limit=env_int(env, "PWC_MCP_CONCURRENCY_LIMIT", 4, 1, 10000),
            global_concurrency_limit=global_limit,
            trusted_proxy_cidrs=_cidrs(env.get("PWC_MCP_TRUSTED_PROXY_CIDRS", "")),
            log_level=_log_level(env.get("LOG_LEVEL", "INFO")),
            redis_url=redis_target if isinstance(redis_target, str) else None,
            redis_sentinel=redis_target if isinstance(redis_target, SentinelTarget) else None,
            worker_threads=env_int(env, "PWC_MCP_WORKER_THREADS", max(40, global_limit), 1, 10000),
            catalog_timeout_s=catalog_timeout,
            call_deadline_s=call_deadline,
            max_body_bytes=env_int(env, "PWC_MCP_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES, 1024, 64 * 1024 * 1024),
            chunk_bytes=env_int(env, "PWC_MCP_CHUNK_BYTES", DEFAULT_CHUNK_BYTES, 1024, 1024 * 1024),
            redis_namespace=_namespace(env.get("PWC_MCP_REDIS_NAMESPACE"), _api_url(env.get("PWC_API_URL", DEFAULT_API_URL)),
                                       current),
        )


def env_int(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    """The integer variable ``name`` in ``[low, high]``; unset or blank → ``default``.

    The one parser of integer environment variables (the workers' use it too).

    Raises:
        ConfigError: ``<name> must be an integer between <low> and <high>``.
    """
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not re.fullmatch(r"\d+", raw) or not low <= int(raw) <= high:
        raise ConfigError(f"{name} must be an integer between {low} and {high}")
    return int(raw)


def int_option(flag: str, low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type`` for an integer option in ``[low, high]``, judged by `env_int`'s rule:
    anything else is ``<flag> must be an integer between <low> and <high>``."""

    def parse(text: str) -> int:
        try:
            if text.strip():  # env_int reads a blank value as "unset"; an option given blank is wrong
                return env_int({flag: text}, flag, low, low, high)
        except ConfigError:
            pass
        raise argparse.ArgumentTypeError(f"{flag} must be an integer between {low} and {high}")

    parse.__name__ = "int"
    return parse


def env_number(env: Mapping[str, str], name: str, default: float, low: float, high: float) -> float:
    """The number of seconds ``name`` in ``[low, high]``; unset or blank → ``default``.

    Raises:
        ConfigError: ``<name> must be a number of seconds between <low> and <high>`` (NaN too).
    """
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:  # also rejects nan
        raise ConfigError(f"{name} must be a number of seconds between {low:g} and {high:g}")
    return value


def _split(raw: str) -> list[str]:
    return [item.strip() for item in raw.split(",") if item.strip()]


def _api_url(raw: str) -> str:
    if not re.fullmatch(r"https?://[^\s/]+(/\S*)?", raw):
        raise ConfigError("PWC_API_URL must be an http:// or https:// URL such as https://paperswithcode.co/api/v1")
    return raw.rstrip("/")


def _hosts(raw: str | None) -> tuple[str, ...]:
    if raw is None or not raw.strip():
        return DEFAULT_ALLOWED_HOSTS
    return checked_hosts(_split(raw))


def _origins(raw: str | None) -> tuple[str, ...]:
    if raw is None:
        return DEFAULT_ALLOWED_ORIGINS
    return checked_origins(_split(raw))  # an explicitly empty value means: no browser origin is allowed


def checked_hosts(entries: Iterable[str]) -> tuple[str, ...]:
    """The Host allowlist, trimmed, empties dropped, each entry checked (the one validation of it).

    Raises:
        ConfigError: an entry is not ``host``, ``host:port`` or ``host:*`` (a wildcard only
            stands for the port), or its port is outside 1–65535.
    """
    checked = tuple(entry.strip() for entry in entries if entry.strip())
    for entry in checked:
        match = _HOST_PATTERN.fullmatch(entry)
        if match is None or (match.group(2) not in (None, "*") and not 1 <= int(match.group(2)) <= 65535):
            raise ConfigError("PWC_MCP_ALLOWED_HOSTS entries must be host, host:port or host:* "
                              "(a wildcard only stands for the port)")
    return checked


def checked_origins(entries: Iterable[str]) -> tuple[str, ...]:
    """The Origin allowlist, trimmed, empties dropped, each entry checked (the one validation of it).

    Raises:
        ConfigError: an entry holds a wildcard, or is not ``scheme://host[:port]``.
    """
    checked = tuple(entry.strip() for entry in entries if entry.strip())
    for entry in checked:
        if "*" in entry:
            raise ConfigError("PWC_MCP_ALLOWED_ORIGINS must not contain a wildcard")
        if not _ORIGIN_PATTERN.fullmatch(entry):
            raise ConfigError("PWC_MCP_ALLOWED_ORIGINS entries must be origins like https://example.com "
                              "(scheme, host and optional port; no path)")
    return checked


def _cidrs(raw: str) -> tuple[Network, ...]:
    networks = []
    for entry in _split(raw):
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ConfigError("PWC_MCP_TRUSTED_PROXY_CIDRS must be comma-separated networks "
                              "such as 10.0.0.0/8,fd00::/8") from None
    return tuple(networks)


def cursor_key_id(secret: str | bytes) -> str:
    """The id of a cursor key (``kid`` in the cursors it signs, `pwc_mcp_core.tools.cursors`): a
    hash prefix, never the secret."""
    raw = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    return hashlib.sha256(raw).hexdigest()[:16]


def _namespace(raw: str | None, api_url: str, cursor_key: str) -> str:
    if raw is None:
        return redis_keys.derived_namespace(api_url, cursor_key_id(cursor_key))
    if not redis_keys.valid_namespace(raw):
        raise ConfigError("PWC_MCP_REDIS_NAMESPACE must be 1-64 characters of A-Z a-z 0-9 _ . - "
                          "(unset: derived from PWC_API_URL and the cursor key)")
    return raw


def _log_level(raw: str) -> str:
    level = raw.upper()
    if level not in _LOG_LEVELS:
        raise ConfigError(f"LOG_LEVEL must be one of {', '.join(_LOG_LEVELS)}")
    return level


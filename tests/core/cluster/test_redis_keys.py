"""Key namespaces and the Redis Cluster layout (issue 33 item 19).

Every key carries the deployment's namespace; the keys each multi-key script or pipeline
touches share one hash tag (one Redis Cluster slot), while cache entries spread over slots.
Slots are computed with redis-py's own CRC16 (``redis.crc.key_slot``), the function Redis
Cluster clients route by; ``tests/integration/test_redis_cluster_layout.py`` runs the real
processes against a cluster-mode redis-server, which refuses any cross-slot script.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from redis.crc import key_slot

from pwc_mcp_core.cluster import redis_keys as keys
from pwc_mcp_core.errors import ConfigError
from pwc_mcp_core.runtime.core_settings import CoreSettings, cursor_key_id
from pwc_mcp_core.tools.cursors import CursorCodec

KEY_A, KEY_B = "a" * 32, "b" * 32


@pytest.fixture
def namespaced() -> Iterator[Callable[[str], None]]:
    """``use(name)`` for this test; the process's namespace is restored afterwards."""
    before = keys.namespace()
    yield keys.use_namespace
    keys.use_namespace(before)


def _settings(**env: str) -> CoreSettings:
    return CoreSettings.from_env({"PWC_MCP_CURSOR_KEY_CURRENT": KEY_A, **env})


def test_every_key_carries_the_namespace_control_keys_as_one_hash_tag(namespaced: Callable[[str], None]) -> None:
    namespaced("staging")
    control = [keys.calls_stream(), keys.reply_list("g1"), keys.workers_set(), keys.worker_threads(),
               keys.rate_window("requests", "h"), keys.concurrency_client("h"), keys.concurrency_global(),
               keys.sse_session("s"), keys.sse_client_sessions("h"), keys.sse_sessions_global(),
               keys.sse_holder("p"), keys.sse_inbox("p")]
    assert all(key.startswith("pwcmcp:v1:{staging}:") for key in control), control
    assert keys.cache_entry("d") == "pwcmcp:v1:staging:cache:d"
    assert keys.cache_lock("d") == "pwcmcp:v1:staging:cache-lock:d"
    namespaced("production")
    assert keys.calls_stream() == "pwcmcp:v1:{production}:calls:r2"


def test_the_keys_of_each_multi_key_script_and_pipeline_hash_to_one_slot(namespaced: Callable[[str], None]) -> None:
    for name in ("default", "a1b2c3d4e5f6", "staging"):
        namespaced(name)
        touched_together = {
            # admit.lua / admit_enqueue.lua (admission.lua): windows, leases, then the Stream
            "admit_enqueue": [keys.rate_window("requests", "c1"), keys.rate_window("semantic", "c1"),
                              keys.concurrency_client("c1"), keys.concurrency_global(), keys.calls_stream()],
            "release": [keys.concurrency_client("c2"), keys.concurrency_global()],
            "heartbeat, live_workers, forget_worker": [keys.workers_set(), keys.worker_threads()],
            # a worker's reply round trip: the gateway's list, the lease, the acknowledgement
            "reply_commands": [keys.reply_list("g"), keys.concurrency_client("c3"), keys.concurrency_global(),
                               keys.calls_stream()],
            "sse_open": [keys.sse_client_sessions("c4"), keys.sse_sessions_global(), keys.sse_session("s1")],
            "sse_renew": [keys.sse_sessions_global(), keys.sse_client_sessions("c4"), keys.sse_session("s1"),
                          keys.sse_client_sessions("c5"), keys.sse_session("s2")],
            "sse message": [keys.sse_session("s1"), keys.sse_holder("p"), keys.sse_inbox("p")],
        }
        for script, touched in touched_together.items():
            assert len({key_slot(key.encode()) for key in touched}) == 1, (name, script, touched)


def test_cache_entries_spread_over_slots_unlike_the_control_plane() -> None:
    slots = {key_slot(keys.cache_entry(f"{n:064x}").encode()) for n in range(64)}
    assert len(slots) > 32  # no hash tag: a cluster spreads the cache over its nodes


def test_the_default_namespace_is_derived_from_the_catalog_and_the_cursor_key() -> None:
    base = _settings(PWC_API_URL="https://catalog.example/api/v1")
    assert base.redis_namespace == _settings(PWC_API_URL="https://catalog.example/api/v1").redis_namespace
    assert keys.valid_namespace(base.redis_namespace) and len(base.redis_namespace) == 12
    assert base.redis_namespace != _settings(PWC_API_URL="https://staging.example/api/v1").redis_namespace
    rotated = CoreSettings.from_env({"PWC_MCP_CURSOR_KEY_CURRENT": KEY_B, "PWC_API_URL": "https://catalog.example/api/v1"})
    assert base.redis_namespace != rotated.redis_namespace
    assert _settings(PWC_MCP_REDIS_NAMESPACE="prod-eu.1").redis_namespace == "prod-eu.1"
    assert KEY_A not in repr(base) and cursor_key_id(KEY_A) not in base.redis_namespace


def test_the_cursor_key_id_is_the_kid_cursors_carry() -> None:
    kid, _secret = CursorCodec._key(KEY_A)
    assert cursor_key_id(KEY_A) == kid


@pytest.mark.parametrize("bad", ["{prod}", "a:b", "x" * 65, "with space", "naïve"])
def test_a_bad_namespace_is_one_clear_line(bad: str, namespaced: Callable[[str], None]) -> None:
    with pytest.raises(ConfigError, match="PWC_MCP_REDIS_NAMESPACE must be") as raised:
        _settings(PWC_MCP_REDIS_NAMESPACE=bad)
    assert "\n" not in str(raised.value)
    with pytest.raises(ValueError):
        namespaced(bad)

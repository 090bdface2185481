"""MemoryCache, RedisCache and ChunkCache (docs/tool-contract.md §4.5, §8; issue 5 shared cache)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis

from pwc_mcp_core.cluster import redis_keys
from pwc_mcp_core.cluster.cache import RedisCache
from pwc_mcp_core.runtime.caches import Chunk, ChunkCache, MemoryCache, TieredCache

REPO_ROOT = Path(__file__).resolve().parents[3]


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Loader:
    """Counts calls and returns a fixed value (or raises)."""

    def __init__(self, value: bytes = b"v", error: Exception | None = None) -> None:
        self.calls = 0
        self.value = value
        self.error = error

    def __call__(self) -> bytes:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return self.value


def wait_until(predicate, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.005)


# --- MemoryCache -------------------------------------------------------------------------

def test_memory_cache_serves_a_hit_without_calling_the_loader() -> None:
    cache, loader = MemoryCache(), Loader(b"body")
    assert cache.fetch("k", 60, loader) == b"body"
    assert cache.fetch("k", 60, loader) == b"body"
    assert loader.calls == 1


def test_memory_cache_entries_expire_after_their_ttl() -> None:
    clock = FakeClock()
    cache, loader = MemoryCache(clock=clock), Loader()
    cache.fetch("k", 60, loader)
    clock.now += 59.9
    cache.fetch("k", 60, loader)
    assert loader.calls == 1
    clock.now += 0.2
    cache.fetch("k", 60, loader)
    assert loader.calls == 2


def test_memory_cache_evicts_the_least_recently_used_entry_beyond_max_entries() -> None:
    cache = MemoryCache(max_entries=2)
    a, b, c = Loader(b"a"), Loader(b"b"), Loader(b"c")
    cache.fetch("a", 60, a)
    cache.fetch("b", 60, b)
    cache.fetch("a", 60, a)  # a is now the most recent
    cache.fetch("c", 60, c)  # evicts b
    cache.fetch("a", 60, a)
    cache.fetch("b", 60, b)
    assert (a.calls, b.calls, c.calls) == (1, 2, 1)
    assert len(cache) == 2


def test_memory_cache_stays_within_its_byte_bound_and_skips_oversized_values() -> None:
    cache = MemoryCache(max_bytes=10)
    cache.fetch("a", 60, Loader(b"x" * 6))
    cache.fetch("b", 60, Loader(b"y" * 6))
    assert cache.total_bytes == 6 and len(cache) == 1
    big = Loader(b"z" * 11)
    assert cache.fetch("big", 60, big) == b"z" * 11
    cache.fetch("big", 60, big)
    assert big.calls == 2 and cache.total_bytes == 6


def test_memory_cache_never_stores_loader_errors() -> None:
    cache, failing = MemoryCache(), Loader(error=RuntimeError("boom"))
    for _ in range(2):
        with pytest.raises(RuntimeError):
            cache.fetch("k", 60, failing)
    assert failing.calls == 2
    assert cache.fetch("k", 60, Loader(b"ok")) == b"ok"


def test_memory_cache_makes_one_loader_call_for_concurrent_threads() -> None:
    cache = MemoryCache()
    entered = []
    calls = []
    lock = threading.Lock()

    def loader() -> bytes:
        calls.append(1)
        wait_until(lambda: len(entered) == 8)
        return b"shared"

    results: list[bytes] = []

    def worker() -> None:
        with lock:
            entered.append(1)
        results.append(cache.fetch("k", 60, loader))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert results == [b"shared"] * 8
    assert len(calls) == 1


def test_memory_cache_waiter_loads_itself_when_the_leader_is_stuck() -> None:
    cache = MemoryCache(wait_s=0.05)
    started, release = threading.Event(), threading.Event()

    def stuck() -> bytes:
        started.set()
        release.wait(10)
        return b"late"

    leader = threading.Thread(target=cache.fetch, args=("k", 60, stuck))
    leader.start()
    try:
        assert started.wait(10)
        assert cache.fetch("k", 60, Loader(b"direct")) == b"direct"
    finally:
        release.set()
        leader.join(timeout=10)


# --- ChunkCache --------------------------------------------------------------------------

def test_chunk_cache_is_keyed_by_paper_version_offset_and_limit() -> None:
    cache = ChunkCache()
    chunk = Chunk("abc", True, 3)
    cache.put("1706.03762", "a" * 64, 0, 3, chunk)
    assert cache.get("1706.03762", "a" * 64, 0, 3) == chunk
    assert cache.get("1706.03762", "b" * 64, 0, 3) is None
    assert cache.get("1706.03762", "a" * 64, 0, 4) is None


def test_chunk_cache_bounds_entries_bytes_and_ttl() -> None:
    clock = FakeClock()
    cache = ChunkCache(max_entries=256, max_bytes=16 * 1024 * 1024, clock=clock)
    for offset in range(300):
        cache.put("p", "v" * 64, offset, 1, Chunk("x", True, offset + 1))
    assert len(cache) == 256
    assert cache.get("p", "v" * 64, 0, 1) is None and cache.get("p", "v" * 64, 299, 1) is not None
    cache.put("p", "v" * 64, 1000, 1, Chunk("é" * (9 * 1024 * 1024), True, 1))  # 18 MiB: never stored
    assert cache.get("p", "v" * 64, 1000, 1) is None
    cache.put("q", "v" * 64, 0, 1, Chunk("é" * (4 * 1024 * 1024), True, 1))  # 8 MiB
    cache.put("q", "v" * 64, 1, 1, Chunk("é" * (4 * 1024 * 1024), True, 1))
    assert cache.total_bytes <= 16 * 1024 * 1024
    clock.now += 3601
    assert cache.get("p", "v" * 64, 299, 1) is None


# --- RedisCache --------------------------------------------------------------------------

def test_redis_cache_stores_a_miss_with_its_ttl_and_serves_hits(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    cache, loader = RedisCache(client), Loader(b"payload")
    assert cache.fetch("GET:abc", 60, loader) == b"payload"
    assert cache.fetch("GET:abc", 60, loader) == b"payload"
    assert loader.calls == 1
    entries = client.keys(redis_keys.cache_entry("*"))
    assert len(entries) == 1
    assert 0 < client.pttl(entries[0]) <= 60_000
    assert client.keys(redis_keys.cache_lock("*")) == []


def test_redis_cache_never_stores_loader_errors_and_releases_the_lock(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    cache, failing = RedisCache(client), Loader(error=ValueError("upstream"))
    with pytest.raises(ValueError):
        cache.fetch("k", 60, failing)
    assert client.keys(redis_keys.cache_lock("*")) == [] and client.keys(redis_keys.cache_entry("*")) == []
    with pytest.raises(ValueError):
        cache.fetch("k", 60, failing)
    assert failing.calls == 2


class _LeaderFinishesBeforeOurLock(redis.Redis):
    """A real client whose lock ``SET NX`` lands just after another leader stored the entry
    and unlocked: the interleaving that made a waiter load a second time (issue 14 item 5)."""

    entry = ""

    def set(self, name, value, *args, **kwargs):  # redis-py's signature
        if kwargs.get("nx"):
            super().set(self.entry, b"from-the-leader", px=60_000)
        return super().set(name, value, *args, **kwargs)


def test_redis_cache_reads_the_entry_again_after_winning_the_lock(redis_url: str) -> None:
    client = _LeaderFinishesBeforeOurLock.from_url(redis_url)
    assert isinstance(client, _LeaderFinishesBeforeOurLock)
    client.entry = redis_keys.cache_entry(RedisCache._digest("k"))
    loader = Loader(b"second-load")
    assert RedisCache(client).fetch("k", 60, loader) == b"from-the-leader"
    assert loader.calls == 0
    assert client.keys(redis_keys.cache_lock("*")) == []


def test_redis_cache_waiter_loads_itself_when_the_lock_holder_never_finishes(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    cache = RedisCache(client, wait_s=0.2)
    digest_key = redis_keys.cache_lock(RedisCache._digest("k"))
    client.set(digest_key, "someone-else", px=30_000)
    loader = Loader(b"direct")
    assert cache.fetch("k", 60, loader) == b"direct"
    assert loader.calls == 1


_PROCESS_SCRIPT = """
import sys, time, redis
from pwc_mcp_core.cluster.cache import RedisCache
url = sys.argv[1]
client = redis.Redis.from_url(url)
def loader():
    client.incr("test:loader-calls")
    deadline = time.monotonic() + 20
    while int(client.get("test:entered") or 0) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    return b"one-answer"
client.incr("test:entered")
sys.stdout.write(RedisCache(client).fetch("GET:shared", 60, loader).decode())
"""


def test_redis_cache_is_single_flight_across_three_processes(redis_url: str) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", _PROCESS_SCRIPT, redis_url], cwd=REPO_ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
        outputs.append(out.decode())
    client = redis.Redis.from_url(redis_url)
    assert outputs == ["one-answer"] * 3
    assert int(client.get("test:loader-calls")) == 1


_DYING_LEADER = """
import sys, time, redis
from pwc_mcp_core.cluster.cache import RedisCache
client = redis.Redis.from_url(sys.argv[1])
def loader():
    print("leading", flush=True)
    time.sleep(60)
    return b"never"
RedisCache(client, lock_ttl_s=0.5, renew_s=0.1).fetch("GET:held", 60, loader)
"""


def test_a_live_leader_keeps_its_short_lock_and_a_killed_one_frees_it_for_the_next_caller(redis_url: str) -> None:
    """A worker killed mid-load must not make the call, delivered again, wait the loader's timeout."""
    client = redis.Redis.from_url(redis_url)
    lock = redis_keys.cache_lock(RedisCache._digest("GET:held"))
    leader = subprocess.Popen([sys.executable, "-c", _DYING_LEADER, redis_url], cwd=REPO_ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert leader.stdout is not None and leader.stdout.readline().strip() == "leading"
        time.sleep(1.5)  # three lock TTLs: only renewals keep the lock
        assert client.get(lock) is not None
        assert 0 < client.pttl(lock) <= 500
    finally:
        leader.kill()
        leader.wait(timeout=10)
    started = time.monotonic()
    loader = Loader(b"reloaded")
    assert RedisCache(client, wait_s=30).fetch("GET:held", 60, loader) == b"reloaded"
    assert loader.calls == 1
    assert time.monotonic() - started < 10  # the dead leader's lock expired; no 30 s wait


def test_redis_cache_degrades_to_direct_loads_while_redis_is_down(redis_server, redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url, socket_connect_timeout=1, socket_timeout=1)
    cache = RedisCache(client)
    loader = Loader(b"fresh")
    redis_server.stop()
    try:
        assert cache.fetch("k", 60, loader) == b"fresh"
        assert cache.fetch("k", 60, loader) == b"fresh"
        assert loader.calls == 2
    finally:
        redis_server.start()
    assert cache.fetch("k", 60, loader) == b"fresh"
    assert cache.fetch("k", 60, loader) == b"fresh"
    assert loader.calls == 3


def test_a_tiered_cache_answers_hot_keys_from_memory_and_keeps_the_shared_ttl() -> None:
    class CountingFar:
        def __init__(self) -> None:
            self.calls: list[tuple[str, float]] = []
            self.values: dict[str, bytes] = {}

        def fetch(self, key: str, ttl_s: float, loader):
            self.calls.append((key, ttl_s))
            if key not in self.values:
                self.values[key] = loader()
            return self.values[key]

    now = [0.0]
    far = CountingFar()
    tiered = TieredCache(MemoryCache(clock=lambda: now[0]), far, near_ttl_s=5.0)
    loads: list[int] = []
    loader = lambda: loads.append(1) or b"v"  # noqa: E731
    assert tiered.fetch("k", 300.0, loader) == b"v"
    assert tiered.fetch("k", 300.0, loader) == b"v"
    assert far.calls == [("k", 300.0)]  # the second fetch never left the process
    now[0] = 6.0  # past the near TTL: the shared cache is asked again, with its own TTL
    assert tiered.fetch("k", 300.0, loader) == b"v"
    assert far.calls == [("k", 300.0), ("k", 300.0)]
    assert loads == [1]

"""The limiter semantics, shared by ``MemoryLimiter`` and ``RedisLimiter`` (real redis-server)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import pytest
import redis

from gateway.admission.limits import (
    Limiter,
    LimitSettings,
    LimitsUnavailable,
    MemoryLimiter,
)
from pwc_mcp_core.cluster import redis_keys
from pwc_mcp_core.cluster.limits import RedisLimiter

Factory = Callable[[LimitSettings], Limiter]


@pytest.fixture(params=["memory", "redis"])
async def make_limiter(request: pytest.FixtureRequest) -> AsyncIterator[Factory]:
    created: list[Limiter] = []

    def make(limits: LimitSettings) -> Limiter:
        if request.param == "memory":
            limiter: Limiter = MemoryLimiter(limits)
        else:
            limiter = RedisLimiter(request.getfixturevalue("redis_url"), limits)
        created.append(limiter)
        return limiter

    yield make
    for limiter in created:
        await limiter.close()


async def test_requests_per_window_are_counted_exactly(make_limiter: Factory) -> None:
    limiter = make_limiter(LimitSettings(request_limit=3))
    decisions = [await limiter.acquire("c1", semantic=False) for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert decisions[3].kind == "requests"
    assert 1 <= decisions[3].retry_after_s <= 60
    assert (await limiter.acquire("c2", semantic=False)).allowed  # other clients unaffected


async def test_semantic_searches_have_their_own_smaller_budget(make_limiter: Factory) -> None:
    limiter = make_limiter(LimitSettings(request_limit=10, semantic_limit=2))
    assert (await limiter.acquire("c", semantic=True)).allowed
    assert (await limiter.acquire("c", semantic=True)).allowed
    refused = await limiter.acquire("c", semantic=True)
    assert (refused.allowed, refused.kind) == (False, "semantic")
    assert (await limiter.acquire("c", semantic=False)).allowed  # keyword searches still pass


async def test_rejected_requests_are_not_recorded(make_limiter: Factory) -> None:
    limiter = make_limiter(LimitSettings(request_limit=3, semantic_limit=1))
    assert (await limiter.acquire("c", semantic=True)).allowed
    for _ in range(5):
        assert not (await limiter.acquire("c", semantic=True)).allowed
    # the five refusals did not use the request budget: two more plain requests pass
    assert (await limiter.acquire("c", semantic=False)).allowed
    assert (await limiter.acquire("c", semantic=False)).allowed
    assert not (await limiter.acquire("c", semantic=False)).allowed


async def test_per_client_concurrency_is_held_until_release(make_limiter: Factory) -> None:
    limiter = make_limiter(LimitSettings(concurrency_limit=2))
    first = await limiter.acquire("c", semantic=False)
    second = await limiter.acquire("c", semantic=False)
    refused = await limiter.acquire("c", semantic=False)
    assert (refused.allowed, refused.kind, refused.retry_after_s) == (False, "concurrency", 1)
    assert (await limiter.acquire("other", semantic=False)).allowed
    await limiter.release(first.lease)
    assert (await limiter.acquire("c", semantic=False)).allowed
    await limiter.release(second.lease)


async def test_global_concurrency_refuses_everyone_as_saturated(make_limiter: Factory) -> None:
    limiter = make_limiter(LimitSettings(global_concurrency_limit=2))
    leases = [(await limiter.acquire(name, semantic=False)).lease for name in ("a", "b")]
    refused = await limiter.acquire("c", semantic=False)
    assert (refused.allowed, refused.kind, refused.retry_after_s) == (False, "global", 1)
    await limiter.release(leases[0])
    assert (await limiter.acquire("c", semantic=False)).allowed


async def test_release_is_idempotent(make_limiter: Factory) -> None:
    limiter = make_limiter(LimitSettings(concurrency_limit=1))
    lease = (await limiter.acquire("c", semantic=False)).lease
    await limiter.release(lease)
    await limiter.release(lease)
    assert (await limiter.acquire("c", semantic=False)).allowed


async def test_leases_of_a_dead_gateway_expire(make_limiter: Factory) -> None:
    limits = LimitSettings(concurrency_limit=1, global_concurrency_limit=1, lease_ttl_s=0.3)
    dead = make_limiter(limits)
    assert (await dead.acquire("c", semantic=False)).allowed  # never released: the gateway "dies"
    survivor = make_limiter(limits) if isinstance(dead, RedisLimiter) else dead
    assert not (await survivor.acquire("c", semantic=False)).allowed
    deadline = time.monotonic() + 5
    while not (decision := await survivor.acquire("c", semantic=False)).allowed:
        assert time.monotonic() < deadline, "lease never expired"
        await asyncio.sleep(0.05)
    assert decision.lease is not None


async def test_stale_entries_are_purged_once_a_set_reaches_its_limit(redis_url: str) -> None:
    """``admission.lua`` counts a set's size first and purges stale entries (requests older
    than the window, expired leases) only when that size reaches the limit: the decisions
    are exact and no set grows past its limit."""
    limiter = RedisLimiter(redis_url, LimitSettings(request_limit=3, concurrency_limit=2,
                                                    global_concurrency_limit=100, lease_ttl_s=30))
    client = redis.Redis.from_url(redis_url)
    window, leases = redis_keys.rate_window("requests", "stale"), redis_keys.concurrency_client("stale")
    try:
        client.delete(window, leases)
        client.zadd(window, {"old-1": 1, "old-2": 2, "old-3": 3})  # long outside the window
        client.zadd(leases, {"gone-1": 1, "gone-2": 2})  # expired long ago
        decisions = [await limiter.acquire("stale", semantic=False) for _ in range(4)]
        assert [d.allowed for d in decisions] == [True, True, False, False]
        assert decisions[2].kind == "concurrency"  # two live leases now: the window has room
        assert client.zcard(leases) == 2 and client.zcard(window) == 2
        for decision in decisions[:2]:
            assert decision.lease is not None
            await limiter.release(decision.lease)
        fifth = await limiter.acquire("stale", semantic=False)
        assert fifth.allowed and fifth.lease is not None
        refused = await limiter.acquire("stale", semantic=False)
        assert not refused.allowed and refused.kind == "requests"  # three in the window
        assert client.zcard(window) == 3
        await limiter.release(fifth.lease)
    finally:
        client.delete(window, leases)
        client.close()
        await limiter.close()


async def test_two_redis_limiters_share_one_budget(redis_url: str) -> None:
    limits = LimitSettings(request_limit=4)
    one, two = RedisLimiter(redis_url, limits), RedisLimiter(redis_url, limits)
    try:
        results = await asyncio.gather(*[(one if i % 2 else two).acquire("c", semantic=False) for i in range(10)])
        assert sum(d.allowed for d in results) == 4
    finally:
        await one.close()
        await two.close()


async def test_redis_keys_hold_only_hashes_and_expire(redis_url: str) -> None:
    limiter = RedisLimiter(redis_url, LimitSettings())
    try:
        await limiter.acquire("0123abcd", semantic=True)
        client = redis.Redis.from_url(redis_url)
        names = sorted(k.decode() for k in client.keys("*"))
        assert redis_keys.rate_window("requests", "0123abcd") in names
        assert redis_keys.concurrency_global() in names
        assert all(client.pttl(name) > 0 for name in names)
        client.close()
    finally:
        await limiter.close()


async def test_redis_down_raises_limits_unavailable_fast(redis_server, redis_url: str) -> None:
    limiter = RedisLimiter(redis_url, LimitSettings())
    try:
        assert (await limiter.acquire("c", semantic=False)).allowed
        redis_server.stop()
        with pytest.raises(LimitsUnavailable):
            await limiter.acquire("c", semantic=False)
        redis_server.start()
        assert (await limiter.acquire("c", semantic=False)).allowed
    finally:
        if redis_server.proc.poll() is not None:
            redis_server.start()
        await limiter.close()


async def test_a_request_answered_at_once_is_counted_but_holds_no_slot(make_limiter: Factory) -> None:
    limiter = make_limiter(LimitSettings(request_limit=5, concurrency_limit=1, global_concurrency_limit=1))
    unleased = await limiter.acquire("c", semantic=False, lease=False)
    assert unleased.allowed and unleased.lease is None
    held = await limiter.acquire("c", semantic=False)  # the slot is still free
    assert held.allowed and held.lease is not None
    # While a slot is held the concurrency limits are still checked for unleased requests.
    refused = await limiter.acquire("c", semantic=False, lease=False)
    assert not refused.allowed and refused.kind == "global"
    await limiter.release(held.lease)
    assert (await limiter.acquire("c", semantic=False, lease=False)).allowed
    # Every admitted request counted toward the window (the refused one did not): 3 of 5 so far.
    assert (await limiter.acquire("c", semantic=False, lease=False)).allowed
    assert (await limiter.acquire("c", semantic=False, lease=False)).allowed
    assert (await limiter.acquire("c", semantic=False, lease=False)).kind == "requests"


async def test_memory_limiter_forgets_idle_identities_and_expired_leases() -> None:
    class Clock:
        now = 1000.0

        def __call__(self) -> float:
            return self.now

    clock = Clock()
    limiter = MemoryLimiter(LimitSettings(request_limit=2, global_concurrency_limit=10_000, lease_ttl_s=40),
                            clock=clock)
    for n in range(1000):
        assert (await limiter.acquire(f"c{n}", semantic=n % 2 == 0)).allowed
    assert limiter.tracked_identities == 1000
    clock.now += 30
    assert (await limiter.acquire("c1", semantic=False)).allowed  # c1 stays tracked, moved to the back
    clock.now += 30.5  # every other identity's newest request is now past the 60 s window
    assert (await limiter.acquire("fresh", semantic=False)).allowed
    assert limiter.tracked_identities == 2  # c1 and fresh
    assert len(limiter._global_leases) == 2 and len(limiter._client_leases) == 2  # the 40 s leases lapsed

"""StallWatch: the liveness grace after a Redis stall (pure logic, fake clock)."""

from __future__ import annotations

from pwc_mcp_core.cluster import redis_keys
from pwc_mcp_core.cluster.liveness import STALL_S, StallWatch


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


def test_round_trips_on_time_give_no_grace() -> None:
    clock = Clock()
    watch = StallWatch(clock)
    for _ in range(10):
        clock.now += 1.0
        assert not watch.ok(clock.now - 0.01)
    assert watch.grace_s() == 0


def test_a_stall_widens_the_window_by_its_length_for_one_ttl_after_it_ended() -> None:
    clock = Clock()
    watch = StallWatch(clock)
    sent = clock.now
    clock.now += 9.0  # a round trip that waited out a 9 s SIGSTOP
    assert watch.ok(sent)
    assert watch.grace_s() == 9.0
    ended = clock.now
    while clock.now < ended + redis_keys.HEARTBEAT_TTL_S + STALL_S - 1.0:  # round trips on time again
        clock.now += 1.0
        assert not watch.ok(clock.now)
        assert watch.grace_s() == 9.0
    clock.now = ended + redis_keys.HEARTBEAT_TTL_S + STALL_S + 0.1
    assert watch.grace_s() == 0  # a worker that really died is judged normally again

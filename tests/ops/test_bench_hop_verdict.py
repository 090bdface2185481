"""``bench/hop.py --floor --runs K`` lists every run and takes its verdict from the median run, so
one run on a noisy host cannot decide the goal alone (pure logic: no servers)."""

from __future__ import annotations

import argparse

from bench.hop import GOAL, _floor_section


def _run(hop_ms: float, floor_ms: float) -> dict[str, object]:
    pairs = [{"redis-g1-w1": 1.0 + hop_ms + skew, "embedded": 1.0 + skew, "floor": floor_ms} for skew in (0.0, 0.01)]
    return {"pairs": pairs, "delta_ms": hop_ms}


def _section(*runs: tuple[float, float]) -> str:
    args = argparse.Namespace(pairs=2, seconds=3.0, floor_calls=2000, runs=len(runs))
    return _floor_section([_run(*run) for run in runs], args, (1.0, 1.0))


def test_every_run_is_listed_and_the_median_run_decides() -> None:
    text = _section((0.30, 0.30), (0.50, 0.30), (0.33, 0.30))  # 1.00×, 1.67×, 1.10×
    assert "--floor --runs 3`" in text
    assert [line.split("|")[4].strip() for line in text.splitlines() if line.startswith("| 1 ") or
            line.startswith("| 2 ") or line.startswith("| 3 ")] == ["1.00×", "1.67×", "1.10×"]
    assert f"Goal: ≤ {GOAL}× the floor. The median run: 1.10×, PASS (2 of 3 runs within the goal)." in text


def test_a_median_run_over_the_goal_fails_whatever_the_best_run() -> None:
    text = _section((0.20, 0.30), (0.45, 0.30), (0.40, 0.30))  # 0.67×, 1.50×, 1.33×
    assert "The median run: 1.33×, FAIL (1 of 3 runs within the goal)." in text


def test_a_single_run_reads_as_before() -> None:
    text = _section((0.30, 0.30))
    assert "--runs" not in text and "The run: 1.00×, PASS." in text

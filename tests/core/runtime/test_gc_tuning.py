"""``gc_tuning.settle_after_startup``: the collector settings of the server processes."""

from __future__ import annotations

import gc

from pwc_mcp_core.runtime.gc_tuning import YOUNG_THRESHOLD, settle_after_startup


def test_settling_freezes_the_startup_heap_and_collects_the_young_generation_less_often() -> None:
    before = gc.get_threshold()
    try:
        kept = [[n] for n in range(100)]  # containers alive at "startup"
        settle_after_startup()
        assert gc.get_freeze_count() >= len(kept)
        assert gc.get_threshold() == (YOUNG_THRESHOLD, before[1], before[2])
        assert gc.isenabled()  # cyclic garbage made later is still collected
        cycle: list = []
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)

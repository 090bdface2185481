"""Leaderboard ranking: metric direction and ``best_rank`` per (task, dataset).

Rule (documented for users in the importer docstring):

* The ranking metric of a (task, dataset) leaderboard is the first metric of
  the dump's ``sota.metrics`` list that is not a model-size column
  (``Number of params``, ``Params``, ...); it is stored on each row as
  ``best_metric``. Rows added by catalog-extras may name their own.
* Direction: :func:`metric_rules.metric_direction`, the one rule the MCP layer
  reports too; **lower is better** when it says ``lower``, otherwise (``higher``
  or ``unknown``) **higher is better**.
* Values are parsed by the CLI's parser, :func:`metric_rules.metric_magnitude`
  (docs/cli-contract.md §3.5): strip, drop ``,`` and a trailing ``%``, then a finite
  float, or a count with a K/M/B/G/T suffix. Rows without a value get ``best_rank = NULL``.
* Ranks are "competition" ranks: equal values share a rank and the next rank
  skips (1, 1, 3).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from metric_rules import find_metric, is_size_metric, metric_direction
from metric_rules import metric_magnitude as metric_value

__all__ = ["competition_ranks", "is_size_metric", "lookup", "lower_is_better", "metric_value",
           "ranking_metric"]


def lower_is_better(name: str) -> bool:
    """True when the metric ranks ascending: :func:`metric_rules.metric_direction` says ``lower``."""
    return metric_direction(name) == "lower"


def ranking_metric(metrics: Sequence[object]) -> str | None:
    """First non-size metric of a ``sota.metrics`` list (falls back to the first)."""
    for name in metrics:
        if isinstance(name, str) and name and not is_size_metric(name):
            return name
    return next((m for m in metrics if isinstance(m, str) and m), None)


def lookup(metrics: Mapping[str, object], name: str) -> object:
    """Case-insensitive metric lookup (exact name first); None when the metric is not reported."""
    return find_metric(metrics, name)[1]


def competition_ranks(rows: Iterable[tuple[int, float | None]], *, lower: bool) -> dict[int, int | None]:
    """Map row id → rank for ``(row_id, value)`` pairs; None values get None."""
    rows = list(rows)
    ranks: dict[int, int | None] = {rid: None for rid, _ in rows}
    scored = [(rid, v) for rid, v in rows if v is not None]
    scored.sort(key=lambda item: item[1] if lower else -item[1])
    previous: float | None = None
    rank = 0
    for position, (rid, value) in enumerate(scored, start=1):
        if value != previous:
            rank, previous = position, value
        ranks[rid] = rank
    return ranks

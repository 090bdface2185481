"""Leaderboard ranking: metric direction and ``best_rank`` per (task, dataset).

Rule (documented for users in the importer docstring):

* The ranking metric of a (task, dataset) leaderboard is the first metric of
  the dump's ``sota.metrics`` list that is not a model-size column
  (``Number of params``, ``Params``, ...); it is stored on each row as
  ``best_metric``. Rows added by catalog-extras may name their own.
* Direction: **lower is better** when a word of the metric name is one of
  :data:`LOWER_WORDS` (error, loss, perplexity, WER, FID, BPC, ...) or the name
  contains "error"/"perplexity"; otherwise **higher is better**.
* Values are parsed like the CLI does (docs/cli-contract.md §3.5): strip, drop ``,``
  and a trailing ``%``, then float. Rows without a numeric value get
  ``best_rank = NULL``.
* Ranks are "competition" ranks: equal values share a rank and the next rank
  skips (1, 1, 3).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

LOWER_WORDS = frozenset({
    "error", "err", "errors", "loss", "perplexity", "ppl", "latency", "runtime", "time",
    "wer", "cer", "eer", "fid", "mae", "mse", "rmse", "bpc", "bpb", "bits", "nll",
    "entropy", "ter", "distance", "mr",
})
_SIZE_WORDS = ("params", "parameters", "number of params", "model size", "# params")
_WORD = re.compile(r"[a-z0-9]+")


def is_size_metric(name: str) -> bool:
    """True for model-size columns that must never rank a leaderboard."""
    lowered = name.strip().lower()
    return any(lowered == w or lowered.startswith(w) for w in _SIZE_WORDS)


def lower_is_better(name: str) -> bool:
    """Direction of a metric by name (see module docstring)."""
    lowered = name.lower()
    if "error" in lowered or "perplexity" in lowered:
        return True
    return any(word in LOWER_WORDS for word in _WORD.findall(lowered))


def ranking_metric(metrics: Sequence[object]) -> str | None:
    """First non-size metric of a ``sota.metrics`` list (falls back to the first)."""
    for name in metrics:
        if isinstance(name, str) and name and not is_size_metric(name):
            return name
    return next((m for m in metrics if isinstance(m, str) and m), None)


def metric_value(value: object) -> float | None:
    """Numeric value of a metric as given (number or numeric string), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip().replace(",", "")
        if text.endswith("%"):
            text = text[:-1]
        try:
            return float(text)
        except ValueError:
            return None
    return None


def lookup(metrics: dict, name: str) -> object:
    """Case-insensitive metric lookup (exact name first)."""
    if name in metrics:
        return metrics[name]
    folded = name.casefold()
    for key, value in metrics.items():
        if key.casefold() == folded:
            return value
    return None


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

"""The one owner of metric direction: is a higher or a lower value of a metric better?

Both the catalog's importer (which ranks leaderboards) and the MCP layer (which reports
``metric_directions`` and orders rows) read direction from :func:`metric_direction`, so the
two can never disagree. This package imports nothing but the standard library: the catalog
may not import ``pwc`` or ``pwc_mcp_core`` and they may not import the catalog
(``tests/test_layering.py``), and both may import this.

Rule (docs/tool-contract.md §3.2): split the lower-cased name into words of letters and
digits; a model-size column (``Number of params``, ``Params``, ...) has no direction
(``unknown``); a word from :data:`LOWER_WORDS`, or ``error``/``perplexity`` anywhere in the
name ("Top1Error"), means ``lower`` (checked first); a word from :data:`HIGHER_WORDS` means
``higher``; otherwise ``unknown``.

What number a metric value stands for has its owner here too: :func:`metric_number` and
:func:`metric_magnitude` (``metric_rules.values``).
"""

from __future__ import annotations

import re
from typing import Final, Literal

from metric_rules.values import find_metric, metric_magnitude, metric_number

__all__ = ["HIGHER_WORDS", "LOWER_WORDS", "Direction", "find_metric", "is_size_metric", "metric_direction", "metric_magnitude",
           "metric_number"]

Direction = Literal["higher", "lower", "unknown"]

LOWER_WORDS: Final = frozenset({
    "error", "err", "errors", "loss", "perplexity", "ppl", "latency", "runtime", "time",
    "wer", "cer", "eer", "fid", "mae", "mse", "rmse", "bpc", "bpb", "bits", "nll",
    "entropy", "ter", "distance", "mr",
})
"""Words that make a metric lower-is-better (error rates, losses, distances, time)."""

HIGHER_WORDS: Final = frozenset({
    "accuracy", "acc", "precision", "recall", "f1", "bleu", "rouge", "meteor", "cider", "map",
    "ap", "auc", "score", "em", "iou", "miou", "psnr", "ssim", "ndcg", "mrr", "hits",
    "spearman", "pearson", "correlation", "fps", "throughput",
})
"""Words that make a metric higher-is-better (accuracies, overlaps, quality scores)."""

_SIZE_WORDS = ("params", "parameters", "number of params", "model size", "# params")
_WORD = re.compile(r"[a-z0-9]+")


def is_size_metric(name: str) -> bool:
    """True for model-size columns, which neither rank a leaderboard nor have a direction."""
    lowered = name.strip().lower()
    return any(lowered == w or lowered.startswith(w) for w in _SIZE_WORDS)


def metric_direction(name: str) -> Direction:
    """``"lower"``, ``"higher"`` or ``"unknown"`` for a metric name (see the module rule).

    >>> metric_direction("Top-1 Error"), metric_direction("box AP"), metric_direction("MSE")
    ('lower', 'higher', 'lower')
    >>> metric_direction("top1"), metric_direction("Number of params")
    ('unknown', 'unknown')
    """
    lowered = name.lower()
    if is_size_metric(lowered):
        return "unknown"
    words = set(_WORD.findall(lowered))
    if words & LOWER_WORDS or "error" in lowered or "perplexity" in lowered:
        return "lower"
    if words & HIGHER_WORDS:
        return "higher"
    return "unknown"

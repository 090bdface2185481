"""Metric direction has one owner (metric_rules), and the catalog and the MCP layer agree on it."""

from __future__ import annotations

import pytest

from catalog.importer import ranking
from metric_rules import HIGHER_WORDS, LOWER_WORDS, metric_direction
from pwc_mcp_core.tools.projections import leaderboards

NAMES = ["MSE", "RMSE", "Top 1 Accuracy", "box AP", "mask AP", "MAP", "Percentage error", "Top1Error",
         "Test perplexity", "FID", "Inception score", "BLEU score", "EM", "F1", "Score", "WER",
         "Number of params", "Params", "top1", "Dev", "Inference time (ms)", "MRR", "MR", "Hits@10"]


def test_mse_is_lower_is_better_everywhere() -> None:
    assert metric_direction("MSE") == "lower"
    assert leaderboards.metric_direction("MSE") == "lower"
    assert ranking.lower_is_better("MSE") is True


@pytest.mark.parametrize("name", NAMES)
def test_the_catalog_ranks_the_way_the_mcp_layer_reports(name: str) -> None:
    reported = leaderboards.metric_direction(name)
    assert reported == metric_direction(name)
    # The catalog ranks "unknown" as higher-is-better; it never ranks against a known direction.
    assert ranking.lower_is_better(name) is (reported == "lower")


@pytest.mark.parametrize(("name", "direction"), [
    ("MRR", "higher"), ("MR", "lower"), ("Hits@10", "higher"), ("Top1Error", "lower"),
    ("Number of params", "unknown"), ("Inception score", "higher"), ("box AP", "higher"),
])
def test_word_rules(name: str, direction: str) -> None:
    assert metric_direction(name) == direction


def test_the_word_lists_do_not_overlap() -> None:
    assert not LOWER_WORDS & HIGHER_WORDS

"""Metric direction has one owner (metric_rules), and the catalog and the MCP layer agree on it."""

from __future__ import annotations

import pytest

from catalog.importer import ranking
from metric_rules import (
    HIGHER_WORDS,
    LOWER_WORDS,
    metric_direction,
    metric_magnitude,
    metric_number,
)
from pwc import leaderboard
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


# ---------------------------------------------------------------- metric values: one parser


VALUES = [
    pytest.param("86.6", 86.6, id="string"),
    pytest.param(" 86.6 ", 86.6, id="padded"),
    pytest.param("84.4%", 84.4, id="percent"),
    pytest.param("1,024", 1024.0, id="thousands"),
    pytest.param("-3.5", -3.5, id="negative"),
    pytest.param(3, 3.0, id="int"),
    pytest.param(90.1, 90.1, id="float"),
    pytest.param("632M", 632e6, id="millions"),
    pytest.param("1.2M", 1.2e6, id="decimal-millions"),
    pytest.param("1.2B", 1.2e9, id="billions"),
    pytest.param("340k", 340e3, id="thousands-suffix"),
    pytest.param("4.4G", 4.4e9, id="giga"),
    pytest.param("1.5T", 1.5e12, id="trillions"),
    pytest.param("1,500M", 1.5e9, id="grouped-millions"),
    pytest.param(True, None, id="bool"),
    pytest.param(None, None, id="none"),
    pytest.param([1], None, id="list"),
    pytest.param("", None, id="empty"),
    pytest.param("—", None, id="em-dash"),
    pytest.param("-", None, id="dash"),
    pytest.param("n/a", None, id="text"),
    pytest.param("28.5*", None, id="annotated"),
    pytest.param("%", None, id="percent-alone"),
    pytest.param("M", None, id="suffix-alone"),
    pytest.param("1.2.3B", None, id="two-points"),
    pytest.param(float("nan"), None, id="nan-float"),
    pytest.param(float("inf"), None, id="inf-float"),
    pytest.param(-float("inf"), None, id="minus-inf-float"),
    pytest.param("nan", None, id="nan-text"),
    pytest.param("NaN%", None, id="nan-percent"),
    pytest.param("-inf%", None, id="inf-percent"),
    pytest.param("Infinity", None, id="infinity-text"),
    pytest.param("1e999", None, id="overflowing-text"),
    pytest.param(10**400, None, id="int-beyond-float"),
    pytest.param("1e308T", None, id="overflowing-suffix"),
]


@pytest.mark.parametrize(("value", "expected"), VALUES)
def test_metric_values_have_one_parser_and_only_finite_values_count(value: object, expected: float | None) -> None:
    assert metric_magnitude(value) == expected


@pytest.mark.parametrize(("value", "expected"), VALUES)
def test_the_catalog_and_the_cli_read_metric_values_alike(value: object, expected: float | None) -> None:
    assert ranking.metric_value(value) == expected
    assert leaderboard.metric_value({"Accuracy": value}, "accuracy") == expected


def test_metric_number_has_no_magnitude_suffixes() -> None:
    assert metric_number("632M") is None
    assert metric_number("84.4%") == 84.4
    assert metric_number(float("nan")) is None


def test_metric_values_are_defined_once() -> None:
    """``catalog.importer.ranking`` and ``pwc.leaderboard`` define no parser of their own."""
    assert ranking.metric_value is metric_magnitude
    assert leaderboard.metric_magnitude is metric_magnitude
    assert not hasattr(leaderboard, "metric_number")

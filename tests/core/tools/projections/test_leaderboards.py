"""Leaderboard projections on real merged rows, metric directions and metric_note (docs/tool-contract.md §3.2, §6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pwc.leaderboard import merge_evaluations
from pwc_mcp_core.tools.projections.leaderboards import (
    evaluation,
    metric_direction,
    metric_directions,
    metric_note,
    metric_value,
    next_page,
    paper_evaluation,
    parse_shots,
    unknown_metric_error,
)
from pwc_mcp_core.tools.projections.text_entities import benchmark_text
from tests.core.tools.tools_stub import squad_rows


@pytest.mark.parametrize(("name", "direction"), [
    pytest.param("Accuracy", "higher", id="accuracy"),
    pytest.param("BLEU score", "higher", id="bleu-score"),
    pytest.param("top1", "unknown", id="top1"),
    pytest.param("Top-1 Error Rate", "lower", id="error-wins"),
    pytest.param("Error score", "lower", id="lower-checked-first"),
    pytest.param("EM", "higher", id="em"),
    pytest.param("% Test Accuracy", "higher", id="percent-accuracy"),
    pytest.param("FID", "lower", id="fid"),
    pytest.param("Parameters", "unknown", id="parameters"),
])
def test_metric_direction_follows_the_word_rules(name: str, direction: str) -> None:
    assert metric_direction(name) == direction


@pytest.mark.parametrize(("raw", "value"), [
    pytest.param(90.1, 90.1, id="float"), pytest.param(3, 3, id="int"), pytest.param("90.1", 90.1, id="numeric"),
    pytest.param("85.1%", 85.1, id="percent"), pytest.param("1,024", 1024.0, id="comma"),
    pytest.param("n/a", "n/a", id="text"), pytest.param(True, "True", id="bool"), pytest.param(None, "None", id="null"),
    pytest.param("nan", "nan", id="nan-text-stays-text"), pytest.param("-inf%", "-inf%", id="infinite-text"),
])
def test_metric_values_keep_numbers_and_parse_numeric_strings(raw: object, value: object) -> None:
    assert metric_value(raw) == value


@pytest.mark.parametrize(("text", "shots"), [
    pytest.param("5-shot evaluation", 5, id="dash"), pytest.param("0 shot", 0, id="space"),
    pytest.param("3shot", 3, id="joined"), pytest.param("few-shot", None, id="no-digits"),
    pytest.param(None, None, id="missing"),
])
def test_shots_are_parsed_from_the_methodology(text: str | None, shots: int | None) -> None:
    assert parse_shots(text) == shots


def test_real_rows_merged_across_task_scopes_keep_scoped_ranks_and_protocol(pwc_archive: Path) -> None:
    merged = merge_evaluations(squad_rows(pwc_archive, limit=5))
    projected = [evaluation(row) for row in merged]
    assert len(projected) == 5
    first = projected[0]
    assert first["rank_scopes"] == [
        {"task_id": "5", "task_name": "Question Answering", "task_slug": "question-answering", "rank": 1},
        {"task_id": "6", "task_name": "Reading Comprehension", "task_slug": "reading-comprehension", "rank": 2},
    ]
    assert first["best_rank"] == 1
    assert first["shots"] == 0 and first["split"] == "dev"
    assert first["evaluation_protocol"] == "0-shot dev split"
    assert first["updated_at"] == "2024-01-01T00:00:00Z"
    assert all(isinstance(v, float) for v in first["metrics"].values())
    assert metric_directions(projected) == {"EM": "higher", "F1": "higher"}


def test_an_unmerged_row_gets_one_synthesised_rank_scope_and_absolute_urls() -> None:
    row = {"id": 1, "task_id": 9, "task_name": "T", "best_rank": 4, "result_url": "/paper/x", "is_open": None}
    projected = evaluation(row)
    assert projected["rank_scopes"] == [{"task_id": "9", "task_name": "T", "task_slug": None, "rank": 4}]
    assert projected["source_url"] == "https://paperswithcode.co/paper/x"
    assert projected["is_open"] is None and projected["model_name"] == "Unknown model"
    assert evaluation({"id": 2})["rank_scopes"] == []


def test_paper_evaluations_are_open_unless_the_catalog_says_false() -> None:
    assert paper_evaluation({"is_open": None})["is_open"] is True
    assert paper_evaluation({"is_open": False})["is_open"] is False


def test_metric_note_names_the_missing_and_the_available_metrics() -> None:
    message = "unknown metric(s): latency; available metrics: EM, F1"
    assert unknown_metric_error(message)
    note = metric_note(message)
    assert "latency" in note and "EM, F1" in note and "unfiltered" in note
    assert not unknown_metric_error("metric list must not be empty")


@pytest.mark.parametrize(("payload", "page", "scanned", "expected"), [
    pytest.param({"next_page": 3}, 2, False, 3, id="explicit"),
    pytest.param({"count": 60}, 1, False, 2, id="from-count"),
    pytest.param({"count": 60}, 3, False, None, id="last-page"),
    pytest.param({"count": 60, "matched_count": 15}, 1, True, None, id="matched-fits"),
    pytest.param({"count": 60, "matched_count": 45}, 2, True, 3, id="matched-more"),
])
def test_leaderboards_paginate(payload: dict, page: int, scanned: bool, expected: int | None) -> None:
    assert next_page(payload, page, 20, scanned=scanned) == expected


@pytest.mark.parametrize(("count", "matched", "filtered", "says"), [
    pytest.param(40, 40, False, "40 evaluation rows; page 1", id="nothing-merged"),
    pytest.param(40, 35, False, "40 evaluation rows, merged into 35 leaderboard rows (one per model result)",
                 id="merged"),
    pytest.param(148, 100, False, "148 evaluation rows; the first 100 in the catalog's rank order are read (a metric "
                 "filter", id="first-page-only"),
    pytest.param(148, 97, False, "148 evaluation rows; the first 100 in the catalog's rank order are read, merged "
                 "into 97 leaderboard rows", id="first-page-merged"),
    pytest.param(148, 12, True, "148 evaluation rows; 12 merged rows match the filters", id="filtered"),
])
def test_the_row_counts_say_what_was_read_and_merged(count: int, matched: int, filtered: bool, says: str) -> None:
    """A board over one catalog page, read without a metric filter, does not call the unread rows merged."""
    text = benchmark_text({"benchmark": {"name": "B"}, "evaluation_count": count, "matched_count": matched,
                           "evaluations": [], "page": 1}, filtered=filtered)
    assert says in text

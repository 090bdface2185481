"""Unit tests for ``pwc.leaderboard``: merging (§3.4), metric selection and sizes (§3.5)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from pwc.errors import ResponseError, UsageError
from pwc.leaderboard import (
    MetricSelection,
    check_parameter_limit,
    fetch_leaderboard,
    merge_evaluations,
    metric_summary,
    metric_value,
    parameters_cell,
    parse_metric_list,
    parse_parameter_size,
    parse_pareto,
    parse_sort,
    parse_threshold,
    shot_count,
)


def _row(**fields: Any) -> dict[str, Any]:
    base = {"paper_id": "p1", "dataset_id": 42, "model_name": "Agent", "metrics": {}}
    return {**base, **fields}


# ---------------------------------------------------------------- merge


def test_swe_bench_rows_of_one_model_merge_across_task_scopes() -> None:
    rows = [
        _row(task_id=3, task_name="Coding Agents", best_rank=1, metrics={"Resolved": 55.5},
             best_metric="Resolved", num_parameters=10_000_000_000),
        _row(task_id=3, task_name="Coding Agents", best_rank=2, metrics={"Pass@1": 50},
             num_parameters=10_000_000_000),
        _row(task_id=8, task_name="Software Engineering", task_slug="software-engineering", best_rank=4,
             metrics={"Resolved": 55.5}, num_parameters=10_000_000_000),
    ]
    merged = merge_evaluations(rows)
    assert len(merged) == 1
    assert merged[0]["metrics"] == {"Resolved": 55.5, "Pass@1": 50}
    assert merged[0]["rank_scopes"] == [
        {"task_id": "3", "task_name": "Coding Agents", "task_slug": None, "rank": 1},
        {"task_id": "8", "task_name": "Software Engineering", "task_slug": "software-engineering", "rank": 4},
    ]
    assert merged[0]["best_rank"] == 1
    assert merged[0]["num_parameters"] == 10_000_000_000
    assert rows[0]["metrics"] == {"Resolved": 55.5}, "inputs are not modified"


def test_rows_with_conflicting_metrics_stay_separate_within_a_group() -> None:
    merged = merge_evaluations([_row(metrics={"Acc": 1}, best_rank=2), _row(metrics={"Acc": 2}, best_rank=1)])
    assert [m["metrics"]["Acc"] for m in merged] == [2, 1]


@pytest.mark.parametrize(("a", "b", "merges"), [
    pytest.param({"harness": "verified"}, {}, False, id="harness"),
    pytest.param({"split": "test"}, {"split_name": "test"}, True, id="split-falls-back-to-split-name"),
    pytest.param({"split": "test"}, {"evaluated_on": "val"}, False, id="split-differs"),
    pytest.param({"methodology": "5-shot eval"}, {"methodology": "5 shot, CoT"}, True, id="same-shots"),
    pytest.param({"methodology": "5-shot eval"}, {"methodology": "0-shot"}, False, id="different-shots"),
    pytest.param({"paper_id": 1}, {"paper_id": "1"}, True, id="ids-compare-as-strings"),
    pytest.param({"task_id": 1}, {"task_id": 2}, True, id="task-not-in-key"),
])
def test_merge_key_fields(a: dict, b: dict, merges: bool) -> None:
    merged = merge_evaluations([_row(metrics={"x": 1}, **a), _row(metrics={"y": 2}, **b)])
    assert (len(merged) == 1) is merges


def test_repeated_task_keeps_its_minimum_rank() -> None:
    merged = merge_evaluations([_row(task_id=3, best_rank=5, metrics={"a": 1}),
                                _row(task_id=3, best_rank=2, metrics={"b": 1}),
                                _row(task_id=None, best_rank=None, metrics={"c": 1})])
    assert merged[0]["rank_scopes"] == [
        {"task_id": "3", "task_name": None, "task_slug": None, "rank": 2},
        {"task_id": None, "task_name": None, "task_slug": None, "rank": None},
    ]


@pytest.mark.parametrize(("sizes", "expected"), [
    pytest.param([7, 7], 7, id="common"),
    pytest.param([7, 8], None, id="conflict"),
    pytest.param([7, None], None, id="incomplete"),
    pytest.param([True, True], None, id="bool-is-not-a-size"),
    pytest.param([0, 0], None, id="non-positive"),
])
def test_merged_parameter_count(sizes: list, expected: int | None) -> None:
    rows = [_row(metrics={f"m{i}": 1}, num_parameters=size) for i, size in enumerate(sizes)]
    assert merge_evaluations(rows)[0]["num_parameters"] == expected


def test_merged_rows_sort_by_rank_then_model_then_paper() -> None:
    rows = [_row(model_name="b", best_rank=None), _row(model_name="B2", best_rank=2),
            _row(model_name="a", best_rank=None, paper_id="p2"), _row(model_name="a", best_rank=None, paper_id="p1"),
            _row(model_name="z", best_rank=1)]
    assert [(r["model_name"], r["paper_id"]) for r in merge_evaluations(rows)] == [
        ("z", "p1"), ("B2", "p1"), ("a", "p1"), ("a", "p2"), ("b", "p1")]


@pytest.mark.parametrize(("text", "shots"), [
    pytest.param("5-shot evaluation on the validation split.", "5", id="hyphen"),
    pytest.param("0 shot", "0", id="space"),
    pytest.param("25shot", "25", id="joined"),
    pytest.param("Few-SHOT 3-Shot", "3", id="case-insensitive"),
    pytest.param("a15-shot", "", id="not-word-bounded"),
    pytest.param(None, "", id="missing"),
])
def test_shot_count(text: str | None, shots: str) -> None:
    assert shot_count(text) == shots


# ---------------------------------------------------------------- metrics


@pytest.mark.parametrize(("value", "expected"), [
    pytest.param("84.4%", 84.4, id="percent"),
    pytest.param(" 1,234 ", 1234.0, id="thousands"),
    pytest.param(50, 50.0, id="int"),
    pytest.param(True, None, id="bool"),
    pytest.param("n/a", None, id="text"),
    pytest.param(None, None, id="null"),
    pytest.param([1], None, id="list"),
    pytest.param("632M", 632e6, id="millions"),
    pytest.param("1.2B", 1.2e9, id="billions"),
    pytest.param("340K", 340e3, id="thousands-suffix"),
    pytest.param("13B", 13e9, id="whole-billions"),
    pytest.param(" 7b ", 7e9, id="lower-case"),
    pytest.param("1,500M", 1.5e9, id="grouped-millions"),
    pytest.param("1.5T", 1.5e12, id="trillions"),
    pytest.param("M", None, id="suffix-alone"),
    pytest.param("1.2.3B", None, id="two-points"),
    pytest.param("12 parameters", None, id="words"),
])
def test_metric_value_parsing(value: Any, expected: float | None) -> None:
    assert metric_value({"Accuracy": value}, "accuracy") == expected


def test_metric_value_of_missing_metric_is_none() -> None:
    assert metric_value({"A": 1}, "B") is None
    assert metric_value(None, "B") is None


@pytest.mark.parametrize(("func", "text", "message"), [
    pytest.param(parse_metric_list, " , ", "metric list must not be empty", id="empty-list"),
    pytest.param(parse_threshold, "FPS", "expected METRIC=VALUE", id="no-equals"),
    pytest.param(parse_threshold, "FPS=fast", "metric threshold must be numeric", id="not-numeric"),
    pytest.param(parse_sort, "FPS:up", "expected METRIC[:asc|desc]", id="bad-direction"),
    pytest.param(parse_pareto, "a:higher,b", "expected METRIC:higher,METRIC:lower", id="no-direction"),
    pytest.param(parse_pareto, "a:higher", "Pareto selection requires at least two metrics", id="one"),
])
def test_metric_option_errors(func: Any, text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=message.replace("[", r"\[").replace("|", r"\|")):
        func(text)


def test_metric_options_parse() -> None:
    assert parse_metric_list("Resolved,,Latency") == ("Resolved", "Latency")
    assert parse_threshold("Resolved=50") == ("Resolved", 50.0)
    assert parse_sort("Pass@1") == ("Pass@1", "desc")
    assert parse_sort("a:b:asc") == ("a:b", "asc")
    assert parse_pareto("Resolved:higher,Latency:lower") == (("Resolved", "higher"), ("Latency", "lower"))


COCO = [
    _row(model_name="Fast", metrics={"mAP": "58", "FPS": "100"}),
    _row(model_name="Accurate", metrics={"mAP": 62, "FPS": 20}),
    _row(model_name="Dominated", metrics={"mAP": 50, "FPS": 10}),
]


def test_pareto_drops_dominated_rows_and_sort_orders_the_front() -> None:
    selection = MetricSelection(pareto=(("mAP", "higher"), ("FPS", "higher")), sort=("FPS", "desc"))
    assert [r["model_name"] for r in selection.apply(COCO)] == ["Fast", "Accurate"]


def test_pareto_without_sort_orders_by_first_objective() -> None:
    selection = MetricSelection(pareto=(("mAP", "higher"), ("FPS", "lower")))
    # With FPS lower-is-better, Accurate (62, 20) dominates Fast and Dominated (50, 10) joins the front.
    assert [r["model_name"] for r in selection.apply(COCO)] == ["Accurate", "Dominated"]


SIZES = [
    _row(model_name="Small", metrics={"Params": "340K", "Accuracy": 70}),
    _row(model_name="Large", metrics={"Params": "13B", "Accuracy": 80}),
    _row(model_name="Medium", metrics={"Params": "632M", "Accuracy": 75}),
    _row(model_name="Big", metrics={"Params": "1.2B", "Accuracy": 78}),
    _row(model_name="Plain", metrics={"Params": 5_000_000, "Accuracy": 72}),
]


@pytest.mark.parametrize(("direction", "order"), [
    ("desc", ["Large", "Big", "Medium", "Plain", "Small"]),
    ("asc", ["Small", "Plain", "Medium", "Big", "Large"]),
])
def test_sorting_by_a_parameter_metric_reads_its_magnitude_suffix(direction: str, order: list[str]) -> None:
    # "632M" < "1.2B" < "13B" as numbers; read as text or as nothing they would not sort at all.
    assert [r["model_name"] for r in MetricSelection(sort=("params", direction)).apply(SIZES)] == order


def test_thresholds_and_pareto_read_magnitude_suffixes() -> None:
    bounded = MetricSelection(minimum=(("Params", 1e6),), maximum=(("Params", 2e9),)).apply(SIZES)
    assert [r["model_name"] for r in bounded] == ["Medium", "Big", "Plain"]
    front = MetricSelection(pareto=(("Accuracy", "higher"), ("Params", "lower"))).apply(SIZES)
    assert [r["model_name"] for r in front] == ["Large", "Big", "Medium", "Plain", "Small"]


def test_min_and_max_thresholds_are_inclusive() -> None:
    selection = MetricSelection(require=("mAP", "FPS"), minimum=(("FPS", 20.0),), maximum=(("mAP", 62.0),))
    assert [r["model_name"] for r in selection.apply(COCO)] == ["Fast", "Accurate"]


def test_unknown_metric_lists_missing_names_and_available_metrics() -> None:
    # Named as the caller spelled them, first spelling kept when a name repeats in another case.
    with pytest.raises(UsageError, match="^unknown metric\\(s\\): Latency; available metrics: FPS, mAP$"):
        MetricSelection(sort=("Latency", "desc")).apply(COCO)
    with pytest.raises(UsageError, match="^unknown metric\\(s\\): BLEU, Latency; available metrics: FPS, mAP$"):
        MetricSelection(require=("BLEU", "fps", "bleu"), sort=("Latency", "desc")).apply(COCO)
    with pytest.raises(UsageError, match="available metrics: none$"):
        MetricSelection(require=("x",)).apply([])


def test_rows_without_a_requested_metric_are_not_selected() -> None:
    rows = [*COCO, _row(model_name="NoFPS", metrics={"mAP": 99})]
    assert "NoFPS" not in [r["model_name"] for r in MetricSelection(require=("FPS",)).apply(rows)]


@pytest.mark.parametrize(("row", "summary"), [
    pytest.param({"metrics": {"Pass@1": 50, "Resolved": 55.5}, "best_metric": "Resolved"},
                 "Resolved: 55.5, Pass@1: 50", id="best-first"),
    pytest.param({"metrics": {"b": "58", "A": 1}}, "A: 1, b: 58", id="case-insensitive"),
    pytest.param({"metrics": {}}, "—", id="empty"),
])
def test_metric_summary(row: dict, summary: str) -> None:
    assert metric_summary(row) == summary


# ---------------------------------------------------------------- parameter sizes


@pytest.mark.parametrize(("text", "size"), [
    pytest.param("500m", 500_000_000, id="m"),
    pytest.param("1.5B", 1_500_000_000, id="decimal-b"),
    pytest.param("3_000_000_000", 3_000_000_000, id="underscores"),
    pytest.param(" 7 ", 7, id="stripped"),
])
def test_parameter_sizes_accepted(text: str, size: int) -> None:
    assert parse_parameter_size(text) == size


@pytest.mark.parametrize(("text", "message"), [
    *(pytest.param(t, "expected a positive integer", id=t) for t in
      ["-1", "1.5", "3K", "3B parameters", "_3B", "3_B", "3B_", "1__000", "1_.5B", ""]),
    pytest.param("0", "between 1 and 9223372036854775806", id="zero"),
    pytest.param("9223372036854775807", "between 1 and", id="too-big"),
    pytest.param("1.0000000001M", "whole number", id="fraction-of-one"),
])
def test_parameter_sizes_rejected(text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        parse_parameter_size(text)


@pytest.mark.parametrize(("value", "cell"), [
    pytest.param(10_000_000_000, "10B", id="10B"),
    pytest.param(1_500_000_000, "1.5B", id="1.5B"),
    pytest.param(350_000_000, "350M", id="350M"),
    pytest.param(1_250_000, "1.25M", id="1.25M"),
    pytest.param(1000, "1,000", id="small"),
    pytest.param(None, "—", id="missing"),
    pytest.param(True, "—", id="bool"),
    pytest.param("3B", "—", id="string"),
])
def test_parameters_cell(value: Any, cell: str) -> None:
    assert parameters_cell(value) == cell


def test_parameter_limit_fails_closed_on_unknown_or_larger_models() -> None:
    check_parameter_limit([{"num_parameters": 3}], 3)
    for size in (4, None, "3"):
        with pytest.raises(ResponseError, match="outside the requested parameter limit"):
            check_parameter_limit([{"num_parameters": size}], 3)


# ---------------------------------------------------------------- fetching


class PageClient:
    """A client whose ``get_json`` serves canned pages in order and records the calls."""

    def __init__(self, pages: list[Any]) -> None:
        self.pages = pages
        self.calls: list[tuple[str, dict]] = []

    def get_json(self, path: str, params: dict | None = None) -> Any:
        self.calls.append((path, dict(params or {})))
        return self.pages[len(self.calls) - 1]


def test_metric_scan_stops_on_an_empty_page_even_when_count_claims_more() -> None:
    client = PageClient([{"count": 500, "results": [_row()]}, {"count": 500, "results": []}])
    rows, total = fetch_leaderboard(client, 42, is_open=None, max_parameters=None, scan_all=True)
    assert (len(rows), total, len(client.calls)) == (1, 500, 2)


def test_scan_refuses_more_than_the_safety_limit() -> None:
    page = {"count": 1001, "results": [_row()] * 100}
    client = PageClient([page] * 11)
    with pytest.raises(ResponseError, match="scanning 1001 evaluation rows; safety limit is 1000"):
        fetch_leaderboard(client, 42, is_open=None, max_parameters=None, scan_all=True)
    assert len(client.calls) == 10


def test_parameter_scan_rejects_backwards_next_page() -> None:
    page = {"count": 2, "results": [_row()], "next_page": 1,
            "parameter_coverage_known": 1, "parameter_coverage_total": 1}
    with pytest.raises(ResponseError, match="invalid evaluation pagination"):
        fetch_leaderboard(PageClient([page]), 42, is_open=None, max_parameters=5, scan_all=True)


# ---------------------------------------------------------------- real data


def _archive_rows(pwc_archive: Path, dataset: str) -> list[dict[str, Any]]:
    tables = json.loads((pwc_archive / "evaluation-tables.json").read_text())
    stack = list(tables)
    while stack:
        task = stack.pop()
        stack.extend(task.get("subtasks", []))
        entries = list(task.get("datasets", []))
        entries += [sub for entry in entries for sub in entry.get("subdatasets", [])]
        for entry in entries:
            if dataset in (entry.get("dataset"), entry.get("subdataset")):
                return [{"paper_id": r["paper_url"] or r["paper_title"], "dataset_id": dataset,
                         "task_id": task["task"], "model_name": r["model_name"], "metrics": r["metrics"]}
                        for r in entry["sota"]["rows"]]
    raise AssertionError(f"{dataset} not in the archive")


def test_real_squad_rows_select_and_sort_by_f1(pwc_archive: Path) -> None:
    rows = merge_evaluations(_archive_rows(pwc_archive, "SQuAD1.1"))
    assert len(rows) > 100
    top = MetricSelection(require=("EM", "f1"), sort=("F1", "desc")).apply(rows)
    values = [metric_value(r["metrics"], "F1") for r in top]
    assert values == sorted(values, reverse=True)
    assert all(v is not None for v in values)


def test_real_percent_metrics_parse(pwc_archive: Path) -> None:
    rows = _archive_rows(pwc_archive, "Monologue")
    values = {r["model_name"]: metric_value(r["metrics"], "accuracy") for r in rows}
    assert values["CHFusion (2017)"] == 76.5


def test_real_rows_listed_under_two_tasks_merge_into_one_with_two_scopes(pwc_archive: Path) -> None:
    rows = _archive_rows(pwc_archive, "SQuAD1.1")[:5]
    copies = [{**row, "task_id": "Reading Comprehension"} for row in rows]
    merged = merge_evaluations(rows + copies)
    assert len(merged) == len({(r["paper_id"], r["model_name"]) for r in rows})
    assert all(len(m["rank_scopes"]) == 2 for m in merged)

"""``pwc benchmark history`` and ``pwc.history.sota_history``: hand-computed series on the sample's
boards (ImageNet top-1, COCO box AP, CIFAR-10 percentage error, lower is better), the counting of
rows left out, and the PNG chart (size, mode, not blank, deterministic)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from pwc.chart import HEIGHT, WIDTH, history_png
from pwc.errors import UsageError
from pwc.history import history_markdown, primary_metric, sota_history
from tests.pwc.runner import run_pwc


def _history(url: str, *argv: str) -> dict[str, Any]:
    result = run_pwc(url, "benchmark", "history", *argv, "--json")
    assert (result.code, result.err) == (0, ""), result.err
    return json.loads(result.out)["data"]


def _series(data: dict[str, Any]) -> list[tuple[str, float, str, float | None]]:
    return [(s["date"], s["value"], s["model"], s["improvement"]) for s in data["steps"]]


# ---------------------------------------------------------------- the sample's boards, by hand


def test_imagenet_top1_series_span_and_papers(catalog_url: str) -> None:
    data = _history(catalog_url, "--name", "ImageNet")
    assert (data["metric"], data["direction"], data["direction_known"], data["unit"]) == \
        ("Top 1 Accuracy", "higher", True, "%")
    # 10 rows: ResNet-152 78.57 (2015-12-10) is beaten by EfficientNet-B7 84.3 (2019-05-28), then by
    # ViT-H/14 88.55 (2020-10-22; ViT-L/16 87.76 the same day is not a step). Nothing later beats it.
    assert _series(data) == [("2015-12-10", 78.57, "ResNet-152", None),
                             ("2019-05-28", 84.3, "EfficientNet-B7", 5.73),
                             ("2020-10-22", 88.55, "ViT-H/14", 4.25)]
    assert data["steps"][2]["paper"] == {"id": data["steps"][2]["paper"]["id"], "arxiv_id": "2010.11929",
                                         "title": "An Image is Worth 16x16 Words: Transformers for Image "
                                                  "Recognition at Scale"}
    assert data["steps"][2]["paper"]["id"]
    # Last result MAE 2021-11-11: 385 days after 2020-10-22; DeiT-B ×2, CLIP, Swin-L and MAE came later.
    assert data["span"] == {"first": "2015-12-10", "last": "2021-11-11", "results": 10,
                            "best_since": "2020-10-22", "best_held_days": 385, "results_since_best": 5}
    assert data["left_out"] == {"without_metric": 0, "unparseable_value": 0, "without_date": 0}
    assert len(data["points"]) == 10 and data["points"][0] == ["2015-12-10", 78.57]
    assert data["tasks"] == ["Image Classification", "Self-Supervised Image Classification"]


def test_imagenet_top5_has_two_results_and_counts_the_rest(catalog_url: str) -> None:
    data = _history(catalog_url, "--name", "imagenet", "--metric", "top 5 accuracy")
    assert data["metric"] == "Top 5 Accuracy"
    assert _series(data) == [("2015-12-10", 95.51, "ResNet-152", None), ("2019-05-28", 97.0, "EfficientNet-B7", 1.49)]
    assert data["left_out"]["without_metric"] == 8


def test_coco_box_ap(catalog_url: str) -> None:
    data = _history(catalog_url, "--name", "COCO test-dev")
    assert (data["metric"], data["direction"]) == ("box AP", "higher")
    assert _series(data) == [("2017-03-20", 39.8, "Mask R-CNN (ResNeXt-101-FPN)", None),
                             ("2021-03-25", 58.7, "Swin-L (HTC++)", 18.9)]
    assert data["span"]["best_held_days"] == 0


def test_cifar10_error_is_lower_is_better(catalog_url: str) -> None:
    data = _history(catalog_url, "--name", "CIFAR-10", "--task", "image-classification")
    assert (data["metric"], data["direction"], data["unit"], data["task"]) == \
        ("Percentage error", "lower", "%", "Image Classification")
    # Same day, best first: ResNet-110 6.43 before ResNet-1202 7.93; DenseNet-BC 3.46 before
    # DenseNet (L=100, k=24) 3.74. Gain 6.43 - 3.46 = 2.97.
    assert _series(data) == [("2015-12-10", 6.43, "ResNet-110", None), ("2016-08-25", 3.46, "DenseNet-BC (k=40)", 2.97)]
    assert data["span"]["results"] == 4
    everything = _history(catalog_url, "--name", "CIFAR-10")
    assert everything["left_out"]["without_metric"] == 1  # DDPM reports FID, not the error


def test_text_view_is_a_compact_table_under_3_kb(catalog_url: str) -> None:
    result = run_pwc(catalog_url, "benchmark", "history", "--name", "ImageNet")
    assert result.code == 0
    assert len(result.out.encode()) < 3 * 1024
    assert "Date|Value|Gain|Model|Paper|Code" in result.out
    assert "2020-10-22|88.55|4.25|ViT-H/14|2010.11929 An Image is Worth" in result.out


@pytest.mark.parametrize(("argv", "message"), [
    pytest.param(["--name", "ImageNet", "--metric", "BLEU"], "unknown metric: BLEU; available metrics: "
                 "Number of params, Top 1 Accuracy, Top 5 Accuracy", id="unknown-metric"),
    pytest.param(["--name", "ImageNet", "--task", "nope"], "no results of task nope on this benchmark; "
                 "its tasks: Image Classification, Self-Supervised Image Classification", id="unknown-task"),
])
def test_usage_errors_exit_2(catalog_url: str, argv: list[str], message: str) -> None:
    result = run_pwc(catalog_url, "benchmark", "history", *argv)
    assert result.code == 2 and message in result.err and "Traceback" not in result.err


def test_unknown_or_missing_benchmark_exits_4_like_benchmark_name(catalog_url: str) -> None:
    assert run_pwc(catalog_url, "benchmark", "history", "--name", "No Such Board").code == 4
    missing = run_pwc(catalog_url, "benchmark", "history")
    assert (missing.code, missing.err) == (4, "pwc: benchmark inspection requires --name\n")


def test_chart_flag_writes_the_png(catalog_url: str, tmp_path: Path) -> None:
    target = tmp_path / "imagenet.png"
    result = run_pwc(catalog_url, "benchmark", "history", "--name", "ImageNet", "--chart", str(target))
    assert result.code == 0
    assert target.read_bytes() == history_png(_history(catalog_url, "--name", "ImageNet"))
    bad = run_pwc(catalog_url, "benchmark", "history", "--name", "ImageNet", "--chart", str(tmp_path / "no" / "x.png"))
    assert bad.code == 2 and bad.err.startswith("pwc: cannot write --chart")


# ---------------------------------------------------------------- the rules, on hand-made rows


def _row(model: str, date: str | None, value: object, metric: str = "Accuracy", **extra: Any) -> dict[str, Any]:
    return {"model_name": model, "paper_published_date": date, "metrics": {metric: value}, **extra}


def test_rows_without_value_or_date_are_counted_never_dropped_silently() -> None:
    rows = [_row("a", "2020-01-01", "70"), _row("b", None, "90"), _row("c", "2021-01-01", "n/a"),
            _row("d", "2021-06-01", "70"), _row("e", "2022-01-01", "71.5%"), _row("f", "2022-02-01", 1, "Other")]
    data = sota_history({"name": "X"}, rows, "accuracy")
    assert [(s["model"], s["value"]) for s in data["steps"]] == [("a", 70.0), ("e", 71.5)]  # a tie is no step
    assert data["left_out"] == {"without_metric": 1, "unparseable_value": 1, "without_date": 1}
    assert data["span"]["results"] == 3
    text = "\n".join(history_markdown(data))
    assert "1 without this metric; 1 without a parseable value; 1 without a date" in text


def test_an_unknown_direction_is_read_as_the_catalog_ranks_it_and_says_so() -> None:
    data = sota_history({"name": "X"}, [_row("a", "2020-01-01", "1", "Dev"), _row("b", "2021-01-01", "2", "Dev")])
    assert (data["metric"], data["direction"], data["direction_known"]) == ("Dev", "higher", False)
    assert "assumed" in history_markdown(data)[0]


def test_primary_metric_prefers_best_metric_and_skips_sizes() -> None:
    rows = [{"metrics": {"Params": "1B", "F1": 2}, "best_metric": "Params"}, {"metrics": {"Params": "2B", "F1": 1}}]
    assert primary_metric(rows) == "F1"
    assert primary_metric([{"metrics": {"EM": 1}, "best_metric": "EM"}, {"metrics": {"F1": 1}}]) == "EM"


def test_unknown_metric_names_the_boards_metrics() -> None:
    with pytest.raises(UsageError, match=r"unknown metric: BLEU; available metrics: Accuracy, Other"):
        sota_history({}, [_row("a", "2020-01-01", 1), _row("b", "2020-01-01", 1, "Other")], "BLEU")


def test_the_text_shows_the_latest_25_steps_of_a_long_series() -> None:
    rows = [_row(f"m{i}", f"{2000 + i}-01-01", str(i)) for i in range(30)]
    text = "\n".join(history_markdown(sota_history({"name": "X"}, rows)))
    assert "The latest 25 of 30 steps" in text and "|m29|" in text and "|m4|" not in text


# ---------------------------------------------------------------- the chart


def _image(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    image.load()
    return image


@pytest.mark.parametrize("board", ["ImageNet", "COCO test-dev", "CIFAR-10"])
def test_chart_is_a_readable_deterministic_png(catalog_url: str, board: str) -> None:
    data = _history(catalog_url, "--name", board)
    png = history_png(data)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) < 100 * 1024
    assert png == history_png(json.loads(json.dumps(data)))  # same data, same bytes
    assert b"tEXt" not in png and b"iTXt" not in png and b"tIME" not in png  # no software name, no time
    image = _image(png)
    assert image.size == (WIDTH, HEIGHT) and image.mode == "P"
    grey = image.convert("L")
    histogram = grey.histogram()
    dark = sum(histogram[:80])
    assert histogram[255] > WIDTH * HEIGHT // 2, "mostly white ground"
    assert dark > 2000, "the step line, marks and text are drawn dark, and stay dark in greyscale"
    assert sum(1 for count in histogram if count) > 8, "not blank"


def test_chart_of_a_board_without_dated_results_says_so() -> None:
    png = history_png(sota_history({"name": "X"}, [_row("a", None, "1")]))
    assert _image(png).size == (WIDTH, HEIGHT)

"""``pwc trends``: papers per year and the share with code, hand-computed on the sample catalog.

The sample's Image Classification papers: VGG 2014-09 (no code), Batch Normalization 2015-02 (no
code), ResNet 2015-12, DenseNet 2016, EfficientNet 2019, ViT and DeiT 2020, CLIP, Swin and MAE 2021
(all with code), and Dropout without a date. Convolution adds U-Net 2015 (an unofficial repository:
with code) and YOLO 2015; ImageNet's rows come from ResNet 2015, EfficientNet 2019, SimCLR, ViT,
DeiT 2020, CLIP, Swin, MAE 2021.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from pwc.cache import TAXONOMY_TTL_S
from pwc.chart import HEIGHT, WIDTH, trends_png
from pwc.cli import main
from pwc.transport import Client
from pwc.trends import share, trends_markdown, trends_payload, year_range
from tests.pwc.runner import run_pwc
from tests.pwc.stub import stub_catalog


def _trends(url: str, *argv: str) -> dict[str, Any]:
    result = run_pwc(url, "trends", *argv, "--json")
    assert (result.code, result.err) == (0, ""), result.err
    return json.loads(result.out)["data"]


def _rows(data: dict[str, Any]) -> list[tuple[int, int, int, float | None]]:
    return [(r["year"], r["papers"], r["with_code"], r["share_with_code"]) for r in data["years"]]


def test_task_default_range_is_its_last_ten_years_of_papers(catalog_url: str) -> None:
    data = _trends(catalog_url, "--task", "Image Classification")
    assert (data["kind"], data["entity"]) == ("task", {"id": "7", "name": "Image Classification",
                                                       "slug": "image-classification"})
    # 2021 - 9 = 2012 is before its first paper (2014): the range starts at 2014. 2017 and 2018 are 0, present.
    assert _rows(data) == [(2014, 1, 0, 0.0), (2015, 2, 1, 0.5), (2016, 1, 1, 1.0), (2017, 0, 0, None),
                           (2018, 0, 0, None), (2019, 1, 1, 1.0), (2020, 2, 2, 1.0), (2021, 3, 3, 1.0)]
    assert (data["from_year"], data["to_year"]) == (2014, 2021)
    assert data["totals"] == {"papers": 10, "with_code": 8, "share_with_code": 0.8}
    assert data["all_papers"] == 11  # Dropout has no date: counted over all dates, in no year
    assert data["span"] == {"first_year": 2014, "last_year": 2021}


def test_text_is_a_heading_a_sentence_and_the_year_table(catalog_url: str) -> None:
    result = run_pwc(catalog_url, "trends", "--task", "image-classification")
    assert (result.code, result.err) == (0, "")
    assert result.out == (
        "# Papers per year: Image Classification (task, ID 7)\n\n"
        "10 papers from 2014 to 2021, 8 with code (80%); 11 papers in the catalog over all dates; "
        "its papers span 2014-2021.\n\n"
        "Year|Papers|With code|Share\n-|-:|-:|-:\n"
        "2014|1|0|0%\n2015|2|1|50%\n2016|1|1|100%\n2017|0|0|—\n2018|0|0|—\n2019|1|1|100%\n"
        "2020|2|2|100%\n2021|3|3|100%\n")


def test_method_with_an_explicit_range_counts_unofficial_code(catalog_url: str) -> None:
    data = _trends(catalog_url, "--method", "convolution", "--from-year", "2013", "--to-year", "2016")
    # 2013 is before the method's first paper: 0 without asking the catalog. U-Net 2015 has code (unofficial).
    assert _rows(data) == [(2013, 0, 0, None), (2014, 1, 0, 0.0), (2015, 3, 3, 1.0), (2016, 1, 1, 1.0)]
    assert data["totals"] == {"papers": 5, "with_code": 4, "share_with_code": 0.8}
    assert (data["all_papers"], data["span"]) == (6, {"first_year": 2014, "last_year": 2019})


def test_benchmark_counts_the_papers_with_results_on_it(catalog_url: str) -> None:
    data = _trends(catalog_url, "--benchmark", "ImageNet", "--to-year", "2020")
    assert data["entity"] == {"id": "3", "name": "ImageNet", "slug": "imagenet"}
    assert _rows(data) == [(2015, 1, 1, 1.0), (2016, 0, 0, None), (2017, 0, 0, None), (2018, 0, 0, None),
                           (2019, 1, 1, 1.0), (2020, 3, 3, 1.0)]
    assert (data["totals"]["papers"], data["all_papers"]) == (5, 8)


def test_a_share_is_rounded_to_three_places(catalog_url: str) -> None:
    data = _trends(catalog_url, "--method", "Transformer", "--from-year", "2019", "--to-year", "2019")
    assert _rows(data) == [(2019, 3, 2, 0.667)]


@pytest.mark.parametrize(("argv", "code", "message"), [
    pytest.param([], 2, "pwc: trends needs exactly one of --task, --method or --benchmark\n", id="none"),
    pytest.param(["--task", "Image Classification", "--method", "Transformer"], 2,
                 "pwc: trends needs exactly one of --task, --method or --benchmark\n", id="two"),
    pytest.param(["--task", "Image Classification", "--from-year", "2021", "--to-year", "2020"], 2,
                 "pwc: --from-year must not be after --to-year\n", id="reversed"),
    pytest.param(["--task", "Image Classification", "--from-year", "1990"], 2,
                 "pwc: --from-year 1990 to --to-year 2021 is 32 years; at most 30\n", id="too-wide"),
    pytest.param(["--task", "image classifier"], 4,
                 "pwc: Task not found: image classifier; closest results: Image Classification, "
                 "Image Generation, Self-Supervised Image Classification; give its exact name, slug or ID "
                 "(search the task list to find it)\n", id="unknown-task"),
    pytest.param(["--benchmark", "imagenet-1k"], 4,
                 "pwc: Benchmark not found: imagenet-1k; closest results: ImageNet; give its exact name, slug "
                 "or ID (search the benchmark list to find it)\n", id="unknown-benchmark"),
])
def test_usage_and_lookup_errors(catalog_url: str, argv: list[str], code: int, message: str) -> None:
    result = run_pwc(catalog_url, "trends", *argv)
    assert (result.code, result.out, result.err) == (code, "", message)


class Recording:
    """A cache that stores nothing and records each request's key and lifetime."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, float]] = []

    def fetch(self, key: str, ttl_s: float, loader: Callable[[], bytes]) -> bytes:
        self.calls.append((key, ttl_s))
        return loader()


def test_counts_are_cached_like_taxonomy_and_only_years_with_papers_are_asked(catalog_url: str) -> None:
    cache = Recording()
    with Client(catalog_url, cache=cache) as client:
        code = main(["trends", "--method", "Convolution", "--from-year", "2010", "--to-year", "2016", "--json"],
                    client=client, stdout=io.StringIO())
    assert code == 0
    # The method lookup; the oldest and newest paper; then 2014, 2015, 2016 (papers, then with code).
    # 2010-2013 are before its first paper and ask nothing. Paper lists alone would be kept 60 s.
    assert len(cache.calls) == 1 + 2 + 3 * 2
    assert {ttl for _key, ttl in cache.calls} == {TAXONOMY_TTL_S}


def test_pure_helpers() -> None:
    assert (share(2, 3), share(0, 4), share(0, 0)) == (0.667, 0.0, None)
    assert year_range(2014, 2021, None, None) == (2014, 2021)
    assert year_range(2000, 2021, None, None) == (2012, 2021)
    assert year_range(2000, 2021, None, 2015) == (2006, 2015)
    assert year_range(2014, 2021, 2023, None) == (2023, 2023)
    assert year_range(None, None, None, None) is None
    assert year_range(None, None, None, 2020) == (2020, 2020)
    payload = trends_payload("task", {"id": 5, "name": "Undated"}, [], total=2, span=(None, None))
    assert payload["entity"] == {"id": "5", "name": "Undated", "slug": None}
    assert trends_markdown(payload)[-1] == "2 papers in the catalog, none with a publication date."


@pytest.mark.parametrize("echo", [
    pytest.param(lambda params: {}, id="no-echo"),
    # A catalog without the has_code filter echoes the rest and would count every paper as with code.
    pytest.param(lambda params: {k: v for k, v in params.items() if k in ("dataset", "start_date", "end_date")},
                 id="has-code-not-echoed"),
])
def test_a_catalog_that_does_not_confirm_the_filters_fails_closed(echo: Callable[[dict[str, Any]], Any]) -> None:
    def papers(params: dict[str, Any]) -> dict[str, Any]:
        return {"count": 2, "results": [{"id": "1", "published": "2020-05-01"}], "applied_filters": echo(params)}

    routes = {"datasets/": {"count": 1, "results": [{"id": "3", "name": "ImageNet", "slug": "imagenet"}]},
              "papers/": papers}
    with stub_catalog(routes) as stub:
        result = run_pwc(stub.url, "trends", "--benchmark", "ImageNet")
    assert (result.code, result.out) == (4, "")
    assert result.err == ("pwc: Papers API did not confirm the trend filters; the catalog must be upgraded before "
                          "using trends\n")


def test_chart_is_a_deterministic_png_of_the_years(catalog_url: str, tmp_path: Path) -> None:
    path = tmp_path / "trends.png"
    result = run_pwc(catalog_url, "trends", "--task", "Image Classification", "--chart", str(path))
    assert (result.code, result.err) == (0, "") and result.out.startswith("# Papers per year")
    data = _trends(catalog_url, "--task", "Image Classification")
    png = path.read_bytes()
    assert png == trends_png(data) == trends_png(json.loads(json.dumps(data)))
    with Image.open(io.BytesIO(png)) as image:
        assert (image.size, image.format, image.mode) == ((WIDTH, HEIGHT), "PNG", "P")
        assert len(image.getcolors() or []) > 2 and not image.info  # drawn, and no metadata chunk
    assert len(png) < 20 * 1024
    empty = trends_payload("task", {"id": 5, "name": "Undated"}, [], total=2, span=(None, None))
    assert trends_png(empty)[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_unwritable_chart_file_is_a_usage_error(catalog_url: str, tmp_path: Path) -> None:
    target = tmp_path / "missing" / "trends.png"
    result = run_pwc(catalog_url, "trends", "--task", "Image Classification", "--chart", str(target))
    assert (result.code, result.out) == (2, "")
    assert result.err == f"pwc: cannot write --chart {target}: No such file or directory\n"

"""``pwc benchmark --name`` and ``pwc benchmark list`` against a real local HTTP stub (§2.15, §2.16, §6 14–20, 34–41)."""

from __future__ import annotations

from typing import Any

import pytest

from pwc.cli import build_parser
from tests.pwc.stub import StubCatalog
from tests.pwc.test_tasks import json_data, run_cli, stub, wire  # noqa: F401 - stub is a fixture

SWE = {"id": 42, "name": "SWE-Bench Pro", "full_name": "swe-bench pro", "slug": "swe-bench-pro",
       "description": "A coding-agent benchmark."}


def _eval(model: str, **fields: Any) -> dict[str, Any]:
    return {"paper_id": "9", "dataset_id": 42, "model_name": model, "paper_title": "An Agent Paper",
            "paper_arxiv_id": "2601.12345", "paper_published_date": "2026-01-20", "is_open": True, **fields}


SWE_ROWS = [
    _eval("Agent | One", task_id=3, task_name="Coding Agents", best_rank=1, metrics={"Resolved": 55.5},
          best_metric="Resolved", num_parameters=10_000_000_000),
    _eval("Agent | One", task_id=3, task_name="Coding Agents", best_rank=2, metrics={"Pass@1": 50},
          num_parameters=10_000_000_000),
    _eval("Agent | One", task_id=8, task_name="Software Engineering", task_slug="software-engineering",
          best_rank=4, metrics={"Resolved": 55.5}, num_parameters=10_000_000_000),
]


def _serve_swe(stub: StubCatalog, rows: list[dict] = SWE_ROWS) -> None:
    stub.routes.update({"datasets/": {"count": 1, "results": [SWE]},
                        "datasets/42/evaluations/": {"count": len(rows), "results": rows}})


# ---------------------------------------------------------------- parsing


@pytest.mark.parametrize("flag", ["--limit", "--page-size"])
def test_list_limit_is_an_alias_of_page_size(flag: str) -> None:
    assert build_parser().parse_args(["benchmark", "list", flag, "7"]).page_size == 7


def test_leaderboard_options_parse_to_typed_values() -> None:
    args = build_parser().parse_args([
        "benchmark", "--name", "SWE-Bench Pro", "--limit", "5", "--require-metrics", "Resolved,Latency",
        "--min", "Resolved=50", "--max", "Latency=2.5", "--sort", "Resolved:desc",
        "--pareto", "Resolved:higher,Latency:lower", "--max-parameters", "3B"])
    assert (args.require_metrics, args.min, args.max, args.sort, args.pareto, args.max_parameters) == (
        ("Resolved", "Latency"), [("Resolved", 50.0)], [("Latency", 2.5)], ("Resolved", "desc"),
        (("Resolved", "higher"), ("Latency", "lower")), 3_000_000_000)


# ---------------------------------------------------------------- leaderboard


def test_leaderboard_captured_merges_rows_into_a_markdown_table(stub: StubCatalog) -> None:
    _serve_swe(stub)
    code, out, err = run_cli(stub.url, ["benchmark", "--name", "SWE-Bench Pro"])
    assert (code, err) == (0, "")
    assert stub.calls == [("datasets/", wire(q="SWE-Bench Pro", page=1, page_size=100)),
                          ("datasets/42/evaluations/", wire(page=1, page_size=100, ordering="best_rank"))]
    assert out.startswith("# SWE-Bench Pro\n\nA coding-agent benchmark.\n\n"
                          "[View benchmark](https://paperswithcode.co/benchmark/swe-bench-pro)\n\n"
                          "Top 1 of 3 evaluation rows.\n\n")
    assert "| Rank | Model | Parameters | Scores | Task | Paper | Published | Open |\n" \
           "| ---: | --- | ---: | --- | --- | --- | --- | :---: |\n" in out
    assert ("| 1 | Agent \\| One | 10B | Resolved: 55.5, Pass@1: 50 | Coding Agents | "
            "[An Agent Paper](https://paperswithcode.co/paper/2601.12345) | 2026-01-20 | yes |") in out


def test_leaderboard_json_has_one_merged_row_with_rank_scopes(stub: StubCatalog) -> None:
    _serve_swe(stub)
    code, out, _ = run_cli(stub.url, ["benchmark", "--name", "swe-bench-pro", "--json"])
    data = json_data(out)
    assert (code, data["count"], data["matched_count"], data["benchmark"]) == (0, 3, 1, SWE)
    assert data["results"][0]["rank_scopes"] == [
        {"task_id": "3", "task_name": "Coding Agents", "task_slug": None, "rank": 1},
        {"task_id": "8", "task_name": "Software Engineering", "task_slug": "software-engineering", "rank": 4}]


def test_leaderboard_on_a_tty_is_an_aligned_plain_table(stub: StubCatalog) -> None:
    _serve_swe(stub, [_eval("Agent One", task_id=3, task_name="Coding Agents", best_rank=1,
                            metrics={"Resolved": 55.5}, is_open=None)])
    code, out, _ = run_cli(stub.url, ["benchmark", "--name", "SWE-Bench Pro"], isatty=True)
    assert code == 0
    assert out.startswith("SWE-Bench Pro\n\nA coding-agent benchmark.\n")
    assert "View benchmark: https://paperswithcode.co/benchmark/swe-bench-pro" in out
    assert "Rank  Model      Parameters  Scores          Task" in out
    assert "   1  Agent One  —           Resolved: 55.5  Coding Agents" in out
    assert "An Agent Paper [2601.12345]" in out
    assert out.rstrip().endswith("unknown"), "is_open null renders as unknown"
    assert "| ---:" not in out


LM = {"id": 42, "name": "Language Model Benchmark", "slug": "lmb"}


def _param_page(rows: list[dict], next_page: int | None = None, count: int | None = None) -> dict:
    return {"count": len(rows) if count is None else count, "results": rows, "next_page": next_page,
            "parameter_coverage_known": len(rows), "parameter_coverage_total": len(rows)}


def test_max_parameters_uses_the_evaluations_endpoint(stub: StubCatalog) -> None:
    rows = [_eval("Edge 3B", best_rank=4, metrics={"Perplexity": 12.5}, num_parameters=3_000_000_000)]
    stub.routes.update({"datasets/": {"results": [LM]}, "evaluations/": _param_page(rows)})
    code, out, _ = run_cli(stub.url, ["benchmark", "--name", "Language Model Benchmark", "--is-open", "true",
                                      "--max-parameters", "3B", "--json"])
    data = json_data(out)
    assert stub.calls[1] == ("evaluations/", wire(page=1, page_size=100, dataset_id="42", ordering="best_rank",
                                                  is_open="true", max_parameters_exclusive=3000000001))
    assert (code, data["matched_count"], data["results"][0]["model_name"],
            data["results"][0]["num_parameters"]) == (0, 1, "Edge 3B", 3_000_000_000)
    code, out, _ = run_cli(stub.url, ["benchmark", "--name", "lmb", "--max-parameters", "3B"])
    assert "| 4 | Edge 3B | 3B | Perplexity: 12.5 |" in out


def test_max_parameters_needs_coverage_fields(stub: StubCatalog) -> None:
    stub.routes.update({"datasets/": {"results": [LM]}, "evaluations/": {"count": 0, "results": []}})
    assert run_cli(stub.url, ["benchmark", "--name", "lmb", "--max-parameters", "3B"]) == (
        4, "", "pwc: parameter filtering requires a compatible API; server must be upgraded\n")


@pytest.mark.parametrize("sizes", [pytest.param([3_000_000_001], id="too-big"),
                                   pytest.param([2_000_000_000, 2_500_000_000], id="conflict"),
                                   pytest.param([2_000_000_000, None], id="incomplete")])
def test_max_parameters_fails_closed_on_models_outside_the_limit(stub: StubCatalog, sizes: list) -> None:
    rows = [_eval("M", metrics={f"m{i}": 1}, num_parameters=size) for i, size in enumerate(sizes)]
    stub.routes.update({"datasets/": {"results": [LM]}, "evaluations/": _param_page(rows)})
    assert run_cli(stub.url, ["benchmark", "--name", "lmb", "--max-parameters", "3B"]) == (
        4, "", "pwc: API returned a model outside the requested parameter limit\n")


def test_max_parameters_scan_follows_next_page_and_merges_siblings(stub: StubCatalog) -> None:
    pages = {"1": _param_page([_eval("Model A", metrics={"Accuracy": 80}, num_parameters=10**9),
                               _eval("Model B", metrics={"Accuracy": 90, "Latency": 3}, num_parameters=10**9)],
                              next_page=2, count=3),
             "2": _param_page([_eval("Model A", metrics={"Latency": 1}, num_parameters=10**9)], count=3)}
    stub.routes.update({"datasets/": {"results": [LM]}, "evaluations/": lambda params: pages[params["page"]]})
    code, out, err = run_cli(stub.url, ["benchmark", "--name", "lmb", "--max-parameters", "2B", "--require-metrics",
                                        "Accuracy,Latency", "--sort", "Accuracy:desc", "--json"])
    assert code == 0, err
    assert [params["page"] for path, params in stub.calls if path == "evaluations/"] == ["1", "2"]
    results = json_data(out)["results"]
    assert [r["model_name"] for r in results] == ["Model B", "Model A"]
    assert results[1]["metrics"] == {"Accuracy": 80, "Latency": 1}


COCO = {"id": 7, "name": "COCO", "slug": "coco"}
COCO_PAGES = {
    "1": {"count": 3, "results": [_eval("Fast", paper_id="1", metrics={"mAP": "58", "FPS": "100"}),
                                  _eval("Accurate", paper_id="2", metrics={"mAP": 62, "FPS": 20})]},
    "2": {"count": 3, "results": [_eval("Dominated", paper_id="3", metrics={"mAP": 50, "FPS": 10})]},
}


def _serve_coco(stub: StubCatalog) -> None:
    stub.routes.update({"datasets/": {"results": [COCO]},
                        "datasets/7/evaluations/": lambda params: COCO_PAGES[params["page"]]})


def test_pareto_front_sorted_by_fps(stub: StubCatalog) -> None:
    _serve_coco(stub)
    code, out, err = run_cli(stub.url, ["benchmark", "--name", "COCO", "--pareto", "mAP:higher,FPS:higher",
                                        "--sort", "FPS:desc"])
    assert (code, err) == (0, "")
    assert "Showing 2 of 2 matching merged rows from 3 stored evaluation rows." in out
    assert out.index("Fast") < out.index("Accurate") and "Dominated" not in out
    assert [p["page"] for path, p in stub.calls if path.endswith("evaluations/")] == ["1", "2"]


def test_thresholds_select_rows(stub: StubCatalog) -> None:
    _serve_coco(stub)
    code, out, _ = run_cli(stub.url, ["benchmark", "--name", "COCO", "--require-metrics", "mAP,FPS",
                                      "--min", "FPS=60", "--max", "mAP=60", "--json"])
    assert [r["model_name"] for r in json_data(out)["results"]] == ["Fast"]


def test_unknown_metric_is_a_usage_error_after_the_fetch(stub: StubCatalog) -> None:
    _serve_coco(stub)
    code, out, err = run_cli(stub.url, ["benchmark", "--name", "COCO", "--sort", "Latency"])
    assert (code, out) == (2, "")
    assert "unknown metric(s): Latency; available metrics: FPS, mAP" in err  # as the caller spelled it


def test_metric_scan_stops_on_an_empty_page(stub: StubCatalog) -> None:
    stub.routes.update({"datasets/": {"results": [COCO]},
                        "datasets/7/evaluations/": lambda p: COCO_PAGES["1"] if p["page"] == "1" else
                        {"count": 500, "results": []}})
    code, out, _ = run_cli(stub.url, ["benchmark", "--name", "COCO", "--sort", "FPS", "--json"])
    assert code == 0 and len(stub.calls) == 3
    assert json_data(out)["count"] == 3


@pytest.mark.parametrize(("argv", "routes", "code", "message"), [
    pytest.param(["benchmark"], {}, 4, "pwc: benchmark inspection requires --name\n", id="no-name"),
    pytest.param(["benchmark", "--name", "Nope"], {"datasets/": {"results": [COCO, LM]}}, 4,
                 "pwc: Benchmark not found: Nope; closest results: COCO, Language Model Benchmark\n", id="not-found"),
])
def test_leaderboard_lookup_errors(stub: StubCatalog, argv: list, routes: dict, code: int, message: str) -> None:
    stub.routes.update(routes)
    assert run_cli(stub.url, argv) == (code, "", message)


@pytest.mark.parametrize(("argv", "message"), [
    *(pytest.param(["--max-parameters", v], "argument --max-parameters:", id=f"size-{v}") for v in
      ["0", "-1", "1.5", "3K", "3B parameters", "_3B", "3_B", "3B_", "1__000", "1_.5B"]),
    pytest.param(["--limit", "0"], "argument --limit: --limit must be 1-100", id="limit"),
    pytest.param(["--is-open", "yes"], "argument --is-open: invalid choice", id="is-open"),
    pytest.param(["--require-metrics", ","], "metric list must not be empty", id="empty-metrics"),
    pytest.param(["--min", "FPS"], "expected METRIC=VALUE", id="min-format"),
    pytest.param(["--max", "FPS=x"], "metric threshold must be numeric", id="max-numeric"),
    pytest.param(["--sort", "FPS:up"], "expected METRIC[:asc|desc]", id="sort"),
    pytest.param(["--pareto", "FPS:higher"], "Pareto selection requires at least two metrics", id="pareto-one"),
    pytest.param(["--pareto", "FPS,mAP"], "expected METRIC:higher,METRIC:lower", id="pareto-direction"),
])
def test_leaderboard_usage_errors_exit_2_without_requests(stub: StubCatalog, argv: list, message: str) -> None:
    code, out, err = run_cli(stub.url, ["benchmark", "--name", "COCO", *argv])
    assert (code, out, stub.calls) == (2, "", [])
    assert message in err


# ---------------------------------------------------------------- benchmark list

TRENDS = {"task_id": 4, "results": [
    {"id": 1, "slug": "new-ocr", "name": "NewOCR", "description": "Recent OCR benchmark.",
     "hf_url": "https://huggingface.co/datasets/new-ocr", "recent_paper_count": 5, "all_time_paper_count": 6,
     "support_weighted_score": 2.5, "best_model_name": "M1", "best_paper_title": "P1", "best_code_url": None},
    {"id": 2, "slug": "classic", "name": "Classic OCR", "full_name": "Classic OCR Set", "recent_paper_count": 1,
     "all_time_paper_count": 40, "trend_score": 0.5},
]}
DATASETS = {"count": 1, "results": [{"id": 20, "name": "ImageNet", "description": "Images.",
                                     "hf_url": "https://huggingface.co/datasets/imagenet-1k",
                                     "full_name": "ImageNet Large", "paper_count": 1234}]}
GROUPED = {"results": [
    {"id": 1, "name": "Vision", "tasks": [{"id": 10, "name": "Image Classification", "slug": "image-classification",
        "benchmarks": [{"id": 20, "name": "ImageNet [1K]", "slug": "imagenet",
                        "full_name": "ImageNet Large Scale Visual Recognition",
                        "description": "Image classification benchmark.",
                        "hf_url": "https://huggingface.co/datasets/imagenet-1k", "evaluation_count": 1234}]}]},
    {"id": 2, "name": "Audio", "tasks": []},
]}


def test_task_scoped_trending_list_keeps_api_order_and_is_aligned(stub: StubCatalog) -> None:
    stub.routes["tasks/OCR/trending-benchmarks"] = TRENDS
    code, out, err = run_cli(stub.url, ["benchmark", "list", "--task", "OCR"])
    assert (code, err) == (0, "")
    assert stub.calls == [("tasks/OCR/trending-benchmarks",
                           wire(limit=100, min_recent_papers=0, include_descendants=False))]
    header, first, second = out.splitlines()
    assert header.split() == ["id", "slug", "name", "description", "hf_url", "recent_papers", "ranking_score",
                              "best_model", "paper_title", "code"]
    assert "Recent OCR benchmark." in first and "https://huggingface.co/datasets/new-ocr" in first
    assert "Classic OCR" in second and "0.5" in second


def test_trending_list_filters_and_pages_on_the_client(stub: StubCatalog) -> None:
    stub.routes["tasks/Scene%20Text/trending-benchmarks"] = TRENDS
    code, out, _ = run_cli(stub.url, ["benchmark", "list", "--task", "Scene Text", "--search", "classic ocr set",
                                      "--min-eval-count", "10", "--json"])
    data = json_data(out)
    assert (code, data["count"], [r["id"] for r in data["results"]], data["task_id"]) == (0, 1, [2], 4)
    code, out, err = run_cli(stub.url, ["benchmark", "list", "--task", "Scene Text", "--page", "2",
                                        "--page-size", "1", "--json"])
    assert [r["id"] for r in json_data(out)["results"]] == [2]


def test_group_by_area_with_task_filters_warns_and_stays_flat(stub: StubCatalog) -> None:
    stub.routes["tasks/OCR/trending-benchmarks"] = TRENDS
    code, out, err = run_cli(stub.url, ["benchmark", "list", "--task", "OCR", "--group-by-area"])
    assert (code, err) == (0, "# filters select task-scoped flat output; --group-by-area ignored\n")
    assert out.startswith("id  slug     name")


def test_flat_catalogue_list(stub: StubCatalog) -> None:
    stub.routes["datasets/"] = DATASETS
    code, out, _ = run_cli(stub.url, ["benchmark", "list", "--flat"])
    assert stub.calls == [("datasets/", wire(page=1, page_size=50, include_descendants=False, ordering="name"))]
    header, row = out.splitlines()
    assert header.split() == ["id", "name", "description", "hf_url", "full_name", "evals"]
    assert "Images." in row and "https://huggingface.co/datasets/imagenet-1k" in row and row.endswith("1234")


def test_order_dir_desc_without_order_by_sends_minus_name(stub: StubCatalog) -> None:
    stub.routes["datasets/"] = DATASETS
    assert run_cli(stub.url, ["benchmark", "list", "--order-dir", "desc", "--json"])[0] == 0
    assert stub.calls[0][1]["ordering"] == "-name"


def test_is_open_before_list_is_kept(stub: StubCatalog) -> None:
    stub.routes["datasets/"] = DATASETS
    code, out, _ = run_cli(stub.url, ["benchmark", "--is-open", "true", "list", "--json"])
    assert code == 0
    assert stub.calls[0] == ("datasets/", wire(page=1, page_size=50, include_descendants=False, is_open="true",
                                               ordering="name"))


def test_grouped_list_output_is_exact(stub: StubCatalog) -> None:
    stub.routes["areas/with-task-benchmarks/"] = GROUPED
    code, out, _ = run_cli(stub.url, ["benchmark", "list", "--group-by-area", "--area", "Vision",
                                      "--benchmarks-per-task", "5"])
    assert code == 0
    assert stub.calls == [("areas/with-task-benchmarks/", wire(benchmarks_per_task=5, min_eval_count=2))]
    assert out == ("# Area: Vision\n\nInspect a benchmark with `pwc benchmark --name SLUG`.\n\n"
                   "## Image Classification (`image-classification`)\n\n"
                   "- ImageNet [1K] — description: Image classification benchmark.; "
                   "HF: https://huggingface.co/datasets/imagenet-1k; full name: ImageNet Large Scale Visual "
                   "Recognition; slug: `imagenet`; ID: `20`; 1,234 evaluations\n")


def test_benchmark_list_on_a_tty_groups_every_area(stub: StubCatalog) -> None:
    stub.routes["areas/with-task-benchmarks/"] = GROUPED
    code, out, _ = run_cli(stub.url, ["benchmark", "list"], isatty=True)
    assert code == 0
    assert [p for p, _ in stub.calls] == ["areas/with-task-benchmarks/"]
    assert out.endswith("1,234 evaluations\n\n# Area: Audio\n\nInspect a benchmark with `pwc benchmark --name SLUG`.\n")


@pytest.mark.parametrize(("argv", "code", "message"), [
    pytest.param(["benchmark", "--max-parameters", "3B", "list"], 2,
                 "pwc: --max-parameters is only valid with benchmark --name\n", id="max-parameters"),
    pytest.param(["benchmark", "--sort", "FPS", "list"], 2, "pwc: --sort is only valid with benchmark --name\n",
                 id="sort-before-list"),
    pytest.param(["benchmark", "list", "--area", "Vision", "--flat"], 2,
                 "pwc: --area requires grouped output; drop --flat\n", id="area-flat"),
    pytest.param(["benchmark", "list", "--area", "Vision", "--page", "2"], 2,
                 "pwc: --area cannot be combined with task/search/pagination filters\n", id="area-filters"),
    pytest.param(["benchmark", "list", "--order-by", "trending"], 2, "pwc: --order-by trending requires --task\n",
                 id="trending-needs-task"),
])
def test_benchmark_list_usage_errors(stub: StubCatalog, argv: list, code: int, message: str) -> None:
    assert run_cli(stub.url, argv) == (code, "", message)
    assert stub.calls == []


@pytest.mark.parametrize(("argv", "message"), [
    pytest.param(["--limit", "7", "--page-size", "101"], "argument --page-size/--limit: --page-size must be 1-100",
                 id="page-size"),
    pytest.param(["--benchmarks-per-task", "11"], "--benchmarks-per-task must be 1-10", id="per-task"),
    pytest.param(["--group-by-area", "--flat"], "not allowed with argument --group-by-area", id="exclusive"),
    pytest.param(["--order-by", "stars"], "argument --order-by: invalid choice", id="order-by"),
])
def test_benchmark_list_parse_errors(stub: StubCatalog, argv: list, message: str) -> None:
    code, out, err = run_cli(stub.url, ["benchmark", "list", *argv])
    assert (code, out, stub.calls) == (2, "", [])
    assert message in err


def test_trending_requires_a_results_list(stub: StubCatalog) -> None:
    stub.routes["tasks/OCR/trending-benchmarks"] = {"results": None}
    assert run_cli(stub.url, ["benchmark", "list", "--task", "OCR"]) == (
        4, "", "pwc: API response did not contain benchmark trends\n")


# ---------------------------------------------------------------- sample catalog


def test_benchmark_commands_against_the_sample_catalog(catalog_url: str) -> None:
    code, out, err = run_cli(catalog_url, ["benchmark", "list", "--flat", "--json"])
    assert code == 0, err
    rows = json_data(out)["results"]
    assert rows
    code, out, err = run_cli(catalog_url, ["benchmark", "list", "--flat"])
    assert code == 0 and out.split()[:6] == ["id", "name", "description", "hf_url", "full_name", "evals"]
    code, out, err = run_cli(catalog_url, ["benchmark", "--name", str(rows[0]["name"]), "--json"])
    assert code == 0, err
    data = json_data(out)
    assert data["benchmark"]["id"] == rows[0]["id"]
    code, out, err = run_cli(catalog_url, ["benchmark", "--name", str(rows[0]["name"])], isatty=True)
    assert code == 0 and "View benchmark: https://paperswithcode.co/benchmark/" in out
    code, out, err = run_cli(catalog_url, ["benchmark", "list", "--group-by-area", "--json"])
    assert code == 0, err


def test_leaderboard_metric_selection_on_the_sample_catalog(catalog_url: str) -> None:
    from pwc.leaderboard import metric_value

    code, out, err = run_cli(catalog_url, ["benchmark", "list", "--flat", "--json", "--page-size", "100"])
    assert code == 0, err
    benchmarks = [b for b in json_data(out)["results"] if b.get("evaluation_count", b.get("paper_count"))]
    assert benchmarks
    name = str(benchmarks[0]["name"])
    code, out, err = run_cli(catalog_url, ["benchmark", "--name", name, "--json"])
    rows = json_data(out)["results"]
    metric = next(str(m) for row in rows for m in row["metrics"])
    code, out, err = run_cli(catalog_url, ["benchmark", "--name", name, "--sort", f"{metric}:desc", "--json"])
    assert code == 0, err
    values = [metric_value(row["metrics"], metric) for row in json_data(out)["results"]]
    assert values and values == sorted(values, reverse=True)
    code, out, err = run_cli(catalog_url, ["benchmark", "--name", name, "--sort", "no such metric"])
    assert (code, out) == (2, "") and "unknown metric(s): no such metric; available metrics: " in err
    code, out, err = run_cli(catalog_url, ["benchmark", "--name", name, "--max-parameters", "1B", "--json"])
    assert code in (0, 4), err
    if code == 0:
        assert all(r["num_parameters"] <= 10**9 for r in json_data(out)["results"])


def test_the_parameter_column_reads_a_parameter_metric_when_the_count_is_missing(stub: StubCatalog) -> None:
    """Swin-L's row has no ``num_parameters`` but scores "Number of params: 197M": the column says 197M."""
    rows = [_eval("Swin-L", paper_id="1", metrics={"Top 1 Accuracy": 87.3, "Number of params": "197M"}),
            _eval("ViT-L", paper_id="2", metrics={"Top 1 Accuracy": 87.76}, num_parameters=307_000_000),
            _eval("Bare", paper_id="3", metrics={"Top 1 Accuracy": 80.0})]
    stub.routes.update({"datasets/": {"results": [COCO]}, "datasets/7/evaluations/": {"count": 3, "results": rows}})
    for extra in ([], ["--pareto", "Top 1 Accuracy:higher,Number of params:lower"]):
        code, out, err = run_cli(stub.url, ["benchmark", "--name", "COCO", *extra])
        assert (code, err) == (0, "")
        swin = next(line for line in out.splitlines() if "Swin-L" in line)
        assert swin.split("|")[3].strip() == "197M", swin
        if not extra:
            vit = next(line for line in out.splitlines() if "ViT-L" in line)
            assert vit.split("|")[3].strip() == "307M"


def test_the_leaderboard_is_best_first_like_the_tool(stub: StubCatalog) -> None:
    """Without --sort or --pareto, rows go best first by the primary metric (a task-scoped #1 of a
    weaker model no longer tops the board), in the JSON and the table, which says so."""
    rows = [_eval("SimCLR", paper_id="1", metrics={"Top 1 Accuracy": "76.5%"}, best_metric="Top 1 Accuracy",
                  best_rank=1),
            _eval("ViT-H", paper_id="2", metrics={"Top 1 Accuracy": "88.55%"}, best_metric="Top 1 Accuracy",
                  best_rank=1),
            _eval("MAE", paper_id="3", metrics={"Top 1 Accuracy": "87.8%"}, best_metric="Top 1 Accuracy", best_rank=2)]
    stub.routes.update({"datasets/": {"results": [COCO]}, "datasets/7/evaluations/": {"count": 3, "results": rows}})
    code, out, err = run_cli(stub.url, ["benchmark", "--name", "COCO", "--json"])
    assert (code, err) == (0, "")
    data = json_data(out)
    assert [r["model_name"] for r in data["results"]] == ["ViT-H", "MAE", "SimCLR"]
    assert data["order"] == {"metric": "Top 1 Accuracy", "direction": "higher"}
    code, out, _ = run_cli(stub.url, ["benchmark", "--name", "COCO", "--limit", "2"])
    assert "Ordered by Top 1 Accuracy (higher first)" in out
    assert out.index("ViT-H") < out.index("MAE") and "SimCLR" not in out
    code, out, _ = run_cli(stub.url, ["benchmark", "--name", "COCO", "--sort", "Top 1 Accuracy:asc", "--json"])
    assert [r["model_name"] for r in json_data(out)["results"]] == ["SimCLR", "MAE", "ViT-H"]
    assert "order" not in json_data(out)

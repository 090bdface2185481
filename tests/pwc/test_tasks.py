"""``pwc task`` / ``pwc task list`` against a real local HTTP stub (§2.10, §6 cases 21–25, 33).

The ``stub`` fixture (a ``tests.pwc.stub.StubCatalog``: a real threaded HTTP
server recording every call) and ``run_cli``/``wire``/``json_data`` live here
and are shared by the other cli-B test modules (methods, entities, benchmarks);
commands run through the real ``pwc.transport.Client``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest

from pwc.cli import main
from pwc.transport import Client
from tests.pwc.stub import StubCatalog, stub_catalog


@pytest.fixture
def stub() -> Iterator[StubCatalog]:
    """A started ``tests.pwc.stub.StubCatalog`` (a real HTTP server); tests fill ``stub.routes``."""
    with stub_catalog() as api:
        yield api


def wire(**params: Any) -> dict[str, Any]:
    """Expected query parameters as they arrive on the wire: None dropped, bools lower-case, str()."""
    return {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in params.items() if v is not None}


def run_cli(base_url: str, argv: list[str], *, isatty: bool = False) -> tuple[int, str, str]:
    """Run ``pwc.cli.main`` through a real ``Client``; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with Client(base_url) as client:
        code = main(argv, client=client, stdout=out, stderr=err, isatty=isatty)
    return code, out.getvalue(), err.getvalue()


def json_data(stdout: str) -> Any:
    """The ``data`` of a ``--json`` output line (checks the envelope)."""
    envelope = json.loads(stdout)
    assert envelope["schema_version"] == "v1"
    return envelope["data"]


# ---------------------------------------------------------------- fixtures' data

AREAS = {"count": 2, "results": [{"id": 1, "name": "Vision"}, {"id": 6, "name": "Audio"}]}
WITH_TASKS = {"results": [
    {"id": 6, "name": "Audio", "tasks": [
        {"id": 30, "slug": "audio-classification", "name": "Audio Classification", "paper_count": 63,
         "benchmark_count": 1, "evaluation_count": 8}]},
    {"id": 1, "name": "Vision", "tasks": [
        {"id": 11, "slug": "tiny-task", "name": "tiny task", "paper_count": 1, "benchmark_count": 1,
         "evaluation_count": 1},
        {"id": 10, "slug": "image-classification", "name": "Image Classification", "paper_count": 2389,
         "benchmark_count": 12, "evaluation_count": 345}]},
]}
TASKS = {"count": 1, "results": [
    {"id": 10, "slug": "image-classification", "name": "Image Classification", "area_id": 1, "level": 0,
     "paper_count": 123, "benchmark_count": 4, "evaluation_count": 567}]}
STR_SUMMARY = {"id": "17", "slug": "scene-text-recognition", "name": "Scene Text Recognition", "area_id": 1,
               "level": 1, "paper_count": 204, "benchmark_count": 21, "evaluation_count": 401}
STR_PAGE = {
    "task": {"id": "17", "slug": "scene-text-recognition", "name": "Scene Text Recognition",
             "description": "Read text\nin scenes.", "research_trends": ["Transformers"], "area_id": 1,
             "level": 1, "paper_count": 1},
    "parents": [{"id": 2, "slug": "ocr", "name": "OCR"}, {"id": 1, "slug": "cv", "name": "Vision Tasks"}],
    "sisters": [{"id": 18, "slug": "text-detection", "name": "Text Detection"}],
    "children": [{"id": 19, "slug": "curved-text", "name": "Curved Text"}],
    "recommended_frameworks": [{"id": 1, "url": "https://github.com/huggingface/transformers",
                                "owner": "huggingface", "name": "transformers", "num_stars": 150000}],
    "benchmarks": [{"id": 5, "slug": "iiit5k", "name": "IIIT5K", "paper_count": 40},
                   {"id": 6, "slug": "svt", "name": "SVT", "paper_count": 30, "best_model_name": "PARSeq"}],
    "subtask_benchmarks": [{"subtask_id": 19, "benchmarks": [{"id": 7, "slug": "ctw", "name": "CTW"}]}],
}
STR_TRENDS = {"task_id": "17", "results": [{"id": 6, "support_weighted_score": 2.5},
                                           {"id": 99, "name": "not on page"}]}
STR_PAPERS = {"count": 204, "results": [
    {"id": "p1", "arxiv_id": "2401.00001", "title": "A Reader", "published": "2024-01-02", "citation_count": 3,
     "methods": [{"id": 1, "slug": "transformer", "name": "Transformer"}]}]}


def _serve_task(stub: StubCatalog) -> None:
    stub.routes.update({"tasks/": {"count": 1, "results": [STR_SUMMARY]}, "tasks/17": STR_SUMMARY,
                        "tasks/17/page": STR_PAGE, "tasks/17/trending-benchmarks": STR_TRENDS,
                        "tasks/17/papers": STR_PAPERS, "areas/": AREAS})


# ---------------------------------------------------------------- task detail


def test_task_detail_captured_makes_the_five_calls_in_order(stub: StubCatalog) -> None:
    _serve_task(stub)
    code, out, err = run_cli(stub.url, ["task", "--name", "scene-text-recognition"])
    assert (code, err) == (0, "")
    assert stub.calls == [
        ("tasks/", wire(q="scene-text-recognition", page=1, page_size=100)),
        ("tasks/17/page", {}),
        ("tasks/17/trending-benchmarks", wire(limit=100, min_recent_papers=0)),
        ("tasks/17/papers", wire(page=1, page_size=100, order_by="trending", order_dir="desc",
                                 include_resources=True)),
        ("areas/", wire(page=1, page_size=500, ordering="name")),
    ]
    for expected in ["# Scene Text Recognition",
                     "Area: Vision · Level: 1 · 204 papers · 21 benchmarks · 401 evaluations",
                     "Read text in scenes.",
                     "[View task](https://paperswithcode.co/tasks/scene-text-recognition)",
                     "## Task hierarchy", "[Vision Tasks](https://paperswithcode.co/tasks/cv) → "
                     "[OCR](https://paperswithcode.co/tasks/ocr) → [Scene Text Recognition]",
                     "## Recommended frameworks",
                     "- [huggingface/transformers](https://github.com/huggingface/transformers) — 150,000 stars",
                     "## Sister tasks", "## Common methods (from 1 sampled papers)",
                     "- [Transformer](https://paperswithcode.co/methods/transformer) — 1 papers",
                     "## Benchmarks by subtask", "  - [CTW](https://paperswithcode.co/benchmark/ctw)",
                     "## Trending papers (top 1 of 204)", "— 2024-01-02, 3 citations",
                     "trend score: 2.50", "best model: PARSeq"]:
        assert expected in out
    assert out.index("[SVT]") < out.index("[IIIT5K]"), "trend order beats page order"
    assert "not on page" not in out


def test_task_detail_on_a_tty_uses_plain_headings_and_links(stub: StubCatalog) -> None:
    _serve_task(stub)
    code, out, _ = run_cli(stub.url, ["task", "--name", "Scene Text Recognition"], isatty=True)
    assert code == 0
    assert out.startswith("Scene Text Recognition\n")
    assert "View task: https://paperswithcode.co/tasks/scene-text-recognition" in out
    assert "\nRecommended frameworks\n" in out and "## " not in out
    assert "- huggingface/transformers — 150,000 stars — https://github.com/huggingface/transformers" in out
    assert "Vision Tasks [cv] → OCR [ocr] → Scene Text Recognition [scene-text-recognition]" in out
    assert "- A Reader [2401.00001] — 2024-01-02, 3 citations" in out


@pytest.mark.parametrize("name", [pytest.param("Scene Text Recognition", id="name"),
                                  pytest.param("17", id="numeric")])
def test_task_detail_json(stub: StubCatalog, name: str) -> None:
    _serve_task(stub)
    code, out, _ = run_cli(stub.url, ["task", "--name", name, "--json"])
    data = json_data(out)
    assert code == 0
    assert (data["task"]["id"], data["area"]["name"], data["paper_sample_size"], data["paper_count"]) == (
        "17", "Vision", 1, 204)
    assert data["task"]["paper_count"] == 204, "the summary's count overrides the page's"
    assert [b["name"] for b in data["benchmarks"]] == ["SVT", "IIIT5K"]
    assert data["common_methods"] == [{"id": 1, "slug": "transformer", "name": "Transformer", "paper_count": 1}]
    assert stub.paths()[0] == ("tasks/17" if name == "17" else "tasks/")


@pytest.mark.parametrize(("argv", "routes", "message"), [
    pytest.param(["task"], {}, "pwc: task inspection requires --name\n", id="no-name"),
    pytest.param(["task", "--name", "Nope"], {"tasks/": {"count": 1, "results": [STR_SUMMARY]}},
                 "pwc: Task not found: Nope; closest results: Scene Text Recognition\n", id="not-found"),
    pytest.param(["task", "--name", "Nope"], {"tasks/": {"count": 0, "results": []}},
                 "pwc: Task not found: Nope\n", id="not-found-no-candidates"),
    pytest.param(["task", "--name", "17"], {"tasks/17": STR_SUMMARY, "tasks/17/page": {"task": []}},
                 "pwc: task page API returned an unexpected response shape\n", id="bad-page"),
    pytest.param(["task", "--name", "17"], {"tasks/17": STR_SUMMARY, "tasks/17/page": STR_PAGE,
                                            "tasks/17/trending-benchmarks": {"results": {}}},
                 "pwc: benchmark trends API returned an unexpected response shape\n", id="bad-trends"),
])
def test_task_detail_errors_exit_4(stub: StubCatalog, argv: list[str], routes: dict, message: str) -> None:
    stub.routes.update(routes)
    assert run_cli(stub.url, argv) == (4, "", message)


# ---------------------------------------------------------------- task list


def test_flat_task_list_resolves_the_area_and_sends_every_filter(stub: StubCatalog) -> None:
    stub.routes.update({"areas/": AREAS, "tasks/": TASKS})
    code, out, err = run_cli(stub.url, ["task", "list", "--area", "vision", "--search", "image", "--page-size",
                                        "1", "--order-by", "paper_count", "--order-dir", "desc"])
    assert code == 0
    assert stub.calls == [("areas/", wire(page=1, page_size=500, ordering="name")),
                          ("tasks/", wire(page=1, page_size=1, q="image", area_id="1", visible_only=False,
                                          ordering="-paper_count"))]
    assert out == ("id\tslug\tname\tarea\tlevel\tpapers\tbenchmarks\tevals\n"
                   "10\timage-classification\tImage Classification\tVision\t0\t123\t4\t567\n")
    assert err == ""


def test_flat_task_list_prints_a_pagination_hint(stub: StubCatalog) -> None:
    stub.routes.update({"areas/": AREAS, "tasks/": {**TASKS, "count": 120}})
    code, _, err = run_cli(stub.url, ["task", "list", "--page", "2"])
    assert (code, err) == (0, "# more: rerun with --page 3\n")


def test_paged_task_list_on_a_tty_is_a_flat_aligned_table(stub: StubCatalog) -> None:
    stub.routes.update({"areas/": AREAS, "tasks/": TASKS})
    code, out, _ = run_cli(stub.url, ["task", "list", "--page-size", "10"], isatty=True)
    assert (code, stub.paths()) == (0, ["areas/", "tasks/"])
    assert out.splitlines() == [
        "id  slug                  name                  area    level  papers  benchmarks  evals",
        "10  image-classification  Image Classification  Vision      0     123           4    567"]


def test_task_list_on_a_tty_groups_by_area(stub: StubCatalog) -> None:
    stub.routes["areas/with-tasks/"] = WITH_TASKS
    code, out, _ = run_cli(stub.url, ["task", "list"], isatty=True)
    assert code == 0
    assert stub.calls == [("areas/with-tasks/", {})]
    assert out == ("# Area: Audio\n"
                   "- **Audio Classification** (`audio-classification`) — 63 papers · 1 benchmark · 8 evals\n"
                   "\n# Area: Vision\n"
                   "- **Image Classification** (`image-classification`) — 2,389 papers · 12 benchmarks · 345 evals\n"
                   "- **tiny task** (`tiny-task`) — 1 paper · 1 benchmark · 1 eval\n")


def test_grouped_task_list_filters_one_area_and_sorts_by_the_order_field(stub: StubCatalog) -> None:
    stub.routes["areas/with-tasks/"] = WITH_TASKS
    code, out, _ = run_cli(stub.url, ["task", "list", "--group-by-area", "--area", "vision",
                                      "--order-by", "paper_count", "--order-dir", "desc"])
    assert code == 0
    assert out.startswith("# Area: Vision\n- **Image Classification**")
    assert "Audio" not in out


def test_grouped_task_list_json_and_missing_counts(stub: StubCatalog) -> None:
    stub.routes["areas/with-tasks/"] = {"results": [{"id": 3, "name": "Empty", "tasks": []},
                                                    {"id": 4, "name": "Sparse", "tasks": [{"name": "x", "slug": "x"}]}]}
    code, out, _ = run_cli(stub.url, ["task", "list", "--group-by-area"])
    # An area without tasks is left out (it was "- None").
    assert out == "# Area: Sparse\n- **x** (`x`) — unknown papers · unknown benchmarks · unknown evals\n"
    code, out, _ = run_cli(stub.url, ["task", "list", "--group-by-area", "--area", "empty"])
    assert (code, out) == (0, "# Area: Empty\n- no tasks in this area\n")
    code, out, _ = run_cli(stub.url, ["task", "list", "--group-by-area", "--json"])
    assert json_data(out)["results"][1]["tasks"] == [{"name": "x", "slug": "x"}]


@pytest.mark.parametrize("argv", [pytest.param(["task", "--json", "list"], id="json-before-list"),
                                  pytest.param(["task", "list", "--json"], id="json-after-list")])
def test_task_json_flag_is_kept_on_either_side_of_list(stub: StubCatalog, argv: list[str]) -> None:
    stub.routes.update({"areas/": AREAS, "tasks/": TASKS})
    code, out, _ = run_cli(stub.url, argv, isatty=True)
    assert code == 0
    # The rows as the catalog sent them, each naming its area beside its area_id.
    rows: list[dict[str, object]] = TASKS["results"]  # type: ignore[assignment]
    assert json_data(out) == {**TASKS, "results": [{**row, "area_name": "Vision"} for row in rows]}


def test_unknown_area_lists_the_available_areas(stub: StubCatalog) -> None:
    stub.routes.update({"areas/": AREAS, "tasks/": TASKS})
    assert run_cli(stub.url, ["task", "list", "--area", "Robotics"]) == (
        4, "", "pwc: Area not found: Robotics; available areas: Audio, Vision\n")


@pytest.mark.parametrize(("argv", "message"), [
    pytest.param(["--group-by-area", "--page", "2"], "--group-by-area cannot be combined with pagination or --level",
                 id="grouped-page"),
    pytest.param(["--group-by-area", "--level", "1"], "--group-by-area cannot be combined with pagination or --level",
                 id="grouped-level"),
    pytest.param(["--group-by-area", "--search", "x"],
                 "pwc: --group-by-area cannot be combined with --search; use --flat to search tasks", id="grouped-search"),
    pytest.param(["--group-by-area", "--flat"], "argument --flat: not allowed with argument --group-by-area",
                 id="exclusive"),
    pytest.param(["--page", "0"], "argument --page: --page must be 1-100", id="page-range"),
    pytest.param(["--page-size", "101"], "argument --page-size/--limit: --page-size must be 1-100", id="size-range"),
    pytest.param(["--order-by", "stars"], "argument --order-by: invalid choice", id="order-by"),
    pytest.param(["--level", "x"], "argument --level: invalid int value", id="level-int"),
])
def test_task_list_usage_errors_exit_2_without_requests(stub: StubCatalog, argv: list[str], message: str) -> None:
    code, out, err = run_cli(stub.url, ["task", "list", *argv])
    assert (code, out, stub.calls) == (2, "", [])
    assert message in err


# ---------------------------------------------------------------- sample catalog


def test_task_commands_against_the_sample_catalog(catalog_url: str) -> None:
    code, out, err = run_cli(catalog_url, ["task", "list", "--flat", "--page-size", "5"])
    assert code == 0, err
    header, *rows = out.splitlines()
    assert header.split("\t") == ["id", "slug", "name", "area", "level", "papers", "benchmarks", "evals"]
    assert rows
    slug = rows[0].split("\t")[1]
    code, out, err = run_cli(catalog_url, ["task", "--name", slug, "--json"])
    assert code == 0, err
    assert json_data(out)["task"]["slug"] == slug
    code, out, err = run_cli(catalog_url, ["task", "--name", slug], isatty=True)
    assert code == 0, err
    assert "View task: https://paperswithcode.co/tasks/" in out
    code, out, err = run_cli(catalog_url, ["task", "list", "--group-by-area", "--json"])
    assert code == 0, err
    assert json_data(out)["results"]


@pytest.mark.parametrize("argv", [["task", "list"], ["method", "list"], ["paper", "list"],
                                  ["paper", "evaluations", "1706.03762"], ["benchmark", "list"]])
def test_every_paged_list_takes_limit_as_page_size_like_search(argv: list[str]) -> None:
    """``--limit`` means the same on every list command as on ``pwc search`` (an alias of ``--page-size``)."""
    from pwc.cli import build_parser

    parser = build_parser()
    assert parser.parse_args([*argv, "--limit", "7"]).page_size == 7
    assert parser.parse_args([*argv, "--page-size", "7"]).page_size == 7


@pytest.mark.parametrize(("argv", "message"), [
    pytest.param(["task", "--name", "Image Classificaton"],
                 "pwc: Task not found: Image Classificaton; closest results: Image Classification, "
                 "Image Generation, Self-Supervised Image Classification\n", id="task"),
    pytest.param(["method", "--name", "Convolution Layr"], "pwc: Method not found: Convolution Layr; closest results: "
                 "Convolution, DenseNet\n", id="method"),
])
def test_a_misspelt_name_suggests_the_names_its_first_word_finds(catalog_url: str, argv: list[str],
                                                                  message: str) -> None:
    """A name whose whole search finds nothing is searched again by its first word, as `trends` and
    `benchmark` do (`pwc.names.find_named`), so a typo still gets suggestions."""
    code, out, err = run_cli(catalog_url, argv)
    assert (code, out, err) == (4, "", message)

"""``pwc benchmark --name NAME`` (leaderboard) and ``pwc benchmark list`` (``docs/cli-contract.md`` §2.15, §2.16).

Deliberate fixes of reference quirks (§7):

* ``benchmark list --order-dir desc`` without ``--order-by`` sends
  ``ordering=-name`` (the reference sent ``-None``);
* ``--area`` only applies to grouped output, so ``benchmark list --area X
  --flat`` is the usage error ``--area requires grouped output; drop --flat``
  (the reference silently printed grouped output);
* leaderboard-only options given before ``list`` (``--max-parameters``, and
  equally ``--name`` and the metric options) are usage errors, never ignored;
* ``benchmark --is-open true list`` keeps ``is_open`` (flags before ``list``
  survive, see ``pwc.cli``);
* ``is_open: null`` renders as ``unknown`` (``pwc.render.open_cell``);
* metric scans stop on an empty page (``pwc.leaderboard.fetch_leaderboard``).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, NotRequired, TypedDict
from urllib.parse import quote

from pwc.arguments import PAGE_MAX, int_range
from pwc.errors import ResponseError, UsageError
from pwc.history import HistoryPayload, history_markdown, sota_history
from pwc.json_types import JsonObject, JsonValue, json_objects
from pwc.leaderboard import (
    MetricSelection,
    best_first,
    check_parameter_limit,
    fetch_leaderboard,
    merge_evaluations,
    metric_summary,
    model_label,
    parameters_cell,
    parse_metric_list,
    parse_parameter_size,
    parse_pareto,
    parse_sort,
    parse_threshold,
    row_parameters,
)
from pwc.markdown import md_table
from pwc.names import (
    BENCHMARK_FIELDS,
    find_named,
    not_found,
    required_name,
    resolve_area,
)
from pwc.render import (
    EM_DASH,
    Output,
    clean_cell,
    counted,
    entity_link,
    format_table,
    heading,
    md_escape,
    open_cell,
    pagination_hint,
    result_list,
    site_url,
    write_table,
)

if TYPE_CHECKING:  # the transport (httpx) is imported only where a call is made
    from pwc.transport import Client

__all__ = ["BenchmarkPayload", "register", "render_benchmark", "render_benchmark_history", "render_benchmark_list", "run_benchmark",
           "run_benchmark_history", "run_benchmark_list", "write_history_chart"]

ORDER_FIELDS = ("trending", "name", "full_name", "created_at", "paper_count")
LEADERBOARD_ONLY = (("max_parameters", "--max-parameters"), ("name", "--name"),
                    ("require_metrics", "--require-metrics"), ("min", "--min"), ("max", "--max"),
                    ("sort", "--sort"), ("pareto", "--pareto"))
IGNORED_GROUPING = "# filters select task-scoped flat output; --group-by-area ignored"


class BenchmarkPayload(TypedDict):
    """``pwc benchmark --name --json`` data: the benchmark, the stored and matched row counts, the
    merged rows shown and, when they are ordered best first, the metric and direction."""

    benchmark: JsonObject
    count: int
    matched_count: int
    results: list[JsonObject]
    order: NotRequired[dict[str, str]]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``benchmark`` (leaderboard) and ``benchmark list`` to the top-level sub-parsers."""
    bench = subparsers.add_parser("benchmark", help="show a benchmark leaderboard or list benchmarks",
                                  description="Show one benchmark's merged leaderboard.")
    bench.add_argument("--name", help="exact benchmark name, full name, slug or ID")
    bench.add_argument("--limit", type=int_range("--limit", 1, 100), default=20,
                       help="rows shown after metric selection")
    bench.add_argument("--is-open", choices=("true", "false"), help="only open (or closed) models")
    bench.add_argument("--max-parameters", type=parse_parameter_size, metavar="SIZE",
                       help="inclusive parameter ceiling such as 500M, 1.5B or 7_000_000_000")
    bench.add_argument("--require-metrics", type=parse_metric_list, metavar="METRIC[,METRIC]",
                       help="keep rows reporting every listed metric")
    bench.add_argument("--min", action="append", type=parse_threshold, metavar="METRIC=VALUE",
                       help="inclusive lower bound (repeatable)")
    bench.add_argument("--max", action="append", type=parse_threshold, metavar="METRIC=VALUE",
                       help="inclusive upper bound (repeatable)")
    bench.add_argument("--sort", type=parse_sort, metavar="METRIC[:asc|desc]", help="sort by a metric")
    bench.add_argument("--pareto", type=parse_pareto, metavar="METRIC:higher,METRIC:lower",
                       help="keep the Pareto front of two or more objectives")
    bench.add_argument("--json", action="store_true", help="print the JSON envelope")
    bench.set_defaults(handler=run_benchmark, renderer=render_benchmark)

    below = bench.add_subparsers(dest="benchmark_command", metavar="{list,history}")
    lst = below.add_parser("list", help="list benchmarks (grouped by area on a terminal)")
    lst.add_argument("--page", type=int_range("--page", 1, PAGE_MAX), default=1)
    lst.add_argument("--page-size", "--limit", dest="page_size", type=int_range("--page-size", 1, 100), default=50)
    lst.add_argument("--search", help="benchmark name search")
    lst.add_argument("--task", help="task name, slug or ID (passed verbatim)")
    mode = lst.add_mutually_exclusive_group()
    mode.add_argument("--group-by-area", action="store_true", help="group benchmarks under areas and tasks")
    mode.add_argument("--flat", action="store_true", help="the flat benchmark table even on a terminal")
    lst.add_argument("--area", help="exact area name, slug or ID (grouped output only)")
    lst.add_argument("--benchmarks-per-task", type=int_range("--benchmarks-per-task", 1, 10), default=3,
                     help="benchmarks per task in grouped output")
    lst.add_argument("--include-descendants", action="store_true", help="include subtasks' benchmarks")
    lst.add_argument("--min-eval-count", type=int, help="minimum evaluation count")
    lst.add_argument("--is-open", choices=("true", "false"), help="only benchmarks with open (or closed) models")
    lst.add_argument("--order-by", choices=ORDER_FIELDS,
                     help="default: trending with --task, name otherwise")
    lst.add_argument("--order-dir", choices=("asc", "desc"), default="asc")
    lst.add_argument("--json", action="store_true", help="print the JSON envelope")
    lst.set_defaults(handler=run_benchmark_list, renderer=render_benchmark_list)

    hist = below.add_parser("history", help="the state of the art over time on one benchmark metric",
                            description="The best-so-far series of one metric of a benchmark, step by step.")
    hist.add_argument("--name", help="exact benchmark name, full name, slug or ID")
    hist.add_argument("--metric", help="metric name (default: the board's primary metric)")
    hist.add_argument("--task", help="only results of this task (name, slug or ID); default all tasks")
    hist.add_argument("--chart", metavar="FILE", help="also write the chart as a PNG file")
    hist.add_argument("--json", action="store_true", help="print the JSON envelope")
    hist.set_defaults(handler=run_benchmark_history, renderer=render_benchmark_history,
                      write_files=write_history_chart)


# ---------------------------------------------------------------- leaderboard


def _selection(args: argparse.Namespace) -> MetricSelection:
    return MetricSelection(require=args.require_metrics or (), minimum=args.min or (), maximum=args.max or (),
                           sort=args.sort, pareto=args.pareto or ())


def _find_benchmark(name: str, client: Client) -> JsonObject:
    """The benchmark record ``name`` names exactly (§2.15 step 1); raises ``NotFoundError`` with candidates."""
    benchmark, candidates = find_named(
        lambda query: result_list(client.get_json("datasets/", {"q": query, "page": 1, "page_size": 100})),
        name, BENCHMARK_FIELDS)
    if benchmark is None:
        raise not_found("Benchmark", name, candidates, name_only=True)
    return benchmark


def run_benchmark(args: argparse.Namespace, client: Client) -> BenchmarkPayload:
    """Resolve the benchmark, fetch and merge its evaluations, apply metric selection (§2.15).

    Without ``--sort`` or ``--pareto`` the rows are best first by the requested metric, else the
    primary one (`best_first`), and ``order`` names it; with no metric of known direction they
    keep the catalog's rank order. Returns ``{"benchmark", "count", "matched_count", "results"}``
    (and ``order``). Raises
    ``NotFoundError``/``ResponseError`` (exit 4) and ``UsageError`` for unknown metrics (exit 2).
    """
    benchmark = _find_benchmark(required_name(args.name, "benchmark"), client)
    selection = _selection(args)
    rows, count = fetch_leaderboard(client, benchmark.get("id"), is_open=args.is_open,
                                    max_parameters=args.max_parameters, scan_all=selection.active)
    merged = merge_evaluations(rows)
    if args.max_parameters is not None:
        check_parameter_limit(merged, args.max_parameters)
    selected = selection.apply(merged) if selection.active else merged
    order = None
    if not args.sort and not args.pareto:  # best first by the requested or primary metric, as the tool
        selected, order = best_first(selected, selection.requested())
    payload: BenchmarkPayload = {"benchmark": benchmark, "count": count, "matched_count": len(selected),
                                 "results": selected[:args.limit]}
    if order is not None:
        payload["order"] = order
    return payload


def _md_label(text: object) -> str:
    return (str(text).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace("|", "\\|")
            .replace("\r", " ").replace("\n", " "))


def render_benchmark(payload: BenchmarkPayload, args: argparse.Namespace, out: Output) -> None:
    """Benchmark header, the summary line and the leaderboard (aligned on a TTY, Markdown captured)."""
    bench, rows = payload["benchmark"], payload["results"]
    name = bench.get("name")
    full_name = bench.get("full_name")
    text = clean_cell if out.isatty else md_escape
    out.line(clean_cell(name or "Unnamed") if out.isatty else heading(name, out))
    if full_name and str(full_name).casefold() != str(name or "").casefold():
        out.lines(["", text(full_name)])
    if bench.get("description"):
        out.lines(["", text(bench["description"])])
    out.lines(["", entity_link("View benchmark", site_url("benchmark", bench.get("slug"), bench.get("id")), out)])
    if _selection(args).active:
        summary = (f"Showing {len(rows)} of {payload['matched_count']} matching merged rows "
                   f"from {payload['count']} stored evaluation rows.")
    else:
        summary = f"Top {len(rows)} of {payload['count']} evaluation rows."
    order = payload.get("order")
    if order is not None:
        summary += (f" Ordered by {text(order['metric'])} ({order['direction']} first); Rank is each row's rank "
                    "in its own task.")
    out.lines(["", summary, ""])
    headers = ["Rank", "Model", "Parameters", "Scores", "Task", "Paper", "Published", "Open"]
    if out.isatty:
        table = [[row.get("best_rank") if row.get("best_rank") is not None else EM_DASH, model_label(row),
                  parameters_cell(row_parameters(row)), metric_summary(row), row.get("task_name") or EM_DASH,
                  f"{row.get('paper_title') or ''} [{row.get('paper_arxiv_id') or row.get('paper_id')}]".lstrip(),
                  row.get("paper_published_date") or EM_DASH, open_cell(row)] for row in rows]
        out.stdout.write(format_table(headers, table, right=("Rank",), aligned=True))
        return
    cells: list[list[str]] = []
    for row in rows:
        ref = row.get("paper_arxiv_id") or row.get("paper_id")
        title = row.get("paper_title") or row.get("paper_arxiv_id") or f"Paper {row.get('paper_id')}"
        cells.append([md_escape(row.get("best_rank")), md_escape(model_label(row)),
                      parameters_cell(row_parameters(row)), md_escape(metric_summary(row)),
                      md_escape(row.get("task_name")), f"[{_md_label(title)}]({site_url('paper', ref)})",
                      md_escape(row.get("paper_published_date")), open_cell(row)])
    out.lines(md_table(headers, cells, ["---:", "---", "---:", "---", "---", "---", "---", ":---:"]))


# ---------------------------------------------------------------- history (§2.23)


def _task_rows(rows: list[JsonObject], task: str) -> list[JsonObject]:
    """The rows of one task (name, slug or ID, case-insensitive); ``UsageError`` naming the board's tasks."""
    wanted = task.strip().casefold()
    kept = [row for row in rows if wanted in {str(row.get(k)).casefold() for k in ("task_name", "task_slug", "task_id")
                                              if row.get(k) is not None}]
    if not kept:
        tasks = sorted({str(row.get("task_name")) for row in rows if row.get("task_name")}, key=str.casefold)
        raise UsageError(f"no results of task {task.strip()} on this benchmark; its tasks: {', '.join(tasks) or 'none'}")
    return kept


def run_benchmark_history(args: argparse.Namespace, client: Client) -> HistoryPayload:
    """Resolve the benchmark, fetch every evaluation row (up to the scan limit), merge them and
    compute the best-so-far series (``pwc.history.sota_history``). Raises ``NotFoundError`` (exit 4)
    and ``UsageError`` for an unknown metric or task (exit 2)."""
    for dest, flag in LEADERBOARD_ONLY[:1] + LEADERBOARD_ONLY[2:]:
        if getattr(args, dest, None) is not None:
            raise UsageError(f"{flag} is only valid with benchmark --name")
    benchmark = _find_benchmark(required_name(args.name, "benchmark"), client)
    rows, _count = fetch_leaderboard(client, benchmark.get("id"), is_open=None, max_parameters=None, scan_all=True)
    task = args.task.strip() if args.task and args.task.strip() else None
    if task is not None:
        rows = _task_rows(rows, task)
        task = str(rows[0].get("task_name") or task)
    return sota_history(benchmark, merge_evaluations(rows), args.metric, task=task)


def render_benchmark_history(payload: HistoryPayload, args: argparse.Namespace, out: Output) -> None:
    """The history as Markdown: heading, span, the steps table, rows left out (``pwc.history``)."""
    out.lines(history_markdown(payload))


def write_history_chart(payload: HistoryPayload, args: argparse.Namespace) -> None:
    """``--chart FILE``: write the PNG chart (``pwc.chart``); ``UsageError`` when the file cannot be written."""
    if not args.chart:
        return
    from pwc.chart import history_png, write_chart

    write_chart(args.chart, lambda: history_png(payload))


# ---------------------------------------------------------------- benchmark list


def run_benchmark_list(args: argparse.Namespace, client: Client) -> object:
    """Grouped, task-scoped trending or flat catalogue listing (§2.16 mode selection).

    Sets ``args.mode`` (``grouped``/``trending``/``flat``) and ``args.notice`` for
    the renderer. Raises ``UsageError`` for conflicting options (exit 2).
    """
    for dest, flag in LEADERBOARD_ONLY:
        if getattr(args, dest, None) is not None:
            raise UsageError(f"{flag} is only valid with benchmark --name")
    if args.area is not None and args.flat:
        raise UsageError("--area requires grouped output; drop --flat")
    flat_filters = bool(args.task or args.search or args.include_descendants or args.is_open is not None
                        or args.order_by is not None or args.order_dir != "asc" or args.page != 1
                        or args.page_size != 50)
    automatic = getattr(args, "isatty", False) and not args.json and not args.flat and not flat_filters
    if args.area is not None and flat_filters:
        raise UsageError("--area cannot be combined with task/search/pagination filters")
    args.notice = IGNORED_GROUPING if args.group_by_area and flat_filters else None
    if (args.group_by_area or args.area is not None or automatic) and not flat_filters:
        args.mode = "grouped"
        payload = client.get_json("areas/with-task-benchmarks/", {
            "benchmarks_per_task": args.benchmarks_per_task,
            "min_eval_count": 2 if args.min_eval_count is None else args.min_eval_count})
        areas = result_list(payload)
        if args.area is not None:
            areas = [resolve_area(areas, args.area)]
        return {"results": areas}
    if args.task and args.order_by in (None, "trending"):
        args.mode = "trending"
        return _trending(args, client)
    if args.order_by == "trending":
        raise UsageError("--order-by trending requires --task")
    args.mode = "flat"
    ordering = ("-" if args.order_dir == "desc" else "") + (args.order_by or "name")
    return client.get_json("datasets/", {
        "page": args.page, "page_size": args.page_size, "q": args.search, "task": args.task,
        "include_descendants": args.include_descendants, "min_eval_count": args.min_eval_count,
        "is_open": args.is_open, "ordering": ordering})


def _trending(args: argparse.Namespace, client: Client) -> JsonObject:
    payload = client.get_json(f"tasks/{quote(args.task, safe='')}/trending-benchmarks", {
        "limit": 100, "min_recent_papers": 0, "include_descendants": args.include_descendants,
        "is_open": args.is_open})
    results = payload.get("results") if isinstance(payload, dict) else None
    if not isinstance(payload, dict) or not isinstance(results, list):
        raise ResponseError("API response did not contain benchmark trends")
    rows = [row for row in results if isinstance(row, dict)]
    if args.search:
        needle = args.search.casefold()
        rows = [r for r in rows if needle in " ".join(str(r.get(k) or "") for k in ("name", "full_name", "slug"))
                .casefold()]
    if args.min_eval_count is not None:
        rows = [r for r in rows if isinstance(count := r.get("all_time_paper_count"), (int, float))
                and count >= args.min_eval_count]
    start = (args.page - 1) * args.page_size
    return {**payload, "count": len(rows), "results": list[JsonValue](rows[start:start + args.page_size])}


def render_benchmark_list(payload: object, args: argparse.Namespace, out: Output) -> None:
    """Grouped Markdown sections, or an always-aligned trending/flat table plus the pagination hint."""
    if args.notice:
        out.hint(args.notice)
    if args.mode == "grouped":  # run_benchmark_list's {"results": [area]}
        _render_grouped(result_list(payload), out)
        return
    rows = result_list(payload)
    if args.mode == "trending":
        write_table(out, ["id", "slug", "name", "description", "hf_url", "recent_papers", "ranking_score",
                          "best_model", "paper_title", "code"],
                    [[r.get("id"), r.get("slug"), r.get("name"), r.get("description"), r.get("hf_url"),
                      r.get("recent_paper_count"),
                      r.get("support_weighted_score") if r.get("support_weighted_score") is not None
                      else r.get("trend_score"),
                      r.get("best_model_name"), r.get("best_paper_title"), r.get("best_code_url")] for r in rows],
                    right=("id", "recent_papers", "ranking_score"), always_aligned=True)
    else:
        write_table(out, ["id", "name", "description", "hf_url", "full_name", "evals"],
                    [[r.get("id"), r.get("name"), r.get("description"), r.get("hf_url"), r.get("full_name"),
                      r.get("paper_count")] for r in rows], right=("id", "evals"), always_aligned=True)
    pagination_hint(out, payload, page=args.page, page_size=args.page_size, rows=len(rows))


def _render_grouped(areas: list[JsonObject], out: Output) -> None:
    for index, area in enumerate(areas):
        if index:
            out.line()
        out.lines([f"# Area: {area.get('name') or 'Uncategorized'}", "",
                   "Inspect a benchmark with `pwc benchmark --name SLUG`."])
        for task in json_objects(area.get("tasks")):
            out.lines(["", f"## {task.get('name')} (`{task.get('slug')}`)", ""])
            for bench in json_objects(task.get("benchmarks")):
                out.line(_grouped_line(bench))


def _grouped_line(bench: Mapping[str, object]) -> str:
    parts = []
    if bench.get("description"):
        parts.append("description: " + " ".join(str(bench["description"]).replace("\r", "").split("\n")))
    if bench.get("hf_url"):
        parts.append(f"HF: {bench['hf_url']}")
    full_name = bench.get("full_name")
    if full_name and full_name != bench.get("name"):
        parts.append(f"full name: {full_name}")
    if bench.get("slug"):
        parts.append(f"slug: `{bench['slug']}`")
    parts.append(f"ID: `{bench.get('id')}`")
    if bench.get("evaluation_count") is not None:
        parts.append(counted(bench["evaluation_count"], "evaluation"))
    return f"- {bench.get('name')} — " + "; ".join(parts)

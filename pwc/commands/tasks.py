"""``pwc task --name NAME`` (task detail) and ``pwc task list`` (``docs/cli-contract.md`` §2.10, §3.6).

Deliberate fixes of reference quirks (§7):

* ``task list --group-by-area --search X`` is a usage error naming both flags
  (the reference silently dropped the search);
* ``task --json list`` keeps ``--json`` (flags before ``list`` survive, see
  ``pwc.cli``).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypedDict, TypeGuard

from pwc.arguments import PAGE_MAX, int_range
from pwc.errors import ResponseError, UsageError
from pwc.json_types import JsonObject, JsonValue, json_list, json_objects
from pwc.names import (
    AREAS_PARAMS,
    ENTITY_FIELDS,
    area_name_map,
    find_named,
    not_found,
    required_name,
    resolve_area,
    with_area_names,
)
from pwc.render import (
    Output,
    counted,
    entity_link,
    heading,
    md_link,
    pagination_hint,
    result_list,
    result_total,
    section,
    site_url,
    thousands,
    write_table,
)

if TYPE_CHECKING:  # the transport (httpx) is imported only where a call is made
    from pwc.transport import Client

__all__ = ["TaskPayload", "register", "render_task", "render_task_list", "run_task", "run_task_list"]

ORDER_FIELDS = ("name", "created_at", "level", "paper_count")
GROUPING_CONFLICT = ("--group-by-area cannot be combined with pagination or --level; "
                     "use --flat for the complete task endpoint")
SEARCH_CONFLICT = "--group-by-area cannot be combined with --search; use --flat to search tasks"


class TaskPayload(TypedDict):
    """``pwc task --json`` data: the task, its area and the task page's lists (as the catalog gave
    them, ``[]`` when missing), the ranked benchmarks, common methods and the trending papers."""

    task: JsonObject
    area: JsonObject | None
    parents: JsonValue
    sisters: JsonValue
    recommended_frameworks: JsonValue
    children: JsonValue
    subtask_benchmarks: JsonValue
    benchmarks: list[JsonObject]
    common_methods: list[JsonObject]
    paper_sample_size: int
    paper_count: int
    papers: list[JsonObject]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``task`` (detail) and ``task list`` to the top-level sub-parsers."""
    task = subparsers.add_parser("task", help="inspect a task or list tasks",
                                 description="Inspect one task by exact name, slug or ID.")
    task.add_argument("--name", help="exact task name, slug or ID")
    task.add_argument("--json", action="store_true", help="print the JSON envelope")
    task.set_defaults(handler=run_task, renderer=render_task)
    commands = task.add_subparsers(dest="task_command", metavar="{list}")
    lst = commands.add_parser("list", help="list tasks (grouped by area on a terminal)")
    lst.add_argument("--page", type=int_range("--page", 1, PAGE_MAX), default=1)
    lst.add_argument("--page-size", "--limit", dest="page_size", type=int_range("--page-size", 1, 100), default=50)
    lst.add_argument("--search", help="task name search (sent as q)")
    mode = lst.add_mutually_exclusive_group()
    mode.add_argument("--group-by-area", action="store_true", help="group tasks under their areas")
    mode.add_argument("--flat", action="store_true", help="the flat task table even on a terminal")
    lst.add_argument("--area", help="exact area name or slug (case-insensitive) or area ID")
    lst.add_argument("--level", type=int, help="task hierarchy level")
    lst.add_argument("--visible-only", action="store_true", help="only tasks visible on the site")
    lst.add_argument("--order-by", choices=ORDER_FIELDS, default="name")
    lst.add_argument("--order-dir", choices=("asc", "desc"), default="asc")
    lst.add_argument("--json", action="store_true", help="print the JSON envelope")
    lst.set_defaults(handler=run_task_list, renderer=render_task_list)


# ---------------------------------------------------------------- task detail


def run_task(args: argparse.Namespace, client: Client) -> TaskPayload:
    """Compose a task's detail (§2.10 call order, §3.6 ranking); raises ``ResponseError``/``NotFoundError``."""
    name = required_name(args.name, "task")
    if name.isdigit():
        found = client.get_json(f"tasks/{name}")
        if not isinstance(found, dict):
            raise ResponseError("API returned an unexpected response shape")
        summary = found
    else:
        exact, candidates = find_named(
            lambda query: result_list(client.get_json("tasks/", {"q": query, "page": 1, "page_size": 100})),
            name, ENTITY_FIELDS)
        if exact is None:
            raise not_found("Task", name, candidates, name_only=True)
        summary = exact
    task_id = summary.get("id")
    page = client.get_json(f"tasks/{task_id}/page")
    page_task = page.get("task") if isinstance(page, dict) else None
    if not isinstance(page, dict) or not isinstance(page_task, dict):
        raise ResponseError("task page API returned an unexpected response shape")
    trends = client.get_json(f"tasks/{task_id}/trending-benchmarks", {"limit": 100, "min_recent_papers": 0})
    trend_rows = trends.get("results") if isinstance(trends, dict) else None
    if not isinstance(trend_rows, list):
        raise ResponseError("benchmark trends API returned an unexpected response shape")
    papers_payload = client.get_json(f"tasks/{task_id}/papers", {
        "page": 1, "page_size": 100, "order_by": "trending", "order_dir": "desc", "include_resources": True})
    papers = result_list(papers_payload)
    areas = result_list(client.get_json("areas/", AREAS_PARAMS))

    task = dict(page_task)
    for key in ("paper_count", "benchmark_count", "evaluation_count"):
        if summary.get(key) is not None:
            task[key] = summary[key]
    area_id = summary.get("area_id")
    area = next((a for a in areas if area_id is not None and str(a.get("id")) == str(area_id)), None)
    total = result_total(papers_payload)
    return {
        "task": task,
        "area": area,
        "parents": page.get("parents") or [],
        "sisters": page.get("sisters") or [],
        "recommended_frameworks": page.get("recommended_frameworks") or [],
        "children": page.get("children") or [],
        "subtask_benchmarks": page.get("subtask_benchmarks") or [],
        "benchmarks": rank_benchmarks(page.get("benchmarks", []), trend_rows),
        "common_methods": common_methods(papers),
        "paper_sample_size": len(papers),
        "paper_count": total if total is not None else len(papers),
        "papers": papers[:10],
    }


def rank_benchmarks(page_benchmarks: JsonValue, trends: list[JsonValue]) -> list[JsonObject]:
    """Trended page benchmarks in trend order (page fields overlaid by trend fields), then the rest (§3.6)."""
    if not isinstance(page_benchmarks, list):
        raise ResponseError("task page API did not contain a benchmark list")
    by_id = {str(b.get("id")): b for b in page_benchmarks if isinstance(b, dict)}
    ranked: list[JsonObject] = []
    seen: set[str] = set()
    for trend in trends:
        if isinstance(trend, dict) and str(trend.get("id")) in by_id and str(trend.get("id")) not in seen:
            seen.add(str(trend.get("id")))
            ranked.append({**by_id[str(trend.get("id"))], **trend})
    ranked += [b for key, b in by_id.items() if key not in seen]
    return ranked


def common_methods(papers: list[JsonObject], top: int = 8) -> list[JsonObject]:
    """The ``top`` methods of the sampled papers by paper count, then name (§3.6)."""
    counts: dict[str, int] = {}
    methods: dict[str, JsonObject] = {}
    for paper in papers:
        for method in json_list(paper.get("methods")):
            if not isinstance(method, dict):
                continue
            key = method.get("slug") or method.get("id")
            if not key:
                continue
            methods.setdefault(str(key), method)
            counts[str(key)] = counts.get(str(key), 0) + 1
    ranked = sorted(methods, key=lambda k: (-counts[k], str(methods[k].get("name") or "").casefold()))
    return [{**methods[key], "paper_count": counts[key]} for key in ranked[:top]]


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _ref(kind: str, item: Mapping[str, object], out: Output) -> str:
    name = item.get("name") or item.get("slug") or item.get("id")
    if out.isatty:
        return f"{name} [{item.get('slug') or item.get('id')}]"
    return md_link(name, site_url(kind, item.get("slug"), item.get("id")))


def _paper_ref(paper: JsonObject, out: Output) -> str:
    ref = paper.get("arxiv_id") or paper.get("id")
    title = paper.get("title") or ref
    if out.isatty:
        return f"{title} [{ref}]"
    url = paper.get("url_abs")
    return md_link(title, str(url) if url else site_url("paper", ref))


def render_task(payload: TaskPayload, args: argparse.Namespace, out: Output) -> None:
    """Write the task detail: heading, metadata, description, link and the §2.10 sections."""
    task = payload["task"]
    out.line(heading(task.get("name"), out))
    area: JsonObject = payload.get("area") or {}
    meta = [f"Area: {area['name']}" if area.get("name") else None,
            f"Level: {task['level']}" if task.get("level") is not None else None,
            *(f"{thousands(task[key])} {noun}" for key, noun in
              (("paper_count", "papers"), ("benchmark_count", "benchmarks"), ("evaluation_count", "evaluations"))
              if _is_int(task.get(key)))]
    if any(meta):
        out.line()
        out.line(" · ".join(part for part in meta if part))
    if task.get("description"):
        out.line()
        out.line(" ".join(str(task["description"]).replace("\r", "").split("\n")))
    out.line()
    out.line(entity_link("View task", site_url("task", task.get("slug"), task.get("id")), out))

    section(out, "Task hierarchy")
    chain = [*reversed(json_objects(payload["parents"])), task]
    out.line(" → ".join(_ref("task", item, out) for item in chain))
    _bullets(out, "Research trends", [str(t) for t in json_list(task.get("research_trends"))])
    _bullets(out, "Recommended frameworks", [_framework(f, out) for f in json_objects(payload["recommended_frameworks"])])
    _bullets(out, "Sister tasks", [_ref("task", t, out) for t in json_objects(payload["sisters"])])
    _bullets(out, "Subtasks", [_ref("task", t, out) for t in json_objects(payload["children"])])
    _bullets(out, f"Common methods (from {payload['paper_sample_size']} sampled papers)",
             [f"{_ref('method', m, out)} — {thousands(m['paper_count'])} papers" for m in payload["common_methods"]])
    _bullets(out, "Benchmarks", [_benchmark_line(b, out) for b in payload["benchmarks"]])
    _bullets(out, "Benchmarks by subtask", _subtask_lines(payload, out))
    papers = payload["papers"]
    _bullets(out, f"Trending papers (top {len(papers)} of {thousands(payload['paper_count'])})",
             [_paper_line(p, out) for p in papers])


def _bullets(out: Output, title: str, lines: list[str]) -> None:
    if lines:
        section(out, title)
        out.lines(line if line.startswith("  ") else f"- {line}" for line in lines)


def _framework(item: JsonObject, out: Output) -> str:
    label = "/".join(str(p) for p in (item.get("owner"), item.get("name")) if p) or str(item.get("id"))
    stars = f"{thousands(item['num_stars'])} stars" if _is_int(item.get("num_stars")) else None
    url = item.get("url")
    if out.isatty:
        return " — ".join(str(p) for p in (label, stars, url) if p)
    link = md_link(label, str(url)) if url else label
    return " — ".join(p for p in (link, stars) if p)


def _benchmark_line(item: JsonObject, out: Output) -> str:
    parts = []
    if _is_int(item.get("paper_count")):
        parts.append(f"{thousands(item['paper_count'])} papers")
    score = item.get("support_weighted_score")
    if isinstance(score, (int, float)) and not isinstance(score, bool):
        parts.append(f"trend score: {score:.2f}")
    if item.get("best_model_name"):
        parts.append(f"best model: {item['best_model_name']}")
    link = _ref("benchmark", item, out)
    return f"{link} — {', '.join(parts)}" if parts else link


def _subtask_lines(payload: TaskPayload, out: Output) -> list[str]:
    by_subtask = {str(entry.get("subtask_id")): entry.get("benchmarks") or []
                  for entry in json_objects(payload["subtask_benchmarks"])}
    lines = []
    for child in json_objects(payload["children"]):
        benchmarks = json_objects(by_subtask.get(str(child.get("id")), []))
        if benchmarks:
            lines.append(_ref("task", child, out))
            lines += [f"  - {_ref('benchmark', b, out)}" for b in benchmarks]
    return lines


def _paper_line(paper: JsonObject, out: Output) -> str:
    published = paper.get("published") or paper.get("date_published")
    citations = (counted(paper["citation_count"], "citation")
                 if _is_int(paper.get("citation_count")) else None)
    details = ", ".join(str(p) for p in (published, citations) if p)
    link = _paper_ref(paper, out)
    return f"{link} — {details}" if details else link


# ---------------------------------------------------------------- task list


def run_task_list(args: argparse.Namespace, client: Client) -> object:
    """Grouped (``areas/with-tasks/``) or flat (``areas/`` then ``tasks/``) task listing (§2.10).

    Sets ``args.grouped`` and, for flat output, ``args.area_names`` for the renderer.
    Raises ``UsageError`` for grouping with pagination, ``--level`` or ``--search``.
    """
    paged = args.page != 1 or args.page_size != 50 or args.level is not None
    automatic = (getattr(args, "isatty", False) and not args.json and not args.flat
                 and not paged and not args.search)
    args.grouped = bool(args.group_by_area or automatic)
    if args.grouped:
        if paged:
            raise UsageError(GROUPING_CONFLICT)
        if args.search:
            raise UsageError(SEARCH_CONFLICT)
        areas = result_list(client.get_json("areas/with-tasks/"))
        if args.area is not None:
            areas = [resolve_area(areas, args.area)]
        return {"results": [{**area, "tasks": sort_rows(area.get("tasks"), args.order_by, args.order_dir)}
                            for area in areas]}
    areas = result_list(client.get_json("areas/", AREAS_PARAMS))
    area_id = None if args.area is None else str(resolve_area(areas, args.area).get("id"))
    args.area_names = area_name_map(areas)
    params: dict[str, object] = {"page": args.page, "page_size": args.page_size}
    if args.search:
        params["q"] = args.search
    params.update(area_id=area_id, level=args.level, visible_only=args.visible_only,
                  ordering=("-" if args.order_dir == "desc" else "") + args.order_by)
    return with_area_names(client.get_json("tasks/", params), args.area_names)


def sort_rows(rows: JsonValue, field: str, direction: str) -> list[JsonObject]:
    """Rows sorted by ``field`` (strings casefolded); missing values last ascending, first descending."""
    def key(row: JsonObject) -> tuple[bool, int, float | str]:
        value = row.get(field)
        if value is None:
            return (True, 0, 0)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return (False, 0, value)
        return (False, 1, str(value).casefold())

    items = json_objects(rows)
    return sorted(items, key=key, reverse=direction == "desc")


def render_task_list(payload: object, args: argparse.Namespace, out: Output) -> None:
    """Grouped ``# Area:`` sections, or the flat table plus the pagination hint.

    An area without tasks is left out of the grouped listing (it printed a bare "- None"); an
    area asked for by ``--area`` that has none says so."""
    if args.grouped:  # run_task_list's {"results": [area with its sorted "tasks" list]}
        areas = result_list(payload)
        shown = [area for area in areas if area["tasks"]] if len(areas) > 1 else areas
        for index, area in enumerate(shown):
            if index:
                out.line()
            out.line(f"# Area: {area.get('name') or 'Uncategorized'}")
            if not area["tasks"]:
                out.line("- no tasks in this area")
            for task in json_objects(area["tasks"]):
                counts = " · ".join((counted(task.get("paper_count"), "paper"),
                                     counted(task.get("benchmark_count"), "benchmark"),
                                     counted(task.get("evaluation_count"), "eval")))
                out.line(f"- **{task.get('name')}** (`{task.get('slug')}`) — {counts}")
        return
    rows = result_list(payload)
    names = getattr(args, "area_names", {})
    write_table(out, ["id", "slug", "name", "area", "level", "papers", "benchmarks", "evals"],
                [[t.get("id"), t.get("slug"), t.get("name"), names.get(str(t.get("area_id"))), t.get("level"),
                  t.get("paper_count"), t.get("benchmark_count"), t.get("evaluation_count")] for t in rows],
                right=("level", "papers", "benchmarks", "evals"))
    pagination_hint(out, payload, page=args.page, page_size=args.page_size, rows=len(rows))

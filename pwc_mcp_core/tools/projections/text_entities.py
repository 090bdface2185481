"""The ``content`` text of task, method, benchmark and catalog-entity tools (companion of
:mod:`pwc_mcp_core.tools.projections.text_papers`, same rules: every fact of the projections, compact Markdown).

Tools without typed projections (conferences, organizations, frameworks, task and
method lists) render their CLI payload: the facts of ``data`` itself, with the CLI's
own table builders and field formatters (:mod:`pwc.commands.entities`) where the CLI
shows the same columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pwc.commands.entities import (
    conference_dates,
    conference_tier,
    conference_venue,
    framework_platforms,
    framework_table,
    organization_table,
    paper_years,
)
from pwc.errors import ResponseError
from pwc.leaderboard import PAGE_SIZE
from pwc.markdown import md_cell, md_table
from pwc.render import md_escape, result_list
from pwc_mcp_core.protocol.json_types import JsonObject
from pwc_mcp_core.tools.projections.text_papers import (
    as_objects,
    count_of,
    evaluation_table,
    facts,
    join_lines,
    labelled,
    next_page_line,
    of_total,
    one_line,
    references,
    shown_slug,
)

__all__ = ["benchmark_list_text", "benchmark_text", "method_text", "query_text", "task_text"]


def _identity(item: JsonObject) -> str:
    """``id N; slug S``: the handles an agent passes back (the slug only when the name does not imply it)."""
    return facts(labelled("id", item.get("id")), labelled("slug", shown_slug(item)))


def _benchmark_rows(items: list[JsonObject], places: dict[str, str] | None = None) -> list[str]:
    """``BenchmarkSummary`` table (a full name equal to the name is not repeated); ``places``: benchmark
    ID → the ``Area: Task, Task`` headings a grouped list shows it under."""
    places = places or {}
    rows = [[md_cell(b.get("id")), md_cell(b.get("slug")), md_cell(b.get("name")),
             md_cell(b.get("full_name") if b.get("full_name") != b.get("name") else ""),
             md_cell(places.get(str(b.get("id")))),
             md_cell(b.get("paper_count")), md_cell(b.get("best_model")), md_cell(b.get("split")),
             md_cell(b.get("hf_url")), md_cell(b.get("description"))] for b in items]
    return md_table(["id", "slug", "name", "full name", "area: tasks", "papers", "best model", "split", "HF",
                     "description"], rows,
                    drop_empty=True, compact=True)


# ---------------------------------------------------------------- typed projections


def task_text(task: JsonObject, *, benchmark_total: int | None = None) -> str:
    """Text of ``get_task``: identity, area, paper count, description, hierarchy and benchmarks
    (``2 of 3`` when ``benchmark_limit`` left some out)."""
    found = task.get("area")
    area = found if isinstance(found, dict) else {}
    benchmarks = as_objects(task.get("benchmarks"))
    lines = [f"# {md_escape(task.get('name'))}",
             facts(_identity(task), labelled("area", f"{area['name']} (id {area['id']})" if area.get("name") else None),
                   labelled("papers", task.get("paper_count"))),
             one_line(task.get("description")),
             labelled("Parents:", references(as_objects(task.get("parents")))),
             labelled("Subtasks:", references(as_objects(task.get("children"))))]
    if benchmarks:
        lines += [f"## Benchmarks ({of_total(len(benchmarks), benchmark_total, 'benchmark')})",
                  *_benchmark_rows(benchmarks)]
    return join_lines(lines)


def method_text(method: JsonObject) -> str:
    """Text of ``get_method``: identity, full name, area, year, paper count, description, source paper."""
    full = method.get("full_name")
    url = method.get("source_url")
    source = " ".join(p for p in (md_escape(method["source_title"]) if method.get("source_title") else None,
                                  str(url) if url else None) if p)
    paper = f"Source paper {method['source_paper_id']}:" if method.get("source_paper_id") else "Source:"
    title = f"# {md_escape(method.get('name'))}" + (f" ({md_escape(full)})" if full and full != method.get("name")
                                                     else "")
    source_line = f"{paper} {source}" if source else (paper.rstrip(":") if method.get("source_paper_id") else None)
    return join_lines([title,
                       facts(_identity(method), labelled("area", method.get("area")),
                             labelled("introduced", method.get("introduced_year")),
                             labelled("papers", method.get("paper_count"))),
                       one_line(method.get("description")), source_line])


def _row_counts(count: object, matched: object, filtered: bool) -> str:
    """Stored rows, then what the leaderboard shows of them: rows matching the filters, or (no
    filter) the merged rows, one per model result however many tasks rank it. Without a filter
    only the catalog's first page of rows is read (`pwc.leaderboard.PAGE_SIZE`), so a board with
    more says so instead of calling the rows it did not read merged."""
    stored = count_of(count, "evaluation row")
    if matched is None or matched == count:
        return stored
    if filtered:
        return f"{stored}; {matched} merged rows match the filters"
    if isinstance(count, int) and count > PAGE_SIZE:
        merged = "" if matched == PAGE_SIZE else f", merged into {count_of(matched, 'leaderboard row')}"
        return (f"{stored}; the first {PAGE_SIZE} in the catalog's rank order are read{merged} (a metric "
                "filter such as sort_metric or require_metrics scans every row)")
    return f"{stored}, merged into {count_of(matched, 'leaderboard row')} (one per model result)"


def _order_line(order: JsonObject | None) -> str:
    """How the rows are ordered: by a metric (best first), else by the catalog's task-scoped rank."""
    if not order:
        return "Rows in the catalog's rank order; ranks are task-scoped (not comparable across tasks)."
    way = {"higher": "higher first", "lower": "lower first", "ascending": "smallest first, as requested",
           "descending": "largest first, as requested"}.get(str(order.get("direction")), "as requested")
    return (f"Rows ordered by {md_escape(order.get('metric'))} ({way}); the rank column is each task's own "
            "rank (not comparable across tasks).")


def benchmark_text(result: JsonObject, *, filtered: bool = False, order: JsonObject | None = None) -> str:
    """Text of ``get_benchmark``: the benchmark, counts, metric directions, the leaderboard page
    (ranks with their task scope), notes and ``next_page``; ``filtered``: metric filters were given;
    ``order``: the metric the rows are ordered by."""
    found = result.get("benchmark")
    bench = found if isinstance(found, dict) else {}
    rows = as_objects(result.get("evaluations"))
    stated = result.get("metric_directions")
    following = result.get("next_page")
    count, matched = result.get("evaluation_count"), result.get("matched_count")
    directions = ", ".join(f"{md_escape(name)} ({way})"
                           for name, way in (stated if isinstance(stated, dict) else {}).items())
    full = bench.get("full_name")
    lines = [f"# {md_escape(bench.get('name'))}" + (f" ({md_escape(full)})" if full and full != bench.get("name")
                                                     else ""),
             facts(_identity(bench), labelled("split", bench.get("split")),
                   labelled("papers", bench.get("paper_count")), bench.get("hf_url")),
             one_line(bench.get("description")),
             _row_counts(count, matched, filtered) + f"; page {result.get('page')}: {len(rows)} rows.",
             _order_line(order),
             labelled("Metric directions:", directions),
             labelled("Note:", result.get("metric_note")),
             next_page_line(following if isinstance(following, int) else None)]
    return join_lines([*lines, *(evaluation_table(rows, with_paper=True, with_benchmark=False) if rows else [])])


def benchmark_list_text(items: list[JsonObject], next_page: int | None, notes: list[str],
                        total: int | None = None, places: dict[str, str] | None = None) -> str:
    """Text of ``list_benchmarks``: the benchmark table, notes and ``next_page``; ``places`` (grouped
    lists) adds each benchmark's area and tasks."""
    return join_lines([f"{of_total(len(items), total, 'benchmark')}. Pass a slug to get_benchmark.",
                       *(f"Note: {note}" for note in notes), next_page_line(next_page),
                       *(_benchmark_rows(items, places) if items else [])])


# ---------------------------------------------------------------- CLI payloads (no typed projection)


def _count_line(payload: object, rows: list[JsonObject], noun: str) -> str:
    count = payload.get("count") if isinstance(payload, dict) else None
    if isinstance(count, int) and not isinstance(count, bool) and count != len(rows):
        return f"{len(rows)} of {count} {noun}."
    return f"{count_of(len(rows), noun.removesuffix('s'), noun)}."


def _table(payload: object, noun: str, table: Callable[[object], tuple[list[str], list[list[object]]]]) -> str:
    """A list payload as ``N of M nouns.``, the next page and one table row per result.

    Raises:
        ResponseError: the payload holds no result list.
    """
    rows = result_list(payload)
    next_page = payload.get("next_page") if isinstance(payload, dict) else None
    headers, cells = table(payload)
    body = md_table(headers, [[md_cell(cell) for cell in row] for row in cells],
                    drop_empty=True, compact=True) if rows else []
    following = next_page if isinstance(next_page, int) and not isinstance(next_page, bool) else None
    return join_lines([_count_line(payload, rows, noun), next_page_line(following), *body])


def _key(name: str) -> Callable[[JsonObject], object]:
    return lambda row: row.get(name)


def _grouped_task(task: JsonObject) -> str:
    counts = facts(_identity(task), labelled("papers", task.get("paper_count")),
                   labelled("benchmarks", task.get("benchmark_count")), labelled("evals", task.get("evaluation_count")))
    return f"- {md_escape(task.get('name'))} ({counts})"


def _grouped_tasks(payload: object) -> str:
    """``list_tasks`` grouped by area: one section per area, one line per task."""
    lines = []
    for area in result_list(payload):
        ident = f" (id {area['id']})" if area.get("id") else ""
        lines.append(f"## {md_escape(area.get('name') or 'Uncategorized')}{ident}")
        lines += [_grouped_task(t) for t in as_objects(area.get("tasks"))] or ["- None"]
    return join_lines(lines)


def _conference(item: JsonObject) -> str:
    return join_lines([f"# {md_escape(item.get('name'))}",
                       facts(_identity(item), item.get("year"), labelled("papers", item.get("paper_count")),
                             labelled("tier", conference_tier(item)), conference_dates(item), conference_venue(item)),
                       one_line(item.get("description")), facts(item.get("url"), item.get("hf_url")) or None])


def _organization(item: JsonObject) -> str:
    return join_lines([f"# {md_escape(item.get('name'))}",
                       facts(_identity(item), labelled("papers", item.get("paper_count")),
                             labelled("trending rank", item.get("trending_rank")),
                             "featured" if item.get("is_featured") is True else None,
                             labelled("paper years", paper_years(item))),
                       one_line(item.get("description")),
                       facts(item.get("website_url"), item.get("github_url"), item.get("hf_url")) or None])


def _framework(item: JsonObject) -> str:
    return join_lines([f"# {md_escape(item.get('name'))}",
                       facts(_identity(item), item.get("domain_name") or item.get("domain_slug"),
                             item.get("category_name") or item.get("category_slug"), item.get("organization_name"),
                             labelled("papers", item.get("paper_count"))),
                       one_line(item.get("description")),
                       labelled("When to use:", one_line(item.get("when_to_use"))),
                       labelled("Platforms:", framework_platforms(item)),
                       labelled("Introducing paper: arXiv", item.get("introducing_paper_arxiv_id")),
                       facts(item.get("github_url"), item.get("docs_url")) or None])


def _area(row: JsonObject) -> object:
    """A list row's area: its name, else ``id N``."""
    name = row.get("area_name")
    if isinstance(name, str) and name:
        return name
    return f"id {row['area_id']}" if row.get("area_id") is not None else None


def _columns(spec: Sequence[tuple[str, Callable[[JsonObject], object]]]) -> Callable[[object], tuple[list[str], list[list[object]]]]:
    """A table builder from ``(header, getter)`` pairs, shaped like the CLI's ``*_table`` functions."""
    return lambda payload: ([name for name, _ in spec], [[get(row) for _, get in spec] for row in result_list(payload)])


_DETAILS: dict[str, Callable[[JsonObject], str]] = {
    "get_conference": _conference, "get_organization": _organization, "get_framework": _framework,
}
_LISTS: dict[str, tuple[str, Callable[[object], tuple[list[str], list[list[object]]]]]] = {
    # The area by name (the CLI adds `area_name`), its ID when the catalog did not name it.
    "list_tasks": ("tasks", _columns([("id", _key("id")), ("slug", _key("slug")), ("name", _key("name")),
                                      ("area", _area), ("level", _key("level")),
                                      ("papers", _key("paper_count")), ("benchmarks", _key("benchmark_count")),
                                      ("evals", _key("evaluation_count"))])),
    "list_methods": ("methods", _columns([("id", _key("id")), ("slug", _key("slug")), ("name", _key("name")),
                                          ("full name", lambda m: m.get("full_name")
                                           if m.get("full_name") != m.get("name") else None),
                                          ("area", _area), ("introduced", _key("introduced_year")),
                                          ("papers", _key("paper_count"))])),
    # The CLI's conference table has no id column; the text keeps the ID.
    "list_conferences": ("conferences", _columns([("id", _key("id")), ("slug", _key("slug")), ("name", _key("name")),
                                                  ("year", _key("year")), ("papers", _key("paper_count")),
                                                  ("tier", conference_tier), ("dates", conference_dates),
                                                  ("location", _key("location"))])),
    "list_organizations": ("organizations", organization_table),
    "list_frameworks": ("frameworks", framework_table),
}


def query_text(tool: str, payload: object) -> str:
    """Text of a tool whose result is the CLI payload alone (``outputSchema`` key ``query``)."""
    if tool in _DETAILS and isinstance(payload, dict):
        return _DETAILS[tool](payload)
    if tool == "list_tasks" and isinstance(payload, dict) and any(
            isinstance(area, dict) and "tasks" in area for area in payload.get("results") or []):
        return _grouped_tasks(payload)
    if tool in _LISTS:
        noun, table = _LISTS[tool]
        try:
            return _table(payload, noun, table)
        except ResponseError:  # not a list payload: the generic text below, never a failed call
            pass
    name = payload.get("name") if isinstance(payload, dict) else None
    return f"# {md_escape(name)}" if name else "Result in structuredContent.data."

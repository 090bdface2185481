"""Typed projections of task, method and benchmark payloads (docs/tool-contract.md §3.2).

Companion of :mod:`pwc_mcp_core.tools.projections.papers` (papers); same defensive rules.
"""

from __future__ import annotations

from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue
from pwc_mcp_core.tools.projections.leaderboards import absolute_url
from pwc_mcp_core.tools.projections.papers import (
    catalog_reference,
    catalog_references,
    payload_rows,
    text,
    whole,
)

__all__ = [
    "benchmark_items",
    "benchmark_summary",
    "grouped_benchmarks",
    "is_grouped",
    "method_detail",
    "task_detail",
]


def _object(value: object) -> JsonObject:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _items(value: object) -> list[JsonValue]:
    """``value`` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def benchmark_summary(row: object) -> JsonObject:
    """``BenchmarkSummary``: ``{id, name, slug, full_name, description, split, hf_url, paper_count,
    best_model}``.

    ``paper_count`` is ``paper_count``, else ``all_time_paper_count``, else None: an evaluation
    count is never shown as a paper count. ``best_model`` is the catalog's top model on the
    benchmark (task and trending payloads carry it).
    """
    row = row if isinstance(row, dict) else {}
    count = next((whole(row.get(key)) for key in ("paper_count", "all_time_paper_count")
                  if whole(row.get(key)) is not None), None)
    return {
        "id": text(row.get("id")),
        "name": text(row.get("name")) or text(row.get("slug")) or "Unknown benchmark",
        "slug": text(row.get("slug")),
        "full_name": text(row.get("full_name")),
        "description": text(row.get("description")),
        "split": text(row.get("split_name") or row.get("split")),
        "hf_url": absolute_url(row.get("hf_url")),
        "paper_count": count,
        "best_model": text(row.get("best_model_name")),
    }


def is_grouped(payload: object) -> bool:
    """Whether a ``benchmark list`` payload is the areas→tasks→benchmarks tree."""
    return any(isinstance(area.get("tasks"), list) for area in payload_rows(payload))


def grouped_benchmarks(payload: object) -> list[tuple[JsonObject, list[str]]]:
    """Each benchmark of a grouped tree once, in tree order, with the ``Area: Task, Task`` headings it
    appears under (a benchmark shared by several tasks is one benchmark, not several)."""
    seen: dict[str, tuple[JsonObject, dict[str, list[str]]]] = {}
    for area in payload_rows(payload):
        for task in _items(area.get("tasks")):
            if not isinstance(task, dict):
                continue
            for bench in _items(task.get("benchmarks")):
                if isinstance(bench, dict):
                    key = str(bench.get("id") or bench.get("slug") or bench.get("name"))
                    tasks = seen.setdefault(key, (bench, {}))[1].setdefault(str(area.get("name") or "Other"), [])
                    if task.get("name") and str(task["name"]) not in tasks:
                        tasks.append(str(task["name"]))
    return [(bench, [f"{area}: {', '.join(tasks)}" if tasks else area for area, tasks in where.items()])
            for bench, where in seen.values()]


def benchmark_items(payload: object, *, grouped: bool) -> list[JsonObject]:
    """Benchmarks of a ``benchmark list`` payload; a grouped areas→tasks→benchmarks tree is flattened
    in tree order, each benchmark once (docs/tool-contract.md §3.3 #21)."""
    if not grouped:
        return [benchmark_summary(row) for row in payload_rows(payload)]
    return [benchmark_summary(bench) for bench, _places in grouped_benchmarks(payload)]


def task_detail(payload: object, *, benchmark_limit: int) -> JsonObject:
    """``TaskDetail`` of a ``task --name`` payload: ``{id, name, slug, description, paper_count, area,
    parents, children, benchmarks, benchmark_count}`` (first ``benchmark_limit`` ranked benchmarks;
    ``benchmark_count`` is how many the task has)."""
    data = _object(payload)
    task = _object(data.get("task"))
    area = data.get("area")
    paper_count = whole(task.get("paper_count"))
    if paper_count is None:
        paper_count = whole(data.get("paper_count"))
    every = _items(data.get("benchmarks"))
    benchmarks: list[JsonValue] = [benchmark_summary(b) for b in every[:benchmark_limit]]
    return {
        "id": text(task.get("id")),
        "name": text(task.get("name")) or text(task.get("slug")) or "Unnamed task",
        "slug": text(task.get("slug")) or text(task.get("id")),
        "description": text(task.get("description")),
        "paper_count": paper_count,
        "area": {"id": text(area.get("id")), "name": text(area.get("name"))} if isinstance(area, dict) else None,
        "parents": catalog_references(data.get("parents")),
        "children": catalog_references(data.get("children")),
        "benchmarks": benchmarks,
        "benchmark_count": len(every) if isinstance(data.get("benchmarks"), list) else None,
    }


def method_detail(payload: object) -> JsonObject:
    """``MethodDetail`` of a ``method --name`` payload (``{"method": …, "area": …}``)."""
    data = _object(payload)
    method = _object(data.get("method"))
    area = catalog_reference(data.get("area"))
    return {
        "id": text(method.get("id")),
        "name": text(method.get("name")) or text(method.get("full_name")) or "Unnamed method",
        "slug": text(method.get("slug")),
        "full_name": text(method.get("full_name")),
        "description": text(method.get("description")),
        "area": area["name"] if area else None,
        "introduced_year": whole(method.get("introduced_year")),
        "source_paper_id": text(method.get("source_paper_id")),
        "source_url": absolute_url(method.get("source_url")),
        "source_title": text(method.get("source_title")),
        "paper_count": whole(method.get("paper_count")),
    }

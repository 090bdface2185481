"""Whole tool results: ``structuredContent`` (envelope + projections) and the text that carries its facts.

``structured(output, payload, arguments, ...)`` returns ``(structured, text)``
for one CLI payload. A tool with typed projections answers ``{"schema_version": "v1",
...projections}``: the projections are its structured view, and the CLI's whole payload
stays with ``pwc ... --json`` (it was 5-20x the text). A tool whose result is the payload
itself (or that keeps what its projections leave out: the citation text, a history's
points) adds it as ``data``. The text is a compact Markdown rendering of the projections' facts.
"""

from __future__ import annotations

from typing import cast

from pwc.leaderboard import parse_sort
from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue
from pwc_mcp_core.tools.projections.entities import (
    benchmark_items,
    benchmark_summary,
    grouped_benchmarks,
    is_grouped,
    method_detail,
    task_detail,
)
from pwc_mcp_core.tools.projections.leaderboards import (
    RANKING_NOTE,
    evaluation,
    metric_directions,
    next_page,
    paper_evaluation,
)
from pwc_mcp_core.tools.projections.papers import (
    lineage_result,
    matched_entities,
    paper_detail,
    paper_items,
    payload_rows,
    search_item,
    whole,
)
from pwc_mcp_core.tools.projections.text_entities import (
    benchmark_list_text,
    benchmark_text,
    method_text,
    query_text,
    task_text,
)
from pwc_mcp_core.tools.projections.text_papers import (
    evaluations_text,
    lineage_text,
    paper_info_text,
    paper_list_text,
    public_paper_text,
    search_text,
)

__all__ = ["public_paper_result", "structured"]

# get_benchmark arguments that leave rows out (sort_metric too: a row without the metric is left out).
_ROW_FILTERS = ("require_metrics", "minimum_metrics", "maximum_metrics", "pareto", "sort_metric")


def _envelope(**projections: object) -> JsonObject:
    # JSON by construction: the projections are built from the parsed CLI payload.
    return cast(JsonObject, {"schema_version": "v1", **projections})


def _with_data(payload: object, **projections: object) -> JsonObject:
    """The envelope plus the CLI payload as ``data`` (tools whose payload is the result)."""
    return cast(JsonObject, {"schema_version": "v1", **projections, "data": payload})


def _list(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []


def _opt_int(value: JsonValue) -> int | None:
    """A validated integer argument (None when absent)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _as_int(value: JsonValue) -> int:
    """``int(value)`` of a validated numeric argument.

    Raises:
        TypeError: ``value`` is not a number or numeric string (as ``int()`` does).
    """
    if isinstance(value, bool | int | float | str):
        return int(value)
    raise TypeError(f"int() argument must be a number, not {type(value).__name__!r}")


def _next(payload: object, page: int | None, limit: int | None) -> int | None:
    if not isinstance(payload, dict):
        return None
    explicit = payload.get("next_page")
    if whole(explicit) is not None:
        return explicit
    count = whole(payload.get("count"))
    if page and limit and count is not None and count > page * limit:
        return page + 1
    return None


def paper_page(payload: object, arguments: JsonObject, _notes: list[str]) -> tuple[JsonObject, str]:
    items = paper_items(payload)
    nxt = _next(payload, _opt_int(arguments.get("page", 1)), _opt_int(arguments.get("limit")))
    total = _count(payload)
    return _envelope(items=items, next_page=nxt, total=total), paper_list_text(items, nxt, total=total)


NO_STRONG_MATCH = ("No strong match: no result holds all the query's words, is close in meaning or is tagged with "
                   "what it names; these are the nearest papers, not necessarily relevant.")


def search_page(payload: object, arguments: JsonObject, _notes: list[str]) -> tuple[JsonObject, str]:
    """``search_papers``: the page with each row's match strength (and cut abstract on request), the
    entities the query named, ``strong_count``, a ``note`` when results came but none matched well,
    and ``total_capped`` when the catalog's count stopped at its bound (more papers match)."""
    items = [search_item(row) for row in payload_rows(payload)]
    nxt = _next(payload, _opt_int(arguments.get("page", 1)), _opt_int(arguments.get("limit")))
    data = payload if isinstance(payload, dict) else {}
    strong = whole(data.get("strong_count"))
    extra: dict[str, object] = {}
    if items and strong == 0:
        extra["note"] = NO_STRONG_MATCH
    cut = whole(data.get("abstracts_cut"))
    if cut is not None:
        extra["abstracts_cut"] = cut
    if data.get("count_capped") is True:
        extra["total_capped"] = True
    total = _count(payload)
    result = _envelope(items=items, next_page=nxt, total=total, strong_count=strong,
                       matched_entities=matched_entities(payload), **extra)
    return result, search_text(result, total, abstract_chars=whole(data.get("abstract_chars")))


def _count(payload: object) -> int | None:
    """The catalog's total of a list payload (``count``), when it states one."""
    return whole(payload.get("count")) if isinstance(payload, dict) else None


def paper_info(payload: object, arguments: JsonObject, _notes: list[str]) -> tuple[JsonObject, str]:
    paper = payload if isinstance(payload, dict) else {}
    detail = paper_detail(paper, include_resources=bool(arguments.get("include_resources")),
                          repo_limit=_as_int(arguments.get("repo_limit", 5)))
    evaluations = count = None
    if arguments.get("include_evaluations") and isinstance(paper.get("evaluations"), dict):
        rows = payload_rows(paper["evaluations"])
        evaluations = [paper_evaluation(row) for row in rows]
        count = whole(paper["evaluations"].get("count"))
        count = len(rows) if count is None else count
    rendered = paper_info_text(detail, count, evaluations)
    return _envelope(paper=detail, evaluation_count=count, evaluations=evaluations), rendered


def public_paper_result(reference: str, record: JsonObject) -> tuple[JsonObject, str]:
    """``get_paper_info`` for a paper outside the catalog: public metadata, ``in_catalog: false``."""
    detail = paper_detail({"id": record.get("arxiv_id") or record.get("doi") or reference, **record},
                          include_resources=False, repo_limit=5)
    note = str(record.get("note") or "This paper is not in the Papers With Code catalog.")
    links = [link for link in _list(record.get("available_at")) if isinstance(link, dict) and link.get("url")]
    result = _envelope(paper=detail, evaluation_count=None, evaluations=None, in_catalog=False,
                       note=note, available_at=links)
    return result, public_paper_text(detail, note, links)


def evaluation_page(payload: object, arguments: JsonObject, _notes: list[str]) -> tuple[JsonObject, str]:
    rows = [evaluation(row) for row in payload_rows(payload)]
    data = payload if isinstance(payload, dict) else {}
    count = whole(data.get("count"))
    count = len(rows) if count is None else count
    page = whole(data.get("page")) or _opt_int(arguments.get("page", 1))
    nxt = _next(data, page, _opt_int(arguments.get("limit")))
    paper = str(arguments.get("paper", "")).strip()
    result = _envelope(paper=paper, evaluation_count=count, page=page, next_page=nxt, evaluations=rows)
    return result, evaluations_text(paper, count, page, nxt, rows)


def lineage(payload: object, _arguments: JsonObject, _notes: list[str]) -> tuple[JsonObject, str]:
    fields = lineage_result(payload)
    return _envelope(**fields), lineage_text(fields)


def task(payload: object, arguments: JsonObject, _notes: list[str]) -> tuple[JsonObject, str]:
    detail = task_detail(payload, benchmark_limit=_as_int(arguments.get("benchmark_limit", 10)))
    total = detail.get("benchmark_count")
    return _envelope(task=detail), task_text(detail, benchmark_total=total if isinstance(total, int) else None)


def method(payload: object, _arguments: JsonObject, _notes: list[str]) -> tuple[JsonObject, str]:
    detail = method_detail(payload)
    return _envelope(method=detail), method_text(detail)


def benchmark(payload: object, arguments: JsonObject, notes: list[str]) -> tuple[JsonObject, str]:
    data = payload if isinstance(payload, dict) else {}
    rows = [evaluation(row) for row in payload_rows(data)]
    page, limit = _as_int(arguments.get("page", 1)), _as_int(arguments.get("limit", 20))
    scanned = data.get("matched_count") is not None and not notes
    nxt = next_page(data, page, limit, scanned=scanned)
    summary = benchmark_summary(data.get("benchmark"))
    count = whole(data.get("count"))
    result = _envelope(benchmark=summary, evaluation_count=count,
                       matched_count=whole(data.get("matched_count")), evaluations=rows,
                       metric_directions=metric_directions(rows), page=page, next_page=nxt,
                       ranking_note=RANKING_NOTE)
    if notes:
        result["metric_note"] = notes[0]
    filtered = any(arguments.get(name) not in (None, [], {}) for name in _ROW_FILTERS)
    order = data.get("order") if isinstance(data.get("order"), dict) else None
    sort = arguments.get("sort_metric")
    if order is None and not notes and isinstance(sort, str) and sort.strip():
        name, direction = parse_sort(sort)  # already accepted by the CLI, so it parses
        order = {"metric": name, "direction": "ascending" if direction == "asc" else "descending"}
    return result, benchmark_text(result, filtered=filtered, order=order)


def benchmark_page(payload: object, arguments: JsonObject, notes: list[str]) -> tuple[JsonObject, str]:
    """``list_benchmarks``. A grouped tree is paged here by ``limit``/``page`` (the CLI pages areas,
    not benchmarks); ``arguments`` then carry the caller's own ``limit`` and ``page``."""
    if not is_grouped(payload):
        items = benchmark_items(payload, grouped=False)
        nxt = _next(payload, _opt_int(arguments.get("page", 1)), _opt_int(arguments.get("limit")))
        total = _count(payload)
        result = _envelope(items=items, next_page=nxt, total=total)
        if notes:
            result["notes"] = list(notes)
        return result, benchmark_list_text(items, nxt, list(notes), total=total)
    every = grouped_benchmarks(payload)
    limit, page = whole(arguments.get("limit")), whole(arguments.get("page")) or 1
    shown = every if limit is None else every[(page - 1) * limit: page * limit]
    nxt = page + 1 if limit is not None and len(every) > page * limit else None
    items = [benchmark_summary(bench) for bench, _places in shown]
    grouping = (f"grouped by area: benchmarks with at least {arguments.get('minimum_evaluations') or 2} evaluations, "
                "each once with its area and tasks; the flat list (no group_by_area) has them all")
    shown_notes = [*notes, grouping]
    result = _envelope(items=items, next_page=nxt, total=len(every), notes=shown_notes)
    places = {str(item["id"]): "; ".join(where) for item, (_bench, where) in zip(items, shown, strict=True)}
    return result, benchmark_list_text(items, nxt, shown_notes, total=len(every), places=places)


def query(payload: object, arguments: JsonObject, _notes: list[str], tool: str = "") -> tuple[JsonObject, str]:
    return _with_data(payload), query_text(tool, payload)


def _payload(payload: object) -> JsonObject:
    if not isinstance(payload, dict):
        raise TypeError("the command returned no object")
    return payload


def citations(payload: object, _arguments: JsonObject, _notes: list[str]) -> tuple[JsonObject, str]:
    """cite_papers: the citation text itself; with RIS and CSL-JSON the references not cited follow it
    (BibTeX carries them in place as ``%`` comments)."""
    from pwc.commands.papers_cite import cite_failures

    data = _payload(payload)
    items = _list(data.get("items"))
    text = str(data.get("text") or "")
    failed = cite_failures(data) if data.get("format") != "bibtex" else []
    if failed:
        text = (text + "\n" if text else "") + "Not cited:\n" + "\n".join(failed) + "\n"
    return _with_data(payload, format=data.get("format"), cited=data.get("cited"), items=items), text


def verification(payload: object, _arguments: JsonObject, _notes: list[str]) -> tuple[JsonObject, str]:
    """verify_references: one line per reference with its status, evidence or candidates."""
    from pwc.commands.papers_cite import verify_lines

    data = _payload(payload)
    return (_with_data(payload, summary=data.get("summary"), items=_list(data.get("items"))),
            "\n".join(verify_lines(data)))


def sota_history(payload: object, _arguments: JsonObject, _notes: list[str]) -> tuple[JsonObject, str]:
    """get_sota_history: the series without its points (they are in ``data`` and the chart), and the
    CLI's text (:func:`pwc.history.history_markdown`)."""
    from pwc.history import history_markdown

    data = _payload(payload)
    projected = {key: data.get(key) for key in ("task", "tasks", "metric", "unit", "direction", "direction_known",
                                                "metrics", "steps", "span", "left_out")}
    return (_with_data(payload, benchmark=benchmark_summary(data.get("benchmark")), **projected),
            "\n".join(history_markdown(data)))


def trends(payload: object, _arguments: JsonObject, _notes: list[str]) -> tuple[JsonObject, str]:
    """get_trends: the counts as they are, and the CLI's text (:func:`pwc.trends.trends_markdown`)."""
    from pwc.trends import trends_markdown

    data = _payload(payload)
    projected = {key: data.get(key) for key in ("kind", "entity", "from_year", "to_year", "years", "totals",
                                                "all_papers", "span")}
    return _envelope(**projected), "\n".join(trends_markdown(data))


_BUILDERS = {
    "paper_page": paper_page, "search_page": search_page, "related_page": paper_page, "paper_info": paper_info,
    "evaluation_page": evaluation_page, "lineage": lineage, "task": task, "method": method,
    "benchmark": benchmark, "benchmark_page": benchmark_page, "query": query,
    "citations": citations, "verification": verification, "sota_history": sota_history,
    "trends": trends,
}


def structured(output: str, payload: object, arguments: JsonObject, notes: list[str],
               tool: str = "") -> tuple[JsonObject, str]:
    """``(structuredContent, text)`` of a tool whose ``outputSchema`` key is ``output``.

    ``arguments`` are the validated MCP arguments (after fall-back plans); ``notes`` the
    fall-back explanations (``metric_note`` for get_benchmark, ``notes`` for list_benchmarks);
    ``tool`` the tool name (it picks the text of payload-only results). The text is compact
    Markdown of the same facts as the projections (:mod:`pwc_mcp_core.tools.projections.text_papers`,
    :mod:`pwc_mcp_core.tools.projections.text_entities`).
    """
    if output == "query":
        return query(payload, arguments, notes, tool)
    return _BUILDERS[output](payload, arguments, notes)

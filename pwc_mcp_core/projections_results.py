"""Whole tool results: ``structuredContent`` (envelope + projections) and the short text fallback.

``structured(output, payload, arguments, ...)`` returns ``(structured, text)``
for one CLI payload. Envelope: ``{"schema_version": "v1", "data": <payload>,
...projections}`` (seed: every result carries the CLI payload as ``data``);
text summaries follow docs/tool-contract.md §3.3.
"""

from __future__ import annotations

from typing import Any

from pwc_mcp_core.leaderboards import RANKING_NOTE, evaluation, metric_directions, next_page, paper_evaluation
from pwc_mcp_core.projections import lineage_result, paper_detail, paper_items, payload_rows, text, whole
from pwc_mcp_core.projections_entities import benchmark_items, benchmark_summary, method_detail, task_detail

__all__ = ["public_paper_result", "structured"]


def _envelope(payload: Any, **projections: Any) -> dict[str, Any]:
    return {"schema_version": "v1", **projections, "data": payload}


def _next(payload: Any, page: int | None, limit: int | None) -> int | None:
    if not isinstance(payload, dict):
        return None
    explicit = payload.get("next_page")
    if whole(explicit) is not None:
        return explicit
    count = whole(payload.get("count"))
    if page and limit and count is not None and count > page * limit:
        return page + 1
    return None


def _with_next(line: str, next_page_no: int | None) -> str:
    return f"{line} Next page: {next_page_no}." if next_page_no else line


def paper_page(payload: Any, arguments: dict[str, Any], _notes: list[str]) -> tuple[dict, str]:
    items = paper_items(payload)
    nxt = _next(payload, arguments.get("page", 1), arguments.get("limit"))
    return _envelope(payload, items=items, next_page=nxt), _with_next(f"Found {len(items)} papers.", nxt)


def paper_info(payload: Any, arguments: dict[str, Any], _notes: list[str]) -> tuple[dict, str]:
    paper = payload if isinstance(payload, dict) else {}
    detail = paper_detail(paper, include_resources=bool(arguments.get("include_resources")),
                          repo_limit=int(arguments.get("repo_limit", 5)))
    evaluations = count = None
    if arguments.get("include_evaluations") and isinstance(paper.get("evaluations"), dict):
        rows = payload_rows(paper["evaluations"])
        evaluations = [paper_evaluation(row) for row in rows]
        count = whole(paper["evaluations"].get("count"))
        count = len(rows) if count is None else count
    summary = (f"## {detail['title']}\n\n{detail['code_repository_count']} code repositories; "
               f"returned {len(detail['repositories'])}.")
    return _envelope(payload, paper=detail, evaluation_count=count, evaluations=evaluations), summary


def public_paper_result(reference: str, record: dict[str, Any]) -> tuple[dict, str]:
    """``get_paper_info`` for a paper outside the catalog: public metadata, ``in_catalog: false``."""
    detail = paper_detail({"id": record.get("arxiv_id") or record.get("doi") or reference, **record},
                          include_resources=False, repo_limit=5)
    note = str(record.get("note") or "This paper is not in the Papers With Code catalog.")
    links = [link for link in record.get("available_at") or [] if isinstance(link, dict) and link.get("url")]
    result = _envelope(record, paper=detail, evaluation_count=None, evaluations=None, in_catalog=False,
                       note=note, available_at=links)
    cite = "; ".join(f"{link.get('label') or 'link'}: {link['url']}" for link in links)
    return result, f"## {detail['title']}\n\n{note}" + (f"\n\nAvailable at: {cite}" if cite else "")


def evaluation_page(payload: Any, arguments: dict[str, Any], _notes: list[str]) -> tuple[dict, str]:
    rows = [evaluation(row) for row in payload_rows(payload)]
    data = payload if isinstance(payload, dict) else {}
    count = whole(data.get("count"))
    count = len(rows) if count is None else count
    page = whole(data.get("page")) or arguments.get("page", 1)
    nxt = _next(data, page, arguments.get("limit"))
    result = _envelope(payload, paper=str(arguments.get("paper", "")).strip(), evaluation_count=count,
                       page=page, next_page=nxt, evaluations=rows)
    return result, _with_next(f"Found {count} evaluation rows; returned {len(rows)} on page {page}.", nxt)


def lineage(payload: Any, _arguments: dict[str, Any], _notes: list[str]) -> tuple[dict, str]:
    fields = lineage_result(payload)
    title = fields["paper"]["title"] or fields["paper"]["reference"] or "paper"
    summary = (f"## Lineage of {title}\n\n{len(fields['predecessors'])} predecessors; "
               f"{len(fields['successors'])} successors (explicit catalog links only).")
    return _envelope(payload, **fields), summary


def task(payload: Any, arguments: dict[str, Any], _notes: list[str]) -> tuple[dict, str]:
    detail = task_detail(payload, benchmark_limit=int(arguments.get("benchmark_limit", 10)))
    papers = detail["paper_count"] if detail["paper_count"] is not None else "unknown"
    return (_envelope(payload, task=detail),
            f"## {detail['name']}\n\n{papers} papers; returned {len(detail['benchmarks'])} benchmarks.")


def method(payload: Any, _arguments: dict[str, Any], _notes: list[str]) -> tuple[dict, str]:
    detail = method_detail(payload)
    papers = detail["paper_count"] if detail["paper_count"] is not None else "unknown"
    return _envelope(payload, method=detail), f"## {detail['name']}\n\n{papers} papers."


def benchmark(payload: Any, arguments: dict[str, Any], notes: list[str]) -> tuple[dict, str]:
    data = payload if isinstance(payload, dict) else {}
    rows = [evaluation(row) for row in payload_rows(data)]
    page, limit = int(arguments.get("page", 1)), int(arguments.get("limit", 20))
    scanned = data.get("matched_count") is not None and not notes
    nxt = next_page(data, page, limit, scanned=scanned)
    summary = benchmark_summary(data.get("benchmark"))
    count = whole(data.get("count"))
    result = _envelope(payload, benchmark=summary, evaluation_count=count,
                       matched_count=whole(data.get("matched_count")), evaluations=rows,
                       metric_directions=metric_directions(rows), page=page, next_page=nxt,
                       ranking_note=RANKING_NOTE)
    line = (f"## {summary['name']}\n\n{count if count is not None else len(rows)} evaluation rows; "
            f"returned {len(rows)} models on page {page}. Ranks are task-scoped.")
    if notes:
        result["metric_note"] = notes[0]
        line = f"{_with_next(line, nxt)} Note: {notes[0]}."
        return result, line
    return result, _with_next(line, nxt)


def benchmark_page(payload: Any, arguments: dict[str, Any], notes: list[str]) -> tuple[dict, str]:
    grouped = arguments.get("limit") is None
    items = benchmark_items(payload, grouped=grouped)
    nxt = None if grouped else _next(payload, arguments.get("page", 1), arguments.get("limit"))
    result = _envelope(payload, items=items, next_page=nxt)
    line = _with_next(f"Found {len(items)} benchmarks.", nxt)
    if notes:
        result["notes"] = list(notes)
        line += "".join(f" Note: {note}." for note in notes)
    return result, line


def query(payload: Any, _arguments: dict[str, Any], _notes: list[str]) -> tuple[dict, str]:
    if isinstance(payload, dict) and isinstance(payload.get("results"), list):
        count = whole(payload.get("count"))
        total = f" of {count}" if count is not None else ""
        return _envelope(payload), f"Returned {len(payload['results'])}{total} results; see structuredContent.data."
    name = text(payload.get("name")) if isinstance(payload, dict) else None
    return _envelope(payload), (f"## {name}\n\nDetails in structuredContent.data." if name
                                else "Result in structuredContent.data.")


_BUILDERS = {
    "paper_page": paper_page, "related_page": paper_page, "paper_info": paper_info,
    "evaluation_page": evaluation_page, "lineage": lineage, "task": task, "method": method,
    "benchmark": benchmark, "benchmark_page": benchmark_page, "query": query,
}


def structured(output: str, payload: Any, arguments: dict[str, Any], notes: list[str]) -> tuple[dict, str]:
    """``(structuredContent, text)`` of a tool whose ``outputSchema`` key is ``output``.

    ``arguments`` are the validated MCP arguments (after fall-back plans); ``notes`` the
    fall-back explanations (``metric_note`` for get_benchmark, ``notes`` for list_benchmarks).
    """
    return _BUILDERS[output](payload, arguments, notes)

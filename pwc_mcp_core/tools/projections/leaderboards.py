"""Leaderboard projections: merged CLI evaluation rows → typed ``Evaluation`` objects.

Spec: docs/tool-contract.md §3.2 (``Evaluation``, ``PaperEvaluation``, benchmark results,
metric direction), §6 (pagination, merging), docs/cli-contract.md §3.4–§3.7; the seed
README adds ``metric_note`` (a metric the leaderboard lacks answers with the
unfiltered leaderboard and names the available metrics).
"""

from __future__ import annotations

from metric_rules import metric_number
from pwc import render
from pwc.leaderboard import best_first, metric_direction, row_parameters, shot_count
from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue

__all__ = [
    "METRIC_SELECTORS",
    "RANKING_NOTE",
    "absolute_url",
    "evaluation",
    "local_page",
    "metric_direction",
    "metric_directions",
    "metric_note",
    "metric_value",
    "next_page",
    "order_by_metric",
    "paper_evaluation",
    "parse_shots",
    "unknown_metric_error",
]

RANKING_NOTE = (
    "Ranks are scoped by task: best_rank and rank_scopes[].rank are positions within one task's "
    "leaderboard and are not necessarily comparable across rank_scopes."
)
# CLI dests of `pwc benchmark --name` that select or order rows by metric (docs/cli-contract.md §2.15), under
# either naming (`--min` may have dest `min` or `minimum_metrics`).
METRIC_SELECTORS = ("require_metrics", "minimum_metrics", "maximum_metrics", "sort_metric", "pareto",
                    "min", "max", "sort")

_UNKNOWN_METRIC = "unknown metric(s):"
_AVAILABLE = "; available metrics: "


def _object(value: object) -> JsonObject:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def metric_directions(evaluations: list[JsonObject]) -> dict[str, str]:
    """Direction of every metric name present in ``evaluations`` (projected rows), keys sorted."""
    names = {name for row in evaluations for name in _object(row.get("metrics"))}
    return {name: metric_direction(name) for name in sorted(names)}


def metric_value(value: object) -> JsonValue:
    """Projection of one metric value: numbers kept, numeric strings → float, other strings kept,
    anything else (bool, null, containers) stringified (docs/tool-contract.md §3.2)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        number = metric_number(value)
        return value if number is None else number
    return str(value)


def absolute_url(url: object) -> str | None:
    """``pwc.render.absolute_url`` for projections: empty or non-string values → None."""
    if not isinstance(url, str) or not url:
        return None
    return render.absolute_url(url)


def parse_shots(methodology: object) -> int | None:
    """The shot count in a methodology text ("5-shot", "0 shot", "3shot"), else None.

    The same rule the CLI merges rows by (``pwc.leaderboard.shot_count``).
    """
    shots = shot_count(methodology)
    return int(shots) if shots else None


def _text(value: object) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _bool(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _metrics(row: JsonObject) -> JsonObject:
    metrics = row.get("metrics")
    if not isinstance(metrics, dict):
        return {}
    return {str(name): metric_value(value) for name, value in metrics.items()}


def _parameters(row: JsonObject) -> int | None:
    """``num_parameters`` as the catalog gives it, else the count a parameter metric states
    (`pwc.leaderboard.row_parameters`, the CLI's parameter column too)."""
    size = _int(row.get("num_parameters"))
    return size if size is not None else row_parameters(row)


def _rank_scopes(row: JsonObject) -> list[JsonValue]:
    scopes = row.get("rank_scopes")
    if isinstance(scopes, list):
        merged: list[JsonValue] = [
            {"task_id": _text(s.get("task_id")), "task_name": _text(s.get("task_name")),
             "task_slug": _text(s.get("task_slug")), "rank": _int(s.get("rank"))}
            for s in scopes if isinstance(s, dict)
        ]
        return merged
    # A row the CLI did not merge: synthesise its single scope (§3.2).
    if any(row.get(key) is not None for key in ("task_id", "task_name", "best_rank")):
        return [{"task_id": _text(row.get("task_id")), "task_name": _text(row.get("task_name")),
                 "task_slug": _text(row.get("task_slug")), "rank": _int(row.get("best_rank"))}]
    return []


def evaluation(row: JsonObject) -> JsonObject:
    """``Evaluation`` projection of one (merged) CLI evaluation row (docs/tool-contract.md §3.2)."""
    split = row.get("split") or row.get("split_name") or row.get("evaluated_on")
    source = row.get("result_url") or row.get("source_url") or row.get("external_source_url")
    return {
        "id": _text(row.get("id")),
        "model_name": _text(row.get("model_name")) or "Unknown model",
        "harness": _text(row.get("harness")),
        "metrics": _metrics(row),
        "best_metric": _text(row.get("best_metric")),
        "best_rank": _int(row.get("best_rank")),
        "task": _text(row.get("task_name")),
        "benchmark": _text(row.get("dataset_name")),
        "paper_id": _text(row.get("paper_id")),
        "paper_title": _text(row.get("paper_title")),
        "paper_arxiv_id": _text(row.get("paper_arxiv_id")),
        "paper_published": _text(row.get("paper_published_date")),
        "rank_scopes": _rank_scopes(row),
        "is_open": _bool(row.get("is_open")),
        "num_parameters": _parameters(row),
        "split": _text(split),
        "shots": parse_shots(row.get("methodology")),
        "evaluation_protocol": _text(row.get("methodology")),
        "source_url": absolute_url(source),
        "code_url": absolute_url(row.get("code_url")),
        "hf_model_url": absolute_url(row.get("hf_model_url")),
        "updated_at": _text(row.get("updated_at")),
        "uses_additional_data": _bool(row.get("uses_additional_data")),
    }


def paper_evaluation(row: JsonObject) -> JsonObject:
    """``PaperEvaluation`` projection of a raw row from ``paper info --include-evals`` (§3.2)."""
    return {
        "id": _text(row.get("id")),
        "benchmark": _text(row.get("dataset_name")),
        "task": _text(row.get("task_name")),
        "model_name": _text(row.get("model_name")) or "Unknown model",
        "harness": _text(row.get("harness")),
        "metrics": _metrics(row),
        "best_metric": _text(row.get("best_metric")),
        "best_rank": _int(row.get("best_rank")),
        "is_open": row.get("is_open") is not False,
        "num_parameters": _parameters(row),
        "source_url": absolute_url(row.get("result_url") or row.get("source_url")),
    }


def next_page(payload: JsonObject, page: int, limit: int, *, scanned: bool) -> int | None:
    """The next page of a leaderboard: the payload's own ``next_page`` when it carries one, else
    ``page + 1`` while rows remain (matched rows after a metric scan, upstream total otherwise)."""
    if "next_page" in payload:
        explicit = payload["next_page"]
        return explicit if isinstance(explicit, int) and not isinstance(explicit, bool) and explicit > page else None
    total = payload.get("matched_count") if scanned else payload.get("count")
    if isinstance(total, int) and not isinstance(total, bool) and total > page * limit:
        return page + 1
    return None


def local_page(payload: object, page: int, limit: int, *, max_rows: int) -> object:
    """Page ``page`` of a leaderboard payload fetched with ``limit = page * limit`` rows.

    Returns a copy whose ``results`` are that page's rows and whose ``next_page`` says whether
    another page exists within the CLI's ``max_rows`` reach.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("results"), list):
        return payload
    rows = payload["results"]
    scanned = payload.get("matched_count")
    total = scanned if isinstance(scanned, int) and not isinstance(scanned, bool) else payload.get("count")
    total = total if isinstance(total, int) and not isinstance(total, bool) else len(rows)
    more = total > page * limit and (page + 1) * limit <= max_rows
    return {**payload, "results": rows[(page - 1) * limit: page * limit], "next_page": page + 1 if more else None}


def order_by_metric(payload: object, requested: list[str]) -> object:
    """The leaderboard payload with its rows best first (`pwc.leaderboard.best_first`, which
    ``pwc benchmark`` applies too) and ``order`` naming the metric; unchanged when no metric has
    a known direction."""
    if not isinstance(payload, dict) or not isinstance(payload.get("results"), list):
        return payload
    rows, order = best_first([row for row in payload["results"] if isinstance(row, dict)], requested)
    return payload if order is None else {**payload, "results": rows, "order": order}


def unknown_metric_error(message: str) -> bool:
    """True for the CLI usage error a metric the leaderboard lacks produces (docs/cli-contract.md §3.5)."""
    return _UNKNOWN_METRIC in message


def metric_note(message: str) -> str:
    """The ``metric_note`` for an ``unknown metric(s): …; available metrics: …`` CLI message."""
    at = message.find(_UNKNOWN_METRIC)
    body = message[at + len(_UNKNOWN_METRIC):].strip() if at >= 0 else message
    missing, _, available = body.partition(_AVAILABLE)
    available = available.strip() or "none"
    return (
        f"this leaderboard does not report {missing.strip() or 'the requested metric'}; "
        f"returned the unfiltered leaderboard instead. Available metrics: {available}"
    )

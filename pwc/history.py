"""State of the art over time: the best-so-far series of one leaderboard metric (docs/cli-contract.md §2.23).

:func:`sota_history` turns a benchmark's merged evaluation rows (``pwc.leaderboard.merge_evaluations``)
into the series ``pwc benchmark history`` and the ``get_sota_history`` tool answer with:

* the metric: the one asked for (case-insensitive), else the board's primary metric (the
  ``best_metric`` most rows name, else the metric most rows report; never a model-size column);
* its direction from :func:`metric_rules.metric_direction`; an ``unknown`` direction is read as
  higher-is-better, the way the catalog ranks the board, and says so (``direction_known``);
* the results in date order (the paper's publication date, else ``evaluated_on``); rows on one
  date are taken best first, so a step is the best result of its day;
* a step wherever a result strictly beats every earlier one, with its improvement over the
  previous step (a positive amount in the metric's units; ``None`` for the first);
* the span: first and last result date, the results counted, and how long the current best has
  held up to the last result on the board (never "today", so the same board gives the same answer);
* rows left out, counted by reason: without the metric, without a parseable value, without a date.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TypedDict, cast

from metric_rules import find_metric, is_size_metric, metric_direction, metric_magnitude
from pwc.errors import UsageError
from pwc.markdown import md_table
from pwc.render import EM_DASH, md_escape

__all__ = ["TEXT_STEPS", "HistoryPayload", "available_metrics", "history_markdown", "primary_metric",
           "sota_history"]

TEXT_STEPS = 25
"""Steps the text table shows (the latest ones); the structured answer has them all."""
_TITLE_CHARS = 60


class HistoryPaper(TypedDict):
    """The paper of a step, its fields as text (None when the row has none)."""

    id: str | None
    arxiv_id: str | None
    title: str | None


class HistoryStep(TypedDict):
    """One step of the best-so-far series: a result that beat every earlier one."""

    date: str
    value: float
    model: str | None
    paper: HistoryPaper
    code_url: str | None
    task: str | None
    improvement: float | None


class HistoryPayload(TypedDict):
    """What :func:`sota_history` returns (``pwc benchmark history --json`` data)."""

    benchmark: dict[str, object]
    task: str | None
    tasks: list[str]
    metric: str | None
    unit: str | None
    direction: str
    direction_known: bool
    metrics: list[str]
    steps: list[HistoryStep]
    points: list[list[str | float]]
    span: dict[str, str | int | None]
    left_out: dict[str, int]


def _metrics(row: Mapping[str, object]) -> Mapping[object, object]:
    metrics = row.get("metrics")
    return metrics if isinstance(metrics, Mapping) else {}


def available_metrics(rows: Sequence[Mapping[str, object]]) -> list[str]:
    """Every metric name the rows report, case-insensitively sorted (first spelling kept)."""
    seen: dict[str, str] = {}
    for row in rows:
        for name in _metrics(row):
            seen.setdefault(str(name).casefold(), str(name))
    return sorted(seen.values(), key=str.casefold)


def primary_metric(rows: Sequence[Mapping[str, object]]) -> str | None:
    """The ``best_metric`` most rows name, else the metric most rows report; size columns never."""
    named = Counter(str(row["best_metric"]) for row in rows
                    if row.get("best_metric") and not is_size_metric(str(row["best_metric"])))
    if named:
        return min(named, key=lambda name: (-named[name], name.casefold()))
    reported = Counter(str(name) for row in rows for name in _metrics(row) if not is_size_metric(str(name)))
    return min(reported, key=lambda name: (-reported[name], name.casefold())) if reported else None


def _date(row: Mapping[str, object]) -> str | None:
    for key in ("paper_published_date", "evaluated_on"):
        value = row.get(key)
        if isinstance(value, str) and len(value) >= 10:
            try:
                return dt.date.fromisoformat(value[:10]).isoformat()
            except ValueError:
                continue
    return None


def _value(row: Mapping[str, object], metric: str) -> tuple[bool, float | None]:
    """(reports the metric, its numeric value or None)."""
    reported, raw = find_metric(_metrics(row), metric)
    return reported, metric_magnitude(raw)


def _unit(rows: Sequence[Mapping[str, object]], metric: str) -> str | None:
    """``"%"`` when the metric's values are reported as percentages ("88.55%") or its name says
    so ("Percentage error"); else None (the unit is whatever the metric counts)."""
    folded = metric.casefold()
    if "percent" in folded or "%" in folded:
        return "%"
    for row in rows:
        value = find_metric(_metrics(row), metric)[1]
        if isinstance(value, str) and value.strip().endswith("%"):
            return "%"
    return None


def _tidy(number: float) -> float:
    """A difference of two reported values without float noise (84.3 - 78.57 is 5.73)."""
    return float(f"{number:.10g}")


def _text(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def _step(row: Mapping[str, object], date: str, value: float, previous: float | None) -> HistoryStep:
    return {
        "date": date, "value": value, "model": _text(row.get("model_name")),
        "paper": {"id": _text(row.get("paper_id")), "arxiv_id": _text(row.get("paper_arxiv_id")),
                  "title": _text(row.get("paper_title"))},
        "code_url": _text(row.get("code_url")), "task": _text(row.get("task_name")),
        "improvement": None if previous is None else _tidy(abs(value - previous)),
    }


def sota_history(benchmark: Mapping[str, object], rows: Sequence[Mapping[str, object]], metric: str | None = None,
                 *, task: str | None = None) -> HistoryPayload:
    """The best-so-far series of ``metric`` (default: :func:`primary_metric`) over merged ``rows``.

    Returns ``{"benchmark", "task", "tasks", "metric", "unit", "direction", "direction_known", "metrics", "steps",
    "points", "span", "left_out"}`` (docs/cli-contract.md §2.23). ``points`` holds every dated
    result as ``[date, value]`` in date order. Raises ``UsageError("unknown metric: …; available
    metrics: …")`` when no row reports ``metric`` (exit 2).
    """
    names = available_metrics(rows)
    if metric is None:
        chosen = primary_metric(rows)
    else:
        named = find_metric(dict(zip(names, names, strict=True)), metric.strip())[1]
        chosen = named if isinstance(named, str) else None
        if chosen is None:
            raise UsageError(f"unknown metric: {metric.strip()}; available metrics: {', '.join(names) or 'none'}")
    direction = metric_direction(chosen) if chosen else "unknown"
    unit = _unit(rows, chosen) if chosen else None
    lower = direction == "lower"
    left_out = {"without_metric": 0, "unparseable_value": 0, "without_date": 0}
    dated: list[tuple[str, float, Mapping[str, object]]] = []
    for row in rows:
        reports, value = _value(row, chosen) if chosen else (False, None)
        date = _date(row)
        if not reports:
            left_out["without_metric"] += 1
        elif value is None:
            left_out["unparseable_value"] += 1
        elif date is None:
            left_out["without_date"] += 1
        else:
            dated.append((date, value, row))
    # Date order; on one date the best first, then by model name, so the order never depends on the API's.
    dated.sort(key=lambda item: (item[0], item[1] if lower else -item[1], str(item[2].get("model_name") or "")))
    steps: list[HistoryStep] = []
    best: float | None = None
    for date, value, row in dated:
        if best is None or (value < best if lower else value > best):
            steps.append(_step(row, date, value, best))
            best = value
    span: dict[str, str | int | None] = {"first": None, "last": None, "results": len(dated), "best_since": None,
                            "best_held_days": None, "results_since_best": 0}
    if dated:
        since = steps[-1]["date"]
        last = dated[-1][0]
        span.update(first=dated[0][0], last=last, best_since=since,
                    best_held_days=(dt.date.fromisoformat(last) - dt.date.fromisoformat(since)).days,
                    results_since_best=sum(1 for d, _v, _r in dated if d > since))
    tasks = sorted({str(row["task_name"]) for row in rows if row.get("task_name")}, key=str.casefold)
    return {"benchmark": dict(benchmark), "task": task, "tasks": tasks, "metric": chosen, "unit": unit,
            "direction": "lower" if lower else "higher", "direction_known": direction != "unknown",
            "metrics": names, "steps": steps, "points": [[d, v] for d, v, _r in dated],
            "span": span, "left_out": left_out}


def _number(value: object) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else EM_DASH


def _short(text: str | None) -> str:
    if not text:
        return ""
    return text if len(text) <= _TITLE_CHARS else text[:_TITLE_CHARS - 1].rstrip() + "…"


def history_markdown(data: Mapping[str, object]) -> list[str]:
    """The text view: a heading, the span in one sentence, the steps as a compact table (the latest
    :data:`TEXT_STEPS`), what was left out and the board's other metrics.

    ``data`` is a :func:`sota_history` (or its JSON round trip through the MCP layer).
    """
    # Trusted shape: built by sota_history; the fields are only formatted, never computed on.
    payload = cast("HistoryPayload", data)
    bench = payload.get("benchmark") or {}
    metric = payload.get("metric")
    name = bench.get("name") or bench.get("slug") or "Benchmark"
    if metric is None:
        return [f"# SOTA history: {md_escape(name)}", "", "This leaderboard reports no metric."]
    way = f"{payload['direction']} is better" + ("" if payload.get("direction_known") else
                                                  " (assumed: direction unknown, as the catalog ranks it)")
    scope = f" ({md_escape(payload['task'])})" if payload.get("task") else ""
    lines = [f"# SOTA history: {md_escape(name)}{scope}: {md_escape(metric)}, {way}", ""]
    ident = [f"Benchmark ID {md_escape(bench['id'])}" if bench.get("id") is not None else "",
             f"slug {md_escape(bench['slug'])}" if bench.get("slug") else "",
             f"{bench['paper_count']} papers" if isinstance(bench.get("paper_count"), int) else ""]
    if any(ident):
        lines += [", ".join(part for part in ident if part) + ".", ""]
    tasks = payload.get("tasks") or []
    if not payload.get("task") and len(tasks) > 1:
        lines += ["Results of every task on this benchmark: " + ", ".join(md_escape(t) for t in tasks)
                  + " (narrow with task).", ""]
    span, steps = payload["span"], payload["steps"]
    if not steps:
        lines.append("No result has both a date and a value for this metric.")
    else:
        top = steps[-1]
        lines.append(f"{span['results']} results from {span['first']} to {span['last']}; "
                     f"{len(steps)} steps. Best {_number(top['value'])} ({md_escape(top['model'])}, "
                     f"{top['date']}), held {span['best_held_days']} days to the last result; "
                     f"{span['results_since_best']} later results did not beat it.")
        lines.append("")
        shown = steps[-TEXT_STEPS:]
        if len(shown) < len(steps):
            lines += [f"The latest {len(shown)} of {len(steps)} steps (all in structuredContent.steps):", ""]
        table = []
        for step in shown:
            paper = step["paper"]
            ref = paper.get("arxiv_id") or paper.get("id") or ""
            cell = " ".join(part for part in (ref, _short(paper.get("title"))) if part)
            table.append([step["date"], _number(step["value"]), _number(step["improvement"]),
                          md_escape(step["model"]), md_escape(cell), md_escape(step["code_url"])])
        lines += md_table(["Date", "Value", "Gain", "Model", "Paper", "Code"], table, compact=True,
                          drop_empty=False)
    left = payload["left_out"]
    gaps = [f"{count} {label}" for label, count in (("without this metric", left["without_metric"]),
                                                    ("without a parseable value", left["unparseable_value"]),
                                                    ("without a date", left["without_date"])) if count]
    lines += ["", "Rows left out: " + ("; ".join(gaps) if gaps else "none") + "."]
    others = [m for m in payload.get("metrics", []) if m != metric]
    if others:
        lines.append("Other metrics: " + ", ".join(md_escape(m) for m in others) + ".")
    return lines

"""Evaluation rows: merging, metric selection, parameter sizes and leaderboard fetching.

Rules come from ``docs/cli-contract.md`` §3.4 (fetching, merging, order) and §3.5 (metric
lookup, selection, Pareto, sort, parameter sizes, display cells).

Deliberate fixes of reference quirks (§7):

* a metric scan stops on an empty page, whatever ``count`` claims (the
  reference would page forever);
* ``unknown metric(s): …`` lists only the requested names that no merged row
  reports (casefolded), never the ones that exist.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, TypeGuard, TypeVar

from metric_rules import find_metric, metric_direction, metric_magnitude
from pwc.errors import ResponseError, UsageError
from pwc.json_types import JsonObject, JsonValue
from pwc.render import EM_DASH, result_list, result_total

if TYPE_CHECKING:  # the transport (httpx) is imported only where a call is made
    from pwc.transport import Client

__all__ = [
    "PAGE_SIZE",
    "SCAN_LIMIT",
    "MetricSelection",
    "best_first",
    "check_parameter_limit",
    "fetch_leaderboard",
    "merge_evaluations",
    "metric_direction",
    "metric_magnitude",
    "metric_summary",
    "metric_value",
    "model_label",
    "parameters_cell",
    "parse_metric_list",
    "parse_parameter_size",
    "parse_pareto",
    "parse_sort",
    "parse_threshold",
    "primary_metric",
    "row_parameters",
    "shot_count",
]

PAGE_SIZE = 100
SCAN_LIMIT = 1000
MAX_PARAMETER_SIZE = 2**63 - 2

_SHOT_RE = re.compile(r"\b(\d+)\s*[- ]?shot", re.IGNORECASE)
_SIZE_RE = re.compile(r"(\d+(?:_\d+)*)(?:\.(\d+(?:_\d+)*))?([mb])?", re.IGNORECASE)
_SIZE_SUFFIX = {"m": 10**6, "b": 10**9}

# A row type kept through ordering and selection (merged rows are JsonObject; callers may pass their own).
RowT = TypeVar("RowT", bound=Mapping[str, object])


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


# ---------------------------------------------------------------- merging (§3.4)


def shot_count(methodology: object) -> str:
    """The digits of the first ``<n>-shot`` / ``<n> shot`` / ``<n>shot`` in ``methodology``, else ``""``."""
    if not isinstance(methodology, str):
        return ""
    match = _SHOT_RE.search(methodology)
    return match.group(1) if match else ""


def _text(value: object) -> str:
    return "" if value is None else str(value)


def _split(row: Mapping[str, object]) -> str:
    for name in ("split", "split_name", "evaluated_on"):
        if row.get(name):
            return str(row[name])
    return ""


def _group_key(row: Mapping[str, object]) -> tuple[str, ...]:
    # task_id is deliberately absent: one model result listed under several tasks is one row.
    return (_text(row.get("paper_id")), _text(row.get("dataset_id")), _text(row.get("model_name")),
            _text(row.get("harness")), _split(row), shot_count(row.get("methodology")))


def _metrics(row: Mapping[str, object]) -> JsonObject:
    metrics = row.get("metrics")
    return metrics if isinstance(metrics, dict) else {}


def _conflicts(left: Mapping[str, object], right: Mapping[str, object]) -> bool:
    return any(left[name] != right[name] for name in left.keys() & right.keys())


@dataclass
class _Merged:
    row: JsonObject
    metrics: JsonObject  # row["metrics"], the union of the sources' metrics
    sources: list[JsonObject] = field(default_factory=list)


def merge_evaluations(rows: Iterable[object]) -> list[JsonObject]:
    """Merge equivalent evaluation rows (§3.4, 0.4.1 rules) and return them in leaderboard order.

    Rows group on (paper_id, dataset_id, model_name, harness, split, shots); within a
    group a row joins the first merged row whose shared metrics are all equal.
    Each result is a new dict: the first row's fields plus the union of
    ``metrics``, ``rank_scopes`` ([{task_id, task_name, task_slug, rank}], one per
    task), the minimum integer ``best_rank``, the first non-empty ``best_metric``
    and ``num_parameters`` (the common positive int, else None). Order: best_rank
    (missing last), model_name casefolded, paper_id. Inputs are not modified.
    """
    groups: dict[tuple[str, ...], list[_Merged]] = {}
    for row in rows:
        if not isinstance(row, dict):
            continue
        candidates = groups.setdefault(_group_key(row), [])
        target = next((m for m in candidates if not _conflicts(_metrics(m.row), _metrics(row))), None)
        if target is None:
            metrics: JsonObject = {}
            target = _Merged(row={**row, "metrics": metrics}, metrics=metrics)
            candidates.append(target)
        target.sources.append(row)
        for name, value in _metrics(row).items():
            target.metrics.setdefault(name, value)
    merged = [_finish(m) for group in groups.values() for m in group]
    merged.sort(key=_order_key)
    return merged


def _finish(merged: _Merged) -> JsonObject:
    row, sources = merged.row, merged.sources
    scopes: dict[str | None, JsonObject] = {}
    for source in sources:
        task_id = source.get("task_id")
        task_key = None if task_id is None else str(task_id)
        best = source.get("best_rank")
        rank = best if _is_int(best) else None
        scope = scopes.get(task_key)
        if scope is None:
            scopes[task_key] = {"task_id": task_key, "task_name": source.get("task_name"),
                                "task_slug": source.get("task_slug"), "rank": rank}
        elif rank is not None and (not _is_int(current := scope["rank"]) or rank < current):
            scope["rank"] = rank  # a scope's rank is an int or None, so not an int is None
    row["rank_scopes"] = list[JsonValue](scopes.values())
    ranks = [best for s in sources if _is_int(best := s.get("best_rank"))]
    row["best_rank"] = min(ranks) if ranks else None
    row["best_metric"] = next((s["best_metric"] for s in sources if s.get("best_metric")), None)
    sizes = {size if _is_int(size) else None for size in (s.get("num_parameters") for s in sources)}
    common = sizes.pop() if len(sizes) == 1 else None
    row["num_parameters"] = common if common is not None and common > 0 else None
    return row


def _order_key(row: Mapping[str, object]) -> tuple[float, str, str]:
    rank = row.get("best_rank")
    return (rank if _is_int(rank) else math.inf, _text(row.get("model_name")).casefold(),
            _text(row.get("paper_id")))


# ---------------------------------------------------------------- metrics (§3.5)


def metric_value(metrics: object, name: str) -> float | None:
    """The numeric value of metric ``name`` (case-insensitive) in ``metrics``, else None: what
    selection, thresholds, Pareto and sorting compare, parsed by the one parser of metric values,
    :func:`metric_rules.metric_magnitude` ("84.4%" → 84.4, "1,234" → 1234.0, "632M" →
    632000000.0; NaN, infinities, bools and anything else are None).
    """
    if not isinstance(metrics, Mapping):
        return None
    return metric_magnitude(find_metric(metrics, name)[1])


def parse_metric_list(text: str) -> tuple[str, ...]:
    """argparse type for ``--require-metrics A,B``: the non-empty stripped names."""
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if not names:
        raise argparse.ArgumentTypeError("metric list must not be empty")
    return names


def parse_threshold(text: str) -> tuple[str, float]:
    """argparse type for ``--min/--max METRIC=VALUE`` → (metric, float)."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError("expected METRIC=VALUE")
    try:
        number = float(value.strip())
    except ValueError:
        raise argparse.ArgumentTypeError("metric threshold must be numeric") from None
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError("metric threshold must be numeric")
    return name.strip(), number


def parse_sort(text: str) -> tuple[str, str]:
    """argparse type for ``--sort METRIC[:asc|desc]`` (split at the last ``:``; default desc)."""
    name, sep, direction = text.rpartition(":")
    if not sep:
        name, direction = text, "desc"
    direction = direction.strip().lower()
    if direction not in ("asc", "desc") or not name.strip():
        raise argparse.ArgumentTypeError("expected METRIC[:asc|desc]")
    return name.strip(), direction


def parse_pareto(text: str) -> tuple[tuple[str, str], ...]:
    """argparse type for ``--pareto M:higher,N:lower`` → ((name, direction), ...), at least two."""
    objectives = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, direction = part.rpartition(":")
        direction = direction.strip().lower()
        if not sep or not name.strip() or direction not in ("higher", "lower"):
            raise argparse.ArgumentTypeError("expected METRIC:higher,METRIC:lower")
        objectives.append((name.strip(), direction))
    if len(objectives) < 2:
        raise argparse.ArgumentTypeError("Pareto selection requires at least two metrics")
    return tuple(objectives)


@dataclass(frozen=True)
class MetricSelection:
    """The metric options of ``benchmark --name`` (§2.15) and their application (§3.5)."""

    require: Sequence[str] = ()
    minimum: Sequence[tuple[str, float]] = ()
    maximum: Sequence[tuple[str, float]] = ()
    sort: tuple[str, str] | None = None
    pareto: Sequence[tuple[str, str]] = ()

    @property
    def active(self) -> bool:
        """True when any metric option is set (the leaderboard then scans every page)."""
        return bool(self.require or self.minimum or self.maximum or self.sort or self.pareto)

    def requested(self) -> list[str]:
        """Every metric named by any option, casefolded, first-seen order."""
        return list(self._spellings())

    def _spellings(self) -> dict[str, str]:
        """``{casefolded name: the caller's first spelling}`` of every requested metric, in order."""
        names = [*self.require, *(n for n, _ in self.minimum), *(n for n, _ in self.maximum),
                 *([self.sort[0]] if self.sort else []), *(n for n, _ in self.pareto)]
        spellings: dict[str, str] = {}
        for name in names:
            spellings.setdefault(name.casefold(), name)
        return spellings

    def apply(self, rows: Sequence[RowT]) -> list[RowT]:
        """Check names, filter, Pareto-reduce and sort merged ``rows``.

        Raises ``UsageError("unknown metric(s): …; available metrics: …")`` when a
        requested metric appears in no row.
        """
        requested = self.requested()
        available = {str(name) for row in rows for name in _metrics(row)}
        known = {name.casefold() for name in available}
        # Named as the caller spelled them ("BLEU", not "bleu"), matched without case.
        missing = [spelling for name, spelling in self._spellings().items() if name not in known]
        if missing:
            listing = ", ".join(sorted(available, key=str.casefold)) or "none"
            raise UsageError(f"unknown metric(s): {', '.join(missing)}; available metrics: {listing}")
        kept = [row for row in rows if self._passes(row, requested)]
        if self.pareto:
            kept = _pareto_front(kept, self.pareto)
        if self.sort:
            name, direction = self.sort
            kept.sort(key=lambda row: metric_value(row.get("metrics"), name) or 0.0,
                      reverse=direction == "desc")
        elif self.pareto:
            name, direction = self.pareto[0]
            kept.sort(key=lambda row: metric_value(row.get("metrics"), name) or 0.0,
                      reverse=direction == "higher")
        return kept

    def _passes(self, row: Mapping[str, object], requested: Sequence[str]) -> bool:
        metrics = row.get("metrics")
        if any(metric_value(metrics, name) is None for name in requested):
            return False
        return (all(metric_value(metrics, n) >= v for n, v in self.minimum)  # type: ignore[operator]
                and all(metric_value(metrics, n) <= v for n, v in self.maximum))  # type: ignore[operator]


def _pareto_front(rows: Sequence[RowT], objectives: Sequence[tuple[str, str]]) -> list[RowT]:
    # Orient every objective so that larger is better, then drop dominated rows.
    def vector(row: Mapping[str, object]) -> list[float]:
        return [(1.0 if d == "higher" else -1.0) * (metric_value(row.get("metrics"), n) or 0.0)
                for n, d in objectives]

    vectors = [vector(row) for row in rows]

    def dominated(mine: list[float]) -> bool:
        return any(all(o >= m for o, m in zip(other, mine, strict=True))
                   and any(o > m for o, m in zip(other, mine, strict=True))
                   for other in vectors)

    return [row for row, vec in zip(rows, vectors, strict=True) if not dominated(vec)]


def model_label(row: Mapping[str, object]) -> str:
    """The Model cell: ``model_name``, plus `` (harness)`` when the row names an evaluation harness."""
    model = _text(row.get("model_name"))
    return f"{model} ({row['harness']})" if row.get("harness") else model


def metric_summary(row: Mapping[str, object]) -> str:
    """The Scores cell: ``best_metric`` first, then the rest case-insensitively, ``name: value``; ``—`` if none."""
    metrics = _metrics(row)
    best = row.get("best_metric")
    names = sorted(metrics, key=lambda n: str(n).casefold())
    if isinstance(best, str) and best in metrics:  # metric names are JSON keys: strings
        names.remove(best)
        names.insert(0, best)
    return ", ".join(f"{name}: {metrics[name]}" for name in names) or EM_DASH


# ---------------------------------------------------------------- parameter sizes (§3.5)


def parse_parameter_size(text: str) -> int:
    """argparse type for ``--max-parameters``: ``500m``, ``1.5B``, ``3_000_000_000`` → int.

    Raises ``argparse.ArgumentTypeError`` with the §3.5 messages.
    """
    match = _SIZE_RE.fullmatch(text.strip())
    if match is None or (match.group(2) is not None and match.group(3) is None):
        raise argparse.ArgumentTypeError("expected a positive integer or decimal size with M/B suffix")
    whole, fraction, suffix = match.groups()
    number = Decimal(whole.replace("_", "") + "." + (fraction or "0").replace("_", ""))
    number *= _SIZE_SUFFIX[suffix.lower()] if suffix else 1
    if number != number.to_integral_value():
        raise argparse.ArgumentTypeError("parameter size must resolve to a whole number")
    size = int(number)
    if not 1 <= size <= MAX_PARAMETER_SIZE:
        raise argparse.ArgumentTypeError(f"parameter size must be between 1 and {MAX_PARAMETER_SIZE}")
    return size


def parameters_cell(value: object) -> str:
    """``10B``, ``1.5B``, ``350M``, ``1,000`` for a positive int; ``—`` for anything else."""
    if not _is_int(value) or value <= 0:
        return EM_DASH
    for unit, scale in (("B", 10**9), ("M", 10**6)):
        if value >= scale:
            scaled = Decimal(value) / scale
            return f"{scaled.normalize():f}{unit}"
    return f"{value:,}"


# Metric names that state a model's parameter count ("Number of params: 197M").
PARAMETER_METRICS = frozenset({"number of params", "number of parameters", "params", "parameters", "# params",
                               "#params", "param count", "model size"})


def row_parameters(row: Mapping[str, object]) -> int | None:
    """A row's parameter count: ``num_parameters``, else the count a parameter metric of the row
    states ("Number of params: 197M"), so the parameter column never shows "—" beside a score
    that gives the size. None when neither says."""
    size = row.get("num_parameters")
    if _is_int(size) and size > 0:
        return size
    metrics = row.get("metrics")
    for name, value in (metrics.items() if isinstance(metrics, Mapping) else ()):
        if str(name).strip().casefold() in PARAMETER_METRICS and isinstance(value, str | int) \
                and not isinstance(value, bool):
            try:
                return parse_parameter_size(str(value))
            except argparse.ArgumentTypeError:
                continue
    return None


def check_parameter_limit(rows: Iterable[Mapping[str, object]], limit: int) -> None:
    """Fail closed (§2.15 step 4) unless every merged row has an int ``num_parameters`` ≤ ``limit``."""
    for row in rows:
        size = row.get("num_parameters")
        if not _is_int(size) or size > limit:
            raise ResponseError("API returned a model outside the requested parameter limit")


# ---------------------------------------------------------------- fetching (§3.4)


def fetch_leaderboard(client: Client, dataset_id: object, *, is_open: str | None, max_parameters: int | None,
                      scan_all: bool) -> tuple[list[JsonObject], int]:
    """Fetch a benchmark's raw evaluation rows; returns (rows, upstream total).

    Without ``max_parameters``: ``datasets/<id>/evaluations/``; with it:
    ``evaluations/`` filtered by ``max_parameters_exclusive`` whose pages must
    report integer parameter coverage. Only page 1 unless ``scan_all``; a scan
    follows ``count`` (or ``next_page`` with ``max_parameters``), stops on an
    empty page and refuses to go past ``SCAN_LIMIT`` rows. Errors: ``ResponseError``.
    """
    rows: list[JsonObject] = []
    total: int | None = None
    page = 1
    while True:
        if max_parameters is None:
            path = f"datasets/{dataset_id}/evaluations/"
            params: dict[str, object] = {"page": page, "page_size": PAGE_SIZE, "ordering": "best_rank",
                                      "is_open": is_open}
        else:
            path = "evaluations/"
            params = {"page": page, "page_size": PAGE_SIZE, "dataset_id": str(dataset_id),
                      "ordering": "best_rank", "is_open": is_open,
                      "max_parameters_exclusive": max_parameters + 1}
        payload = client.get_json(path, params)
        if max_parameters is not None and not (
                isinstance(payload, dict) and _is_int(payload.get("parameter_coverage_known"))
                and _is_int(payload.get("parameter_coverage_total"))):
            raise ResponseError("parameter filtering requires a compatible API; server must be upgraded")
        page_rows = result_list(payload)
        if page == 1:
            total = result_total(payload)
        rows.extend(page_rows)
        if not scan_all or not page_rows:
            break
        if max_parameters is None:
            if total is None or len(rows) >= total:
                break
            next_page = page + 1
        else:  # checked above: with max_parameters the payload is an object
            following = payload.get("next_page") if isinstance(payload, dict) else None
            if following is None:
                break
            if not isinstance(following, int) or isinstance(following, bool) or following <= page:
                raise ResponseError("API returned invalid evaluation pagination")
            next_page = following
        if len(rows) >= SCAN_LIMIT:
            shown = total if total is not None else len(rows)
            raise ResponseError(f"metric selection requires scanning {shown} evaluation rows; "
                                f"safety limit is {SCAN_LIMIT}")
        page = next_page
    return rows, total if total is not None else len(rows)


# ---------------------------------------------------------------- default order (best first)


def primary_metric(rows: Sequence[Mapping[str, object]], requested: Sequence[str]) -> tuple[str, str] | None:
    """``(metric, direction)`` a leaderboard is ordered by: the first requested metric, else the
    ``best_metric`` most rows name, else the metric most rows report; None when its direction is
    unknown (then the catalog's rank order stays)."""
    names: dict[str, int] = {}
    for row in rows:
        best = row.get("best_metric")
        for name in _metrics(row):
            names[str(name)] = names.get(str(name), 0) + (len(rows) + 1 if name == best else 1)
    by_case = {name.casefold(): name for name in names}
    for wanted in requested:
        if str(wanted).casefold() in by_case:
            name = by_case[str(wanted).casefold()]
            direction = metric_direction(name)
            return (name, direction) if direction != "unknown" else None
    for name in sorted(names, key=lambda n: -names[n]):
        direction = metric_direction(name)
        if direction != "unknown":
            return name, direction
    return None


def best_first(rows: Sequence[RowT], requested: Sequence[str] = ()) -> tuple[list[RowT], dict[str, str] | None]:
    """``rows`` ordered by :func:`primary_metric` in its direction (rows without it after, in rank
    order), and ``{"metric", "direction"}`` naming it; the rows unchanged and None when no metric
    has a known direction. The first row is then the best row, not the #1 of some task scope."""
    chosen = primary_metric(rows, requested)
    if chosen is None:
        return list(rows), None
    name, direction = chosen
    sign = -1.0 if direction == "higher" else 1.0
    with_metric = [row for row in rows if metric_magnitude(_metrics(row).get(name)) is not None]
    without = [row for row in rows if metric_magnitude(_metrics(row).get(name)) is None]
    with_metric.sort(key=lambda row: sign * (metric_magnitude(_metrics(row).get(name)) or 0.0))
    return with_metric + without, {"metric": name, "direction": direction}

"""``best_rank`` of the leaderboards an import touches, mostly without reading rows back.

The rule is :mod:`catalog.importer.ranking`: a (task, dataset) board ranks its
rows, in id order, on the first non-empty ``best_metric``. Re-reading every
touched board from SQLite and parsing each row's metrics JSON again took
several seconds on a 500,000-row import (issue 2 "Performance"), so
:class:`Boards` remembers, for boards that had **no rows before this import**
and whose rows were only inserted (never updated) in it, each row's id and
its numeric value on the ranking metric. Those boards are ranked from memory;
every other touched board (pre-existing, or with an updated row) is read back
from the database exactly as before. Both paths give the same ranks.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping

from catalog.importer import ranking

__all__ = ["Boards"]

Board = tuple[int, int]  # (task_id, dataset_id)


class _Memo:
    """Rows of a board inserted in this run, in id order."""

    __slots__ = ("early", "ids", "metric", "values")

    def __init__(self) -> None:
        self.metric: str | None = None
        self.ids: list[int] = []
        self.values: list[float | None] = []
        self.early: list[Mapping[str, object]] = []  # metrics of rows seen before the board's metric was known

    def add(self, rid: int, metrics: Mapping[str, object] | None, best_metric: str | None) -> None:
        if self.metric is None and best_metric:
            self.metric = best_metric
            self.values = [_value(m, best_metric) for m in self.early]
            self.early = []
        self.ids.append(rid)
        if self.metric is None:
            self.early.append(metrics or {})
        else:
            self.values.append(_value(metrics or {}, self.metric))


def _value(metrics: Mapping[str, object], metric: str) -> float | None:
    return ranking.metric_value(ranking.lookup(metrics, metric))


class Boards:
    """Touched boards and their memoized rows (see module doc).

    ``existing``: boards that already had rows when the import started.
    """

    def __init__(self, existing: Iterable[Board]) -> None:
        self._existing = set(existing)
        self._memo: dict[Board, _Memo] = {}
        self._stale: set[Board] = set()

    def inserted(self, board: Board, rid: int, metrics: Mapping[str, object] | None, best_metric: str | None) -> None:
        """Record a new row (ids must grow within a board, as the Writer assigns them)."""
        if board in self._stale:
            return
        if board in self._existing:
            self._stale.add(board)
            return
        memo = self._memo.get(board)
        if memo is None:
            memo = self._memo[board] = _Memo()
        memo.add(rid, metrics, best_metric)

    def updated(self, board: Board) -> None:
        """A stored row changed: this board must be re-read from the database."""
        self._memo.pop(board, None)
        self._stale.add(board)

    def rank_memoized(self, conn: sqlite3.Connection) -> None:
        """Write ``best_rank`` of the memoized boards (updates by id: no index needed)."""
        updates: list[tuple[int | None, int]] = []
        for memo in self._memo.values():
            if memo.metric is None:
                updates.extend((None, rid) for rid in memo.ids)
                continue
            ranks = ranking.competition_ranks(zip(memo.ids, memo.values, strict=True),
                                              lower=ranking.lower_is_better(memo.metric))
            updates.extend((rank, rid) for rid, rank in ranks.items())
        self._memo.clear()
        conn.executemany("UPDATE evaluations SET best_rank = ? WHERE id = ?", updates)

    def rank_stale(self, conn: sqlite3.Connection) -> None:
        """Write ``best_rank`` of the other touched boards, reading their rows back."""
        updates: list[tuple[int | None, int]] = []
        for task_id, dataset_id in sorted(self._stale):
            rows = conn.execute(
                "SELECT id, metrics, best_metric FROM evaluations WHERE task_id = ? AND "
                "dataset_id = ? ORDER BY id", (task_id, dataset_id)).fetchall()
            metric = next((bm for _, _, bm in rows if bm), None)
            if metric is None:
                updates.extend((None, rid) for rid, _, _ in rows)
                continue
            scored = [(rid, _value(json.loads(m or "{}"), metric)) for rid, m, _ in rows]
            ranks = ranking.competition_ranks(scored, lower=ranking.lower_is_better(metric))
            updates.extend((rank, rid) for rid, rank in ranks.items())
        self._stale.clear()
        conn.executemany("UPDATE evaluations SET best_rank = ? WHERE id = ?", updates)

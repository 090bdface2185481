"""Leaderboard ranks computed from memory during an import equal ranks read back from the database."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest

from catalog.db import schema
from catalog.importer import run_import
from catalog.importer.boards import Boards


def _ranks(conn: sqlite3.Connection) -> dict[int, int | None]:
    return dict(conn.execute("SELECT id, best_rank FROM evaluations ORDER BY id").fetchall())


def _rank_from_database(conn: sqlite3.Connection) -> dict[int, int | None]:
    """Clear best_rank, then rank every board the slow way (reading rows back)."""
    boards = Boards(())
    for task_id, dataset_id in conn.execute("SELECT DISTINCT task_id, dataset_id FROM evaluations").fetchall():
        boards.updated((task_id, dataset_id))
    conn.execute("UPDATE evaluations SET best_rank = NULL")
    boards.rank_stale(conn)
    return _ranks(conn)


def test_real_leaderboards_rank_the_same_from_memory_and_from_the_database(tmp_path: Path,
                                                                           pwc_archive: Path) -> None:
    db = tmp_path / "c.db"
    out = io.StringIO()
    assert run_import(db, [pwc_archive / "evaluation-tables.json"], out=out) == 0, out.getvalue()
    conn = sqlite3.connect(db)
    try:
        imported = _ranks(conn)
        assert any(rank is not None for rank in imported.values())
        assert _rank_from_database(conn) == imported
    finally:
        conn.close()


ROWS = [  # (metrics, best_metric) in id order, on one board
    pytest.param([({"BLEU": "1"}, None), ({"BLEU": "3"}, "BLEU"), ({"BLEU": "2"}, "BLEU")], id="metric-known-late"),
    pytest.param([({}, None), ({"Error": "0.5"}, "Error"), ({"Error": "0.2"}, "Error"), ({"Error": "x"}, "Error")],
                 id="lower-is-better-and-non-numeric"),
    pytest.param([({"Acc": 1}, None), ({"Acc": 2}, None)], id="no-metric-no-ranks"),
    pytest.param([({"Acc": "5%"}, "Acc"), ({"acc": "5"}, "Acc"), ({"Acc": "7"}, "Acc")], id="ties-and-case"),
]


@pytest.mark.parametrize("rows", ROWS)
def test_memoized_board_ranks_follow_the_ranking_rule(tmp_path: Path,
                                                      rows: list[tuple[dict, str | None]]) -> None:
    conn = schema.create_db(tmp_path / "c.db")
    conn.execute("INSERT INTO tasks (id, slug, name) VALUES (1, 't', 'T')")
    conn.execute("INSERT INTO datasets (id, slug, name) VALUES (1, 'd', 'D')")
    boards = Boards(())
    for rid, (metrics, best) in enumerate(rows, start=1):
        conn.execute("INSERT INTO evaluations (id, task_id, dataset_id, model_name, metrics, best_metric) "
                     "VALUES (?, 1, 1, ?, ?, ?)", (rid, f"m{rid}", json.dumps(metrics), best))
        boards.inserted((1, 1), rid, metrics, best)
    boards.rank_memoized(conn)
    memoized = _ranks(conn)
    assert memoized == _rank_from_database(conn)
    conn.close()


def test_boards_that_existed_or_changed_are_read_back_instead_of_memoized() -> None:
    boards = Boards([(1, 1)])
    boards.inserted((1, 1), 10, {"A": 1}, "A")  # a pre-existing board
    boards.inserted((2, 2), 11, {"A": 1}, "A")
    boards.updated((2, 2))  # a row of a new board changed
    boards.inserted((3, 3), 12, {"A": 1}, "A")
    assert set(boards._memo) == {(3, 3)}
    assert boards._stale == {(1, 1), (2, 2)}

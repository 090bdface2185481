"""The catalog's vocabulary in search queries, and evidence-weighted hybrid fusion."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import pytest

from catalog.importer import run_import
from catalog.search import papers as search
from catalog.search import vocabulary
from catalog.store.core import Page

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "search" / "papers-with-abstracts.json"
NLI = {"1508.05326", "1704.05426"}


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> sqlite3.Connection:
    """The 13-paper search fixture (its papers are tagged with tasks such as Natural Language Inference)."""
    path = tmp_path_factory.mktemp("vocab") / "v.db"
    out = io.StringIO()
    assert run_import(path, [FIXTURE], out=out) == 0, out.getvalue()
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    db.row_factory = sqlite3.Row
    return db


def _search(conn: sqlite3.Connection, q: str, mode: str = "hybrid") -> dict:  # type: ignore[type-arg]
    return search.search_papers(conn, q, Page(1, 10), mode=mode, start_date=None, end_date=None,
                                has_official_implementation=None)


def test_an_acronym_in_capitals_names_the_task(conn: sqlite3.Connection) -> None:
    found = vocabulary.match(vocabulary.get_vocabulary(conn), "NLI", search.STOP_WORDS)
    assert [(m.entity.name, m.via, m.coverage) for m in found] == [("Natural Language Inference", "acronym", 1.0)]


def test_a_lowercase_word_is_never_read_as_an_acronym(conn: sqlite3.Connection) -> None:
    assert vocabulary.match(vocabulary.get_vocabulary(conn), "nli", search.STOP_WORDS) == []


def test_a_name_inside_a_longer_query_counts_for_its_share(conn: sqlite3.Connection) -> None:
    found = vocabulary.match(vocabulary.get_vocabulary(conn), "robust speech recognition for noisy calls",
                             search.STOP_WORDS)
    assert found[0].entity.name == "Speech Recognition" and found[0].via == "name"
    assert found[0].coverage == pytest.approx(2 / 5)


def test_hybrid_reports_the_matched_task_and_its_filter(conn: sqlite3.Connection) -> None:
    body = _search(conn, "NLI")
    assert body["matched_entities"][0] == {"type": "task", "id": body["matched_entities"][0]["id"],
                                           "slug": "natural-language-inference", "name": "Natural Language Inference",
                                           "matched": "NLI", "via": "acronym",
                                           "filter": {"task": "natural-language-inference"}}
    assert {r["arxiv_id"] for r in body["results"][:2]} == NLI


def test_every_mode_reports_matched_entities(conn: sqlite3.Connection) -> None:
    for mode in search.MODES:
        names = [e["name"] for e in _search(conn, "Speech Recognition", mode)["matched_entities"]]
        assert names == ["Speech Recognition"], mode
    assert _search(conn, "zzqqxx")["matched_entities"] == []


def test_papers_tagged_with_a_named_task_are_found(conn: sqlite3.Connection) -> None:
    matches = vocabulary.match(vocabulary.get_vocabulary(conn), "NLI", search.STOP_WORDS)
    ids = [r[0] for r in conn.execute("SELECT id FROM papers ORDER BY id")]
    tagged = search._tagged(conn, matches, ids)
    arxiv = {r[0] for r in conn.execute(f"SELECT arxiv_id FROM papers WHERE id IN ({','.join('?' * len(tagged))})",
                                        list(tagged))}
    assert arxiv == NLI


def test_weighted_fusion_follows_the_weights_and_ignores_a_zero_weight() -> None:
    assert search.weighted_rrf([([1, 2, 3], 1.0), ([3, 2, 1], 0.0)]) == [1, 2, 3]
    assert search.weighted_rrf([([1, 2], 0.3), ([2, 1], 1.0)]) == [2, 1]
    assert search.weighted_rrf([([1, 2], 1.0), ([2, 1], 1.0)]) == [1, 2]  # tie: smaller id


def test_a_title_with_one_word_wrong_still_comes_first(conn: sqlite3.Connection) -> None:
    body = _search(conn, "Deep Residual Training for Image Recognition")
    assert body["results"][0]["title"] == "Deep Residual Learning for Image Recognition"

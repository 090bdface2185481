"""Semantic and hybrid search over HTTP on imported catalogs (real vectors), bad queries, index versioning."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from catalog.importer import embed, run_import
from catalog.search import vectors
from catalog.search.embeddings import document_text, get_embedder

BASE = "/api/v1"
FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "search" / "papers-with-abstracts.json"
SPEECH = {"1512.02595", "2006.11477", "2212.04356"}
NLI = {"1508.05326", "1704.05426"}


@pytest.fixture(scope="module")
def synonyms_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """13 real titles: speech, NLI and dialogue papers among "Text ..." and other distractors.

    No NLI abstract contains the word "entailment" and no speech paper says "transcription".
    """
    path = tmp_path_factory.mktemp("search") / "s.db"
    out = io.StringIO()
    assert run_import(path, [FIXTURE], out=out) == 0, out.getvalue()
    return path


@pytest.fixture
async def api(aiohttp_client, aiohttp_server, synonyms_db: Path):  # type: ignore[no-untyped-def]
    from catalog.api.app import create_app
    from catalog.api.params import REQUEST_LINE_LIMIT

    # The request-line limit `pwc-catalog serve` sets, so a 10 KB q reaches the 422.
    server = await aiohttp_server(create_app(synonyms_db), max_line_size=REQUEST_LINE_LIMIT)
    return await aiohttp_client(server)


async def _search(client, q: str, mode: str, **extra: str) -> dict:  # type: ignore[no-untyped-def]
    response = await client.get(f"{BASE}/papers/search", params={"q": q, "mode": mode, **extra})
    assert response.status == 200, await response.text()
    return await response.json()


def _arxiv(body: dict, n: int) -> list[str]:
    return [r["arxiv_id"] for r in body["results"][:n]]


def test_import_writes_vectors_named_by_the_database(synonyms_db: Path) -> None:
    manifest = json.loads(vectors.manifest_path(synonyms_db).read_text())
    conn = sqlite3.connect(synonyms_db)
    stamp = conn.execute("SELECT value FROM catalog_meta WHERE key = 'vectors_stamp'").fetchone()[0]
    count = conn.execute("SELECT count(*) FROM papers").fetchone()[0]
    conn.close()
    assert manifest["stamp"] == stamp and manifest["count"] == count == 13
    assert manifest["embedder"] == "wordllama-l2_supercat-256" and manifest["dimension"] == 256


async def test_semantic_speech_query_ranks_speech_papers_before_text_papers(api) -> None:
    body = await _search(api, "speech to text transcription", "semantic")
    assert set(_arxiv(body, 3)) == SPEECH


async def test_hybrid_speech_query_puts_a_speech_paper_first(api) -> None:
    body = await _search(api, "speech to text transcription", "hybrid")
    assert body["results"][0]["arxiv_id"] in SPEECH
    assert len(SPEECH & set(_arxiv(body, 5))) == 3


async def test_entailment_finds_the_inference_papers_that_never_say_it(api) -> None:
    assert (await _search(api, "entailment", "keyword"))["count"] == 0
    assert set(_arxiv(await _search(api, "entailment", "semantic"), 2)) == NLI
    assert (await _search(api, "entailment", "hybrid"))["results"][0]["arxiv_id"] in NLI


async def test_semantic_filters_apply_inside_the_scan(api) -> None:
    body = await _search(api, "speech recognition", "semantic", start_date="2020-01-01")
    assert set(_arxiv(body, 2)) == {"2006.11477", "2212.04356"}
    assert all(r["published"] >= "2020-01-01" for r in body["results"])


async def test_semantic_search_of_nonsense_finds_only_weak_matches(api) -> None:
    # Nothing reaches MIN_COSINE, so the floor falls to half the best cosine; every result says weak.
    for mode in ("semantic", "hybrid"):
        body = await _search(api, "zzzz qqqq", mode)
        assert body["results"] and body["strong_count"] == 0
        assert {r["match"] for r in body["results"]} == {"weak"}


async def test_a_query_about_the_papers_finds_strong_matches(api) -> None:
    for mode in ("keyword", "semantic", "hybrid"):
        body = await _search(api, "speech recognition", mode)
        assert body["strong_count"] >= 1, mode
        assert body["results"][0]["match"] == "strong", mode
        assert "abstract" not in body["results"][0]


async def test_abstracts_are_added_on_request(api) -> None:
    body = await _search(api, "speech recognition", "keyword", abstracts="true")
    assert all(isinstance(r["abstract"], str) and r["abstract"] for r in body["results"])


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
@pytest.mark.parametrize(("q", "status"), [
    pytest.param("", 422, id="empty"),
    pytest.param("   ", 422, id="blank"),
    pytest.param("x" * 10_240, 422, id="10-kb"),
    pytest.param("😀🚀", 422, id="emoji-only"),
    pytest.param("*** ((( ))) :::", 422, id="syntax-only"),
    pytest.param("the of and", 200, id="stop-words-only"),
    pytest.param("AND OR NOT NEAR", 200, id="fts-operators"),
    pytest.param('"unbalanced quote speech', 200, id="unbalanced-quote"),
    pytest.param("speech*", 200, id="star"),
    pytest.param("title:speech abstract:audio", 200, id="column-filter"),
    pytest.param("NEAR(speech audio, 2)", 200, id="near"),
    pytest.param("(speech OR audio) NOT text", 200, id="boolean"),
    pytest.param("语音识别 端到端", 200, id="chinese"),
    pytest.param("распознавание речи", 200, id="cyrillic"),
    pytest.param("speech 😀 recognition", 200, id="emoji-in-words"),
])
async def test_bad_queries_get_a_clear_422_or_results_never_a_500(api, mode: str, q: str, status: int) -> None:
    response = await api.get(f"{BASE}/papers/search", params={"q": q, "mode": mode})
    assert response.status == status, await response.text()
    body = await response.json()
    if status == 422:
        assert isinstance(body["detail"], str) and "q " in body["detail"]
    else:
        assert body["mode"] == mode and isinstance(body["results"], list)


async def test_stop_words_only_is_an_empty_page(api) -> None:
    body = await _search(api, "the of and", "hybrid")
    assert body["count"] == 0 and body["results"] == []


async def test_fts_syntax_is_searched_as_words(api) -> None:
    body = await _search(api, "title:speech NEAR(recognition*)", "keyword")
    assert set(_arxiv(body, 3)) >= {"1512.02595", "2212.04356"}


@pytest.fixture
def copied_db(synonyms_db: Path, tmp_path: Path) -> Path:
    """A private copy of the imported database and its vector files."""
    for item in synonyms_db.parent.iterdir():
        shutil.copy(item, tmp_path / item.name)
    return tmp_path / synonyms_db.name


async def _status(aiohttp_client, db: Path, mode: str) -> tuple[int, dict]:  # type: ignore[no-untyped-def]
    from catalog.api.app import create_app

    client = await aiohttp_client(create_app(db))
    response = await client.get(f"{BASE}/papers/search", params={"q": "speech", "mode": mode})
    return response.status, await response.json()


@pytest.mark.parametrize("breakage", ["stamp", "manifest", "embedder", "matrix"])
async def test_vectors_of_another_database_are_a_clear_503_and_embed_repairs_it(
        aiohttp_client, copied_db: Path, breakage: str) -> None:
    manifest_file = vectors.manifest_path(copied_db)
    manifest = json.loads(manifest_file.read_text())
    if breakage == "stamp":  # e.g. an old database restored beside newer vectors
        conn = sqlite3.connect(copied_db)
        conn.execute("UPDATE catalog_meta SET value = 'other' WHERE key = 'vectors_stamp'")
        conn.commit()
        conn.close()
    elif breakage == "manifest":
        manifest_file.unlink()
    elif breakage == "embedder":
        manifest["embedder_version"] = "0.0.0+other-weights"
        manifest_file.write_text(json.dumps(manifest))
    else:
        copied_db.with_name(manifest["matrix"]).write_bytes(b"not a matrix")
    for mode in ("semantic", "hybrid"):
        status, body = await _status(aiohttp_client, copied_db, mode)
        assert status == 503 and "pwc-catalog embed" in body["detail"], body
    status, body = await _status(aiohttp_client, copied_db, "keyword")
    assert status == 200 and body["count"] >= 3
    out = io.StringIO()
    assert embed.embed_database(copied_db, out=out) == 0, out.getvalue()
    status, body = await _status(aiohttp_client, copied_db, "semantic")
    assert status == 200 and body["results"][0]["arxiv_id"] in SPEECH
    leftovers = sorted(p.name for p in copied_db.parent.iterdir() if ".vectors-" in p.name)
    assert len(leftovers) == 2  # the superseded matrix and columns are gone


async def test_a_running_server_follows_a_rebuilt_index(aiohttp_client, copied_db: Path) -> None:
    from catalog.api.app import create_app

    client = await aiohttp_client(create_app(copied_db))
    before = await _search(client, "speech recognition", "semantic")
    assert embed.embed_database(copied_db, out=io.StringIO()) == 0
    after = await _search(client, "speech recognition", "semantic")
    assert after["results"] == before["results"]


async def test_sample_catalog_serves_real_semantic_search(aiohttp_client, tmp_path: Path) -> None:
    from catalog.api.app import create_app
    from catalog.sample import build_sample_db

    db = tmp_path / "sample.db"
    build_sample_db(db)
    client = await aiohttp_client(create_app(db))
    assert (await _search(client, "picture categorization", "keyword"))["count"] == 0
    body = await _search(client, "picture categorization", "semantic")
    assert "2010.11929" in _arxiv(body, 3)  # ViT: "Image Recognition"
    body = await _search(client, "chatbot", "hybrid")
    assert body["results"][0]["arxiv_id"] == "2307.09288"  # Llama 2: "Chat Models"


async def test_a_very_common_word_is_ranked_within_a_bounded_window(api, synonyms_db: Path, monkeypatch) -> None:
    from catalog.search import papers as search
    # Scaled down: "speech" matches 4 papers here as a common word matches 2,000+ in the archive.
    monkeypatch.setattr(search, "COUNT_CAP", 2)
    monkeypatch.setattr(search, "RANK_WINDOW", 2)
    conn = sqlite3.connect(synonyms_db)
    matches = [r[0] for r in conn.execute(
        "SELECT rowid FROM papers_fts WHERE papers_fts MATCH 'speech' ORDER BY rowid DESC")]
    conn.close()
    assert len(matches) > 2
    keyword = await _search(api, "speech", "keyword")
    assert keyword["count"] == 2 and keyword["count_capped"] is True  # capped, not counted to the end, and says so
    assert (await _search(api, "zzzunmatched", "keyword"))["count_capped"] is False
    monkeypatch.setattr(search, "COUNT_CAP", len(matches))  # exactly the bound: counted, not capped
    exact = await _search(api, "speech", "keyword")
    assert exact["count"] == len(matches) and exact["count_capped"] is False
    assert (await _search(api, "the", "keyword"))["count_capped"] is False  # nothing searchable
    assert sorted(int(r["id"]) for r in keyword["results"]) == sorted(matches[:2])  # the newest two, ranked
    hybrid = await _search(api, "speech", "hybrid")
    assert {int(r["id"]) for r in hybrid["results"]} >= set(matches[:2])


async def test_hybrid_filters_apply_to_both_candidate_lists(api) -> None:
    body = await _search(api, "speech recognition", "hybrid", start_date="2020-01-01", end_date="2020-12-31")
    assert body["results"] and all("2020-01-01" <= r["published"] <= "2020-12-31" for r in body["results"])
    assert body["results"][0]["arxiv_id"] == "2006.11477"


@pytest.fixture(scope="module")
def generated_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,000 generated papers (made-up words around a few ML terms), imported with their vectors."""
    from bench.gen_catalog import generate

    folder = tmp_path_factory.mktemp("generated")
    generate(2000, 200, folder / "dumps", 7)
    sources = [p for p in sorted((folder / "dumps").iterdir()) if p.suffix == ".json"]
    out = io.StringIO()
    assert run_import(folder / "g.db", sources, out=out) == 0, out.getvalue()
    return folder / "g.db"


@pytest.mark.parametrize("query", ["graph neural network", "speech recognition", "Task 3"])
@pytest.mark.slow
def test_semantic_search_on_a_generated_catalog_answers_with_weak_matches(generated_db: Path, query: str) -> None:
    # Its text embeds far from every real query: no paper reaches MIN_COSINE, and that used to be 0 results.
    from catalog.search.papers import MIN_COSINE, search_papers
    from catalog.store.core import Page

    conn = sqlite3.connect(generated_db)
    conn.row_factory = sqlite3.Row
    try:
        assert vectors.INDEXES.get(conn).search(query, 1)[0][1] < MIN_COSINE
        body = search_papers(conn, query, Page(1, 10), mode="semantic", start_date=None, end_date=None,
                             has_official_implementation=None)
    finally:
        conn.close()
    assert body["count"] > 0 and len(body["results"]) == min(10, body["count"])
    assert body["strong_count"] == 0 and {r["match"] for r in body["results"]} == {"weak"}


def test_a_reimport_embeds_only_the_papers_whose_text_changed(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    records = json.loads(FIXTURE.read_text())
    source = tmp_path / "papers-with-abstracts.json"
    source.write_text(json.dumps(records))
    db = tmp_path / "c.db"
    assert run_import(db, [source], out=io.StringIO()) == 0
    records[3]["title"] += " Revisited"  # one text changed; the others keep their vectors
    records[5]["authors"] = ["Someone Else"]  # not embedded: no reason to embed again
    source.write_text(json.dumps(records))
    embedded: list[str] = []
    real = get_embedder()

    class Counting:
        name, version, dimension = real.name, real.version, real.dimension

        def embed(self, texts):  # type: ignore[no-untyped-def]
            embedded.extend(texts)
            return real.embed(texts)

    monkeypatch.setattr(embed, "get_embedder", lambda name: Counting())
    out = io.StringIO()
    assert run_import(db, [source], out=out) == 0, out.getvalue()
    assert embedded == [document_text(records[3]["title"], records[3]["abstract"])]
    assert ": 1 embedded, 12 with unchanged text kept from the previous index" in out.getvalue(), out.getvalue()
    # The result is the index a full rebuild gives, under the database's fresh stamp.
    rebuilt = tmp_path / "rebuilt" / "c.db"
    rebuilt.parent.mkdir()
    shutil.copy(db, rebuilt)
    monkeypatch.setattr(embed, "get_embedder", lambda name: real)
    assert embed.embed_database(rebuilt, out=io.StringIO()) == 0
    kept, fresh = (vectors.load_index(path, vectors._read_stamp(sqlite3.connect(path))) for path in (db, rebuilt))
    assert kept.stamp != fresh.stamp
    for column in ("matrix", "ids", "scale", "published", "official"):
        assert (getattr(kept, column) == getattr(fresh, column)).all(), column


def test_a_reimport_embeds_everything_when_the_previous_vectors_are_not_the_databases(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    assert run_import(db, [FIXTURE], out=io.StringIO()) == 0
    manifest = vectors.manifest_path(db)
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "stamp": "0" * 16}))  # another db's
    out = io.StringIO()
    assert run_import(db, [FIXTURE], out=out) == 0, out.getvalue()
    assert "embedded 13 papers" in out.getvalue() and "kept from the previous index" not in out.getvalue()
    assert vectors.load_index(db, vectors._read_stamp(sqlite3.connect(db))).ids.size == 13

"""Chunked Markdown reads, search modes and the public-metadata endpoints over HTTP."""

from __future__ import annotations

import hashlib

import pytest

from catalog.api.routes_papers import utf8_chunk
from tests.catalog.conftest import MARKDOWN

BASE = "/api/v1"
DATA = MARKDOWN.encode("utf-8")
VERSION = hashlib.sha256(DATA).hexdigest()


async def test_read_without_offset_returns_the_whole_document(api) -> None:
    response = await api.get(f"{BASE}/research/papers/1706.03762/read")
    assert response.status == 200
    assert response.headers["content-type"] == "text/markdown; charset=utf-8"
    assert await response.read() == DATA
    assert response.headers["x-pwc-content-version"] == VERSION
    assert response.headers["x-pwc-truncated"] == "0"
    assert "x-pwc-next-offset" not in response.headers


@pytest.mark.parametrize("limit", [1, 2, 5, 13, 64, 4096])
async def test_chunked_reads_reassemble_the_document_without_splitting_characters(api, limit: int) -> None:
    offset, parts, calls = 0, [], 0
    while True:
        calls += 1
        assert calls < len(DATA) + 2
        params = {"offset": offset, "limit": limit}
        if offset:
            params["content_version"] = VERSION
        response = await api.get(f"{BASE}/research/papers/1/read", params=params)
        assert response.status == 200
        body = await response.read()
        body.decode("utf-8")  # every chunk is valid UTF-8 on its own
        parts.append(body)
        if response.headers["x-pwc-truncated"] == "0":
            assert "x-pwc-next-offset" not in response.headers
            break
        assert int(response.headers["x-pwc-next-offset"]) == offset + len(body) > offset
        offset += len(body)
    assert b"".join(parts) == DATA


async def test_read_answers_409_when_the_content_version_changed(api) -> None:
    response = await api.get(f"{BASE}/research/papers/1/read", params={"offset": 0, "limit": 5,
                                                                     "content_version": "a" * 64})
    assert response.status == 409
    assert "content version changed" in (await response.json())["detail"]


@pytest.mark.parametrize(("ref", "fragment"), [
    pytest.param("2412.19437", "No stored Markdown", id="no-markdown"),
    pytest.param("9999.99999", "Paper not found", id="unknown-paper"),
])
async def test_read_answers_404_for_a_missing_document_or_paper(api, ref: str, fragment: str) -> None:
    response = await api.get(f"{BASE}/research/papers/{ref}/read")
    assert response.status == 404
    assert fragment in (await response.json())["detail"]


@pytest.mark.parametrize(("params", "fragment"), [
    pytest.param({"offset": len(DATA) + 1}, "beyond the end", id="past-end"),
    pytest.param({"offset": DATA.index("—".encode()) + 1}, "boundary", id="mid-character"),
    pytest.param({"offset": -1}, "offset", id="negative"),
    pytest.param({"limit": 0}, "limit", id="zero-limit"),
    pytest.param({"content_version": "xyz"}, "content_version", id="bad-version"),
])
async def test_read_rejects_bad_offsets_and_versions_with_422(api, params, fragment: str) -> None:
    response = await api.get(f"{BASE}/research/papers/1/read", params=params)
    assert response.status == 422
    assert fragment in (await response.json())["detail"]


@pytest.mark.parametrize(("data", "offset", "limit", "expected"), [
    pytest.param("aé".encode(), 0, 2, b"a", id="cut-back"),
    pytest.param("é".encode(), 0, 1, "é".encode(), id="extend-one-char"),
    pytest.param("😀x".encode(), 0, 3, "😀".encode(), id="extend-4-byte"),
    pytest.param(b"abc", 3, 5, b"", id="at-end"),
])
def test_utf8_chunk_cuts_at_character_boundaries(data: bytes, offset: int, limit: int, expected: bytes) -> None:
    assert utf8_chunk(data, offset, limit) == expected


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
async def test_every_search_mode_finds_the_obvious_paper_first(api, mode: str) -> None:
    body = await (await api.get(f"{BASE}/papers/search", params={"q": "residual learning", "mode": mode})).json()
    assert body["results"][0]["arxiv_id"] == "1512.03385"
    assert body["mode"] == mode


async def test_semantic_search_matches_word_variants(api) -> None:
    body = await (await api.get(f"{BASE}/papers/search", params={"q": "translating transformers",
                                                                 "mode": "semantic"})).json()
    assert {"1706.03762", "1810.04805"} <= {r["arxiv_id"] for r in body["results"]}


async def test_keyword_search_honours_quoted_phrases(api) -> None:
    body = await (await api.get(f"{BASE}/papers/search", params={"q": '"A Shared Title"', "mode": "keyword",
                                                                 "page_size": "20"})).json()
    assert sorted(r["arxiv_id"] for r in body["results"]) == ["2501.00001", "2501.00002"]
    body = await (await api.get(f"{BASE}/papers/search", params={"q": '"title shared"', "mode": "keyword"})).json()
    assert body["results"] == []


async def test_search_by_arxiv_id_pins_that_paper(api) -> None:
    body = await (await api.get(f"{BASE}/papers/search", params={"q": "1810.04805v2", "mode": "keyword"})).json()
    assert body["results"][0]["id"] == "2"


async def test_search_filters_are_applied_and_echoed(api) -> None:
    params = {"q": "attention OR residual OR bert", "mode": "keyword", "start_date": "2016-01-01",
              "end_date": "20181231", "has_official_implementation": "true"}
    body = await (await api.get(f"{BASE}/papers/search", params=params)).json()
    assert body["applied_filters"] == {"start_date": "2016-01-01", "end_date": "2018-12-31",
                                       "has_official_implementation": "true"}
    assert [r["id"] for r in body["results"]] == ["1"]


async def test_search_without_filters_echoes_an_empty_applied_filters(api) -> None:
    body = await (await api.get(f"{BASE}/papers/search", params={"q": "zzzz-nothing"})).json()
    assert body["applied_filters"] == {} and body["mode"] == "hybrid" and body["matched_entities"] == []
    # Nothing matches well: whatever comes back is marked weak, and none counts as strong.
    assert body["strong_count"] == 0 and all(r["match"] == "weak" for r in body["results"])


@pytest.mark.parametrize(("ref", "expected"), [
    pytest.param("1301.3781v2", {"in_catalog": False, "source": "arxiv", "matched_by": "arxiv_id"}, id="arxiv"),
    pytest.param("https%3A%2F%2Farxiv.org%2Fabs%2F1301.3781", {"arxiv_id": "1301.3781"}, id="arxiv-url"),
    pytest.param("10.5555%2F12345", {"source": "crossref", "doi": "10.5555/12345"}, id="doi"),
    pytest.param("1706.03762", {"in_catalog": True, "paper_id": "1", "arxiv_id": "1706.03762"}, id="in-catalog"),
])
async def test_public_metadata_by_reference(api, ref: str, expected: dict) -> None:
    response = await api.get(f"{BASE}/papers/{ref}/public-metadata")
    assert response.status == 200, await response.text()
    body = await response.json()
    assert expected.items() <= body.items()


async def test_public_metadata_lists_labelled_links(api) -> None:
    body = await (await api.get(f"{BASE}/papers/1301.3781/public-metadata")).json()
    assert body["available_at"] == [
        {"label": "arXiv abstract", "url": "https://arxiv.org/abs/1301.3781"},
        {"label": "arXiv PDF", "url": "https://arxiv.org/pdf/1301.3781"},
        {"label": "Hugging Face Papers", "url": "https://huggingface.co/papers/1301.3781"}]
    body = await (await api.get(f"{BASE}/papers/doi:10.5555%2F12345/public-metadata")).json()
    assert {"label": "Publisher", "url": "https://publisher.example/12345"} in body["available_at"]


@pytest.mark.parametrize(("ref", "status"), [
    pytest.param("2999.00001", 404, id="unknown-arxiv"),
    pytest.param("Some%20Title%20Words", 422, id="title-rejected"),
])
async def test_public_metadata_misses_are_json_errors(api, ref: str, status: int) -> None:
    response = await api.get(f"{BASE}/papers/{ref}/public-metadata")
    assert response.status == status
    assert "detail" in await response.json()


@pytest.mark.parametrize(("title", "status", "expected"), [
    pytest.param("efficient estimation of word representations in vector space", 200,
                 {"arxiv_id": "1301.3781", "matched_by": "title", "note": None}, id="exact"),
    pytest.param("LLaMA: a different subtitle", 200, {"arxiv_id": "2302.13971", "matched_by": "title_prefix"},
                 id="name-prefix"),
    pytest.param("Attention is all you need", 200, {"in_catalog": True, "paper_id": "1"}, id="in-catalog"),
    pytest.param("Same Public Title", 409, {}, id="ambiguous"),
    pytest.param("Completely Unknown Title", 404, {}, id="unknown"),
    pytest.param("", 422, {}, id="empty"),
])
async def test_public_metadata_title_search(api, title: str, status: int, expected: dict) -> None:
    response = await api.get(f"{BASE}/papers/public-metadata/search", params={"title": title})
    assert response.status == status, await response.text()
    body = await response.json()
    assert expected.items() <= body.items()
    if status == 200 and body.get("matched_by") == "title_prefix":
        assert "short name before the colon" in body["note"]

"""``find_in_paper`` / ``pwc paper find`` on the sample catalog (docs/tool-contract.md §4.7; issue 30 item 4)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from paper_passages import PaperIndex, search, stem
from pwc.transport import Client
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools.execution import Runtime, execute
from pwc_mcp_core.tools.projections.untrusted import unframe
from tests.pwc.runner import run_pwc


@pytest.fixture(scope="module")
def runtime(catalog_url: str) -> Runtime:
    return Runtime.build(CoreSettings(api_url=catalog_url, cursor_keys=("find-secret",)))


@pytest.fixture(scope="module")
def paper(catalog_url: str) -> bytes:
    return httpx.get(f"{catalog_url}/research/papers/1706.03762/read", timeout=10).content


def call(runtime: Runtime, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str, bool]:
    result = json.loads(execute(Call("tools/call", name, arguments), runtime))["result"]
    text = "\n".join(block["text"] for block in result["content"] if block["type"] == "text")
    return result.get("structuredContent") or {}, text, bool(result.get("isError"))


def test_the_best_passages_carry_exact_bytes_a_section_and_a_cursor_that_reads_on_there(
        runtime: Runtime, paper: bytes) -> None:
    found, text, is_error = call(runtime, "find_in_paper", {"paper": "Attention Is All You Need",
                                                            "query": "label smoothing", "limit": 3})
    assert not is_error, text
    passages = found["passages"]
    assert 1 <= len(passages) <= 3 and found["trust"] and "data" not in found
    assert any(p["heading"] == "7. Training" for p in passages)
    assert [p["score"] for p in passages] == sorted((p["score"] for p in passages), reverse=True)
    for passage in passages:
        assert set(passage["matched"]) == {"label", "smoothing"}
        assert paper[passage["offset"]:].startswith(passage["text"].encode())  # the paper's own bytes
        assert len(passage["cursor"]) <= 80
        chunk, _text, error = call(runtime, "read_paper", {"paper": "Attention Is All You Need",
                                                           "cursor": passage["cursor"]})
        assert not error and chunk["offset"] == passage["offset"]
        assert chunk["markdown"].startswith(passage["text"][:200])
        assert chunk["content_version"] == found["content_version"]


def test_the_text_frames_each_passage_and_names_the_read_paper_call(runtime: Runtime) -> None:
    found, text, _ = call(runtime, "find_in_paper", {"paper": "1706.03762", "query": "label smoothing", "limit": 2})
    bodies = unframe(text)
    assert len(bodies) == len(found["passages"]) == 2
    assert "==label== ==smoothing==" in "".join(bodies).casefold()
    nonce = text.split("]", 1)[0].removeprefix("[pwc ")
    outside = [line for line in text.splitlines() if not any(line in body for body in bodies)
               and not line.startswith(("<untrusted-", "</untrusted-"))]
    assert all(line.startswith(f"[pwc {nonce}] ") for line in outside)
    for passage in found["passages"]:
        assert f'cursor="{passage["cursor"]}"' in text


def test_a_query_nothing_matches_is_a_result_with_a_note(runtime: Runtime) -> None:
    found, text, is_error = call(runtime, "find_in_paper", {"paper": "1706.03762", "query": "zzqqxx"})
    assert not is_error and found["passages"] == [] and found["note"].startswith("no passage matches")
    assert "no passage of" in text and "<untrusted-" not in text


def test_a_paper_outside_the_catalog_or_without_text_is_an_error_that_says_what_to_do(runtime: Runtime) -> None:
    _, text, is_error = call(runtime, "find_in_paper", {"paper": "Auto-Encoding Variational Bayes", "query": "x"})
    assert is_error and text.startswith("no_markdown:") and "get_paper_info" in text


def test_the_cli_runs_the_same_command(catalog_url: str) -> None:
    result = run_pwc(catalog_url, "paper", "find", "1706.03762", "positional encoding", "--limit", "2", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)["data"]
    assert data["paper"] == "1706.03762" and len(data["passages"]) == 2
    text = run_pwc(catalog_url, "paper", "find", "1706.03762", "positional encoding")
    assert text.code == 0 and "==Positional== ==encoding==" in text.out
    bad = run_pwc(catalog_url, "paper", "find", "1706.03762", "x", "--limit", "21")
    assert bad.code == 2 and "--limit must be 1-20" in bad.err


def test_paragraph_offsets_are_utf8_byte_offsets_and_headings_are_not_passages() -> None:
    doc = "# Title\n\nCafé résumé intro.\n\n## Méthode\nWe smooth the labels here.\n\nNothing else."
    index = PaperIndex(doc)
    raw = doc.encode()
    assert [p.heading for p in index.paragraphs] == ["Title", "Méthode", "Méthode"]
    for paragraph in index.paragraphs:
        assert raw[paragraph.offset:].startswith(paragraph.text.encode())
    (best,) = search(index, "label smoothing", 5)
    assert best.paragraph.text == "We smooth the labels here." and best.matched == ("label", "smoothing")
    assert stem("smoothing") == stem("smoothed") == "smooth" and stem("layers") == "layer"


def test_the_catalog_vocabulary_widens_an_abbreviation(catalog_url: str) -> None:
    from pwc.commands.papers_find import vocabulary

    with Client(catalog_url, timeout=10) as client:
        assert vocabulary("GAN", client) == ["Generative Adversarial Network"]
        assert vocabulary("no such method", client) == []
    index = PaperIndex("Intro.\n\nWe train a generative adversarial network on faces.\n\nNetworks elsewhere.")
    (hit,) = search(index, "GAN", 5, ["Generative Adversarial Network"])
    assert hit.matched == ("Generative Adversarial Network",)


PARAPHRASE = "sequential computation prevents parallel processing"
"""Says what the "1. Motivation" paragraph says without one of its words (after stemming)."""


def test_the_catalog_finds_a_passage_by_meaning_that_shares_no_word_with_the_query(
        runtime: Runtime, catalog_url: str, paper: bytes) -> None:
    body = httpx.get(f"{catalog_url}/research/papers/1706.03762/passages",
                     params={"q": PARAPHRASE, "limit": 3}, timeout=30).json()
    motivation = [p for p in body["passages"] if p["heading"] == "1. Motivation"]
    assert motivation and motivation[0]["matched"] == [] and motivation[0]["keyword"] == 0.0
    assert motivation[0]["meaning"] > 0 and paper[motivation[0]["offset"]:].startswith(motivation[0]["text"].encode())
    # Keyword ranking alone never finds it: the meaning half does.
    index = PaperIndex(paper.decode())
    assert all(m.paragraph.heading != "1. Motivation" for m in search(index, PARAPHRASE, 20))
    found, _text, is_error = call(runtime, "find_in_paper", {"paper": "1706.03762", "query": PARAPHRASE, "limit": 3})
    assert not is_error
    (passage,) = [p for p in found["passages"] if p["heading"] == "1. Motivation"]
    assert passage["offset"] == motivation[0]["offset"] and passage["text"] == motivation[0]["text"]
    chunk, _text, error = call(runtime, "read_paper", {"paper": "1706.03762", "cursor": passage["cursor"]})
    assert not error and chunk["offset"] == passage["offset"] and chunk["markdown"].startswith(passage["text"])
    assert found["content_version"] == body["content_version"] == chunk["content_version"]


def test_the_passages_endpoint_refuses_bad_input_and_unknown_papers(catalog_url: str) -> None:
    url = f"{catalog_url}/research/papers/1706.03762/passages"
    assert httpx.get(url, timeout=10).status_code == 422
    assert httpx.get(url, params={"q": "x", "limit": 21}, timeout=10).json() == {"detail": "limit must be 1-20"}
    assert httpx.get(url, params={"q": "zzqqxx"}, timeout=10).json()["passages"] == []
    missing = httpx.get(f"{catalog_url}/research/papers/Auto-Encoding%20Variational%20Bayes/passages",
                        params={"q": "x"}, timeout=10)
    assert missing.status_code == 404


@pytest.fixture(scope="module")
def upstream_without_passages(catalog_url: str) -> Iterator[str]:
    """A proxy to the sample catalog that answers 404 for the passages endpoint, as an upstream
    that is not this project's catalog does."""
    base = urlsplit(catalog_url)

    class Proxy(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if urlsplit(self.path).path.rstrip("/").endswith("/passages"):
                status, body, kind = 404, b'{"detail":"Not Found"}', "application/json"
                headers: dict[str, str] = {}
            else:
                answer = httpx.get(f"{base.scheme}://{base.netloc}{self.path}", timeout=10)
                status, body = answer.status_code, answer.content
                kind = answer.headers.get("content-type", "application/json")
                headers = {k: v for k, v in answer.headers.items() if k.startswith("x-pwc-")}
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{base.path}"
    finally:
        server.shutdown()
        server.server_close()


def test_an_upstream_without_the_endpoint_gets_keyword_passages_at_the_same_offsets(
        catalog_url: str, upstream_without_passages: str, paper: bytes) -> None:
    own = run_pwc(upstream_without_passages, "paper", "find", "1706.03762", "label smoothing", "--json")
    assert own.code == 0, own.err
    data = json.loads(own.out)["data"]
    assert data["passages"] and all(set(p["matched"]) == {"label", "smoothing"} for p in data["passages"])
    catalog = json.loads(run_pwc(catalog_url, "paper", "find", "1706.03762", "label smoothing", "--json").out)["data"]
    assert {(p["offset"], p["text"]) for p in data["passages"]} == {(p["offset"], p["text"]) for p in catalog["passages"]}
    assert data["content_version"] == catalog["content_version"]
    for passage in data["passages"]:
        assert paper[passage["offset"]:].startswith(passage["text"].encode())
    runtime = Runtime.build(CoreSettings(api_url=upstream_without_passages, cursor_keys=("find-secret",)))
    found, text, is_error = call(runtime, "find_in_paper", {"paper": "1706.03762", "query": "label smoothing"})
    assert not is_error, text
    assert [p["offset"] for p in found["passages"]] == [p["offset"] for p in data["passages"]]
    _, text, is_error = call(runtime, "find_in_paper", {"paper": "Auto-Encoding Variational Bayes", "query": "x"})
    assert is_error and text.startswith("no_markdown:")

"""``find_in_paper`` / ``pwc paper find`` on the sample catalog (docs/tool-contract.md §4.7; issue 30 item 4)."""

from __future__ import annotations

import json
from typing import Any

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
    assert 1 <= len(passages) <= 3 and found["trust"] and found["data"] is None
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

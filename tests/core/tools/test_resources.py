"""``resources/read`` for the five templates (docs/tool-contract.md §7) through ``execute``."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.tools.execution import Runtime, execute
from pwc_mcp_core.tools.projections.untrusted import unframe
from pwc_mcp_core.tools.resources import parse_uri
from tests.core.tools.tools_stub import StubCatalog, runtime, stub  # noqa: F401 - fixtures


def read(runtime: Runtime, uri: str, era: str = "legacy") -> dict:
    return json.loads(execute(Call("resources/read", uri, {}, era=era), runtime))


@pytest.mark.parametrize(("uri", "mime", "needle"), [
    pytest.param("pwc://papers/1706.03762", "application/json", '"title":"Attention Is All You Need"', id="paper"),
    pytest.param("pwc://papers/1706.03762/markdown", "text/markdown", "abcdefgh", id="markdown"),
    pytest.param("pwc://tasks/question-answering", "application/json", '"slug":"question-answering"', id="task"),
    pytest.param("pwc://benchmarks/squad1-1", "application/json", '"slug":"squad1-1"', id="benchmark"),
    pytest.param("pwc://tasks/Question%20Answering", "application/json", '"name":"Question Answering"',
                 id="percent-decoded"),
])
def test_every_template_reads_one_content_item(runtime: Runtime, uri: str, mime: str, needle: str) -> None:
    contents = read(runtime, uri)["result"]["contents"]
    assert len(contents) == 1
    assert contents[0]["uri"] == uri and contents[0]["mimeType"] == mime
    assert needle in contents[0]["text"]


def test_modern_reads_carry_cache_hints(runtime: Runtime) -> None:
    result = read(runtime, "pwc://tasks/question-answering", era="modern")["result"]
    assert result["ttlMs"] == 300000 and result["cacheScope"] == "public" and result["resultType"] == "complete"


@pytest.mark.parametrize("uri", [
    pytest.param("pwc://nothing/here", id="unknown-collection"),
    pytest.param("https://example.org/x", id="other-scheme"),
    pytest.param("pwc://papers/", id="empty-variable"),
    pytest.param("pwc://tasks/a/b", id="extra-segment"),
    pytest.param("pwc://tasks/no-such-task", id="catalog-miss"),
])
@pytest.mark.parametrize(("era", "code"), [pytest.param("legacy", -32002, id="legacy"),
                                           pytest.param("modern", -32602, id="modern")])
def test_unknown_or_failing_uris_are_json_rpc_errors(runtime: Runtime, uri: str, era: str, code: int) -> None:
    body = read(runtime, uri, era)
    assert "result" not in body
    assert body["error"]["code"] == code and body["error"]["data"] == {"uri": uri}


def test_markdown_larger_than_one_chunk_is_its_first_chunk_and_the_call_that_continues(
        runtime: Runtime, stub: StubCatalog) -> None:
    def truncated(request: web.Request) -> web.Response:
        return web.Response(text="abcdefgh", headers={"X-PwC-Content-Version": "b" * 64, "X-PwC-Truncated": "1",
                                                      "X-PwC-Next-Offset": "8"})

    stub.overrides["research/papers/1706.03762/read"] = truncated
    try:
        body = read(runtime, "pwc://papers/1706.03762/markdown")
    finally:
        stub.overrides.clear()
    text = body["result"]["contents"][0]["text"]
    assert unframe(text) == ["abcdefgh"] and "read_paper: truncated; bytes 0-8" in text and 'cursor="' in text
    assert body["result"]["contents"][0]["mimeType"] == "text/markdown"


@pytest.mark.parametrize(("uri", "parsed"), [
    pytest.param("pwc://papers/math.GT%2F0309136", ("paper", "math.GT/0309136", {}), id="legacy-id"),
    pytest.param("pwc://papers/math.GT/0309136/markdown", ("markdown", "math.GT/0309136", {}), id="legacy-markdown"),
    pytest.param("pwc://benchmarks/ImageNet%201k", ("benchmark", "ImageNet 1k", {}), id="spaces"),
    pytest.param("pwc://papers/x?y=1", None, id="query"),
    pytest.param("pwc://papers/1706.03762/citation", ("citation", "1706.03762", {}), id="citation"),
    pytest.param("pwc://paper/1706.03762/citation?format=RIS", ("citation", "1706.03762", {"format": "ris"}),
                 id="citation-singular-format"),
    pytest.param("pwc://papers/Attention%20Is%20All%20You%20Need%3F/citation?format=csl-json",
                 ("citation", "Attention Is All You Need?", {"format": "csl-json"}), id="citation-encoded-question"),
    pytest.param("pwc://paper/1706.03762", ("paper", "1706.03762", {}), id="singular"),
    pytest.param("pwc://papers/1706.03762/citation?style=apa", None, id="citation-other-parameter"),
    pytest.param("pwc://papers/1706.03762/citation?format=ris&format=bibtex", None, id="citation-two-formats"),
    pytest.param("pwc://papers/1706.03762/citation#x", None, id="fragment"),
    pytest.param("pwc://papers/1706.03762/markdown?format=ris", None, id="query-on-markdown"),
])
def test_uris_parse_into_template_and_decoded_variable(uri: str, parsed: tuple | None) -> None:
    assert parse_uri(uri) == parsed


@pytest.mark.parametrize(("query", "mime", "start"), [
    pytest.param("", "application/x-bibtex", "@", id="bibtex-default"),
    pytest.param("?format=bibtex", "application/x-bibtex", "@", id="bibtex"),
    pytest.param("?format=ris", "application/x-research-info-systems", "TY  - ", id="ris"),
    pytest.param("?format=csl-json", "application/vnd.citationstyles.csl+json", "[", id="csl-json"),
])
@pytest.mark.parametrize("collection", ["papers", "paper"])
def test_the_citation_resource_is_the_citation_text_with_its_format_mime_type(
        runtime: Runtime, collection: str, query: str, mime: str, start: str) -> None:
    uri = f"pwc://{collection}/1706.03762/citation{query}"
    contents = read(runtime, uri)["result"]["contents"]
    assert [(c["uri"], c["mimeType"]) for c in contents] == [(uri, mime)]
    text = contents[0]["text"]
    assert text.startswith(start) and "Attention Is All You Need" in text
    if mime.endswith("csl+json"):
        assert json.loads(text)[0]["title"] == "Attention Is All You Need"


@pytest.mark.parametrize(("uri", "needle"), [
    pytest.param("pwc://papers/1706.03762/citation?format=apa", "invalid_argument", id="unknown-format"),
    pytest.param("pwc://papers/No%20Such%20Paper%20Title/citation", "not_found", id="unknown-paper"),
])
def test_a_citation_that_cannot_be_made_is_a_json_rpc_error_naming_why(
        runtime: Runtime, uri: str, needle: str) -> None:
    body = read(runtime, uri)
    assert "result" not in body and body["error"]["data"] == {"uri": uri}
    assert body["error"]["message"].startswith(f"Error reading resource {uri}: {needle}")

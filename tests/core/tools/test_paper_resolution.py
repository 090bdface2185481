"""Paper reference resolution and the public-metadata fallback (docs/tool-contract.md §5, seeds).

Upstream payloads come from a real local HTTP stub (:class:`StubCatalog`), never a
mock transport; ``tests/core/tools/test_reading.py`` reuses it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from pwc.transport import Client
from pwc_mcp_core.errors import ToolError
from pwc_mcp_core.runtime.caches import MemoryCache
from pwc_mcp_core.tools.paper_resolution import ResolvedPaper, resolve_paper

Reply = tuple[int, Any, dict[str, str]]
Route = Callable[[str, dict[str, str]], Reply]


class StubCatalog:
    """A real HTTP server on 127.0.0.1 answering ``/api/v1/<path>`` via ``route(path, params)``.

    ``route`` returns (status, body, headers); a ``str``/``bytes`` body is sent as is,
    anything else as JSON. ``requests`` records (path, params) in arrival order.
    ``hold`` makes a route block (bounded) so the client times out.
    """

    def __init__(self, route: Route) -> None:
        self.route = route
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.release = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # http.server API
                parts = urlsplit(self.path)
                path = parts.path.removeprefix("/api/v1/")
                params = dict(parse_qsl(parts.query))
                stub.requests.append((path, params))
                status, body, headers = stub.route(path, params)
                if status == 0:  # hold the connection until the test ends (client times out)
                    stub.release.wait(10)
                    return
                raw = body if isinstance(body, bytes) else (
                    body.encode() if isinstance(body, str) else json.dumps(body).encode())
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/api/v1"

    def client(self, *, timeout: float = 5.0, cache: Any = None) -> Client:
        return Client(self.url, timeout=timeout, cache=cache if cache is not None else MemoryCache())

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub() -> Iterator[Callable[[Route], StubCatalog]]:
    servers: list[StubCatalog] = []

    def start(route: Route) -> StubCatalog:
        servers.append(StubCatalog(route))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def not_found(detail: str = "Not found") -> Reply:
    return 404, {"detail": detail}, {}


def page(results: list[dict], next_page: int | None = None) -> Reply:
    return 200, {"count": len(results), "results": results, "next_page": next_page}, {}


PAPERS = {
    "1706.03762": {"id": "1", "arxiv_id": "1706.03762", "title": "Attention Is All You Need"},
    "86122": {"id": "86122", "arxiv_id": "2505.18132v1", "title": "Numeric"},
    "4242": {"id": "4242", "arxiv_id": None, "title": "No arXiv"},
    "math.GT/0309136": {"id": "7", "arxiv_id": "math.GT/0309136", "title": "Legacy"},
    "1810.04805": {"id": "2", "arxiv_id": "1810.04805",
                   "title": "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"},
}
EXTERNAL = {
    "source": "arxiv", "title": "Only Public", "arxiv_id": "2401.00001", "abstract": "An abstract.",
    "authors": ["A. Author"],
    "available_at": [{"label": "arXiv abstract", "url": "https://arxiv.org/abs/2401.00001"}],
}


def catalog_route(path: str, params: dict[str, str]) -> Reply:
    """A small catalog: PAPERS by id, an exact-title search, public metadata for 2401.00001."""
    from urllib.parse import unquote

    if path == "papers/search":
        q = " ".join(params["q"].strip('"').split()).casefold()
        hits = [p for p in PAPERS.values() if q in p["title"].casefold()]
        return page(hits)
    if path == "papers/public-metadata/search":
        title = params["title"]
        if title == "Only Public":
            return 200, EXTERNAL, {}
        if title == "Twin Title":
            return 409, {"detail": "several papers share this title"}, {}
        if title == "Mapped Title":
            return 200, {"in_catalog": True, "paper_id": "1", "arxiv_id": "1706.03762"}, {}
        return not_found()
    if path.endswith("/public-metadata"):
        ref = unquote(path.removeprefix("papers/").removesuffix("/public-metadata"))
        if ref == "2401.00001":
            return 200, EXTERNAL, {}
        if ref == "2402.00002":
            return 200, {"in_catalog": True, "paper_id": "4242", "arxiv_id": None}, {}
        if ref == "10.1000/rejected":
            return 422, {"detail": "not an identifier"}, {}
        return not_found()
    ref = unquote(path.removeprefix("papers/"))
    if ref in PAPERS:
        return 200, PAPERS[ref], {}
    return not_found()


@pytest.mark.parametrize("reference,canonical", [
    pytest.param("1706.03762", "1706.03762", id="arxiv-id"),
    pytest.param("  1706.03762v7 ", "1706.03762", id="arxiv-id-version"),
    pytest.param("https://arxiv.org/abs/1706.03762v2", "1706.03762", id="arxiv-abs-url"),
    pytest.param("https://arxiv.org/pdf/1706.03762v7.pdf", "1706.03762", id="arxiv-pdf-url"),
    pytest.param("https://www.arxiv.org/pdf/1706.03762", "1706.03762", id="arxiv-pdf-no-ext"),
    pytest.param("https://huggingface.co/papers/1706.03762", "1706.03762", id="hf-url"),
    pytest.param("https://paperswithcode.co/paper/1706.03762", "1706.03762", id="pwc-url-id"),
    pytest.param("https://paperswithcode.co/paper/attention-is-all-you-need", "1706.03762", id="pwc-url-slug"),
    pytest.param("math.GT/0309136v2", "math.GT/0309136", id="legacy-id"),
    pytest.param("https://arxiv.org/abs/math.GT/0309136", "math.GT/0309136", id="legacy-url"),
    pytest.param("86122", "2505.18132", id="numeric-with-arxiv"),
    pytest.param("4242", "4242", id="numeric-without-arxiv"),
    pytest.param("attention is  all you NEED", "1706.03762", id="exact-title-normalized"),
    pytest.param("BERT", "1810.04805", id="short-name-before-colon"),
])
def test_accepted_reference_forms_resolve_to_the_canonical_id(stub, reference: str, canonical: str) -> None:
    server = stub(catalog_route)
    resolved = resolve_paper(reference, server.client())
    assert resolved.canonical == canonical and resolved.in_catalog and resolved.external is None


def test_numeric_ids_are_canonicalised_through_the_paper_record(stub) -> None:
    server = stub(catalog_route)
    resolve_paper("86122", server.client())
    assert server.requests == [("papers/86122", {})]


def test_legacy_ids_are_percent_encoded_in_paths(stub) -> None:
    server = stub(catalog_route)
    resolve_paper("math.GT/0309136", server.client())
    assert server.requests[0][0] == "papers/math.GT%2F0309136"


@pytest.mark.parametrize("url", [
    pytest.param("https://doi.org/10.1145/3295500.3356134", id="doi"),
    pytest.param("https://aclanthology.org/N19-1423/", id="acl"),
    pytest.param("https://arxiv.org/list/cs.LG", id="arxiv-non-paper"),
])
def test_other_urls_are_refused_without_an_upstream_call(stub, url: str) -> None:
    server = stub(catalog_route)
    with pytest.raises(ToolError, match=r"^not_found: Paper URL not supported: "):
        resolve_paper(url, server.client())
    assert server.requests == []


def test_an_empty_reference_is_refused() -> None:
    with pytest.raises(ToolError, match="Paper reference cannot be empty"):
        resolve_paper("   ", Client("http://127.0.0.1:9"))


def test_a_title_is_searched_as_a_phrase_first_and_found_in_one_call(stub) -> None:
    server = stub(catalog_route)
    resolve_paper("Attention Is All You Need", server.client())
    assert server.requests == [("papers/search", {"q": '"Attention Is All You Need"', "mode": "keyword",
                                                  "page": "1", "page_size": "100"})]


def test_duplicate_exact_titles_are_ambiguous_even_on_different_pages(stub) -> None:
    def route(path: str, params: dict[str, str]) -> Reply:
        if params.get("page") == "1":
            return page([{"id": "1", "arxiv_id": "2001.00001", "title": "Same Title"}], 2)
        return page([{"id": "2", "arxiv_id": "2001.00002", "title": "same  title"}])

    server = stub(route)
    with pytest.raises(ToolError) as info:
        resolve_paper("Same Title", server.client())
    assert str(info.value) == ("ambiguous: Paper title is ambiguous: Same Title; Same Title (2001.00001); "
                               "same  title (2001.00002). Pass one of these IDs as paper")


def test_several_titles_sharing_a_short_name_are_ambiguous(stub) -> None:
    def route(path: str, params: dict[str, str]) -> Reply:
        return page([{"id": "1", "arxiv_id": "2001.00001", "title": "Gem: one"},
                     {"id": "2", "arxiv_id": "2001.00002", "title": "Gem: two"}])

    server = stub(route)
    with pytest.raises(ToolError, match="^ambiguous: Paper title is ambiguous: Gem; "):
        resolve_paper("Gem", server.client())


def test_an_exact_title_found_within_the_page_budget_is_kept(stub) -> None:
    def route(path: str, params: dict[str, str]) -> Reply:
        if params["q"].startswith('"'):
            return page([])
        page_no = int(params["page"])
        rows = [{"id": "1", "arxiv_id": "1706.03762", "title": "Endless"}] if page_no == 1 else []
        return page(rows + [{"id": str(page_no + 10), "arxiv_id": None, "title": "Other"}], page_no + 1)

    server = stub(route)
    assert resolve_paper("Endless", server.client()).canonical == "1706.03762"
    assert len(server.requests) == 11


def test_an_exhausted_page_budget_without_a_match_is_refused(stub) -> None:
    def route(path: str, params: dict[str, str]) -> Reply:
        return page([{"id": "9", "arxiv_id": None, "title": "Other"}], int(params["page"]) + 1)

    server = stub(route)
    with pytest.raises(ToolError, match="^not_found: Too many results to resolve paper title safely"):
        resolve_paper("Endless", server.client())
    assert len(server.requests) == 20


def test_an_unknown_identifier_falls_back_to_public_metadata(stub) -> None:
    server = stub(catalog_route)
    resolved = resolve_paper("2401.00001v1", server.client())
    assert resolved == ResolvedPaper("2401.00001", False, resolved.external, "identifier")
    assert resolved.external is not None
    assert resolved.external["available_at"] == EXTERNAL["available_at"]
    assert resolved.external["in_catalog"] is False and resolved.external["note"]
    assert resolved.external["abstract"] == "An abstract."


def test_an_unknown_title_falls_back_to_the_title_search(stub) -> None:
    server = stub(catalog_route)
    resolved = resolve_paper("Only Public", server.client())
    assert (resolved.in_catalog, resolved.kind, resolved.canonical) == (False, "title", "2401.00001")
    assert server.requests[-1] == ("papers/public-metadata/search", {"title": "Only Public"})


@pytest.mark.parametrize("reference,canonical", [
    pytest.param("2402.00002", "4242", id="identifier-mapped-to-catalog-id"),
    pytest.param("Mapped Title", "1706.03762", id="title-mapped-to-arxiv-id"),
])
def test_a_fallback_answer_naming_a_catalog_paper_is_retried_with_its_id(stub, reference, canonical) -> None:
    server = stub(catalog_route)
    resolved = resolve_paper(reference, server.client())
    assert (resolved.canonical, resolved.in_catalog, resolved.external) == (canonical, True, None)


def test_a_rejected_identifier_goes_to_the_title_search(stub) -> None:
    server = stub(catalog_route)
    with pytest.raises(ToolError, match="^not_found: Paper not found: 10.1000/rejected; "):
        resolve_paper("10.1000/rejected", server.client())
    assert [p for p, _ in server.requests] == ["papers/10.1000%2Frejected/public-metadata",
                                               "papers/public-metadata/search"]


@pytest.mark.parametrize("reference,message", [
    pytest.param("2403.99999", r"^not_found: Paper not found: 2403\.99999; .*identifier", id="identifier"),
    pytest.param("No Such Paper Title", r"^not_found: Paper title not found: No Such Paper Title; .*title",
                 id="title"),
])
def test_fallback_misses_say_what_was_tried_and_are_cached(stub, reference: str, message: str) -> None:
    server = stub(catalog_route)
    client = server.client()
    with pytest.raises(ToolError, match=message):
        resolve_paper(reference, client)
    first = len([p for p, _ in server.requests if "public-metadata" in p])
    with pytest.raises(ToolError, match=message):
        resolve_paper(reference, client)
    assert first == 1
    assert len([p for p, _ in server.requests if "public-metadata" in p]) == 1


@pytest.mark.parametrize("status", [pytest.param(503, id="503"), pytest.param(0, id="timeout")])
def test_an_unavailable_lookup_is_an_upstream_error_and_not_cached(stub, status: int) -> None:
    def route(path: str, params: dict[str, str]) -> Reply:
        if "public-metadata" in path:
            return status, {"detail": "down"}, {}
        return not_found()

    server = stub(route)
    client = server.client(timeout=0.5)
    for _ in range(2):
        with pytest.raises(ToolError, match="^upstream_error: the public metadata lookup is unavailable"):
            resolve_paper("2404.00001", client)
    assert len([p for p, _ in server.requests if "public-metadata" in p]) == 2


def test_a_title_shared_by_several_public_records_is_ambiguous(stub) -> None:
    server = stub(catalog_route)
    with pytest.raises(ToolError, match="^ambiguous: Paper title is ambiguous: Twin Title; "):
        resolve_paper("Twin Title", server.client())


def test_a_doi_goes_straight_to_the_public_metadata_lookup(stub) -> None:
    server = stub(catalog_route)
    with pytest.raises(ToolError, match="^not_found: Paper not found: 10.1000/missing; "):
        resolve_paper("doi:10.1000/missing", server.client())
    assert [p for p, _ in server.requests] == ["papers/10.1000%2Fmissing/public-metadata"]


@pytest.mark.parametrize("reference,canonical,in_catalog", [
    pytest.param("https://arxiv.org/pdf/1706.03762v7.pdf", "1706.03762", True, id="arxiv-pdf-url"),
    pytest.param("Attention Is All You Need", "1706.03762", True, id="exact-title"),
    pytest.param("BERT", "1810.04805", True, id="short-name"),
    pytest.param("1312.6114", "1312.6114", False, id="external-identifier"),
    pytest.param("Auto-Encoding Variational Bayes", "1312.6114", False, id="external-title"),
    pytest.param("LoRA", "2106.09685", False, id="external-short-name"),
    pytest.param("math/0211159v1", "math/0211159", False, id="external-legacy-id"),
])
def test_references_resolve_against_the_sample_catalog(catalog_url: str, reference: str, canonical: str,
                                                       in_catalog: bool) -> None:
    resolved = resolve_paper(reference, Client(catalog_url, timeout=10, cache=MemoryCache()))
    assert (resolved.canonical, resolved.in_catalog) == (canonical, in_catalog)
    if not in_catalog:
        assert resolved.external and resolved.external["available_at"] and resolved.external["note"]


@pytest.mark.parametrize("reference,message", [
    pytest.param("2399.00001", "^not_found: Paper not found: 2399.00001; ", id="identifier"),
    pytest.param("A Title Nobody Ever Wrote", "^not_found: Paper title not found: ", id="title"),
])
def test_unknown_references_are_not_found_in_the_sample_catalog(catalog_url: str, reference: str,
                                                                message: str) -> None:
    with pytest.raises(ToolError, match=message):
        resolve_paper(reference, Client(catalog_url, timeout=10, cache=MemoryCache()))

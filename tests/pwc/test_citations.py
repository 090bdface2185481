"""Citations read back by real consumers: BibTeX with bibtexparser v2, RIS with rispy, CSL-JSON
rendered by citeproc-py, and hostile titles and names as property tests (issue 31)."""

from __future__ import annotations

import json
import re
from typing import Any

import bibtexparser
import pytest
import rispy
from bibtexparser import middlewares
from citeproc import Citation as ProcCitation
from citeproc import CitationItem, CitationStylesBibliography, CitationStylesStyle, formatter
from citeproc.source.json import CiteProcJSON
from hypothesis import given, settings
from hypothesis import strategies as st

from pwc.citations import bibtex_entry, citation_fields, csl_item, make_keys, ris_entry, split_name
from pwc.transport import Client
from tests.pwc.runner import run_pwc

SAMPLE = "catalog/sample/papers-with-abstracts.json"
# The CSL data schema's constraints on what the writer emits (item keys, names, dates).
CSL_KEYS = {"id", "type", "title", "author", "issued", "container-title", "number", "publisher", "DOI", "URL"}
CSL_TYPES = {"article", "article-journal", "paper-conference"}
NAME_KEYS = {"family", "given", "suffix", "literal"}


def _sample_refs() -> list[str]:
    with open(SAMPLE, encoding="utf-8") as handle:
        papers = json.load(handle)
    return [p["arxiv_id"] or p["title"] for p in papers]


def _csl_valid(item: dict[str, Any]) -> None:
    assert set(item) <= CSL_KEYS and item["type"] in CSL_TYPES and isinstance(item["id"], str)
    for name in item.get("author", []):
        assert set(name) <= NAME_KEYS and all(isinstance(v, str) for v in name.values())
    if "issued" in item:
        parts = item["issued"]["date-parts"]
        assert len(parts) == 1 and 1 <= len(parts[0]) <= 3 and all(isinstance(p, int) for p in parts[0])


def _parse_bib(text: str) -> Any:
    library = bibtexparser.parse_string(text, append_middleware=[middlewares.LatexDecodingMiddleware()])
    assert not library.failed_blocks, [b.error for b in library.failed_blocks]
    return library


def _render_csl(items: list[dict[str, Any]]) -> list[str]:
    source = CiteProcJSON(items)
    bibliography = CitationStylesBibliography(CitationStylesStyle("harvard-cite-them-right", validate=False), source,
                                              formatter.plain)
    for item in items:
        bibliography.register(ProcCitation([CitationItem(item["id"])]))
    return [str(entry) for entry in bibliography.bibliography()]


@pytest.fixture(scope="module")
def every_sample(catalog_url: str) -> dict[str, dict[str, Any]]:
    """``pwc paper cite <every sample paper> --format F --json`` for each format."""
    out = {}
    for fmt in ("bibtex", "ris", "csl-json"):
        result = run_pwc(catalog_url, "paper", "cite", *_sample_refs()[:25], "--format", fmt, "--json")
        rest = run_pwc(catalog_url, "paper", "cite", *_sample_refs()[25:], "--format", fmt, "--json")
        assert result.code == rest.code == 0, result.err + rest.err
        first, second = json.loads(result.out)["data"], json.loads(rest.out)["data"]
        out[fmt] = {"items": first["items"] + second["items"], "texts": [first["text"], second["text"]]}
    return out


def test_every_sample_paper_exports_as_bibtex_and_parses_back(every_sample: dict[str, Any]) -> None:
    data = every_sample["bibtex"]
    assert all(item["status"] == "ok" for item in data["items"]), data["items"]
    entries = [e for text in data["texts"] for e in _parse_bib(text).entries]
    titles = {item["title"] for item in data["items"]}
    assert {re.sub(r"[{}]", "", e.fields_dict["title"].value) for e in entries} == titles
    by_key = {e.key: e for e in entries}
    assert by_key["vaswani2017attention"].entry_type == "inproceedings"
    assert by_key["vaswani2017attention"].fields_dict["booktitle"].value == "NeurIPS 2017"
    assert "Kaiser, Łukasz" in by_key["vaswani2017attention"].fields_dict["author"].value
    assert by_key["deepseekai2024deepseek"].entry_type == "misc"
    assert by_key["deepseekai2024deepseek"].fields_dict["archivePrefix"].value == "arXiv"
    assert by_key["deepseekai2024deepseek"].fields_dict["author"].value in ("DeepSeek-AI", "{DeepSeek-AI}")


def test_same_title_papers_get_distinct_keys_in_one_batch(catalog_url: str) -> None:
    result = run_pwc(catalog_url, "paper", "cite", "1701.07274", "1806.08894", "1701.07274", "--json")
    data = json.loads(result.out)["data"]
    keys = [item["key"] for item in data["items"]]
    assert keys == ["li2017deep", "mousavi2018deep", "li2017deep"] and data["cited"] == 2
    assert len(_parse_bib(data["text"]).entries) == 2


def test_every_sample_paper_exports_as_ris_and_rispy_reads_it(every_sample: dict[str, Any]) -> None:
    records = [r for text in every_sample["ris"]["texts"] for r in rispy.loads(text)]
    assert len(records) == len({item["key"] for item in every_sample["ris"]["items"]})
    assert {r["type_of_reference"] for r in records} <= {"CONF", "JOUR", "GEN"}
    attention = next(r for r in records if r["title"] == "Attention Is All You Need")
    assert attention["type_of_reference"] == "CONF" and attention["authors"][0] == "Vaswani, Ashish"


def test_every_sample_paper_exports_as_csl_json_and_citeproc_renders_it(every_sample: dict[str, Any]) -> None:
    items = [item for text in every_sample["csl-json"]["texts"] for item in json.loads(text)]
    for item in items:
        _csl_valid(item)
    rendered = _render_csl(items)
    assert len(rendered) == len(items)
    assert any("Attention Is All You Need" in line and "Vaswani" in line for line in rendered)


def test_an_unresolved_reference_is_reported_in_place_and_never_aborts(catalog_url: str) -> None:
    result = run_pwc(catalog_url, "paper", "cite", "1706.03762", "No Such Paper Title At All", "9999.99999")
    assert result.code == 0
    assert result.out.index("@inproceedings{vaswani2017attention") < result.out.index("% not_found: No Such")
    ris = run_pwc(catalog_url, "paper", "cite", "1706.03762", "No Such Paper Title At All", "--format", "ris")
    assert len(rispy.loads(ris.out)) == 1 and "pwc: 2. not_found: No Such Paper Title At All" in ris.err


def test_cite_takes_urls_dois_and_public_metadata(catalog_url: str) -> None:
    result = run_pwc(catalog_url, "paper", "cite", "https://arxiv.org/pdf/1706.03762v5.pdf",
                     "https://huggingface.co/papers/2106.09685", "--json")
    items = json.loads(result.out)["data"]["items"]
    assert [(i["status"], i["paper"], i["in_catalog"]) for i in items] == [
        ("ok", "1706.03762", True), ("ok", "2106.09685", False)]


def test_cite_takes_papers_with_code_slug_urls(catalog_url: str) -> None:
    result = run_pwc(catalog_url, "paper", "cite", "https://paperswithcode.com/paper/mask-r-cnn",
                     "https://paperswithcode.co/paper/no-such-slug-here/", "--json")
    items = json.loads(result.out)["data"]["items"]
    assert [(i["status"], i.get("paper")) for i in items] == [("ok", "1703.06870"), ("not_found", None)]


def test_more_than_25_references_is_a_usage_error(catalog_url: str) -> None:
    result = run_pwc(catalog_url, "paper", "cite", *[str(n) for n in range(1, 27)])
    assert result.code == 2 and result.err.startswith("pwc: at most 25 references") and not result.out


def test_a_failing_catalog_is_lookup_failed_never_not_found() -> None:
    with Client("http://127.0.0.1:9/api/v1", timeout=2) as client:
        from pwc.commands.papers_cite import verify_one

        assert verify_one(client, "Attention is all you need")["status"] == "lookup_failed"
    result = run_pwc("http://127.0.0.1:9/api/v1", "paper", "cite", "1706.03762", "--json", timeout=2)
    assert json.loads(result.out)["data"]["items"][0]["status"] == "lookup_failed"


# --- property tests: hostile titles and names -------------------------------------------------

HOSTILE = st.text(alphabet=st.sampled_from(list("{}%&$_#\\^~\n\t ,aZé漢字Łø-'\"@=")) | st.characters(
    codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=40)
NAMES = st.lists(HOSTILE | st.sampled_from(["DeepSeek-AI", "Plato", "Laurens van der Maaten",
                                            "Martin Luther King Jr.", "Gemini Team", "李 飞飞", "Tom and Jerry"]),
                 min_size=0, max_size=4)


def _record(title: str, authors: list[str]) -> dict[str, Any]:
    return {"id": "1", "arxiv_id": "2101.00001", "title": title, "authors": authors,
            "published": "2021-01-02", "conference_name": "NeurIPS 2021"}


def _norm(text: str) -> str:
    # pylatexenc decodes \textasciicircum and \textasciitilde to the modifier letters.
    return " ".join(text.translate({ord("ˆ"): "^", ord("˜"): "~"}).split())


@settings(max_examples=150, deadline=None)
@given(title=HOSTILE, authors=NAMES)
def test_hostile_text_survives_bibtex(title: str, authors: list[str]) -> None:
    citation = citation_fields(_record(title, authors))
    make_keys([citation])
    assert re.fullmatch(r"[a-z0-9]+", citation.key)
    library = _parse_bib(bibtex_entry(citation))
    (entry,) = library.entries
    decoded = entry.fields_dict["title"].value
    assert _norm(re.sub(r"[{}]", "", decoded)) == _norm(re.sub(r"[{}]", "", title)) or _norm(title) == ""
    if [a for a in authors if _norm(a)]:
        assert "author" in entry.fields_dict


@settings(max_examples=150, deadline=None)
@given(title=HOSTILE, authors=NAMES)
def test_hostile_text_survives_ris_and_csl(title: str, authors: list[str]) -> None:
    citation = citation_fields(_record(title, authors))
    make_keys([citation])
    (record,) = rispy.loads(ris_entry(citation))
    assert record["title"] == (_norm(title) or "Untitled")
    assert len(record.get("authors", [])) == len([a for a in authors if _norm(a)])
    item = csl_item(citation)
    _csl_valid(item)
    assert json.loads(json.dumps(item, ensure_ascii=False)) == item
    _render_csl([item])


@pytest.mark.parametrize(("raw", "family", "given", "literal"), [
    ("Aidan N. Gomez", "Gomez", "Aidan N.", ""),
    ("Laurens van der Maaten", "van der Maaten", "Laurens", ""),
    ("Vaswani, Ashish", "Vaswani", "Ashish", ""),
    ("DeepSeek-AI", "", "", "DeepSeek-AI"),
    ("Gemini Team", "", "", "Gemini Team"),
])
def test_names_split_into_family_and_given(raw: str, family: str, given: str, literal: str) -> None:
    name = split_name(raw)
    assert (name.family, name.given, name.literal) == (family, given, literal)


def test_every_sample_paper_compiles_with_bibtex(every_sample: dict[str, Any], tmp_path: Any) -> None:
    """The real consumer: BibTeX itself (Debian's texlive-binaries + texlive-base, installed by
    .ci/run) reads one .bib of every sample paper with the plain style, without an error."""
    import shutil
    import subprocess

    if shutil.which("bibtex") is None or not shutil.which("kpsewhich"):
        pytest.skip("bibtex is not installed (apt-get install texlive-binaries texlive-base; .ci/run does)")
    if not subprocess.run(["kpsewhich", "plain.bst"], capture_output=True, text=True).stdout.strip():
        pytest.skip("plain.bst is missing (apt-get install texlive-base; .ci/run does)")
    (tmp_path / "refs.bib").write_text("\n\n".join(every_sample["bibtex"]["texts"]), encoding="utf-8")
    keys = [item["key"] for item in every_sample["bibtex"]["items"]]
    assert len(set(keys)) == len(keys), "keys must stay unique across the two batches"
    (tmp_path / "paper.aux").write_text("\\relax\n" + "".join(f"\\citation{{{k}}}\n" for k in keys)
                                        + "\\bibstyle{plain}\n\\bibdata{refs}\n", encoding="utf-8")
    done = subprocess.run(["bibtex", "paper"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    log = (tmp_path / "paper.blg").read_text(encoding="utf-8", errors="replace")
    assert done.returncode < 2 and "error message" not in log, done.stdout + log  # 1: warnings only
    bbl = (tmp_path / "paper.bbl").read_text(encoding="utf-8", errors="replace")
    assert all(f"\\bibitem{{{key}}}" in bbl for key in keys), bbl[:2000]

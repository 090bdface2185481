"""``pwc paper cite`` and ``pwc paper verify`` (``docs/cli-contract.md`` §2.21, §2.22).

Both take up to 25 references and never abort the batch for one of them: each gets its own
``status``. A reference is looked up once however often it is repeated. ``lookup_failed`` means
the catalog did not answer; it is never reported as ``not_found``.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, NotRequired, TypedDict, TypeVar, cast

from pwc.citations import (
    FORMATS,
    Citation,
    citation_fields,
    csl_item,
    fold,
    format_citations,
    make_keys,
)
from pwc.commands.papers_common import add_json_flag
from pwc.errors import AmbiguousError, HTTPStatusError, NotFoundError, PwcError, UsageError
from pwc.json_types import JsonObject, JsonValue
from pwc.references import is_identifier, resolve_paper
from pwc.refparse import ParsedReference, parse_reference, title_key
from pwc.render import Output, result_list
from pwc.transport import quote_ref

if TYPE_CHECKING:  # the transport (httpx) is imported only where a call is made
    from pwc.transport import Client

__all__ = ["MAX_REFERENCES", "CiteItem", "CitePayload", "VerifyItem", "VerifyPayload", "cite_failures", "register", "render_cite", "render_verify", "run_cite", "run_verify", "verify_lines"]

MAX_REFERENCES = 25
MAX_REFERENCE_CHARS = 1000
SEARCH_PAGE_SIZE = 25
JOURNAL_LAG_YEARS = 2
"""How many years a journal's citation year may follow the preprint's (see ``_journal_lag``)."""
STATUSES = ("verified", "ambiguous", "not_found", "lookup_failed")
T = TypeVar("T")


class CiteItem(TypedDict):
    """One reference of ``paper cite``: a failure has ``message``, a cited paper the other fields."""

    reference: str
    status: str
    message: NotRequired[str]
    paper: NotRequired[str | None]
    title: NotRequired[str]
    in_catalog: NotRequired[bool]
    key: NotRequired[str]
    citation: NotRequired[JsonValue]  # the entry's text, or a CSL-JSON object


class CitePayload(TypedDict):
    """``pwc paper cite --json`` data."""

    format: str
    count: int
    cited: int
    text: str
    items: list[CiteItem]


class PaperSummary(TypedDict):
    """A paper a verdict names (the match or a candidate)."""

    id: str | None
    title: str
    first_author: str | None
    authors: int
    year: int | None
    in_catalog: bool


class YearEvidence(TypedDict):
    """The reference's year against the paper's (venue year, else publication year)."""

    reference: int | None
    paper: int | None
    agrees: bool | None
    journal: NotRequired[str | None]
    journal_lag: NotRequired[int]


class AuthorEvidence(TypedDict):
    """The reference's first author against the paper's."""

    reference: str | None
    paper: str | None
    agrees: bool | None


class Evidence(TypedDict):
    """Why a verdict holds: title similarity, year and first author."""

    title_similarity: float
    year: YearEvidence
    first_author: AuthorEvidence


class Verdict(TypedDict):
    """What one lookup concluded: ``status`` and, by status, the paper, candidates, evidence, message."""

    status: str
    paper: NotRequired[PaperSummary]
    matched_by: NotRequired[str]
    candidates: NotRequired[list[PaperSummary]]
    evidence: NotRequired[Evidence]
    message: NotRequired[str]


class ParsedView(TypedDict):
    """What the reference was read as."""

    title: str | None
    first_author: str | None
    year: int | None
    identifier: str | None


class ReferenceVerdict(Verdict):
    """:func:`verify_one`'s answer: the verdict with what the reference was read as."""

    parsed: ParsedView


class VerifyItem(ReferenceVerdict):
    """One reference of ``paper verify``."""

    reference: str


class VerifyPayload(TypedDict):
    """``pwc paper verify --json`` data: the count per status and one item per reference."""

    count: int
    summary: dict[str, int]
    items: list[VerifyItem]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``paper cite`` and ``paper verify`` to the ``paper`` sub-commands."""
    cite = commands.add_parser("cite", help="export citations (BibTeX, RIS, CSL-JSON)")
    cite.add_argument("papers", metavar="PAPER", nargs="+",
                      help="arXiv ID or URL, numeric paper ID, DOI, or exact title (at most 25)")
    cite.add_argument("--format", choices=FORMATS, default="bibtex", help="citation format (default bibtex)")
    add_json_flag(cite)
    cite.set_defaults(handler=run_cite, renderer=render_cite)

    verify = commands.add_parser("verify", help="check free-text references against the catalog")
    verify.add_argument("references", metavar="REFERENCE", nargs="+",
                        help="a reference as written: authors, year, title, venue, arXiv ID, DOI or URL "
                             "(at most 25)")
    add_json_flag(verify)
    verify.set_defaults(handler=run_verify, renderer=render_verify)


def _check_batch(values: list[str], noun: str) -> list[str]:
    if len(values) > MAX_REFERENCES:
        raise UsageError(f"at most {MAX_REFERENCES} {noun} per call (got {len(values)})")
    too_long = [i + 1 for i, value in enumerate(values) if len(value) > MAX_REFERENCE_CHARS]
    if too_long:
        raise UsageError(f"{noun} {too_long[0]} is longer than {MAX_REFERENCE_CHARS} characters")
    return [" ".join(str(value).split()) for value in values]


def _once(values: list[str], lookup: Callable[[str], T]) -> list[T]:
    """``lookup`` of each value, called once per distinct value (repeats share the answer)."""
    answers: dict[str, T] = {}
    for value in values:
        if value not in answers:
            answers[value] = lookup(value)
    return [answers[value] for value in values]


def _failure(exc: PwcError) -> tuple[str, str]:
    """(status, message) of a failed lookup: a miss is ``not_found``, a catalog failure ``lookup_failed``."""
    if isinstance(exc, AmbiguousError):
        return "ambiguous", str(exc)
    if isinstance(exc, NotFoundError) or (isinstance(exc, HTTPStatusError) and exc.status == 404):
        return "not_found", str(exc) if isinstance(exc, NotFoundError) else "no paper has this identifier"
    return "lookup_failed", f"the catalog did not answer: {exc}"


# --- lookups ----------------------------------------------------------------------------------


def _get_record(client: Client, path: str, params: Mapping[str, object] | None = None) -> JsonObject | None:
    """GET ``path``: the object, or None on 404 (other failures raise)."""
    try:
        record = client.get_json(path, params)
    except HTTPStatusError as exc:
        if exc.status in (400, 404, 422):
            return None
        raise
    return record if isinstance(record, dict) else None


def _public(client: Client, record: JsonObject | None) -> JsonObject | None:
    """A public-metadata answer: a record the catalog holds is fetched from the catalog instead."""
    if record is not None and record.get("in_catalog") is True:
        target = record.get("arxiv_id") or record.get("paper_id")
        return _get_record(client, f"papers/{quote_ref(str(target))}") if target else None
    return record


# A Papers With Code paper URL naming a slug rather than an id: the catalog reads slugs at papers/<slug>.
_SITE_SLUG = re.compile(r"https?://(?:www\.)?paperswithcode\.com?/paper/([a-z0-9][a-z0-9\-]*)/?", re.IGNORECASE)


def _by_identifier(client: Client, identifier: str) -> JsonObject | None:
    """``papers/<id>``, else ``papers/<id>/public-metadata`` (DOIs go to public metadata directly; a Papers
    With Code slug is the catalog's alone)."""
    slug = _SITE_SLUG.fullmatch(identifier)
    if slug:
        return _get_record(client, f"papers/{quote_ref(slug.group(1).lower())}")
    if is_identifier(identifier):
        record = _get_record(client, f"papers/{quote_ref(identifier)}")
        if record is not None:
            return record
    return _public(client, _get_record(client, f"papers/{quote_ref(identifier)}/public-metadata"))


def _cite_identifier(ref: str) -> str | None:
    """The identifier a ``cite`` reference names (id, DOI, or a supported URL), else None (a title)."""
    text = ref[4:].strip() if ref[:4].lower() == "doi:" else ref
    if is_identifier(text) or re.fullmatch(r"10\.[0-9]{4,9}/\S+", text):
        return re.sub(r"v[0-9]+$", "", text) if not text.startswith("10.") else text
    if re.match(r"https?://", text, re.IGNORECASE) or text.lower().startswith(("arxiv:", "arxiv.org")):
        parsed = parse_reference(text)
        if parsed.identifier:
            return parsed.identifier
        if _SITE_SLUG.fullmatch(text):
            return text
        raise NotFoundError(f"Paper URL not supported: {text}; only arXiv, Hugging Face, DOI and Papers With "
                            "Code paper URLs resolve")
    return None


def _cite_record(client: Client, ref: str) -> JsonObject:
    """The record to cite for one ``cite`` reference; raises the lookup's ``PwcError``."""
    if not ref:
        raise NotFoundError("Paper reference cannot be empty")
    identifier = _cite_identifier(ref)
    if identifier is not None:
        record = _by_identifier(client, identifier)
        if record is None:
            raise NotFoundError(f"Paper not found: {identifier}; neither the catalog nor public metadata "
                                "knows this identifier")
        return record
    try:
        return _fetch(client, resolve_paper(ref, client))
    except NotFoundError:
        record = _public(client, _get_record(client, "papers/public-metadata/search", {"title": ref}))
        if record is None:
            raise
        return record


def _fetch(client: Client, ref: str) -> JsonObject:
    record = _get_record(client, f"papers/{quote_ref(ref)}")
    if record is None:
        raise NotFoundError(f"Paper not found: {ref}")
    return record


def _paper_id(record: JsonObject) -> str | None:
    value = record.get("arxiv_id") or record.get("id") or record.get("doi")
    return str(value) if value else None


# --- cite -------------------------------------------------------------------------------------


def run_cite(args: argparse.Namespace, client: Client) -> CitePayload:
    """``{format, count, cited, text, items}``: the citation text and one item per reference, in order.

    Items: ``reference``, ``status`` (``ok``, ``not_found``, ``ambiguous``, ``lookup_failed``),
    ``paper``, ``title``, ``in_catalog``, ``key``, ``citation`` (the entry: text, or a CSL-JSON
    object) and ``message`` when it failed. A paper named twice is cited once.
    """
    refs = _check_batch(list(args.papers), "references")
    fmt = args.format

    def lookup(ref: str) -> JsonObject | tuple[str, str]:
        try:
            return _cite_record(client, ref)
        except PwcError as exc:
            return _failure(exc)

    answers = _once(refs, lookup)
    citations: dict[str, Citation] = {}
    for ref, answer in zip(refs, answers, strict=True):
        if isinstance(answer, dict):
            key = _paper_id(answer) or ref
            citations.setdefault(key, citation_fields(answer, ref))
    make_keys(list(citations.values()))
    items: list[CiteItem] = []
    for ref, answer in zip(refs, answers, strict=True):
        if not isinstance(answer, dict):
            status, message = answer
            items.append({"reference": ref, "status": status, "message": message})
            continue
        citation = citations[_paper_id(answer) or ref]
        entry: JsonValue = csl_item(citation) if fmt == "csl-json" else format_citations([citation], fmt)
        items.append({"reference": ref, "status": "ok", "paper": _paper_id(answer), "title": citation.title,
                      "in_catalog": answer.get("in_catalog", True) is not False, "key": citation.key,
                      "citation": entry})
    return {"format": fmt, "count": len(refs), "cited": len(citations),
            "text": cite_text(items, list(citations.values()), fmt), "items": items}


def cite_text(items: Sequence[Mapping[str, object]], citations: list[Citation], fmt: str) -> str:
    """The paste-ready text; in BibTeX a failed reference is a ``%`` comment in its place.

    ``items`` are :class:`CiteItem` (the MCP layer passes its own items of that shape)."""
    if fmt != "bibtex":
        return format_citations(citations, fmt) if citations else ""
    parts: list[str] = []
    done: set[object] = set()
    for item in items:
        if item["status"] != "ok":
            reason = " ".join(str(item["message"]).split())
            parts.append(f"% {item['status']}: {' '.join(str(item['reference']).split())}: {reason}\n")
        elif item["key"] not in done:
            done.add(item["key"])
            parts.append(str(item["citation"]))
    return "\n".join(parts)


def cite_failures(payload: Mapping[str, object]) -> list[str]:
    """``<n>. <status>: <reference>: <why>`` for each reference that was not cited.

    ``payload`` is a :func:`run_cite` answer (or its JSON round trip through the MCP layer)."""
    # Trusted shape: built by run_cite; the fields are only formatted.
    items = cast("CitePayload", payload)["items"]
    return [f"{number}. {item['status']}: {' '.join(str(item['reference']).split())}: {item['message']}"
            for number, item in enumerate(items, 1) if item["status"] != "ok"]


def render_cite(payload: CitePayload, args: argparse.Namespace, out: Output) -> None:
    """The citation text on stdout; with RIS and CSL-JSON each reference not cited goes to stderr
    (``pwc: <n>. <status>: …``), so stdout stays a valid file. BibTeX has them in place as comments."""
    out.stdout.write(payload["text"])
    if payload["format"] != "bibtex":
        for line in cite_failures(payload):
            out.stderr.write(f"pwc: {line}\n")


# --- verify -----------------------------------------------------------------------------------


def _year_of(record: JsonObject) -> int | None:
    published = str(record.get("published") or record.get("date") or "")
    return int(published[:4]) if re.match(r"[0-9]{4}", published) else None


def _venue_year(record: JsonObject) -> int | None:
    found = re.findall(r"(?:19|20)[0-9]{2}", str(record.get("conference_name") or ""))
    return int(found[-1]) if found else None


def _first_author(record: JsonObject) -> str | None:
    authors = record.get("authors")
    return str(authors[0]) if isinstance(authors, list) and authors else None


def _author_agrees(written: str | None, author: str | None) -> bool | None:
    if not written or not author:
        return None
    wanted = fold(written)
    words = [fold(w) for w in re.split(r"[\s,]+", author) if fold(w)]
    return bool(wanted) and (wanted in words or wanted == fold(author))


def _year_agrees(written: int | None, record: JsonObject) -> bool | None:
    published, venue = _year_of(record), _venue_year(record)
    if written is None or (published is None and venue is None):
        return None
    return written in (venue, published)


def _journal_lag(parsed: ParsedReference, record: JsonObject) -> int | None:
    """How many years (1 to :data:`JOURNAL_LAG_YEARS`) the reference's year follows the preprint's, when
    the reference names a journal and the catalog records no venue for the paper; else None.

    A journal version commonly appears a year or two after the arXiv preprint (T5: arXiv 2019, JMLR
    2020), and the catalog may hold only the preprint's date. A conference venue the catalog knows
    decides instead (its year is checked as is), and a reference naming no journal gets no allowance.
    """
    published = _year_of(record)
    if parsed.journal is None or parsed.year is None or published is None or record.get("conference_name"):
        return None
    lag = parsed.year - published
    return lag if 1 <= lag <= JOURNAL_LAG_YEARS else None


def _summary(record: JsonObject) -> PaperSummary:
    authors = record.get("authors")
    return {"id": _paper_id(record), "title": str(record.get("title") or ""),
            "first_author": _first_author(record), "authors": len(authors) if isinstance(authors, list) else 0,
            "year": _year_of(record), "in_catalog": record.get("in_catalog", True) is not False}


def _evidence(parsed: ParsedReference, record: JsonObject, similarity: float) -> Evidence:
    lag = _journal_lag(parsed, record)
    year: YearEvidence = {"reference": parsed.year, "paper": _venue_year(record) or _year_of(record),
                          "agrees": True if lag else _year_agrees(parsed.year, record)}
    if lag:
        year["journal"] = parsed.journal
        year["journal_lag"] = lag
    return {"title_similarity": round(similarity, 3), "year": year,
            "first_author": {"reference": parsed.first_author, "paper": _first_author(record),
                             "agrees": _author_agrees(parsed.first_author, _first_author(record))}}


def _similarity(parsed: ParsedReference, title: str) -> float:
    key = title_key(title)
    return max((difflib.SequenceMatcher(None, title_key(t), key).ratio() for t in parsed.titles), default=0.0)


def _contradictions(evidence: Evidence) -> list[str]:
    said: list[str] = []
    if evidence["year"]["agrees"] is False:
        said.append(f"the reference says {evidence['year']['reference']}, the paper is from "
                    f"{evidence['year']['paper']}")
    if evidence["first_author"]["agrees"] is False:
        said.append(f"the reference names {evidence['first_author']['reference']} first, the paper's first "
                    f"author is {evidence['first_author']['paper']}")
    return said


def _verified(parsed: ParsedReference, record: JsonObject, how: str) -> Verdict:
    evidence = _evidence(parsed, record, _similarity(parsed, str(record.get("title") or "")) if parsed.titles
                         else 1.0)
    result: Verdict = {"status": "verified", "paper": _summary(record), "matched_by": how, "evidence": evidence}
    if evidence["year"].get("journal_lag"):
        result["message"] = (f"the reference cites the journal version ({evidence['year']['journal']}, "
                             f"{parsed.year}); the catalog records only the preprint ({evidence['year']['paper']})")
    return result


def _distinguish(records: list[JsonObject]) -> str:
    parts = [f"{_first_author(r) or 'unknown author'}, {_year_of(r) or 'undated'} ({_paper_id(r)})"
             for r in records]
    return "Same title; they differ by first author and year: " + "; ".join(parts) + \
        ". Add the first author and year, or cite the arXiv ID."


def _verify_identifier(client: Client, parsed: ParsedReference) -> Verdict:
    identifier = parsed.identifier
    assert identifier is not None
    record = _by_identifier(client, identifier)
    if record is None:
        return {"status": "not_found", "message": f"no paper has the identifier {identifier}"}
    title = str(record.get("title") or "")
    stated = [t for t in parsed.titles if len(t.split()) >= 3]
    if stated and not any(title_key(t) == title_key(title) for t in stated):
        return {"status": "not_found", "candidates": [_summary(record)],
                "message": f"{identifier} is {title!r}, not the title this reference gives ({stated[0]!r})"}
    result = _verified(parsed, record, "identifier")
    contradictions = _contradictions(result["evidence"])
    if contradictions:
        return {"status": "not_found", "candidates": [_summary(record)], "evidence": result["evidence"],
                "message": f"{identifier} is {title!r}, but " + "; ".join(contradictions)}
    return result


def _with_venues(client: Client, parsed: ParsedReference, matches: dict[str, JsonObject]) -> list[JsonObject]:
    """The matches, each replaced by its full record when the reference's year is the year after the
    preprint's and the search result does not name its venue (``conference_name``; the bundled catalog's
    results do, a catalog without the field costs one ``papers/<id>`` call): the venue year (ResNet:
    arXiv 2015, CVPR 2016) decides."""
    records = []
    for record in matches.values():
        published = _year_of(record)
        if parsed.year is not None and published is not None and parsed.year == published + 1 \
                and record.get("in_catalog", True) is not False and "conference_name" not in record:
            full = _get_record(client, f"papers/{quote_ref(str(_paper_id(record)))}")
            record = full if full is not None else record
        records.append(record)
    return records


def _verify_title(client: Client, parsed: ParsedReference) -> Verdict:
    assert parsed.title is not None
    keys = {title_key(t) for t in parsed.titles if title_key(t)}
    payload = client.get_json("papers/search", {"q": parsed.title[:500], "mode": "keyword", "page": 1,
                                                "page_size": SEARCH_PAGE_SIZE})
    results = [r for r in result_list(payload) if r.get("title")]
    matches: dict[str, JsonObject] = {}
    for item in results:
        if title_key(str(item["title"])) in keys:
            matches.setdefault(_paper_id(item) or str(item["title"]), item)
    how = "title"
    if not matches:
        # The title is compared before a record the catalog holds is fetched: a near title costs no call.
        public = _get_record(client, "papers/public-metadata/search", {"title": parsed.title})
        if public is not None and title_key(str(public.get("title") or "")) in keys:
            record = _public(client, public)
            if record is not None and title_key(str(record.get("title") or "")) in keys:
                matches[_paper_id(record) or parsed.title] = record
                how = "title (public metadata)"
    if not matches:
        closest = sorted(results, key=lambda r: -_similarity(parsed, str(r["title"])))[:3]
        return {"status": "not_found", "candidates": [_summary(r) for r in closest],
                "message": "no paper has this title" + ("; closest titles are listed as candidates (none is "
                                                        "the same title)" if closest else "")}
    checked = [(record, _verified(parsed, record, how)) for record in _with_venues(client, parsed, matches)]
    consistent = [(r, v) for r, v in checked if not _contradictions(v["evidence"])]
    if len(consistent) == 1:
        return consistent[0][1]
    if consistent:
        records = [r for r, _v in consistent]
        return {"status": "ambiguous", "candidates": [_summary(r) for r in records],
                "message": _distinguish(records)}
    record, result = checked[0]
    return {"status": "not_found", "candidates": [_summary(r) for r, _v in checked], "evidence": result["evidence"],
            "message": f"the title matches {record.get('title')!r} ({_paper_id(record)}), but "
                       + "; ".join(_contradictions(result["evidence"]))}


def verify_one(client: Client, text: str) -> ReferenceVerdict:
    """The verdict on one free-text reference (never raises for a catalog failure)."""
    parsed = parse_reference(text)
    result: Verdict
    try:
        if parsed.identifier:
            result = _verify_identifier(client, parsed)
        elif parsed.title:
            result = _verify_title(client, parsed)
        else:
            result = {"status": "not_found", "message": "no title or identifier found in this reference"}
    except PwcError as exc:
        status, message = _failure(exc)
        result = {"status": status, "message": message}
    parsed_view: ParsedView = {"title": parsed.title, "first_author": parsed.first_author, "year": parsed.year,
                               "identifier": parsed.identifier}
    # "status" first, then "parsed", then the rest in the verdict's order (status keeps its first place).
    return {"status": result["status"], "parsed": parsed_view, **result}


def run_verify(args: argparse.Namespace, client: Client) -> VerifyPayload:
    """``{count, summary, items}``: one item per reference, in order, each with its ``status``."""
    refs = _check_batch(list(args.references), "references")
    verdicts = _once(refs, lambda ref: verify_one(client, ref))
    items: list[VerifyItem] = [{"reference": ref, **verdict} for ref, verdict in zip(refs, verdicts, strict=True)]
    summary = {status: sum(1 for item in items if item["status"] == status) for status in STATUSES}
    return {"count": len(items), "summary": summary, "items": items}


def verify_lines(data: Mapping[str, object]) -> list[str]:
    """The text of a verification: a summary line, then one line (and its reason) per reference.

    ``data`` is a :func:`run_verify` answer (or its JSON round trip through the MCP layer)."""
    # Trusted shape: built by run_verify; the fields are only formatted.
    payload = cast("VerifyPayload", data)
    summary = payload["summary"]
    lines = [", ".join(f"{summary[s]} {s}" for s in STATUSES if summary.get(s)) or "no references"]
    for number, item in enumerate(payload["items"], 1):
        paper = item.get("paper")
        head = f"{number}. {item['status']}: {' '.join(str(item['reference']).split())[:200]}"
        if paper:
            evidence = item["evidence"]
            head += (f" → {paper['title']} ({paper['id']}; {paper['first_author'] or 'no author'}, "
                     f"{paper['year'] or 'undated'}; title similarity {evidence['title_similarity']})")
        lines.append(head)
        if item.get("message"):
            lines.append(f"   {item['message']}")
        if item["status"] != "verified":
            for candidate in item.get("candidates") or []:
                lines.append(f"   - {candidate['title']} ({candidate['id']}; "
                             f"{candidate['first_author'] or 'no author'}, {candidate['year'] or 'undated'})")
    return lines


def render_verify(payload: VerifyPayload, args: argparse.Namespace, out: Output) -> None:
    """Text of ``paper verify``: one numbered line per reference with its status and evidence."""
    out.lines(verify_lines(payload))

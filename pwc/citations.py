"""Citations of catalog papers in BibTeX, RIS and CSL-JSON (``docs/cli-contract.md`` §2.21).

Pure Python (the workers are Rust-free). A *record* is a catalog paper object
(``papers/<ref>``) or a public-metadata record; :func:`citation_fields` reads the
few fields a citation needs from either. The writers never fail on hostile text:
LaTeX specials are escaped in BibTeX, newlines become spaces everywhere, and
non-ASCII text is kept as UTF-8.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from pwc.json_types import JsonObject

__all__ = [
    "FORMATS", "Citation", "Name", "bibtex_entry", "citation_fields", "csl_item", "format_citations",
    "latex_escape", "make_keys", "ris_entry", "split_name",
]

FORMATS = ("bibtex", "ris", "csl-json")
_SITE = "https://paperswithcode.co/paper/"
# Words that join a family name ("van der Maaten"), kept with it.
_PARTICLES = frozenset({"van", "von", "der", "den", "de", "del", "della", "di", "da", "dos", "du", "le", "la",
                        "ten", "ter", "bin", "al", "el"})
_SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})
# A last word that makes a multi-word author an organisation ("Gemini Team").
_ORG_WORDS = frozenset({"team", "lab", "labs", "group", "consortium", "collaboration", "inc", "inc.", "ltd",
                        "research", "ai", "project", "institute", "university", "corporation", "committee"})
_KEY_STOP = frozenset({"a", "an", "the", "on", "of", "in", "for", "to", "and", "is", "are", "with", "at", "by"})
_FOLD = str.maketrans({"ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ß": "ss", "æ": "ae",
                       "Æ": "AE", "œ": "oe", "Œ": "OE", "ı": "i", "þ": "th", "ð": "d"})
_LATEX = {"\\": r"\textbackslash{}", "{": r"\textbraceleft{}", "}": r"\textbraceright{}", "%": r"\%", "&": r"\&", "$": r"\$",
          "_": r"\_", "#": r"\#", "^": r"\textasciicircum{}", "~": r"\textasciitilde{}"}
_YEAR = re.compile(r"(?<![0-9])(1[89][0-9]{2}|2[0-9]{3})(?![0-9])")


@dataclass(frozen=True)
class Name:
    """One author: ``family``/``given`` for a person, or ``literal`` for an organisation or a one-word name."""

    family: str = ""
    given: str = ""
    suffix: str = ""
    literal: str = ""


@dataclass
class Citation:
    """What a citation needs of one paper (all text already whitespace-normalised)."""

    reference: str
    title: str
    authors: list[Name]
    year: int | None
    date: tuple[int, ...]
    venue: str | None
    journal: str | None
    arxiv_id: str | None
    primary_class: str | None
    doi: str | None
    url: str | None
    key: str = ""
    extra: dict[str, object] = field(default_factory=dict)


def _clean(value: object) -> str:
    """Text with every whitespace run (newlines included) collapsed to one space."""
    return " ".join(str(value).split()) if value is not None else ""


def fold(text: str) -> str:
    """ASCII-only lower-case letters and digits of ``text`` (accents dropped; other scripts removed)."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLD))
    return "".join(c for c in decomposed if c.isascii() and c.isalnum()).lower()


def split_name(raw: str) -> Name:
    """``"Aidan N. Gomez"`` → family Gomez, given Aidan N.; ``"Laurens van der Maaten"`` keeps the particles
    with the family name; ``"Vaswani, Ashish"`` is read as family-first; one word or an organisation
    (``DeepSeek-AI``, ``Gemini Team``) is a literal."""
    name = _clean(raw)
    if "," in name:
        family, _, given = name.partition(",")
        if family.strip() and given.strip():
            return Name(family=family.strip(), given=given.strip())
        name = name.replace(",", " ").strip()
    words = name.split(" ")
    if len(words) < 2 or words[-1].casefold() in _ORG_WORDS:
        return Name(literal=name)
    suffix = ""
    if words[-1].casefold() in _SUFFIXES and len(words) > 2:
        suffix, words = words[-1], words[:-1]
    start = len(words) - 1
    while start > 1 and words[start - 1].casefold() in _PARTICLES:
        start -= 1
    return Name(family=" ".join(words[start:]), given=" ".join(words[:start]), suffix=suffix)


def _year_of(*texts: object) -> int | None:
    for text in texts:
        found = _YEAR.findall(str(text)) if text else []
        if found:
            return int(found[-1])
    return None


def _date_of(published: object) -> tuple[int, ...]:
    match = re.fullmatch(r"([0-9]{4})(?:-([0-9]{2}))?(?:-([0-9]{2}))?", str(published or "")[:10])
    return tuple(int(part) for part in match.groups() if part) if match else ()


def _record_url(record: Mapping[str, object], arxiv: str | None) -> str | None:
    for key in ("url_abs", "source_url"):
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    if arxiv:
        return f"https://arxiv.org/abs/{arxiv}"
    # Iterated as before, whatever the JSON holds (non-objects are skipped; a number fails as it did).
    for link in cast("Iterable[object]", record.get("available_at") or []):
        if isinstance(link, dict) and isinstance(link.get("url"), str):
            return str(link["url"])
    if record.get("in_catalog") is not False:
        slug = record.get("slug") or record.get("route_identifier") or record.get("id")
        return f"{_SITE}{slug}" if slug else None
    return None


def citation_fields(record: Mapping[str, object], reference: str = "") -> Citation:
    """The citation fields of a catalog paper or public-metadata ``record``.

    The venue is the catalog's conference (``conference_name``); its year (``NeurIPS 2017``) is the
    citation year, else the publication year. A venue-less paper with an arXiv id is an arXiv
    preprint; ``journal`` is used when a record carries one.
    """
    arxiv = _clean(record.get("arxiv_id")) or None
    venue = _clean(record.get("conference_name") or record.get("proceeding")) or None
    journal = _clean(record.get("journal") or record.get("journal_ref")) or None
    date = _date_of(record.get("published") or record.get("date"))
    year = _year_of(venue) if venue else None
    year = year or (date[0] if date else None) or (_year_of(journal) if journal else None)
    authors = record.get("authors")
    names = [split_name(a) for a in authors if _clean(a)] if isinstance(authors, list) else []
    categories = record.get("primary_category") or record.get("categories")
    primary = _clean(categories).split(" ")[0] if categories else None
    doi = _clean(record.get("doi")) or None
    return Citation(
        reference=reference, title=_clean(record.get("title")) or "Untitled", authors=names, year=year,
        date=date if date and (not venue or date[0] == year) else ((year,) if year else ()),
        venue=venue, journal=journal, arxiv_id=arxiv, primary_class=primary or None, doi=doi,
        url=_record_url(record, arxiv),
    )


def make_keys(citations: Sequence[Citation]) -> None:
    """Give each citation a stable key, ``vaswani2017attention``; a repeated key gets ``b``, ``c``, …"""
    seen: dict[str, int] = {}
    for citation in citations:
        first = citation.authors[0] if citation.authors else None
        family = fold((first.family or first.literal).split(" ")[-1]) if first else ""
        words = [fold(w) for w in re.split(r"[\s\-:/]+", citation.title)]
        word = next((w for w in words if w and w not in _KEY_STOP), "")
        base = f"{family or 'anon'}{citation.year or ''}{word}"
        count = seen.get(base, 0)
        seen[base] = count + 1
        citation.key = base if count == 0 else f"{base}{_suffix(count)}"


def _suffix(index: int) -> str:
    """1 → b, 2 → c, … 25 → z, 26 → ba."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


# --- BibTeX ---------------------------------------------------------------------------------


def latex_escape(text: str) -> str:
    """``text`` with the LaTeX specials escaped and whitespace collapsed (non-ASCII kept)."""
    escaped = "".join(_LATEX.get(c, c) for c in _clean(text))
    # Break the TeX ligatures (-- and --- dashes, `` and '' quotes, ?` and !`) so the text stays literal.
    return re.sub(r"([-'`?!])(?=[-'`])", r"\1{}", escaped)


def _protect(title: str) -> str:
    """Escaped title whose words with inner capitals (``BERT``, ``ResNet``) are braced against lowercasing."""
    out = []
    for word in _clean(title).split(" "):
        escaped = latex_escape(word)
        letters = [c for c in word[1:] if c.isalpha()]
        out.append(f"{{{escaped}}}" if any(c.isupper() for c in letters) else escaped)
    return " ".join(out)


def _bib_part(text: str) -> str:
    """A name part: escaped, and braced when it holds a comma or the word ``and``."""
    escaped = latex_escape(text)
    return f"{{{escaped}}}" if "," in text or re.search(r"\band\b", text, re.IGNORECASE) else escaped


def _bib_name(name: Name) -> str:
    if name.literal:
        return f"{{{latex_escape(name.literal)}}}"
    family = _bib_part(name.family)
    if name.suffix:
        return f"{family}, {_bib_part(name.suffix)}, {_bib_part(name.given)}"
    return f"{family}, {_bib_part(name.given)}" if name.given else family


def _verbatim(value: str) -> str:
    """A URL or DOI for BibTeX: kept verbatim, with the characters that would break the entry encoded."""
    return "".join({"{": "%7B", "}": "%7D", "\\": "%5C", " ": "%20"}.get(c, c) for c in value)


def bibtex_entry(citation: Citation) -> str:
    """One BibTeX entry: ``@inproceedings`` with ``booktitle`` for a conference paper, ``@article`` for a
    journal, else ``@misc`` (with ``eprint``/``archivePrefix`` for an arXiv preprint)."""
    if citation.venue:
        kind, venue = "inproceedings", [("booktitle", latex_escape(citation.venue))]
    elif citation.journal:
        kind, venue = "article", [("journal", latex_escape(citation.journal))]
    else:
        kind, venue = "misc", []
    fields: list[tuple[str, str]] = [("title", _protect(citation.title))]
    if citation.authors:
        fields.append(("author", " and ".join(_bib_name(n) for n in citation.authors)))
    fields += venue
    if citation.year:
        fields.append(("year", str(citation.year)))
    if citation.arxiv_id:
        fields += [("eprint", _verbatim(citation.arxiv_id)), ("archivePrefix", "arXiv")]
        if citation.primary_class:
            fields.append(("primaryClass", _verbatim(citation.primary_class)))
    if citation.doi:
        fields.append(("doi", _verbatim(citation.doi)))
    if citation.url:
        fields.append(("url", _verbatim(citation.url)))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{kind}{{{citation.key},\n{body}\n}}\n"


# --- RIS ------------------------------------------------------------------------------------


def _ris_name(name: Name) -> str:
    if name.literal:
        return _clean(name.literal)
    parts = [_clean(name.family), _clean(name.given)] + ([_clean(name.suffix)] if name.suffix else [])
    return ", ".join(part for part in parts if part)


def ris_entry(citation: Citation) -> str:
    """One RIS record: ``TY`` ``CONF`` (conference), ``JOUR`` (journal) or ``GEN``, ending with ``ER``."""
    kind = "CONF" if citation.venue else "JOUR" if citation.journal else "GEN"
    lines = [("TY", kind), ("ID", citation.key)]
    lines += [("AU", _ris_name(n)) for n in citation.authors]
    lines.append(("TI", citation.title))
    if citation.venue:
        lines.append(("T2", citation.venue))
    elif citation.journal:
        lines.append(("JO", citation.journal))
    if citation.year:
        lines.append(("PY", str(citation.year)))
    if citation.date:
        lines.append(("DA", "/".join(f"{part:02d}" for part in citation.date)))
    if citation.doi:
        lines.append(("DO", citation.doi))
    if citation.url:
        lines.append(("UR", citation.url))
    if citation.arxiv_id:
        lines.append(("N1", f"arXiv:{citation.arxiv_id}"))
    lines.append(("ER", ""))
    return "".join(f"{tag}  - {_clean(value)}".rstrip() + "\n" if tag == "ER" else f"{tag}  - {_clean(value)}\n"
                   for tag, value in lines)


# --- CSL-JSON -------------------------------------------------------------------------------


def _csl_name(name: Name) -> JsonObject:
    if name.literal:
        return {"literal": _clean(name.literal)}
    out: JsonObject = {"family": _clean(name.family), "given": _clean(name.given)}
    if name.suffix:
        out["suffix"] = _clean(name.suffix)
    return out


def csl_item(citation: Citation) -> JsonObject:
    """One CSL-JSON item (CSL data schema 1.0): ``paper-conference``, ``article-journal`` or ``article``."""
    kind = "paper-conference" if citation.venue else "article-journal" if citation.journal else "article"
    item: JsonObject = {"id": citation.key, "type": kind, "title": citation.title}
    if citation.authors:
        item["author"] = [_csl_name(n) for n in citation.authors]
    if citation.date:
        item["issued"] = {"date-parts": [list(citation.date)]}
    if citation.venue or citation.journal:
        item["container-title"] = citation.venue or citation.journal
    if citation.arxiv_id:
        item["number"] = f"arXiv:{citation.arxiv_id}"
        if not citation.venue and not citation.journal:
            item["publisher"] = "arXiv"
    if citation.doi:
        item["DOI"] = citation.doi
    if citation.url:
        item["URL"] = citation.url
    return item


def format_citations(citations: Iterable[Citation], fmt: str) -> str:
    """The citation text of ``citations`` in ``fmt`` (one of :data:`FORMATS`), ready to paste."""
    items = list(citations)
    if fmt == "csl-json":
        return json.dumps([csl_item(c) for c in items], ensure_ascii=False, indent=2) + "\n"
    writer = bibtex_entry if fmt == "bibtex" else ris_entry
    return "\n".join(writer(c) for c in items)

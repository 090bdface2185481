"""Free-text references as people and models write them, taken apart (``docs/cli-contract.md`` §2.22).

Pure Python and deliberately small: the identifiers (arXiv ids and URLs, DOIs, Hugging Face and
Papers With Code paper URLs), the year, the first author's family name and the title. Styles read:
APA (``Vaswani, A., … (2017). Title. Venue``), author–year (``Vaswani et al. (2017). Title.``),
ACL (``Kaiming He, … and Jian Sun. 2016. Title. In CVPR.``), Vancouver (``He K, Zhang X. Title.
CVPR 2016``), IEEE/MLA/Chicago (a quoted title), a BibTeX ``title = {…}`` and a title alone.
No maintained pure-Python parser covers these (the available ones read PDFs or need compiled
models), so the rules are here and tested with the verification suite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pwc.references import ARXIV_LEGACY, ARXIV_MODERN

__all__ = ["ParsedReference", "parse_reference", "title_key"]

_ARXIV_URL = re.compile(
    rf"arxiv\.org/(?:abs|pdf)/({ARXIV_MODERN.pattern}|{ARXIV_LEGACY.pattern})(?:v[0-9]+)?(?:\.pdf)?",
    re.IGNORECASE)
_ARXIV_TAG = re.compile(rf"arxiv\s*[:/]?\s*(?:preprint\s+arxiv\s*:\s*)?({ARXIV_MODERN.pattern}|"
                        rf"{ARXIV_LEGACY.pattern})(?:v[0-9]+)?", re.IGNORECASE)
_ARXIV_BARE = re.compile(rf"(?<![0-9./])({ARXIV_MODERN.pattern})(?:v[0-9]+)?(?![0-9])")
_SITE_URL = re.compile(r"(?:huggingface\.co/papers|paperswithcode\.com?/paper)/"
                       rf"({ARXIV_MODERN.pattern}|[0-9]+)(?![0-9.])", re.IGNORECASE)
_DOI = re.compile(r"(?:doi\s*:?\s*|doi\.org/)?\b(10\.[0-9]{4,9}/[^\s\"<>]+)", re.IGNORECASE)
_URL = re.compile(r"https?://\S+|\b(?:www\.)?arxiv\.org/\S+", re.IGNORECASE)
_YEAR = r"(?:19[5-9][0-9]|20[0-9]{2})"
_PAREN_YEAR = re.compile(rf"\(\s*({_YEAR})[a-z]?(?:,[^)]*)?\)")
_ANY_YEAR = re.compile(rf"(?<![0-9])({_YEAR})[a-z]?(?![0-9])")
_QUOTED = re.compile(r"[\"“”„]([^\"“”„]{6,}?)[\"“”„]|(?<![A-Za-z])[‘']([^‘’']{6,}?)[’'](?![A-Za-z])")
_BIB_TITLE = re.compile(r"\btitle\s*=\s*[{\"]+([^}\"]+)[}\"]+", re.IGNORECASE)
_BIB_AUTHOR = re.compile(r"\bauthor\s*=\s*[{\"]+([^}\"]+)[}\"]+", re.IGNORECASE)
_ET_AL = re.compile(r"\bet\.?\s*al\b\.?,?", re.IGNORECASE)
# "Title. In Venue", ", in Proc. …": where a title ends when the venue follows it.
_VENUE_START = re.compile(r"^(?:in\b|proc\b|proceedings\b|advances in\b|arxiv\b|journal\b|trans\b|ieee\b|acm\b|"
                          r"conference\b|international\b|workshop\b|pp\b|vol\b|preprint\b|technical report\b|"
                          r"openai\b|neurips\b|nips\b|icml\b|iclr\b|cvpr\b|iccv\b|eccv\b|acl\b|naacl\b|emnlp\b|"
                          r"aaai\b|ijcai\b|kdd\b|miccai\b|jmlr\b|tpami\b|nature\b|science\b|corr\b)",
                          re.IGNORECASE)
# A journal named outside the title: "Journal of Machine Learning Research", "J. Mach. Learn. Res.",
# "IEEE Transactions on …", "JMLR", "TPAMI", "Nature". Conferences and arXiv are not journals.
_JOURNAL = re.compile(r"\b(?:journal\b|(?-i:J\.\s*[A-Z][a-z]+\.)|trans(?:actions\b|\.)|jmlr\b|tmlr\b|t?pami\b|nature\b|"
                      r"science\b|neural computation\b|letters\b)", re.IGNORECASE)
_INITIALS = re.compile(r"^(?:[A-Z]\.?-?){1,3}$")
_NAME_WORD = re.compile(r"^[A-Z][\w'’\-]*\.?$")
_JOINERS = frozenset({"and", "&"})
_VANCOUVER_NAME = r"[A-Z][\w'’\-]+(?: [A-Z][\w'’\-]+)* [A-Z]{1,3}"
# "He K, Zhang X, Ren S, Sun J. Title. Venue": family names then initials without dots.
_VANCOUVER = re.compile(rf"^({_VANCOUVER_NAME}(?:, {_VANCOUVER_NAME})*(?:,? et al)?)\.\s+(?=\S)")


@dataclass(frozen=True)
class ParsedReference:
    """What one free-text reference says.

    Attributes:
        text: the reference, whitespace collapsed.
        arxiv_id, doi, site_id: identifiers found in it (``site_id`` is a Hugging Face or Papers With
            Code paper id), else None.
        year: the publication year it states, else None.
        first_author: the first author's family name as written (``Vaswani``), else None.
        title: the title it states, else None; ``titles`` are every candidate piece, best first.
        journal: the journal named outside the title (its first words as written), else None; a
            journal's year may follow the preprint's by a year or two.
    """

    text: str
    arxiv_id: str | None
    doi: str | None
    site_id: str | None
    year: int | None
    first_author: str | None
    title: str | None
    titles: tuple[str, ...]
    journal: str | None = None

    @property
    def identifier(self) -> str | None:
        """The one identifier to look up: arXiv id, else site id, else DOI."""
        return self.arxiv_id or self.site_id or self.doi


def title_key(text: str) -> str:
    """The comparison form of a title: letters and digits only, case and accents folded, ``&`` = and."""
    from pwc.citations import fold

    return fold(re.sub(r"&", " and ", text))


def _identifiers(text: str) -> tuple[str | None, str | None, str | None]:
    arxiv = None
    for pattern in (_ARXIV_URL, _ARXIV_TAG):
        match = pattern.search(text)
        if match:
            arxiv = match.group(1)
            break
    site = _SITE_URL.search(text)
    doi_match = _DOI.search(text)
    doi = doi_match.group(1).rstrip(".,;)]") if doi_match else None
    if arxiv is None and site is None and doi is None:
        bare = _ARXIV_BARE.search(text)
        arxiv = bare.group(1) if bare else None
    if doi and doi.lower().startswith("10.48550/arxiv."):  # arXiv's own DOI names the arXiv id
        arxiv, doi = arxiv or doi[len("10.48550/arxiv."):], None
    return arxiv, (site.group(1) if site else None), doi


def _strip_identifiers(text: str) -> str:
    text = _URL.sub(" ", text)
    text = _DOI.sub(" ", text)
    text = _ARXIV_TAG.sub(" ", text)
    return " ".join(_ARXIV_BARE.sub(" ", text).split())


def _year(text: str) -> int | None:
    paren = _PAREN_YEAR.search(text)
    if paren:
        return int(paren.group(1))
    found = _ANY_YEAR.findall(text)
    return int(found[-1]) if found else None


def _trim(piece: str) -> str:
    return piece.strip(" \t.,;:-–—\"“”‘’'").strip()


def _title_end(rest: str) -> str:
    """The title at the start of ``rest``: up to a sentence end followed by a venue, a year or the end."""
    rest = rest.strip()
    for match in re.finditer(r"[.?!]\s+|,\s+(?=in\b)|\s+(?=In\s)", rest):
        following = rest[match.end():]
        ended = rest[: match.end()].rstrip()
        if ended.endswith(("?", "!")):
            return ended
        return _trim(rest[: match.start()]) if following else _trim(ended)
    return _trim(rest)


def _looks_like_authors(piece: str) -> bool:
    """True for ``Vaswani, A., Shazeer, N.``, ``He K, Zhang X``, ``Kaiming He, … and Jian Sun``, ``X et al.``"""
    if _ET_AL.search(piece):
        return True
    words = [w.strip(",;") for w in piece.replace(",", ", ").split() if w.strip(",;")]
    if not words:
        return False
    names = sum(1 for w in words if _INITIALS.match(w) or _NAME_WORD.match(w) or w.lower() in _JOINERS)
    return "," in piece and names == len(words) and len(words) >= 2


def _sentences(text: str) -> list[str]:
    """Pieces split at ``. `` / ``? `` boundaries, never after an initial or an abbreviation."""
    pieces: list[str] = []
    current = ""
    for token in re.split(r"(?<=[.?!])\s+", text):
        current = f"{current} {token}".strip() if current else token
        last = current.split(" ")[-1]
        if last.endswith(".") and (_INITIALS.match(last) or last.lower() in {"al.", "proc.", "conf.", "int.",
                                                                             "vol.", "pp.", "eds.", "ed."}):
            continue
        pieces.append(current)
        current = ""
    if current:
        pieces.append(current)
    return [p for p in (_trim(p) for p in pieces) if p]


def _titles(text: str) -> list[str]:
    found: list[str] = []
    bib = _BIB_TITLE.search(text)
    if bib:
        found.append(_trim(bib.group(1)))
    for match in _QUOTED.finditer(text):
        quoted = _trim(match.group(1) or match.group(2) or "")
        if len(quoted.split()) >= 2:
            found.append(quoted)
    vancouver = _VANCOUVER.match(text)
    if vancouver:
        found.append(_title_end(text[vancouver.end():]))
    marker = _PAREN_YEAR.search(text) or re.search(rf"(?:^|[.,]\s+)({_YEAR})[a-z]?\.\s+", text)
    if marker and marker.end() < len(text):
        after = _title_end(text[marker.end():].lstrip(" .,:"))
        if after and not _VENUE_START.match(after):
            found.append(after)
    pieces = _sentences(text)
    prose = [p for p in pieces if not _looks_like_authors(p) and not _VENUE_START.match(p)
             and not re.fullmatch(rf"\(?{_YEAR}[a-z]?\)?", p)]
    for piece in prose:
        piece = _trim(_PAREN_YEAR.sub(" ", piece))
        stripped = re.sub(rf"[,.]?\s*{_YEAR}[a-z]?$", "", piece).strip()
        if stripped and stripped not in found:
            found.append(_trim(stripped))
    whole = _trim(text)
    if whole and whole not in found:
        found.append(whole)
    return [t for t in found if t]


def _author_block(text: str, title: str | None) -> str:
    bib = _BIB_AUTHOR.search(text)
    if bib:  # BibTeX "Last, First and …": the first author's family name comes first
        first = re.split(r"\s+and\s+", bib.group(1).strip())[0]
        return first.split(",")[0] if "," in first else first
    vancouver = _VANCOUVER.match(text)
    if vancouver:
        return vancouver.group(1)
    if title:
        at = text.find(title)
        if at > 0:
            return text[:at]
        # The title was found in another casing: cut at the year marker or the first sentence.
    marker = _PAREN_YEAR.search(text)
    if marker:
        return text[: marker.start()]
    pieces = _sentences(text)
    return pieces[0] if len(pieces) > 1 and _looks_like_authors(pieces[0]) else ""


def _first_author(block: str) -> str | None:
    block = _ET_AL.split(block)[0]
    block = re.split(r"\s(?:and|&)\s", block)[0]
    tokens = [t.strip() for t in re.split(r"[,;]", block) if t.strip()]
    if not tokens:
        return None
    words = [w for w in tokens[0].replace(".", ". ").split() if w]
    words = [w for w in words if not w.startswith("(")]
    if not words:
        return None
    if len(words) == 1 or all(_INITIALS.match(w) for w in words[1:]):
        surname = words[0]
    else:  # "Kaiming He", "A. Vaswani", "Laurens van der Maaten"
        surname = words[-1]
    surname = _trim(surname)
    return surname if surname and not _INITIALS.match(surname) and not surname[0].isdigit() else None


def parse_reference(raw: str) -> ParsedReference:
    """Take one free-text reference apart (see the module docstring for the styles read)."""
    text = " ".join(str(raw).split())
    arxiv, site, doi = _identifiers(text)
    rest = _strip_identifiers(text)
    titles = _titles(rest) if rest else []
    title = titles[0] if titles else None
    first = _first_author(_author_block(rest, title)) if rest else None
    if title is not None and first is not None and title_key(title) == title_key(rest):
        first = None  # a title alone names no author
    return ParsedReference(text=text, arxiv_id=arxiv, doi=doi, site_id=site, year=_year(rest) if rest else None,
                           first_author=first, title=title, titles=tuple(titles), journal=_journal(rest, title))


def _journal(rest: str, title: str | None) -> str | None:
    """The journal ``rest`` names after ``title`` (up to the next comma, or volume and pages), else None.

    Only the text after the title is read: the venue follows it, and the authors before it hold
    initials (``J. D.``) and the title may hold any word.
    """
    at = rest.find(title) if title else -1
    if at < 0 or not title:
        return None
    outside = rest[at + len(title):]
    match = _JOURNAL.search(outside)
    if match is None:
        return None
    tail = re.split(r"[,;(]|\b(?:vol|pp|no)\b\.?", outside[match.start():])[0]
    return _trim(tail) or match.group(0)

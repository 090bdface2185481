"""Natural keys of catalog records: slugs, arXiv ids, paper references.

Every loader derives the identity of what it writes through these helpers, so
re-importing the same dump finds the same rows (no duplicates).
"""

from __future__ import annotations

import functools
import re
import unicodedata

# Modern (1706.03762, 2501.01234v2) and legacy (math.GT/0309136, hep-th/9711200v3) ids.
_MODERN = r"\d{4}\.\d{4,5}"
_LEGACY = r"[a-z][a-z\-]*(?:\.[A-Za-z\-]+)?/\d{7}"
ARXIV_ID_RE = re.compile(rf"^(?P<id>{_MODERN}|{_LEGACY})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_URL_RE = re.compile(
    rf"arxiv\.org/(?:abs|pdf|html)/(?P<id>{_MODERN}|{_LEGACY})(?:v\d+)?(?:\.pdf)?",
    re.IGNORECASE)
_PWC_PAPER_RE = re.compile(r"paperswithcode\.com?/paper/(?P<slug>[^/?#\s]+)", re.IGNORECASE)
_SLUG_PATH_RE = re.compile(r"/(?:method|dataset|task|paper|sota)/(?P<slug>[^/?#\s]+)")
_NON_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    """Lower-case ASCII slug: ``"WMT2014 English-German"`` → ``"wmt2014-english-german"``.

    Accents are folded (``é`` → ``e``); other non-alphanumerics become ``-``.
    Returns ``""`` when nothing is left (callers treat that as a bad record).
    """
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return _NON_SLUG.sub("-", folded.lower()).strip("-")


def normalize_arxiv_id(value: str | None) -> str | None:
    """Strip whitespace, an ``arXiv:`` prefix and a ``vN`` suffix; None if not an arXiv id."""
    if not value:
        return None
    text = value.strip()
    if text.lower().startswith("arxiv:"):
        text = text[6:]
    match = ARXIV_ID_RE.match(text)
    return match.group("id") if match else None


@functools.lru_cache(maxsize=1 << 16)
def arxiv_id_from_url(url: str | None) -> str | None:
    """The arXiv id in an ``arxiv.org/abs|pdf`` URL (version stripped), else None.

    Cached: leaderboard rows name the same paper URLs over and over.
    """
    if not url:
        return None
    match = _ARXIV_URL_RE.search(url)
    return match.group("id") if match else None


def pwc_paper_slug(url: str | None) -> str | None:
    """The slug in a ``paperswithcode.com/paper/<slug>`` URL, else None."""
    if not url:
        return None
    match = _PWC_PAPER_RE.search(url)
    return match.group("slug").lower() if match else None


def slug_from_url(url: str | None) -> str | None:
    """The last path slug of a PwC ``/method/``, ``/dataset/``, ``/task/`` URL, else None."""
    if not url:
        return None
    match = _SLUG_PATH_RE.search(url)
    return match.group("slug").lower() if match else None


_CONF_TAIL = re.compile(r"\s+\d{1,2}$")


def conference_name(proceeding: str | None) -> str | None:
    """``"NeurIPS 2017 12"`` (dump: venue, year, month) → ``"NeurIPS 2017"``; None if empty."""
    if not proceeding or not proceeding.strip():
        return None
    return _CONF_TAIL.sub("", proceeding.strip())


def conference_year(name: str) -> int | None:
    """The four-digit year in a conference name, else None."""
    match = re.search(r"\b(19|20)\d{2}\b", name)
    return int(match.group(0)) if match else None

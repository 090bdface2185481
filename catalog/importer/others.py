"""Loaders for the non-dump sources: Markdown folders and arXiv OAI JSON-lines."""

from __future__ import annotations

import re
from email.utils import parsedate_to_datetime
from pathlib import Path

from catalog.importer import keys, limits
from catalog.importer.dumps import BadRecord, Record, Records, clip_items, iso_date, run, text
from catalog.importer.stats import SourceStats
from catalog.importer.writer import Writer

_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
_FIRST_LINE_HEADING = re.compile(r"\A\s*#{1,3}\s+(.+?)\s*$", re.MULTILINE)


def markdown_title(body: str) -> str | None:
    """Title of a Markdown paper: its first ``# `` heading, else a ``##``/``###``
    heading on the first non-empty line (PDF converters emit those); None otherwise."""
    match = _HEADING.search(body) or _FIRST_LINE_HEADING.match(body)
    return match.group(1).strip().rstrip(".").strip() or None if match else None


def markdown_files(folder: Path) -> list[tuple[str, Path]]:
    """``(arxiv_id, file)`` pairs of a Markdown folder, sorted by id.

    Accepted layouts: ``<id>.md`` directly in the folder, or a sub-folder
    ``<id>/`` holding ``<id>.md`` (preferred) or else the first ``<id>*.md``
    by name (e.g. ``2203.01017v2.from-pdf.md``). Legacy ids use ``_`` for ``/``
    in file names (``math.GT_0309136.md``).
    """
    found: dict[str, Path] = {}
    for entry in sorted(folder.iterdir()):
        name = entry.name.replace("_", "/")
        if entry.is_file() and entry.suffix == ".md":
            arxiv_id = keys.normalize_arxiv_id(name[:-3])
            if arxiv_id:
                found.setdefault(arxiv_id, entry)
        elif entry.is_dir():
            arxiv_id = keys.normalize_arxiv_id(name)
            if not arxiv_id:
                continue
            exact = entry / f"{entry.name}.md"
            candidates = [exact] if exact.is_file() else sorted(
                p for p in entry.glob(f"{entry.name}*.md") if p.is_file())
            if candidates:
                found.setdefault(arxiv_id, candidates[0])
    return sorted(found.items())


def load_markdown(writer: Writer, folder: Path, stats: SourceStats) -> None:
    """Store each Markdown file as its paper's full text (content version = sha256).

    A paper the catalog lacks is created as a stub titled by
    :func:`markdown_title` (else the arXiv id). Undecodable UTF-8 or a file
    larger than ``MAX_MARKDOWN_BYTES`` skips the file.
    """
    for arxiv_id, path in markdown_files(folder):
        stats.read += 1
        try:
            size = path.stat().st_size
        except OSError as exc:
            stats.skip(f"file {path.name}", f"unreadable ({type(exc).__name__})")
            continue
        if size > limits.MAX_MARKDOWN_BYTES:
            stats.skip(f"file {path.name}", f"{size} bytes, more than the bound of "
                                            f"{limits.MAX_MARKDOWN_BYTES}")
            continue
        try:
            # bytes, not read_text: newline translation would change the content version
            body = path.read_bytes().decode("utf-8")
        except (UnicodeDecodeError, OSError) as exc:
            stats.skip(f"file {path.name}", f"unreadable ({type(exc).__name__})")
            continue
        paper_id = writer.find_paper(arxiv_id)
        if paper_id is None:
            title = (markdown_title(body) or arxiv_id)[:limits.SHORT_TEXT]
            paper_id, _ = writer.upsert_paper({
                "arxiv_id": arxiv_id, "slug": keys.slugify(title), "title": title,
                "url_abs": f"https://arxiv.org/abs/{arxiv_id}"}, stub=True)
        stats.wrote(writer.upsert_markdown(paper_id, body))


def _oai_date(rec: Record) -> str | None:
    versions = rec.get("versions")
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        created = versions[0].get("created")
        if isinstance(created, str):
            try:
                return parsedate_to_datetime(created).date().isoformat()
            except (TypeError, ValueError):
                pass
    return iso_date(rec.get("update_date"))


def _oai_authors(rec: Record) -> list[str]:
    parsed = rec.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        names = []
        for item in parsed:
            if isinstance(item, list) and item and all(isinstance(p, str) for p in item):
                last, first = item[0], item[1] if len(item) > 1 else ""
                suffix = item[2] if len(item) > 2 else ""
                names.append(" ".join(p for p in (first, last, suffix) if p.strip()))
        if names:
            return names
    raw = rec.get("authors")
    if isinstance(raw, str):
        return [a.strip() for a in re.split(r",\s*|\s+and\s+", raw) if a.strip()]
    return []


def load_arxiv(writer: Writer, records: Records, stats: SourceStats) -> None:
    """arXiv OAI snapshot JSON-lines → external_metadata (source ``arxiv``).

    Fields: ``id`` (required), ``title`` (required; whitespace collapsed),
    ``authors``/``authors_parsed``, ``abstract``, ``doi`` (lower-cased),
    ``versions[0].created`` (RFC 2822 date → published; else ``update_date``).
    """
    def handle(rec: Record) -> bool:
        arxiv_id = keys.normalize_arxiv_id(text(rec, "id", required=True))
        if not arxiv_id:
            raise BadRecord("'id' is not an arXiv id")
        title = " ".join((text(rec, "title", required=True) or "").split())
        doi = text(rec, "doi")
        abstract = text(rec, "abstract")
        return writer.upsert_external({
            "arxiv_id": arxiv_id, "doi": doi.lower() if doi else None, "hf_id": arxiv_id,
            "title": title, "authors": clip_items("authors", _oai_authors(rec)),
            "abstract": " ".join(abstract.split()) if abstract else None,
            "published": _oai_date(rec)})
    run(records, stats, handle)

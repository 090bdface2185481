"""The ``content`` text of paper tools: compact Markdown carrying the facts of the typed projections.

MCP clients differ in what the model sees: some pass only the text blocks
(``structuredContent`` ignored), so the text must be semantically equivalent to
the projections (https://modelcontextprotocol.io/specification/2025-06-18/server/tools#structured-content):
every ID, arXiv ID, title, author, date, count, metric value, rank scope and the
pagination or continuation handle. Links that follow from an arXiv ID (its abs and
PDF pages) and slugs that follow from a name are not repeated. Built from the CLI's Markdown primitives
(:mod:`pwc.markdown`, :mod:`pwc.render`, :func:`pwc.leaderboard.metric_summary`),
missing values omitted rather than spelled out, so the text stays well under the
size of the projections' JSON (measured by ``bench/text_ratio.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from pwc.leaderboard import metric_summary, model_label, parameters_cell
from pwc.markdown import md_cell, md_table
from pwc.render import md_escape
from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue
from pwc_mcp_core.tools.projections.untrusted import framed, new_nonce, server_line

__all__ = [
    "as_list",
    "as_objects",
    "available_at",
    "count_of",
    "derived_slug",
    "evaluation_table",
    "evaluations_text",
    "facts",
    "join_lines",
    "labelled",
    "lineage_text",
    "next_page_line",
    "of_total",
    "one_line",
    "paper_info_text",
    "paper_list_text",
    "paper_summary_table",
    "public_paper_text",
    "read_paper_text",
    "references",
    "search_text",
    "shown_slug",
]


def as_list(value: JsonValue) -> list[JsonValue]:
    """``value`` when it is a JSON array, else an empty one (``value or []`` for projected fields)."""
    return value if isinstance(value, list) else []


def as_objects(value: JsonValue) -> list[JsonObject]:
    """The objects of a JSON array (a projected list of records); anything else is none."""
    return [item for item in as_list(value) if isinstance(item, dict)]


def facts(*parts: object) -> str:
    """The non-empty parts joined with ``; `` (one line of labelled facts)."""
    return "; ".join(str(part) for part in parts if part is not None and part is not False and part not in ("", []))


def labelled(label: str, value: object) -> str | None:
    """``label value`` when the value is present, else None."""
    return None if value in (None, "", []) else f"{label} {value}"


def next_page_line(next_page: int | None) -> str | None:
    """``Next page: N (pass page=N).`` or None on the last page."""
    return f"Next page: {next_page} (pass page={next_page})." if next_page else None


def derived_slug(name: object) -> str:
    """The slug a name would get (lowercase words joined by ``-``); a slug equal to it is not repeated."""
    return re.sub(r"[^a-z0-9]+", "-", str(name or "").casefold()).strip("-")


def shown_slug(item: JsonObject) -> str | None:
    """The item's slug when it says more than its name and ID (pass any of the three back)."""
    slug = item.get("slug")
    return str(slug) if slug and slug not in (item.get("id"), derived_slug(item.get("name"))) else None


def references(items: Iterable[JsonObject]) -> str:
    """Catalog references: ``Name (slug, id N); …`` (slug only when not derived from the name)."""
    out = []
    for ref in items:
        ident = f"id {ref['id']}" if ref.get("id") not in (None, ref.get("slug")) else None
        detail = ", ".join(p for p in (shown_slug(ref), ident) if p)
        out.append(f"{md_escape(ref.get('name'))} ({detail})" if detail else md_escape(ref.get("name")))
    return "; ".join(out)


def join_lines(lines: Iterable[str | None]) -> str:
    """The lines that are not None, newline-joined."""
    return "\n".join(line for line in lines if line is not None)


def one_line(value: object) -> str | None:
    """A free-text value on one line (CR dropped, newlines as spaces); None when missing."""
    return " ".join(str(value).replace("\r", "").split("\n")) if value not in (None, "") else None


# ---------------------------------------------------------------- paper lists


def _code(item: JsonObject) -> str:
    count = item.get("code_repository_count") or 0
    return f"{count} official" if item.get("has_official_implementation") else str(count)


def _arxiv_url(item: JsonObject) -> bool:
    arxiv = item.get("arxiv_id")
    return bool(arxiv) and item.get("url") in (f"https://arxiv.org/abs/{arxiv}", None)


def _arxiv_pdf(item: JsonObject) -> bool:
    arxiv = item.get("arxiv_id")
    return bool(arxiv) and item.get("pdf_url") in (f"https://arxiv.org/pdf/{arxiv}", None)


def paper_summary_table(items: list[JsonObject], *, weak: bool = False) -> list[str]:
    """The ``PaperSummary`` table: id, arXiv, title, authors, published, citations, code repositories
    (``N official`` when one is official) and a URL column only for URLs that are not the arXiv page;
    with ``weak``, a ``match`` column saying ``weak`` on the weak matches (dropped when there are none)."""
    urls = any(not _arxiv_url(item) and item.get("url") for item in items)
    headers = ["id", "arXiv", "title", "authors", "published", "citations", "code repos"] + (["url"] if urls else [])
    headers += ["match"] if weak else []
    rows = []
    for item in items:
        row = [md_cell(item.get("id")), md_cell(item.get("arxiv_id") if item.get("arxiv_id") != item.get("id") else ""),
               md_cell(item.get("title")), md_cell(", ".join(str(a) for a in as_list(item.get("authors")))),
               md_cell(item.get("published")), md_cell(item.get("citation_count")), _code(item)]
        if urls:
            row.append("" if _arxiv_url(item) else md_cell(item.get("url")))
        if weak:
            row.append("weak" if item.get("match") == "weak" else "")
        rows.append(row)
    return md_table(headers, rows, drop_empty=True, compact=True)


def of_total(shown: int, total: object, noun: str, plural: str | None = None, *, at_least: bool = False) -> str:
    """``3 of 10 papers`` when the total is known and larger than what is shown, else ``1 paper`` /
    ``3 papers``: a header states the total, not only the page. ``at_least``: the total is a
    lower bound (a count that stopped at its cap), ``3 of 2000+ papers``."""
    if isinstance(total, int) and not isinstance(total, bool) and total > shown:
        return f"{shown} of {total}{'+' if at_least else ''} {plural or noun + 's'}"
    return count_of(shown, noun, plural)


def count_of(value: object, noun: str, plural: str | None = None) -> str:
    """``1 paper`` / ``12 papers`` (digits as the structured view has them, so facts match)."""
    return f"{value} {noun if value == 1 else plural or noun + 's'}"


def paper_list_text(items: list[JsonObject], next_page: int | None, note: str | None = None,
                    total: int | None = None) -> str:
    """Text of a paper page (search, list, recent, trending, related); ``total`` is the catalog's count
    of matching papers."""
    head = f"{of_total(len(items), total, 'paper')}." + (f" {note}" if note else "")
    return join_lines([head, next_page_line(next_page), *(paper_summary_table(items) if items else [])])


def _entity_line(entity: JsonObject) -> str:
    """``Matched task: Named Entity Recognition — narrow with list_papers task=named-entity-recognition.``"""
    narrow = entity.get("filter")
    pairs = " ".join(f"{k}={v}" for k, v in narrow.items()) if isinstance(narrow, dict) else ""
    line = f"Matched {entity.get('type')}: {md_escape(entity.get('name'))}"
    return line + (f" — narrow with list_papers {pairs}." if pairs else ".")


def search_text(fields: JsonObject, total: int | None, *, abstract_chars: int | None = None) -> str:
    """Text of ``search_papers``: the count and, when nothing matched well, the note; each entity the
    query named with the ``list_papers`` filter that narrows to it; whether abstracts were cut; the next
    page; the table (weak matches marked when strong ones are on the page too); then the abstracts."""
    items = as_objects(fields.get("items"))
    note = fields.get("note")
    head = of_total(len(items), total, "paper", at_least=fields.get("total_capped") is True)
    lines: list[str | None] = [f"{head}." + (f" {note}" if note else "")]
    lines += [_entity_line(entity) for entity in as_objects(fields.get("matched_entities"))]
    cut = fields.get("abstracts_cut")
    if isinstance(cut, int) and cut:
        within = f" to {abstract_chars} characters" if abstract_chars else ""
        lines.append(f"Abstracts cut{within}, at a sentence end where one fits: {cut} of {len(items)} "
                     "(get_paper_info has each whole).")
    next_page = fields.get("next_page")
    lines.append(next_page_line(next_page if isinstance(next_page, int) else None))
    if items:
        lines += paper_summary_table(items, weak=not note)
    abstracts = [(item.get("arxiv_id") or item.get("id"), one_line(item.get("abstract"))) for item in items
                 if "abstract" in item]
    if abstracts:
        lines.append("Abstracts:")
        lines += [f"- {ref}: {text or '(none)'}" for ref, text in abstracts]
    return join_lines(lines)


# ---------------------------------------------------------------- evaluations


def _scope(rank: object, task: object) -> str:
    """``#2 in Image Classification``: a rank is a position within one task's leaderboard."""
    place = f"#{rank}" if rank is not None else ""
    where = md_escape(task) if task else ""
    return f"{place} in {where}" if place and where else place or where


def _rank(row: JsonObject) -> str:
    scopes = [s for s in as_objects(row.get("rank_scopes")) if s.get("rank") is not None or s.get("task_name")]
    if scopes:
        return "; ".join(_scope(s.get("rank"), s.get("task_name")) for s in scopes)
    return _scope(row.get("best_rank"), row.get("task"))


def _open(value: object) -> str:
    return "" if value is None else ("yes" if value else "no")


def _params(value: object) -> str:
    cell = parameters_cell(value)
    return "" if cell == "—" else cell


def _paper(row: JsonObject) -> str:
    ref = row.get("paper_arxiv_id")
    parts = [md_escape(row["paper_title"]) if row.get("paper_title") else None,
             f"arXiv {ref}" if ref else None, f"id {row['paper_id']}" if row.get("paper_id") else None]
    return ", ".join(p for p in parts if p)


def evaluation_table(rows: list[JsonObject], *, with_paper: bool, with_benchmark: bool) -> list[str]:
    """The ``Evaluation`` table: rank with its task scope, model, metrics (best first, the CLI's Scores
    cell), parameters, split, shots, protocol, open, extra data, the paper (leaderboards) or the
    benchmark (a paper's results), source and code links, updated, and the row id."""
    headers = ["rank (task)", "model", "metrics", "params", "split", "shots", "protocol", "open", "extra data"]
    headers += (["benchmark"] if with_benchmark else []) + (["paper", "published"] if with_paper else [])
    headers += ["source", "code", "HF model", "updated", "id"]
    table = []
    for row in rows:
        metrics = metric_summary(row)
        cells = [_rank(row), md_cell(model_label(row)), md_cell("" if metrics == "—" else metrics),
                 _params(row.get("num_parameters")),
                 md_cell(row.get("split")), md_cell(row.get("shots")), md_cell(row.get("evaluation_protocol")),
                 _open(row.get("is_open")), "yes" if row.get("uses_additional_data") else ""]
        cells += [md_cell(row.get("benchmark"))] if with_benchmark else []
        cells += [_paper(row), md_cell(row.get("paper_published"))] if with_paper else []
        cells += [md_cell(row.get("source_url")), md_cell(row.get("code_url")), md_cell(row.get("hf_model_url")),
                  md_cell(row.get("updated_at")), md_cell(row.get("id"))]
        table.append(cells)
    return md_table(headers, table, drop_empty=True, compact=True)


def evaluations_text(paper: str, count: int, page: int | None, next_page: int | None, rows: list[JsonObject]) -> str:
    """Text of ``get_paper_evaluations``: the paper once, then its rows (paper columns left out)."""
    head = f"# Evaluations of {(_paper(rows[0]) if rows else '') or md_escape(paper)}"
    lines = [head, f"{count_of(count, 'evaluation row')}; {len(rows)} on page {page}. Ranks are task-scoped.",
             next_page_line(next_page)]
    return join_lines([*lines, *(evaluation_table(rows, with_paper=False, with_benchmark=True) if rows else [])])


# ---------------------------------------------------------------- paper detail


def _repository(repo: JsonObject) -> str:
    found = repo.get("framework")
    framework = found if isinstance(found, str) else None
    extra = ", ".join(p for p in ("official" if repo.get("is_official") else None, framework) if p)
    return f"- {repo['url']}" + (f" ({extra})" if extra else "")


def _resource_lines(paper: JsonObject) -> list[str]:
    lines = []
    for key, label in (("project_pages", "Project pages"), ("hf_models", "HF models"),
                       ("hf_datasets", "HF datasets"), ("hf_spaces", "HF spaces")):
        if paper.get(key):
            lines.append(f"{label}: " + ", ".join(str(item) for item in as_list(paper[key])))
    return lines


def paper_info_text(paper: JsonObject, evaluation_count: int | None, evaluations: list[JsonObject] | None,
                    *, in_catalog: bool = True) -> str:
    """Text of ``get_paper_info``: identity and counts, authors, links, tasks, methods, abstract,
    repositories (official flag and framework) and, when requested, the evaluations. Outside the
    catalog (``in_catalog`` false) code facts are unknown and left out."""
    repos = as_objects(paper.get("repositories"))
    given = paper.get("code_repository_count")
    code = given if isinstance(given, int) else 0
    lines = [f"# {md_escape(paper.get('title'))}",
             facts(labelled("id", paper.get("id") if paper.get("id") != paper.get("arxiv_id") else None),
                   labelled("arXiv", paper.get("arxiv_id")),
                   labelled("published", paper.get("published")),
                   labelled("citations", paper.get("citation_count")),
                   in_catalog and "official code: " + ("yes" if paper.get("has_official_implementation") else "no"),
                   in_catalog and count_of(code, "code repository", "code repositories")),
             labelled("Authors:", ", ".join(str(a) for a in as_list(paper.get("authors")))),
             facts(labelled("URL:", None if _arxiv_url(paper) else paper.get("url")),
                   labelled("PDF:", None if _arxiv_pdf(paper) else paper.get("pdf_url"))) or None,
             labelled("Tasks:", references(as_objects(paper.get("tasks")))),
             labelled("Methods:", references(as_objects(paper.get("methods")))),
             *_resource_lines(paper)]
    if paper.get("abstract"):
        lines += ["## Abstract", str(paper["abstract"]).replace("\r", "").strip()]
    if repos:
        lines.append(f"## Repositories ({len(repos)} of {code})" if code > len(repos) else f"## Repositories ({code})")
        lines += [_repository(repo) for repo in repos]
    if evaluations is not None:
        lines.append(f"## Evaluations ({of_total(len(evaluations), evaluation_count, 'row')})")
        lines += evaluation_table(evaluations, with_paper=False, with_benchmark=True) if evaluations else ["None."]
    return join_lines(lines)


def public_paper_text(paper: JsonObject, note: str, links: list[JsonObject]) -> str:
    """Text of a paper outside the catalog: its public metadata, the note and the links to cite."""
    return join_lines([paper_info_text(paper, None, None, in_catalog=False), note, available_at(links)])


def available_at(links: list[JsonObject]) -> str | None:
    """``Available at: label: URL; …`` for the links to cite, or None."""
    cite = "; ".join(f"{link.get('label') or 'link'}: {link.get('url')}" for link in links if link.get("url"))
    return f"Available at: {cite}" if cite else None


# ---------------------------------------------------------------- lineage


def _lineage_item(item: JsonObject) -> str:
    ref = item.get("reference")
    ident = item.get("id")
    detail = ", ".join(p for p in (str(ref) if ref else None, f"id {ident}" if ident and ident != ref else None) if p)
    title = md_escape(item.get("title") or ref or "Unknown paper")
    return f"- {title}" + (f" ({detail})" if detail else "")


def lineage_text(fields: JsonObject) -> str:
    """Text of ``get_paper_lineage``: the paper, its predecessors and successors, and the coverage rule."""
    paper = fields["paper"]
    lines = [f"# Lineage of {_lineage_item(paper if isinstance(paper, dict) else {})[2:]}"]
    for key, name in (("predecessors", "Predecessors"), ("successors", "Successors")):
        items = as_objects(fields.get(key))
        lines.append(f"## {name} ({len(items)})")
        lines += [_lineage_item(item) for item in items] or ["- None recorded"]
    lines.append("Explicit catalog links only: an empty list does not mean none exist.")
    return join_lines(lines)


# ---------------------------------------------------------------- read_paper


def read_paper_text(result: JsonObject) -> str:
    """Text of ``read_paper``: the chunk framed as untrusted third-party text (:mod:`.untrusted`), then,
    outside the frame, where it sits and, while more remains, the ``next_cursor`` value with the call
    that continues (a text-only client can read it all)."""
    if result.get("in_catalog") is False:
        return _public_read_text(result)
    markdown = str(result.get("markdown") or "")
    nonce = new_nonce(markdown)
    offset = result.get("offset") or 0
    total = result.get("total_bytes")
    of_total = f" of {total:,}" if isinstance(total, int) else ""
    lines = [server_line(nonce, str(note))] if (note := result.get("note")) else []
    lines.append(framed(markdown, nonce))
    if not result.get("truncated"):
        size = f" ({total:,} bytes)" if isinstance(total, int) else ""
        lines.append(server_line(nonce, f"read_paper: end of paper{size}; this chunk started at byte {offset}"))
    else:
        paper = json.dumps(result.get("paper"), ensure_ascii=False)
        lines.append(server_line(nonce, f"read_paper: truncated; bytes {offset}-{result.get('next_offset')}{of_total}. "
                                        f"To continue, call read_paper with paper={paper} and "
                                        f"cursor=\"{result.get('next_cursor')}\""))
    return "\n".join(lines)


def _public_read_text(result: JsonObject) -> str:
    """``read_paper`` outside the catalog: the public metadata, the note and the links to cite."""
    found = result.get("public_metadata")
    meta = found if isinstance(found, dict) else {}
    authors = as_list(meta.get("authors"))
    identity = facts(labelled("arXiv", meta.get("arxiv_id")), labelled("DOI", meta.get("doi")),
                     labelled("published", meta.get("published")), labelled("source", meta.get("source")))
    return join_lines([f"# {md_escape(meta['title'])}" if meta.get("title") else None, identity or None,
                       labelled("Authors:", ", ".join(str(a) for a in authors)), one_line(meta.get("abstract")),
                       str(note) if (note := result.get("note")) else None, available_at(as_objects(result.get("available_at")))])

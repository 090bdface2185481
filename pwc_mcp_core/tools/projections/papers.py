"""Typed paper projections of CLI payloads (docs/tool-contract.md §3.2).

Each function takes a CLI ``data`` payload (already parsed JSON) and returns
plain dicts shaped like the ``outputSchema`` fragments in
:mod:`pwc_mcp_core.tools.output_schemas`. Upstream fields are read defensively:
a missing or mistyped field becomes ``None`` / ``[]`` / a documented default,
never an exception, so one odd record cannot fail a whole result.
"""

from __future__ import annotations

from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue
from pwc_mcp_core.tools.projections.leaderboards import absolute_url

__all__ = [
    "catalog_reference",
    "catalog_references",
    "lineage_result",
    "matched_entities",
    "paper_detail",
    "paper_items",
    "paper_summary",
    "payload_rows",
    "search_item",
    "text",
    "whole",
]


def text(value: object) -> str | None:
    """A non-empty value as a string, else None."""
    if value is None or value == "" or isinstance(value, dict | list):
        return None
    return str(value)


def whole(value: object) -> int | None:
    """An int that is not a bool, else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _strings(value: object) -> list[JsonValue]:
    if not isinstance(value, list):
        return []
    out: list[JsonValue] = []
    for item in value:
        if isinstance(item, str) and item:
            out.append(item)
        elif isinstance(item, dict) and text(item.get("url") or item.get("name")):
            out.append(str(item.get("url") or item.get("name")))
    return out


def payload_rows(payload: object) -> list[JsonObject]:
    """The rows of a list payload: a bare list, or ``results`` (else ``items``); non-objects skipped."""
    if isinstance(payload, dict):
        rows = payload.get("results")
        if not isinstance(rows, list):
            rows = payload.get("items")
        payload = rows if isinstance(rows, list) else []
    if not isinstance(payload, list):
        return []
    return [row for row in payload if isinstance(row, dict)]


def paper_summary(row: JsonObject) -> JsonObject:
    """``PaperSummary``: ``{id, arxiv_id, title, authors, published, citation_count, url,
    has_official_implementation, code_repository_count}``."""
    paper_id = text(row.get("id")) or text(row.get("arxiv_id")) or text(row.get("route_identifier")) or ""
    return {
        "id": paper_id,
        "arxiv_id": text(row.get("arxiv_id")),
        "title": text(row.get("title")) or "Untitled paper",
        "authors": _strings(row.get("authors")),
        "published": text(row.get("published") or row.get("date_published")),
        "citation_count": whole(row.get("citation_count")),
        "url": absolute_url(row.get("url_abs") or row.get("source_url")),
        "has_official_implementation": row.get("has_official_implementation") is True,
        "code_repository_count": whole(row.get("code_repository_count")) or 0,
    }


def search_item(row: JsonObject) -> JsonObject:
    """A ``search_papers`` row: ``PaperSummary`` plus ``match`` (strong/weak, when the catalog says)
    and ``abstract`` (when the row carries one: ``include_abstracts``)."""
    item = paper_summary(row)
    if row.get("match") in ("strong", "weak"):
        item["match"] = row["match"]
    if "abstract" in row:
        item["abstract"] = text(row.get("abstract"))
    return item


def matched_entities(payload: object) -> list[JsonValue]:
    """``{type, name, slug, filter}`` of each entity a search query named (``matched_entities``);
    ``filter`` is the ``list_papers`` arguments that narrow to it (tasks and methods), else None."""
    found = payload.get("matched_entities") if isinstance(payload, dict) else None
    out: list[JsonValue] = []
    for entity in found if isinstance(found, list) else []:
        if not isinstance(entity, dict) or text(entity.get("name")) is None:
            continue
        narrow = entity.get("filter")
        pairs: JsonObject = ({str(k): str(v) for k, v in narrow.items() if text(v)}
                             if isinstance(narrow, dict) else {})
        out.append({"type": text(entity.get("type")) or "entity", "name": str(entity["name"]),
                    "slug": text(entity.get("slug")), "filter": pairs or None})
    return out


def paper_items(payload: object) -> list[JsonObject]:
    """``PaperSummary`` for every row of a paper list payload (bare list or envelope)."""
    return [paper_summary(row) for row in payload_rows(payload)]


def catalog_reference(item: object) -> JsonObject | None:
    """The catalog reference ``{id, name, slug}`` of a task/method/area object, else None."""
    if not isinstance(item, dict):
        return None
    ref_id = text(item.get("id")) or text(item.get("slug"))
    if ref_id is None:
        return None
    return {"id": ref_id, "name": text(item.get("name")) or ref_id, "slug": text(item.get("slug"))}


def catalog_references(items: object) -> list[JsonValue]:
    """The catalog reference of every usable object in ``items``."""
    if not isinstance(items, list):
        return []
    refs: list[JsonValue] = [ref for ref in (catalog_reference(item) for item in items) if ref is not None]
    return refs


def _repositories(items: object) -> list[JsonObject]:
    out: list[JsonObject] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, str) and item:
            out.append({"url": item, "is_official": False, "framework": None})
        elif isinstance(item, dict) and isinstance(item.get("url"), str) and item["url"]:
            framework = item.get("framework")
            out.append({"url": item["url"], "is_official": item.get("is_official") is True,
                        "framework": framework if isinstance(framework, str) and framework else None})
    # Official first, otherwise stable (docs/tool-contract.md §3.3 #2).
    return sorted(out, key=lambda repo: not repo["is_official"])


def paper_detail(paper: JsonObject, *, include_resources: bool, repo_limit: int) -> JsonObject:
    """``PaperDetail`` with the hosted compaction of docs/tool-contract.md §3.3 #2: repositories official-first,
    only official ones unless ``include_resources``, each resource list cut to ``repo_limit``."""
    repositories = _repositories(paper.get("repositories"))
    if not include_resources:
        repositories = [repo for repo in repositories if repo["is_official"]]

    def resources(key: str) -> list[JsonValue]:
        return _strings(paper.get(key))[:repo_limit] if include_resources else []

    summary = paper_summary(paper)
    shown: list[JsonValue] = list(repositories[:repo_limit])
    return {
        "id": summary["id"],
        "arxiv_id": summary["arxiv_id"],
        "title": summary["title"],
        "abstract": text(paper.get("abstract")),
        "authors": summary["authors"],
        "published": summary["published"],
        "citation_count": summary["citation_count"],
        "url": summary["url"],
        "pdf_url": absolute_url(paper.get("url_pdf")),
        "has_official_implementation": summary["has_official_implementation"],
        "code_repository_count": summary["code_repository_count"],
        "tasks": catalog_references(paper.get("tasks")),
        "methods": catalog_references(paper.get("methods")),
        "repositories": shown,
        "project_pages": resources("project_pages"),
        "hf_models": resources("hf_models"),
        "hf_datasets": resources("hf_datasets"),
        "hf_spaces": resources("hf_spaces"),
    }


def _lineage_paper(item: object) -> JsonObject | None:
    if not isinstance(item, dict):
        return None
    return {
        "id": text(item.get("id")),
        "reference": text(item.get("reference") or item.get("arxiv_id")),
        "title": text(item.get("title")),
    }


LINEAGE_NOTE = (
    "Lists only relationships the catalog records explicitly; an empty list does not mean "
    "that no predecessors or successors exist."
)


def lineage_result(payload: object) -> JsonObject:
    """The ``lineage`` output schema's fields (``output_schemas.OUTPUT_SCHEMAS``; without envelope keys) of a
    ``paper lineage list`` payload.

    Raises:
        TypeError: the payload has no ``paper`` object (an unexpected catalog shape, §3.3 #9).
    """
    fields = payload if isinstance(payload, dict) else {}
    paper = _lineage_paper(fields.get("paper")) if isinstance(payload, dict) else None
    if paper is None:
        raise TypeError("lineage payload did not contain a paper object")

    def side(key: str) -> list[JsonValue]:
        items = fields.get(key)
        found: list[JsonValue] = [p for p in (_lineage_paper(i) for i in (items if isinstance(items, list) else [])) if p]
        return found

    return {
        "paper": paper,
        "predecessors": side("predecessors"),
        "successors": side("successors"),
        "coverage": "explicit_catalog_links_only",
        "coverage_note": LINEAGE_NOTE,
    }

"""``pwc paper info | evaluations | read | lineage list`` (``docs/cli-contract.md`` §2.2–§2.4, §2.9).

Quirk fixes (documented in ``pwc/QUIRKS.md``): evaluation paging stops on an
empty page; ``is_open: null`` shows as ``unknown``; a site-relative
``result_url`` (``/paper/…``) is made absolute in the Source cell.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TypedDict

from pwc.errors import ResponseError
from pwc.json_types import JsonObject, JsonValue, json_list, json_objects
from pwc.leaderboard import merge_evaluations, metric_summary, model_label
from pwc.markdown import md_table
from pwc.references import resolve_paper
from pwc.render import (
    Output,
    absolute_url,
    clean_cell,
    md_escape,
    open_cell,
    paper_url,
    result_list,
    result_total,
)
from pwc.transport import quote_ref

if TYPE_CHECKING:  # the transport (httpx) is imported only where a call is made
    from pwc.transport import Client

__all__ = [
    "EvaluationsPayload", "ReadPayload", "fetch_paper", "render_evaluations", "render_info", "render_lineage", "render_read",
    "run_evaluations", "run_info", "run_lineage", "run_read",
]

EVAL_ORDERING = "-benchmark_popularity"
MAX_EVAL_PAGES = 100  # bounds `paper info --include-evals` at 10,000 rows


class EvaluationsPayload(TypedDict):
    """``pwc paper evaluations --json`` data: one page of the paper's evaluations, merged."""

    count: int
    page: int
    next_page: JsonValue
    results: list[JsonObject]


class ReadPayload(TypedDict):
    """``pwc paper read --json`` data: the paper reference and its Markdown body."""

    paper: str
    markdown: str


def fetch_paper(client: Client, ref: str, *, include_resources: bool) -> JsonObject:
    """GET ``papers/<ref>``; raises ``ResponseError`` unless the body is an object."""
    paper = client.get_json(f"papers/{quote_ref(ref)}", {"include_resources": include_resources})
    if not isinstance(paper, dict):
        raise ResponseError("API returned an unexpected response shape")
    return paper


def _paper_id(paper: JsonObject) -> str:
    if not paper.get("id"):
        raise ResponseError("Paper response did not contain an ID")
    return str(paper["id"])


def run_info(args: argparse.Namespace, client: Client) -> JsonObject:
    """Paper object, plus ``evaluations: {count, results}`` (raw rows) with ``--include-evals`` (§2.2)."""
    ref = resolve_paper(args.paper, client)
    paper = fetch_paper(client, ref, include_resources=args.include_resources)
    if not args.include_evals:
        return paper
    paper_id = _paper_id(paper)
    rows: list[JsonValue] = []
    total: int | None = None
    for page in range(1, MAX_EVAL_PAGES + 1):
        payload = client.get_json("evaluations/", {"page": page, "page_size": 100,
                                                   "paper_id": paper_id, "ordering": EVAL_ORDERING})
        batch = result_list(payload)
        if page == 1:
            total = result_total(payload)
        rows.extend(batch)
        # Stop on an empty page (quirk fix), an unknown total, or when all rows are in.
        if not batch or total is None or len(rows) >= total:
            break
    return {**paper, "evaluations": {"count": total if total is not None else len(rows), "results": rows}}


def run_evaluations(args: argparse.Namespace, client: Client) -> EvaluationsPayload:
    """One page of the paper's evaluations, merged (§2.3, §3.4): ``{count, page, next_page, results}``."""
    ref = resolve_paper(args.paper, client)
    paper_id = _paper_id(fetch_paper(client, ref, include_resources=False))
    payload = client.get_json("evaluations/", {"page": args.page, "page_size": args.page_size,
                                               "paper_id": paper_id, "ordering": EVAL_ORDERING})
    rows = result_list(payload)
    total = result_total(payload)
    return {"count": total if total is not None else len(rows), "page": args.page,
            "next_page": payload.get("next_page") if isinstance(payload, dict) else None,
            "results": merge_evaluations(rows)}


def run_read(args: argparse.Namespace, client: Client) -> ReadPayload:
    """The paper's Markdown, unparsed: ``{"paper": <ref>, "markdown": <body>}`` (§2.4)."""
    ref = resolve_paper(args.paper, client)
    response = client.get_text(f"research/papers/{quote_ref(ref)}/read")
    return {"paper": ref, "markdown": response.text}


def run_lineage(args: argparse.Namespace, client: Client) -> JsonObject:
    """The raw lineage response ``{paper, predecessors, successors}`` (§2.9)."""
    ref = resolve_paper(args.paper, client)
    payload = client.get_json(f"research/papers/{quote_ref(ref)}/lineage")
    if not isinstance(payload, dict):
        raise ResponseError("API returned an unexpected response shape")
    return payload


# --- text renderers -------------------------------------------------------------------------


def _link_title(title: object) -> str:
    return str(title).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def evaluation_lines(rows: list[JsonObject]) -> list[str]:
    """The ``## Evaluations`` section (§2.3) as lines, starting with an empty line."""
    lines = ["", "## Evaluations", ""]
    if not rows:
        return [*lines, "No evaluations found."]
    table = []
    for row in rows:
        model = model_label(row)
        url = row.get("result_url") or row.get("source_url")
        source = (f"[source](<{absolute_url(str(url)).replace('>', '%3E').replace('|', '%7C')}>)"
                  if url else "—")
        cells = [md_escape(row.get("dataset_name")), md_escape(model), md_escape(metric_summary(row)),
                 md_escape(row.get("best_rank")), md_escape(row.get("task_name")), open_cell(row), source]
        table.append(cells)
    return lines + md_table(["Benchmark", "Model", "Scores", "Rank", "Task", "Open", "Source"], table,
                            ["---", "---", "---", "---:", "---", ":---:", "---"])


def _lineage_item(item: JsonObject) -> str:
    route = item.get("route_identifier")
    title = _link_title(item.get("title") or route or "Unknown paper")
    text = f"- [{title}]({paper_url(route)})" if route else f"- {title}"
    return text + (f" ({item['published']})" if item.get("published") else "")


def _info_fields(paper: JsonObject) -> list[tuple[str, JsonValue]]:
    authors = paper.get("authors")
    orgs = paper.get("organizations")
    return [
        ("id", paper.get("arxiv_id") or paper.get("id")),
        ("title", paper.get("title")),
        ("published", paper.get("published")),
        ("authors", ", ".join(map(str, authors)) if isinstance(authors, list) else authors),
        ("organizations", ", ".join(str(o.get("name") or o.get("slug") or "") for o in orgs
                                    if isinstance(o, dict)) if isinstance(orgs, list) else orgs),
        ("conference", paper.get("conference_name") or paper.get("conference")),
        ("citations", paper.get("citation_count")),
        ("official_implementation", "true" if paper.get("has_official_implementation") is True else "false"),
        ("code_repositories", paper.get("code_repository_count")),
        ("url", paper.get("url_abs") or paper.get("source_url")),
    ]


def _resource_lines(paper: JsonObject) -> list[str]:
    lines: list[str] = []
    for key, title in (("repositories", "Repositories"), ("project_pages", "Project pages")):
        entries = []
        for entry in json_list(paper.get(key)):
            url = entry.get("url") if isinstance(entry, dict) else entry
            if isinstance(url, str) and url:
                entries.append((not (isinstance(entry, dict) and entry.get("is_official") is True), url))
        if entries:
            entries.sort(key=lambda pair: pair[0])  # stable: official first
            lines += ["", f"## {title}", ""]
            lines += [f"- {url}" if unofficial else f"- **Official:** {url}" for unofficial, url in entries]
    artifacts = [f"- **{label}:** {url}" for key, label in
                 (("hf_models", "Model"), ("hf_datasets", "Dataset"), ("hf_spaces", "Space"))
                 for url in json_list(paper.get(key)) if isinstance(url, str) and url]
    if artifacts:
        lines += ["", "## Hugging Face artifacts", "", *artifacts]
    return lines


def render_info(payload: JsonObject, args: argparse.Namespace, out: Output) -> None:
    """Text of ``paper info`` (§2.2): fields, abstract, evaluations, lineage, resources."""
    lines = [f"{label}: {clean_cell(value)}" for label, value in _info_fields(payload)
             if value not in (None, "", [])]
    abstract = payload.get("abstract")
    if abstract:
        lines += ["", "## Abstract", "", str(abstract).replace("\r", "").strip()]
    if args.include_evals:
        lines += evaluation_lines(result_list(payload.get("evaluations") or {"results": []}))
    lines += ["", "## Paper lineage"]
    for key, name in (("predecessor_papers", "Predecessors"), ("successor_papers", "Successors")):
        items = json_objects(payload.get(key))
        lines += ["", f"### {name}", ""] + ([_lineage_item(i) for i in items] or ["- None"])
    if args.include_resources:
        lines += _resource_lines(payload)
    out.lines(lines)


def render_evaluations(payload: EvaluationsPayload, args: argparse.Namespace, out: Output) -> None:
    """Text of ``paper evaluations`` (§2.3): the Markdown evaluations table; no pagination hint."""
    out.lines(evaluation_lines(payload["results"]))


def render_read(payload: ReadPayload, args: argparse.Namespace, out: Output) -> None:
    """The Markdown body as received, plus a final newline when missing (§2.4)."""
    text = payload["markdown"]
    out.stdout.write(text + ("\n" if text and not text.endswith("\n") else ""))


def _reference_item(item: JsonValue) -> str:
    if not isinstance(item, dict):
        return "- None"
    ref = item.get("reference")
    title = _link_title(item.get("title") or ref or "Unknown paper")
    return f"- [{title}]({paper_url(ref)}) (`{ref}`)" if ref else f"- {title}"


def render_lineage(payload: JsonObject, args: argparse.Namespace, out: Output) -> None:
    """Text of ``paper lineage list`` (§2.9): Paper, Predecessors and Successors sections."""
    lines = ["# Paper lineage"]
    paper = payload.get("paper")
    sections: list[tuple[str, list[JsonValue]]] = [("Paper", [paper] if isinstance(paper, dict) else []),
                                                  ("Predecessors", json_list(payload.get("predecessors"))),
                                                  ("Successors", json_list(payload.get("successors")))]
    for name, values in sections:
        items = [item for item in values if isinstance(item, dict)]
        lines += ["", f"## {name}", ""] + ([_reference_item(i) for i in items] or ["- None"])
    out.lines(lines)

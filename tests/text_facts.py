"""The facts a tool result's text must carry, read from its ``structuredContent``.

A text-first MCP client hands the model only the ``content`` text blocks, so every
fact of the typed projections has to appear there: each item's ID and title,
each evaluation's model, metrics with values and task-scoped ranks, the
pagination page and the read_paper cursor. ``missing_facts`` returns the ones a
text lacks (empty: the text carries them all).
"""

from __future__ import annotations

import re
from typing import Any

from pwc.leaderboard import model_label, parameters_cell
from pwc_mcp_core.tools.examples import EXAMPLE_CALLS

__all__ = ["TOOL_CALLS", "expected_facts", "expected_pairs", "missing_facts", "plain"]

# The documented calls, with evaluations asked for where a tool can carry them, so the
# text-first checks also cover evaluation rows inside paper info.
TOOL_CALLS: dict[str, dict[str, Any]] = {
    **{name: dict(arguments) for name, arguments in EXAMPLE_CALLS.items()},
    "get_paper_info": {"paper": "1706.03762", "include_evaluations": True},
    "get_paper_evaluations": {"paper": "1706.03762", "limit": 2},
}


def plain(text: str) -> str:
    """Text with Markdown backslash escapes removed (``\\|`` → ``|``), for substring checks."""
    return re.sub(r"\\([\\|\[\]])", r"\1", text)


def _add(facts: list[str], *values: Any) -> None:
    facts.extend(str(value) for value in values if value not in (None, "", [], {}))


def _paper_facts(facts: list[str], paper: dict[str, Any]) -> None:
    _add(facts, paper.get("id"), paper.get("arxiv_id"), paper.get("title"), paper.get("published"),
         paper.get("citation_count"), *(paper.get("authors") or []))


def _evaluation_facts(facts: list[str], row: dict[str, Any]) -> None:
    _add(facts, row.get("id"), model_label(row), row.get("split"), row.get("shots"), row.get("evaluation_protocol"))
    for name, value in (row.get("metrics") or {}).items():
        facts.append(f"{name}: {value}")
    for scope in row.get("rank_scopes") or []:
        if scope.get("rank") is not None:
            facts.append(f"#{scope['rank']} in {scope.get('task_name')}" if scope.get("task_name")
                         else f"#{scope['rank']}")
    if row.get("num_parameters"):
        facts.append(parameters_cell(row["num_parameters"]))
    _add(facts, row.get("paper_title"), row.get("paper_arxiv_id"), row.get("benchmark"))


def _references(facts: list[str], refs: list[dict[str, Any]]) -> None:
    for ref in refs or []:
        _add(facts, ref.get("id"), ref.get("name"))


def expected_facts(tool: str, structured: dict[str, Any]) -> list[str]:
    """The strings the text of ``tool``'s result must contain, from its ``structuredContent``."""
    facts: list[str] = []
    if structured.get("next_page"):
        facts.append(f"page={structured['next_page']}")
    for item in structured.get("items") or []:
        if "title" in item:
            _paper_facts(facts, item)
        else:
            _add(facts, item.get("id"), item.get("name"), item.get("paper_count"), item.get("best_model"))
    for row in structured.get("evaluations") or []:
        _evaluation_facts(facts, row)
    if structured.get("evaluation_count") is not None:
        facts.append(str(structured["evaluation_count"]))
    paper = structured.get("paper")
    if isinstance(paper, dict) and tool != "get_paper_lineage":
        _paper_facts(facts, paper)
        _add(facts, paper.get("code_repository_count"), *(repo["url"] for repo in paper.get("repositories") or []))
        _references(facts, paper.get("tasks"))
        _references(facts, paper.get("methods"))
    if tool == "get_paper_lineage":
        for item in [structured["paper"], *structured["predecessors"], *structured["successors"]]:
            _add(facts, item.get("id"), item.get("reference"), item.get("title"))
    for key in ("task", "method", "benchmark"):
        entity = structured.get(key)
        if isinstance(entity, dict):
            _add(facts, entity.get("id"), entity.get("name"), entity.get("paper_count"),
                 entity.get("introduced_year"))
            _references(facts, entity.get("children"))
            _references(facts, entity.get("parents"))
            for bench in entity.get("benchmarks") or []:
                _add(facts, bench.get("id"), bench.get("name"), bench.get("paper_count"), bench.get("best_model"))
    if tool == "get_trends":
        entity = structured["entity"]
        _add(facts, entity.get("name"), f"ID {entity.get('id')}", structured["all_papers"])
        facts += [f"{row['year']}|{row['papers']:,}|{row['with_code']:,}|" for row in structured["years"]]
    if tool == "read_paper":
        _add(facts, structured.get("markdown"), structured.get("next_cursor"))
        if isinstance(structured.get("total_bytes"), int):
            facts.append(f"{structured['total_bytes']:,}")
    _add(facts, *(structured.get("notes") or []), structured.get("metric_note"))
    if set(structured) <= {"schema_version", "data", "data_note"}:  # the CLI payload is the projection
        data = structured.get("data")
        rows = data.get("results") if isinstance(data, dict) and isinstance(data.get("results"), list) else [data]
        for row in rows:
            if isinstance(row, dict):
                _add(facts, row.get("id"), row.get("name"), row.get("paper_count"))
    return facts


def expected_pairs(tool: str, structured: dict[str, Any]) -> list[tuple[str, str]]:
    """``(title or name, ID)`` pairs that must share one line of the text (a row, or a detail line)."""
    rows: list[Any] = list(structured.get("items") or [])
    if set(structured) <= {"schema_version", "data", "data_note"}:
        data = structured.get("data")
        rows = data.get("results") if isinstance(data, dict) and isinstance(data.get("results"), list) else []
    if tool == "get_paper_lineage":
        rows = [*structured["predecessors"], *structured["successors"]]
    pairs = []
    for row in rows:
        if isinstance(row, dict) and row.get("id") and (row.get("title") or row.get("name")):
            pairs.append((str(row.get("title") or row.get("name")), str(row["id"])))
    return pairs


def _token(value: str, line: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(value)}(?![\w-]|\.\d)", line) is not None


def missing_facts(tool: str, structured: dict[str, Any], text: str) -> list[str]:
    """The expected facts that ``text`` (the result's text blocks, joined) does not contain; an item's
    ID counts only as a whole token on a line that also names the item."""
    body = plain(text)
    missing = [fact for fact in expected_facts(tool, structured) if plain(fact) not in body and fact not in text]
    lines = body.splitlines()
    for title, ident in expected_pairs(tool, structured):
        if not any(plain(title) in line and _token(ident, line.replace(plain(title), " ")) for line in lines):
            missing.append(f"{title} with ID {ident} on one line")
    return missing

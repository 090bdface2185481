"""The four resource templates of `resources/templates/list` (docs/tool-contract.md §7; seed spec).

Reading them is `execution`'s job; this module only names them.
"""

from __future__ import annotations

from typing import Final

from pwc_mcp_core.protocol.json_types import JsonObject

__all__ = ["RESOURCE_TEMPLATES", "TEMPLATE_VARIABLES", "templates_list_result"]

RESOURCE_TEMPLATES: Final[tuple[dict[str, str], ...]] = (
    {
        "uriTemplate": "pwc://papers/{paper}",
        "name": "paper-info",
        "title": "Paper information",
        "description": "Compact JSON of get_paper_info for a paper reference (arXiv ID, catalog ID, URL or "
        "exact title): metadata, authors and official repositories.",
        "mimeType": "application/json",
    },
    {
        "uriTemplate": "pwc://papers/{paper}/markdown",
        "name": "paper-markdown",
        "title": "Paper Markdown",
        "description": "The paper's full Markdown when it fits one read_paper chunk (8 KiB by default); for a "
        "larger paper the first chunk and a last line naming the read_paper call that continues it. The paper "
        "text is framed as untrusted third-party content.",
        "mimeType": "text/markdown",
    },
    {
        "uriTemplate": "pwc://tasks/{task}",
        "name": "task",
        "title": "Research task",
        "description": "Compact JSON of get_task for a task slug or name, with up to 10 benchmarks.",
        "mimeType": "application/json",
    },
    {
        "uriTemplate": "pwc://benchmarks/{benchmark}",
        "name": "benchmark",
        "title": "Benchmark leaderboard",
        "description": "Compact JSON of get_benchmark for a benchmark (dataset) slug or name: the first 20 "
        "leaderboard rows.",
        "mimeType": "application/json",
    },
)

TEMPLATE_VARIABLES: Final = {t["uriTemplate"]: t["uriTemplate"].split("{")[1].split("}")[0]
                             for t in RESOURCE_TEMPLATES}
"""URI template → its one variable name (``paper``, ``task``, ``benchmark``), for completion."""


def templates_list_result() -> JsonObject:
    """The legacy-era ``resources/templates/list`` result (one page, no cursor)."""
    return {"resourceTemplates": [dict(t) for t in RESOURCE_TEMPLATES]}

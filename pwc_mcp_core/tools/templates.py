"""The five resource templates of `resources/templates/list` (docs/tool-contract.md §7; seed spec).

Reading them is `execution`'s job; this module only names them.
"""

from __future__ import annotations

from typing import Final

from pwc_mcp_core.protocol.json_types import JsonObject

__all__ = ["CITATION_MIME_TYPES", "RESOURCE_TEMPLATES", "TEMPLATE_ARGUMENTS", "TEMPLATE_VARIABLES",
           "templates_list_result"]

CITATION_MIME_TYPES: Final = {
    "bibtex": "application/x-bibtex",
    "ris": "application/x-research-info-systems",
    "csl-json": "application/vnd.citationstyles.csl+json",
}
"""``cite_papers`` format → the MIME type of the citation resource in that format."""

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
        "uriTemplate": "pwc://papers/{paper}/citation{?format}",
        "name": "paper-citation",
        "title": "Paper citation",
        "description": "One paper's citation, ready to paste, as cite_papers exports it: format=bibtex (the "
        "default, application/x-bibtex), ris (application/x-research-info-systems) or csl-json "
        "(application/vnd.citationstyles.csl+json). pwc://paper/{paper}/citation is read the same way.",
        "mimeType": "application/x-bibtex",
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

TEMPLATE_ARGUMENTS: Final = {t["uriTemplate"]: tuple(name.strip("?") for part in t["uriTemplate"].split("{")[1:]
                                                     for name in part.split("}")[0].split(","))
                             for t in RESOURCE_TEMPLATES}
"""URI template → its variable names, path variable first (``("paper", "format")`` for the citation)."""
TEMPLATE_VARIABLES: Final = {uri: names[0] for uri, names in TEMPLATE_ARGUMENTS.items()}
"""URI template → its path variable name (``paper``, ``task``, ``benchmark``)."""


def templates_list_result() -> JsonObject:
    """The legacy-era ``resources/templates/list`` result (one page, no cursor)."""
    return {"resourceTemplates": [dict(t) for t in RESOURCE_TEMPLATES]}

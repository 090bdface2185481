"""The hand-written half of the tool catalogue: names, titles, descriptions and MCP-specific overrides.

Parameters themselves are generated from the ``pwc`` parser in
:mod:`pwc_mcp_core.tools.registry`; this table only says what the parser cannot:
which command each tool runs (``docs/requirements.md`` "Public contract"),
the agent-facing prose, the hosted caps, the structured ``get_benchmark``
parameters (docs/tool-contract.md §3.3 #20) and the MCP-only parameters
(``read_paper.cursor``, ``get_paper_info.repo_limit``, ``get_task.benchmark_limit``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pwc_mcp_core.protocol.json_types import JsonObject

__all__ = ["BENCHMARK_PAGE", "DEFAULT_DESCRIPTIONS", "LIMIT_CAP", "PARAM_RENAMES", "TOOL_DEFS", "ToolDef"]

# Hosted cap on list sizes (seed: "List tools return at most 25 rows").
LIMIT_CAP = 25

# CLI dest → MCP parameter (seed README; docs/tool-contract.md §3.1). `page_size` → `limit`
# applies only where the command has no `--limit` of its own.
PARAM_RENAMES: dict[str, str] = {
    "start_date": "published_after",
    "end_date": "published_before",
    "author": "authors",
    "order_dir": "order_direction",
    "min_eval_count": "minimum_evaluations",
    "include_evals": "include_evaluations",
    # `pwc benchmark --name` metric selectors (docs/tool-contract.md §3.3 #20 names).
    "min": "minimum_metrics",
    "max": "maximum_metrics",
    "sort": "sort_metric",
}
# Descriptions for parameters whose CLI flag has no help text.
DEFAULT_DESCRIPTIONS: dict[str, str] = {
    "page": "Result page (starts at 1).",
    "order_by": "Sort field.",
    "order_direction": "Sort direction: asc or desc.",
    "search": "Text search within the listing.",
}
# MCP-side leaderboard paging when `pwc benchmark --name` has no `--page` (seed: leaderboards paginate).
BENCHMARK_PAGE: JsonObject = {"type": "integer", "minimum": 1, "maximum": 100, "default": 1,
                  "description": "Leaderboard page (1-100, default 1)."}


@dataclass(frozen=True)
class ToolDef:
    """One tool's hand-written facts; everything else comes from the parser.

    Attributes:
        name: the MCP tool name (seed list, exact).
        command: the ``pwc.queries.RESEARCH_COMMANDS`` entry it runs.
        title, description: agent-facing prose.
        output: key into ``output_schemas.OUTPUT_SCHEMAS``.
        entity: the MCP name of the command's ``--name`` (detail tools), else None.
        overrides: MCP parameter → JSON Schema keywords merged over the generated schema.
        extras: MCP-only parameters (no CLI dest) → schema.
        forced: CLI dests always sent with this value, whatever the arguments.
    """

    name: str
    command: tuple[str, ...]
    title: str
    description: str
    output: str
    entity: str | None = None
    overrides: dict[str, JsonObject] = field(default_factory=dict)
    extras: dict[str, JsonObject] = field(default_factory=dict)
    forced: JsonObject = field(default_factory=dict)


_PAPER: JsonObject = {"description": "Paper reference: arXiv ID (1706.03762), numeric catalog ID, arXiv / Hugging Face / "
                         "Papers With Code URL, or exact title.", "minLength": 1, "maxLength": 500}
_DATE: JsonObject = {"description": "Publication date bound, YYYY-MM-DD (inclusive).", "maxLength": 10}


TOOL_DEFS: tuple[ToolDef, ...] = (
    ToolDef(
        "search_papers", ("search",), "Search papers",
        "Search the Papers With Code catalog for papers by topic, title, author or arXiv ID. Returns ranked "
        "paper summaries (id, title, authors, date, citations, official-code flag), each a strong or weak match, "
        "with next_page and the task or method the query names (narrow with list_papers task=/method=). Default "
        "mode 'hybrid' mixes keyword and semantic relevance; use 'keyword' for exact words, 'semantic' for "
        "concepts.",
        "search_page",
        overrides={"query": {"description": "Search text: topic, title, author or arXiv ID."},
                   "published_after": _DATE, "published_before": _DATE},
    ),
    ToolDef(
        "get_paper_info", ("paper", "info"), "Get paper details",
        "Get one paper's details: abstract, authors, date, citations, tasks, methods and code repositories "
        "(official first, at most repo_limit). Set include_resources for all repositories, project pages and "
        "Hugging Face artifacts, include_evaluations for its benchmark results. A paper the catalog does not "
        "hold returns public metadata with in_catalog=false and available_at links to cite.",
        "paper_info",
        overrides={"paper": _PAPER},
        extras={"repo_limit": {"type": "integer", "minimum": 1, "maximum": 10, "default": 5,
                               "description": "Maximum repositories (and entries per resource list) returned."}},
        forced={"include_resources": True},
    ),
    ToolDef(
        "get_paper_evaluations", ("paper", "evaluations"), "Get a paper's benchmark results",
        "List the benchmark results a paper reports, merged per model/setting with task-scoped ranks, metrics, "
        "split, shots and source. Paginated (page, limit). Use get_benchmark to see a whole leaderboard.",
        "evaluation_page",
        overrides={"paper": _PAPER},
    ),
    ToolDef(
        "read_paper", ("paper", "read"), "Read a paper's full text",
        "Read a paper's full text as Markdown, one chunk per call (8 KiB by default, at most 64 KiB). When "
        "truncated is true, call again with the same paper and cursor=next_cursor to continue; omit cursor to "
        "start from the beginning. Use get_paper_info first for metadata and the abstract.",
        "read_paper",
        overrides={"paper": _PAPER},
        extras={"cursor": {"type": ["string", "null"], "maxLength": 2048,
                           "description": "next_cursor from the previous read_paper result; omit to start."}},
    ),
    ToolDef(
        "list_papers", ("paper", "list"), "List papers with filters",
        "List catalog papers filtered by task, method, conference, framework, organization, authors, text and "
        "publication dates, ordered by trending, date or citations. Filters are exact names, slugs or IDs and "
        "are confirmed by the catalog (never silently ignored). Use search_papers for relevance ranking.",
        "paper_page",
        overrides={"authors": {"maxItems": 10, "description": "Author names, IDs or @hf_usernames (ANDed)."},
                   "published_after": _DATE, "published_before": _DATE},
    ),
    ToolDef(
        "list_recent_papers", ("paper", "recent"), "List recent papers",
        "List the most recently added catalog papers, newest first. No filters; use list_papers for filtered "
        "lists.",
        "paper_page",
    ),
    ToolDef(
        "list_trending_papers", ("paper", "trending"), "List trending papers",
        "List papers currently trending in the catalog (by recent attention velocity), limited to papers "
        "published within max_age_days.",
        "paper_page",
    ),
    ToolDef(
        "get_related_papers", ("paper", "related"), "Get related papers",
        "List papers related to a given paper (similar content). For a paper the catalog does not hold, "
        "searches the catalog for its public title and marks the result in_catalog=false.",
        "related_page",
        overrides={"paper": _PAPER},
    ),
    ToolDef(
        "get_paper_lineage", ("paper", "lineage", "list"), "Get paper lineage",
        "List a paper's predecessors and successors as explicitly recorded in the catalog. Coverage is "
        "explicit links only: an empty list does not prove none exist.",
        "lineage",
        overrides={"paper": _PAPER},
    ),
    ToolDef(
        "get_task", ("task",), "Get a research task",
        "Get a research task (e.g. image-classification): description, area, parent and child tasks, paper "
        "count and its top benchmarks by recent activity. Use list_tasks to find task slugs and get_benchmark "
        "for a leaderboard.",
        "task", entity="task",
        extras={"benchmark_limit": {"type": "integer", "minimum": 1, "maximum": 10, "default": 10,
                                    "description": "Maximum benchmarks returned."}},
    ),
    ToolDef(
        "list_tasks", ("task", "list"), "List research tasks",
        "List research tasks with paper, benchmark and evaluation counts, filtered by text, area or level, or "
        "grouped by area (group_by_area). Returns the catalog payload in data.",
        "query",
    ),
    ToolDef(
        "get_method", ("method",), "Get a method",
        "Get a machine-learning method (e.g. Transformer, Dropout): full name, description, area, year "
        "introduced, source paper and paper count.",
        "method", entity="method",
    ),
    ToolDef(
        "list_methods", ("method", "list"), "List methods",
        "List machine-learning methods filtered by text, area or year introduced, with paper counts.",
        "query",
    ),
    ToolDef(
        "get_conference", ("conference",), "Get a conference",
        "Get one conference edition: year, dates, venue, tier, paper count and links.",
        "query", entity="conference",
    ),
    ToolDef(
        "list_conferences", ("conference", "list"), "List conferences",
        "List conferences in the catalog with year, paper count and location; optionally one year only.",
        "query",
    ),
    ToolDef(
        "get_organization", ("organization",), "Get an organization",
        "Get a research organization (lab or company): paper count, trending rank, years active and links.",
        "query", entity="organization",
    ),
    ToolDef(
        "list_organizations", ("organization", "list"), "List organizations",
        "List research organizations with paper counts and trending rank; featured_only narrows the list.",
        "query",
    ),
    ToolDef(
        "get_framework", ("framework",), "Get a framework",
        "Get an ML framework or library: domain, category, platforms, when to use it, links and paper count.",
        "query", entity="framework",
    ),
    ToolDef(
        "list_frameworks", ("framework", "list"), "List frameworks",
        "List ML frameworks and libraries, filtered by domain, category or platform.",
        "query",
    ),
    ToolDef(
        "get_benchmark", ("benchmark",), "Get a benchmark leaderboard",
        "Get a benchmark's leaderboard: merged model rows with metrics, task-scoped ranks, split, shots, "
        "openness, parameter count and source, plus metric_directions (higher/lower/unknown). Filter with "
        "require_metrics, minimum_metrics/maximum_metrics, max_parameters, is_open; order with sort_metric or "
        "pareto. A metric the leaderboard lacks returns the unfiltered leaderboard with a metric_note listing "
        "the available metrics. Paginated (page, limit).",
        "benchmark", entity="benchmark",
        overrides={
            "is_open": {"description": "true: open models only; false: closed only; null: all."},
            "max_parameters": {"type": "string", "minLength": 1, "maxLength": 32,
                               "description": "Inclusive parameter-count bound: an integer or 500M, 1.5B, 3B."},
            "require_metrics": {"type": "array", "minItems": 1, "maxItems": 20,
                                "items": {"type": "string", "minLength": 1, "maxLength": 200},
                                "description": "Keep only rows reporting every one of these metrics."},
            "minimum_metrics": {"type": "object", "maxProperties": 20,
                                "propertyNames": {"minLength": 1, "maxLength": 200},
                                "additionalProperties": {"type": "number"},
                                "description": "Inclusive lower bounds, e.g. {\"Accuracy\": 80}."},
            "maximum_metrics": {"type": "object", "maxProperties": 20,
                                "propertyNames": {"minLength": 1, "maxLength": 200},
                                "additionalProperties": {"type": "number"},
                                "description": "Inclusive upper bounds, e.g. {\"Latency\": 10}."},
            "sort_metric": {"type": "string", "minLength": 1, "maxLength": 200,
                            "description": "METRIC or METRIC:asc / METRIC:desc (default desc)."},
            "pareto": {"type": "array", "minItems": 2, "maxItems": 10,
                       "items": {"type": "string", "maxLength": 200, "pattern": "^.+:(higher|lower)$"},
                       "description": "Pareto front objectives, each METRIC:higher or METRIC:lower."},
        },
    ),
    ToolDef(
        "list_benchmarks", ("benchmark", "list"), "List benchmarks",
        "List benchmarks (datasets with leaderboards): by task (trending for that task), by text, or grouped "
        "by area (group_by_area / area). Returns benchmark summaries in items; pass a slug to get_benchmark. "
        "Incompatible combinations fall back and explain in notes instead of failing.",
        "benchmark_page",
    ),
    ToolDef(
        "get_sota_history", ("benchmark", "history"), "Get a benchmark's state of the art over time",
        "Who moved the state of the art on a benchmark, when, and by how much: the best-so-far series of "
        "one metric (default the primary one) in its direction, each step with date, value, model, paper, "
        "code link and gain, plus the span and how long the best has held. Also returns the chart as a PNG "
        "image. An unknown metric names the board's metrics.",
        "sota_history", entity="benchmark",
        overrides={"metric": {"maxLength": 200}, "task": {"maxLength": 200}},
    ),
    ToolDef(
        "get_trends", ("trends",), "Get papers-per-year trends",
        "How research on one task, method or benchmark grew: papers per year, how many have code and the "
        "share. Give exactly one of task, method, benchmark (exact name, slug or ID). Default: the last 10 "
        "years of its papers; from_year/to_year pick up to 30. Years without papers are 0. Also returns a bar "
        "chart as a PNG image.",
        "trends",
        overrides={"task": {"maxLength": 200}, "method": {"maxLength": 200}, "benchmark": {"maxLength": 200}},
    ),
    ToolDef(
        "find_in_paper", ("paper", "find"), "Find passages in a paper",
        "Find where one paper's full text discusses something: its best-matching paragraphs for a query "
        "(stemmed words, plus the catalog's other names for a method or task), each with section, byte offset "
        "and a cursor; pass that cursor to read_paper to read on from there. No match is an empty list.",
        "find_in_paper",
        overrides={"paper": _PAPER, "query": {"description": "Words or a phrase to find in the paper."},
                   "limit": {"description": "Passages (1-20, default 5)."}},
    ),
    ToolDef(
        "cite_papers", ("paper", "cite"), "Cite papers",
        "Export citations for papers you already identified (arXiv ID or URL, catalog ID, DOI, exact title): "
        "BibTeX (default), RIS or CSL-JSON, up to 25 per call. The text is the citation, ready to paste; each "
        "item has a status, and an unresolved reference is reported in place. To check free-text references, "
        "use verify_references.",
        "citations",
        overrides={"papers": {"type": "array", "minItems": 1, "maxItems": 25,
                              "items": {"type": "string", "minLength": 1, "maxLength": 500},
                              "description": "Paper references."}},
    ),
    ToolDef(
        "verify_references", ("paper", "verify"), "Verify references",
        "Check up to 25 free-text references (as written in a bibliography, e.g. 'Vaswani et al. (2017). "
        "Attention is all you need. NeurIPS', an arXiv ID or URL, or a title) against the catalog. Each gets "
        "a status: verified (with the paper and evidence: title similarity, year, first author), ambiguous "
        "(candidates and how they differ), not_found, or lookup_failed (catalog unavailable; retry). Then use "
        "cite_papers on the verified ids.",
        "verification",
        overrides={"references": {"type": "array", "minItems": 1, "maxItems": 25,
                                  "items": {"type": "string", "minLength": 1, "maxLength": 1000},
                                  "description": "References, one per item."}},
    ),
)

"""``outputSchema`` of every tool: JSON Schema 2020-12 for the typed projections of docs/tool-contract.md §3.2.

A tool with typed projections answers ``{"schema_version": "v1", ...projections}``; the
tools whose result is the CLI payload (and ``cite_papers``, ``verify_references``,
``get_sota_history``, which keep what their projections leave out) add it as ``data``,
which stays open. Paper tools may add the public-metadata fallback keys (``in_catalog``,
``note``, ``available_at``) of the seed README.

``OUTPUT_SCHEMAS`` are strict: every object forbids unknown keys and requires every key
it always carries, so a projection cannot drift silently (the tests validate every result
against them). ``tools/list`` publishes :func:`published` of each: the same envelope with
its keys' types, whose nested objects name their keys and keep their shape (objects, arrays
of objects) but not the types of scalar values, which every value shows itself; without
``required`` and ``additionalProperties: false`` below the envelope (every key of a
projection is always present, null when unknown), and without ``$schema`` (2020-12 is MCP's
default dialect, and these schemas mean the same under draft-07). Whatever validates
against the strict schema validates against the published one, at under half the bytes
(BENCHMARKS.md "Text size").
"""

from __future__ import annotations

from typing import Final

from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue
from pwc_mcp_core.tools.reading import READ_PAPER_OUTPUT_SCHEMA

__all__ = ["DIALECT", "OUTPUT_SCHEMAS", "published"]

DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

_STR: JsonObject = {"type": "string"}
_OSTR: JsonObject = {"type": ["string", "null"]}
_OINT: JsonObject = {"type": ["integer", "null"]}
_OBOOL: JsonObject = {"type": ["boolean", "null"]}
_STRS: JsonObject = {"type": "array", "items": _STR}
_DATA: JsonObject = {}  # the CLI's JSON payload; null (with data_note) only if it did not fit


def _obj(properties: JsonObject, *, optional: tuple[str, ...] = ()) -> JsonObject:
    required: list[JsonValue] = [name for name in properties if name not in optional]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_REF: JsonObject = _obj({"id": _STR, "name": _STR, "slug": _OSTR})
_METRICS: JsonObject = {"type": "object", "additionalProperties": {"type": ["number", "string"]}}

_SUMMARY_FIELDS: JsonObject = {
    "id": _STR, "arxiv_id": _OSTR, "title": _STR, "authors": _STRS, "published": _OSTR,
    "citation_count": _OINT, "url": _OSTR, "has_official_implementation": {"type": "boolean"},
    "code_repository_count": {"type": "integer"},
}
PAPER_SUMMARY: JsonObject = _obj(_SUMMARY_FIELDS)

PAPER_DETAIL: JsonObject = _obj({
    "id": _STR, "arxiv_id": _OSTR, "title": _STR, "abstract": _OSTR, "authors": _STRS,
    "published": _OSTR, "citation_count": _OINT, "url": _OSTR, "pdf_url": _OSTR,
    "has_official_implementation": {"type": "boolean"}, "code_repository_count": {"type": "integer"},
    "tasks": {"type": "array", "items": _REF}, "methods": {"type": "array", "items": _REF},
    "repositories": {"type": "array", "items": _obj({"url": _STR, "is_official": {"type": "boolean"},
                                                      "framework": _OSTR})},
    "project_pages": _STRS, "hf_models": _STRS, "hf_datasets": _STRS, "hf_spaces": _STRS,
})

RANK_SCOPE: JsonObject = _obj({"task_id": _OSTR, "task_name": _OSTR, "task_slug": _OSTR, "rank": _OINT})

EVALUATION: JsonObject = _obj({
    "id": _OSTR, "model_name": _STR, "harness": _OSTR, "metrics": _METRICS, "best_metric": _OSTR,
    "best_rank": _OINT, "task": _OSTR, "benchmark": _OSTR, "paper_id": _OSTR, "paper_title": _OSTR,
    "paper_arxiv_id": _OSTR, "paper_published": _OSTR, "rank_scopes": {"type": "array", "items": RANK_SCOPE},
    "is_open": _OBOOL, "num_parameters": _OINT, "split": _OSTR, "shots": _OINT,
    "evaluation_protocol": _OSTR, "source_url": _OSTR, "code_url": _OSTR, "hf_model_url": _OSTR,
    "updated_at": _OSTR, "uses_additional_data": _OBOOL,
})

PAPER_EVALUATION: JsonObject = _obj({
    "id": _OSTR, "benchmark": _OSTR, "task": _OSTR, "model_name": _STR, "harness": _OSTR,
    "metrics": _METRICS, "best_metric": _OSTR, "best_rank": _OINT, "is_open": {"type": "boolean"},
    "num_parameters": _OINT, "source_url": _OSTR,
})

BENCHMARK_SUMMARY: JsonObject = _obj({
    "id": _OSTR, "name": _STR, "slug": _OSTR, "full_name": _OSTR, "description": _OSTR, "split": _OSTR,
    "hf_url": _OSTR, "paper_count": _OINT, "best_model": _OSTR,
})

TASK_DETAIL: JsonObject = _obj({
    "id": _OSTR, "name": _STR, "slug": _OSTR, "description": _OSTR, "paper_count": _OINT,
    "area": {"anyOf": [_obj({"id": _OSTR, "name": _OSTR}), {"type": "null"}]},
    "parents": {"type": "array", "items": _REF}, "children": {"type": "array", "items": _REF},
    "benchmarks": {"type": "array", "items": BENCHMARK_SUMMARY}, "benchmark_count": _OINT,
})

METHOD_DETAIL: JsonObject = _obj({
    "id": _OSTR, "name": _STR, "slug": _OSTR, "full_name": _OSTR, "description": _OSTR, "area": _OSTR,
    "introduced_year": _OINT, "source_paper_id": _OSTR, "source_url": _OSTR, "source_title": _OSTR,
    "paper_count": _OINT,
})

LINEAGE_PAPER: JsonObject = _obj({"id": _OSTR, "reference": _OSTR, "title": _OSTR})

# Seed README: a paper the catalog does not hold is answered from public metadata.
_PUBLIC: JsonObject = {
    "in_catalog": {"type": "boolean"},
    "note": _STR,
    "available_at": {"type": "array", "items": {"type": "object", "properties": {"label": _STR, "url": _STR},
                                                  "required": ["url"]}},
}
_PUBLIC_KEYS = tuple(_PUBLIC)


def _envelope(properties: JsonObject, *, optional: tuple[str, ...] = ()) -> JsonObject:
    """A typed result: ``schema_version`` and the projections."""
    schema = _obj({"schema_version": {"const": "v1"}, **properties}, optional=optional)
    schema["$schema"] = DIALECT
    return schema


def _with_data(properties: JsonObject, *, optional: tuple[str, ...] = ()) -> JsonObject:
    """A result that carries the CLI payload as ``data`` (``data_note`` when it was dropped to fit)."""
    return _envelope({**properties, "data": _DATA, "data_note": _STR}, optional=optional + ("data_note",))


def published(schema: JsonValue, *, nested: bool = False) -> JsonValue:
    """The ``outputSchema`` ``tools/list`` publishes for the strict ``schema`` (module docstring):
    the envelope's keys with their types; below it, every object's keys by name, their shapes
    (objects and arrays) but not the types of their scalar values; no ``required`` and no
    ``additionalProperties: false`` below the envelope; no ``$schema``."""
    if isinstance(schema, list):
        return [published(item, nested=True) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: JsonObject = {}
    for key, value in schema.items():
        if key == "$schema" or (nested and (key == "required" or (key == "additionalProperties" and value is False))):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _field(sub, nested=nested) for name, sub in value.items()}
        elif key == "items" and nested and not _has_shape(value):
            continue  # an array of scalars: "type": "array" says enough below the envelope
        else:
            out[key] = published(value, nested=True)
    return out


def _has_shape(schema: JsonValue) -> bool:
    """Whether ``schema`` describes an object's keys or an array's items (not a bare scalar)."""
    return isinstance(schema, dict) and ("properties" in schema or "items" in schema)


def _field(schema: JsonValue, *, nested: bool) -> JsonValue:
    """One property: the envelope's keep their types; nested scalars are named only (``{}``)."""
    if nested and not _has_shape(schema):
        return {}
    return published(schema, nested=True)

# cite_papers / verify_references: one item per reference, in order (pwc.commands.papers_cite).
_ITEM: JsonObject = {"type": "object", "required": ["reference", "status"],
                     "properties": {"reference": _STR, "status": _STR}}

# ``total``: the catalog's count of the whole list, null when it states none.
_PAGE: JsonObject = {"items": {"type": "array", "items": PAPER_SUMMARY}, "next_page": _OINT, "total": _OINT}

# search_papers: a PaperSummary plus its match strength and, on request, its cut abstract.
_SEARCH_ITEM: JsonObject = _obj({**_SUMMARY_FIELDS, "match": {"enum": ["strong", "weak"]}, "abstract": _OSTR},
                                optional=("match", "abstract"))
_SEARCH: JsonObject = {
    "items": {"type": "array", "items": _SEARCH_ITEM}, "next_page": _OINT, "total": _OINT, "strong_count": _OINT,
    "matched_entities": {"type": "array", "items": _obj({
        "type": _STR, "name": _STR, "slug": _OSTR,
        "filter": {"type": ["object", "null"], "additionalProperties": _STR}})},
    "note": _STR, "abstracts_cut": {"type": "integer"}, "total_capped": {"const": True},
}

OUTPUT_SCHEMAS: dict[str, JsonObject] = {
    "paper_page": _envelope(_PAGE),
    "search_page": _envelope(_SEARCH, optional=("note", "abstracts_cut", "total_capped")),
    "related_page": _envelope({**_PAGE, **_PUBLIC}, optional=("total", *_PUBLIC_KEYS)),
    "paper_info": _envelope({
        "paper": PAPER_DETAIL, "evaluation_count": _OINT,
        "evaluations": {"type": ["array", "null"], "items": PAPER_EVALUATION}, **_PUBLIC,
    }, optional=_PUBLIC_KEYS),
    "evaluation_page": _envelope({
        "paper": _STR, "evaluation_count": _OINT, "page": {"type": "integer"}, "next_page": _OINT,
        "evaluations": {"type": "array", "items": EVALUATION},
    }),
    "lineage": _envelope({
        "paper": LINEAGE_PAPER, "predecessors": {"type": "array", "items": LINEAGE_PAPER},
        "successors": {"type": "array", "items": LINEAGE_PAPER},
        "coverage": {"const": "explicit_catalog_links_only"}, "coverage_note": _STR,
    }),
    "task": _envelope({"task": TASK_DETAIL}),
    "method": _envelope({"method": METHOD_DETAIL}),
    "benchmark": _envelope({
        "benchmark": BENCHMARK_SUMMARY, "evaluation_count": _OINT, "matched_count": _OINT,
        "evaluations": {"type": "array", "items": EVALUATION},
        "metric_directions": {"type": "object",
                              "additionalProperties": {"enum": ["higher", "lower", "unknown"]}},
        "page": {"type": "integer"}, "next_page": _OINT, "ranking_note": _STR, "metric_note": _STR,
    }, optional=("metric_note",)),
    "benchmark_page": _envelope({
        "items": {"type": "array", "items": BENCHMARK_SUMMARY}, "next_page": _OINT, "total": _OINT,
        "notes": {"type": "array", "items": _STR},
    }, optional=("notes",)),
    "query": _with_data({}),
    "citations": _with_data({
        "format": _STR, "cited": {"type": "integer"}, "items": {"type": "array", "items": _ITEM},
    }),
    "verification": _with_data({
        "summary": {"type": "object", "additionalProperties": {"type": "integer"}},
        "items": {"type": "array", "items": _ITEM},
    }),
    # read_paper's result shape is owned by pwc_mcp_core.tools.reading.
    "read_paper": {"$schema": DIALECT, **READ_PAPER_OUTPUT_SCHEMA},
    "sota_history": _with_data({
        "benchmark": BENCHMARK_SUMMARY, "task": _OSTR, "tasks": _STRS, "metric": _OSTR, "unit": _OSTR,
        "direction": {"enum": ["higher", "lower"]}, "direction_known": {"type": "boolean"}, "metrics": _STRS,
        "steps": {"type": "array", "items": _obj({
            "date": _STR, "value": {"type": "number"}, "model": _OSTR,
            "paper": _obj({"id": _OSTR, "arxiv_id": _OSTR, "title": _OSTR}), "code_url": _OSTR,
            "task": _OSTR, "improvement": {"type": ["number", "null"]}})},
        "span": _obj({"first": _OSTR, "last": _OSTR, "results": {"type": "integer"}, "best_since": _OSTR,
                      "best_held_days": _OINT, "results_since_best": {"type": "integer"}}),
        "left_out": _obj({"without_metric": {"type": "integer"}, "unparseable_value": {"type": "integer"},
                          "without_date": {"type": "integer"}}),
    }),
    "trends": _envelope({
        "kind": {"enum": ["task", "method", "benchmark"]}, "entity": _obj({"id": _OSTR, "name": _OSTR, "slug": _OSTR}),
        "from_year": _OINT, "to_year": _OINT,
        "years": {"type": "array", "items": _obj({
            "year": {"type": "integer"}, "papers": {"type": "integer"}, "with_code": {"type": "integer"},
            "share_with_code": {"type": ["number", "null"]}})},
        "totals": _obj({"papers": {"type": "integer"}, "with_code": {"type": "integer"},
                        "share_with_code": {"type": ["number", "null"]}}),
        "all_papers": {"type": "integer"}, "span": _obj({"first_year": _OINT, "last_year": _OINT}),
    }),
    "find_in_paper": _envelope({
        "paper": _STR, "query": _STR, "content_version": _STR, "total_bytes": {"type": "integer"},
        "expanded_with": _STRS, "trust": _STR, "note": _STR,
        "passages": {"type": "array", "items": _obj({
            "offset": {"type": "integer"}, "heading": _OSTR, "text": _STR, "score": {"type": "number"},
            "matched": _STRS, "cursor": _OSTR})},
    }, optional=("note",)),
}

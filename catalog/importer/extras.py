"""Loader for ``catalog-extras.json``: what the public dumps lack.

Format (one JSON object; every section optional; unknown keys ignored)::

    {
      "areas":         [{"name": "Computer Vision", "slug"?: "computer-vision"}],
      "tasks":         [{"name", "slug"?, "area"?: <area name>, "parent"?: <task name>,
                         "description"?, "research_trends"?: [str], "visible"?: bool}],
      "conferences":   [{"slug", "name", "year"?, "tier"?, "start_date"?, "end_date"?,
                         "venue"?, "location"?, "description"?, "url"?, "hf_url"?}],
      "organizations": [{"slug", "name", "description"?, "is_featured"?, "trending_rank"?,
                         "website_url"?, "github_url"?, "hf_url"?, "papers"?: [<paper ref>]}],
      "frameworks":    [{"slug", "name", "domain": {"slug", "name"},
                         "category": {"slug", "name"}, "description"?, "platforms"?: [str],
                         "organization_name"?, "when_to_use"?, "github_url"?, "docs_url"?,
                         "introducing_paper_arxiv_id"?, "papers"?: [<paper ref>]}],
      "datasets":      [{"name", "slug"?, "full_name"?, "description"?, "hf_url"?,
                         "featured_rank"?, "tasks"?: [<task name>]}],
      "methods":       [{"name", "slug"?, "area"?: <area name>, "source_paper"?: <paper ref>}],
      "papers":        [{"paper": <paper ref>, "conference"?: <conference slug>,
                         "citation_count"?, "popularity"?, "is_latest"?, "hf_models"?: [url],
                         "hf_datasets"?: [url], "hf_spaces"?: [url], "project_pages"?: [...],
                         "tasks"?: [<task name>], "methods"?: [<method name>]}],
      "lineage":       [{"predecessor": <paper ref>, "successor": <paper ref>}],
      "evaluations":   [{"task": <task name>, "dataset": <dataset name>, "model_name",
                         "paper"?: <paper ref>, "metrics": {name: value}, "best_metric"?,
                         "harness"?, "is_open"?: bool|null, "num_parameters"?: int,
                         "methodology"?, "split"?, "split_name"?, "evaluated_on"?,
                         "result_url"?, "source_url"?, "external_source_url"?, "code_url"?,
                         "hf_model_url"?, "uses_additional_data"?, "updated_at"?}]
    }

A ``<paper ref>`` is an arXiv id or a paper slug. Sections load in the order
above, after the dumps. An evaluation whose natural key (task, dataset, model,
paper URL, harness, split, methodology) matches a dump row updates it (fields
left out keep their stored value). Entries referring to unknown papers, tasks
or datasets are skipped and counted.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from catalog.importer import keys
from catalog.importer.dumps import BadRecord, clip_metrics, clip_value, ensure_task, run, text
from catalog.importer.stats import SourceStats
from catalog.importer.writer import Writer

_CONF = ("name", "year", "tier", "start_date", "end_date", "venue", "location", "description",
         "url", "hf_url")
_ORG = ("name", "description", "is_featured", "trending_rank", "website_url", "github_url",
        "hf_url")
_FW = ("name", "description", "platforms", "organization_name", "when_to_use", "github_url",
       "docs_url", "introducing_paper_arxiv_id")
_EVAL = ("harness", "is_open", "num_parameters", "methodology", "split", "split_name",
         "evaluated_on", "result_url", "source_url", "external_source_url", "code_url",
         "hf_model_url", "uses_additional_data", "updated_at")


def _paper(writer: Writer, ref: Any) -> int:
    if not isinstance(ref, str) or not ref.strip():
        raise BadRecord("paper reference must be a non-empty string")
    arxiv_id = keys.normalize_arxiv_id(ref)
    rid = writer.find_paper(arxiv_id, None if arxiv_id else ref.strip().lower())
    if rid is None:
        raise BadRecord(f"unknown paper {ref!r}")
    return rid


def _slug(rec: dict) -> str:
    slug = text(rec, "slug") or keys.slugify(text(rec, "name", required=True) or "")
    if not slug:
        raise BadRecord("no usable slug")
    return slug


def _pick(rec: dict, cols: tuple[str, ...]) -> dict[str, Any]:
    out = {c: clip_value(c, rec.get(c)) for c in cols}
    for flag in ("is_featured",):
        if out.get(flag) is not None:
            out[flag] = int(bool(out[flag]))
    return out


def _area_id(writer: Writer, name: Any) -> int | None:
    if not isinstance(name, str) or not name.strip():
        return None
    return writer.area(name.strip(), keys.slugify(name))


def _areas(writer: Writer, rec: dict) -> bool:
    """An area by slug."""
    return writer.upsert_simple("areas", _slug(rec), {"name": text(rec, "name", required=True)})[1]


def _tasks(writer: Writer, rec: dict) -> bool:
    """A task with its area, parent and research trends."""
    name = text(rec, "name", required=True) or ""
    parent = text(rec, "parent")
    trends = rec.get("research_trends")
    return writer.upsert_task(
        _slug(rec), name, description=text(rec, "description"),
        area_id=_area_id(writer, rec.get("area")),
        parent_id=ensure_task(writer, parent) if parent else None,
        research_trends=trends if isinstance(trends, list) else None,
        visible=rec.get("visible"))[1]


def _conferences(writer: Writer, rec: dict) -> bool:
    """A conference by slug."""
    return writer.upsert_simple("conferences", _slug(rec), _pick(rec, _CONF))[1]


def _organizations(writer: Writer, rec: dict) -> bool:
    """An organization and the papers it links."""
    org_id, created = writer.upsert_simple("organizations", _slug(rec), _pick(rec, _ORG))
    for ref in rec.get("papers") or []:
        writer.link("paper_organizations", "paper_id", "organization_id",
                    _paper(writer, ref), org_id)
    return created


def _frameworks(writer: Writer, rec: dict) -> bool:
    """A framework with its domain and category, and its papers."""
    domain, category = rec.get("domain"), rec.get("category")
    if not (isinstance(domain, dict) and isinstance(category, dict)):
        raise BadRecord("framework needs 'domain' and 'category' objects")
    fields = _pick(rec, _FW)
    fields.update(domain_slug=clip_value("slug", domain.get("slug")),
                  domain_name=clip_value("name", domain.get("name")),
                  category_slug=clip_value("slug", category.get("slug")),
                  category_name=clip_value("name", category.get("name")))
    if not all(isinstance(fields[k], str) for k in ("domain_slug", "domain_name",
                                                      "category_slug", "category_name")):
        raise BadRecord("framework domain/category need 'slug' and 'name'")
    fields["platforms"] = fields.get("platforms") or []
    fw_id, created = writer.upsert_simple("frameworks", _slug(rec), fields)
    for ref in rec.get("papers") or []:
        writer.link("paper_frameworks", "paper_id", "framework_id", _paper(writer, ref), fw_id)
    return created


def _datasets(writer: Writer, rec: dict) -> bool:
    """A dataset and the tasks it links."""
    ds_id, created = writer.upsert_simple("datasets", _slug(rec), _pick(
        rec, ("name", "full_name", "description", "hf_url", "featured_rank")))
    for task in rec.get("tasks") or []:
        if isinstance(task, str):
            writer.link("dataset_tasks", "dataset_id", "task_id", ds_id, ensure_task(writer, task))
    return created


def _methods(writer: Writer, rec: dict) -> bool:
    """A method with its area and source paper."""
    fields: dict[str, Any] = {"name": text(rec, "name", required=True)}
    if rec.get("area"):
        fields["area_id"] = _area_id(writer, rec["area"])
    if rec.get("source_paper"):
        fields["source_paper_id"] = _paper(writer, rec["source_paper"])
    for key in ("full_name", "description", "introduced_year", "source_url", "source_title"):
        if rec.get(key) is not None:
            fields[key] = clip_value(key, rec[key])
    return writer.upsert_simple("methods", _slug(rec), fields)[1]


def _papers(writer: Writer, rec: dict) -> bool:
    """Extra fields and task/method links of an already imported paper (never creates one)."""
    paper_id = _paper(writer, rec.get("paper"))
    fields: dict[str, Any] = {k: clip_value(k, rec.get(k)) for k in (
        "citation_count", "popularity", "is_latest", "hf_models", "hf_datasets", "hf_spaces",
        "project_pages")}
    conf = rec.get("conference")
    if conf is not None:
        if conf not in writer.conferences:
            raise BadRecord(f"unknown conference {conf!r}")
        fields["conference_id"] = writer.conferences[conf]
    if fields.get("is_latest") is not None:
        fields["is_latest"] = int(bool(fields["is_latest"]))
    writer.update_paper(paper_id, fields)
    for task in rec.get("tasks") or []:
        writer.link("paper_tasks", "paper_id", "task_id", paper_id, ensure_task(writer, task))
    for method in rec.get("methods") or []:
        method_id = writer.methods.get(keys.slugify(str(method)))
        if method_id is None:
            raise BadRecord(f"unknown method {method!r}")
        writer.link("paper_methods", "paper_id", "method_id", paper_id, method_id)
    return False


def _lineage(writer: Writer, rec: dict) -> bool:
    """A predecessor -> successor link between two papers."""
    pair = (_paper(writer, rec.get("predecessor")), _paper(writer, rec.get("successor")))
    writer.flush()  # so the existence check below sees earlier entries
    exists = writer.conn.execute("SELECT 1 FROM lineage WHERE predecessor_id = ? AND "
                                 "successor_id = ?", pair).fetchone()
    writer.link("lineage", "predecessor_id", "successor_id", *pair)
    return exists is None


def _evaluations(writer: Writer, rec: dict) -> bool:
    """One leaderboard row of a (task, dataset) board."""
    task_id = writer.tasks.get(keys.slugify(text(rec, "task", required=True) or ""))
    dataset_id = writer.datasets.get(keys.slugify(text(rec, "dataset", required=True) or ""))
    if task_id is None or dataset_id is None:
        raise BadRecord("unknown task or dataset")
    writer.link("dataset_tasks", "dataset_id", "task_id", dataset_id, task_id)
    metrics = rec.get("metrics")
    if not isinstance(metrics, dict) or not metrics:
        raise BadRecord("'metrics' must be a non-empty object")
    metrics = clip_metrics(metrics)
    row: dict[str, Any] = {c: clip_value(c, rec.get(c)) for c in _EVAL}
    row.update(model_name=text(rec, "model_name", required=True), metrics=metrics,
               best_metric=text(rec, "best_metric") or next(iter(metrics)))
    if rec.get("paper"):
        paper_id = _paper(writer, rec["paper"])
        arxiv_id = keys.normalize_arxiv_id(rec["paper"])
        row["paper_id"] = paper_id
        # Papers were flushed after their section, so this read sees them.
        row["paper_title"], row["paper_published_date"] = writer.conn.execute(
            "SELECT title, published FROM papers WHERE id = ?", (paper_id,)).fetchone()
        row["paper_url"] = (f"https://arxiv.org/abs/{arxiv_id}" if arxiv_id
                            else f"https://paperswithcode.com/paper/{rec['paper']}")
        row["result_url"] = row.get("result_url") or f"/paper/{rec['paper']}"
        writer.link("paper_tasks", "paper_id", "task_id", paper_id, task_id)
    return writer.upsert_evaluation(task_id, dataset_id, row)


SECTIONS: tuple[tuple[str, Callable[[Writer, dict], bool]], ...] = (
    ("areas", _areas), ("conferences", _conferences), ("tasks", _tasks), ("datasets", _datasets),
    ("methods", _methods), ("organizations", _organizations), ("frameworks", _frameworks),
    ("papers", _papers), ("lineage", _lineage), ("evaluations", _evaluations))
"""The sections in the order they apply: later ones read earlier rows (e.g. paper titles)."""


def load_extras(writer: Writer, data: dict, stats: SourceStats) -> None:
    """Apply every section of a parsed catalog-extras object (format: module docstring)."""
    for name, handler in SECTIONS:
        items = data.get(name) or []
        if not isinstance(items, list):
            stats.skip(name, "section must be a list")
            items = []
        run(list(enumerate(items, start=1)), stats, partial(handler, writer))
        writer.flush()  # later sections read earlier rows (e.g. paper titles)

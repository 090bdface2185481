"""Loaders for the public Papers with Code dump formats.

Each ``load_<kind>(writer, records, stats)`` consumes ``(number, record)``
pairs from :mod:`catalog.importer.sources`, validates each record, skips and
counts malformed ones (with a reason), and upserts the rest through
:class:`~catalog.importer.writer.Writer`.

Every string a loader stores passes :func:`clip`: a field longer than its
bound in :mod:`catalog.importer.limits` is cut (a URL is dropped) and counted
in the source's ``cut`` counter, with the record number among the reasons.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Literal, TypeAlias, TypeVar, overload

from catalog.importer import keys, limits, ranking
from catalog.importer.stats import SourceStats
from catalog.importer.writer import Writer

Record: TypeAlias = dict[str, object]
"""One decoded record: untrusted, so every field is narrowed with ``isinstance`` before use."""
Records: TypeAlias = Iterable[tuple[int, object]]
"""``(number, record)`` pairs; a record may be any decoded value, or the error that replaced it."""


T = TypeVar("T")


class BadRecord(ValueError):
    """A record the loader cannot use; the message is the skip reason."""


class _Context:
    """The source and record being loaded, for :func:`clip`'s counter and reasons."""

    stats: SourceStats | None = None
    number: int = 0


CONTEXT = _Context()


def clip(key: str, value: str) -> str | None:
    """``value`` within the bound of the field ``key``: cut, or None for an oversized URL.

    A change is counted in the current source's stats (:data:`CONTEXT`).
    """
    limit = limits.text_limit(key)
    if len(value) <= limit:
        return value
    url = limits.is_url(key)
    if CONTEXT.stats is not None:
        CONTEXT.stats.cut_field(f"record {CONTEXT.number}", f"{key!r} has {len(value)} characters, "
                                + ("dropped" if url else f"cut to {limit}"))
    return None if url else value[:limit]


def clip_value(key: str, value: object) -> object:
    """:func:`clip` for any field value: strings, and lists (at most ``MAX_LIST_ITEMS``)
    of strings or of ``{"url": ...}`` objects; other values unchanged."""
    if isinstance(value, str):
        return clip(key, value)
    if isinstance(value, list):
        if len(value) > limits.MAX_LIST_ITEMS:
            value = _cut_list(key, value)
        return [clip(key, v) if isinstance(v, str) else v for v in value]
    return value


def _cut_list(key: str, value: list[T]) -> list[T]:
    if CONTEXT.stats is not None:
        CONTEXT.stats.cut_field(f"record {CONTEXT.number}", f"{key!r} has {len(value)} items, "
                                f"cut to {limits.MAX_LIST_ITEMS}")
    return value[:limits.MAX_LIST_ITEMS]


def clip_metrics(metrics: dict[str, object]) -> dict[str, object]:
    """A leaderboard row's metrics within bounds: at most ``MAX_METRICS`` names, names and
    string values at most ``SHORT_TEXT`` characters (longer ones cut, counted)."""
    if len(metrics) <= limits.MAX_METRICS:
        for name, value in metrics.items():
            if len(name) > limits.SHORT_TEXT or (
                    value.__class__ is str and len(value) > limits.SHORT_TEXT):
                break
        else:
            return metrics
    if len(metrics) > limits.MAX_METRICS and CONTEXT.stats is not None:
        CONTEXT.stats.cut_field(f"record {CONTEXT.number}", f"'metrics' has {len(metrics)} "
                                f"names, cut to {limits.MAX_METRICS}")
    out: dict[str, object] = {}
    for name, value in list(metrics.items())[:limits.MAX_METRICS]:
        name = clip("metric", name) or ""
        out[name] = clip("metric", value) if isinstance(value, str) else value
    return out


@overload
def text(record: Mapping[str, object], key: str, *, required: Literal[True]) -> str: ...
@overload
def text(record: Mapping[str, object], key: str, *, required: bool = False) -> str | None: ...
def text(record: Mapping[str, object], key: str, *, required: bool = False) -> str | None:
    """A stripped string field; None when absent/empty; BadRecord when required or mistyped."""
    value = record.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise BadRecord(f"missing {key!r}")
        return None
    if not isinstance(value, str):
        raise BadRecord(f"{key!r} must be a string")
    value = value.strip()
    if len(value) > limits.SHORT_TEXT:  # the smallest field bound: one test on the hot path
        clipped = clip(key, value)
        if clipped is None and required:
            raise BadRecord(f"{key!r} is longer than {limits.text_limit(key)} characters")
        return clipped
    return value


def items(record: Mapping[str, object], key: str) -> Iterable[object]:
    """The items of a list field (none when absent or empty); BadRecord when it cannot be iterated."""
    value = record.get(key) or []
    if not isinstance(value, Iterable):
        raise BadRecord(f"{key!r} must be a list")
    return value


def iso_date(value: object) -> str | None:
    """``YYYY-MM-DD`` prefix of a date string, else None."""
    if isinstance(value, str) and len(value) >= 10 and value[4] == "-" and value[7] == "-":
        return value[:10]
    return None


def str_list(record: Mapping[str, object], key: str) -> list[str]:
    """A list of non-empty strings (other items dropped); BadRecord if not a list."""
    value = record.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadRecord(f"{key!r} must be a list")
    return clip_items(key, [v.strip() for v in value if isinstance(v, str) and v.strip()])


def clip_items(key: str, items: list[str]) -> list[str]:
    """A list of strings within bounds: ``MAX_LIST_ITEMS`` items of at most
    ``ITEM_LIMITS[key]`` (else ``SHORT_TEXT``) characters; cuts are counted."""
    if len(items) > limits.MAX_LIST_ITEMS:
        items = _cut_list(key, items)
    limit = limits.ITEM_LIMITS.get(key, limits.SHORT_TEXT)
    if items and max(map(len, items)) > limit:
        items = list(items)
        for index, item in enumerate(items):
            if len(item) > limit:
                if CONTEXT.stats is not None:
                    CONTEXT.stats.cut_field(f"record {CONTEXT.number}", f"an item of {key!r} "
                                            f"has {len(item)} characters, cut to {limit}")
                items[index] = item[:limit]
    return items


def ensure_task(writer: Writer, name: str) -> int:
    """Id of the task named ``name``, created (top level, no area) when missing."""
    cached = writer.by_name.get(("tasks", name))
    if cached is not None:  # papers repeat the same few task names: skip slugify
        return cached
    slug = keys.slugify(name)
    if not slug:
        raise BadRecord(f"task name {name!r} has no usable characters")
    rid = writer.tasks.get(slug)
    rid = rid if rid is not None else writer.upsert_task(slug, name, stub=True)[0]
    writer.by_name[("tasks", name)] = rid
    return rid


def ensure_conference(writer: Writer, name: str) -> int:
    """Id of the conference edition ``name`` (e.g. "NeurIPS 2017"), created when missing."""
    slug = keys.slugify(name)
    rid = writer.conferences.get(slug)
    if rid is not None:
        return rid
    return writer.reference("conferences", slug,
                            {"name": name, "year": keys.conference_year(name)})


def run(records: Records, stats: SourceStats, handler: Callable[[Record], bool | None]) -> None:
    """Drive ``handler(record) -> created`` over records, counting and skipping bad ones."""
    CONTEXT.stats = stats
    for number, record in records:
        CONTEXT.number = number
        stats.read += 1
        try:
            if isinstance(record, Exception):
                raise BadRecord(str(record))
            if not isinstance(record, dict):
                raise BadRecord("not a JSON object")
            created = handler(record)
        except BadRecord as exc:
            stats.skip(f"record {number}", str(exc))
            continue
        if created is not None:
            stats.wrote(created)


# -- papers-with-abstracts ---------------------------------------------------
def load_papers(writer: Writer, records: Records, stats: SourceStats) -> None:
    """papers-with-abstracts: paper_url, arxiv_id, title, abstract, url_abs, url_pdf,
    proceeding, authors, tasks, date, methods."""
    def handle(rec: Record) -> bool:
        title = text(rec, "title", required=True)
        arxiv_id = keys.normalize_arxiv_id(text(rec, "arxiv_id"))
        slug = keys.pwc_paper_slug(text(rec, "paper_url")) or keys.slugify(title or "")
        conference = keys.conference_name(text(rec, "proceeding"))
        paper_id, created = writer.upsert_paper({
            "arxiv_id": arxiv_id, "slug": slug, "title": title, "abstract": text(rec, "abstract"),
            "authors": str_list(rec, "authors"), "published": iso_date(rec.get("date")),
            "url_abs": text(rec, "url_abs"), "url_pdf": text(rec, "url_pdf"),
            "conference_id": ensure_conference(writer, conference) if conference else None,
        })
        for task in str_list(rec, "tasks"):
            writer.link("paper_tasks", "paper_id", "task_id", paper_id, ensure_task(writer, task))
        methods = items(rec, "methods")
        if isinstance(methods, list) and len(methods) > limits.MAX_LIST_ITEMS:
            methods = _cut_list("methods", methods)
        for method in methods:
            if isinstance(method, dict) and isinstance(method.get("name"), str):
                writer.link("paper_methods", "paper_id", "method_id", paper_id,
                            _ensure_method(writer, method))
        return created
    run(records, stats, handle)


def _ensure_method(writer: Writer, method: Record) -> int:
    raw_name = str(method["name"])  # the caller checked it is a string
    cached = writer.by_name.get(("methods", raw_name))
    if cached is not None:
        return cached
    name = text(method, "name", required=True)
    slug = keys.slugify(name)
    rid = writer.methods.get(slug)
    if rid is None:
        rid = writer.reference("methods", slug, {
            "name": name, "full_name": text(method, "full_name"),
            "description": text(method, "description"),
            "introduced_year": method.get("introduced_year") if isinstance(
                method.get("introduced_year"), int) else None})
    writer.by_name[("methods", raw_name)] = rid
    return rid


# -- links-between-papers-and-code -------------------------------------------
def load_links(writer: Writer, records: Records, stats: SourceStats) -> None:
    """links-between-papers-and-code: paper_url, paper_title, paper_arxiv_id,
    paper_url_abs, paper_url_pdf, repo_url, is_official, framework."""
    def handle(rec: Record) -> bool:
        repo = text(rec, "repo_url", required=True)
        arxiv_id = keys.normalize_arxiv_id(text(rec, "paper_arxiv_id"))
        slug = keys.pwc_paper_slug(text(rec, "paper_url"))
        paper_id = writer.find_paper(arxiv_id, slug)
        if paper_id is None:
            title = text(rec, "paper_title")
            if not (arxiv_id and title):
                raise BadRecord("paper not in the catalog and no arXiv id to create it")
            paper_id, _ = writer.upsert_paper({
                "arxiv_id": arxiv_id, "slug": slug or keys.slugify(title), "title": title,
                "url_abs": text(rec, "paper_url_abs"), "url_pdf": text(rec, "paper_url_pdf")},
                stub=True)
        framework = (text(rec, "framework") or "").lower() or None
        framework = None if framework == "none" else framework
        stars = rec.get("stars")
        return writer.upsert_repository(paper_id, repo, rec.get("is_official") is True,
                                        framework, stars if isinstance(stars, int) else None)
    run(records, stats, handle)


# -- methods -------------------------------------------------------------------
def load_methods(writer: Writer, records: Records, stats: SourceStats) -> None:
    """methods: url, name, full_name, description, paper{title,url}, introduced_year,
    source_url, source_title, collections[{collection, area}]."""
    def handle(rec: Record) -> bool:
        name = text(rec, "name", required=True) or ""
        slug = keys.slug_from_url(text(rec, "url")) or keys.slugify(name)
        area_id = None
        for collection in items(rec, "collections"):
            area = text(collection, "area") if isinstance(collection, dict) else None
            if area:
                area_id = writer.area(area, keys.slugify(area))
                break
        raw_paper = rec.get("paper")
        paper = raw_paper if isinstance(raw_paper, dict) else {}
        source_paper = writer.find_paper(keys.arxiv_id_from_url(rec.get("source_url")),
                                         keys.pwc_paper_slug(paper.get("url")))
        year = rec.get("introduced_year")
        _, created = writer.upsert_simple("methods", slug, {
            "name": name, "full_name": text(rec, "full_name"), "description": text(rec, "description"),
            "area_id": area_id, "introduced_year": year if isinstance(year, int) else None,
            "source_paper_id": source_paper, "source_url": text(rec, "source_url"),
            "source_title": text(rec, "source_title")})
        return created
    run(records, stats, handle)


# -- datasets ------------------------------------------------------------------
def load_datasets(writer: Writer, records: Records, stats: SourceStats) -> None:
    """datasets: url, name, full_name, homepage, description, tasks[{task, url}], variants
    (other names of the dataset, stored as its aliases)."""
    def handle(rec: Record) -> bool:
        name = text(rec, "name", required=True) or ""
        slug = keys.slug_from_url(text(rec, "url")) or keys.slugify(name)
        variants = None if rec.get("variants") is None else str_list(rec, "variants")
        dataset_id, created = writer.upsert_simple("datasets", slug, {
            "name": name, "full_name": text(rec, "full_name"),
            "description": text(rec, "description")})
        if variants is not None:
            writer.set_aliases("dataset", dataset_id, variants)
        tasks = items(rec, "tasks")
        if isinstance(tasks, list) and len(tasks) > limits.MAX_LIST_ITEMS:
            tasks = _cut_list("tasks", tasks)
        for task in tasks:
            task_name = text(task, "task") if isinstance(task, dict) else task
            if isinstance(task_name, str) and task_name.strip():
                writer.link("dataset_tasks", "dataset_id", "task_id", dataset_id,
                            ensure_task(writer, clip("task", task_name.strip()) or ""))
        return created
    run(records, stats, handle)


# -- evaluation-tables ---------------------------------------------------------
def load_evaluations(writer: Writer, records: Records, stats: SourceStats) -> None:
    """evaluation-tables: task → datasets → sota{metrics, rows} → subdatasets; subtasks.

    Tasks' ``categories`` become areas; ``synonyms`` the task's aliases;
    ``subtasks`` child tasks; each row an
    evaluation (best_rank from :mod:`ranking`); ``subdatasets`` datasets named
    ``"<parent> (<subdataset>)"`` linked to the same task. A malformed row is
    skipped alone; a malformed task skips that task.
    """
    def handle(rec: Record) -> bool:
        return _task(writer, rec, None, stats)
    run(records, stats, handle)


def _task(writer: Writer, rec: Record, parent_id: int | None, stats: SourceStats) -> bool:
    name = text(rec, "task", required=True) or ""
    slug = keys.slugify(name)
    if not slug:
        raise BadRecord(f"task name {name!r} has no usable characters")
    categories = str_list(rec, "categories")
    synonyms = None if rec.get("synonyms") is None else str_list(rec, "synonyms")
    area_id = writer.area(categories[0], keys.slugify(categories[0])) if categories else None
    task_id, created = writer.upsert_task(slug, name, description=text(rec, "description"),
                                          area_id=area_id, parent_id=parent_id)
    if synonyms is not None:
        writer.set_aliases("task", task_id, synonyms)
    for dataset in items(rec, "datasets"):
        _dataset(writer, dataset, task_id, None, stats)
    for sub in items(rec, "subtasks"):
        stats.read += 1
        try:
            if not isinstance(sub, dict):
                raise BadRecord("subtask is not a JSON object")
            stats.wrote(_task(writer, sub, task_id, stats))
        except BadRecord as exc:
            stats.skip(f"subtask of {name!r}", str(exc))
    return created


def _dataset(writer: Writer, rec: object, task_id: int, parent: str | None,
             stats: SourceStats) -> None:
    stats.read += 1
    try:
        if not isinstance(rec, dict):
            raise BadRecord("dataset is not a JSON object")
        own = text(rec, "subdataset" if parent else "dataset", required=True) or ""
        name = f"{parent} ({own})" if parent else own
        slug = keys.slugify(name)
        if not slug:
            raise BadRecord(f"dataset name {name!r} has no usable characters")
        dataset_id, created = writer.upsert_simple("datasets", slug, {
            "name": name, "description": text(rec, "description")})
        # The record is the task's leaderboard on the dataset: inserted when the link is new,
        # even if the datasets source of this import wrote the dataset itself just before.
        created = writer.link_board(dataset_id, task_id) or created
        sota = rec["sota"] if isinstance(rec.get("sota"), dict) else {}
        metric_names = [m for m in sota.get("metrics") or [] if isinstance(m, str)]
        board_metric = ranking.ranking_metric(metric_names)
    except BadRecord as exc:
        stats.skip(f"dataset under task {task_id}", str(exc))
        return
    stats.wrote(created)
    for index, row in enumerate(sota.get("rows") or [], start=1):
        stats.read += 1
        try:
            stats.wrote(_row(writer, row, task_id, dataset_id, board_metric))
        except BadRecord as exc:
            stats.skip(f"{name!r} row {index}", str(exc))
    for sub in rec.get("subdatasets") or []:
        _dataset(writer, sub, task_id, name, stats)


def _row(writer: Writer, row: object, task_id: int, dataset_id: int, board_metric: str | None) -> bool:
    if not isinstance(row, dict):
        raise BadRecord("row is not a JSON object")
    model = text(row, "model_name", required=True)
    metrics = row.get("metrics")
    if not isinstance(metrics, dict):
        raise BadRecord("'metrics' must be an object")
    metrics = clip_metrics(metrics)
    paper_url = text(row, "paper_url")
    title = text(row, "paper_title")
    date = iso_date(row.get("paper_date"))
    arxiv_id = keys.arxiv_id_from_url(paper_url)
    paper_id = None
    if arxiv_id:
        paper_id = writer.find_paper(arxiv_id)
        if paper_id is None:  # stub of a paper only named by this row
            paper_id, _ = writer.upsert_paper({
                "arxiv_id": arxiv_id, "slug": keys.slugify(title or arxiv_id),
                "title": title or arxiv_id, "published": date,
                "url_abs": f"https://arxiv.org/abs/{arxiv_id}"}, stub=True)
    elif paper_url:
        paper_id = writer.find_paper(slug=keys.pwc_paper_slug(paper_url))
    if paper_id is not None:
        writer.link("paper_tasks", "paper_id", "task_id", paper_id, task_id)
    code_url = None
    for link in row.get("code_links") or ():  # usually empty: no generator per row
        if isinstance(link, dict) and isinstance(link.get("url"), str) and link["url"]:
            code_url = clip("url", link["url"])
            break
    best = board_metric if board_metric and ranking.lookup(metrics, board_metric) is not None \
        else next(iter(metrics), None)
    extra = row.get("uses_additional_data")
    return writer.upsert_evaluation(task_id, dataset_id, {
        "paper_id": paper_id, "model_name": model, "metrics": metrics, "best_metric": best,
        "code_url": code_url, "source_url": paper_url,
        "result_url": f"/paper/{arxiv_id}" if arxiv_id else None,
        "uses_additional_data": extra if isinstance(extra, bool) else None,
        "paper_title": title, "paper_published_date": date, "paper_url": paper_url})

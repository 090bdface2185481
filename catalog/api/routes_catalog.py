"""Catalog routes: areas, tasks, methods, conferences, organizations, frameworks, datasets, evaluations,
and ``catalog`` (where the data came from: ``catalog.db.provenance``).

Page-size caps: 100, except ``areas/`` and ``methods/`` (500, as the CLI
sends), so no response can exceed 2 MiB.
"""

from __future__ import annotations

import sqlite3
from urllib.parse import unquote

from aiohttp import web

from catalog.api.params import Params
from catalog.api.responses import json_response, run_query
from catalog.api.routes_papers import ORDER_BY, ORDER_DIR
from catalog.db import provenance
from catalog.store import entities as store_entities
from catalog.store import papers as store_papers
from catalog.store import taxonomy as store_taxonomy
from catalog.store.core import resolve_paper

__all__ = ["register"]

_MAX_ID = 2**62


def _path(request: web.Request, name: str = "ref") -> str:
    return unquote(request.match_info[name]).strip()


async def areas(request: web.Request) -> web.Response:
    """``GET areas/``."""
    params = Params(request.query)
    page = params.page(100, 500)
    ordering = params.ordering("name", store_taxonomy.AREA_ORDERINGS)
    return json_response(await run_query(request, store_taxonomy.area_list, page, ordering))


async def areas_with_tasks(request: web.Request) -> web.Response:
    """``GET areas/with-tasks/``."""
    return json_response(await run_query(request, store_taxonomy.areas_with_tasks))


async def areas_with_task_benchmarks(request: web.Request) -> web.Response:
    """``GET areas/with-task-benchmarks/``."""
    params = Params(request.query)
    per_task = params.integer("benchmarks_per_task", 3, 1, 10)
    min_evals = params.integer("min_eval_count", 2, 0, _MAX_ID)
    return json_response(await run_query(request, store_taxonomy.areas_with_task_benchmarks, per_task, min_evals))


async def tasks(request: web.Request) -> web.Response:
    """``GET tasks/``."""
    params = Params(request.query)
    page = params.page(50)
    body = await run_query(
        request, store_taxonomy.task_list, page, q=params.text("q"),
        area_id=params.integer("area_id", None, 1, _MAX_ID), level=params.integer("level", None, 0, 100),
        visible_only=bool(params.boolean("visible_only", False)),
        ordering=params.ordering("name", store_taxonomy.TASK_ORDERINGS))
    return json_response(body)


async def task_detail(request: web.Request) -> web.Response:
    """``GET tasks/{ref}``."""
    return json_response(await run_query(request, store_taxonomy.task_summary, _path(request)))


async def task_page(request: web.Request) -> web.Response:
    """``GET tasks/{ref}/page``."""
    return json_response(await run_query(request, store_taxonomy.task_page, _path(request)))


async def task_trending_benchmarks(request: web.Request) -> web.Response:
    """``GET tasks/{task}/trending-benchmarks`` (the task may be a name, slug or id)."""
    params = Params(request.query)
    body = await run_query(
        request, store_taxonomy.trending_benchmarks, _path(request),
        limit=params.integer("limit", 10, 1, 100),
        min_recent_papers=params.integer("min_recent_papers", 0, 0, _MAX_ID),
        include_descendants=bool(params.boolean("include_descendants", False)),
        is_open=params.boolean("is_open", None))
    return json_response(body)


async def task_papers(request: web.Request) -> web.Response:
    """``GET tasks/{ref}/papers``."""
    params = Params(request.query)
    page = params.page(20)
    order_by = params.choice("order_by", "trending", ORDER_BY)
    order_dir = params.choice("order_dir", "desc", ORDER_DIR)
    params.boolean("include_resources", False)
    return json_response(await run_query(request, store_papers.task_papers, _path(request), page,
                                         order_by=order_by, order_dir=order_dir))


async def methods(request: web.Request) -> web.Response:
    """``GET methods/``."""
    params = Params(request.query)
    page = params.page(50, 500)
    body = await run_query(
        request, store_taxonomy.method_list, page, q=params.text("q"),
        area_id=params.integer("area_id", None, 1, _MAX_ID),
        introduced_year=params.integer("introduced_year", None, 1, 9999),
        ordering=params.ordering("name", store_taxonomy.METHOD_ORDERINGS))
    return json_response(body)


async def method_detail(request: web.Request) -> web.Response:
    """``GET methods/{ref}``."""
    return json_response(await run_query(request, store_taxonomy.method_detail, _path(request)))


async def conferences(request: web.Request) -> web.Response:
    """``GET conferences/``."""
    return json_response(await run_query(request, store_entities.conference_list))


async def conference_detail(request: web.Request) -> web.Response:
    """``GET conferences/{ref}``."""
    return json_response(await run_query(request, store_entities.conference_detail, _path(request)))


async def organizations(request: web.Request) -> web.Response:
    """``GET organizations/``."""
    featured = Params(request.query).boolean("featured_only", False)
    return json_response(await run_query(request, store_entities.organization_list, bool(featured)))


async def organization_detail(request: web.Request) -> web.Response:
    """``GET organizations/{ref}``."""
    return json_response(await run_query(request, store_entities.organization_detail, _path(request)))


async def frameworks(request: web.Request) -> web.Response:
    """``GET frameworks/``."""
    return json_response(await run_query(request, store_entities.framework_catalog))


async def datasets(request: web.Request) -> web.Response:
    """``GET datasets/``."""
    params = Params(request.query)
    page = params.page(50)
    body = await run_query(
        request, store_entities.dataset_list, page, q=params.text("q"), task=params.text("task"),
        include_descendants=bool(params.boolean("include_descendants", False)),
        min_eval_count=params.integer("min_eval_count", None, 0, _MAX_ID),
        is_open=params.boolean("is_open", None),
        ordering=params.ordering("name", store_entities.DATASET_ORDERINGS))
    return json_response(body)


async def dataset_evaluations(request: web.Request) -> web.Response:
    """``GET datasets/{ref}/evaluations/``."""
    params = Params(request.query)
    page = params.page(20)
    body = await run_query(request, store_entities.dataset_evaluations, _path(request), page,
                           is_open=params.boolean("is_open", None),
                           ordering=params.ordering("best_rank", store_entities.EVALUATION_ORDERINGS))
    return json_response(body)


async def evaluations(request: web.Request) -> web.Response:
    """``GET evaluations/`` (paper mode, benchmark mode, parameter-filter mode)."""
    params = Params(request.query)
    page = params.page(20)
    paper = params.text("paper_id")
    paper_id = None
    if paper is not None:
        paper_id = await run_query(request, _paper_id, paper)
    body = await run_query(
        request, store_entities.evaluation_list, page, paper_id=paper_id,
        dataset_id=params.integer("dataset_id", None, 1, _MAX_ID),
        task_id=params.integer("task_id", None, 1, _MAX_ID),
        is_open=params.boolean("is_open", None),
        max_parameters_exclusive=params.integer("max_parameters_exclusive", None, 1, 2**63 - 1),
        ordering=params.ordering("best_rank", store_entities.EVALUATION_ORDERINGS))
    return json_response(body)


def _paper_id(conn: sqlite3.Connection, ref: str) -> int:
    """Catalog id of the paper ``ref`` names (404 when unknown)."""
    return resolve_paper(conn, ref)["id"]


async def catalog_info(request: web.Request) -> web.Response:
    """``GET catalog``: the provenance record of the served database (``catalog.db.provenance.describe``)."""
    return json_response(await run_query(request, provenance.describe))


def register(router: web.UrlDispatcher) -> None:
    """Add the catalog routes; list paths answer with and without a trailing slash."""
    base = "/api/v1"
    lists = {
        "areas": areas, "areas/with-tasks": areas_with_tasks,
        "areas/with-task-benchmarks": areas_with_task_benchmarks, "tasks": tasks, "methods": methods,
        "conferences": conferences, "organizations": organizations, "frameworks": frameworks,
        "datasets": datasets, "evaluations": evaluations,
    }
    for path, handler in lists.items():
        name = path.replace("/", "_").replace("-", "_")
        router.add_get(f"{base}/{path}/", handler, name=name)
        router.add_get(f"{base}/{path}", handler, name=f"{name}_noslash")
    details = {
        "tasks/{ref}/page": task_page, "tasks/{ref}/trending-benchmarks": task_trending_benchmarks,
        "tasks/{ref}/papers": task_papers, "tasks/{ref}": task_detail, "methods/{ref}": method_detail,
        "conferences/{ref}": conference_detail, "organizations/{ref}": organization_detail,
        "datasets/{ref}/evaluations": dataset_evaluations,
    }
    for path, handler in details.items():
        name = path.replace("/{ref}", "").replace("/", "_").replace("-", "_") + "_detail"
        router.add_get(f"{base}/{path}/", handler, name=f"{name}_slash")
        router.add_get(f"{base}/{path}", handler, name=name)
    router.add_get(f"{base}/catalog", catalog_info, name="catalog_info")
    router.add_get(f"{base}/catalog/", catalog_info, name="catalog_info_slash")

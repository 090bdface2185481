"""``pwc method --name NAME`` and ``pwc method list`` (``docs/cli-contract.md`` §2.11, §3.2)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TypedDict

from pwc.arguments import PAGE_MAX, int_range
from pwc.errors import ResponseError
from pwc.json_types import JsonObject
from pwc.names import (
    AREAS_PARAMS,
    METHOD_FIELDS,
    area_name_map,
    find_named,
    not_found,
    required_name,
    resolve_area,
    with_area_names,
)
from pwc.render import (
    Output,
    absolute_url,
    entity_link,
    heading,
    pagination_hint,
    result_list,
    site_url,
    thousands,
    write_table,
)

if TYPE_CHECKING:  # the transport (httpx) is imported only where a call is made
    from pwc.transport import Client

__all__ = ["MethodPayload", "register", "render_method", "render_method_list", "run_method", "run_method_list"]

ORDER_FIELDS = ("name", "full_name", "introduced_year", "created_at", "paper_count")


class MethodPayload(TypedDict):
    """``pwc method --json`` data: the catalog's method record and its area (None when unknown)."""

    method: JsonObject
    area: JsonObject | None


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``method`` (detail) and ``method list`` to the top-level sub-parsers."""
    method = subparsers.add_parser("method", help="inspect a method or list methods",
                                   description="Inspect one method by exact name, full name, slug or ID.")
    method.add_argument("--name", help="exact method name, full name, slug or ID")
    method.add_argument("--json", action="store_true", help="print the JSON envelope")
    method.set_defaults(handler=run_method, renderer=render_method)
    commands = method.add_subparsers(dest="method_command", metavar="{list}")
    lst = commands.add_parser("list", help="list methods")
    lst.add_argument("--page", type=int_range("--page", 1, PAGE_MAX), default=1)
    lst.add_argument("--page-size", "--limit", dest="page_size", type=int_range("--page-size", 1, 500), default=50)
    lst.add_argument("--search", help="method name search (sent as q)")
    lst.add_argument("--area", help="exact area name or slug (case-insensitive) or area ID")
    lst.add_argument("--introduced-year", type=int, help="year the method was introduced")
    lst.add_argument("--order-by", choices=ORDER_FIELDS, default="name")
    lst.add_argument("--order-dir", choices=("asc", "desc"), default="asc")
    lst.add_argument("--json", action="store_true", help="print the JSON envelope")
    lst.set_defaults(handler=run_method_list, renderer=render_method_list)


def run_method(args: argparse.Namespace, client: Client) -> MethodPayload:
    """``{"method": <detail>, "area": <area or None>}``; raises ``ResponseError``/``NotFoundError`` (exit 4)."""
    name = required_name(args.name, "method")
    if name.isdigit():
        detail = client.get_json(f"methods/{name}")
    else:
        match, candidates = find_named(
            lambda query: result_list(client.get_json("methods/", {"q": query, "page": 1, "page_size": 100})),
            name, METHOD_FIELDS)
        if match is None:
            raise not_found("Method", name, candidates)
        key = match.get("id") if match.get("id") is not None else match.get("slug")
        detail = client.get_json(f"methods/{key}")
    if not isinstance(detail, dict):
        raise ResponseError("API returned an unexpected response shape")
    areas = result_list(client.get_json("areas/", AREAS_PARAMS))
    area_id = detail.get("area_id")
    area = next((a for a in areas if area_id is not None and str(a.get("id")) == str(area_id)), None)
    return {"method": detail, "area": area}


def render_method(payload: MethodPayload, args: argparse.Namespace, out: Output) -> None:
    """Heading, ``Area · Introduced · N papers``, description, source link and site link."""
    method, area = payload["method"], payload.get("area") or {}
    out.line(heading(method.get("name"), out))
    meta = [f"Area: {area['name']}" if area.get("name") else None,
            f"Introduced: {method['introduced_year']}" if method.get("introduced_year") is not None else None,
            f"{thousands(method['paper_count'])} papers" if method.get("paper_count") is not None else None]
    blocks = [" · ".join(p for p in meta if p)]
    if method.get("description"):
        blocks.append(" ".join(str(method["description"]).replace("\r", "").split("\n")))
    source = method.get("source_url")
    if source:  # str() of a JSON value is the text entity_link's f-string wrote before
        blocks.append(entity_link(str(method.get("source_title") or "Source paper"), absolute_url(str(source)), out))
    blocks.append(entity_link("View method", site_url("method", method.get("slug"), method.get("id")), out))
    for block in blocks:
        if block:
            out.line()
            out.line(block)


def run_method_list(args: argparse.Namespace, client: Client) -> object:
    """GET ``areas/`` (names, ``--area``) then ``methods/``; returns the ``methods/`` response, each
    row with ``area_name`` beside its ``area_id`` (`with_area_names`).

    Sets ``args.area_names`` for the renderer. Unknown area → ``NotFoundError`` (exit 4).
    """
    areas = result_list(client.get_json("areas/", AREAS_PARAMS))
    area_id = None if args.area is None else str(resolve_area(areas, args.area).get("id"))
    args.area_names = area_name_map(areas)
    params: dict[str, object] = {"page": args.page, "page_size": args.page_size}
    if args.search:
        params["q"] = args.search
    params.update(area_id=area_id, introduced_year=args.introduced_year,
                  ordering=("-" if args.order_dir == "desc" else "") + args.order_by)
    return with_area_names(client.get_json("methods/", params), args.area_names)


def render_method_list(payload: object, args: argparse.Namespace, out: Output) -> None:
    """The method table (TSV captured, aligned on a TTY) and the pagination hint."""
    rows = result_list(payload)
    names = getattr(args, "area_names", {})
    write_table(out, ["id", "slug", "name", "full_name", "area", "introduced", "papers"],
                [[m.get("id"), m.get("slug"), m.get("name"), m.get("full_name"), names.get(str(m.get("area_id"))),
                  m.get("introduced_year"), m.get("paper_count")] for m in rows],
                right=("introduced", "papers"))
    pagination_hint(out, payload, page=args.page, page_size=args.page_size, rows=len(rows))

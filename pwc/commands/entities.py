"""``pwc conference``, ``pwc organization``, ``pwc framework``: detail and ``list`` (docs/cli-contract.md §2.12–14).

Deliberate fix of a reference quirk (§7): ``organization list`` has no
``--page`` flag and so never prints a ``# more: rerun with --page`` hint.
Conference and framework lists are filtered client-side and print no hint either.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Never, TypedDict

from pwc.errors import ResponseError
from pwc.json_types import JsonObject, JsonValue, json_list, json_objects
from pwc.names import ENTITY_FIELDS, find_exact, not_found, required_name
from pwc.render import Output, entity_link, heading, result_list, site_url, thousands, write_table

if TYPE_CHECKING:  # the transport (httpx) is imported only where a call is made
    from pwc.transport import Client

__all__ = [
    "EntityList", "conference_dates", "conference_tier", "conference_venue", "flatten_frameworks", "framework_platforms",
    "framework_table", "organization_table", "paper_years", "register",
    "render_conference", "render_conference_list", "render_framework", "render_framework_list",
    "render_organization", "render_organization_list",
    "run_conference", "run_conference_list", "run_framework", "run_framework_list",
    "run_organization", "run_organization_list",
]


class EntityList(TypedDict):
    """``conference list`` / ``framework list`` ``--json`` data: the rows kept by the client-side filters."""

    count: int
    results: list[JsonObject]


# (handler, renderer) of a command: each renderer takes its own handler's payload (hence Never here).
_Pair = tuple[Callable[[argparse.Namespace, "Client"], object], Callable[[Never, argparse.Namespace, Output], None]]


def _add_pair(subparsers: argparse._SubParsersAction[argparse.ArgumentParser], name: str, what: str,
              detail: _Pair, listing: _Pair) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=f"inspect a {what} or list {what}s",
                                   description=f"Inspect one {what} by exact name, slug or ID.")
    parser.add_argument("--name", help=f"exact {what} name, slug or ID")
    parser.add_argument("--json", action="store_true", help="print the JSON envelope")
    parser.set_defaults(handler=detail[0], renderer=detail[1])
    lst = parser.add_subparsers(dest=f"{name}_command", metavar="{list}").add_parser("list", help=f"list {what}s")
    lst.set_defaults(handler=listing[0], renderer=listing[1])
    return lst


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``conference``, ``organization`` and ``framework`` with their ``list`` sub-commands."""
    lst = _add_pair(subparsers, "conference", "conference", (run_conference, render_conference),
                    (run_conference_list, render_conference_list))
    lst.add_argument("--year", type=int, help="only conferences of this year")
    lst.add_argument("--json", action="store_true", help="print the JSON envelope")
    lst = _add_pair(subparsers, "organization", "organization", (run_organization, render_organization),
                    (run_organization_list, render_organization_list))
    lst.add_argument("--featured-only", action="store_true", help="only featured organizations")
    lst.add_argument("--json", action="store_true", help="print the JSON envelope")
    lst = _add_pair(subparsers, "framework", "framework", (run_framework, render_framework),
                    (run_framework_list, render_framework_list))
    lst.add_argument("--domain", help="exact domain slug or name")
    lst.add_argument("--category", help="exact category slug or name")
    lst.add_argument("--platform", help="exact platform name")
    lst.add_argument("--json", action="store_true", help="print the JSON envelope")


def _detail(client: Client, path: str) -> JsonObject:
    detail = client.get_json(path)
    if not isinstance(detail, dict):
        raise ResponseError("API returned an unexpected response shape")
    return detail


def _key(item: JsonObject) -> JsonValue:
    return item.get("slug") or item.get("id")


def _write_blocks(out: Output, blocks: list[str | None]) -> None:
    for block in blocks:
        if block:
            out.line()
            out.line(block)


def _text(value: object) -> str | None:
    return " ".join(str(value).replace("\r", "").split("\n")) if value else None


def _link(label: str, url: object, out: Output) -> str | None:
    return entity_link(label, str(url), out) if url else None


# ---------------------------------------------------------------- conferences


def run_conference(args: argparse.Namespace, client: Client) -> JsonObject:
    """Match over ``conferences/``, then GET ``conferences/<slug or id>``; the detail object."""
    name = required_name(args.name, "conference")
    items = result_list(client.get_json("conferences/"))
    match = find_exact(items, name, ENTITY_FIELDS)
    if match is None:
        raise not_found("Conference", name, items)
    return _detail(client, f"conferences/{_key(match)}")


def render_conference(item: JsonObject, args: argparse.Namespace, out: Output) -> None:
    """Heading, year · papers · tier, dates, venue, description and links (§2.12)."""
    out.line(heading(item.get("name"), out))
    tier, dates, venue = conference_tier(item), conference_dates(item), conference_venue(item)
    meta = [str(item["year"]) if item.get("year") is not None else None,
            f"{thousands(item['paper_count'])} papers" if item.get("paper_count") is not None else None,
            f"Tier: {tier}" if tier else None]
    _write_blocks(out, [" · ".join(p for p in meta if p), f"Dates: {dates}" if dates else None,
                        f"Venue: {venue}" if venue else None, _text(item.get("description")),
                        _link("Conference website", item.get("url"), out),
                        _link("Hugging Face", item.get("hf_url"), out),
                        entity_link("View conference", site_url("conference", item.get("slug"), item.get("id")),
                                    out)])


def conference_tier(item: Mapping[str, object]) -> str | None:
    """The tier in capitals (``A*``), or None."""
    return str(item["tier"]).upper() if item.get("tier") else None


def conference_dates(item: Mapping[str, object]) -> str | None:
    """``start – end`` (either alone when the other is missing), or None."""
    dates = [str(d) for d in (item.get("start_date"), item.get("end_date")) if d]
    return " – ".join(dates) or None


def conference_venue(item: Mapping[str, object]) -> str | None:
    """``venue, location`` (either alone), or None."""
    return ", ".join(str(v) for v in (item.get("venue"), item.get("location")) if v) or None


def run_conference_list(args: argparse.Namespace, client: Client) -> EntityList:
    """``{"count", "results"}`` of ``conferences/`` rows, filtered by ``--year`` on the client."""
    rows = result_list(client.get_json("conferences/"))
    if args.year is not None:
        rows = [row for row in rows if row.get("year") == args.year]
    return {"count": len(rows), "results": rows}


def render_conference_list(payload: EntityList, args: argparse.Namespace, out: Output) -> None:
    """Table ``slug, name, year, papers, location``."""
    write_table(out, ["slug", "name", "year", "papers", "location"],
                [[c.get("slug"), c.get("name"), c.get("year"), c.get("paper_count"), c.get("location")]
                 for c in payload["results"]], right=("year", "papers"))


# ---------------------------------------------------------------- organizations


def run_organization(args: argparse.Namespace, client: Client) -> JsonObject:
    """Match over ``organizations/?featured_only=false``, then GET ``organizations/<slug or id>``."""
    name = required_name(args.name, "organization")
    items = result_list(client.get_json("organizations/", {"featured_only": False}))
    match = find_exact(items, name, ENTITY_FIELDS)
    if match is None:
        raise not_found("Organization", name, items)
    return _detail(client, f"organizations/{_key(match)}")


def render_organization(item: JsonObject, args: argparse.Namespace, out: Output) -> None:
    """Heading, papers · trending rank · Featured, paper years, description and links (§2.13)."""
    out.line(heading(item.get("name"), out))
    meta = [f"{thousands(item['paper_count'])} papers" if item.get("paper_count") is not None else None,
            f"Trending rank: {item['trending_rank']}" if item.get("trending_rank") is not None else None,
            "Featured" if item.get("is_featured") is True else None]
    years = paper_years(item)
    _write_blocks(out, [" · ".join(p for p in meta if p), f"Paper years: {years}" if years else None,
                        _text(item.get("description")), _link("Website", item.get("website_url"), out),
                        _link("GitHub", item.get("github_url"), out), _link("Hugging Face", item.get("hf_url"), out),
                        entity_link("View organization",
                                    site_url("organization", item.get("slug"), item.get("id")), out)])


def paper_years(item: Mapping[str, object]) -> str | None:
    """``first–latest`` paper year of an organization (either alone), or None."""
    years = [str(y) for y in (item.get("first_paper_year"), item.get("latest_paper_year")) if y is not None]
    return "–".join(years) or None


def run_organization_list(args: argparse.Namespace, client: Client) -> object:
    """The raw ``organizations/`` response (``featured_only`` always sent)."""
    return client.get_json("organizations/", {"featured_only": args.featured_only})


def render_organization_list(payload: object, args: argparse.Namespace, out: Output) -> None:
    """Table ``id, slug, name, papers, featured, trend_rank``; never a ``--page`` hint (quirk fix)."""
    write_table(out, *organization_table(payload), right=("papers", "trend_rank"))


def organization_table(payload: object) -> tuple[list[str], list[list[object]]]:
    """Headers and rows of the organization table (shared with the MCP text)."""
    return (["id", "slug", "name", "papers", "featured", "trend_rank"],
            [[o.get("id"), o.get("slug"), o.get("name"), o.get("paper_count"),
              "yes" if o.get("is_featured") else "no", o.get("trending_rank")] for o in result_list(payload)])


# ---------------------------------------------------------------- frameworks


def flatten_frameworks(payload: object) -> list[JsonObject]:
    """One dict per framework of the nested ``frameworks/`` catalogue, plus domain/category slug and name.

    Raises ``ResponseError`` when there is no ``domains`` list (§2.14).
    """
    domains = payload.get("domains") if isinstance(payload, dict) else None
    if not isinstance(domains, list):
        raise ResponseError("framework catalog returned an unexpected response shape")
    flat: list[JsonObject] = []
    for domain in json_objects(domains):
        for category in json_objects(domain.get("categories")):
            for framework in json_objects(category.get("frameworks")):
                flat.append({**framework, "domain_slug": domain.get("slug"), "domain_name": domain.get("name"),
                             "category_slug": category.get("slug"), "category_name": category.get("name")})
    return flat


def run_framework(args: argparse.Namespace, client: Client) -> JsonObject:
    """The flattened framework matching ``--name`` exactly (name, slug, id)."""
    name = required_name(args.name, "framework")
    items = flatten_frameworks(client.get_json("frameworks/"))
    match = find_exact(items, name, ENTITY_FIELDS)
    if match is None:
        raise not_found("Framework", name, items)
    return match


def render_framework(item: JsonObject, args: argparse.Namespace, out: Output) -> None:
    """Heading, domain · category · organization · papers, description, usage, platforms and links (§2.14)."""
    out.line(heading(item.get("name"), out))
    meta = [item.get("domain_name"), item.get("category_name"), item.get("organization_name"),
            f"{thousands(item['paper_count'])} papers" if item.get("paper_count") is not None else None]
    arxiv = item.get("introducing_paper_arxiv_id")
    platforms = framework_platforms(item)
    _write_blocks(out, [" · ".join(str(p) for p in meta if p), _text(item.get("description")),
                        f"When to use: {_text(item['when_to_use'])}" if item.get("when_to_use") else None,
                        f"Platforms: {platforms}" if platforms else None,
                        _link("GitHub", item.get("github_url"), out),
                        _link("Documentation", item.get("docs_url"), out),
                        _link(f"Introducing paper {arxiv}", site_url("paper", arxiv), out) if arxiv else None,
                        entity_link("View framework", site_url("framework", item.get("slug"), item.get("id")), out)])


def _casefold_in(value: str | None, *candidates: object) -> bool:
    return value is None or value.strip().casefold() in {str(c).casefold() for c in candidates if c is not None}


def run_framework_list(args: argparse.Namespace, client: Client) -> EntityList:
    """``{"count", "results"}`` of flattened frameworks filtered by domain, category and platform."""
    rows = [f for f in flatten_frameworks(client.get_json("frameworks/"))
            if _casefold_in(args.domain, f.get("domain_slug"), f.get("domain_name"))
            and _casefold_in(args.category, f.get("category_slug"), f.get("category_name"))
            and _casefold_in(args.platform, *json_list(f.get("platforms")))]
    return {"count": len(rows), "results": rows}


def render_framework_list(payload: EntityList, args: argparse.Namespace, out: Output) -> None:
    """Table ``id, slug, name, domain, category, platforms, papers`` (domain and category slugs)."""
    write_table(out, *framework_table(payload), right=("papers",))


def framework_platforms(item: Mapping[str, object]) -> str:
    """The platforms, comma-separated (empty when none)."""
    platforms = item.get("platforms")
    return ", ".join(str(p) for p in platforms) if isinstance(platforms, list) else ""


def framework_table(payload: object) -> tuple[list[str], list[list[object]]]:
    """Headers and rows of the framework table (shared with the MCP text)."""
    return (["id", "slug", "name", "domain", "category", "platforms", "papers"],
            [[f.get("id"), f.get("slug"), f.get("name"), f.get("domain_slug"), f.get("category_slug"),
              framework_platforms(f), f.get("paper_count")] for f in result_list(payload)])

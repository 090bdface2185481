"""What data the catalog serves, as the MCP server shows it (issue 29 item 4).

The self-hosted catalog answers ``GET catalog`` with its provenance record (``catalog/db/provenance.py``):
where its data came from, the license, the newest paper date, the hub datasets and revisions, the
embedding model. `parse_data_source` turns that answer into one `DataSource`, the one value the
gateway hands to every surface that shows it: ``/health``, ``/.well-known/mcp``, ``/docs``
(`DataSource.summary`) and one line of the agent instructions (`DataSource.instructions_line`).

The record comes from the network, and the instructions line reaches every agent's context, so
nothing free-form from it is passed on: the kind picks a fixed wording, and each value is kept only
when it matches its expected shape (a date, a short license name, a hub id, a commit hash).
Anything else reads as "provenance unknown" (`parse_data_source` returns None): an older catalog
import, or an upstream that is not this project's catalog.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final, Literal

import httpx

from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue

__all__ = ["MAX_DATA_BYTES", "UNKNOWN_SUMMARY", "DataSource", "DatasetRevision", "fetch_data_source",
           "parse_data_source"]

MAX_DATA_BYTES: Final = 1 << 20  # the catalog's record is tens of KiB; anything larger is not it

Kind = Literal["archive", "sample", "other"]

_TITLES: Final[dict[Kind, str]] = {
    "archive": "Papers With Code archive",
    "sample": "Bundled sample catalog",
    "other": "Imported files",
}
_KINDS: Final[dict[str, Kind]] = {"archive": "archive", "sample": "sample", "other": "other"}
_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIMESTAMP: Final = re.compile(r"\d{4}-\d{2}-\d{2}([T ][0-9:.]{5,15})?(Z|[+-]\d{2}:\d{2})?")
_LICENSE: Final = re.compile(r"[A-Za-z][A-Za-z0-9 .+-]{0,31}")
_DATASET: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")
_REVISION: Final = re.compile(r"[0-9a-f]{7,64}")
_MODEL: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
MAX_DATASETS: Final = 16

UNKNOWN_SUMMARY: Final[JsonObject] = {"provenance": "unknown"}
"""What the surfaces show when the catalog does not say where its data came from."""


@dataclass(frozen=True, slots=True)
class DatasetRevision:
    """One hub dataset the catalog was imported from, and its commit when known."""

    id: str
    revision: str | None


@dataclass(frozen=True, slots=True)
class DataSource:
    """Where the served catalog's data came from (validated; see the module doc)."""

    kind: Kind
    license: str | None = None
    latest_paper: str | None = None
    imported_at: str | None = None
    datasets: tuple[DatasetRevision, ...] = ()
    embedding_model: str | None = None

    @property
    def title(self) -> str:
        """The fixed display name of the kind."""
        return _TITLES[self.kind]

    def summary(self) -> JsonObject:
        """The JSON object ``/health``, ``/.well-known/mcp`` and ``/docs`` show under ``data``."""
        return {
            "provenance": "recorded",
            "kind": self.kind,
            "title": self.title,
            "license": self.license,
            "latest_paper": self.latest_paper,
            "imported_at": self.imported_at,
            "datasets": [{"id": d.id, "revision": d.revision} for d in self.datasets],
            "embedding_model": self.embedding_model,
        }

    def instructions_line(self) -> str:
        """One short sentence for the agent instructions."""
        if self.kind == "sample":
            return "Data: the bundled sample catalog (a few dozen real-shaped records for trying the server), " \
                   "not the Papers With Code archive."
        until = f" (papers up to {self.latest_paper})" if self.latest_paper else ""
        if self.kind == "archive":
            return f"Data: Papers With Code archive snapshot{until}, {self.license or 'license unknown'}."
        return f"Data: imported files{until}; their origin and license are unknown."


def _text(value: JsonValue, pattern: re.Pattern[str]) -> str | None:
    return value if isinstance(value, str) and pattern.fullmatch(value) else None


def _datasets(value: JsonValue) -> tuple[DatasetRevision, ...]:
    found: list[DatasetRevision] = []
    for item in value[:MAX_DATASETS] if isinstance(value, list) else []:
        if isinstance(item, dict) and (dataset := _text(item.get("id"), _DATASET)) is not None:
            found.append(DatasetRevision(dataset, _text(item.get("revision"), _REVISION)))
    return tuple(found)


def parse_data_source(payload: JsonValue) -> DataSource | None:
    """The `DataSource` of a catalog's ``GET catalog`` answer; None when provenance is unknown."""
    if not isinstance(payload, dict) or payload.get("provenance") != "recorded":
        return None
    raw_kind = payload.get("kind")
    kind = _KINDS.get(raw_kind) if isinstance(raw_kind, str) else None
    if kind is None:
        return None
    embedding = payload.get("embedding")
    return DataSource(
        kind=kind,
        license=_text(payload.get("license"), _LICENSE),
        latest_paper=_text(payload.get("latest_paper"), _DATE),
        imported_at=_text(payload.get("imported_at"), _TIMESTAMP),
        datasets=_datasets(payload.get("datasets")),
        embedding_model=_text(embedding.get("model"), _MODEL) if isinstance(embedding, dict) else None,
    )


async def fetch_data_source(client: httpx.AsyncClient, api_url: str) -> DataSource | None:
    """One ``GET {api_url}/catalog``, read up to :data:`MAX_DATA_BYTES`: the catalog's `DataSource`,
    or None when it answers but records no provenance (another status, a larger or non-JSON body).

    Raises:
        httpx.HTTPError: the catalog did not answer (the caller keeps what it had).
    """
    async with client.stream("GET", api_url.rstrip("/") + "/catalog") as response:
        body = b""
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_DATA_BYTES:
                return None
    if response.status_code != 200:
        return None
    try:
        return parse_data_source(json.loads(body))
    except ValueError:
        return None

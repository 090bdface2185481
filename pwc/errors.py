"""The `pwc` error tree; each class carries the CLI exit code it maps to.

Tree (``docs/cli-contract.md`` §5)::

    PwcError                      exit 1 (never raised directly)
    ├── UsageError                exit 2  bad flags or flag combinations
    ├── TransportError            exit 3  network failure: "API request failed: <reason>"
    │   ├── RequestTimeout        exit 3  connect or read timeout (every timeout is 3)
    │   └── HTTPStatusError       exit 3  "API request failed (<status>): <detail>"
    └── ResponseError             exit 4  invalid JSON, byte limit, shape, fail-closed checks
        ├── NotFoundError         exit 4  "<Entity> not found: …", "Paper title not found: …"
        │   └── AreaNotFoundError exit 4  "Area not found: …; available areas: …"
        └── AmbiguousError        exit 4  "Paper title is ambiguous: …"
"""

from __future__ import annotations

__all__ = [
    "AmbiguousError",
    "AreaNotFoundError",
    "HTTPStatusError",
    "NotFoundError",
    "PwcError",
    "RequestTimeout",
    "ResponseError",
    "TransportError",
    "UsageError",
]


class PwcError(Exception):
    """Root of every error the `pwc` handlers raise on purpose; `str(err)` is the user message."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(PwcError):
    """The arguments are wrong; nothing (or nothing further) was sent upstream. Exit 2."""

    exit_code = 2


class TransportError(PwcError):
    """The catalog could not be reached or answered with an HTTP error. Exit 3."""

    exit_code = 3


class RequestTimeout(TransportError):
    """Connect or read timeout talking to the catalog. Exit 3."""


class HTTPStatusError(TransportError):
    """The catalog answered with a non-2xx status.

    Attributes:
        status: the HTTP status code.
        detail: at most 4096 characters of the body, decoded as UTF-8 with replacement.
    """

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"API request failed ({status}): {detail}")
        self.status = status
        self.detail = detail


class ResponseError(PwcError):
    """The catalog's answer is unusable or a lookup failed. Exit 4."""

    exit_code = 4


class NotFoundError(ResponseError):
    """A named entity, title or reference does not exist in the catalog. Exit 4."""


class AreaNotFoundError(NotFoundError):
    """An area filter names no area. Exit 4.

    Attributes:
        query: the area as given.
        areas: every area the catalog listed (``{"id", "name", "slug"}`` dicts), for suggestions.
    """

    def __init__(self, message: str, query: str, areas: list[dict[str, object]]) -> None:
        super().__init__(message)
        self.query = query
        self.areas = areas


class AmbiguousError(ResponseError):
    """A title or name matches several records and the CLI refuses to pick one. Exit 4."""

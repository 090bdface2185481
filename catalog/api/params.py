"""Query-parameter parsing for the catalog routes: every bad value is a 422 ``Invalid``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date

from catalog.store.core import Invalid, Page

__all__ = ["Params"]

MAX_PAGE = 10_000
_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})


REQUEST_LINE_LIMIT = 32 * 1024
"""Longest request line the server reads (aiohttp's own default is 8,190 bytes and answers
longer ones with a plain-text 400): a too-long ``q`` then reaches :meth:`Params.text` and
gets the JSON 422 that names the limit."""

class Params:
    """Typed accessors over a request's query (a multidict, or any mapping).

    Every accessor raises :class:`catalog.store.core.Invalid` (HTTP 422) with a
    message naming the parameter, never a generic error.
    """

    def __init__(self, query: Mapping[str, str]) -> None:
        self.query = query

    def _raw(self, name: str) -> str | None:
        value = self.query.get(name)
        if value is None:
            return None
        value = value.strip()
        return value or None

    def text(self, name: str, *, required: bool = False, max_len: int = 500) -> str | None:
        """A stripped string (None when absent or blank unless ``required``)."""
        value = self._raw(name)
        if value is None:
            if required:
                raise Invalid(f"{name} is required")
            return None
        if len(value) > max_len:
            raise Invalid(f"{name} must be at most {max_len} characters")
        return value

    def integer(self, name: str, default: int | None, lo: int, hi: int) -> int | None:
        """An integer in ``[lo, hi]`` (``default`` when absent)."""
        value = self._raw(name)
        if value is None:
            return default
        try:
            number = int(value)
        except ValueError:
            raise Invalid(f"{name} must be an integer") from None
        if not lo <= number <= hi:
            raise Invalid(f"{name} must be {lo}-{hi}")
        return number

    def number(self, name: str, lo: float = 0.0, hi: float = 1e12) -> float | None:
        """A finite float in ``[lo, hi]`` or None."""
        value = self._raw(name)
        if value is None:
            return None
        try:
            number = float(value)
        except ValueError:
            raise Invalid(f"{name} must be a number") from None
        if not math.isfinite(number) or not lo <= number <= hi:
            raise Invalid(f"{name} must be a number between {lo:g} and {hi:g}")
        return number

    def boolean(self, name: str, default: bool | None) -> bool | None:
        """``true``/``false`` (also 1/0, yes/no; case-insensitive)."""
        value = self._raw(name)
        if value is None:
            return default
        lowered = value.casefold()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise Invalid(f"{name} must be true or false")

    def iso_date(self, name: str) -> str | None:
        """An ISO 8601 date, returned as ``YYYY-MM-DD``."""
        value = self._raw(name)
        if value is None:
            return None
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError:
            raise Invalid(f"{name} must be an ISO date (YYYY-MM-DD)") from None

    def date_range(self) -> tuple[str | None, str | None]:
        """``start_date``/``end_date``; start after end is invalid."""
        start, end = self.iso_date("start_date"), self.iso_date("end_date")
        if start and end and start > end:
            raise Invalid("start_date must be on or before end_date")
        return start, end

    def choice(self, name: str, default: str, allowed: tuple[str, ...] | frozenset[str]) -> str:
        """One of ``allowed`` (exact)."""
        value = self._raw(name) or default
        if value not in allowed:
            raise Invalid(f"{name} must be one of: {', '.join(sorted(allowed))}")
        return value

    def ordering(self, default: str, allowed: Mapping[str, str] | tuple[str, ...], name: str = "ordering") -> str:
        """A field name, optionally prefixed with ``-`` for descending."""
        value = self._raw(name) or default
        if value.lstrip("-") not in allowed or value.startswith("--"):
            raise Invalid(f"unknown {name}: expected one of {', '.join(sorted(allowed))} (prefix - for descending)")
        return value

    def page(self, default_size: int, max_size: int = 100) -> Page:
        """``page`` (1-10000) and ``page_size`` (1-``max_size``)."""
        number = self.integer("page", 1, 1, MAX_PAGE)
        size = self.integer("page_size", default_size, 1, max_size)
        assert number is not None and size is not None
        return Page(number, size)

    def repeated(self, name: str) -> list[str]:
        """All values of a repeated parameter (``author=a&author=b``)."""
        getall = getattr(self.query, "getall", None)
        if getall is None:
            single = self.query.get(name)
            return [] if single is None else [single]
        return list(getall(name, []))

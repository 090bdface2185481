"""The paper filters every paper query shares: a date range on ``published`` and official code.

One definition, read three ways: as SQL by the paper list and by search (:meth:`PaperFilters.sql`),
as masks over the semantic index's per-row columns (``catalog.search.vectors``), and as the
``applied_filters`` a response echoes (:meth:`PaperFilters.applied`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PaperFilters", "date_key"]


def date_key(value: str | None) -> int:
    """``YYYY-MM-DD`` (or a prefix) as an int ``YYYYMMDD``; 0 when absent or unparsable."""
    if not value:
        return 0
    digits = value[:10].replace("-", "")
    return int(digits.ljust(8, "0")) if digits.isdigit() else 0


@dataclass(frozen=True)
class PaperFilters:
    """Inclusive ``start_date``/``end_date`` on ``published`` and ``has_official_implementation``."""

    start_date: str | None = None
    end_date: str | None = None
    official: bool | None = None

    @property
    def active(self) -> bool:
        """Whether any filter is set."""
        return bool(self.start_date or self.end_date or self.official is not None)

    def _terms(self, published: str) -> list[tuple[str, str, str | None]]:
        """(name, SQL condition with ``{}`` for the placeholder, argument) of each set filter."""
        terms: list[tuple[str, str, str | None]] = []
        if self.start_date:
            terms.append(("start_date", f"{published} >= {{}}", self.start_date))
        if self.end_date:
            terms.append(("end_date", f"{published} <= {{}}", self.end_date))
        if self.official is not None:
            terms.append(("official", f"p.has_official_implementation = {1 if self.official else 0}", None))
        return terms

    def sql(self, published: str = "p.published") -> tuple[list[str], list[str]]:
        """WHERE terms with ``?`` placeholders and their arguments; ``published`` is the date term."""
        terms = self._terms(published)
        return [cond.format("?") for _, cond, _ in terms], [arg for _, _, arg in terms if arg is not None]

    def named_sql(self, published: str = "p.published") -> tuple[list[str], dict[str, str]]:
        """Like :meth:`sql` with ``:start_date``/``:end_date`` placeholders, for named-argument queries."""
        terms = self._terms(published)
        return ([cond.format(f":{name}") for name, cond, _ in terms],
                {name: arg for name, _, arg in terms if arg is not None})

    def applied(self) -> dict[str, str]:
        """The filters as a response echoes them: ISO dates and ``"true"``/``"false"``, set ones only."""
        applied: dict[str, str] = {}
        if self.start_date:
            applied["start_date"] = self.start_date
        if self.end_date:
            applied["end_date"] = self.end_date
        if self.official is not None:
            applied["has_official_implementation"] = "true" if self.official else "false"
        return applied

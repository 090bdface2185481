"""Per-source import counters and the malformed-record reasons to print."""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_REASONS = 5  # only the first few skip reasons are printed per source


@dataclass
class SourceStats:
    """Counts for one source: records read, inserted, updated, skipped."""

    name: str
    kind: str
    read: int = 0
    inserted: int = 0
    updated: int = 0
    skipped: int = 0
    reasons: list[str] = field(default_factory=list)
    ignored_columns: list[str] = field(default_factory=list)  # unknown parquet columns

    def skip(self, where: str, reason: str) -> None:
        """Count a malformed record; keep the first few reasons (``where``: record position)."""
        self.skipped += 1
        if len(self.reasons) < MAX_REASONS:
            self.reasons.append(f"{where}: {reason}")

    def wrote(self, created: bool) -> None:
        """Count one written record as inserted (new natural key) or updated."""
        if created:
            self.inserted += 1
        else:
            self.updated += 1

    def summary(self) -> str:
        """One line: ``<name> (<kind>): read N, inserted N, updated N, skipped N``
        (then ``, ignored N unknown columns (a, b)`` when a shard had any)."""
        ignored = (f", ignored {len(self.ignored_columns)} unknown column"
                   f"{'s' if len(self.ignored_columns) != 1 else ''} "
                   f"({', '.join(self.ignored_columns)})" if self.ignored_columns else "")
        return (f"{self.name} ({self.kind}): read {self.read}, inserted {self.inserted}, "
                f"updated {self.updated}, skipped {self.skipped}{ignored}")

"""Per-source import counters and the malformed-record reasons to print.

What each counter of a source's summary line means:

* ``read``: records read from the source. For evaluation tables every task,
  subtask, dataset, subdataset and leaderboard row counts as one record.
  A dataset (or subdataset) record of a task is that task's leaderboard on it: it
  counts as inserted when the catalog did not link the two before, as updated when
  it did (the dataset itself may come from the datasets source just before).
* ``inserted``: rows new to the catalog. A row that an earlier source of the
  same import created only as a bare reference (a task named by a paper, a
  method listed in a paper, a paper named by a leaderboard row) and that this
  source describes in full counts here too: before this source it was a name.
* ``updated``: rows the catalog already held in full (from an earlier import
  or an earlier source of this one) that this source wrote again.
* ``skipped``: malformed records left out; the first few reasons are printed.
* ``cut N oversized fields`` (only when N > 0): string fields longer than their
  bound (:mod:`catalog.importer.limits`) that were cut, or dropped for URLs;
  the record itself was imported.
* ``N papers kept apart`` (only when N > 0): records whose ``paper_url`` names
  a catalog paper that carries another arXiv id; they were stored as papers of
  their own instead of overwriting that paper's arXiv id.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_REASONS = 5  # only the first few skip reasons are printed per source


@dataclass
class SourceStats:
    """Counts for one source: records read, inserted, updated, skipped (see module doc)."""

    name: str
    kind: str
    read: int = 0
    inserted: int = 0
    updated: int = 0
    skipped: int = 0
    cut: int = 0
    kept_apart: int = 0
    reasons: list[str] = field(default_factory=list)
    ignored_columns: list[str] = field(default_factory=list)  # unknown parquet columns
    cut_reasons: list[str] = field(default_factory=list)

    def skip(self, where: str, reason: str) -> None:
        """Count a malformed record; keep the first few reasons (``where``: record position)."""
        self.skipped += 1
        if len(self.reasons) < MAX_REASONS:
            self.reasons.append(f"{where}: {reason}")

    def cut_field(self, where: str, reason: str) -> None:
        """Count an oversized field that was cut or dropped; keep the first few reasons."""
        self.cut += 1
        if len(self.cut_reasons) < MAX_REASONS:
            self.cut_reasons.append(f"{where}: {reason}")

    def wrote(self, created: bool) -> None:
        """Count one written record as inserted (new natural key) or updated."""
        if created:
            self.inserted += 1
        else:
            self.updated += 1

    def summary(self) -> str:
        """One line: ``<name> (<kind>): read N, inserted N, updated N, skipped N`` (+ notes:
        unknown parquet columns ignored, oversized fields cut, papers kept apart)."""
        line = (f"{self.name} ({self.kind}): read {self.read}, inserted {self.inserted}, "
                f"updated {self.updated}, skipped {self.skipped}")
        if self.ignored_columns:
            line += (f", ignored {len(self.ignored_columns)} unknown column"
                     f"{'s' if len(self.ignored_columns) != 1 else ''} "
                     f"({', '.join(self.ignored_columns)})")
        if self.cut:
            line += f"; cut {self.cut} oversized fields"
        if self.kept_apart:
            line += (f"; {self.kept_apart} papers kept apart (their paper_url names a paper "
                     "with another arXiv id)")
        return line

"""Abstracts cut short for result lists: at a sentence end within a character budget.

``pwc search --abstracts`` and ``search_papers include_abstracts`` show each
result's abstract this way (docs/cli-contract.md §2.1). Sentence ends are found
with a small rule (``.``, ``!`` or ``?`` before whitespace and a capital, digit
or opening bracket), skipping common abbreviations ("e.g.", "et al."), which is
enough for a preview: a cut made early by a missed rule is still under budget.
"""

from __future__ import annotations

import re

__all__ = ["ABSTRACT_CHARS", "ELLIPSIS", "cut_abstract"]

ABSTRACT_CHARS = 300
ELLIPSIS = " …"
_END = re.compile(r"[.!?][)\"'\]]*(?=\s+[A-Z0-9(\[\"'])")
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|et al|etc|vs|cf|fig|figs|eq|sec|approx|resp|no|dr|mr|ms)|\b[A-Z])\.$",
                           re.IGNORECASE)


def cut_abstract(text: str, budget: int = ABSTRACT_CHARS) -> tuple[str, bool]:
    """``text`` on one line, cut to at most ``budget`` characters, and whether it was cut.

    A cut text ends at the last sentence end that leaves room for `ELLIPSIS` (when that keeps at
    least a third of the budget), else at the last word boundary, and then carries the ellipsis.
    """
    flat = " ".join(text.split())
    if len(flat) <= budget:
        return flat, False
    room = budget - len(ELLIPSIS)
    end = 0
    for match in _END.finditer(flat, 0, room + 1):
        stop = match.end()
        if stop > room:
            break
        if not _ABBREVIATION.search(flat[:stop]):
            end = stop
    if end < budget // 3:
        space = flat.rfind(" ", 0, room + 1)
        end = space if space > 0 else room
    return flat[:end].rstrip() + ELLIPSIS, True

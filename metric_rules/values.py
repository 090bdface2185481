"""The one parser of metric values: what number a reported metric value stands for.

Rule (docs/cli-contract.md §3.5): numbers as they are; strings stripped, ``,`` removed and one
trailing ``%`` dropped, then parsed as floats; a number with a magnitude suffix K, M, B (or G)
or T, any case, stands for its count ("632M" is 632e6). Only finite values count: NaN and
infinities (as floats or as text such as ``"nan"`` or ``"-inf%"``) have no value, and neither have
bools, placeholders such as ``"—"`` or anything else.

The CLI (``pwc.leaderboard``: selection, thresholds, Pareto, sorting, history) and the catalog's
importer (``catalog.importer.ranking``: ``best_rank``) both read values here, so a row the CLI
compares is a row the catalog ranks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Final, TypeVar

__all__ = ["find_metric", "metric_magnitude", "metric_number"]

# A count with a magnitude suffix as leaderboards report sizes: 632M, 1.2B, 340K, 13B, 1.5T, 4.4G.
_MAGNITUDE_RE: Final = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s?([kmbgt])", re.IGNORECASE)
_Key = TypeVar("_Key")  # str from the catalog, object from JSON the CLI has not narrowed
_MAGNITUDE: Final = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}


def _finite(number: float) -> float | None:
    return number if math.isfinite(number) else None


def metric_number(value: object) -> float | None:
    """The finite number one metric value stands for, without magnitude suffixes, else None.

    >>> metric_number("84.4%"), metric_number(" 1,024 "), metric_number(3), metric_number("nan")
    (84.4, 1024.0, 3.0, None)
    >>> metric_number(True), metric_number("—"), metric_number(float("inf")), metric_number("632M")
    (None, None, None, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        try:
            return _finite(float(value))
        except OverflowError:  # an int beyond the float range
            return None
    if isinstance(value, float):
        return _finite(value)
    if isinstance(value, str):
        text = value.strip().replace(",", "")
        text = text[:-1] if text.endswith("%") else text
        try:
            return _finite(float(text))
        except ValueError:
            return None
    return None


def metric_magnitude(value: object) -> float | None:
    """:func:`metric_number`, else a count with a magnitude suffix K, M, B (or G) or T, any case.

    >>> metric_magnitude("632M"), metric_magnitude("1.2B"), metric_magnitude("340k"), metric_magnitude("1,500M")
    (632000000.0, 1200000000.0, 340000.0, 1500000000.0)
    >>> metric_magnitude("M"), metric_magnitude("1.2.3B"), metric_magnitude("12 parameters")
    (None, None, None)
    """
    number = metric_number(value)
    if number is not None or not isinstance(value, str):
        return number
    match = _MAGNITUDE_RE.fullmatch(value.strip().replace(",", ""))
    if match is None:
        return None
    return _finite(float(match.group(1)) * _MAGNITUDE[match.group(2).lower()])


def find_metric(metrics: Mapping[_Key, object], name: str) -> tuple[bool, object]:
    """``(reported, raw value)`` of metric ``name`` in one result's metrics: the exact name first,
    then the first name equal to it ignoring case ("Top-1 accuracy" finds "Top-1 Accuracy").

    >>> find_metric({"Top-1 Accuracy": "88.5%"}, "top-1 accuracy"), find_metric({"FID": 2.1}, "IS")
    ((True, '88.5%'), (False, None))
    """
    for key, value in metrics.items():
        if key == name:
            return True, value
    folded = name.casefold()
    for key, value in metrics.items():
        if str(key).casefold() == folded:
            return True, value
    return False, None

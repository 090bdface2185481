"""argparse types shared by the command modules (on the library floor, so a command never imports the CLI)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["PAGE_MAX", "int_range"]

PAGE_MAX = 100
"""The highest ``--page`` any command takes (§1.1)."""


def int_range(flag: str, low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type`` for an integer in ``[low, high]``; out of range → ``<flag> must be <low>-<high>``."""

    def parse(text: str) -> int:
        value = int(text)  # ValueError → argparse's "invalid int value: 'abc'"
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{flag} must be {low}-{high}")
        return value

    parse.__name__ = "int"
    return parse

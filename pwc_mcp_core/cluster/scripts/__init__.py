"""The Lua scripts pwc-mcp runs in Redis, shipped as ``.lua`` files beside this module.

``load(name)`` returns a script's source; callers run it by SHA with explicit
KEYS/ARGV (docs/style.md §7 practice 2). A line ``--!include other.lua`` is replaced by
that file's source, so scripts that must each stay one atomic step can share code
(``admit.lua`` and ``admit_enqueue.lua`` share ``admission.lua``).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Final

__all__ = ["load"]

_INCLUDE: Final = "--!include "


@cache
def load(name: str) -> str:
    """Return the source of ``<name>.lua`` (e.g. ``load("admit")``), includes expanded.

    Raises:
        FileNotFoundError: no such script (or included file) is bundled.
    """
    return _expand(f"{name}.lua", ())


def _expand(filename: str, seen: tuple[str, ...]) -> str:
    if filename in seen:
        raise ValueError(f"include cycle: {' -> '.join((*seen, filename))}")
    text = resources.files(__name__).joinpath(filename).read_text(encoding="utf-8")
    return "".join(_expand(line[len(_INCLUDE):].strip(), (*seen, filename)) if line.startswith(_INCLUDE) else line
                   for line in text.splitlines(keepends=True))

"""The Lua scripts pwc-mcp runs in Redis, shipped as ``.lua`` files beside this module.

``load(name)`` returns a script's source; callers register it once per client
with ``redis.register_script`` and pass explicit KEYS/ARGV (style.md §7 practice 2).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

__all__ = ["load"]


@cache
def load(name: str) -> str:
    """Return the source of ``<name>.lua`` (e.g. ``load("admit")``).

    Raises:
        FileNotFoundError: no such script is bundled.
    """
    return resources.files(__name__).joinpath(f"{name}.lua").read_text(encoding="utf-8")

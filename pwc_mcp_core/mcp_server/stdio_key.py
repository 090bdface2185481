"""The cursor key `pwc-mcp stdio` keeps in the user's state directory when none is configured.

Some MCP clients start one server process per call (langchain-mcp-adapters does),
so a per-process random key would make the second ``read_paper`` chunk fail with
"invalid continuation cursor". Without ``PWC_MCP_CURSOR_KEY_CURRENT`` the stdio
server therefore creates one random key once and reuses it:

* path: ``platformdirs.user_state_path("pwc-mcp") / "cursor-key"`` (on Linux
  ``$XDG_STATE_HOME/pwc-mcp/cursor-key``, default ``~/.local/state/pwc-mcp/``);
* the directory is created ``0700``, the file ``0600``;
* creation is atomic: the key is written to a private temporary file that is then
  hard-linked to the final name, so a concurrent process either wins the link or
  reads the complete key of the one that did; nobody ever reads a half-written file.

A configured key always wins; the HTTP server never uses this file (it refuses to
start without a configured key).
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import Final

import platformdirs

__all__ = ["KEY_FILE_NAME", "MIN_KEY_CHARS", "default_key_path", "load_or_create_key"]

KEY_FILE_NAME: Final = "cursor-key"
MIN_KEY_CHARS: Final = 32
"""A stored key shorter than this (truncated, emptied) is replaced by a new one."""


def default_key_path() -> Path:
    """``user_state_path("pwc-mcp") / "cursor-key"`` (not created)."""
    return platformdirs.user_state_path("pwc-mcp", appauthor=False) / KEY_FILE_NAME


def _read(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (UnicodeDecodeError, ValueError):
        return None
    return text if len(text) >= MIN_KEY_CHARS else None


def _write_private(directory: Path, key: str) -> Path:
    """A new ``0600`` file in ``directory`` holding ``key``, flushed to disk."""
    tmp = directory / f".{KEY_FILE_NAME}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (key + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return tmp


def load_or_create_key(path: Path | None = None) -> str:
    """The stored key at ``path`` (default `default_key_path`), created on first use.

    Returns:
        The key text (URL-safe base64, 43 characters when created here).

    Raises:
        OSError: the directory or file cannot be created or read (read-only home, …);
            the caller falls back to an ephemeral key.
    """
    path = default_key_path() if path is None else path
    existing = _read(path)
    if existing is not None:
        if stat.S_IMODE(path.stat().st_mode) & 0o077:
            os.chmod(path, 0o600)  # our own secret: never readable by others
        return existing
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = _write_private(path.parent, secrets.token_urlsafe(32))
    try:
        try:
            os.link(tmp, path)  # atomic, and fails if another process got there first
        except FileExistsError:
            winner = _read(path)
            if winner is not None:
                return winner
            os.replace(tmp, path)  # the existing file is unusable (empty, truncated): replace it
        return _read_created(path)
    finally:
        tmp.unlink(missing_ok=True)


def _read_created(path: Path) -> str:
    key = _read(path)
    if key is None:
        raise OSError(f"the cursor key file could not be read back: {path}")
    return key

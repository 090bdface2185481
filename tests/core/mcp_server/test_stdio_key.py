"""`pwc-mcp stdio` keeps one cursor key in the user's state directory (issue 12 item 6).

The end-to-end test runs two separate `pwc-mcp stdio` processes with the official
SDK client against the sample catalog over HTTP: a cursor from the first process
continues the reading in the second.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import PromptReference

from pwc_mcp_core.mcp_server.stdio import _with_stored_key
from pwc_mcp_core.mcp_server.stdio_key import KEY_FILE_NAME, default_key_path, load_or_create_key

REPO_ROOT = Path(__file__).resolve().parents[3]
PWC_MCP = Path(sys.executable).parent / "pwc-mcp"


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


def test_the_key_is_created_once_private_and_reused(state_home: Path) -> None:
    path = default_key_path()
    assert path == state_home / "pwc-mcp" / KEY_FILE_NAME
    key = load_or_create_key()
    assert len(key) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert load_or_create_key() == key
    assert [p.name for p in path.parent.iterdir()] == [KEY_FILE_NAME]  # no temporary file left


def test_concurrent_first_uses_agree_on_one_key(tmp_path: Path) -> None:
    path = tmp_path / "state" / KEY_FILE_NAME
    with ThreadPoolExecutor(8) as pool:
        keys = set(pool.map(lambda _: load_or_create_key(path), range(32)))
    assert keys == {path.read_text().strip()}


def test_an_unusable_stored_key_is_replaced_and_an_open_mode_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / KEY_FILE_NAME
    path.write_text("short")
    key = load_or_create_key(path)
    assert len(key) >= 32 and path.read_text().strip() == key
    os.chmod(path, 0o644)
    assert load_or_create_key(path) == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_configured_key_wins_and_touches_no_file(state_home: Path) -> None:
    environ, error = _with_stored_key({"PWC_MCP_CURSOR_KEY_CURRENT": "configured-key"})
    assert environ["PWC_MCP_CURSOR_KEY_CURRENT"] == "configured-key" and error is None
    assert not state_home.exists()


def test_an_unusable_state_directory_falls_back_to_an_ephemeral_key(state_home: Path) -> None:
    state_home.parent.mkdir(exist_ok=True)
    state_home.write_text("a file where the directory should be")
    environ, error = _with_stored_key({})
    assert "PWC_MCP_CURSOR_KEY_CURRENT" not in environ and error is not None


def stdio_params(catalog_url: str, home: Path) -> StdioServerParameters:
    env = {"PWC_API_URL": catalog_url, "LOG_LEVEL": "WARNING", "PWC_MCP_CHUNK_BYTES": "1024",
           "HOME": str(home), "XDG_STATE_HOME": str(home / "state"), "PATH": os.environ.get("PATH", "")}
    return StdioServerParameters(command=str(PWC_MCP), args=["stdio"], cwd=str(REPO_ROOT), env=env)


async def test_a_cursor_from_one_stdio_process_continues_in_another(catalog_url: str, tmp_path: Path) -> None:
    params = stdio_params(catalog_url, tmp_path)
    async with asyncio.timeout(60):
        async with Client(params, mode="legacy") as first:
            chunk1 = (await first.call_tool("read_paper", {"paper": "1706.03762"})).structured_content
            # Completion from the catalog works over stdio too (its executor is the process's thread pool).
            completed = await first.complete(PromptReference(type="ref/prompt", name="survey_task"),
                                             {"name": "task", "value": "Constituency Parsin"})
            assert completed.completion.values == ["Constituency Parsing"]
        async with Client(params, mode="legacy") as second:
            result = await second.call_tool("read_paper", {"paper": "1706.03762", "cursor": chunk1["next_cursor"]})
    assert chunk1["truncated"] and chunk1["next_cursor"]
    assert not result.is_error, result.content
    chunk2 = result.structured_content
    assert chunk2["offset"] == chunk1["next_offset"] and chunk2["content_version"] == chunk1["content_version"]
    assert stat.S_IMODE((tmp_path / "state" / "pwc-mcp" / KEY_FILE_NAME).stat().st_mode) == 0o600

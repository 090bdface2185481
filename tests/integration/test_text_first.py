"""A text-first client's view: only the ``content`` text blocks, through the real server over HTTP.

Clients such as langchain-mcp-adapters hand the model the text and drop
``structuredContent``. For every tool on the bundled sample catalog the text must
carry every fact of the projections (``tests.text_facts``), stay within 70% of the
bytes of their compact JSON, and let an agent read a whole paper by following the
cursor printed in the text.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pwc_mcp_core.tools.projections.untrusted import framed, server_line, unframe
from tests.conftest import ServerProcess, start_pwc_mcp
from tests.helpers import request
from tests.text_facts import TOOL_CALLS, missing_facts

HEADERS = {"Content-Type": "application/json", "Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}
# The continuation is the server's last line (its nonce, outside the frame), never a line of the paper.
CURSOR_IN_TEXT = re.compile(r'^\[pwc [0-9a-f]{16}\] read_paper: truncated;.* cursor="([^"]+)"\Z', re.M)
FRAME_BYTES = len(framed("", "0" * 16).encode()) + len(server_line("0" * 16, "").encode())


@pytest.fixture(scope="module")
def server(catalog_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One embedded ``pwc-mcp gateway`` on the sample catalog."""
    process = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, "PWC_MCP_REQUEST_LIMIT": "10000"},
                            log_path=tmp_path_factory.mktemp("text-first") / "gateway.log")
    yield process
    process.stop()


def call(server: ServerProcess, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    response = request("POST", server.mcp_url, json=body, headers=HEADERS, timeout=60)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert not result.get("isError"), (name, result["content"][0]["text"])
    return result


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def compact_bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


@pytest.mark.parametrize("tool", list(TOOL_CALLS))
def test_the_text_alone_carries_every_fact_of_the_projections(server: ServerProcess, tool: str) -> None:
    result = call(server, tool, TOOL_CALLS[tool])
    structured, text = result["structuredContent"], text_of(result)
    assert missing_facts(tool, structured, text) == [], text


@pytest.mark.parametrize("tool", list(TOOL_CALLS))
def test_the_text_is_at_most_70_percent_of_the_projections_json(server: ServerProcess, tool: str) -> None:
    result = call(server, tool, TOOL_CALLS[tool])
    structured, text = result["structuredContent"], text_of(result)
    projections = {k: v for k, v in structured.items() if k not in ("schema_version", "data")} or structured["data"]
    text_bytes, json_bytes = len(text.encode()), compact_bytes(projections)
    if tool == "read_paper":  # the chunk and the cursor travel verbatim; the bound applies to the rest
        # ... and so does the frame that marks it as untrusted third-party text (its two tags, the
        # line saying what they mean and the nonce on each server line).
        verbatim = (len(structured["markdown"].encode()) + len((structured["next_cursor"] or "").encode())
                    + FRAME_BYTES)
        text_bytes -= verbatim
        json_bytes = compact_bytes({k: v for k, v in projections.items() if k not in ("markdown", "next_cursor")})
    if tool == "find_in_paper":  # each passage is paper text (framed) with its cursor, verbatim like a chunk
        passages = projections["passages"]
        text_bytes -= sum(len(p["text"].encode()) + len(p["cursor"].encode()) + FRAME_BYTES for p in passages)
        json_bytes = compact_bytes({**projections, "passages": [
            {k: v for k, v in p.items() if k not in ("text", "cursor")} for p in passages]})
    assert text_bytes <= 0.70 * json_bytes, (tool, text_bytes, json_bytes)


def test_every_tool_together_stays_within_70_percent_at_the_default_chunk(server: ServerProcess) -> None:
    """The size goal (bench/text_ratio.py): all text bytes ÷ all projection JSON bytes, read_paper's
    verbatim chunk included, at the server's default chunk size."""
    text_bytes = json_bytes = 0
    for tool, arguments in TOOL_CALLS.items():
        result = call(server, tool, arguments)
        structured = result["structuredContent"]
        rest = {k: v for k, v in structured.items() if k not in ("schema_version", "data", "data_note")}
        text_bytes += len(text_of(result).encode())
        json_bytes += compact_bytes(rest or structured["data"])
    assert text_bytes <= 0.70 * json_bytes, (text_bytes, json_bytes)


def test_a_text_first_agent_reads_the_whole_paper_by_the_cursor_in_the_text(server: ServerProcess,
                                                                             catalog_url: str) -> None:
    first = call(server, "read_paper", {"paper": "1706.03762"})
    texts = [text_of(first)]
    while (match := CURSOR_IN_TEXT.search(texts[-1])) is not None:
        texts.append(text_of(call(server, "read_paper", {"paper": "1706.03762", "cursor": match.group(1)})))
        assert len(texts) < 20
    assert len(texts) >= 2 and "end of paper" in texts[-1]
    chunks = [unframe(text)[0] for text in texts]
    whole = request("GET", f"{catalog_url}/research/papers/1706.03762/read", timeout=30).text
    assert len(whole.encode()) > 64 * 1024 and "".join(chunks) == whole


LANGCHAIN_CLIENT = Path(__file__).with_name("langchain_text_client.py")
LANGCHAIN_ADAPTERS = "langchain-mcp-adapters==0.3.2"  # pinned: its ToolMessage shape is what is tested


@pytest.mark.slow
def test_the_same_facts_reach_a_langchain_agent_through_its_tool_messages(server: ServerProcess) -> None:
    """End to end through langchain-mcp-adapters in its own environment (it pins an older ``mcp``)."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed; it builds the isolated langchain-mcp-adapters environment")
    completed = subprocess.run(
        [uv, "run", "--no-project", "--isolated", "--with", LANGCHAIN_ADAPTERS, "python",
         str(LANGCHAIN_CLIENT), server.mcp_url],
        input=json.dumps(TOOL_CALLS), capture_output=True, text=True, timeout=300, cwd=LANGCHAIN_CLIENT.parent)
    assert completed.returncode == 0, completed.stderr[-4000:]
    seen = json.loads(completed.stdout)
    assert set(seen) == set(TOOL_CALLS)
    for tool, view in seen.items():
        assert isinstance(view["structured"], dict), tool
        assert missing_facts(tool, view["structured"], view["text"]) == [], (tool, view["text"][:2000])
    continued = seen["read_paper"]["continued"]
    assert continued and not continued.startswith("invalid_argument"), continued[:500]


@pytest.mark.parametrize("tool", ["get_paper_info", "get_related_papers", "read_paper"])
def test_a_paper_outside_the_catalog_keeps_its_note_and_links_in_the_text(server: ServerProcess, tool: str) -> None:
    result = call(server, tool, {"paper": "2309.06180"})
    structured, text = result["structuredContent"], text_of(result)
    assert structured["in_catalog"] is False
    assert structured["note"] in text
    assert structured["available_at"] and all(link["url"] in text for link in structured["available_at"])
    assert missing_facts(tool, structured, text) == [], text
    if tool == "read_paper":
        metadata = structured["public_metadata"]
        assert metadata["title"] in text and all(author in text for author in metadata["authors"])


@pytest.mark.parametrize("tool", ["get_paper_info", "read_paper", "get_paper_evaluations"])
def test_two_papers_with_one_exact_title_are_ambiguous_end_to_end(server: ServerProcess, tool: str) -> None:
    """The sample holds two real papers titled "Deep Reinforcement Learning: An Overview"."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": {"paper": "Deep Reinforcement Learning: An Overview"}}}
    response = request("POST", server.mcp_url, json=body, headers=HEADERS, timeout=60)
    result = response.json()["result"]
    text = text_of(result)
    assert result["isError"] is True and text.startswith("ambiguous: Paper title is ambiguous")
    assert "1701.07274" in text and "1806.08894" in text and "Pass one of these IDs" in text
    if tool == "get_paper_info":  # one of the IDs offered resolves
        assert "Mousavi" in text_of(call(server, tool, {"paper": "1806.08894"}))

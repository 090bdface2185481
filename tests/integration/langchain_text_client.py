"""What a langchain-mcp-adapters agent's model sees from each tool: the ToolMessage content.

Run in its own environment (the adapters pin their own ``mcp``)::

    uv run --no-project --isolated --with langchain-mcp-adapters==0.3.2 python langchain_text_client.py URL < calls.json

``calls.json`` maps tool name → arguments. Prints one JSON object: tool name →
``{"text": <the ToolMessage content as text>, "structured": <its artifact's
structured_content>}``; ``read_paper`` also gets ``"continued"``, the text of the
call made with the cursor copied out of the first text (what a text-only agent
does). Only the standard library and the adapters are imported.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from typing import Any

from langchain_mcp_adapters.client import MultiServerMCPClient

CURSOR_IN_TEXT = re.compile(r'cursor="([^"]+)"')


def as_text(content: Any) -> str:
    """A ToolMessage ``content`` (a string or a list of strings / content blocks) as one string."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "\n".join(parts)


async def invoke(tool: Any, arguments: dict[str, Any], call_id: str) -> tuple[str, Any]:
    message = await tool.ainvoke({"name": tool.name, "args": arguments, "id": call_id, "type": "tool_call"})
    artifact = getattr(message, "artifact", None) or {}
    structured = artifact.get("structured_content") if isinstance(artifact, dict) else None
    return as_text(message.content), structured


async def main(url: str, calls: dict[str, dict[str, Any]]) -> dict[str, Any]:
    client = MultiServerMCPClient({"pwc": {"url": url, "transport": "streamable_http"}})
    tools = {tool.name: tool for tool in await client.get_tools()}
    out: dict[str, Any] = {}
    for index, (name, arguments) in enumerate(calls.items()):
        text, structured = await invoke(tools[name], arguments, f"call-{index}")
        out[name] = {"text": text, "structured": structured}
        match = CURSOR_IN_TEXT.search(text) if name == "read_paper" else None
        if match is not None:
            out[name]["continued"], _ = await invoke(tools[name], {**arguments, "cursor": match.group(1)}, "next")
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], json.load(sys.stdin))), ensure_ascii=False))

"""No hidden state between layers: nothing in the server packages uses a ``ContextVar``.

The edge hands a call's admission to the dispatcher as an explicit, typed argument
(``Dispatcher.dispatch(call, admission)``, ARCHITECTURE.md §2); a context variable would
make that contract invisible again.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("pwc", "pwc_mcp_core", "gateway", "workers")


def _sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py"))


def _uses_contextvars(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "contextvars" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "contextvars":
            return True
    return False


def test_the_scan_sees_the_packages() -> None:
    assert len(_sources()) > 50


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_module_imports_contextvars(path: Path) -> None:
    assert not _uses_contextvars(path), f"{path.relative_to(REPO)} imports contextvars"


async def test_the_dispatcher_receives_the_admission_argument() -> None:
    from pwc_mcp_core.cluster.admission import AdmissionScript, Lease
    from pwc_mcp_core.mcp_server.server import McpServer
    from pwc_mcp_core.runtime.call import Call
    from pwc_mcp_core.runtime.core_settings import CoreSettings
    from pwc_mcp_core.runtime.dispatch import Deferred, InMemoryDispatcher

    async def answer(call: Call) -> bytes:
        return b'{"result":{"content":[]}}'

    dispatcher = InMemoryDispatcher(answer)
    tools = [{"name": "echo", "inputSchema": {"type": "object"}}]
    server = McpServer(CoreSettings(cursor_keys=("k",)), dispatcher, tools=tools)
    deferred = Deferred(AdmissionScript([], [], Lease("l", "c")))
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}'
    reply = await server.handle(body, {}, admission=deferred)
    assert reply.status == 200
    await server.handle(body, {})
    assert dispatcher.admissions == [deferred, None]

"""`pwc-mcp stdio`: the MCP server over stdin/stdout for desktop clients (MCP stdio transport).

One JSON-RPC message per line in, one per line out; logs go to stderr only.
Requests run concurrently through `McpServer` with an in-process `LocalDispatcher`
(`execution.execute` in a thread pool), so no Redis and no HTTP are involved.
A request whose ``params._meta`` names protocol 2026-07-28 is served on the
modern leg (the headers HTTP would carry are derived from the message);
everything else is the handshake era.

Desktop client configuration (e.g. ``claude_desktop_config.json``)::

    {"mcpServers": {"pwc": {
        "command": "uv",
        "args": ["run", "pwc-mcp", "stdio"],
        "env": {"PWC_API_URL": "https://paperswithcode.co/api/v1",
                "PWC_MCP_CURSOR_KEY_CURRENT": "<a long random secret>"}}}}

At start it asks the catalog for its provenance (``GET catalog``, at most 2 s) for the
one data line of the instructions, as the HTTP gateway does.

Without ``PWC_MCP_CURSOR_KEY_CURRENT`` a random key is created once and kept in
the user's state directory (`stdio_key`), so a cursor from one ``pwc-mcp stdio``
process continues in the next (clients that start one process per call). Only if
that directory is unusable is the key ephemeral, with a warning.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, BinaryIO, Final

import httpx

from pwc_mcp_core.errors import ConfigError
from pwc_mcp_core.mcp_server.local_dispatcher import LocalDispatcher
from pwc_mcp_core.mcp_server.server import McpServer
from pwc_mcp_core.mcp_server.stdio_key import load_or_create_key
from pwc_mcp_core.protocol.eras import NAME_BEARING_METHODS
from pwc_mcp_core.protocol.jsonrpc import INVALID_REQUEST, error_response
from pwc_mcp_core.protocol.versions import PROTOCOL_VERSION_META_KEY
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.runtime.logs import configure_logging
from pwc_mcp_core.tools.data_source import DataSource, fetch_data_source

if TYPE_CHECKING:  # the runtime (and its catalog client) is imported lazily
    from pwc_mcp_core.tools.execution import Runtime

__all__ = ["headers_for", "main", "serve"]

logger = logging.getLogger("pwc_mcp_core.mcp_server.stdio")  # stable even when run as __main__

_DATA_WAIT_S: Final = 2.0
_MAX_STDIO_THREADS: Final = 8  # one desktop client: a handful of parallel calls at most
_TOO_LARGE_LINE: Final = error_response(b"null", INVALID_REQUEST, "Invalid Request: the message is too large") + b"\n"


def _runtime(settings: CoreSettings) -> Runtime:
    from pwc_mcp_core.runtime.caches import MemoryCache
    from pwc_mcp_core.tools.execution import Runtime

    return Runtime.build(settings, MemoryCache())


async def _data_source(api_url: str) -> DataSource | None:
    """The catalog's provenance for the instructions' data line, asked once at start (at most
    :data:`_DATA_WAIT_S`: a catalog that does not answer by then leaves the line out)."""
    try:
        async with httpx.AsyncClient(timeout=_DATA_WAIT_S) as client:
            return await asyncio.wait_for(fetch_data_source(client, api_url), _DATA_WAIT_S)
    except (httpx.HTTPError, TimeoutError):
        return None


def headers_for(message: object) -> dict[str, str]:
    """The HTTP headers a Streamable HTTP client would have sent with ``message``.

    Only modern requests (``params._meta`` names a protocol version) get any:
    ``MCP-Protocol-Version``, ``Mcp-Method`` and, for name-bearing methods, ``Mcp-Name``.
    """
    if not isinstance(message, dict):
        return {}
    params = message.get("params")
    if not isinstance(params, dict):
        return {}
    meta = params.get("_meta")
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    if not isinstance(version, str):
        return {}
    headers = {"mcp-protocol-version": version}
    method = message.get("method")
    if isinstance(method, str):
        headers["mcp-method"] = method
        name = params.get(NAME_BEARING_METHODS.get(method, ""))
        if isinstance(name, str):
            headers["mcp-name"] = name
    return headers


async def _answer(server: McpServer, line: bytes) -> bytes | None:
    try:
        message = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):
        message = None
    # Every reply body is a whole JSON-RPC message (refusals included); stdio drops the HTTP status.
    return (await server.handle(line, headers_for(message))).body


async def serve(server: McpServer, stdin: BinaryIO, stdout: BinaryIO, *, max_line_bytes: int) -> None:
    """Read lines from ``stdin`` until EOF, answer each on ``stdout``; requests run concurrently."""
    loop = asyncio.get_running_loop()
    write_lock = asyncio.Lock()
    pending: set[asyncio.Task[None]] = set()

    async def respond(line: bytes) -> None:
        out = await _answer(server, line)
        if out is not None:
            async with write_lock:
                stdout.write(out + b"\n")
                stdout.flush()

    while True:
        line = await loop.run_in_executor(None, stdin.readline, max_line_bytes + 1)
        if not line:
            break
        if len(line) > max_line_bytes and not line.endswith(b"\n"):
            # Oversized message: skip the rest of the line and answer like HTTP's 413 would.
            while line and not line.endswith(b"\n"):
                line = await loop.run_in_executor(None, stdin.readline, 65536)
            async with write_lock:
                stdout.write(_TOO_LARGE_LINE)
                stdout.flush()
            continue
        if not line.strip():
            continue
        task = asyncio.create_task(respond(line.strip()))
        pending.add(task)
        task.add_done_callback(pending.discard)
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)


def _with_stored_key(environ: Mapping[str, str]) -> tuple[Mapping[str, str], str | None]:
    """``environ`` with the stored key (`stdio_key`) as ``PWC_MCP_CURSOR_KEY_CURRENT`` when unset.

    Returns the environment and, when the stored key could not be used, the error's
    type name (the configured key, if any, always wins and touches no file).
    """
    if environ.get("PWC_MCP_CURSOR_KEY_CURRENT", "").strip():
        return environ, None
    try:
        key = load_or_create_key()
    except OSError as exc:
        return environ, type(exc).__name__
    return {**environ, "PWC_MCP_CURSOR_KEY_CURRENT": key}, None


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run the stdio server until stdin closes. Returns the exit code (0, or 2 for bad configuration)."""
    parser = argparse.ArgumentParser(prog="pwc-mcp stdio",
                                     description="Serve MCP over stdin/stdout (newline-delimited JSON-RPC).")
    parser.parse_args(list(argv) if argv is not None else sys.argv[1:])
    environ = os.environ if environ is None else environ
    environ, stored_key_error = _with_stored_key(environ)
    try:
        settings = CoreSettings.from_env(environ, allow_ephemeral_cursor_key=True)
    except ConfigError as exc:
        print(f"pwc-mcp stdio: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, stream=sys.stderr)
    if settings.cursor_key_ephemeral:
        logger.warning("PWC_MCP_CURSOR_KEY_CURRENT is unset and the user state directory is unusable "
                       "(error=%s): using an ephemeral cursor key", stored_key_error)
    dispatcher = LocalDispatcher(lambda: _runtime(settings),
                             max_workers=min(_MAX_STDIO_THREADS, settings.worker_threads),
                             max_response_bytes=settings.max_body_bytes, thread_name_prefix="pwc-mcp-stdio")
    server = McpServer(settings, dispatcher)

    async def run() -> None:
        server.set_data_source(await _data_source(settings.api_url))
        try:
            await serve(server, sys.stdin.buffer, sys.stdout.buffer, max_line_bytes=settings.max_body_bytes)
        finally:
            await dispatcher.close()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

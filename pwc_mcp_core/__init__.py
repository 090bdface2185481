"""MCP protocol core shared by the gateway, the workers and the stdio server.

Everything an MCP client sees except the HTTP edge, in layers (lowest first; a layer imports only
the ones below it, tests/test_layering.py enforces it):

* ``protocol``   — JSON-RPC codes, status table and encoder; protocol versions; era routing.
* ``cluster``    — Redis: keys, the pipelined connection, the call Stream, the Lua scripts.
* ``runtime``    — settings, the call envelope, caches, cache metrics, logs, GC tuning.
* ``tools``      — the 24 tools: registry, validation, execution, reading, cursors, resources,
  prompts, completion, projections.
* ``mcp_server`` — the JSON-RPC server for both eras, the embedded dispatcher, stdio.

``errors`` (the error tree) sits at the root and is shared by all. Imports `pwc`; never imports
`gateway` or `workers`.
"""

__version__ = "0.5.0"

"""MCP protocol core shared by the gateway, the workers and the stdio server.

Everything an MCP client sees except the HTTP edge: tool catalogue, execution,
cursors, resources, prompts and the JSON-RPC dispatcher for both protocol eras.
Imports `pwc`; never imports `gateway` or `workers`.
"""

__version__ = "0.5.0"

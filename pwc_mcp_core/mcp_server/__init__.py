"""The MCP server on top: the JSON-RPC server for both eras (server, legacy_era, modern_era), the
embedded dispatcher (local_dispatcher) and the stdio front end.

Layer 5 of 5 (protocol < cluster < runtime < tools < mcp_server): imports only protocol, cluster,
runtime, tools and the root modules (errors); tests/test_layering.py enforces it.
"""

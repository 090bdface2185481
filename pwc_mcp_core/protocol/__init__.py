"""MCP wire vocabulary shared by every layer: JSON-RPC codes, the HTTP status table and the one JSON
encoder (jsonrpc), protocol versions and server identity (versions), era routing and request
classification (eras).

Layer 1 of 5 (protocol < cluster < runtime < tools < mcp_server): imports only no other subpackage
and the root modules (errors); tests/test_layering.py enforces it.
"""

"""The 21 MCP tools: the registry generated from the pwc parser, argument validation, execution, paper
resolution and reading, cursors, resources, prompts, completion, and the typed projections
(projections/).

Layer 4 of 5 (protocol < cluster < runtime < tools < mcp_server): imports only protocol, cluster,
runtime and the root modules (errors); tests/test_layering.py enforces it.
"""

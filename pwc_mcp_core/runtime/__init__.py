"""Process plumbing below the tools: settings (core_settings), the call envelope (call), the in-process
and Redis-backed caches (caches), cache metrics, logs and GC tuning.

Layer 3 of 5 (protocol < cluster < runtime < tools < mcp_server): imports only protocol, cluster and
the root modules (errors); tests/test_layering.py enforces it.
"""

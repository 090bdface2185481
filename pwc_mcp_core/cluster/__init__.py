"""The Redis machinery: where every connection comes from, a URL or Sentinel (redis_connect), every
Redis key (redis_keys), the pipelined connection (redis_pipe), the call Stream (queue) and the Lua
scripts (scripts/).

Layer 2 of 5 (protocol < cluster < runtime < tools < mcp_server): imports only protocol and the root
modules (errors); tests/test_layering.py enforces it.
"""

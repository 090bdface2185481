"""The aiohttp HTTP edge of pwc-mcp: `/mcp`, admission, limits, health, docs and metrics.

Imports `pwc_mcp_core`; never imports `workers` (workers run as separate processes).
"""

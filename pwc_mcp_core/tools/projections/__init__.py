"""Typed projections of CLI payloads and their text renderings (docs/tool-contract.md §3.2, §3.4).
"""

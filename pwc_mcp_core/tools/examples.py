"""One working call per tool, on the bundled sample catalog.

The one list of example arguments: `/docs` shows them, `bench/text_ratio.py` measures
them and the end-to-end tests run them, so every documented example is also a tested one.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from pwc_mcp_core.protocol.json_types import JsonObject

__all__ = ["EXAMPLE_CALLS"]

EXAMPLE_CALLS: Final[Mapping[str, JsonObject]] = MappingProxyType({
    "search_papers": {"query": "attention transformer", "mode": "keyword", "limit": 3},
    "get_paper_info": {"paper": "1706.03762"},
    "get_paper_evaluations": {"paper": "1706.03762", "limit": 5},
    "read_paper": {"paper": "1706.03762"},
    "list_papers": {"limit": 5},
    "list_recent_papers": {"limit": 3},
    "list_trending_papers": {"limit": 3},
    "get_related_papers": {"paper": "1706.03762"},
    "get_paper_lineage": {"paper": "1810.04805"},
    "get_task": {"task": "image-classification"},
    "list_tasks": {"limit": 5},
    "get_method": {"method": "Transformer"},
    "list_methods": {"limit": 5},
    "get_conference": {"conference": "NeurIPS 2017"},
    "list_conferences": {},
    "get_organization": {"organization": "Google"},
    "list_organizations": {},
    "get_framework": {"framework": "PyTorch"},
    "list_frameworks": {},
    "get_benchmark": {"benchmark": "ImageNet", "limit": 5},
    "list_benchmarks": {"limit": 5},
    "get_sota_history": {"benchmark": "ImageNet"},
    "get_trends": {"task": "Image Classification"},
    "find_in_paper": {"paper": "1706.03762", "query": "label smoothing", "limit": 3},
    "cite_papers": {"papers": ["1706.03762", "Deep Residual Learning for Image Recognition"]},
    "verify_references": {"references": ["Vaswani et al. (2017). Attention is all you need. NeurIPS",
                                         "Attention is not all you need for image recognition"]},
})
"""Tool name → arguments (read-only: copy before changing)."""

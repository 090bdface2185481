"""`completion/complete` for prompt arguments and resource-template variables (docs/protocol.md §4.6).

Completion runs in the gateway without a catalog round trip, so it draws on a
small static vocabulary of well-known task, benchmark, method and paper names
in the catalogue. Matching: case-insensitive prefix matches first, then
substring matches, each group in vocabulary order; at most 100 values.
"""

from __future__ import annotations

from typing import Any, Final

from pwc_mcp_core.errors import ProtocolError
from pwc_mcp_core.jsonrpc import INVALID_PARAMS
from pwc_mcp_core.prompts import PROMPTS
from pwc_mcp_core.templates import TEMPLATE_VARIABLES

__all__ = ["MAX_VALUES", "VOCABULARY", "complete", "suggest"]

MAX_VALUES: Final = 100

TASKS: Final = (
    "image-classification", "object-detection", "semantic-segmentation", "instance-segmentation",
    "panoptic-segmentation", "pose-estimation", "3d-human-pose-estimation", "depth-estimation",
    "image-generation", "text-to-image-generation", "image-captioning", "visual-question-answering",
    "video-classification", "action-recognition", "optical-flow-estimation", "super-resolution",
    "image-super-resolution", "face-recognition", "person-re-identification", "multi-object-tracking",
    "language-modelling", "machine-translation", "question-answering", "reading-comprehension",
    "natural-language-inference", "sentiment-analysis", "text-classification", "named-entity-recognition",
    "text-summarization", "abstractive-text-summarization", "code-generation", "mathematical-reasoning",
    "common-sense-reasoning", "speech-recognition", "speech-synthesis", "audio-classification",
    "reinforcement-learning", "atari-games", "continuous-control", "node-classification",
    "link-prediction", "graph-classification", "graph-property-prediction", "time-series-forecasting",
    "anomaly-detection", "recommendation-systems", "domain-adaptation", "few-shot-learning",
    "zero-shot-learning", "self-supervised-learning", "document-layout-analysis", "table-detection",
)
BENCHMARKS: Final = (
    "imagenet", "imagenet-1k", "cifar-10", "cifar-100", "mnist", "coco", "coco-minival", "coco-test-dev",
    "ade20k", "cityscapes", "pascal-voc-2012", "kitti", "nyu-depth-v2", "kinetics-400", "ucf101",
    "squad1-1", "squad2-0", "glue", "superglue", "mmlu", "hellaswag", "gsm8k", "math", "humaneval", "mbpp",
    "wmt2014-english-german", "wmt2014-english-french", "wikitext-103", "penn-treebank", "snli", "multinli",
    "conll-2003", "librispeech-test-clean", "librispeech-test-other", "ogbn-arxiv", "ogbn-products",
    "ogbg-molhiv", "cora", "citeseer", "pubmed", "chexpert", "coqa", "hotpotqa", "record", "docbank",
    "publaynet", "doclaynet",
)
METHODS: Final = (
    "transformer", "attention", "multi-head-attention", "bert", "gpt", "vision-transformer", "resnet",
    "convolution", "batch-normalization", "layer-normalization", "dropout", "adam", "lstm", "gru",
    "graph-convolutional-network", "diffusion", "variational-autoencoder", "generative-adversarial-network",
    "mixture-of-experts", "lora", "contrastive-learning", "knowledge-distillation",
)
PAPERS: Final = (
    "1706.03762", "Attention Is All You Need", "1810.04805", "1512.03385", "2010.11929", "2005.14165",
    "1804.07821", "2101.03961", "2203.01017", "2206.01062", "2305.03393", "2310.06825", "2412.19437",
    "2501.00089",
)

VOCABULARY: Final[dict[str, tuple[str, ...]]] = {
    "topic": TASKS + METHODS,
    "task": TASKS,
    "benchmark": BENCHMARKS,
    "paper": PAPERS,
}
"""Argument or template-variable name → candidate values."""

_PROMPT_ARGUMENTS: Final = {p.name: p.argument for p in PROMPTS}


def suggest(vocabulary: tuple[str, ...], prefix: str) -> dict[str, Any]:
    """``{"values": […≤100], "total": n, "hasMore": bool}`` for ``prefix`` over ``vocabulary``."""
    needle = prefix.strip().lower()
    starts = [v for v in vocabulary if v.lower().startswith(needle)]
    contains = [v for v in vocabulary if needle in v.lower() and not v.lower().startswith(needle)]
    matches = starts + contains
    return {"values": matches[:MAX_VALUES], "total": len(matches), "hasMore": len(matches) > MAX_VALUES}


def complete(params: dict[str, Any]) -> dict[str, Any]:
    """The ``completion/complete`` result for ``params`` (``{ref, argument, context?}``).

    ``ref`` is ``{"type": "ref/prompt", "name"}`` or ``{"type": "ref/resource", "uri"}``
    (a URI template of `templates`). An unknown prompt or template, or an argument the
    ref does not take, completes to no values: completion is a hint, never a failure.

    Raises:
        ProtocolError: -32602 for a malformed ``ref``/``argument``.
    """
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise ProtocolError(INVALID_PARAMS, "completion/complete requires 'ref' and 'argument' objects")
    name, value = argument.get("name"), argument.get("value", "")
    if not isinstance(name, str) or not isinstance(value, str):
        raise ProtocolError(INVALID_PARAMS, "completion/complete 'argument' needs string 'name' and 'value'")
    kind = ref.get("type")
    if kind == "ref/prompt":
        prompt = ref.get("name")
        if not isinstance(prompt, str):
            raise ProtocolError(INVALID_PARAMS, "completion/complete 'ref.name' must be a string")
        expected = _PROMPT_ARGUMENTS.get(prompt)
    elif kind == "ref/resource":
        uri = ref.get("uri")
        if not isinstance(uri, str):
            raise ProtocolError(INVALID_PARAMS, "completion/complete 'ref.uri' must be a string")
        expected = TEMPLATE_VARIABLES.get(uri)
    else:
        raise ProtocolError(INVALID_PARAMS, "completion/complete 'ref.type' must be ref/prompt or ref/resource")
    if expected is None or name != expected:
        return {"completion": {"values": [], "total": 0, "hasMore": False}}
    return {"completion": suggest(VOCABULARY[expected], value)}

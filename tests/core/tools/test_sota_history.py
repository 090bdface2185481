"""get_sota_history through ``execute`` on the sample catalog: text, structured content and the PNG
chart as MCP image content, cached like the other answers."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import fastjsonschema
import pytest

from pwc.chart import history_png
from pwc_mcp_core.runtime.caches import MemoryCache
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools.charts import CHART_KEY_PREFIX
from pwc_mcp_core.tools.execution import Runtime, execute
from pwc_mcp_core.tools.registry import get_tool


class Recording:
    """The answer cache, recording which keys' loaders ran (a miss draws, a hit does not)."""

    def __init__(self) -> None:
        self.inner, self.loaded = MemoryCache(), []

    def fetch(self, key: str, ttl_s: float, loader: Callable[[], bytes]) -> bytes:
        def load() -> bytes:
            self.loaded.append(key)
            return loader()

        return self.inner.fetch(key, ttl_s, load)


@pytest.fixture(scope="module")
def cache() -> Recording:
    return Recording()


@pytest.fixture(scope="module")
def runtime(catalog_url: str, cache: Recording) -> Runtime:
    return Runtime.build(CoreSettings(api_url=catalog_url, cursor_keys=("sample-secret",)), cache)


def call(runtime: Runtime, arguments: dict[str, Any], era: str = "modern") -> dict[str, Any]:
    return json.loads(execute(Call("tools/call", "get_sota_history", arguments, era=era), runtime))["result"]


def test_text_structured_content_and_image(runtime: Runtime) -> None:
    result = call(runtime, {"benchmark": "ImageNet"})
    assert not result.get("isError")
    text, image = result["content"]
    assert text["type"] == "text" and len(text["text"].encode()) < 3 * 1024
    assert "2020-10-22|88.55|4.25|ViT-H/14|" in text["text"]
    structured = result["structuredContent"]
    schema = {k: v for k, v in get_tool("get_sota_history").output_schema.items() if k != "$schema"}
    fastjsonschema.compile(schema)(structured)
    assert [(s["model"], s["value"]) for s in structured["steps"]] == \
        [("ResNet-152", 78.57), ("EfficientNet-B7", 84.3), ("ViT-H/14", 88.55)]
    assert "points" not in structured and len(structured["data"]["points"]) == 10
    assert set(image) == {"type", "mimeType", "data"} and (image["type"], image["mimeType"]) == ("image", "image/png")
    png = base64.b64decode(image["data"])
    assert png == history_png(structured["data"]) and len(png) < 100 * 1024


def test_the_chart_is_cached_under_its_data(runtime: Runtime, cache: Recording) -> None:
    first = call(runtime, {"benchmark": "CIFAR-10", "task": "Image Classification"})
    drawn = [key for key in cache.loaded if key.startswith(CHART_KEY_PREFIX)]
    # Other spellings of the same board and task give the same data: the chart is drawn once.
    again = call(runtime, {"benchmark": "cifar-10", "task": "image-classification"}, era="legacy")
    assert again["content"][1] == first["content"][1]
    assert [key for key in cache.loaded if key.startswith(CHART_KEY_PREFIX)] == drawn
    assert first["structuredContent"]["direction"] == "lower"


def test_unknown_metric_names_the_boards_metrics(runtime: Runtime) -> None:
    result = call(runtime, {"benchmark": "COCO test-dev", "metric": "BLEU"})
    assert result["isError"] and result["content"] == [{
        "type": "text", "text": "invalid_argument: unknown metric: BLEU; available metrics: box AP, mask AP"}]

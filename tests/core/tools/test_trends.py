"""get_trends through ``execute`` on the sample catalog: the structured content against its output
schema, the year table as text, and every bad input as an ``isError`` result in the tool's words."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import fastjsonschema
import pytest

from pwc.chart import trends_png
from pwc_mcp_core.runtime.caches import MemoryCache
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools.execution import Runtime, execute
from pwc_mcp_core.tools.registry import get_tool


@pytest.fixture(scope="module")
def runtime(catalog_url: str) -> Iterator[Runtime]:
    built = Runtime.build(CoreSettings(api_url=catalog_url, cursor_keys=("sample-secret",)), MemoryCache())
    yield built
    built.client.close()


def call(runtime: Runtime, arguments: dict[str, Any], era: str = "modern") -> dict[str, Any]:
    return json.loads(execute(Call("tools/call", "get_trends", arguments, era=era), runtime))["result"]


def test_structured_content_and_text(runtime: Runtime) -> None:
    result = call(runtime, {"benchmark": "ImageNet", "from_year": 2019, "to_year": 2021})
    assert not result.get("isError"), result["content"]
    text, image = result["content"]
    structured = result["structuredContent"]
    schema = {k: v for k, v in get_tool("get_trends").output_schema.items() if k != "$schema"}
    fastjsonschema.compile(schema)(structured)
    assert structured["years"] == [
        {"year": 2019, "papers": 1, "with_code": 1, "share_with_code": 1.0},
        {"year": 2020, "papers": 3, "with_code": 3, "share_with_code": 1.0},
        {"year": 2021, "papers": 3, "with_code": 3, "share_with_code": 1.0}]
    assert structured["totals"] == {"papers": 7, "with_code": 7, "share_with_code": 1.0}
    assert {k: structured[k] for k in ("kind", "entity", "all_papers", "span")} == {
        "kind": "benchmark", "entity": {"id": "3", "name": "ImageNet", "slug": "imagenet"}, "all_papers": 8,
        "span": {"first_year": 2015, "last_year": 2021}}
    assert "data" not in structured  # the typed counts are the payload
    assert text["text"].endswith("Year|Papers|With code|Share\n-|-:|-:|-:\n2019|1|1|100%\n2020|3|3|100%\n"
                                 "2021|3|3|100%")
    assert len(text["text"].encode()) < 512  # a small answer
    # The bar chart as MCP image content: the same bytes as pwc trends --chart.
    assert (image["type"], image["mimeType"]) == ("image", "image/png")
    png = base64.b64decode(image["data"])
    assert png == trends_png(structured) and len(png) < 20 * 1024


@pytest.mark.parametrize(("arguments", "text"), [
    pytest.param({"task": "Image Classifier"}, "not_found: Task not found: Image Classifier; closest results: "
                 "Image Classification, Image Generation, Self-Supervised Image Classification; give its exact name, slug or ID "
                 "(search the task list to find it)", id="unknown-task"),
    # The candidates are the catalog's method search for the name, as for get_method.
    pytest.param({"method": "Transformers"}, "not_found: Method not found: Transformers; closest results: "
                 "BERT; give its exact name, slug or ID (search the method list to find it)", id="unknown-method"),
    pytest.param({}, "invalid_argument: trends needs exactly one of task, method or benchmark", id="none"),
    pytest.param({"task": "Image Classification", "benchmark": "ImageNet"},
                 "invalid_argument: trends needs exactly one of task, method or benchmark", id="two"),
    pytest.param({"task": "Image Classification", "from_year": 2020, "to_year": 2019},
                 "invalid_argument: from_year must not be after to_year", id="reversed"),
    pytest.param({"task": "Image Classification", "from_year": 1950, "to_year": 2021},
                 "invalid_argument: from_year 1950 to to_year 2021 is 72 years; at most 30", id="too-wide"),
])
def test_bad_input_is_an_error_result_saying_what_to_do(runtime: Runtime, arguments: dict[str, Any],
                                                         text: str) -> None:
    result = call(runtime, arguments, era="legacy")
    assert result == {"content": [{"type": "text", "text": text}], "isError": True}


def test_out_of_range_years_are_refused_by_the_schema(runtime: Runtime) -> None:
    result = call(runtime, {"task": "Image Classification", "from_year": 1800})
    assert result["isError"] and result["content"][0]["text"].startswith("invalid_argument: ")
    assert "from_year" in result["content"][0]["text"]

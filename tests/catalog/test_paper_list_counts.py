"""``papers/`` counts for trends over HTTP on the sample catalog: the ``dataset`` filter (papers with a
result on a benchmark), ``has_code`` (any code repository, official or not) and a one-year date
window, each echoed in ``applied_filters``; unknown names and bad values are JSON 4xx."""

from __future__ import annotations

import pytest

from tests.helpers import request


def _count(catalog_url: str, **params: str) -> tuple[int, dict[str, str]]:
    response = request("GET", f"{catalog_url}/papers/", params={"page_size": "1", **params}, timeout=10)
    assert response.status_code == 200, response.text
    body = response.json()
    return body["count"], body["applied_filters"]


@pytest.mark.parametrize(("params", "count"), [
    # ImageNet rows come from 8 papers: ResNet 2015, EfficientNet 2019, SimCLR, ViT, DeiT 2020, CLIP, Swin, MAE 2021.
    pytest.param({"dataset": "ImageNet"}, 8, id="dataset-by-name"),
    pytest.param({"dataset": "imagenet"}, 8, id="dataset-by-slug"),
    pytest.param({"dataset": "3"}, 8, id="dataset-by-id"),
    pytest.param({"dataset": "ImageNet", "start_date": "2020-01-01", "end_date": "2020-12-31"}, 3, id="one-year"),
    pytest.param({"dataset": "ImageNet", "start_date": "2016-01-01", "end_date": "2018-12-31"}, 0, id="empty-years"),
    # Convolution: VGG 2014 (no code), U-Net 2015 (unofficial code only), YOLO, ResNet 2015, DenseNet, EfficientNet.
    pytest.param({"method": "Convolution", "has_code": "true"}, 5, id="has-code-counts-unofficial"),
    pytest.param({"method": "Convolution", "has_official_implementation": "true"}, 4, id="official-only"),
    pytest.param({"method": "Convolution", "has_code": "false"}, 1, id="without-code"),
    pytest.param({"method": "Convolution", "has_code": "true", "start_date": "2015-01-01",
                  "end_date": "2015-12-31"}, 3, id="code-in-one-year"),
    # Image Classification: 11 papers, Dropout undated; VGG, Batch Normalization and Dropout have no code.
    pytest.param({"task": "Image Classification", "has_code": "false"}, 3, id="task-without-code"),
])
def test_counts_and_echoed_filters(catalog_url: str, params: dict[str, str], count: int) -> None:
    got, applied = _count(catalog_url, **params)
    assert got == count
    assert {key: applied[key] for key in params} == params


@pytest.mark.parametrize(("params", "status", "detail"), [
    pytest.param({"dataset": "No Such Benchmark"}, 404, "Dataset not found: No Such Benchmark", id="unknown"),
    pytest.param({"has_code": "maybe"}, 422, "has_code must be true or false", id="bad-bool"),
])
def test_bad_filters_are_json_errors(catalog_url: str, params: dict[str, str], status: int, detail: str) -> None:
    response = request("GET", f"{catalog_url}/papers/", params=params, timeout=10)
    assert (response.status_code, response.json()) == (status, {"detail": detail})

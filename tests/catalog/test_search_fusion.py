"""Pure logic of the semantic index: quantization, top-k selection and rank fusion."""

from __future__ import annotations

import numpy as np
import pytest

from catalog.search import papers as search
from catalog.search import vectors
from catalog.store.filters import PaperFilters, date_key


def test_int8_quantization_keeps_cosines_within_a_percent() -> None:
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((200, 256)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    q, scale = vectors.quantize(matrix)
    assert q.dtype == np.int8 and scale.dtype == np.float32 and int(np.abs(q).max()) == 127
    exact = matrix @ matrix[0]
    approx = (q.astype(np.int32) @ q[0].astype(np.int32)) * scale * scale[0]
    assert float(np.abs(exact - approx).max()) < 0.01
    assert np.allclose(vectors.dequantize(q, scale), matrix, atol=float(scale.max()))


def test_a_zero_vector_quantizes_to_a_zero_scale() -> None:
    q, scale = vectors.quantize(np.zeros((2, 4), dtype=np.float32))
    assert not q.any() and not scale.any()


def test_top_k_orders_by_score_then_id_and_skips_excluded_rows() -> None:
    scores = np.array([0.5, 0.9, 0.5, -np.inf, 0.7], dtype=np.float32)
    ids = np.array([40, 10, 30, 20, 50], dtype=np.int64)
    assert [pid for pid, _ in vectors.top_k(scores, ids, 3)] == [10, 50, 30]
    assert [pid for pid, _ in vectors.top_k(scores, ids, 10)] == [10, 50, 30, 40]
    assert vectors.top_k(scores, ids, 0) == []


@pytest.mark.parametrize(("rankings", "expected"), [
    pytest.param([[1, 2, 3], [3, 2, 1]], [1, 3, 2], id="symmetric-ties-by-id"),
    pytest.param([[1, 2], [2, 5]], [2, 1, 5], id="found-by-both-wins"),
    pytest.param([[], [7, 8]], [7, 8], id="one-side-empty"),
    pytest.param([[], []], [], id="both-empty"),
])
def test_reciprocal_rank_fusion(rankings: list[list[int]], expected: list[int]) -> None:
    assert search.rrf(rankings) == expected


def test_date_keys_compare_like_dates() -> None:
    assert date_key("2020-01-31") < date_key("2020-02-01") < date_key("2021")
    assert date_key(None) == 0 == date_key("n/a")


def test_allowed_keeps_order_and_drops_filtered_or_unknown_ids() -> None:
    from catalog.search.embeddings import get_embedder

    index = vectors.VectorIndex(
        "s", get_embedder(), np.zeros((3, 256), dtype=np.int8), np.array([2, 5, 9], dtype=np.int64),
        np.ones(3, dtype=np.float32), np.array([20190101, 20200601, 20210101], dtype=np.int32),
        np.array([1, 0, 1], dtype=np.int8))
    assert index.allowed([9, 7, 2, 5]) == [9, 2, 5]
    assert index.allowed([9, 2, 5], PaperFilters(start_date="2020-01-01")) == [9, 5]
    assert index.allowed([9, 2, 5], PaperFilters(start_date="2020-01-01", official=True)) == [9]
    assert index.allowed([9, 2, 5], PaperFilters(end_date="2020-12-31", official=False)) == [5]


def test_paper_filters_read_alike_as_sql_named_sql_and_echo() -> None:
    filters = PaperFilters("2020-01-01", "2020-12-31", official=False)
    assert filters.sql() == (["p.published >= ?", "p.published <= ?", "p.has_official_implementation = 0"],
                             ["2020-01-01", "2020-12-31"])
    assert filters.named_sql("d")[1] == {"start_date": "2020-01-01", "end_date": "2020-12-31"}
    assert filters.named_sql("d")[0][:2] == ["d >= :start_date", "d <= :end_date"]
    assert filters.applied() == {"start_date": "2020-01-01", "end_date": "2020-12-31",
                                 "has_official_implementation": "false"}
    assert not PaperFilters().active and PaperFilters(official=True).active

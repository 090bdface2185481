"""Leaderboard ranking rules and natural keys used by the importer."""

from __future__ import annotations

import pytest

from catalog.importer import keys, ranking


@pytest.mark.parametrize(("name", "lower"), [
    pytest.param("Percentage error", True, id="error"),
    pytest.param("Test perplexity", True, id="perplexity"),
    pytest.param("WER", True, id="wer"),
    pytest.param("FID", True, id="fid"),
    pytest.param("Bit per Character (BPC)", True, id="bpc"),
    pytest.param("Top 1 Accuracy", False, id="accuracy"),
    pytest.param("BLEU score", False, id="bleu"),
    pytest.param("F1", False, id="f1"),
    pytest.param("Dev", False, id="unknown-defaults-to-higher"),
])
def test_metric_direction_follows_the_metric_name(name: str, lower: bool) -> None:
    assert ranking.lower_is_better(name) is lower


def test_ranking_metric_skips_model_size_columns() -> None:
    assert ranking.ranking_metric(["Number of params", "Top 1 Accuracy"]) == "Top 1 Accuracy"
    assert ranking.ranking_metric(["Params"]) == "Params"
    assert ranking.ranking_metric([]) is None


@pytest.mark.parametrize(("value", "expected"), [
    pytest.param("86.6", 86.6, id="string"),
    pytest.param("84.4%", 84.4, id="percent"),
    pytest.param("1,024", 1024.0, id="thousands"),
    pytest.param(3, 3.0, id="int"),
    pytest.param(True, None, id="bool"),
    pytest.param("28.5*", None, id="annotated"),
    pytest.param(None, None, id="none"),
])
def test_metric_values_parse_like_the_cli(value: object, expected: float | None) -> None:
    assert ranking.metric_value(value) == expected


def test_competition_ranks_share_ties_and_leave_unparsed_rows_unranked() -> None:
    ranks = ranking.competition_ranks([(1, 80.0), (2, 90.0), (3, 80.0), (4, None), (5, 70.0)], lower=False)
    assert ranks == {2: 1, 1: 2, 3: 2, 5: 4, 4: None}
    assert ranking.competition_ranks([(1, 3.0), (2, 1.0)], lower=True) == {2: 1, 1: 2}


@pytest.mark.parametrize(("url", "arxiv_id"), [
    pytest.param("https://arxiv.org/abs/1706.03762v7", "1706.03762", id="abs-versioned"),
    pytest.param("https://arxiv.org/pdf/2005.00987.pdf", "2005.00987", id="pdf"),
    pytest.param("http://arxiv.org/abs/math.GT/0309136", "math.GT/0309136", id="legacy"),
    pytest.param("https://www.aclweb.org/anthology/P18-1008", None, id="not-arxiv"),
    pytest.param("", None, id="empty"),
])
def test_arxiv_ids_come_from_paper_urls_without_versions(url: str, arxiv_id: str | None) -> None:
    assert keys.arxiv_id_from_url(url) == arxiv_id


def test_slugs_are_stable_ascii_keys() -> None:
    assert keys.slugify("WMT2014 English-German") == "wmt2014-english-german"
    assert keys.slugify("Université de Montréal") == "universite-de-montreal"
    assert keys.conference_name("NeurIPS 2017 12") == "NeurIPS 2017"
    assert keys.pwc_paper_slug("https://paperswithcode.com/paper/mask-r-cnn") == "mask-r-cnn"

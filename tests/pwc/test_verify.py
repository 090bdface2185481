"""``pwc paper verify`` on the verification suite and the issue's named cases (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pwc.commands.papers_cite import verify_one
from pwc.refparse import parse_reference
from pwc.transport import Client
from tests.pwc.runner import run_pwc

SUITE = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "verification-suite.json")
                   .read_text(encoding="utf-8"))


def _verify(url: str, *refs: str) -> list[dict[str, Any]]:
    result = run_pwc(url, "paper", "verify", *refs, "--json")
    assert result.code == 0, result.err
    return json.loads(result.out)["data"]["items"]


def test_no_fabricated_reference_is_verified(catalog_url: str) -> None:
    fabricated = SUITE["fabricated"]
    items = [item for start in range(0, len(fabricated), 25) for item in _verify(catalog_url, *fabricated[start:start + 25])]
    assert len(items) == len(fabricated) >= 20
    assert [i["reference"] for i in items if i["status"] == "verified"] == []


def test_real_references_are_verified_with_at_least_95_percent_recall(catalog_url: str) -> None:
    with Client(catalog_url, timeout=10) as client:
        answers = [verify_one(client, case["text"]) for case in SUITE["real"]]
    right = sum(1 for case, a in zip(SUITE["real"], answers, strict=True)
                if (a["paper"]["id"] if a["status"] == "verified" else a["status"]) == case["expect"])
    assert right / len(SUITE["real"]) >= 0.95
    assert all(a["paper"]["id"] == case["expect"] for case, a in zip(SUITE["real"], answers, strict=True)
               if a["status"] == "verified")


def test_the_two_overviews_are_told_apart_by_author_and_year(catalog_url: str) -> None:
    title, li, mousavi = _verify(catalog_url, "Deep Reinforcement Learning: An Overview",
                                 "Li, Y. (2017). Deep reinforcement learning: An overview.",
                                 "Mousavi, S. S., Schukat, M., & Howley, E. (2018). Deep reinforcement "
                                 "learning: an overview.")
    assert title["status"] == "ambiguous" and {c["id"] for c in title["candidates"]} == {"1701.07274", "1806.08894"}
    assert "first author and year" in title["message"]
    assert (li["status"], li["paper"]["id"]) == ("verified", "1701.07274")
    assert (mousavi["status"], mousavi["paper"]["id"]) == ("verified", "1806.08894")
    assert li["evidence"]["first_author"]["agrees"] is True and li["evidence"]["year"]["agrees"] is True


def test_a_matching_title_with_a_contradicting_year_or_author_is_not_verified(catalog_url: str) -> None:
    year, author = _verify(catalog_url, "Vaswani et al. (2015). Attention is all you need.",
                           "Shazeer, N. (2017). Attention is all you need. NeurIPS.")
    assert year["status"] == author["status"] == "not_found"
    assert "2015" in year["message"] and "Shazeer" in author["message"]


def test_repeated_references_are_looked_up_once(catalog_server: Any) -> None:
    before = catalog_server.log_text().count("GET papers_search ")
    items = _verify(catalog_server.api_url, *["Attention Is All You Need (unique-repeat-check)"] * 5)
    assert len(items) == 5 and len({json.dumps(i, sort_keys=True) for i in items}) == 1
    assert catalog_server.log_text().count("GET papers_search ") - before == 1


def test_a_journal_cited_one_or_two_years_after_a_venueless_preprint_is_verified(catalog_url: str) -> None:
    t5, switch, arxiv_year, too_late, resnet_journal = _verify(
        catalog_url,
        'C. Raffel et al., "Exploring the limits of transfer learning with a unified text-to-text transformer," '
        "J. Mach. Learn. Res., vol. 21, no. 140, pp. 1-67, 2020.",
        "Fedus, W., Zoph, B., & Shazeer, N. (2022). Switch transformers: Scaling to trillion parameter models with "
        "simple and efficient sparsity. Journal of Machine Learning Research, 23(120), 1-39.",
        "Fedus, W. et al. (2022). Switch transformers: Scaling to trillion parameter models with simple and "
        "efficient sparsity. arXiv preprint.",
        "Fedus, W. et al. (2024). Switch transformers: Scaling to trillion parameter models with simple and "
        "efficient sparsity. Journal of Machine Learning Research.",
        "He, K. et al. (2017). Deep residual learning for image recognition. IEEE Transactions on Pattern Analysis "
        "and Machine Intelligence.")
    assert (t5["status"], t5["paper"]["id"], t5["evidence"]["year"]["journal_lag"]) == ("verified", "1910.10683", 1)
    assert t5["evidence"]["year"]["journal"] == "J. Mach. Learn. Res" and "journal version" in t5["message"]
    assert (switch["status"], switch["paper"]["id"], switch["evidence"]["year"]["journal_lag"]) == (
        "verified", "2101.03961", 1)
    # No journal named, more than two years, or a conference venue the catalog knows: the year decides as is.
    assert arxiv_year["status"] == too_late["status"] == resnet_journal["status"] == "not_found"
    assert "says 2017, the paper is from 2016" in resnet_journal["message"]


def test_a_title_the_catalog_holds_costs_one_catalog_call_venue_year_included(catalog_server: Any) -> None:
    before = catalog_server.log_text().count("GET ")
    items = _verify(catalog_server.api_url, "He K, Zhang X, Ren S, Sun J. Deep residual learning for image "
                    "recognition. CVPR 2016 (one-call-check)", "arXiv:1706.03762 (one-call-check)")
    assert [i["status"] for i in items] == ["verified", "verified"]
    assert items[0]["evidence"]["year"] == {"reference": 2016, "paper": 2016, "agrees": True}
    assert catalog_server.log_text().count("GET ") - before == 2


@pytest.mark.parametrize(("text", "journal"), [
    pytest.param("Raffel, C. et al. (2020). Exploring the limits. J. Mach. Learn. Res., 21(140).", "J. Mach. Learn. Res",
                 id="abbreviated"),
    pytest.param("Fedus, W. (2022). Switch transformers. Journal of Machine Learning Research, 23.",
                 "Journal of Machine Learning Research", id="spelled-out"),
    pytest.param("He, K. (2017). Deep residual learning. IEEE Trans. Pattern Anal. Mach. Intell., vol. 39.",
                 "Trans. Pattern Anal. Mach. Intell", id="transactions"),
    pytest.param("J. Ho, A. Jain. Denoising diffusion probabilistic models. NeurIPS 2020.", None, id="initials-not-a-journal"),
    pytest.param("Smith, J. (2019). A journal of my experiments. arXiv.", None, id="journal-in-the-title"),
    pytest.param("Vaswani et al. (2017). Attention is all you need. NeurIPS", None, id="conference"),
])
def test_the_journal_is_read_after_the_title_only(text: str, journal: str | None) -> None:
    assert parse_reference(text).journal == journal

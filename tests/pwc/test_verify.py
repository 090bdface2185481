"""``pwc paper verify`` on the verification suite and the issue's named cases (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pwc.commands.papers_cite import verify_one
from pwc.transport import Client
from tests.pwc.runner import run_pwc

SUITE = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "verification-suite.json")
                   .read_text(encoding="utf-8"))


def _verify(url: str, *refs: str) -> list[dict[str, Any]]:
    result = run_pwc(url, "paper", "verify", *refs, "--json")
    assert result.code == 0, result.err
    return json.loads(result.out)["data"]["items"]


def test_no_fabricated_reference_is_verified(catalog_url: str) -> None:
    items = _verify(catalog_url, *SUITE["fabricated"][:25])
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

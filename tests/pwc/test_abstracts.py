"""Abstracts cut at a sentence end within a character budget (``pwc.abstracts``)."""

from __future__ import annotations

import pytest

from pwc.abstracts import ELLIPSIS, cut_abstract

TEXT = ("The dominant models are based on recurrent networks. The best ones also use attention, e.g. Bahdanau "
        "et al. We propose the Transformer. It is fast.")


def test_a_short_abstract_is_kept_whole_on_one_line() -> None:
    assert cut_abstract("Line one.\n  Line two.", 300) == ("Line one. Line two.", False)


@pytest.mark.parametrize("budget", [60, 80, 120, 140])
def test_a_long_abstract_ends_at_a_sentence_end_within_the_budget(budget: int) -> None:
    text, cut = cut_abstract(TEXT, budget)
    assert cut and len(text) <= budget and text.endswith("." + ELLIPSIS)
    assert TEXT.startswith(text.removesuffix(ELLIPSIS))


def test_abbreviations_are_not_sentence_ends() -> None:
    text, _ = cut_abstract(TEXT, 125)
    assert text == "The dominant models are based on recurrent networks." + ELLIPSIS


def test_without_a_sentence_end_in_reach_the_cut_is_at_a_word() -> None:
    text, cut = cut_abstract("word " * 100, 50)
    assert cut and len(text) <= 50 and text.endswith("word" + ELLIPSIS)
    assert cut_abstract("x" * 100, 50)[0] == "x" * 48 + ELLIPSIS

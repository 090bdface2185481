"""Paper reference classification (docs/cli-contract.md §3.1)."""

from __future__ import annotations

import pytest

from pwc.references import is_identifier, normalize_title


@pytest.mark.parametrize(("ref", "expected"), [
    pytest.param("2501.01234", True, id="modern"),
    pytest.param("2501.1234", True, id="modern-4-digits"),
    pytest.param("2501.01234V3", True, id="modern-version-any-case"),
    pytest.param("264", True, id="numeric"),
    pytest.param("cs/0101001", True, id="legacy"),
    pytest.param("math.GT/0309136v1", True, id="legacy-subject-class"),
    pytest.param("hep-th/9901001", True, id="legacy-dash"),
    pytest.param("2501.1", False, id="too-short"),
    pytest.param("Attention Is All You Need", False, id="title"),
    pytest.param("https://arxiv.org/abs/2501.01234", False, id="url-is-a-title"),
    pytest.param("cs/010100", False, id="legacy-too-short"),
])
def test_identifiers_are_recognised(ref, expected):
    assert is_identifier(ref) is expected


def test_titles_normalise_whitespace_and_case():
    assert normalize_title("  Attention\tIs  ALL you need ") == "attention is all you need"

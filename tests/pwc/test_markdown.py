"""``pwc.markdown``: the table and cell helpers shared by the CLI's captured output and the MCP text."""

from __future__ import annotations

from pwc.markdown import md_cell, md_table


def test_the_padded_table_is_the_form_the_cli_writes() -> None:
    assert md_table(["Rank", "Model"], [["1", "ViT"]], ["---:", "---"]) == [
        "| Rank | Model |", "| ---: | --- |", "| 1 | ViT |"]


def test_the_compact_table_drops_columns_without_a_value() -> None:
    rows = [["1", "", "a"], ["2", "", "b"]]
    assert md_table(["id", "split", "name"], rows, drop_empty=True, compact=True) == [
        "id|name", "-|-", "1|a", "2|b"]


def test_cells_escape_pipes_and_newlines_and_leave_missing_values_empty() -> None:
    assert md_cell("a|b\nc") == "a\\|b c"
    assert md_cell(None) == "" and md_cell([]) == "" and md_cell(0) == "0"

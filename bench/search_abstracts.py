"""What ``include_abstracts`` costs an agent: text bytes of ``search_papers`` on the relevance questions.

    uv run python bench/search_abstracts.py [--chars 300] [--json]

Imports the corpus of ``bench/relevance.py`` (its leaderboard papers have titles only; its
full-text papers and distractors have abstracts), serves it with ``python -m catalog serve
--db``, and runs every query of every set through ``pwc_mcp_core.tools.execution.execute``
(the code a worker runs) three ways: without abstracts, with abstracts cut to ``--chars``
(default 300) and with whole abstracts (``abstract_chars`` 2000, the maximum). It reports,
per set, the mean bytes of the result text (what a text-only client shows the model) and of
the structured JSON without ``data``, and how many results carried an abstract and how many
were cut.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench import relevance  # the corpus and its query sets
from bench.catalog_process import serve
from catalog.importer import run_import
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools.execution import Runtime, execute


def _measure(runtime: Runtime, queries: list[str], extra: dict[str, Any]) -> dict[str, float]:
    text = structured = shown = cut = 0
    for query in queries:
        result = json.loads(execute(Call("tools/call", "search_papers", {"query": query, **extra}), runtime))["result"]
        text += len(result["content"][0]["text"].encode("utf-8"))
        content = {k: v for k, v in result.get("structuredContent", {}).items() if k != "data"}
        structured += len(json.dumps(content, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
        shown += sum(1 for item in content.get("items", []) if item.get("abstract"))
        cut += content.get("abstracts_cut") or 0
    n = len(queries)
    return {"text_bytes": round(text / n), "structured_bytes": round(structured / n),
            "abstracts_per_call": round(shown / n, 2), "cut_per_call": round(cut / n, 2)}


def run(chars: int) -> dict[str, Any]:
    """Import the relevance corpus, serve it, and measure every set three ways."""
    tables = [relevance.FIXTURE] + ([relevance.SHARED] if relevance.SHARED.is_file() else [])
    papers, names = relevance.load_benchmark(tables, 3)
    _, all_names = relevance.load_benchmark(tables, 1)
    texts = relevance.text_papers()
    sets = relevance.query_sets(papers, all_names, texts)
    sets["names"] = names
    ways = {"none": {}, f"cut to {chars}": {"include_abstracts": True, "abstract_chars": chars},
            "whole (2000)": {"include_abstracts": True, "abstract_chars": 2000}}
    with tempfile.TemporaryDirectory(prefix="search-abstracts-") as tmp:
        db = Path(tmp) / "relevance.db"
        out = io.StringIO()
        if run_import(db, relevance._write_corpus(papers, texts, tables, Path(tmp)), out=out) != 0:
            raise SystemExit(out.getvalue())
        proc, api_url = serve("--db", str(db))
        try:
            runtime = Runtime.build(CoreSettings(api_url=api_url, cursor_keys=("bench",)))
            return {name: {way: _measure(runtime, sorted(queries), extra) for way, extra in ways.items()}
                    for name, queries in sets.items()}
        finally:
            proc.terminate()
            proc.wait(10)


def main() -> int:
    """Print a Markdown table (or JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chars", type=int, default=300, help="abstract_chars (50-2000, default 300)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.chars)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print("| set | abstracts | text bytes / call | structured bytes / call | abstracts / call | cut / call |")
    print("|---|---|---:|---:|---:|---:|")
    for name, ways in result.items():
        for way, m in ways.items():
            print(f"| {name} | {way} | {m['text_bytes']:,} | {m['structured_bytes']:,} | "
                  f"{m['abstracts_per_call']} | {m['cut_per_call']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Search relevance on real leaderboard data: recall@10 and nDCG@10 per search mode.

Usage::

    uv run python bench/relevance.py [--tables FILE ...] [--min-relevant 3] [--json]
        [--baseline FILE]   # e.g. git show 71eb608:catalog/search.py > /tmp/old_search.py

Queries are the task names and dataset names of the evaluation tables (the
public dump format); the relevant answers of a query are the papers on that
task's or dataset's leaderboards. The corpus is every leaderboard paper (real
titles; the tables carry no abstracts) plus distractors: the bundled sample
catalog's 39 papers with abstracts and the 13 papers of
``tests/fixtures/search``. It is imported with ``catalog.importer.run_import``
(so the vectors are the ones an import builds) and searched with
``catalog.search.search_papers``, the function behind ``papers/search``.

Default tables: ``tests/fixtures/pwc-archive/evaluation-tables.json`` (57
papers, 10 queries) and, when present, the larger real file
``/work/shared/data/pwc-archive/evaluation-tables.json``.

``--baseline FILE`` also scores another ``search_papers`` implementation (a
module file with the same signature, e.g. the code before the semantic index)
on the same database, as ``baseline-<mode>`` rows.

Metrics, averaged over queries: recall@10 = relevant papers in the top 10 /
min(10, relevant papers); nDCG@10 with binary gains.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import itertools
import json
import math
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from catalog import search
from catalog.importer import run_import
from catalog.sample import SAMPLE_DIR
from catalog.store import Page

FIXTURE = ROOT / "tests" / "fixtures" / "pwc-archive" / "evaluation-tables.json"
SHARED = Path("/work/shared/data/pwc-archive/evaluation-tables.json")
DISTRACTORS = (SAMPLE_DIR / "papers-with-abstracts.json", ROOT / "tests" / "fixtures" / "search" /
               "papers-with-abstracts.json")
MODES = ("keyword", "semantic", "hybrid")
K = 10


def _key(title: str) -> str:
    return " ".join(title.casefold().split())


def _walk(task: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(task name, dataset name, row) for every leaderboard row under ``task``."""
    for dataset in task.get("datasets") or []:
        for row in (dataset.get("sota") or {}).get("rows") or []:
            yield task["task"], dataset["dataset"], row
    for sub in task.get("subtasks") or []:
        yield from _walk(sub)


def load_benchmark(tables: list[Path], min_relevant: int) -> tuple[dict[str, dict[str, Any]], dict[str, set[str]]]:
    """Papers by title key, and relevant title keys by query."""
    papers: dict[str, dict[str, Any]] = {}
    relevant: dict[str, set[str]] = {}
    for path in tables:
        for task in json.loads(path.read_text(encoding="utf-8")):
            for task_name, dataset_name, row in _walk(task):
                title = (row.get("paper_title") or "").strip()
                if not title:
                    continue
                key = _key(title)
                papers.setdefault(key, {"title": title, "date": row.get("paper_date") or None})
                relevant.setdefault(task_name, set()).add(key)
                relevant.setdefault(dataset_name, set()).add(key)
    queries = {q: rel for q, rel in relevant.items() if len(rel) >= min_relevant}
    return papers, queries


def _write_corpus(papers: dict[str, dict[str, Any]], folder: Path) -> Path:
    records = []
    for index, paper in enumerate(papers.values()):
        records.append({"paper_url": f"https://paperswithcode.com/paper/leaderboard-{index}", "arxiv_id": None,
                        "title": paper["title"], "abstract": "", "authors": [], "tasks": [],
                        "date": paper["date"], "methods": []})
    known = set(papers)
    for path in DISTRACTORS:
        for record in json.loads(path.read_text(encoding="utf-8")):
            if _key(record["title"]) not in known:
                records.append(record)
    target = folder / "papers-with-abstracts.json"
    target.write_text(json.dumps(records), encoding="utf-8")
    return target


def _metrics(ranked: list[str], relevant: set[str]) -> tuple[float, float]:
    hits = [1.0 if key in relevant else 0.0 for key in ranked[:K]]
    ideal = min(K, len(relevant))
    dcg = sum(h / math.log2(i + 2) for i, h in enumerate(hits))
    idcg = sum(1.0 / math.log2(i + 2) for i in range(ideal))
    return sum(hits) / ideal, dcg / idcg


def _load_module(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("baseline_search", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(tables: list[Path], min_relevant: int, baseline: Path | None = None) -> dict[str, Any]:
    """Import the corpus, run every query in every mode, return the averaged metrics."""
    papers, queries = load_benchmark(tables, min_relevant)
    with tempfile.TemporaryDirectory(prefix="relevance-") as tmp:
        folder = Path(tmp)
        db = folder / "relevance.db"
        out = io.StringIO()
        if run_import(db, [_write_corpus(papers, folder)], out=out) != 0:
            raise SystemExit(out.getvalue())
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        conn.row_factory = sqlite3.Row
        count = conn.execute("SELECT count(*) FROM papers").fetchone()[0]
        engines: list[tuple[str, Any]] = [("", search)]
        if baseline is not None:
            engines.append(("baseline-", _load_module(baseline)))
        totals = {prefix + mode: [0.0, 0.0] for prefix, _ in engines for mode in MODES}
        for query, rel in sorted(queries.items()):
            for (prefix, engine), mode in itertools.product(engines, MODES):
                body = engine.search_papers(conn, query, Page(1, K), mode=mode, start_date=None, end_date=None,
                                            has_official_implementation=None)
                ranked = [_key(r["title"]) for r in body["results"]]
                recall, ndcg = _metrics(ranked, rel)
                totals[prefix + mode][0] += recall
                totals[prefix + mode][1] += ndcg
        conn.close()
    n = len(queries)
    return {"tables": [str(t) for t in tables], "papers": count, "leaderboard_papers": len(papers),
            "queries": n, "min_relevant": min_relevant,
            "modes": {mode: {"recall@10": round(r / n, 3), "ndcg@10": round(g / n, 3)}
                      for mode, (r, g) in totals.items()}}


def main() -> int:
    """Run the benchmark and print a Markdown table (or JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=Path, action="append", help="evaluation-tables.json (repeatable)")
    parser.add_argument("--min-relevant", type=int, default=3, help="skip queries with fewer relevant papers")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--baseline", type=Path, help="another search module file to score alongside")
    args = parser.parse_args()
    tables = args.tables or [FIXTURE] + ([SHARED] if SHARED.is_file() else [])
    result = run(tables, args.min_relevant, args.baseline)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{result['queries']} queries, {result['papers']} papers "
          f"({result['leaderboard_papers']} on leaderboards); tables: {', '.join(result['tables'])}")
    print("\n| mode | recall@10 | nDCG@10 |\n|---|---|---|")
    modes = result["modes"]
    assert isinstance(modes, dict)
    for mode, scores in modes.items():
        print(f"| {mode} | {scores['recall@10']:.3f} | {scores['ndcg@10']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

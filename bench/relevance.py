"""Search relevance on real leaderboard data: recall@10 and nDCG@10 per query set and search mode.

Usage::

    uv run python bench/relevance.py [--tables FILE ...] [--min-relevant 3] [--json] [--sets names,...]
        [--baseline FILE]   # e.g. git show 71eb608:catalog/search.py > /tmp/old_search.py

Query sets (``--sets``, default all):

* ``names``: the task names and dataset names of the evaluation tables (the
  public dump format); the relevant answers of a query are the papers on
  that task's or dataset's leaderboards.
* ``synonyms``: hand-written queries in the words researchers type rather
  than the catalog's ("recognizing spoken words"), each scored against the
  leaderboard papers of the tasks it paraphrases
  (``bench/relevance_queries.json``).
* ``abbreviations``: queries naming a task or dataset by abbreviation
  ("NER", "POS tagging", "MNLI"), scored the same way.
* ``known-item``: 40 leaderboard titles with one word replaced by a
  plausible wrong one ("Deep Residual Nets for ..."); the one relevant
  answer is that paper. Generated deterministically.
* ``passages``: questions answered inside the body of a paper with full
  text in ``../shared/data/paper-text`` ("label smoothing during training");
  the relevant answer is that paper. Only when that folder exists.

The corpus is every leaderboard paper (real titles; the tables carry no
abstracts), the papers with full text (title and the abstract taken from
their Markdown), and distractors: the bundled sample catalog's 39 papers with
abstracts and the 13 papers of ``tests/fixtures/search``. The catalog's
vocabulary is imported too: the evaluation tables' tasks and datasets with
their leaderboard rows removed (so no paper is tagged with the task it is
relevant for: tags would give the answers away; the distractors are untagged
too) and the sample's methods. The boost of tagged papers is therefore not
measured here (``tests/catalog/test_search_vocabulary.py`` checks it).
It is imported with ``catalog.importer.run_import`` (so the vectors are the
ones an import builds) and searched with ``catalog.search.papers.search_papers``, the
function behind ``papers/search``.

Default tables: ``tests/fixtures/pwc-archive/evaluation-tables.json`` and,
when present, the larger real file ``../shared/data/pwc-archive/evaluation-tables.json``.

Metrics, averaged over the queries of a set: recall@10 = relevant papers in
the top 10 / min(10, relevant papers); nDCG@10 with binary gains. ``all`` is
the mean of the set means (each set weighs the same, whatever its size).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import io
import itertools
import json
import math
import re
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from catalog.importer import run_import
from catalog.sample import SAMPLE_DIR
from catalog.search import papers as search
from catalog.store.core import Page

FIXTURE = ROOT / "tests" / "fixtures" / "pwc-archive" / "evaluation-tables.json"
SHARED_DATA = ROOT.parent / "shared" / "data"
SHARED = SHARED_DATA / "pwc-archive" / "evaluation-tables.json"
PAPER_TEXT = SHARED_DATA / "paper-text"
QUERIES = Path(__file__).resolve().parent / "relevance_queries.json"
DISTRACTORS = (SAMPLE_DIR / "papers-with-abstracts.json", ROOT / "tests" / "fixtures" / "search" /
               "papers-with-abstracts.json")
METHODS = SAMPLE_DIR / "methods.json"
MODES = ("keyword", "semantic", "hybrid")
SETS = ("names", "synonyms", "abbreviations", "known-item", "passages")
K = 10
KNOWN_ITEMS = 40
# A plausible wrong word for a word a reader remembers from a title.
WRONG_WORD = {
    "networks": "nets", "network": "net", "learning": "training", "deep": "deeper", "recognition": "detection",
    "language": "linguistic", "sequence": "sequential", "parsing": "parser", "attention": "attentive",
    "machine": "automatic", "recurrent": "recursive", "model": "approach", "convolutional": "convolution",
    "comprehension": "understanding", "question": "query", "training": "learning", "answering": "answers",
    "image": "picture", "visual": "vision", "models": "methods", "speech": "voice", "summarization": "summaries",
    "text": "document", "translation": "translator", "unsupervised": "unlabeled", "large": "big",
    "word": "token", "representations": "embeddings", "sentence": "phrase", "classification": "categorization",
    "neural": "neuronal", "generation": "generating", "entity": "entities", "dialogue": "conversation",
    "hierarchical": "layered", "improving": "boosting", "semantic": "meaning", "reading": "reader",
}


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
    """Papers by title key, and relevant title keys by task or dataset name (the ``names`` set)."""
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


def _strip_rows(task: dict[str, Any]) -> dict[str, Any]:
    """The task with its datasets but without leaderboard rows (vocabulary only)."""
    out = dict(task)
    out["datasets"] = [{**d, "sota": {"metrics": (d.get("sota") or {}).get("metrics") or [], "rows": []},
                        "subdatasets": []} for d in task.get("datasets") or []]
    out["subtasks"] = [_strip_rows(s) for s in task.get("subtasks") or []]
    return out


def _abstract_of(markdown: str) -> str:
    """The abstract of a paper's Markdown: the paragraphs after its "Abstract" heading (or label)."""
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        head = line.strip().lstrip("#").strip().casefold()
        if head in ("abstract", "abstract."):
            body: list[str] = []
            for nxt in lines[i + 1:]:
                if nxt.startswith("#") and body:
                    break
                body.append(nxt.strip())
            return " ".join(b for b in body if b).strip("* ")
        if head.startswith("abstract."):
            return line.strip()[len("abstract."):].strip()
    for i, line in enumerate(lines):  # no abstract: the first paragraph of the introduction
        if line.strip().lstrip("#").strip().casefold() == "introduction":
            return " ".join(x.strip() for x in lines[i + 1:i + 6] if x.strip())
    return ""


def text_papers() -> list[dict[str, Any]]:
    """Papers with full text in ``../shared/data/paper-text``: arXiv id, title, abstract (empty when absent)."""
    index = PAPER_TEXT / "index.json"
    if not index.is_file():
        return []
    out = []
    for entry in json.loads(index.read_text(encoding="utf-8")):
        files = sorted((f for f in entry["files"] if str(f.get("kind", "")).startswith("markdown")),
                       key=lambda f: f["kind"] != "markdown")  # LaTeX-converted first, then from PDF
        if not files:
            continue
        text = (PAPER_TEXT / files[0]["file"]).read_text(encoding="utf-8")
        out.append({"arxiv_id": entry["arxiv_id"], "title": entry["title"], "abstract": _abstract_of(text)})
    return out


def known_items(papers: dict[str, dict[str, Any]]) -> dict[str, set[str]]:
    """Titles with one word wrong -> {that title}: the first KNOWN_ITEMS in a hash order that have a
    word of WRONG_WORD and at least four words (one query per title)."""
    out: dict[str, set[str]] = {}
    for key in sorted(papers, key=lambda k: hashlib.sha256(k.encode()).hexdigest()):
        title = papers[key]["title"]
        words = title.split()
        if len(words) < 4 or "http" in title:
            continue
        for i, word in enumerate(words):
            bare = re.sub(r"\W", "", word).casefold()
            if bare in WRONG_WORD:
                words[i] = word.casefold().replace(bare, WRONG_WORD[bare])
                out[" ".join(words)] = {key}
                break
        if len(out) == KNOWN_ITEMS:
            break
    return out


def query_sets(papers: dict[str, dict[str, Any]], names: dict[str, set[str]],
               texts: list[dict[str, Any]]) -> dict[str, dict[str, set[str]]]:
    """Every query set: query -> relevant title keys."""
    hand = json.loads(QUERIES.read_text(encoding="utf-8"))
    sets: dict[str, dict[str, set[str]]] = {"names": names}
    for name in ("synonyms", "abbreviations"):
        sets[name] = {e["query"]: set().union(*(names[t] for t in e["targets"] if t in names))
                      for e in hand[name]}
        sets[name] = {q: rel for q, rel in sets[name].items() if rel}
    sets["known-item"] = known_items(papers)
    by_arxiv = {t["arxiv_id"]: _key(t["title"]) for t in texts}
    sets["passages"] = {e["query"]: {by_arxiv[e["arxiv_id"]]} for e in hand["passages"]
                        if e["arxiv_id"] in by_arxiv}
    return {name: queries for name, queries in sets.items() if queries}


def _write_corpus(papers: dict[str, dict[str, Any]], texts: list[dict[str, Any]], tables: list[Path],
                  folder: Path) -> list[Path]:
    abstracts = {_key(t["title"]): t for t in texts}
    records = []
    for index, (key, paper) in enumerate(papers.items()):
        text = abstracts.pop(key, None)
        records.append({"paper_url": f"https://paperswithcode.com/paper/leaderboard-{index}",
                        "arxiv_id": text["arxiv_id"] if text else None,
                        "title": paper["title"], "abstract": text["abstract"] if text else "", "authors": [],
                        "tasks": [], "date": paper["date"], "methods": []})
    for text in abstracts.values():
        records.append({"paper_url": f"https://paperswithcode.com/paper/text-{text['arxiv_id']}",
                        "arxiv_id": text["arxiv_id"], "title": text["title"], "abstract": text["abstract"],
                        "authors": [], "tasks": [], "date": None, "methods": []})
    known = set(papers) | {_key(t["title"]) for t in texts}
    for path in DISTRACTORS:
        for record in json.loads(path.read_text(encoding="utf-8")):
            if _key(record["title"]) not in known:
                # Untagged: a distractor tagged with a query's task would be right but judged wrong.
                records.append({**record, "tasks": [], "methods": []})
    target = folder / "papers-with-abstracts.json"
    target.write_text(json.dumps(records), encoding="utf-8")
    vocabulary = folder / "evaluation-tables.json"
    vocabulary.write_text(json.dumps([_strip_rows(task) for path in tables
                                      for task in json.loads(path.read_text(encoding="utf-8"))]),
                          encoding="utf-8")
    return [target, vocabulary, METHODS]


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


def run(tables: list[Path], min_relevant: int, baseline: Path | None = None,
        only: tuple[str, ...] = SETS, verbose: bool = False) -> dict[str, Any]:
    """Import the corpus, run every query of every set in every mode, return the averaged metrics."""
    papers, names = load_benchmark(tables, min_relevant)
    _, all_names = load_benchmark(tables, 1)
    texts = text_papers()
    sets = {name: queries for name, queries in query_sets(papers, all_names, texts).items() if name in only}
    if "names" in sets:
        sets["names"] = names
    with tempfile.TemporaryDirectory(prefix="relevance-") as tmp:
        folder = Path(tmp)
        db = folder / "relevance.db"
        out = io.StringIO()
        if run_import(db, _write_corpus(papers, texts, tables, folder), out=out) != 0:
            raise SystemExit(out.getvalue())
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        conn.row_factory = sqlite3.Row
        count = conn.execute("SELECT count(*) FROM papers").fetchone()[0]
        engines: list[tuple[str, Any]] = [("", search)]
        if baseline is not None:
            engines.append(("baseline-", _load_module(baseline)))
        labels = [prefix + mode for prefix, _ in engines for mode in MODES]
        results: dict[str, dict[str, dict[str, float]]] = {}
        for set_name, queries in sets.items():
            totals = {label: [0.0, 0.0] for label in labels}
            for query, rel in sorted(queries.items()):
                for (prefix, engine), mode in itertools.product(engines, MODES):
                    body = engine.search_papers(conn, query, Page(1, K), mode=mode, start_date=None,
                                                end_date=None, has_official_implementation=None)
                    ranked = [_key(r["title"]) for r in body["results"]]
                    recall, ndcg = _metrics(ranked, rel)
                    totals[prefix + mode][0] += recall
                    totals[prefix + mode][1] += ndcg
                    if verbose:
                        print(f"{set_name}\t{prefix + mode}\t{ndcg:.2f}\t{query}", file=sys.stderr)
            n = len(queries)
            results[set_name] = {label: {"recall@10": round(r / n, 3), "ndcg@10": round(g / n, 3)}
                                 for label, (r, g) in totals.items()}
        conn.close()
    results["all"] = {label: {metric: round(sum(results[s][label][metric] for s in sets) / len(sets), 3)
                              for metric in ("recall@10", "ndcg@10")} for label in labels}
    return {"tables": [str(t) for t in tables], "papers": count, "leaderboard_papers": len(papers),
            "queries": {name: len(queries) for name, queries in sets.items()}, "min_relevant": min_relevant,
            "sets": results}


def main() -> int:
    """Run the benchmark and print a Markdown table (or JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=Path, action="append", help="evaluation-tables.json (repeatable)")
    parser.add_argument("--min-relevant", type=int, default=3, help="names set: skip queries with fewer relevant papers")
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated query sets ({', '.join(SETS)})")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="per-query nDCG@10 on stderr")
    parser.add_argument("--baseline", type=Path, help="another search module file to score alongside")
    args = parser.parse_args()
    only = tuple(s.strip() for s in args.sets.split(",") if s.strip())
    unknown = [s for s in only if s not in SETS]
    if unknown:
        print(f"error: unknown query set {unknown[0]!r} (choose from {', '.join(SETS)})", file=sys.stderr)
        return 2
    tables = args.tables or [FIXTURE] + ([SHARED] if SHARED.is_file() else [])
    result = run(tables, args.min_relevant, args.baseline, only, args.verbose)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    queries = result["queries"]
    print(f"{result['papers']} papers ({result['leaderboard_papers']} on leaderboards); "
          f"queries: {', '.join(f'{k} {v}' for k, v in queries.items())}; tables: {', '.join(result['tables'])}")
    sets = result["sets"]
    labels = list(next(iter(sets.values())))
    print("\nnDCG@10 / recall@10\n")
    print("| mode | " + " | ".join(sets) + " |\n|---|" + "---:|" * len(sets))
    for label in labels:
        cells = [f"{sets[s][label]['ndcg@10']:.3f} / {sets[s][label]['recall@10']:.3f}" for s in sets]
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Write a deterministic synthetic catalog in the public Papers with Code dump formats.

Usage::

    uv run python bench/gen_catalog.py --papers 100000 --evaluations 500000 --out DIR [--seed 7] \
        [--vocabulary realistic|tiny] [--gzip]
    uv run python bench/gen_catalog.py --preset archive --gzip --out DIR   # the July 2025 archive's counts
    uv run python bench/gen_catalog.py --preset archive --format parquet --out DIR  # as on the Hub

Writes ``papers-with-abstracts.json``, ``links-between-papers-and-code.json``,
``methods.json``, ``datasets.json``, ``evaluation-tables.json`` and a
``markdown/`` folder (a few large documents for read-chunk benchmarks) into
DIR. ``--format parquet`` writes the same records as parquet shards in the
layout the Hub publishes them (``pwc-archive/<name>``, as ``hf download
pwc-archive/<name> --repo-type dataset --local-dir DIR/<name>`` leaves them):
``DIR/papers-with-abstracts/data/train-0000N-of-00004.parquet`` (4 shards),
``links-between-paper-and-code``, ``methods`` and ``datasets`` (1 shard each),
``evaluation-tables`` (4 shards), each with Arrow's schema inferred from the
records as the ``datasets`` library writes it (structs holding the union of
the records' keys, the papers' ``date`` a timestamp), plus ``markdown/``.
Everything is derived from ``random.Random(seed)``, so the same
arguments always give byte-identical files. Records are written one at a
time, so memory stays small for large counts.

Shape (``--preset``):

* ``small`` (default): 200 tasks, 300 methods, 1,000 datasets, 20,000 authors,
  one code link per two papers, 40-120 abstract words, every task owning five
  datasets with equal leaderboards: the generator's first shape (byte-identical
  output for the same arguments, so earlier measurements reproduce).
* ``archive``: the counts of the final (July 2025) public archive: 576,261
  papers with ~1.1 KB abstracts, 300,161 code links, 4,451 tasks, 15,008
  datasets, 2,300 methods, 400,000 authors and about 274,000 leaderboard
  rows (board sizes are random around the mean: 257,626 with seed 7).
  Papers draw their tasks from a long-tailed distribution (the first task is in
  about 18,000 papers), dates run from 2013 to July 2025, and task 0 has
  leaderboards on 4,084 datasets (the archive's heaviest task). ``--papers``,
  ``--evaluations`` and ``--links`` still override the preset.

Vocabulary (``--vocabulary``, matters for keyword-search benchmarks):

* ``realistic`` (default): titles and abstracts mix a few *topic* words
  (the 70 machine-learning words of :data:`WORDS`, e.g. "attention",
  "transformer") into text drawn from a 30,000-word synthetic vocabulary
  with Zipf frequencies (rank r has weight 1/r), the way real abstracts
  mix a long-tailed general vocabulary with a few field terms. At 100,000
  papers a given topic word is in 13-14 % of them and two together in
  about 1.8 % (measured): the order of document frequencies real ML
  abstracts show for words like "transformer" or "graph".
* ``tiny``: every title and abstract word is one of the 70 topic words (the
  generator's first version). Each topic word is then in ~70 % of
  abstracts and any two in ~50 %: a worst case for BM25 ranking that no
  real corpus has; kept to reproduce earlier measurements.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import random
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import IO, Any

_TOPIC_TEXT = ("attention transformer residual convolution diffusion contrastive graph sparse dense "
         "retrieval language vision speech reinforcement policy reward token embedding latent "
         "quantization distillation pruning adapter prompt reasoning memory recurrent kernel "
         "segmentation detection tracking depth pose generation translation summarization "
         "question answering parsing tagging alignment robust efficient scalable federated "
         "causal bayesian variational adversarial neural implicit multimodal temporal spectral "
         "mixture expert routing normalization optimizer schedule curriculum benchmark dataset")
WORDS = _TOPIC_TEXT.split()
AREAS = ("Computer Vision", "Natural Language Processing", "Speech", "Graphs", "Reinforcement Learning",
         "Methodology", "Medical", "Time Series")
N_MARKDOWN = 40
N_VOCAB = 30_000


@dataclass(frozen=True)
class Shape:
    """Entity counts and distributions of one ``--preset`` (module doc)."""

    papers: int = 100_000
    evaluations: int = 500_000
    tasks: int = 200
    methods: int = 300
    datasets: int = 1000
    authors: int = 20_000
    links: int | None = None  # None: one link per two papers (the small shape)
    abstract_words: tuple[int, int] = (40, 120)
    archive: bool = False  # long-tailed tasks, 2013-2025 dates, one heavy task
    heavy_task_datasets: int = 0
    evaluation_tasks: int = 0  # tasks with leaderboards (archive shape)


PRESETS = {
    "small": Shape(),
    "archive": Shape(papers=576_261, evaluations=274_000, tasks=4451, methods=2300, datasets=15_008,
                     authors=400_000, links=300_161, abstract_words=(85, 165), archive=True,
                     heavy_task_datasets=4084, evaluation_tasks=2500),
}
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qui", "dor", "fen", "gal",
              "hum", "jis", "ber", "cor", "del", "mon", "nas", "pol", "ret", "sul", "tor", "val")


class _Text:
    """Draws title and abstract words for one ``--vocabulary`` choice (see module doc)."""

    def __init__(self, rng: random.Random, vocabulary: str) -> None:
        self.rng, self.tiny = rng, vocabulary == "tiny"
        words: list[str] = []
        seen = set(WORDS)
        while not self.tiny and len(words) < N_VOCAB:  # distinct pseudo-words of 2-4 syllables
            word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
            if word not in seen:
                seen.add(word)
                words.append(word)
        self.general = words
        self.cum = list(itertools.accumulate(1.0 / rank for rank in range(1, len(words) + 1)))

    def _mixed(self, count: int, topics: int) -> list[str]:
        out = self.rng.choices(self.general, cum_weights=self.cum, k=count)
        for _ in range(min(topics, count)):
            out[self.rng.randrange(count)] = self.rng.choice(WORDS)
        return out

    def title(self) -> str:
        if self.tiny:
            return _title(self.rng)
        count = self.rng.randint(4, 10)
        return " ".join(self._mixed(count, self.rng.randint(1, 3))).capitalize()

    def abstract(self, words: tuple[int, int] = (40, 120)) -> str:
        count = self.rng.randint(*words)
        if self.tiny:
            return " ".join(self.rng.choice(WORDS) for _ in range(count))
        return " ".join(self._mixed(count, self.rng.randint(2, 6)))


def _title(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 10))).capitalize()


def _arxiv_id(index: int) -> str:
    month = index // 90000
    return f"{10 + month // 12:02d}{1 + month % 12:02d}.{10000 + index % 90000:05d}"


class _ArrayWriter:
    """Writes a JSON array one element at a time."""

    def __init__(self, path: Path, compress: bool = False) -> None:
        self.handle: IO[str] = (gzip.open(path.with_name(path.name + ".gz"), "wt", encoding="utf-8",  # noqa: SIM115
                                          compresslevel=5)
                                if compress else path.open("w", encoding="utf-8"))
        self.handle.write("[")
        self.first = True

    def add(self, record: Any) -> None:
        self.handle.write(("" if self.first else ",\n") + json.dumps(record, separators=(",", ":")))
        self.first = False

    def close(self) -> None:
        self.handle.write("]\n")
        self.handle.close()


# Hub dataset name (``pwc-archive/<name>``) and shard count of each JSON dump.
HUB_LAYOUT = {"papers-with-abstracts.json": ("papers-with-abstracts", 4),
              "links-between-papers-and-code.json": ("links-between-paper-and-code", 1),
              "methods.json": ("methods", 1), "datasets.json": ("datasets", 1),
              "evaluation-tables.json": ("evaluation-tables", 4)}


class _ParquetWriter:
    """Writes records as parquet shards ``<name>/data/train-0000N-of-0000M.parquet``.

    The schema is Arrow's inference over the first row group (the generator's records all
    have one shape), as ``datasets`` infers it from the JSON: structs with the union of keys;
    the papers' ``date`` is a ``timestamp[ns]``, as pandas' ``convert_dates`` leaves it.
    """

    def __init__(self, path: Path, total: int) -> None:
        import pyarrow.parquet as pq

        self._pq = pq
        name, self.shards = HUB_LAYOUT[path.name]
        self.folder = path.parent / name / "data"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.per_shard = max(1, -(-total // self.shards))
        self.group = 100 if name == "evaluation-tables" else 10_000  # rows per row group
        self.dates = name == "papers-with-abstracts"
        self.buffer: list[dict[str, Any]] = []
        self.schema: Any = None
        self.writer: Any = None
        self.shard = self.in_shard = 0

    def add(self, record: dict[str, Any]) -> None:
        if self.dates and isinstance(record.get("date"), str):
            record = {**record, "date": datetime.strptime(record["date"], "%Y-%m-%d")}
        self.buffer.append(record)
        if self.in_shard + len(self.buffer) >= self.per_shard or len(self.buffer) >= self.group:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if not self.buffer:
            return
        if self.schema is None:
            schema = pa.Table.from_pylist(self.buffer).schema
            if self.dates:
                schema = schema.set(schema.get_field_index("date"),
                                    pa.field("date", pa.timestamp("ns")))
            self.schema = schema
        if self.writer is None:
            path = self.folder / f"train-{self.shard:05d}-of-{self.shards:05d}.parquet"
            self.writer = self._pq.ParquetWriter(path, self.schema)
        self.writer.write_table(pa.Table.from_pylist(self.buffer, schema=self.schema))
        self.in_shard += len(self.buffer)
        self.buffer = []
        if self.in_shard >= self.per_shard:
            self.writer.close()
            self.writer, self.in_shard, self.shard = None, 0, self.shard + 1

    def close(self) -> None:
        self._flush()
        if self.writer is not None:
            self.writer.close()
            self.writer, self.shard = None, self.shard + 1
        while self.schema is not None and self.shard < self.shards:
            # fewer records than shards: the remaining shards are empty, as the layout says
            path = self.folder / f"train-{self.shard:05d}-of-{self.shards:05d}.parquet"
            self._pq.write_table(self.schema.empty_table(), path)
            self.shard += 1


def _archive_date(i: int, papers: int, rng: random.Random) -> str:
    month = i * 151 // max(1, papers)  # 2013-01 .. 2025-07, in arXiv-id order
    return f"{2013 + month // 12}-{1 + month % 12:02d}-{1 + rng.randrange(28):02d}"


def _paper_tasks(rng: random.Random, tasks: list[str], cum: list[float] | None) -> list[str]:
    if cum is None:
        return rng.sample(tasks, rng.randint(1, 2))
    return list(dict.fromkeys(rng.choices(tasks, cum_weights=cum, k=rng.randint(1, 3))))


def generate(papers: int, evaluations: int, out: Path, seed: int,
             vocabulary: str = "realistic", shape: Shape | None = None,
             compress: bool = False, fmt: str = "json") -> dict[str, int]:
    """Write the synthetic dumps into ``out``; return record counts per file.

    ``vocabulary`` is ``"realistic"`` or ``"tiny"``; ``shape`` is a preset
    from :data:`PRESETS` (default ``small``); ``papers`` and ``evaluations``
    override its counts. ``compress`` writes ``.json.gz`` dumps; ``fmt="parquet"`` writes
    the same records as parquet shards in the Hub's layout (module doc)."""

    def writer(path: Path, total: int) -> _ArrayWriter | _ParquetWriter:
        return _ParquetWriter(path, total) if fmt == "parquet" else _ArrayWriter(path, compress)

    shape = replace(shape or PRESETS["small"], papers=papers, evaluations=evaluations)
    rng = random.Random(seed)
    # "tiny" draws from the main generator exactly as the first version did (same files).
    text = _Text(rng if vocabulary == "tiny" else random.Random(seed + 1), vocabulary)
    out.mkdir(parents=True, exist_ok=True)
    tasks = [f"Task {i} {rng.choice(WORDS).capitalize()}" for i in range(shape.tasks)]
    methods = [f"Method{i} {rng.choice(WORDS).capitalize()}" for i in range(shape.methods)]
    datasets = [f"Dataset{i} {rng.choice(WORDS).upper()}" for i in range(shape.datasets)]
    authors = [f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS).capitalize()}son{i}"
               for i in range(shape.authors)]
    # Archive shape: task r is picked with weight 1/(r + 10), a long tail like real task sizes.
    task_cum = (list(itertools.accumulate(1.0 / (r + 10) for r in range(len(tasks))))
                if shape.archive else None)
    counts: dict[str, int] = {}

    w: _ArrayWriter | _ParquetWriter = writer(out / "papers-with-abstracts.json", papers)
    for i in range(papers):
        arxiv = _arxiv_id(i)
        w.add({"paper_url": f"https://paperswithcode.com/paper/synthetic-{i}", "arxiv_id": arxiv,
               "title": f"{text.title()} {i}", "abstract": text.abstract(shape.abstract_words),
               "url_abs": f"https://arxiv.org/abs/{arxiv}", "url_pdf": f"https://arxiv.org/pdf/{arxiv}",
               "proceeding": rng.choice((None, None, "NeurIPS 2020 12", "ICML 2021 7", "CVPR 2022 6")),
               "authors": rng.sample(authors, rng.randint(1, 6)),
               "tasks": _paper_tasks(rng, tasks, task_cum),
               "date": (_archive_date(i, papers, rng) if shape.archive else
                        f"20{10 + (i // 90000) // 12 % 15:02d}-{1 + rng.randrange(12):02d}-{1 + rng.randrange(28):02d}"),
               "methods": [{"name": m} for m in rng.sample(methods, rng.randint(0, 3))]})
    w.close()
    counts["papers"] = papers

    link_papers = (range(0, papers, 2) if shape.links is None
                   else (rng.randrange(papers) for _ in range(shape.links)))
    w = writer(out / "links-between-papers-and-code.json",
               len(range(0, papers, 2)) if shape.links is None else shape.links)
    counts["links"] = 0
    for n, i in enumerate(link_papers):
        w.add({"paper_url": f"https://paperswithcode.com/paper/synthetic-{i}", "paper_arxiv_id": _arxiv_id(i),
               "paper_title": None,
               "repo_url": f"https://github.com/org{i % 997}/repo{i if shape.links is None else n}",
               "is_official": rng.random() < 0.5, "framework": rng.choice(("pytorch", "tf", "jax", "none"))})
        counts["links"] += 1
    w.close()

    w = writer(out / "methods.json", len(methods))
    for name in methods:
        w.add({"url": None, "name": name, "full_name": name, "description": _title(rng),
               "introduced_year": rng.randint(1990, 2024),
               "collections": [{"collection": "C", "area": rng.choice(AREAS)}]})
    w.close()
    w = writer(out / "datasets.json", len(datasets))
    for d, name in enumerate(datasets):
        # the archive lists a dataset's other names; every third one has some here
        w.add({"url": None, "name": name, "full_name": name, "description": _title(rng),
               "modalities": [], "tasks": [], "variants": [name, f"{name} (test)"] if d % 3 == 0 else []})
    w.close()
    counts["methods"], counts["datasets"] = len(methods), len(datasets)

    boards = _boards(rng, shape, tasks, datasets)
    w = writer(out / "evaluation-tables.json", len(boards))
    per_board = max(1, evaluations // max(1, sum(len(own) for _, own in boards)))
    remaining = evaluations
    for t, (task, own) in enumerate(boards):
        entries = []
        for name in own:
            n = min(per_board if not shape.archive else rng.randint(1, 2 * per_board - 1), remaining)
            remaining -= n
            rows: list[dict[str, Any]] = [{"model_name": f"Model-{rng.randrange(10**6)}",
                     "metrics": {"Accuracy": f"{rng.uniform(10, 99):.2f}", "F1": f"{rng.uniform(10, 99):.1f}%"},
                     "paper_title": None, "paper_url": f"https://arxiv.org/abs/{_arxiv_id(rng.randrange(papers))}",
                     "paper_date": None, "code_links": [], "model_links": [], "uses_additional_data": False}
                    for _ in range(n)]
            entries.append({"dataset": name, "description": "", "sota": {"metrics": ["Accuracy", "F1"], "rows": rows},
                            "subdatasets": []})
        w.add({"task": task, "categories": [AREAS[t % len(AREAS)]], "description": _title(rng),
               "datasets": entries, "subtasks": [], "synonyms": [f"{task} problem"] if t % 3 == 0 else [],
               "source_link": None})
    w.close()
    counts["evaluations"] = evaluations - remaining

    md = out / "markdown"
    md.mkdir(exist_ok=True)
    for i in range(min(N_MARKDOWN, papers)):
        body = [f"# {_title(rng)}\n\n"]
        for section in range(40):
            body.append(f"## Section {section} — é ∑ 中文\n\n")
            body.append(" ".join(rng.choice(WORDS) for _ in range(600)) + "\n\n")
        (md / f"{_arxiv_id(i)}.md").write_text("".join(body), encoding="utf-8")
    counts["markdown"] = min(N_MARKDOWN, papers)
    return counts


def _boards(rng: random.Random, shape: Shape, tasks: list[str],
            datasets: list[str]) -> list[tuple[str, list[str]]]:
    """(task, dataset names with a leaderboard) per evaluation-tables record."""
    if not shape.archive:  # every task owns the next N_DATASETS / N_TASKS datasets
        step = len(datasets) // len(tasks)
        return [(task, datasets[t * step:(t + 1) * step]) for t, task in enumerate(tasks)]
    out = [(tasks[0], rng.sample(datasets, min(shape.heavy_task_datasets, len(datasets))))]
    for task in tasks[1:shape.evaluation_tasks]:
        out.append((task, rng.sample(datasets, rng.randint(1, 9))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="small",
                        help="entity counts and distributions (see the module docstring)")
    parser.add_argument("--papers", type=int, help="papers (default: the preset's)")
    parser.add_argument("--evaluations", type=int, help="leaderboard rows (default: the preset's)")
    parser.add_argument("--links", type=int, help="code links (default: the preset's)")
    parser.add_argument("--gzip", action="store_true", help="write .json.gz dumps (JSON form)")
    parser.add_argument("--format", choices=("json", "parquet"), default="json",
                        help="JSON dumps, or parquet shards in the Hub's published layout")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--vocabulary", choices=("realistic", "tiny"), default="realistic",
                        help="title/abstract word distribution (see the module docstring)")
    args = parser.parse_args()
    shape = PRESETS[args.preset]
    if args.links is not None:
        shape = replace(shape, links=args.links)
    counts = generate(args.papers if args.papers is not None else shape.papers,
                      args.evaluations if args.evaluations is not None else shape.evaluations,
                      args.out, args.seed, args.vocabulary, shape, args.gzip, args.format)
    print(json.dumps(counts))


if __name__ == "__main__":
    main()

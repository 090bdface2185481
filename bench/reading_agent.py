"""A simulated reading agent: which ``read_paper`` chunk size serves an agent best.

    uv run python bench/reading_agent.py             # Markdown tables on stdout
    uv run python bench/reading_agent.py --json      # one JSON object per chunk size
    uv run python bench/reading_agent.py --write     # also replace `## Reading agent` in BENCHMARKS.md
    uv run python bench/reading_agent.py --paper-text DIR   # real papers from another folder

The agent answers questions whose facts lie inside papers. It sees only the text of each
result, as a text-only client shows a model, and reads the paper as the cursor contract lets
it: from the start, one ``read_paper`` call after another (the cursor taken from the last line
of the text), until the fact's text is in what it has read. Every call goes through
``pwc_mcp_core.tools.execution.execute`` (the code a worker runs) against a catalog served
over HTTP: the bundled sample (``python -m catalog serve --sample``; its ``1706.03762`` is a
98,584-byte study guide dense with numeric tables) and, when the folder exists, the real
papers of ``../shared/data/paper-text`` imported into a second catalog (skipped with a
message when absent). Deterministic: no model, no sampling, and a fixed clock for the cursors
(each carries the same expiry), so every run gives the same bytes and tokens.

Per chunk size (``PWC_MCP_CHUNK_BYTES``: 8, 16, 24, 32 and 64 KiB) it reports:

* *calls*: ``read_paper`` calls until the fact is read;
* *context bytes*: what the reading put into the agent's context until then, i.e. each call
  the model writes (its arguments as JSON, cursor included) plus each result's text;
* *overhead*: context bytes minus the bytes of the paper up to the end of the fact (the
  least any reader from the start must take in), summed over the questions;
* *tokens the model writes*: the calls' arguments in tokens (mostly the cursor, which the
  model copies from the text into each continuing call), what generation costs;
* *re-read bytes*: what an agent without a prompt cache sends again (the whole context
  before each call, summed): it grows with the number of calls;
* *whole paper*: calls and context bytes to read every paper to its end;
* *largest chunk in tokens*: the largest single result, counted with the Llama 2
  SentencePiece vocabulary (32,000 tokens) that the ``wordllama`` dependency ships
  (``wordllama/tokenizers/l2_supercat_tokenizer_config.json``, read by ``tokenizers``,
  nothing downloaded); without it, 3 bytes per token, a rule that over-counts English
  prose (the real papers here measure 3.0-3.8 bytes per token) and under-counts numeric
  tables (1.3 in the sample's study guide). Then whether that result alone fits a 4k, 8k,
  16k or 32k-token context window (a window also holds the prompt, the tool list and the
  answer, so a fit here is a necessary condition, not a sufficient one).

Criterion for the default (printed with the tables): the size with the least context
overhead whose largest result, over every paper read, stays within 8,192 tokens.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.catalog_process import serve
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools.cursors import CursorCodec
from pwc_mcp_core.tools.execution import Runtime, execute
from pwc_mcp_core.tools.projections.untrusted import unframe

CHUNKS = (4096, 8192, 12288, 16384, 24576, 32768, 65536)
WINDOWS = (4096, 8192, 16384, 32768)
TOKEN_BUDGET = 8192
CURSOR_KEY = "bench-reading-agent"
FIXED_CLOCK = 1_800_000_000.0
"""The cursor codec's clock: every cursor carries the same expiry, so tokens repeat exactly run to run."""
BYTES_PER_TOKEN = 3.0
PAPER_TEXT = REPO.parent / "shared" / "data" / "paper-text"
SECTION = "## Reading agent"
_CURSOR = re.compile(r'^\[pwc [0-9a-f]{16}\] read_paper: truncated;.* cursor="([^"]+)"\Z', re.M)


@dataclass(frozen=True)
class Question:
    """A question whose fact is ``answer``, the first occurrence at or after ``anchor`` in the paper."""

    source: str  # "sample" or "paper-text"
    paper: str
    question: str
    anchor: str
    answer: str


QUESTIONS = (
    # The sample's study guide (98,584 B): facts from its start to its last line.
    Question("sample", "1706.03762", "How many parameters has the big Transformer?",
             "## 2. Architecture", "| Parameters | 65M | 213M |"),
    Question("sample", "1706.03762", "What BLEU does Transformer (big) reach on WMT 2014 EN→FR?",
             "## 8. Results", "| WMT 2014 EN→FR | Transformer (big) | 41.8 |"),
    Question("sample", "1706.03762", "What is PE(pos=100, 0) for d_model = 16?",
             "### A.4 Positions 96–127", "| 100 | -0.50637 |"),
    Question("sample", "1706.03762", "What output does worked example B.60 give?",
             "### B.60\n", "output ∑ α·v = "),
    Question("sample", "1706.03762", "What is the learning rate at step 50000?",
             "## Appendix C", "| 50000 | 1.976424e-04 |"),
    Question("sample", "1706.03762", "Which Japanese gloss does the glossary give for transformer?",
             "## Appendix D", "変換器"),
    Question("sample", "1512.03385", "What top-1 / top-5 error has ResNet-152?",
             "## Reported results", "19.38 % / 4.49 %"),
    # Real papers (../shared/data/paper-text), facts at their start, middle and end.
    Question("paper-text", "1706.03762", "What BLEU does the big Transformer get on WMT 2014 EN-DE?",
             "## Abstract", "28.4 BLEU"),
    Question("paper-text", "1706.03762", "How many warmup steps has the learning-rate schedule?",
             "### Optimizer", "$warmup\\_steps=4000$"),
    Question("paper-text", "1706.03762", "What WSJ 23 F1 does the semi-supervised 4-layer Transformer reach?",
             "### English Constituency Parsing", "| 1pt-1pt0pt Transformer (4 layers) | semi-supervised | 92.7 |"),
    Question("paper-text", "2310.06825", "What sliding-window size does Mistral 7B use?",
             "## Architectural details", "| window_size | $4096$ |"),
    Question("paper-text", "2310.06825", "What MT-Bench score has Mistral 7B Instruct?",
             "| Model | c]@c@Chatbot Arena", "| Mistral 7B Instruct | 1031 | 6.84 +/- 0.07 |"),
    Question("paper-text", "2412.19437", "How many parameters has DeepSeek-V3, and how many are active?",
             "# DeepSeek-V3", "671B parameters, of which 37B are activated"),
    Question("paper-text", "2412.19437", "How many GPU hours did DeepSeek-V3's full training take?",
             "# DeepSeek-V3", "2.788M GPU hours"),
    Question("paper-text", "2412.19437", "How many Transformer layers has DeepSeek-V3?",
             "### Hyper-Parameters", "number of Transformer layers to 61"),
    Question("paper-text", "2412.19437", "How does DeepSeek-V3's batch size change during pre-training?",
             "### Hyper-Parameters", "gradually increased from 3072 to 15360"),
    Question("paper-text", "2412.19437", "What is the acceptance rate of the second MTP token?",
             "#### Multi-Token Prediction Evaluation", "between 85% and 90%"),
    Question("paper-text", "2412.19437", "How large is the large-scale baseline of the FP8 vs BF16 ablation?",
             "### FP8 v.s. BF16 Training", "approximately 230B total parameters on around 0.9T tokens"),
    Question("paper-text", "2101.03961", "What pre-training speed-up do Switch Transformers reach?",
             "### Abstract", "up to 7x increases in pre-training speed"),
    Question("paper-text", "2101.03961", "How many experts has Switch-C?",
             "5.6 Towards Trillion Parameter Models", "1.6T parameters and 2048 experts"),
    Question("paper-text", "2101.03961", "How few experts still give gains in lower compute regimes?",
             "D. Switch Transformers in Lower Compute Regimes", "as few as 2 experts produce compelling gains"),
    Question("paper-text", "2206.01062", "How many pages does DocLayNet annotate?",
             "DocLayNet", "80863 manually annotated pages"),
    Question("paper-text", "2206.01062", "What overall mAP does Mask R-CNN reach with 5 class labels?",
             "Table 3: Performance of a Mask R-CNN", "| Overall | 72 | 73 | 78 | 77 |"),
    Question("paper-text", "2203.01017", "What TEDS does TableFormer reach on complex tables?",
             "TableFormer", "from 88.7% to 95% on complex tables"),
    Question("paper-text", "2203.01017", "How many synthetic examples does TableFormer's supplement describe?",
             "## 1.2. Synthetic datasets", "summing up to 600k synthetic examples"),
)


def fact_end(text: str, question: Question) -> int | None:
    """The byte offset just past the fact in ``text`` (UTF-8), else None when not (yet) there.

    A fact whose answer ends with ``= `` (a value follows) ends at the end of that line.
    """
    start = text.find(question.anchor)
    if start < 0:
        return None
    at = text.find(question.answer, start)
    if at < 0:
        return None
    end = at + len(question.answer)
    if question.answer.endswith("= "):
        line_end = text.find("\n", end)
        if line_end < 0:
            return None
        end = line_end
    return len(text[:end].encode("utf-8"))


# ---------------------------------------------------------------- tokens


def token_counter() -> tuple[Callable[[str], int], str]:
    """``(count, how)``: the Llama 2 tokenizer wordllama ships, else the bytes-per-token rule."""
    try:
        from importlib.resources import files

        from tokenizers import Tokenizer

        config = files("wordllama") / "tokenizers" / "l2_supercat_tokenizer_config.json"
        tokenizer = Tokenizer.from_file(str(config))
    except Exception:  # noqa: BLE001 - whatever fails (not installed, unreadable), the rule stands in
        return (lambda text: round(len(text.encode("utf-8")) / BYTES_PER_TOKEN)), \
            f"{BYTES_PER_TOKEN:g} bytes per token (tokenizer unavailable)"
    return (lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)), \
        "Llama 2 tokenizer (32,000-token SentencePiece vocabulary shipped by wordllama)"


# ---------------------------------------------------------------- the agent


@dataclass
class Reading:
    """One read of a paper from its start: until a fact, or to its end."""

    calls: int = 0
    context_bytes: int = 0
    reread_bytes: int = 0
    written_tokens: int = 0
    needed_bytes: int = 0
    chunk_tokens: list[int] = field(default_factory=list)
    found: bool = False


def read(runtime: Runtime, paper: str, count: Callable[[str], int],
         until: Callable[[str], int | None] | None = None) -> Reading:
    """Call ``read_paper`` on ``paper`` from its start, as a text-only agent: the cursor comes from
    the text's last line. Stops when ``until(text read so far)`` gives the fact's end, or at the
    paper's end."""
    reading = Reading()
    arguments: dict[str, Any] = {"paper": paper}
    markdown = ""
    while True:
        reading.calls += 1
        call = json.dumps({"name": "read_paper", "arguments": arguments}, ensure_ascii=False)
        call_bytes = len(call.encode("utf-8"))
        reading.written_tokens += count(call)
        result = json.loads(execute(Call("tools/call", "read_paper", arguments), runtime))["result"]
        text = "".join(block["text"] for block in result["content"] if block.get("type") == "text")
        if result.get("isError"):
            raise RuntimeError(f"read_paper {paper} failed: {text}")
        reading.reread_bytes += reading.context_bytes + call_bytes  # the context sent for this turn
        reading.context_bytes += call_bytes + len(text.encode("utf-8"))
        reading.chunk_tokens.append(count(text))
        markdown += "".join(unframe(text))
        if until is not None and (end := until(markdown)) is not None:
            reading.found, reading.needed_bytes = True, end
            return reading
        cursor = _CURSOR.search(text)
        if cursor is None:
            return reading
        arguments = {"paper": paper, "cursor": cursor.group(1)}


def measure(runtimes: dict[str, Runtime], questions: list[Question], papers: dict[str, list[str]],
            count: Callable[[str], int]) -> dict[str, Any]:
    """The per-chunk-size row: fact questions, then whole papers."""
    row: dict[str, Any] = {"questions": len(questions), "answered": 0, "calls": 0, "max_calls": 0,
                           "context_bytes": 0, "needed_bytes": 0, "reread_bytes": 0, "written_tokens": 0,
                           "whole_calls": 0, "whole_max_calls": 0, "whole_context_bytes": 0,
                           "max_tokens": {}}
    for question in questions:
        reading = read(runtimes[question.source], question.paper, count, partial(fact_end, question=question))
        row["answered"] += reading.found
        row["calls"] += reading.calls
        row["max_calls"] = max(row["max_calls"], reading.calls)
        row["context_bytes"] += reading.context_bytes
        row["needed_bytes"] += reading.needed_bytes
        row["reread_bytes"] += reading.reread_bytes
        row["written_tokens"] += reading.written_tokens
    for source, ids in papers.items():
        tokens = 0
        for paper in ids:
            whole = read(runtimes[source], paper, count)
            row["whole_calls"] += whole.calls
            row["whole_max_calls"] = max(row["whole_max_calls"], whole.calls)
            row["whole_context_bytes"] += whole.context_bytes
            tokens = max(tokens, *whole.chunk_tokens)
        row["max_tokens"][source] = tokens
    row["overhead_bytes"] = row["context_bytes"] - row["needed_bytes"]
    row["largest_tokens"] = max(row["max_tokens"].values())
    return row


# ---------------------------------------------------------------- catalogs


def import_paper_text(folder: Path, db: Path) -> None:
    """Import the real papers' Markdown into a new catalog database (``python -m catalog import``)."""
    done = subprocess.run([sys.executable, "-m", "catalog", "import", "--db", str(db), str(folder)], cwd=REPO,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"importing {folder} failed: {(done.stderr or done.stdout).strip()[-500:]}")


def check_questions(api_urls: dict[str, str], questions: list[Question]) -> dict[str, list[str]]:
    """Every question's fact is in its paper (fetched whole from the catalog); returns the papers per source."""
    import httpx

    papers: dict[str, list[str]] = {}
    for question in questions:
        whole = httpx.get(f"{api_urls[question.source]}/research/papers/{question.paper}/read", timeout=30)
        whole.raise_for_status()
        if fact_end(whole.text, question) is None:
            raise RuntimeError(f"{question.source} {question.paper}: the fact of {question.question!r} is not there")
        if question.paper not in papers.setdefault(question.source, []):
            papers[question.source].append(question.paper)
    return papers


# ---------------------------------------------------------------- report


def choose(rows: dict[int, dict[str, Any]]) -> int | None:
    """The criterion: least context overhead among the sizes whose largest result fits ``TOKEN_BUDGET``."""
    fitting = [chunk for chunk, row in rows.items() if row["largest_tokens"] <= TOKEN_BUDGET
               and row["answered"] == row["questions"]]
    return min(fitting, key=lambda chunk: (rows[chunk]["overhead_bytes"], chunk)) if fitting else None


def tables(rows: dict[int, dict[str, Any]], sources: list[str]) -> str:
    """The two Markdown tables: fact questions, then whole papers and chunk sizes in tokens."""
    first = next(iter(rows.values()))
    lines = [f"Fact questions ({first['questions']}), read from each paper's start until the fact:", "",
             "| chunk | answered | calls (max per question) | context bytes | overhead bytes | context ÷ needed "
             "| tokens the model writes (calls) | re-read bytes (no prompt cache) |",
             "| ---: | :---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for chunk, row in rows.items():
        lines.append(f"| {chunk // 1024} KiB | {row['answered']}/{row['questions']} | {row['calls']} "
                     f"({row['max_calls']}) | {row['context_bytes']:,} | {row['overhead_bytes']:,} | "
                     f"{row['context_bytes'] / max(1, row['needed_bytes']):.2f} | {row['written_tokens']:,} | "
                     f"{row['reread_bytes']:,} |")
    header = " | ".join(f"largest result, {source} (tokens)" for source in sources)
    windows = " | ".join(f"fits {w // 1024}k" for w in WINDOWS)
    lines += ["", "Whole papers, read to their end, and the largest single result in tokens:", "",
              f"| chunk | calls (max per paper) | context bytes | {header} | {windows} |",
              "| ---: | ---: | ---: | " + " | ".join("---:" for _ in sources) + " | "
              + " | ".join(":---:" for _ in WINDOWS) + " |"]
    for chunk, row in rows.items():
        tokens = " | ".join(f"{row['max_tokens'][source]:,}" for source in sources)
        fits = " | ".join("yes" if row["largest_tokens"] <= w else "no" for w in WINDOWS)
        lines.append(f"| {chunk // 1024} KiB | {row['whole_calls']} ({row['whole_max_calls']}) | "
                     f"{row['whole_context_bytes']:,} | {tokens} | {fits} |")
    return "\n".join(lines)


def section(rows: dict[int, dict[str, Any]], sources: list[str], how: str, skipped: str | None) -> str:
    """The ``## Reading agent`` section of BENCHMARKS.md."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    chosen = choose(rows)
    intro = textwrap.fill(
        f"`uv run python bench/reading_agent.py --write` on commit `{commit}`: a simulated agent that sees only "
        "each result's text answers questions whose facts lie inside papers, calling `read_paper` through "
        "`execute` (the code a worker runs) from the paper's start, chunk after chunk with the cursor from the "
        "text, until the fact's text has been read. Papers: "
        + ("the sample catalog's, and the real papers of `../shared/data/paper-text` imported into a second "
           "catalog. " if "paper-text" in sources else "the sample catalog's only. ")
        + "*Context bytes*: each call the model writes (its arguments as JSON, cursor included) plus each "
        "result's text. *Overhead*: context bytes minus the paper's bytes up to the end of the fact, the least "
        "a reader from the start takes in. *Re-read bytes*: the context an agent without a prompt cache sends "
        f"again before each call, summed. Tokens: {how}. A result that fits a window alone still needs room "
        "for the prompt, the tool list and the answer. Deterministic: the same bytes and tokens on any machine "
        "for the same catalog and commit (the cursors' clock is fixed, so each carries the same expiry).",
        width=100)
    parts = [SECTION, "", intro, ""]
    if skipped:
        parts += [skipped, ""]
    parts += [tables(rows, sources), ""]
    if chosen is not None:
        parts += [textwrap.fill(verdict(rows, chosen), width=100), ""]
    return "\n".join(parts)


def verdict(rows: dict[int, dict[str, Any]], chosen: int) -> str:
    """The criterion, the size it picks and what that size costs against the next larger one."""
    row = rows[chosen]
    least = min(rows, key=lambda chunk: rows[chunk]["overhead_bytes"])
    text = (f"Criterion: the least context overhead among the chunk sizes whose largest result stays within "
            f"{TOKEN_BUDGET:,} tokens over every paper read. It picks **{chosen // 1024} KiB** "
            f"({row['overhead_bytes']:,} overhead bytes; largest result {row['largest_tokens']:,} tokens). ")
    if least == chosen:
        text += ("That is also the least overhead of every size measured: a smaller chunk overshoots the fact by "
                 "less, but the cursor each call carries twice (in the result and in the next call) then costs "
                 "more than that saves. ")
    larger = [chunk for chunk in rows if chunk > chosen]
    if larger:
        other = rows[larger[0]]
        text += (f"The price against {larger[0] // 1024} KiB: {row['calls']} calls instead of {other['calls']} "
                 f"(at most {row['max_calls']} for one fact instead of {other['max_calls']}), "
                 f"{row['written_tokens']:,} tokens the model writes instead of {other['written_tokens']:,}, and "
                 f"{row['reread_bytes']:,} re-read bytes instead of {other['reread_bytes']:,} for an agent without "
                 "a prompt cache; an operator whose agents have large windows and few steps can raise "
                 "`PWC_MCP_CHUNK_BYTES` up to 64 KiB.")
    return text


def write_section(path: Path, text: str) -> None:
    """Replace (or append) ``## Reading agent`` in ``path``, every other section as it is."""
    from bench.report import replace_section

    replace_section(path, SECTION, text)


def main(argv: list[str] | None = None) -> int:
    """Run every chunk size; print the tables (or JSON rows) and the chosen size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON object per chunk size")
    parser.add_argument("--write", action="store_true", help="replace `## Reading agent` in BENCHMARKS.md")
    parser.add_argument("--paper-text", type=Path, default=PAPER_TEXT,
                        help=f"folder of real papers' Markdown (default {PAPER_TEXT})")
    args = parser.parse_args(argv)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    count, how = token_counter()
    procs: list[subprocess.Popen] = []
    skipped = None
    with tempfile.TemporaryDirectory(prefix="reading-agent-") as tmp:
        try:
            proc, sample_url = serve("--sample")
            procs.append(proc)
            api_urls = {"sample": sample_url}
            if args.paper_text.is_dir():
                db = Path(tmp) / "paper-text.db"
                import_paper_text(args.paper_text, db)
                proc, text_url = serve("--db", str(db))
                procs.append(proc)
                api_urls["paper-text"] = text_url
            else:
                skipped = (f"The real papers were skipped: {args.paper_text} is absent (it is not carried by the "
                           "repository); only the sample catalog was read.")
                print(skipped, file=sys.stderr)
            questions = [q for q in QUESTIONS if q.source in api_urls]
            papers = check_questions(api_urls, questions)
            rows = {}
            for chunk in CHUNKS:
                runtimes = {source: replace(Runtime.build(CoreSettings(api_url=url, cursor_keys=(CURSOR_KEY,),
                                                                       chunk_bytes=chunk)),
                                            cursor_codec=CursorCodec(CURSOR_KEY, clock=lambda: FIXED_CLOCK))
                            for source, url in api_urls.items()}
                rows[chunk] = measure(runtimes, questions, papers, count)
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(timeout=10)
    sources = list(api_urls)
    if args.json:
        print("\n".join(json.dumps({"chunk_bytes": chunk, **row}) for chunk, row in rows.items()))
    else:
        print(tables(rows, sources))
    chosen = choose(rows)
    print(f"\nchosen by the criterion: {chosen} bytes" if chosen else "\nno chunk size meets the criterion",
          file=sys.stderr)
    if args.write:
        write_section(REPO / "BENCHMARKS.md", section(rows, sources, how, skipped))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

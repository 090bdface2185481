"""Text size versus projection size for every tool on the bundled sample catalog.

    uv run python bench/text_ratio.py            # Markdown table on stdout
    uv run python bench/text_ratio.py --json     # one JSON object per tool
    uv run python bench/text_ratio.py --write    # also replace `## Text size` in BENCHMARKS.md
    uv run python bench/text_ratio.py --write --baseline REF   # and the structured view before/after

Starts ``python -m catalog serve --sample`` on a free loopback port, runs every
tool once through ``pwc_mcp_core.tools.execution.execute`` (the code a worker runs)
with realistic arguments, and compares the UTF-8 bytes of the ``content`` text
with the compact JSON (``separators=(",", ":")``, UTF-8) of the projections the
text renders: ``structuredContent`` without ``schema_version`` and ``data``; for
the tools whose result is the CLI payload alone (no typed projection), ``data``.
Target: text ≤ 70% of that JSON. ``read_paper`` carries its chunk verbatim (the
text must let an agent read the whole paper) and its ``next_cursor`` verbatim, so
its whole ratio is ≈1 by design; the table also gives the ratio of everything
except those two verbatim values on both sides, the part the target applies to.

The size goal (issue 22) is over all tools at once: the sum of the text bytes ÷ the
sum of the projection JSON bytes, read_paper's chunk included, at most 0.70. The
last table row gives it at the default chunk (``PWC_MCP_CHUNK_BYTES``, 8 KiB: chosen by
``bench/reading_agent.py``); ``--chunk-bytes N`` measures another read_paper chunk size.

Both views (issue 33 item 6): hosts that hand the model ``structuredContent`` pay its whole
compact JSON on every call, and ``tools/list`` carries every ``outputSchema``. ``--views``
prints, per tool, the text bytes, the whole ``structuredContent`` bytes and the published
``outputSchema`` bytes; ``--baseline REF`` measures the same at git revision ``REF`` (a
temporary worktree running this file against the same catalog) in the same run, so the
section gives before and after side by side.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.catalog_process import serve
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import DEFAULT_CHUNK_BYTES, CoreSettings
from pwc_mcp_core.tools.examples import EXAMPLE_CALLS
from pwc_mcp_core.tools.execution import Runtime, execute

TARGET = 0.70
TOOL_CALLS = EXAMPLE_CALLS  # the calls /docs shows and the end-to-end tests run


def compact(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def projections(structured: dict[str, Any]) -> Any:
    """What the text renders: the typed projections, or ``data`` when a tool has none."""
    rest = {k: v for k, v in structured.items() if k not in ("schema_version", "data", "data_note")}
    return rest or structured.get("data")


def measure(name: str, result: dict[str, Any]) -> dict[str, Any]:
    """Per-tool byte counts and ratios of one successful result."""
    text = "".join(block["text"] for block in result["content"] if block.get("type") == "text")
    projected = projections(result["structuredContent"])
    row: dict[str, Any] = {"tool": name, "text_bytes": len(text.encode("utf-8")), "projection_bytes": compact(projected)}
    row["ratio"] = round(row["text_bytes"] / row["projection_bytes"], 3)
    markdown = projected.get("markdown") if isinstance(projected, dict) else None
    if name == "read_paper" and isinstance(markdown, str):
        # The chunk and the cursor are carried byte for byte; the target applies to the rest.
        verbatim = len(markdown.encode("utf-8")) + len(str(projected.get("next_cursor") or "").encode("utf-8"))
        rest_text = row["text_bytes"] - verbatim
        rest_json = compact({k: v for k, v in projected.items() if k not in ("markdown", "next_cursor")})
        row["without_chunk"] = {"text_bytes": rest_text, "projection_bytes": rest_json,
                                "ratio": round(rest_text / rest_json, 3)}
    row["within_target"] = (row.get("without_chunk") or row)["ratio"] <= TARGET
    return row


def views(api_url: str) -> dict[str, Any]:
    """Per tool: text bytes, whole ``structuredContent`` bytes, published ``outputSchema`` bytes;
    and the whole ``tools/list`` result's bytes. Uses only APIs that older revisions have too."""
    from pwc_mcp_core.tools.registry import tool_list_result

    runtime = Runtime.build(CoreSettings(api_url=api_url, cursor_keys=("bench-text-ratio-key",)))
    listed = tool_list_result()
    schemas = {tool["name"]: compact(tool.get("outputSchema")) for tool in listed["tools"]}
    tools: dict[str, Any] = {}
    for name, arguments in TOOL_CALLS.items():
        result = json.loads(execute(Call("tools/call", name, arguments), runtime))["result"]
        text = "".join(block["text"] for block in result["content"] if block.get("type") == "text")
        tools[name] = {"text_bytes": len(text.encode("utf-8")),
                       "structured_bytes": compact(result.get("structuredContent")), "schema_bytes": schemas[name]}
    return {"tools": tools, "tools_list_bytes": compact(listed)}


def baseline_views(ref: str, api_url: str) -> dict[str, Any]:
    """:func:`views` at git revision ``ref``: this file run in a temporary worktree of it."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="text-ratio-baseline-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), ref], cwd=REPO, check=True,
                       capture_output=True)
        try:
            shutil.copy(Path(__file__), tree / "bench" / "text_ratio.py")
            run = subprocess.run([sys.executable, str(tree / "bench" / "text_ratio.py"), "--views", "--api-url",
                                  api_url], cwd=tree, capture_output=True, text=True, check=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False,
                           capture_output=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


VIEW_TOOLS = ("get_task", "list_benchmarks", "get_benchmark", "search_papers")
"""The four largest structured results of issue 33 item 6, each at most half its bytes before."""


def views_table(after: dict[str, Any], before: dict[str, Any] | None) -> str:
    """Per tool: text, ``structuredContent`` and ``outputSchema`` bytes (before → after when
    ``before`` is given), and text ÷ structured; then the sums and ``tools/list``."""
    # Sums compare the tools both revisions have; a tool added since the baseline is marked new.
    common = [name for name in after["tools"] if before is None or name in before["tools"]]

    def cell(key: str, name: str | None = None) -> str:
        now = after["tools"][name][key] if name else sum(after["tools"][t][key] for t in common)
        if before is None:
            return f"{now:,}"
        if name is not None and name not in before["tools"]:
            return f"{now:,} (new)"
        was = before["tools"][name][key] if name else sum(before["tools"][t][key] for t in common)
        return f"{was:,} → {now:,} ({now / was:.0%})" if was else f"{now:,}"

    def ratio(view: dict[str, Any], name: str | None) -> str:
        rows = [view["tools"][name]] if name else [view["tools"][t] for t in common]
        text, structured = sum(r["text_bytes"] for r in rows), sum(r["structured_bytes"] for r in rows)
        return f"{text / structured:.2f}"

    def ratios(name: str | None) -> str:
        if before is None or (name is not None and name not in before["tools"]):
            return ratio(after, name)
        return f"{ratio(before, name)} → {ratio(after, name)}"

    lines = ["| tool | text bytes | structuredContent bytes | text ÷ structured | outputSchema bytes |",
             "| --- | ---: | ---: | ---: | ---: |"]
    names = [*VIEW_TOOLS, *(name for name in after["tools"] if name not in VIEW_TOOLS)]
    for name in names:
        label = f"**`{name}`**" if name in VIEW_TOOLS else f"`{name}`"
        lines.append(f"| {label} | {cell('text_bytes', name)} | {cell('structured_bytes', name)} | {ratios(name)} | "
                     f"{cell('schema_bytes', name)} |")
    label = "all tools" if before is None or len(common) == len(after["tools"]) else "tools in both"
    lines.append(f"| **{label}** | {cell('text_bytes')} | {cell('structured_bytes')} | {ratios(None)} | "
                 f"{cell('schema_bytes')} |")
    listed = f"{after['tools_list_bytes']:,}"
    if before is not None:
        listed = f"{before['tools_list_bytes']:,} → {listed}"
    lines += ["", f"`tools/list` result: {listed} bytes ({len(after['tools'])} tools"
              + ("" if before is None else f", {len(before['tools'])} before") + ")."]
    return "\n".join(lines)


def total(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The size goal: all text bytes ÷ all projection JSON bytes, read_paper's chunk included."""
    text, projected = sum(r["text_bytes"] for r in rows), sum(r["projection_bytes"] for r in rows)
    ratio = round(text / projected, 3)
    return {"tool": "all tools", "text_bytes": text, "projection_bytes": projected, "ratio": ratio,
            "within_target": ratio <= TARGET}


def run(api_url: str, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> list[dict[str, Any]]:
    """Every tool once; raises ``RuntimeError`` when a call fails."""
    runtime = Runtime.build(CoreSettings(api_url=api_url, cursor_keys=("bench-text-ratio-key",),
                                         chunk_bytes=chunk_bytes))
    rows = []
    for name, arguments in TOOL_CALLS.items():
        result = json.loads(execute(Call("tools/call", name, arguments), runtime))["result"]
        if result.get("isError"):
            raise RuntimeError(f"{name} failed: {result['content'][0]['text']}")
        rows.append(measure(name, result))
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The BENCHMARKS.md table."""
    lines = ["| tool | text bytes | projection JSON bytes | text ÷ JSON | within 70% |",
             "| --- | ---: | ---: | ---: | :---: |"]
    for row in rows:
        ratio = f"{row['ratio']:.2f}"
        rest = row.get("without_chunk")
        if rest:
            ratio += (f" (without the verbatim chunk and cursor: {rest['text_bytes']} ÷ {rest['projection_bytes']}"
                      f" = {rest['ratio']:.2f})")
        lines.append(f"| `{row['tool']}` | {row['text_bytes']:,} | {row['projection_bytes']:,} | {ratio} | "
                     f"{'yes' if row['within_target'] else 'NO'} |")
    whole = total(rows)
    lines.append(f"| **all tools** (size goal) | {whole['text_bytes']:,} | {whole['projection_bytes']:,} | "
                 f"{whole['ratio']:.2f} | {'yes' if whole['within_target'] else 'NO'} |")
    return "\n".join(lines)


SECTION = "## Text size"


SIZE_GOAL_CHUNKS = (DEFAULT_CHUNK_BYTES, 16384, 32768, 65536)
"""read_paper chunk sizes the size-goal table compares (the default first)."""


def size_goal_table(totals: dict[int, dict[str, Any]]) -> str:
    """The all-tools ratio per read_paper chunk size, from one run."""
    lines = ["| read_paper chunk | all text bytes | all projection JSON bytes | text ÷ JSON | within 70% |",
             "| ---: | ---: | ---: | ---: | :---: |"]
    for chunk, whole in totals.items():
        lines.append(f"| {chunk:,} | {whole['text_bytes']:,} | {whole['projection_bytes']:,} | "
                     f"{whole['ratio']:.2f} | {'yes' if whole['within_target'] else 'NO'} |")
    return "\n".join(lines)


def section(rows: list[dict[str, Any]], totals: dict[int, dict[str, Any]] | None = None,
            view_rows: tuple[dict[str, Any], dict[str, Any] | None, str | None] | None = None) -> str:
    """The ``## Text size`` section of BENCHMARKS.md: how it was measured, then the table."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    passed = sum(row["within_target"] for row in rows)
    intro = textwrap.fill(
        f"`uv run python bench/text_ratio.py --write` on commit `{commit}`: every tool once on the bundled sample "
        "catalog (`python -m catalog serve --sample`) through `execute`, the code a worker runs. *Text bytes*: "
        "the UTF-8 bytes of the result's `content` text. *Projection JSON bytes*: the compact JSON "
        "(`separators=(\",\", \":\")`, UTF-8) of what the text renders, i.e. `structuredContent` without "
        "`schema_version` and `data`, or `data` for tools whose result is the CLI payload alone. Target: at most "
        "70%. `read_paper` carries its chunk and its `next_cursor` byte for byte (a text-only agent must be able "
        "to read the whole paper), so its whole ratio is about 1; the target applies to the rest.", width=100)
    outro = textwrap.fill(
        f"{passed} of {len(rows)} tools within the target. Byte counts, not time: the same on any machine for the "
        "same catalog and commit. `tests/integration/test_text_first.py` asserts the bound per tool.", width=100)
    parts = [SECTION, "", intro, "", markdown(rows), "", outro, ""]
    if totals:
        goal = textwrap.fill(
            "Size goal over all tools at once (every fact in the text at most 70% of the projection bytes, "
            "read_paper's chunk included), from the same run with `PWC_MCP_CHUNK_BYTES` set to each chunk size. "
            "The chunk travels verbatim on both sides, so the larger it is the more it dominates both sums. The "
            f"default is {DEFAULT_CHUNK_BYTES // 1024} KiB, chosen by measuring agents that read (`## Reading "
            "agent`: the least context spent before a fact, each chunk within 8k tokens); the table above is at "
            "that default.", width=100)
        parts += [goal, "", size_goal_table(totals), ""]
    if view_rows:
        after, before, ref = view_rows
        since = (f" Before → after: `--baseline {ref}` ran the same calls at `{ref}` against the same catalog in "
                 "the same run.") if before is not None else ""
        views_intro = textwrap.fill(
            "Both views, from the same run. A host that hands the model `structuredContent` pays its whole compact "
            "JSON on every call, and `tools/list` carries every `outputSchema` (compact JSON bytes of the published "
            "schema). Tools with typed projections answer with them alone (the CLI's payload stays with `pwc … "
            "--json`), and the published schemas keep their strictness at the envelope (docs/tool-contract.md "
            "§3.1). In bold the four largest structured results before, each now at most half." + since, width=100)
        parts += [views_intro, "", views_table(after, before), ""]
    return "\n".join(parts)


def write_section(path: Path, rows: list[dict[str, Any]], totals: dict[int, dict[str, Any]] | None = None,
                  view_rows: tuple[dict[str, Any], dict[str, Any] | None, str | None] | None = None) -> None:
    """Replace (or append) the ``## Text size`` section of ``path``, leaving every other section as it is."""
    from bench.report import replace_section

    replace_section(path, SECTION, section(rows, totals, view_rows))


def main(argv: list[str] | None = None) -> int:
    """Print the table (or JSON rows); exit 1 when a tool is over the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON object per tool")
    parser.add_argument("--api-url", help="use this catalog instead of starting the sample")
    parser.add_argument("--write", action="store_true", help="replace the `## Text size` section of BENCHMARKS.md")
    parser.add_argument("--chunk-bytes", type=int, default=DEFAULT_CHUNK_BYTES,
                        help=f"read_paper chunk size (default {DEFAULT_CHUNK_BYTES}, the server's)")
    parser.add_argument("--views", action="store_true",
                        help="print text, structuredContent and outputSchema bytes per tool (one JSON object)")
    parser.add_argument("--baseline", metavar="REF", help="with --write or --views: also measure git revision REF")
    args = parser.parse_args(argv)
    proc = None
    api_url = args.api_url
    if api_url is None:
        proc, api_url = serve("--sample")
    totals: dict[int, dict[str, Any]] = {}
    try:
        if args.views and not args.write:
            after = views(api_url)
            if args.baseline:
                after = {"after": after, "before": baseline_views(args.baseline, api_url)}
            print(json.dumps(after))
            return 0
        rows = run(api_url, args.chunk_bytes)
        view_rows = None
        if args.write:
            view_rows = (views(api_url), baseline_views(args.baseline, api_url) if args.baseline else None,
                         args.baseline)
            totals = {chunk: total(rows if chunk == args.chunk_bytes else run(api_url, chunk))
                      for chunk in SIZE_GOAL_CHUNKS}
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
    print("\n".join(json.dumps(row) for row in [*rows, total(rows)]) if args.json else markdown(rows))
    if args.write:
        write_section(REPO / "BENCHMARKS.md", rows, totals, view_rows)
    return 0 if all(row["within_target"] for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())

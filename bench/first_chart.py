"""The first ``get_sota_history`` chart of a process, cold and after the worker's preload.

Usage::

    uv run python bench/first_chart.py [--rounds 5] [--out BENCHMARKS.md | -]

Each round starts two fresh interpreters. *Cold*: draw the sample ImageNet history
(the payload below, the series the sample catalog serves) and time it,
imports included, as the first chart of a process that never drew one. *Preloaded*: run
``pwc_mcp_core.tools.charts.preload`` first (what a worker does in the background once it is
ready), then time the same chart. Medians of wall seconds. Writes the ``## First chart``
section of ``--out``. A benchmark, not a test: nothing here asserts performance.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.report import publish_section

SECTION = "## First chart"
PAYLOAD = {
    "benchmark": {"name": "ImageNet"}, "task": None, "metric": "Top 1 Accuracy", "unit": "%",
    "direction": "higher", "direction_known": True,
    "steps": [{"date": "2015-12-10", "value": 78.57, "model": "ResNet-152"},
              {"date": "2019-05-28", "value": 84.3, "model": "EfficientNet-B7"},
              {"date": "2020-10-22", "value": 88.55, "model": "ViT-H/14"}],
    "points": [["2015-12-10", 78.57], ["2019-05-28", 84.3], ["2020-02-13", 76.5], ["2020-10-22", 88.55],
               ["2020-10-22", 87.76], ["2020-12-23", 83.1], ["2020-12-23", 81.8], ["2021-02-26", 76.2],
               ["2021-03-25", 87.3], ["2021-11-11", 87.8]],
}
_MEASURE = """
import json, sys, time
preload = sys.argv[1] == "preloaded"
payload = json.loads(sys.argv[2])
if preload:
    from pwc_mcp_core.tools.charts import preload as warm
    warm()
started = time.perf_counter()
from pwc.chart import history_png
history_png(payload)
print(json.dumps({"seconds": time.perf_counter() - started}))
"""


def once(mode: str) -> float:
    """Seconds of the first chart in a fresh interpreter (``cold`` or ``preloaded``)."""
    done = subprocess.run([sys.executable, "-c", _MEASURE, mode, json.dumps(PAYLOAD)], cwd=REPO,
                          capture_output=True, text=True, check=True)
    return float(json.loads(done.stdout)["seconds"])


def main() -> int:
    """Run the rounds and write the section."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="BENCHMARKS.md", help="file to update, or - to print")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    runs: dict[str, list[float]] = {"cold": [], "preloaded": []}
    for _ in range(args.rounds):
        for mode in runs:
            runs[mode].append(once(mode))
    cold, warm = statistics.median(runs["cold"]), statistics.median(runs["preloaded"])
    command = " ".join(["uv run python bench/first_chart.py", *sys.argv[1:]])
    section = "\n".join([
        SECTION, "",
        f"`{command}` ({args.rounds} rounds, load average {load:.1f} at the start; CPU shared with other work).",
        "",
        "| First chart of a process | median wall | runs |", "| --- | --- | --- |",
        f"| cold (matplotlib imported by the call) | {cold:.2f} s | {', '.join(f'{r:.2f}' for r in runs['cold'])} |",
        f"| after `charts.preload` (a worker runs it once ready) | {warm:.2f} s | "
        f"{', '.join(f'{r:.2f}' for r in runs['preloaded'])} |",
        "",
        "A worker starts `charts.preload` on a background thread once it is ready, so the first",
        "`get_sota_history` call it serves costs what later ones do; the chart of a series is then cached",
        "for the records' lifetime. The embedded gateway and `pwc-mcp stdio` do not preload: they start",
        "faster and pay the import on their first chart.", ""])
    publish_section(args.out, SECTION, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())

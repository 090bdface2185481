"""Precision and recall of ``pwc paper verify`` (verify_references) on the verification suite.

    uv run python bench/verify_references.py            # a Markdown summary and every miss
    uv run python bench/verify_references.py --json     # the counts as one JSON object

Starts ``python -m catalog serve --sample`` on a free loopback port and runs the suite in
``tests/fixtures/verification-suite.json`` through the command the tool runs
(``pwc.commands.papers_cite.verify_one``): real references written in several styles, each
expecting its paper id (or ``ambiguous`` for a title two papers share), and fabricated
references close to real titles, which must never be ``verified``.

* recall: real references answered as expected, ÷ real references (goal ≥ 95%);
* precision: ``verified`` answers naming the right paper, ÷ all ``verified`` answers, and
  fabricated references not ``verified``, ÷ fabricated references (goal 100% for both);
* catalog calls per reference: the HTTP requests one uncached ``verify_one`` makes, counted at
  the transport, as a histogram (goal: one for a reference the catalog holds by title or id).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.catalog_process import serve
from pwc.commands.papers_cite import ReferenceVerdict, verify_one
from pwc.transport import Client

SUITE = REPO / "tests" / "fixtures" / "verification-suite.json"


class CountingTransport(httpx.HTTPTransport):
    """The real transport, counting the requests it sends."""

    def __init__(self) -> None:
        super().__init__()
        self.requests = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        return super().handle_request(request)


def _answer(verdict: ReferenceVerdict) -> str:
    paper = verdict.get("paper")
    return str(paper.get("id") if paper else None) if verdict["status"] == "verified" else verdict["status"]


def measure(api_url: str) -> dict[str, Any]:
    """Run the suite against ``api_url``; returns the counts and the misses."""
    suite = json.loads(SUITE.read_text(encoding="utf-8"))
    misses: list[dict[str, str]] = []
    right = verified = verified_right = 0
    counter = CountingTransport()
    calls: dict[str, Counter[int]] = {"real": Counter(), "fabricated": Counter()}

    def verify(kind: str, text: str) -> ReferenceVerdict:
        before = counter.requests
        verdict = verify_one(client, text)
        calls[kind][counter.requests - before] += 1
        return verdict

    with Client(api_url, timeout=10, transport=counter) as client:
        for case in suite["real"]:
            verdict = verify("real", case["text"])
            answer = _answer(verdict)
            verified += verdict["status"] == "verified"
            if answer == case["expect"]:
                right += 1
                verified_right += verdict["status"] == "verified"
            else:
                misses.append({"text": case["text"], "expected": case["expect"], "got": answer,
                               "why": str(verdict.get("message") or "")})
        fabricated_verified = 0
        for text in suite["fabricated"]:
            verdict = verify("fabricated", text)
            if verdict["status"] == "verified":
                fabricated_verified += 1
                verified += 1
                misses.append({"text": text, "expected": "not verified", "got": _answer(verdict), "why": ""})
    real, fabricated = len(suite["real"]), len(suite["fabricated"])
    return {
        "real": real, "styles": len({case["style"] for case in suite["real"]}), "fabricated": fabricated,
        "recall": right / real, "precision": verified_right / verified if verified else 1.0,
        "fabricated_rejected": (fabricated - fabricated_verified) / fabricated, "misses": misses,
        "calls": {kind: dict(sorted(counts.items())) for kind, counts in calls.items()},
    }


def main() -> int:
    """Print the measurement; exit 1 when a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    proc, api_url = serve("--sample")
    try:
        result = measure(api_url)
    finally:
        proc.kill()
        proc.wait()
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(f"| suite | references | result | goal |\n| --- | ---: | ---: | ---: |\n"
              f"| real ({result['styles']} styles) | {result['real']} | recall {result['recall']:.1%} | ≥ 95% |\n"
              f"| fabricated | {result['fabricated']} | never verified {result['fabricated_rejected']:.1%} | 100% |\n"
              f"| all `verified` answers | | precision {result['precision']:.1%} | 100% |")
        for kind, counts in result["calls"].items():
            listed = ", ".join(f"{n} call{'s' if n != 1 else ''}: {refs}" for n, refs in counts.items())
            print(f"- catalog calls per {kind} reference: {listed}")
        for miss in result["misses"]:
            print(f"- miss: {miss['text']!r}: expected {miss['expected']}, got {miss['got']} {miss['why']}")
    ok = result["recall"] >= 0.95 and result["precision"] == 1.0 and result["fabricated_rejected"] == 1.0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

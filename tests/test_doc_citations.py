"""Every document the code cites is in the repository.

Scans source, config and documentation files for references to Markdown files (``*.md``) and checks that each
names a file of the checkout (relative to the repository root, the citing file's folder, or
``docs/``). Paper files that tests build at run time are not documents and are skipped.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = {".py", ".lua", ".md", ".toml", ".yml", ".yaml", ".conf", ".cfg", ".service", ".sh", ".html", ".js",
            ".txt", ""}
# A cited document: path segments of letters, digits, "_" and "-", starting with a letter, ending in .md.
CITATION = re.compile(r"(?<![\w./-])((?:[A-Za-z][\w-]*/)*[A-Za-z][\w-]*\.md)\b")
# Markdown files a command writes (README's `> attention.md`) or paper files named by arXiv ID.
NOT_DOCUMENTS = re.compile(r"^attention\.md$|^\d")


def _tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / line for line in out.splitlines()
            if (ROOT / line).suffix in SUFFIXES and not line.startswith("tests/fixtures/")]


def _exists(cited: str, source: Path) -> bool:
    return any((base / cited).is_file() for base in (ROOT, source.parent, ROOT / "docs"))


def test_every_cited_document_exists_in_the_repository() -> None:
    missing = []
    for path in _tracked_files():
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            for cited in CITATION.findall(line):
                if NOT_DOCUMENTS.search(cited) or _exists(cited, path):
                    continue
                missing.append(f"{path.relative_to(ROOT)}:{number}: {cited}")
    assert not missing, "cited documents missing from the repository:\n" + "\n".join(missing)

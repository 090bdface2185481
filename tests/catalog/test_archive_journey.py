"""The self-host path as the README gives it: download, import, serve, on both forms of the archive.

A generated archive (``bench/gen_catalog.py``) is published twice: as the Hub's parquet
shards, served by a loopback fake hub (``tests/catalog/fake_hub.py``), and as the JSON dumps.
The real ``pwc-catalog`` commands then run in subprocesses, as a user runs them: ``download``
from the fake hub, ``import`` of the downloaded folder (parquet) and of the JSON dumps,
``info``, and ``serve``. Both catalogs must answer the same over HTTP, and the parquet one
must name the hub datasets and commits it came from.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.gen_catalog import generate
from tests.catalog.fake_hub import FakeHub, FakeRepo
from tests.conftest import REPO_ROOT, start_catalog
from tests.helpers import stop_process

# The module's setup generates, downloads and imports two archives in subprocesses: tens of
# seconds alone, minutes on shared cores (the first test's deadline covers the setup).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

PAPERS, EVALUATIONS, SEED = 1500, 800, 7
CARD = b"---\nlicense: cc-by-sa-4.0\n---\n# generated stand-in of a pwc-archive dataset\n"


def _hub_repos(published: Path) -> dict[str, FakeRepo]:
    """One fake hub repository per dataset folder of the generated parquet layout."""
    repos = {}
    for folder in sorted(p for p in published.iterdir() if (p / "data").is_dir()):
        files = {f"data/{shard.name}": shard.read_bytes() for shard in sorted((folder / "data").iterdir())}
        repo_id = f"pwc-archive/{folder.name}"
        repos[repo_id] = FakeRepo(repo_id, {"README.md": CARD, **files})
    return repos


def _cli(tmp_path: Path, *args: str, hub_url: str = "http://127.0.0.1:9") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update({"HF_ENDPOINT": hub_url, "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1"})
    return subprocess.run([sys.executable, "-m", "catalog", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def journey(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """Download and import both forms once; yield the paths, outputs and the fake hub's repos."""
    tmp = tmp_path_factory.mktemp("journey")
    generate(PAPERS, EVALUATIONS, tmp / "published", SEED, fmt="parquet")
    generate(PAPERS, EVALUATIONS, tmp / "json", SEED)
    repos = _hub_repos(tmp / "published")
    with FakeHub(repos) as hub:
        download = _cli(tmp, "download", "--dest", str(tmp / "archive"), hub_url=hub.url)
    assert download.returncode == 0, download.stderr
    parquet_import = _cli(tmp, "import", "--db", str(tmp / "parquet.db"), str(tmp / "archive"))
    assert parquet_import.returncode == 0, parquet_import.stdout + parquet_import.stderr
    json_sources = [str(p) for p in sorted((tmp / "json").glob("*.json"))]
    json_import = _cli(tmp, "import", "--db", str(tmp / "json.db"), *json_sources)
    assert json_import.returncode == 0, json_import.stdout + json_import.stderr
    yield {"tmp": tmp, "repos": repos, "download": download.stdout, "parquet_import": parquet_import.stdout}


def test_download_names_the_import_command_that_then_works(journey: dict) -> None:
    tmp: Path = journey["tmp"]
    out: str = journey["download"]
    assert "CC BY-SA 4.0" in out
    assert f"pwc-catalog import --db catalog.db {tmp / 'archive'}" in out
    for repo_id in journey["repos"]:
        assert repo_id in out
    summary = journey["parquet_import"]
    assert "papers-with-abstracts/train-00000-of-00004.parquet (papers)" in summary
    assert f"read {PAPERS}" not in summary  # papers come in 4 shards, each with its own line


def test_info_names_every_hub_dataset_and_commit(journey: dict) -> None:
    tmp: Path = journey["tmp"]
    result = _cli(tmp, "info", "--db", str(tmp / "parquet.db"), "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    text = json.dumps(record)
    for repo_id, repo in journey["repos"].items():
        assert repo_id in text and repo.sha in text
    assert "CC BY-SA 4.0" in text


def _get(api: str, path: str) -> dict:
    response = httpx.get(f"{api}/{path}", timeout=10)
    assert response.status_code == 200, (path, response.text[:200])
    return response.json()


def test_both_forms_serve_the_same_catalog(journey: dict) -> None:
    tmp: Path = journey["tmp"]
    servers = [start_catalog("--db", str(tmp / name)) for name in ("parquet.db", "json.db")]
    try:
        answers = []
        for server in servers:
            api = server.api_url
            answers.append({
                path: _get(api, path).get("count")
                for path in ("papers/?page_size=1", "methods/?page_size=1", "datasets/?page_size=1",
                             "tasks/?page_size=1", "evaluations/?page_size=1")
            } | {"first": (first := _get(api, "papers/?page_size=5")["results"]),
                 "details": [_get(api, f"papers/{paper['id']}") for paper in first]})
        assert answers[0] == answers[1]
        assert answers[0]["papers/?page_size=1"] == PAPERS
        catalog = _get(servers[0].api_url, "catalog")
        assert "pwc-archive/papers-with-abstracts" in json.dumps(catalog)
    finally:
        for server in servers:
            stop_process(server.proc)

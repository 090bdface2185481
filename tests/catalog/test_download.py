"""``pwc-catalog download`` against a loopback hub (tests/catalog/fake_hub.py), run as the real CLI.

No test reaches the internet: ``HF_ENDPOINT`` points at the fake hub (or a closed
loopback port), ``HF_HOME`` is a temporary folder and telemetry is off.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from catalog.importer.download import DATASETS, MANIFEST
from tests.catalog.fake_hub import FakeHub, FakeRepo, parquet_bytes, pwc_repos

# Each test runs `pwc-catalog download` (and some `import`) in subprocesses: seconds apiece.
pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
TOKEN = "hf_TestTokenThatMustNeverBePrinted0123456789"


@pytest.fixture
def hub() -> FakeHub:
    with FakeHub(pwc_repos()) as server:
        yield server


def _env(tmp_path: Path, endpoint: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update({"HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1"})
    env.update(extra)
    return env


def _download(tmp_path: Path, endpoint: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "catalog", "download", "--dest", str(tmp_path / "archive"), *args],
                          cwd=REPO_ROOT, env=_env(tmp_path, endpoint, **env), capture_output=True, text=True,
                          timeout=90)


def _one_error_line(result: subprocess.CompletedProcess, *, warnings: bool = False) -> str:
    """The single ``error:`` line of a failed run (``warnings``: huggingface_hub's may precede it)."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.splitlines()
    if warnings:
        lines = lines[-1:] if sum(line.startswith("error:") for line in lines) == 1 else lines
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_download_fetches_the_five_datasets_and_names_the_import_command(tmp_path: Path, hub: FakeHub) -> None:
    result = _download(tmp_path, hub.url)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "\r" not in result.stdout + result.stderr
    dest = tmp_path / "archive"
    for name in DATASETS:
        repo = hub.repos[f"pwc-archive/{name}"]
        folder = dest / name
        wanted = {p for p in repo.files if p == "README.md" or p.startswith("data/")}
        on_disk = {str(p.relative_to(folder)) for p in folder.rglob("*")
                   if p.is_file() and not p.relative_to(folder).parts[0].startswith(".")}
        assert on_disk == wanted  # no .gitattributes, no extra/
        for path in wanted:
            assert (folder / path).read_bytes() == repo.files[path]
        # huggingface_hub's own record (what `hf download --local-dir` leaves): commit, etag, time.
        metadata = (folder / ".cache/huggingface/download/README.md.metadata").read_text().splitlines()
        assert metadata[0] == repo.sha
        manifest = json.loads((folder / MANIFEST).read_text())
        assert manifest["repo_id"] == repo.repo_id and manifest["revision"] == repo.sha
        assert manifest["license"] == "CC BY-SA 4.0" and manifest["requested_revision"] == "main"
        assert {f["path"] for f in manifest["files"]} == wanted
        shard = next(f for f in manifest["files"] if f["path"].endswith(".parquet"))
        assert shard["lfs"] and shard["size"] == len(repo.files[shard["path"]])
        assert f"  {name}: {len(wanted)} files, " in result.stdout and repo.sha in result.stdout
    lines = result.stdout.splitlines()
    assert "CC BY-SA 4.0" in result.stdout
    assert lines[-1] == f"next: pwc-catalog import --db catalog.db {dest}"
    assert sum(1 for line in lines if line.startswith("fetching pwc-archive/")) == 5
    assert not [r for r in hub.log if "extra/" in r.path or ".gitattributes" in r.path]
    assert not [r for r in hub.log if r.authorization]  # no token configured: none sent


def test_a_second_run_fetches_nothing(tmp_path: Path, hub: FakeHub) -> None:
    assert _download(tmp_path, hub.url).returncode == 0
    hub.log.clear()
    again = _download(tmp_path, hub.url)
    assert again.returncode == 0, again.stderr
    assert hub.requests(kind="resolve") == []
    assert len(hub.requests(kind="revision")) == 5  # one look at each dataset's current commit
    assert again.stdout.count("(0 fetched, 0 B;") == 5


def test_a_new_revision_replaces_changed_shards_and_removes_stale_ones(tmp_path: Path, hub: FakeHub) -> None:
    assert _download(tmp_path, hub.url, "--only", "methods").returncode == 0
    repo = hub.repos["pwc-archive/methods"]
    old = "data/train-00000-of-00001.parquet"
    new = {"data/train-00000-of-00002.parquet": parquet_bytes([{"url": "a", "name": "A"}]),
           "data/train-00001-of-00002.parquet": parquet_bytes([{"url": "b", "name": "B"}])}
    del repo.files[old]
    repo.files.update(new)
    repo.sha = "f" * 40
    again = _download(tmp_path, hub.url, "--only", "methods")
    assert again.returncode == 0, again.stderr
    folder = tmp_path / "archive/methods"
    assert sorted(p.name for p in (folder / "data").iterdir()) == sorted(Path(p).name for p in new)
    assert f"  {old}: removed, not in this revision" in again.stdout
    assert "(2 fetched," in again.stdout and "1 already present" in again.stdout  # the README is unchanged
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["revision"] == "f" * 40 and len(manifest["files"]) == 3
    readme = (folder / ".cache/huggingface/download/README.md.metadata").read_text().splitlines()
    assert readme[0] == "f" * 40


def test_an_interrupted_file_resumes_with_a_range_request(tmp_path: Path, hub: FakeHub) -> None:
    # huggingface_hub writes in 10 MiB chunks: a 24 MiB shard cut in half leaves one on disk.
    shard = "data/train-00000-of-00002.parquet"
    data = parquet_bytes([{"blob": os.urandom(1 << 20)} for _ in range(24)])
    hub.repos["pwc-archive/papers-with-abstracts"].files[shard] = data
    hub.cut.add(shard)  # half the body, the connection drops, then 503s
    first = _download(tmp_path, hub.url, "--only", "papers-with-abstracts")
    line = _one_error_line(first, warnings=True)  # "Trying to resume download..." first
    assert "HTTP 503" in line
    folder = tmp_path / "archive/papers-with-abstracts"
    assert not (folder / shard).exists()
    partial = list((folder / ".cache/huggingface/download/data").glob("*.incomplete"))
    assert len(partial) == 1
    kept = partial[0].stat().st_size
    assert 0 < kept < len(data)
    hub.cut.clear()
    hub.log.clear()
    second = _download(tmp_path, hub.url, "--only", "papers-with-abstracts")
    assert second.returncode == 0, second.stderr
    assert (folder / shard).read_bytes() == data
    resumed = [r for r in hub.requests("GET", "resolve") if r.path.endswith(shard)]
    assert [(r.range, r.status, r.body_bytes) for r in resumed] == [(f"bytes={kept}-", 206, len(data) - kept)]
    assert not list(folder.rglob("*.incomplete"))


def test_a_corrupted_file_is_refused_and_removed(tmp_path: Path, hub: FakeHub) -> None:
    shard = "data/train-00000-of-00001.parquet"
    hub.corrupt.add(shard)
    line = _one_error_line(_download(tmp_path, hub.url, "--only", "methods"))
    folder = tmp_path / "archive/methods"
    assert f"{folder / shard}: sha256 mismatch" in line
    assert not (folder / shard).exists() and not list(folder.rglob("*.incomplete"))
    assert not (folder / MANIFEST).exists()
    hub.corrupt.clear()
    assert _download(tmp_path, hub.url, "--only", "methods").returncode == 0


def test_only_fetches_the_named_datasets_and_refuses_unknown_names(tmp_path: Path, hub: FakeHub) -> None:
    result = _download(tmp_path, hub.url, "--only", "methods,datasets")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "archive").iterdir()) == ["datasets", "methods"]
    assert {r.path.split("pwc-archive/")[1].split("/")[0] for r in hub.log} == {"datasets", "methods"}
    repeated = _download(tmp_path, hub.url, "--only", "methods", "--only", "evaluation-tables")
    assert repeated.returncode == 0 and "evaluation-tables: 2 files" in repeated.stdout
    hub.log.clear()
    line = _one_error_line(_download(tmp_path, hub.url, "--only", "methods,links-between-papers-and-code"))
    assert "'links-between-papers-and-code'" in line and ", ".join(DATASETS) in line
    assert hub.log == []


def test_no_network_is_one_line(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    line = _one_error_line(_download(tmp_path, endpoint))
    assert line.startswith(f"error: cannot reach the hub at {endpoint}")


def test_a_server_that_is_not_a_hub_and_an_unwritable_dest_are_one_line(tmp_path: Path, hub: FakeHub) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Html(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html>a web page</html>")

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Html)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_port}"
        line = _one_error_line(_download(tmp_path, endpoint, "--only", "methods"))
        assert f"{endpoint} does not answer like the Hugging Face Hub" in line
    finally:
        server.shutdown()
        server.server_close()
    (tmp_path / "archive").write_text("a file where the folder should be")
    blocked = _download(tmp_path, hub.url, "--only", "methods")
    assert blocked.returncode == 1 and "Traceback" not in blocked.stderr
    assert blocked.stderr.splitlines() == [blocked.stderr.strip()]
    assert blocked.stderr.startswith(f"error: cannot write {tmp_path / 'archive'}")


def test_offline_mode_uses_only_what_an_earlier_run_recorded(tmp_path: Path, hub: FakeHub) -> None:
    line = _one_error_line(_download(tmp_path, hub.url, HF_HUB_OFFLINE="1"))
    assert "HF_HUB_OFFLINE" in line
    assert hub.log == []
    assert _download(tmp_path, hub.url, "--only", "methods").returncode == 0
    hub.log.clear()
    offline = _download(tmp_path, hub.url, "--only", "methods", HF_HUB_OFFLINE="1")
    assert offline.returncode == 0, offline.stderr
    assert hub.log == [] and "checking (offline) pwc-archive/methods" in offline.stdout
    assert hub.repos["pwc-archive/methods"].sha in offline.stdout


@pytest.mark.parametrize(("change", "expected"), [
    ("missing", "dataset pwc-archive/methods not found on"),
    ("gated", "pwc-archive/methods is gated on"),
    ("revision", "pwc-archive/methods has no revision 'v9'"),
])
def test_hub_refusals_are_one_line(tmp_path: Path, change: str, expected: str) -> None:
    repos = pwc_repos()
    if change == "missing":
        del repos["pwc-archive/methods"]
    elif change == "gated":
        repos["pwc-archive/methods"].gated = True
    with FakeHub(repos) as server:
        args = ["--revision", "v9"] if change == "revision" else []
        line = _one_error_line(_download(tmp_path, server.url, "--only", "methods", *args))
    assert expected in line


def test_a_token_reaches_the_hub_and_is_never_printed(tmp_path: Path) -> None:
    with FakeHub(pwc_repos(), token=TOKEN) as server:
        by_flag = _download(tmp_path, server.url, "--only", "methods", "--token", TOKEN)
        assert by_flag.returncode == 0, by_flag.stderr
        assert server.log and {r.authorization for r in server.log} == {f"Bearer {TOKEN}"}
        server.log.clear()
        (tmp_path / "archive").rename(tmp_path / "first")
        by_env = _download(tmp_path, server.url, "--only", "methods", HF_TOKEN=TOKEN)
        assert by_env.returncode == 0, by_env.stderr
        assert {r.authorization for r in server.log} == {f"Bearer {TOKEN}"}
        wrong = _download(tmp_path, server.url, "--only", "methods", "--token", TOKEN[::-1])
        line = _one_error_line(wrong)
        assert "HTTP 401" in line and "token" in line
        none = _one_error_line(_download(tmp_path, server.url, "--only", "methods"))
        assert "not found" in none
    for result in (by_flag, by_env, wrong):
        assert TOKEN not in result.stdout + result.stderr and TOKEN[::-1] not in result.stdout + result.stderr


def test_the_layout_is_what_hf_download_leaves(tmp_path: Path, hub: FakeHub) -> None:
    """`snapshot_download(local_dir=...)` (what `hf download` runs) and ours agree; ours trusts its files."""
    theirs = tmp_path / "theirs" / "methods"
    script = ("import sys; from huggingface_hub import snapshot_download; "
              "snapshot_download('pwc-archive/methods', repo_type='dataset', local_dir=sys.argv[1], "
              "allow_patterns=['README.md', 'data/*.parquet'], token=False)")
    made = subprocess.run([sys.executable, "-c", script, str(theirs)], env=_env(tmp_path, hub.url),
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    assert _download(tmp_path, hub.url, "--only", "methods").returncode == 0
    ours = tmp_path / "archive" / "methods"

    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*")
                if p.is_file() and not p.relative_to(root).parts[0].startswith(".")}

    assert files(theirs) == files(ours)
    for name in files(ours):
        record = f".cache/huggingface/download/{name}.metadata"
        assert (theirs / record).read_text().splitlines()[:2] == (ours / record).read_text().splitlines()[:2]
    # A folder that `hf download` filled is taken as it is: verified, nothing fetched again.
    (tmp_path / "archive").rename(tmp_path / "ours")
    theirs.parent.rename(tmp_path / "archive")
    hub.log.clear()
    over = _download(tmp_path, hub.url, "--only", "methods")
    assert over.returncode == 0 and hub.requests(kind="resolve") == []


def test_quiet_prints_only_the_summary(tmp_path: Path, hub: FakeHub) -> None:
    quiet = _download(tmp_path, hub.url, "--only", "methods", "--quiet")
    assert quiet.returncode == 0
    assert quiet.stderr == ""
    lines = quiet.stdout.splitlines()
    assert lines[0].startswith(f"pwc-archive in {tmp_path / 'archive'} (license CC BY-SA 4.0")
    assert lines[1].startswith("  methods: 2 files, ") and lines[2].startswith("next: pwc-catalog import")
    assert len(lines) == 3


def _papers_dump(path: Path) -> Path:
    records = [{"paper_url": f"https://paperswithcode.com/paper/p{i}", "arxiv_id": f"2101.{i:05d}",
                "title": f"Paper number {i}", "abstract": "Attention over words and images.",
                "authors": ["A. Author"], "date": "2021-01-01", "tasks": [], "methods": []} for i in range(20)]
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_import_and_embed_progress_lines_and_quiet(tmp_path: Path) -> None:
    dump = _papers_dump(tmp_path / "papers-with-abstracts.json")
    db = tmp_path / "catalog.db"

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "catalog", *args], cwd=REPO_ROOT, capture_output=True,
                              text=True, timeout=120)

    loud = cli("import", "--db", str(db), str(dump))
    assert loud.returncode == 0, loud.stdout + loud.stderr
    assert f"importing {dump} (papers, json)" in loud.stdout and "embedding 20 papers with" in loud.stdout
    for stage in ("ranking leaderboards", "building indexes and the full-text index",
                  "recording provenance (sha256 of 1 sources)"):
        assert stage in loud.stdout.splitlines()
    assert "\r" not in loud.stdout + loud.stderr
    quiet = cli("import", "--db", str(db), "--quiet", str(dump))
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert "importing" not in quiet.stdout and "embedding 20" not in quiet.stdout
    assert "ranking" not in quiet.stdout and "provenance" not in quiet.stdout
    assert quiet.stdout.splitlines()[-1].startswith("imported 20 records from 1 sources")
    embed_loud = cli("embed", "--db", str(db))
    assert embed_loud.stdout.splitlines() == [embed_loud.stdout.splitlines()[0], embed_loud.stdout.splitlines()[1]]
    assert embed_loud.stdout.startswith("embedding 20 papers with")
    embed_quiet = cli("embed", "--db", str(db), "--quiet")
    assert embed_quiet.returncode == 0 and embed_quiet.stderr == ""
    assert len(embed_quiet.stdout.splitlines()) == 1 and embed_quiet.stdout.startswith("embedded 20 papers")


def test_progress_bars_on_a_terminal(tmp_path: Path, hub: FakeHub) -> None:
    """On a terminal (a pty as stderr), the download shows huggingface_hub's byte bars."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a new pty is 0 wide
    try:
        result = subprocess.run(
            [sys.executable, "-m", "catalog", "download", "--dest", str(tmp_path / "archive"), "--only", "methods"],
            cwd=REPO_ROOT, env=_env(tmp_path, hub.url), stdout=subprocess.PIPE, stderr=follower, timeout=90)
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    terminal = b"".join(chunks).decode(errors="replace")
    assert result.returncode == 0
    assert "\rdata/train-00000-of-00001.parquet: 100%|" in terminal and "B/s]" in terminal
    assert "\r" not in result.stdout.decode()


def test_fake_repo_lists_lfs_files_like_the_hub() -> None:
    repo = FakeRepo("pwc-archive/x", {"README.md": b"hi\n", "data/a.parquet": b"PAR1"})
    tree = {e["path"]: e for e in repo.tree()}
    assert tree["data"]["type"] == "directory"
    assert tree["README.md"]["oid"] == "45b983be36b73c0788dc9cbcb76cbb80fc7bb057"  # `git hash-object`
    assert "lfs" not in tree["README.md"] and tree["data/a.parquet"]["lfs"]["size"] == 4

"""A loopback stand-in for the Hugging Face Hub: the endpoints a dataset download uses, nothing else.

Which endpoints, read from the installed ``huggingface_hub`` (2.x):

* ``GET /api/datasets/{repo_id}/revision/{rev}`` (``HfApi.dataset_info``): the
  commit ``sha`` a branch name resolves to (``snapshot_download`` starts here too).
* ``GET /api/datasets/{repo_id}/tree/{rev}[/{path}]?recursive=True&expand=False``
  (``HfApi.list_repo_tree``; a ``Link: rel="next"`` header would paginate, one
  page is enough here): ``{"type": "file", "path", "size", "oid"}`` entries, the
  ``oid`` a git blob id, plus ``"lfs": {"oid": sha256, "size", "pointerSize"}``
  for LFS files, and ``{"type": "directory", ...}`` entries.
* ``HEAD`` and ``GET /datasets/{repo_id}/resolve/{rev}/{path}``
  (``get_hf_file_metadata`` and ``http_get``): ``X-Repo-Commit``, ``ETag`` (the git
  blob id, quoted) or, for LFS files, ``X-Linked-Etag`` (the sha256) and
  ``X-Linked-Size``; ``Content-Length``; ``Accept-Ranges: bytes`` and a 206
  answer to ``Range: bytes=N-``.

Errors use the hub's headers (``X-Error-Code: RepoNotFound`` / ``RevisionNotFound``,
``X-Error-Message``), which ``hf_raise_for_status`` maps to its exceptions. The
server never advertises Xet (no ``X-Xet-Hash`` header, no ``xetHash`` in the tree).

The server runs on 127.0.0.1 in a thread of the test process, so a test can run
the real CLI in a subprocess with ``HF_ENDPOINT`` pointing here. Every request is
logged (method, path, ``Range``, ``Authorization``) for the test to inspect.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import threading
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from aiohttp import web


def git_blob_id(data: bytes) -> str:
    """The git object id of a blob (what the hub lists as ``oid`` for a file)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def parquet_bytes(rows: list[dict[str, Any]]) -> bytes:
    """A small parquet file of ``rows`` (pyarrow infers the schema)."""
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue()


@dataclass
class FakeRepo:
    """A dataset repository at one commit: file paths to bytes; ``*.parquet`` files are LFS files."""

    repo_id: str
    files: dict[str, bytes]
    sha: str = ""
    gated: bool = False

    def __post_init__(self) -> None:
        if not self.sha:
            self.sha = hashlib.sha1(self.repo_id.encode(), usedforsecurity=False).hexdigest()

    def is_lfs(self, path: str) -> bool:
        """Whether the hub would store ``path`` in LFS (here: the parquet shards)."""
        return path.endswith(".parquet")

    def tree(self) -> list[dict[str, Any]]:
        """The recursive tree listing, as ``/api/datasets/.../tree`` answers it."""
        entries: list[dict[str, Any]] = []
        folders = sorted({p.rsplit("/", 1)[0] for p in self.files if "/" in p})
        for folder in folders:
            entries.append({"type": "directory", "oid": git_blob_id(folder.encode()), "size": 0, "path": folder})
        for path, data in sorted(self.files.items()):
            entry: dict[str, Any] = {"type": "file", "oid": git_blob_id(data), "size": len(data), "path": path}
            if self.is_lfs(path):
                entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
            entries.append(entry)
        return entries


def pwc_repos() -> dict[str, FakeRepo]:
    """The five ``pwc-archive`` datasets, generated: a README and small parquet shards under data/."""
    def card(name: str) -> bytes:
        return (f"---\nlicense: cc-by-sa-4.0\npretty_name: {name}\n---\n# {name}\n\n"
                "Generated stand-in of the Papers With Code archive.\n").encode()

    papers = [[{"paper_url": f"https://paperswithcode.com/paper/p{s}-{i}", "title": f"Paper {s}-{i}",
                "abstract": "An abstract. " * 20, "arxiv_id": f"2101.{s}{i:04d}"} for i in range(200)]
              for s in range(2)]
    shapes: dict[str, dict[str, bytes]] = {
        "papers-with-abstracts": {f"data/train-0000{s}-of-00002.parquet": parquet_bytes(rows)
                                  for s, rows in enumerate(papers)},
        "links-between-paper-and-code": {"data/train-00000-of-00001.parquet": parquet_bytes(
            [{"paper_url": f"https://paperswithcode.com/paper/p0-{i}", "repo_url": f"https://github.com/o/r{i}",
              "is_official": i % 2 == 0} for i in range(100)])},
        "evaluation-tables": {"data/train-00000-of-00001.parquet": parquet_bytes(
            [{"task": "Image Classification", "categories": ["Computer Vision"], "description": "",
              "datasets": [{"dataset": "ImageNet", "sota": {"rows": [{"model_name": "ResNet",
                                                                      "metrics": {"Top 1 Accuracy": "76.1%"}}]}}]}])},
        "methods": {"data/train-00000-of-00001.parquet": parquet_bytes(
            [{"url": f"https://paperswithcode.com/method/m{i}", "name": f"M{i}", "full_name": f"Method {i}"}
             for i in range(30)])},
        "datasets": {"data/train-00000-of-00001.parquet": parquet_bytes(
            [{"url": f"https://paperswithcode.com/dataset/d{i}", "name": f"D{i}", "homepage": ""}
             for i in range(30)])},
    }
    repos = {}
    for name, files in shapes.items():
        repo_id = f"pwc-archive/{name}"
        # What the download must skip: the hub's attributes file and an unrelated folder.
        files = {"README.md": card(name), ".gitattributes": b"*.parquet filter=lfs diff=lfs merge=lfs -text\n",
                 "extra/notes.txt": b"not needed by the importer\n", **files}
        repos[repo_id] = FakeRepo(repo_id, files)
    return repos


@dataclass
class Logged:
    """One request the fake hub answered."""

    method: str
    path: str
    range: str | None
    authorization: str | None
    status: int = 0
    body_bytes: int = 0


@dataclass
class FakeHub:
    """The server: ``with FakeHub(pwc_repos()) as hub: ... HF_ENDPOINT=hub.url ...``.

    ``corrupt``: paths served with one byte flipped (same size). ``cut``: paths
    whose next GET sends half the body then drops the connection, after which
    every GET of that path answers 503 until ``cut`` is emptied. ``token``: when
    set, every request needs ``Authorization: Bearer <token>`` (401 otherwise).
    """

    repos: dict[str, FakeRepo]
    token: str | None = None
    corrupt: set[str] = field(default_factory=set)
    cut: set[str] = field(default_factory=set)
    log: list[Logged] = field(default_factory=list)
    url: str = ""

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._broken: set[str] = set()

    # -- lifecycle -----------------------------------------------------------------------------------
    def __enter__(self) -> FakeHub:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_get("/api/datasets/{ns}/{name}/revision/{rev}", self._revision)
        app.router.add_get("/api/datasets/{ns}/{name}/tree/{rev}", self._tree)
        app.router.add_get("/api/datasets/{ns}/{name}/tree/{rev}/{path:.*}", self._tree)
        app.router.add_get("/datasets/{ns}/{name}/resolve/{rev}/{path:.*}", self._resolve)  # HEAD too
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # -- inspection ----------------------------------------------------------------------------------
    def requests(self, method: str | None = None, kind: str | None = None) -> list[Logged]:
        """Logged requests, by method and kind (``"resolve"``, ``"tree"``, ``"revision"``)."""
        return [r for r in self.log if (method is None or r.method == method)
                and (kind is None or f"/{kind}/" in r.path)]

    # -- handlers ------------------------------------------------------------------------------------
    def _begin(self, request: web.Request) -> tuple[Logged, FakeRepo | web.Response]:
        entry = Logged(request.method, request.path, request.headers.get("Range"),
                       request.headers.get("Authorization"))
        self.log.append(entry)
        if self.token is not None:
            given = request.headers.get("Authorization")
            if given is None:
                return entry, self._error(entry, 401, code="RepoNotFound")
            if given != f"Bearer {self.token}":
                return entry, self._error(entry, 401, message="Invalid credentials in Authorization header")
        repo = self.repos.get(f"{request.match_info['ns']}/{request.match_info['name']}")
        if repo is None:
            return entry, self._error(entry, 404, code="RepoNotFound")
        if repo.gated:
            return entry, self._error(entry, 403, code="GatedRepo")
        if request.match_info["rev"] not in ("main", repo.sha):
            return entry, self._error(entry, 404, code="RevisionNotFound")
        return entry, repo

    @staticmethod
    def _error(entry: Logged, status: int, *, code: str | None = None, message: str | None = None) -> web.Response:
        headers = {}
        if code:
            headers["X-Error-Code"] = code
        if message:
            headers["X-Error-Message"] = message
        entry.status = status
        return web.json_response({"error": message or code}, status=status, headers=headers)

    async def _revision(self, request: web.Request) -> web.Response:
        entry, repo = self._begin(request)
        if isinstance(repo, web.Response):
            return repo
        entry.status = 200
        return web.json_response({"id": repo.repo_id, "sha": repo.sha, "private": False,
                                  "siblings": [{"rfilename": p} for p in sorted(repo.files)]})

    async def _tree(self, request: web.Request) -> web.Response:
        entry, repo = self._begin(request)
        if isinstance(repo, web.Response):
            return repo
        prefix = request.match_info.get("path", "")
        entries = [e for e in repo.tree() if not prefix or e["path"].startswith(prefix.rstrip("/") + "/")]
        if request.query.get("recursive", "False").lower() != "true":
            entries = [e for e in entries if "/" not in e["path"][len(prefix):].strip("/")]
        entry.status = 200
        return web.Response(body=json.dumps(entries), content_type="application/json")

    async def _resolve(self, request: web.Request) -> web.StreamResponse:
        entry, repo = self._begin(request)
        if isinstance(repo, web.Response):
            return repo
        path = request.match_info["path"]
        data = repo.files.get(path)
        if data is None:
            return self._error(entry, 404, code="EntryNotFound")
        headers = {"X-Repo-Commit": repo.sha, "Accept-Ranges": "bytes"}
        if repo.is_lfs(path):
            headers["X-Linked-Etag"] = f'"{hashlib.sha256(data).hexdigest()}"'
            headers["X-Linked-Size"] = str(len(data))
            headers["ETag"] = f'"{hashlib.sha256(data).hexdigest()}"'
        else:
            headers["ETag"] = f'"{git_blob_id(data)}"'
        if path in self.corrupt:
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        if request.method == "GET" and path in self._broken and path in self.cut:
            return self._error(entry, 503, message="Service Unavailable")
        start = 0
        status = 200
        ranged = request.headers.get("Range", "")
        if ranged.startswith("bytes=") and ranged.endswith("-"):
            start = int(ranged[len("bytes="):-1])
            if start >= len(data):
                return self._error(entry, 416, message="Range Not Satisfiable")
            status = 206
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        body = data[start:]
        entry.status = status
        response = web.StreamResponse(status=status, headers=headers)
        response.content_length = len(body)
        await response.prepare(request)
        if request.method == "HEAD":
            return response
        if path in self.cut and path not in self._broken:
            self._broken.add(path)
            half = body[: len(body) // 2]
            await response.write(half)
            entry.body_bytes = len(half)
            assert request.transport is not None
            request.transport.abort()  # the connection drops mid-file
            return response
        await response.write(body)
        entry.body_bytes = len(body)
        await response.write_eof()
        return response

"""``pwc-catalog download``: fetch the Papers With Code archive from the Hugging Face Hub.

The archive is published as five dataset repositories under ``pwc-archive/``
(:data:`DATASETS`). Each one lands in ``DEST/<name>``, laid out exactly as
``hf download pwc-archive/<name> --repo-type dataset --local-dir DEST/<name>``
leaves it, but only with what the importer reads: ``README.md`` (the dataset
card) and the parquet shards under ``data/``.

* **Resumable.** A file whose ``huggingface_hub`` download metadata
  (``DEST/<name>/.cache/huggingface/download/<path>.metadata``: commit,
  etag, time) matches the hub's listing is not fetched again. An interrupted
  file stays in ``.cache/huggingface/download/<hash>.<etag>.incomplete`` and
  the next run asks only for the rest (an HTTP ``Range`` request).
* **Checksummed.** Every fetched file is hashed before it is moved into place:
  an LFS file (the shards) against the sha256 the hub lists, any other file
  against its git blob id. A mismatch removes the partial file and is an error
  naming it.
* **The hub's own settings.** ``HF_ENDPOINT`` (a mirror or a test server),
  ``HF_HUB_OFFLINE`` (then the files recorded by an earlier run are checked
  and reported, nothing is fetched) and the token (``--token`` or ``HF_TOKEN``,
  sent as ``Authorization: Bearer`` to the hub only, never printed). Files
  travel over plain HTTPS through the hub's ``resolve`` URLs (the hub
  redirects them to its CDN); the Xet protocol is not used.

Each dataset folder also gets a manifest, ``DEST/<name>/.pwc-download.json``::

    {"format": 1, "repo_id": "pwc-archive/methods", "repo_type": "dataset",
     "endpoint": "https://huggingface.co", "requested_revision": "main",
     "revision": "<40-hex commit sha>", "license": "CC BY-SA 4.0",
     "downloaded_at": "2025-07-28T10:00:00+00:00",
     "files": [{"path": "data/train-00000-of-00001.parquet", "size": 6123456,
                "sha256": "<hex>", "blob_id": "<git oid>", "lfs": true}, ...]}

(``sha256`` is the file's own sha256 for every file, verified against the
hub's for LFS files; ``blob_id`` is the hub's git object id.)

Exit status: 0 when every file is in place and verified; 2 when the hub cannot
be used (no network, DNS failure, offline mode with nothing recorded, 401/403
for a gated dataset or a wrong token, 404 for an unknown dataset or revision)
or a file fails its checksum; 1 when ``DEST`` cannot be written. Each failure
is one ``error:`` line on stderr.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit, urlunsplit

__all__ = ["DATASETS", "DEFAULT_DEST", "LICENSE", "MANIFEST", "DownloadError", "parse_only", "run_download"]

NAMESPACE = "pwc-archive"
DATASETS = ("papers-with-abstracts", "links-between-paper-and-code", "evaluation-tables", "methods",
            "datasets")
DEFAULT_DEST = Path("pwc-archive")
WANTED = ["README.md", "data/*.parquet"]  # fnmatch: `*` also spans sub-folders of data/
LICENSE = "CC BY-SA 4.0"
LICENSE_URL = "https://creativecommons.org/licenses/by-sa/4.0/"
MANIFEST = ".pwc-download.json"
MANIFEST_FORMAT = 1
_CHUNK = 1 << 20


class DownloadError(Exception):
    """A download that cannot go on; ``str()`` is the one-line message, ``status`` the exit code."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class RemoteFile:
    """One file of a dataset revision as the hub lists it."""

    path: str
    size: int
    blob_id: str
    sha256: str | None  # set for LFS files

    @property
    def etag(self) -> str:
        """The hub's ETag of the file: the LFS sha256, or the git blob id."""
        return self.sha256 or self.blob_id


@dataclass
class Fetched:
    """What one dataset's download did."""

    name: str
    repo_id: str
    folder: Path
    revision: str
    files: list[dict[str, Any]] = field(default_factory=list)
    downloaded: int = 0
    downloaded_bytes: int = 0

    @property
    def total_bytes(self) -> int:
        """Bytes of every file of the dataset now on disk."""
        return sum(int(f["size"]) for f in self.files)


def parse_only(values: Sequence[str] | None) -> list[str]:
    """The datasets chosen by ``--only`` (comma-separated and/or repeated), in :data:`DATASETS` order.

    Raises:
        DownloadError: an unknown name (the message lists the valid ones).
    """
    if not values:
        return list(DATASETS)
    names = {part.strip() for value in values for part in value.split(",") if part.strip()}
    unknown = sorted(names - set(DATASETS))
    if unknown or not names:
        listed = ", ".join(map(repr, unknown)) if unknown else "''"
        raise DownloadError(f"unknown dataset {listed} for --only; choose from: {', '.join(DATASETS)}")
    return [name for name in DATASETS if name in names]


def _size(count: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if count < 1000 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.1f} GB"  # pragma: no cover


def _hashes(path: Path) -> tuple[str, str]:
    """(sha256, git blob id) of a file, in one pass."""
    sha256 = hashlib.sha256()
    git = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            sha256.update(chunk)
            git.update(chunk)
    return sha256.hexdigest(), git.hexdigest()


def _matches(remote: RemoteFile, sha256: str, blob_id: str) -> bool:
    return sha256 == remote.sha256 if remote.sha256 else blob_id == remote.blob_id


def _entry(remote: RemoteFile, sha256: str) -> dict[str, Any]:
    return {"path": remote.path, "size": remote.size, "sha256": sha256, "blob_id": remote.blob_id,
            "lfs": remote.sha256 is not None}


class _Hub:
    """The calls to the hub (``huggingface_hub``), with its errors turned into :class:`DownloadError`."""

    def __init__(self, token: str | None) -> None:
        from huggingface_hub import HfApi, constants

        self.token = token
        self.endpoint = constants.ENDPOINT
        self.api = HfApi(token=token, library_name="pwc-catalog")

    def public_endpoint(self) -> str:
        """The endpoint without any user:password part (it is written into the manifest)."""
        parts = urlsplit(self.endpoint)
        host = parts.hostname or ""
        return urlunsplit(parts._replace(netloc=host if parts.port is None else f"{host}:{parts.port}"))

    @staticmethod
    def failures() -> tuple[type[Exception], ...]:
        """The exceptions of a failed hub call (HTTP status, network, offline mode)."""
        import httpx2
        from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

        return (HfHubHTTPError, OfflineModeIsEnabled, httpx2.HTTPError)

    def error(self, repo_id: str, exc: Exception, revision: str) -> DownloadError:
        """One line for a failed hub call (one of :meth:`failures`)."""
        import httpx2
        from huggingface_hub.errors import (
            GatedRepoError,
            HfHubHTTPError,
            OfflineModeIsEnabled,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        where = self.public_endpoint()
        if isinstance(exc, OfflineModeIsEnabled):
            message = (f"HF_HUB_OFFLINE is set and no complete earlier download of {repo_id} is recorded; "
                       "unset HF_HUB_OFFLINE to download it")
        elif isinstance(exc, httpx2.ConnectError | httpx2.TimeoutException | httpx2.NetworkError):
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            message = f"cannot reach the hub at {where} ({reason}); check the network or HF_ENDPOINT"
        elif isinstance(exc, GatedRepoError):
            message = (f"{repo_id} is gated on {where}: accept its terms on the hub and pass a token "
                       "(--token or HF_TOKEN)")
        elif isinstance(exc, RevisionNotFoundError):
            message = f"{repo_id} has no revision {revision!r} on {where}"
        elif isinstance(exc, RepositoryNotFoundError):
            message = (f"dataset {repo_id} not found on {where} (renamed, private, or not visible "
                       "with this token)")
        elif isinstance(exc, HfHubHTTPError):
            status = exc.response.status_code
            hint = "; check the token (--token or HF_TOKEN)" if status in (401, 403) else ""
            message = f"{repo_id}: the hub at {where} answered HTTP {status}{hint}"
        else:
            message = f"{repo_id}: HTTP failure talking to {where} ({type(exc).__name__})"
        return DownloadError(_redact(message, self.token))

    def listing(self, repo_id: str, revision: str) -> tuple[str, list[RemoteFile]]:
        """The commit sha of ``revision`` and the wanted files it holds (README and data/ shards)."""
        from huggingface_hub import RepoFile
        from huggingface_hub.utils import filter_repo_objects

        sha: str | None = self.api.dataset_info(repo_id, revision=revision).sha
        if not sha:
            raise DownloadError(f"{repo_id}: the hub at {self.public_endpoint()} named no commit "
                                f"for revision {revision!r}")
        files = [RemoteFile(f.path, f.lfs.size if f.lfs else f.size, f.blob_id,
                            f.lfs.sha256 if f.lfs else None)
                 for f in self.api.list_repo_tree(repo_id, recursive=True, revision=sha,
                                                  repo_type="dataset")
                 if isinstance(f, RepoFile)]
        unsafe = [f.path for f in files if ".." in f.path.split("/") or f.path.startswith("/")]
        if unsafe:
            raise DownloadError(f"{repo_id}: the hub lists a file outside the dataset folder: {unsafe[0]!r}")
        by_path = {f.path: f for f in files}
        wanted = [by_path[p] for p in filter_repo_objects(sorted(by_path), allow_patterns=WANTED)]
        if not any(f.path.startswith("data/") for f in wanted):
            raise DownloadError(f"{repo_id} at {sha[:12]} holds no parquet shards under data/; "
                                "has the dataset changed its layout?")
        return sha, wanted

    def fetch(self, repo_id: str, revision: str, remote: RemoteFile, incomplete: Path) -> int:
        """Download ``remote`` into ``incomplete``, resuming what it holds; return the bytes fetched."""
        from huggingface_hub import hf_hub_url
        from huggingface_hub.file_download import http_get
        from huggingface_hub.utils import build_hf_headers

        url = hf_hub_url(repo_id, remote.path, repo_type="dataset", revision=revision)
        # The session follows the hub's redirect to its CDN and drops Authorization there (httpx).
        headers = build_hf_headers(token=self.token, library_name="pwc-catalog")
        have = incomplete.stat().st_size if incomplete.exists() else 0
        if have > remote.size:  # not a prefix of this file: start over
            incomplete.unlink()
            have = 0
        with incomplete.open("ab") as handle:
            http_get(url, handle, resume_size=have, headers=headers, expected_size=remote.size,
                     displayed_filename=remote.path)
        return remote.size - have


def _redact(message: str, token: str | None) -> str:
    return message.replace(token, "***") if token else message


def _token() -> str | None:
    """The token in effect (``--token`` wins, then HF_TOKEN / the stored login); never printed."""
    from huggingface_hub import get_token

    return get_token()


def _read_manifest(folder: Path, repo_id: str) -> tuple[str, list[RemoteFile]] | None:
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if data.get("format") != MANIFEST_FORMAT or data.get("repo_id") != repo_id:
            return None
        files = [RemoteFile(str(f["path"]), int(f["size"]), str(f["blob_id"]),
                            str(f["sha256"]) if f.get("lfs") else None) for f in data["files"]]
        return str(data["revision"]), files
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_manifest(fetched: Fetched, requested: str, endpoint: str) -> None:
    manifest = {"format": MANIFEST_FORMAT, "repo_id": fetched.repo_id, "repo_type": "dataset",
                "endpoint": endpoint, "requested_revision": requested, "revision": fetched.revision,
                "license": LICENSE, "downloaded_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "files": fetched.files}
    path = fetched.folder / MANIFEST
    temp = path.with_name(f"{MANIFEST}.tmp-{os.getpid()}")
    temp.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    os.replace(temp, path)


def _recorded(folder: Path) -> dict[str, dict[str, Any]]:
    """The files an earlier run recorded in ``folder``'s manifest, by path (empty when none)."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        return {str(f["path"]): f for f in data["files"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _in_place(folder: Path, revision: str, remote: RemoteFile, recorded: dict[str, dict[str, Any]]) -> str | None:
    """The sha256 of ``remote``'s local copy when it is complete and current; None otherwise."""
    from huggingface_hub._local_folder import read_download_metadata, write_download_metadata

    target = folder / remote.path
    if not target.is_file() or target.stat().st_size != remote.size:
        return None
    entry = recorded.get(remote.path)
    metadata = read_download_metadata(folder, remote.path)  # None when the file changed since
    if (metadata is not None and metadata.etag == remote.etag and entry is not None
            and entry.get("size") == remote.size and entry.get("blob_id") == remote.blob_id
            and (remote.sha256 is None or entry.get("sha256") == remote.sha256)):
        if metadata.commit_hash != revision:  # the same file in a newer commit
            write_download_metadata(folder, remote.path, commit_hash=revision, etag=remote.etag)
        return str(entry["sha256"])  # verified by an earlier run: no need to hash it again
    sha256, blob_id = _hashes(target)
    if not _matches(remote, sha256, blob_id):
        return None
    write_download_metadata(folder, remote.path, commit_hash=revision, etag=remote.etag)
    return sha256


def _remove_stale(folder: Path, files: list[RemoteFile], out: TextIO, chatty: bool) -> None:
    """Delete shards under data/ that the current revision no longer has (the importer reads them all)."""
    current = {f.path for f in files}
    for shard in sorted((folder / "data").rglob("*.parquet")):
        path = shard.relative_to(folder).as_posix()
        if path not in current:
            shard.unlink()
            (folder / ".cache/huggingface/download" / f"{path}.metadata").unlink(missing_ok=True)
            if chatty:
                print(f"  {path}: removed, not in this revision", file=out, flush=True)


def _download_file(hub: _Hub, fetched: Fetched, remote: RemoteFile) -> tuple[str, int]:
    """Fetch (or resume) one file, verify it, move it into place; (sha256, bytes fetched)."""
    from huggingface_hub._local_folder import get_local_download_paths, write_download_metadata
    from huggingface_hub.utils import WeakFileLock

    paths = get_local_download_paths(fetched.folder, remote.path)
    incomplete = paths.incomplete_path(remote.etag)
    with WeakFileLock(paths.lock_path.with_suffix(".download.lock")):
        got = hub.fetch(fetched.repo_id, fetched.revision, remote, incomplete)
        sha256, blob_id = _hashes(incomplete)
        if not _matches(remote, sha256, blob_id):
            incomplete.unlink(missing_ok=True)
            kind, expected, actual = (("sha256", remote.sha256, sha256) if remote.sha256
                                      else ("git blob id", remote.blob_id, blob_id))
            raise DownloadError(f"{fetched.folder / remote.path}: {kind} mismatch (expected {expected}, "
                                f"got {actual}); the partial file was removed, run the download again")
        os.replace(incomplete, paths.file_path)
    write_download_metadata(fetched.folder, remote.path, commit_hash=fetched.revision, etag=remote.etag)
    return sha256, got


def _download_dataset(hub: _Hub, name: str, dest: Path, requested: str, out: TextIO,
                      chatty: bool) -> Fetched:
    from huggingface_hub.errors import OfflineModeIsEnabled

    repo_id = f"{NAMESPACE}/{name}"
    folder = dest / name
    offline = False
    try:
        revision, files = hub.listing(repo_id, requested)
    except OfflineModeIsEnabled as exc:
        earlier = _read_manifest(folder, repo_id)
        if earlier is None:
            raise hub.error(repo_id, exc, requested) from None
        revision, files = earlier
        offline = True
    except hub.failures() as exc:
        raise hub.error(repo_id, exc, requested) from None
    except (ValueError, KeyError, TypeError) as exc:  # a 200 that is not the hub's JSON
        raise DownloadError(f"{repo_id}: {hub.public_endpoint()} does not answer like the Hugging Face "
                            f"Hub ({type(exc).__name__}); check HF_ENDPOINT") from None
    fetched = Fetched(name, repo_id, folder, revision)
    if chatty:
        total = sum(f.size for f in files)
        how = "checking (offline)" if offline else "fetching"
        print(f"{how} {repo_id} at {revision[:12]}: {len(files)} files, {_size(total)} -> {folder}",
              file=out, flush=True)
    folder.mkdir(parents=True, exist_ok=True)
    recorded = _recorded(folder)
    for remote in files:
        sha256 = _in_place(folder, revision, remote, recorded)
        if sha256 is None and offline:
            raise DownloadError(f"{folder / remote.path} is missing or incomplete and HF_HUB_OFFLINE is "
                                "set; unset it to download the file")
        if sha256 is None:
            started = time.perf_counter()
            try:
                sha256, got = _download_file(hub, fetched, remote)
            except hub.failures() as exc:
                raise hub.error(repo_id, exc, requested) from None
            except ValueError as exc:  # a file name that would leave the folder
                raise DownloadError(f"{repo_id}: refused {remote.path!r}: {exc}") from None
            except OSError as exc:
                if type(exc) is OSError and exc.errno is None:  # http_get's size check, not the disk
                    raise DownloadError(f"{folder / remote.path}: the hub sent a different size than "
                                        "it lists; run the download again") from None
                raise
            fetched.downloaded += 1
            fetched.downloaded_bytes += got
            if chatty:
                elapsed = time.perf_counter() - started
                print(f"  {remote.path}: {_size(got)} fetched in {elapsed:.1f} s, checksum ok",
                      file=out, flush=True)
        fetched.files.append(_entry(remote, sha256))
    if not offline:
        _remove_stale(folder, files, out, chatty)
        _write_manifest(fetched, requested, hub.public_endpoint())
    return fetched


def _summary(results: list[Fetched], dest: Path, out: TextIO) -> None:
    print(f"pwc-archive in {dest} (license {LICENSE}, {LICENSE_URL}; attribute Papers With Code):",
          file=out)
    for r in results:
        present = len(r.files) - r.downloaded
        print(f"  {r.name}: {len(r.files)} files, {_size(r.total_bytes)}, revision {r.revision}"
              f" ({r.downloaded} fetched, {_size(r.downloaded_bytes)}; {present} already present)",
              file=out)
    print(f"next: pwc-catalog import --db catalog.db {shlex.quote(str(dest))}", file=out, flush=True)


def run_download(dest: Path, only: Sequence[str] | None = None, *, revision: str | None = None,
                 token: str | None = None, quiet: bool = False, out: TextIO | None = None,
                 err: TextIO | None = None) -> int:
    """``pwc-catalog download``: fetch the chosen datasets into ``dest``; return the exit code.

    ``out`` gets one line per dataset as it starts and per fetched file (not
    with ``quiet``), then the summary: per dataset its files, bytes and commit,
    the license, and the ``pwc-catalog import`` command to run next (always).
    Progress bars (``huggingface_hub``'s, on stderr) show only when stderr is a
    terminal and not ``quiet``. Errors are one ``error:`` line on ``err``.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    secret: str | None = token
    try:
        names = parse_only(only)
        from huggingface_hub.utils import disable_progress_bars
        from huggingface_hub.utils import logging as hf_logging

        logging.getLogger("httpx2").setLevel(logging.WARNING)  # a line per request: our own lines say more
        hf_logging.disable_propagation()  # its warnings (a transfer resumed) once, by its own handler
        if quiet:
            hf_logging.set_verbosity_error()
        isatty = getattr(err, "isatty", None)
        if quiet or not (callable(isatty) and isatty()):
            disable_progress_bars()
        secret = token or _token()
        hub = _Hub(secret)
        results = [_download_dataset(hub, name, Path(dest), revision or "main", out, not quiet)
                   for name in names]
    except DownloadError as exc:
        print(f"error: {_redact(str(exc), secret)}", file=err, flush=True)
        return exc.status
    except OSError as exc:
        print(f"error: cannot write {dest}: {_redact(str(exc), secret)}", file=err, flush=True)
        return 1
    _summary(results, Path(dest), out)
    return 0

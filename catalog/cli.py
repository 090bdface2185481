"""``pwc-catalog``: serve the catalog API or import dumps into a catalog database.

Usage::

    pwc-catalog serve (--db FILE | --sample) [--host 127.0.0.1] [--port 8000] [--processes N]
    pwc-catalog download [--dest DIR] [--only NAMES] [--revision REV] [--token TOKEN] [--quiet]
    pwc-catalog import --db FILE [--quiet] SOURCE...
    pwc-catalog embed --db FILE [--quiet]
    pwc-catalog info --db FILE [--json]

``--sample`` builds the bundled sample into a temporary file with
``catalog.sample.build_sample_db`` and serves it. ``--processes N`` (N > 1)
serves from N processes under gunicorn (``catalog.serve.process``). ``download``
fetches the published archive (the five ``pwc-archive/*`` datasets on the
Hugging Face Hub, CC BY-SA 4.0) into ``DIR/<name>`` (default ``./pwc-archive``)
and prints the ``import`` command to run next (``catalog.importer.download``; exit 2
when the hub cannot be used or a checksum fails, 1 when ``DIR`` cannot be
written). ``import``
delegates to ``catalog.importer.run_import`` (which also builds the semantic
index); ``embed`` rebuilds only the semantic index of an existing database
(``catalog.importer.embed.embed_database``). ``info`` prints where the database's data
came from (``catalog.db.provenance``): a short summary, or with ``--json`` the whole
record. ``download``, ``import`` and ``embed`` show progress bars on a terminal
and one line per stage otherwise; with ``--quiet`` they print only errors and
their final summary. Errors print one line and exit non-zero, never with a
traceback: 2 for usage, for an unusable source (missing, corrupt or truncated
dump or shard, a shard without a required column, a folder with nothing to
import: ``error: <file>: ...``) and for a missing or unreadable database given
to ``info``, for an address ``serve`` cannot listen on (a busy port:
``error: cannot listen on …``), 1 otherwise.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from catalog.importer.download import DATASETS, DEFAULT_DEST

__all__ = ["build_parser", "main"]

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    """The ``pwc-catalog`` argument parser."""
    parser = argparse.ArgumentParser(prog="pwc-catalog", description="Self-hosted Papers With Code catalog API")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the read API over HTTP")
    source = serve.add_mutually_exclusive_group(required=True)
    source.add_argument("--db", type=Path, help="catalog SQLite file")
    source.add_argument("--sample", action="store_true", help="serve the bundled sample catalog")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    serve.add_argument("--processes", type=int, default=1,
                       help="serving processes (default 1; more under gunicorn, e.g. one per core)")
    down = commands.add_parser("download", help="fetch the published archive from the Hugging Face Hub")
    down.add_argument("--dest", type=Path, default=DEFAULT_DEST,
                      help=f"folder that receives one sub-folder per dataset (default ./{DEFAULT_DEST})")
    down.add_argument("--only", action="append", metavar="NAMES",
                      help=f"datasets to fetch, comma-separated or repeated (default all: {', '.join(DATASETS)})")
    down.add_argument("--revision", default=None, help="branch, tag or commit of every dataset (default main)")
    down.add_argument("--token", default=None,
                      help="Hugging Face token (default: HF_TOKEN or the stored login; never printed; "
                           "prefer HF_TOKEN, a command line shows in the process list)")
    down.add_argument("--quiet", action="store_true", help="no progress; only errors and the summary")
    imp = commands.add_parser("import", help="import the archive (parquet shards or JSON dumps) "
                              "into a catalog database")
    imp.add_argument("--db", type=Path, required=True, help="catalog SQLite file (created if missing)")
    imp.add_argument("sources", type=Path, nargs="+", metavar="SOURCE", help="parquet shards, Hub dataset folders (or their parent), "
                     "JSON dumps, Markdown folders")
    imp.add_argument("--quiet", action="store_true", help="no progress; only errors and the summary")
    embed = commands.add_parser("embed", help="rebuild the semantic index of a catalog database")
    embed.add_argument("--db", type=Path, required=True, help="catalog SQLite file")
    embed.add_argument("--quiet", action="store_true", help="no progress; only errors and the summary")
    info = commands.add_parser("info", help="show where a catalog database's data came from")
    info.add_argument("--db", type=Path, required=True, help="catalog SQLite file")
    info.add_argument("--json", action="store_true", help="print the whole provenance record as JSON")
    return parser


def _serve(args: argparse.Namespace) -> int:
    from catalog.serve.process import HOST_HINT, PORT_HINT, run_catalog
    from web_serving.listen import CannotListen, check_listen

    if not 0 < args.port < 65536:
        raise ValueError("--port must be 1-65535")
    if not 1 <= args.processes <= 64:
        raise ValueError("--processes must be 1-64")
    if args.db is not None and not Path(args.db).is_file():
        raise FileNotFoundError(f"catalog database not found: {args.db}")
    try:
        check_listen(args.host, args.port, host_hint=HOST_HINT, port_hint=PORT_HINT)  # before the sample is built: fail in a second, not after it
        with tempfile.TemporaryDirectory(prefix="pwc-catalog-") as tmp:
            db = args.db
            if args.sample:
                from catalog.sample import build_sample_db

                db = Path(tmp) / "sample.db"
                build_sample_db(db)
            run_catalog(db, args.host, args.port, processes=args.processes)
    except CannotListen as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _download(args: argparse.Namespace) -> int:
    from catalog.importer.download import run_download

    return run_download(args.dest, args.only, revision=args.revision, token=args.token, quiet=args.quiet)


def _import(args: argparse.Namespace) -> int:
    from catalog.importer import run_import

    return int(run_import(args.db, list(args.sources), out=sys.stdout, quiet=args.quiet))


def _embed(args: argparse.Namespace) -> int:
    from catalog.importer.embed import embed_database

    return embed_database(args.db, out=sys.stdout, quiet=args.quiet)


def _info(args: argparse.Namespace) -> int:
    import json
    import sqlite3

    from catalog.db.provenance import read_record, render_text

    try:
        record = read_record(args.db)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except sqlite3.Error as exc:
        print(f"error: {args.db}: not a readable catalog database ({exc})", file=sys.stderr)
        return 2
    print(json.dumps(record, indent=1, ensure_ascii=False) if args.json else render_text(record, args.db))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the exit code (see module doc)."""
    args = build_parser().parse_args(argv)
    quiet = getattr(args, "quiet", False)
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        commands = {"serve": _serve, "download": _download, "import": _import, "embed": _embed,
                    "info": _info}
        return commands[args.command](args)
    except KeyboardInterrupt:
        return 130
    except (OSError, ValueError, ImportError, RuntimeError) as exc:
        print(f"pwc-catalog: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

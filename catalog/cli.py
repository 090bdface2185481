"""``pwc-catalog``: serve the catalog API or import dumps into a catalog database.

Usage::

    pwc-catalog serve (--db FILE | --sample) [--host 127.0.0.1] [--port 8000] [--processes N]
    pwc-catalog import --db FILE SOURCE...
    pwc-catalog embed --db FILE
    pwc-catalog info --db FILE [--json]

``--sample`` builds the bundled sample into a temporary file with
``catalog.sample.build_sample_db`` and serves it. ``--processes N`` (N > 1)
serves from N processes under gunicorn (``catalog.serving``). ``import``
delegates to ``catalog.importer.run_import`` (which also builds the semantic
index); ``embed`` rebuilds only the semantic index of an existing database
(``catalog.vectors.embed_database``). ``info`` prints where the database's data
came from (``catalog.provenance``): a short summary, or with ``--json`` the whole
record. Errors print one line and exit non-zero, never with a traceback: 2 for
usage, for an unusable source (missing, corrupt or truncated dump or shard, a
shard without a required column, a folder with nothing to import:
``error: <file>: ...``) and for a missing or unreadable database given to
``info``, 1 otherwise.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

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
    imp = commands.add_parser("import", help="import the archive (parquet shards or JSON dumps) "
                              "into a catalog database")
    imp.add_argument("--db", type=Path, required=True, help="catalog SQLite file (created if missing)")
    imp.add_argument("sources", type=Path, nargs="+", metavar="SOURCE", help="parquet shards, Hub dataset folders (or their parent), "
                     "JSON dumps, Markdown folders")
    embed = commands.add_parser("embed", help="rebuild the semantic index of a catalog database")
    embed.add_argument("--db", type=Path, required=True, help="catalog SQLite file")
    info = commands.add_parser("info", help="show where a catalog database's data came from")
    info.add_argument("--db", type=Path, required=True, help="catalog SQLite file")
    info.add_argument("--json", action="store_true", help="print the whole provenance record as JSON")
    return parser


def _serve(args: argparse.Namespace) -> int:
    from catalog.serving import run_catalog

    if not 0 < args.port < 65536:
        raise ValueError("--port must be 1-65535")
    if not 1 <= args.processes <= 64:
        raise ValueError("--processes must be 1-64")
    with tempfile.TemporaryDirectory(prefix="pwc-catalog-") as tmp:
        db = args.db
        if args.sample:
            from catalog.sample import build_sample_db

            db = Path(tmp) / "sample.db"
            build_sample_db(db)
        run_catalog(db, args.host, args.port, processes=args.processes)
    return 0


def _import(args: argparse.Namespace) -> int:
    from catalog.importer import run_import

    return int(run_import(args.db, list(args.sources), out=sys.stdout))


def _embed(args: argparse.Namespace) -> int:
    from catalog.vectors import embed_database

    return embed_database(args.db, out=sys.stdout)


def _info(args: argparse.Namespace) -> int:
    import json
    import sqlite3

    from catalog.provenance import read_record, render_text

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
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        commands = {"serve": _serve, "import": _import, "embed": _embed, "info": _info}
        return commands[args.command](args)
    except KeyboardInterrupt:
        return 130
    except (OSError, ValueError, ImportError, RuntimeError) as exc:
        print(f"pwc-catalog: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

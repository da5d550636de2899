"""``hcc slices TABLE_PATH [--as-of T] [--json] [--metadata] [--all]``: file slices of a Hudi table.

Reads a table folder or a zip of one with the pure reader (:mod:`model.nbcc.timeline_reader`) and
prints the latest snapshot's file slices (completion-time slicing for table version 8+, the
instant-time rule for version 6), or the slices as of a time, or (``--all``) every slice of every
file group.  Exit codes: 0 ok, 2 bad input (the message names the path or option and the value).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from backends.hudi_table_source import load_table
from model.nbcc.slicing import FileSlice
from model.nbcc.timeline import ArchivedInstantError
from model.timeline.layout import format_instant, parse_instant


def register(subparsers: Any) -> None:
    """Add the ``slices`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "slices",
        help="print the file slices of a Hudi table (folder or zip)",
        description="Print the file slices of a Hudi table, built with RFC-66 completion-time slicing.",
    )
    p.add_argument("table_path", metavar="TABLE_PATH", help="table folder, or a zip holding one table")
    p.add_argument(
        "--as-of", dest="as_of", metavar="T", help="time travel: 17-digit instant yyyyMMddHHmmssSSS"
    )
    p.add_argument("--json", action="store_true", help="print a JSON list of slices")
    p.add_argument(
        "--metadata", action="store_true", help="use the table's metadata table (.hoodie/metadata)"
    )
    p.add_argument(
        "--all", action="store_true", help="print every slice of every file group, not only the latest"
    )
    p.set_defaults(func=run)


def _row(s: FileSlice) -> dict[str, Any]:
    return {
        "partition": s.partition,
        "file_id": s.file_id,
        "base_instant": format_instant(s.base_instant),
        "base_file": s.base_file.name if s.base_file else None,
        "log_files": [lf.name for lf in s.log_files],
    }


def _fail(msg: str) -> int:
    print(f"hcc slices: {msg}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit code."""
    as_of: int | None = None
    if args.as_of is not None:
        try:
            as_of = parse_instant(args.as_of)
        except ValueError:
            return _fail(f"--as-of: {args.as_of!r} is not a 17-digit instant time (yyyyMMddHHmmssSSS)")
        if args.all:
            return _fail("--as-of and --all cannot be combined")
    try:
        table = load_table(args.table_path, with_metadata=args.metadata)
    except FileNotFoundError:
        return _fail(f"TABLE_PATH {args.table_path!r}: no such file or directory")
    except (ValueError, OSError) as exc:
        return _fail(f"TABLE_PATH: {exc}")
    if args.metadata:
        if table.metadata is None:
            return _fail(
                f"TABLE_PATH {args.table_path!r}: the table has no metadata table (.hoodie/metadata)"
            )
        table = table.metadata
    try:
        if args.all:
            slices = [s for group in table.all_slices().values() for s in group]
        elif as_of is not None:
            slices = table.as_of(as_of)
        else:
            slices = table.snapshot()
    except ArchivedInstantError as exc:
        return _fail(f"TABLE_PATH {args.table_path!r}: {exc}")
    rows = [_row(s) for s in sorted(slices, key=lambda s: (s.partition, s.file_id, s.base_instant))]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    rule = table.rule.value
    print(
        f"# {len(rows)} file slice(s); table version {table.table_version}, {table.table_type}, rule {rule}"
    )
    for r in rows:
        where = f"{r['partition'] or '<root>'}/{r['file_id']}"
        print(f"{where}  base_instant={r['base_instant']}  base={r['base_file'] or '-'}")
        for name in r["log_files"]:
            print(f"    {name}")
    return 0

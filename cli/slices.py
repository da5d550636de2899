"""``hcc slices TABLE_PATH [--variant V] [--listing L] [--as-of T] [--json] [--of-metadata-table] [--all]
[--rows]``: file slices of a Hudi table.

Reads a table folder or a zip of one with the pure reader (:mod:`model.nbcc.timeline_reader`) and
prints the latest snapshot's file slices, or the slices as of a time, or (``--all``) every slice of
every file group, built as ``--variant`` builds them (:mod:`model.nbcc.variants`; default ``hudi``,
Hudi's newest release: what its readers would show, a file group hidden by issue #19774 included;
``pr-19785`` for the fix).  Table version 6 (timeline layout 1) is always sliced by the instant-time
rule, as Hudi does.  ``--listing storage`` lists the table's folders; ``metadata-table`` lists what
the metadata table would (the files the completed commits on the active timeline wrote, derived from
their commit metadata: files of archived commits are missing); ``auto`` (the default) does what a
Hudi reader does by default, listing through the metadata table when the table records one, unless
the table has an archive (then storage, as the derived listing would miss files).
``--rows`` adds the rows of each slice: as the model's reader reads them (the slice's base file and
logs merged, :func:`model.nbcc.timeline_reader.slice_records`, through :mod:`model.hudi_files`: Parquet
base files, Hudi log files, or a simulated table's own JSON) and, where the ``oracle`` extra is installed,
as hudi-rs 0.5.0 reads its own slices (in a subprocess: a damaged file can abort it), each slice marked
where the two read different rows.  A file that does not decode is named in the slice's error.
Exit codes: 0 ok, 2 bad input (the message names the path or option and the value).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from backends.hudi_table_source import open_table
from cli.options import add_json
from cli.slice_rows import print_rows, slice_rows
from model.nbcc.completion_times import ArchivedInstantError
from model.nbcc.filegroup import build_group
from model.nbcc.slicing import HUDI_RULES, FileSlice, Rule
from model.nbcc.variants import VARIANTS, variant
from model.timeline.layout import format_instant, parse_instant


def register(subparsers: Any) -> None:
    """Add the ``slices`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "slices",
        help="print the file slices of a Hudi table (folder or zip)",
        description="Print the file slices of a Hudi table as a variant's HoodieFileGroup builds them "
                    "(--variant: Hudi 1.2.1's by default, PR #19785's completion-time anchor).",
    )
    p.add_argument("table_path", metavar="TABLE_PATH", help="table folder, or a zip holding one table")
    p.add_argument(
        "--as-of", dest="as_of", metavar="T", help="time travel: 17-digit instant yyyyMMddHHmmssSSS"
    )
    add_json(p, "a JSON list of slices")
    p.add_argument(
        "--of-metadata-table", dest="of_metadata_table", action="store_true",
        help="the slices of the metadata table itself (.hoodie/metadata), not of the data table (to list the "
             "data table as its metadata table lists it: --listing metadata-table)"
    )
    p.add_argument(
        "--all", action="store_true", help="print every slice of every file group, not only the latest "
        "(with Hudi's rules also the slices Hudi hides, marked hidden)"
    )
    p.add_argument("--variant", choices=VARIANTS, default="hudi",
                   help="whose file slicing (default hudi: Hudi's newest release; model/nbcc/variants.py)")
    p.add_argument("--listing", choices=("auto", "storage", "metadata-table"), default="auto",
                   help="list the table's folders, or what its metadata table would list; auto (default): "
                        "the metadata table when the table records one and has no archive, else storage")
    p.add_argument("--rows", action="store_true",
                   help="print the rows of each slice as the model's reader and as hudi-rs read them "
                        "(hudi-rs: the oracle extra)")
    p.set_defaults(func=run)


def _row(s: FileSlice, hidden: bool = False) -> dict[str, Any]:
    row: dict[str, Any] = {
        "partition": s.partition,
        "file_id": s.file_id,
        "base_instant": format_instant(s.base_instant),
        "base_file": s.base_file.name if s.base_file else None,
        "log_files": [lf.name for lf in s.log_files],
    }
    if hidden:
        row["hidden"] = True
        row["pending_log_files"] = [lf.name for lf in s.pending_log_files]
    return row


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
        table, read, root = open_table(args.table_path, with_metadata=args.of_metadata_table)
    except FileNotFoundError:
        return _fail(f"TABLE_PATH {args.table_path!r}: no such file or directory")
    except (ValueError, OSError) as exc:
        return _fail(f"TABLE_PATH: {exc}")
    if args.of_metadata_table:
        if table.metadata is None:
            return _fail(
                f"TABLE_PATH {args.table_path!r}: the table has no metadata table (.hoodie/metadata)"
            )
        table = table.metadata
        read, root = _under(read, ".hoodie/metadata/"), f"{root}/.hoodie/metadata".lstrip("/")
    chosen = variant(args.variant)
    rule = chosen.slicing if table.layout_version >= 2 else Rule.INSTANT_TIME
    archived = table.timeline.archive_boundary is not None
    auto_mdt = args.listing == "auto" and table.has_metadata_table and not archived
    mdt = args.listing == "metadata-table" or auto_mdt
    listing = "metadata-table" if mdt else "storage"
    hidden: list[FileSlice] = []
    try:
        if args.all:
            groups = table.listed_groups(mdt)
            slices = [s for group in table.view_slices(rule, mdt).values() for s in group]
            if rule in HUDI_RULES:
                ct = table.completion_lookup()
                fix = rule is Rule.PR_19785
                hidden = [s for g in groups for s in build_group(g, ct, fix_19785=fix).hidden]
        elif as_of is not None:
            slices = table.as_of(as_of, rule, mdt)
        else:
            slices = table.snapshot(rule, mdt)
    except ArchivedInstantError as exc:
        return _fail(f"TABLE_PATH {args.table_path!r}: {exc}")
    order = sorted([(s, False) for s in slices] + [(s, True) for s in hidden],
                   key=lambda p: (p[0].partition, p[0].file_id, p[0].base_instant))
    rows = [_row(s, h) for s, h in order]
    if args.rows:
        found = slice_rows(table, [s for s, _ in order], read, args.table_path, root, args.as_of)
        for r, got in zip(rows, found.model, strict=True):
            r.update(got)
    if args.json:
        print(json.dumps({"slices": rows, "hudi_rs": found.hudi_rs} if args.rows else rows, indent=2))
        return 0
    print(
        f"# {len(rows)} file slice(s); table version {table.table_version}, {table.table_type}, rule "
        f"{rule.value} (variant {chosen.name}: {chosen.short}), {listing} listing"
    )
    for r in rows:
        where = f"{r['partition'] or '<root>'}/{r['file_id']}"
        mark = "  (hidden: Hudi does not call this slice committed)" if r.get("hidden") else ""
        print(f"{where}  base_instant={r['base_instant']}  base={r['base_file'] or '-'}{mark}")
        for name in r["log_files"]:
            print(f"    {name}")
        for name in r.get("pending_log_files", ()):
            print(f"    {name}  (pending)")
        if args.rows:
            print_rows(r)
    if args.rows:
        found.print_hudi_rs()
    return 0


def _under(read: Any, prefix: str) -> Any:
    def read_under(rel: str) -> bytes:
        return bytes(read(prefix + rel))

    return read_under

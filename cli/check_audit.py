"""``hcc check-audit PATH``: Hudi's storage-lock audit files, validated as ``locks audit validate`` does.

PATH is a table base path, its ``.hoodie/.locks`` folder or its ``.hoodie/.locks/audit``
folder on local disk, or a storage URL (``s3+http://HOST:PORT/BUCKET``, ``gs://BUCKET``,
... as for ``hcc conformance``) with ``--table`` naming the table's base path in the
bucket.  Each audit file is one transaction window, from its first START to its last END
(without an END, to the last record's lockExpiration); a window that starts before an
earlier one ends is an overlap, as Hudi's validator reports it; a file with several
START..END cycles is one window.  Timestamps are the writers' own clocks (see
``backends/hudi_audit.py``).

Exit status: 0 no overlap (windows without END are listed as warnings), 1 an overlap,
2 bad input (no audit files, a line that is not an audit record: the file, line and field
are named).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from backends import registry
from backends.hudi_audit import AuditFormatError, read_backend, read_local, validate, window_events
from cli.options import add_json
from model.config import ConfigError
from model.runtime.history import dumps


def register(subparsers: Any) -> None:
    """Add the ``check-audit`` subcommand."""
    p = subparsers.add_parser(
        "check-audit", help="validate Hudi's storage-lock audit files as hudi-cli 'locks audit validate'",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", metavar="PATH",
                   help="table base path, its .hoodie/.locks or audit folder, or a storage URL")
    p.add_argument("--table", help="with a URL: the table's base path in the bucket (e.g. warehouse/t1)")
    p.add_argument("--history", metavar="FILE", help="also write the windows as a lock history (JSON Lines)")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read, validate, report; returns the exit code."""
    try:
        if registry.is_url(args.path):
            if not args.table:
                raise ConfigError("--table", args.table, "is required with a storage URL")
            from backends.endpoint import from_url

            ep = from_url(args.path)
            table = args.table.strip("/")
            with ep.backend(table + "/") as backend:
                records = read_backend(backend, table)
        else:
            records = read_local(Path(args.path))
    except AuditFormatError as e:
        print(f"hcc check-audit: {e}", file=sys.stderr)
        return 2
    result = validate(records)
    if args.history:
        from engines.rundir import write_atomic

        try:
            write_atomic(Path(args.history), dumps(window_events(result.windows)))
        except OSError as e:
            print(f"hcc check-audit: --history {args.history!r}: {e.strerror}", file=sys.stderr)
            return 2
    owners = sorted({r.owner for r in records})
    verdict = "violation" if result.overlaps else "ok"
    if args.json:
        print(json.dumps({
            "path": args.path, "records": len(records), "owners": owners, "transactions": len(result.windows),
            "validator": result.result, "verdict": verdict,
            "overlaps": [{"earlier": o.earlier.name, "later": o.later.name,
                          "owners": [o.earlier.owner, o.later.owner],
                          "earlier_window": [o.earlier.start, o.earlier.end], "later_start": o.later.start,
                          "overlap_ms": o.overlap_ms} for o in result.overlaps],
            "without_end": [w.name for w in result.unfinished],
            "several_cycles": [w.name for w in result.windows if w.cycles > 1],
        }, sort_keys=True))
    else:
        print(f"{len(records)} audit records, {len(result.windows)} transaction windows, {len(owners)} "
              f"owners: Hudi's validator says {result.result}; verdict {verdict}")
        for o in result.overlaps[:20]:
            print(f"  [ERROR] {o.message()}")
        for w in result.unfinished[:20]:
            print(f"  [WARNING] {w.name} => transaction did not end gracefully (no END; window ends at its "
                  f"last lockExpiration {w.end})")
        for w in result.windows:
            if w.cycles > 1:
                print(f"  note: {w.name} holds {w.cycles} START..END cycles, validated as one window")
    return 1 if result.overlaps else 0

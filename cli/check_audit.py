"""``hcc check-audit PATH``: mutual exclusion over Hudi's storage-lock audit files.

PATH is a table base path or its ``.hoodie/.locks/audit`` folder on local
disk, or a storage URL (``s3+http://HOST:PORT/BUCKET``, ``gs://BUCKET``, ... as
for ``hcc conformance``) with ``--table`` naming the table's base path in the
bucket.  Every audit record (START / RENEW / END per owner and transaction) is
turned into a lock history and the mutual-exclusion checker runs on it: two
owners holding the lock at the same time is a violation.  Timestamps are the
writers' own clocks (see ``backends/hudi_audit.py``).

Exit status: 0 no violation, 1 a violation, 2 bad input (no audit files, a
record that is not an audit record: the file, line and field are named).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from backends import registry
from backends.hudi_audit import AuditFormatError, audit_events, check_audit, read_backend, read_local
from model.config import ConfigError
from model.history import dumps


def register(subparsers: Any) -> None:
    """Add the ``check-audit`` subcommand."""
    p = subparsers.add_parser(
        "check-audit", help="check Hudi's storage-lock audit files for two owners holding the lock at once",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", metavar="PATH", help="table base path or audit folder, or a storage URL")
    p.add_argument("--table", help="with a URL: the table's base path in the bucket (e.g. warehouse/t1)")
    p.add_argument("--history", metavar="FILE", help="also write the derived history (JSON Lines)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read, convert, check; returns the exit code."""
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
    except ValueError as e:
        raise ConfigError("PATH", args.path, str(e)) from e
    events = audit_events(records)
    if args.history:
        Path(args.history).write_text(dumps(events))
    verdict = check_audit(records)
    owners = sorted({r.owner for r in records})
    transactions = sum(1 for e in events if e.f == "acquire")
    if args.json:
        print(json.dumps({"path": args.path, "records": len(records), "owners": owners,
                          "transactions": transactions, **verdict.to_dict()}, sort_keys=True))
    else:
        print(f"{len(records)} audit records, {transactions} transactions, {len(owners)} owners: "
              f"verdict {verdict.verdict}")
        for v in verdict.violations[:20]:
            print(f"  violation [{v.kind}] {v.message}")
            for i in v.events:
                print(f"    {events[i].value.get('source', '')}: {events[i].f} {events[i].type}")
    return 1 if verdict.violations else 0

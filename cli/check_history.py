"""``hcc check-history FILE``: is a recorded history linearizable?

FILE holds JSON lines, one event per line: ``process``, ``type`` (invoke/ok/fail/info), ``f``
(read/write/cas for ``--model cas-register``; get/put/append for ``--model kv``), ``value``
and optionally ``time`` (else the line order is the time).  Format: docs/check-history.md.

Exit status: 0 linearizable, 1 not (the counterexample is printed), 2 bad input (the message
names the file, the line and the field), 3 unknown (the time limit passed before a verdict).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from engines.rundir import write_atomic
from model.checkers.history_jsonl import FUNCTIONS, HistoryError, read_history
from model.checkers.lin_models import KVModel, Model, RegisterModel
from model.checkers.lin_search import ILLEGAL, OK_RESULT, UNKNOWN
from model.checkers.linearizable import check_operations
from reports.linearizability import render_timeline

EXIT = {OK_RESULT: 0, ILLEGAL: 1, UNKNOWN: 3}
TITLE = {OK_RESULT: "linearizable", ILLEGAL: "NOT linearizable", UNKNOWN: "unknown (time limit reached)"}


def register(subparsers: Any) -> None:
    """Add the ``check-history`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "check-history",
        help="check a recorded history (JSON lines) for linearizability; counterexample and timeline",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE", help="history, one JSON event per line")
    p.add_argument("--model", choices=tuple(FUNCTIONS), default="cas-register",
                   help="sequential specification (default cas-register)")
    p.add_argument("--initial", default="null", metavar="JSON",
                   help="initial value of the cas-register (JSON; default null, i.e. absent)")
    p.add_argument("--json", action="store_true", help="print the verdict as one JSON object")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="give up after S seconds with the result unknown (exit 3)")
    p.add_argument("--html", type=Path, default=None, metavar="OUT",
                   help="write a self-contained HTML/SVG timeline of the verdict to OUT")
    p.set_defaults(func=run)


def _bad(message: str) -> int:
    print(f"hcc check-history: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Read, check, report; returns the exit code (0 ok, 1 not linearizable, 2 bad input, 3 unknown)."""
    if args.timeout is not None and not (math.isfinite(args.timeout) and args.timeout > 0):
        return _bad(f"bad --timeout {args.timeout!r}: must be a positive number of seconds")
    model: Model[Any]
    if args.model == "kv":
        if args.initial != "null":
            return _bad(f"bad --initial {args.initial!r}: only the cas-register model has an initial value")
        model = KVModel()
    else:
        try:
            initial = json.loads(args.initial)
        except ValueError as e:
            return _bad(f"bad --initial {args.initial!r}: not JSON ({e})")
        if isinstance(initial, list | dict | bool):
            return _bad(f"bad --initial {args.initial!r}: a register value is a string, a number or null")
        model = RegisterModel(initial)
    path = Path(args.file)
    try:
        with path.open("rb") as f:
            history = read_history(f, args.model)
    except HistoryError as e:
        return _bad(f"{path}: {e}")
    except OSError as e:
        return _bad(f"cannot read {path}: {e.strerror or e}")
    verdict = check_operations(history.ops, model=model, timeout=args.timeout)
    if args.html is not None:
        page = render_timeline(verdict, f"{path.name}: {TITLE[verdict.result]}", history.locate)
        try:
            write_atomic(args.html, page)
        except OSError as e:
            return _bad(f"cannot write --html {args.html}: {e.strerror or e}")
    if args.json:
        print(json.dumps({"file": str(path), **verdict.to_json(history.locate)}, indent=2))
    else:
        print(f"{path}: {verdict.text(history.locate)}")
        if args.html is not None:
            print(f"timeline: {args.html}")
    return EXIT[verdict.result]

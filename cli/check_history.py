"""``hcc check-history FILE``: is a recorded history linearizable, or transactionally consistent?

FILE holds JSON lines, one event per line: ``process``, ``type`` (invoke/ok/fail/info), ``f``
(read/write/cas for ``--model cas-register``; get/put/append for ``--model kv``), ``value``
and optionally ``time`` (else the line order is the time).  With ``--model list-append`` or
``--model rw-register`` each ``value`` is a transaction, a list of micro-ops (``["append", "x",
1]``, ``["r", "x", [1]]``, ``["w", "x", 3]``), checked as Elle checks it for the anomalies that
``--consistency-model`` forbids; FILE may then also be a Jepsen EDN history (``.edn``).
Format: docs/check-history.md.

Exit status: 0 linearizable (or no anomaly the claimed model forbids), 1 not (the
counterexample, or the cycles, printed), 2 bad input (the message names the file, the line and
the field), 3 unknown (the time limit passed before a verdict; for transactions also when no
dependency could be inferred).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from cli.options import add_json
from engines.rundir import write_atomic
from model.checkers.history_jsonl import FUNCTIONS, HistoryError, read_history
from model.checkers.lin_models import KVModel, Model, RegisterModel
from model.checkers.lin_search import ILLEGAL, OK_RESULT, UNKNOWN
from model.checkers.linearizable import check_operations
from model.checkers.txn_anomalies import known_model
from model.checkers.txn_check import DEFAULT_MODEL, TxnVerdict, check_txns
from model.checkers.txn_history import KINDS, TxnHistory, read_txn_edn, read_txn_jsonl
from reports.linearizability import render_timeline
from reports.txn_cycles import render_txn_report

EXIT = {OK_RESULT: 0, ILLEGAL: 1, UNKNOWN: 3}
TITLE = {OK_RESULT: "linearizable", ILLEGAL: "NOT linearizable", UNKNOWN: "unknown (time limit reached)"}


def register(subparsers: Any) -> None:
    """Add the ``check-history`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "check-history",
        help="check a recorded history for linearizability (counterexample, timeline) or, as Elle, for "
             "transactional anomalies (list-append, rw-register; cycles, models ruled out)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE", help="history, one JSON event per line")
    p.add_argument("--model", choices=(*FUNCTIONS, *KINDS), default="cas-register",
                   help="cas-register or kv: linearizability; list-append or rw-register: transactions, "
                        "checked as Elle does (default cas-register)")
    p.add_argument("--consistency-model", action="append", default=None, metavar="M",
                   help=f"transactions: the model the history claims (Elle's names: read-uncommitted, "
                        f"read-committed, snapshot-isolation, repeatable-read, serializable, "
                        f"strict-serializable, strong-session-*, ...; repeatable; default {DEFAULT_MODEL})")
    p.add_argument("--format", choices=("auto", "jsonl", "edn"), default="auto",
                   help="transactions: JSON lines or Jepsen EDN (default auto: EDN for a .edn file)")
    p.add_argument("--wfr-keys", action="store_true",
                   help="rw-register: a transaction's writes follow its reads (Elle's :wfr-keys?)")
    p.add_argument("--sequential-keys", action="store_true",
                   help="rw-register: keys are sequential; the process order orders versions")
    p.add_argument("--linearizable-keys", action="store_true",
                   help="rw-register: keys are linearizable; the real-time order orders versions")
    p.add_argument("--initial", default="null", metavar="JSON",
                   help="initial value of the cas-register (JSON; default null, i.e. absent)")
    add_json(p, "the verdict as one JSON object")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="give up after S seconds with the result unknown (exit 3)")
    p.add_argument("--allow-empty", action="store_true",
                   help="accept a history with no operation (registers: linearizable, exit 0; transactions: "
                        "Elle's empty-transaction-graph, exit 3); by default it is bad input (exit 2)")
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
    if args.model in KINDS:
        return _run_txn(args)
    for flag in ("consistency_model", "wfr_keys", "sequential_keys", "linearizable_keys"):
        if getattr(args, flag, None):
            return _bad(f"--{flag.replace('_', '-')} is for --model list-append or rw-register")
    if getattr(args, "format", "auto") == "edn":
        return _bad("--format edn is for --model list-append or rw-register")
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
        if path.suffix == ".edn":  # by name only: a bad JSON line may look like EDN
            return _bad(f"{path}: a Jepsen EDN history; EDN is read for transactions only "
                        "(--model list-append or rw-register)")
        with path.open("rb") as f:
            history = read_history(f, args.model)
    except HistoryError as e:
        return _bad(f"{path}: {e}")
    except OSError as e:
        return _bad(f"cannot read {path}: {e.strerror or e}")
    if not history.ops and not args.allow_empty:
        return _bad(f"{path}: no operations (an empty history is bad input; --allow-empty accepts it)")
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


TXN_EXIT = {"ok": 0, "illegal": 1, "unknown": 3}


def _is_edn(path: Path, head: bytes) -> bool:
    if path.suffix == ".edn":
        return True
    text = head.lstrip()
    return text.startswith(b"[") or (text.startswith(b"{") and text[1:].lstrip().startswith(b":"))


def _run_txn(args: argparse.Namespace) -> int:
    models = args.consistency_model or [DEFAULT_MODEL]
    for m in models:
        if not known_model(m):
            return _bad(f"unknown --consistency-model {m!r} (Elle's names, e.g. read-committed, "
                        "snapshot-isolation, serializable, strict-serializable)")
    if args.initial != "null":
        return _bad(f"bad --initial {args.initial!r}: only the cas-register model has an initial value")
    if args.model == "list-append" and (args.wfr_keys or args.sequential_keys or args.linearizable_keys):
        return _bad("--wfr-keys, --sequential-keys and --linearizable-keys are for --model rw-register "
                    "(list-append reads show the version order)")
    path = Path(args.file)
    try:
        data = path.read_bytes()
    except OSError as e:
        return _bad(f"cannot read {path}: {e.strerror or e}")
    history: TxnHistory
    try:
        if args.format == "edn" or (args.format == "auto" and _is_edn(path, data[:4096])):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as e:
                line = data[:e.start].count(b"\n") + 1
                return _bad(f"{path}: line {line}: not UTF-8 text (byte {e.start})")
            history = read_txn_edn(text, args.model)
        else:
            history = read_txn_jsonl(data.splitlines(), args.model)
    except HistoryError as e:
        return _bad(f"{path}: {e}")
    if not history.txns and not args.allow_empty:
        return _bad(f"{path}: no transactions (an empty history is bad input; --allow-empty accepts it)")
    verdict: TxnVerdict = check_txns(history, models, wfr_keys=args.wfr_keys,
                                     sequential_keys=args.sequential_keys,
                                     linearizable_keys=args.linearizable_keys, timeout=args.timeout)
    if args.html is not None:
        claimed = ", ".join(models)
        title = {"ok": f"consistent with {claimed}", "illegal": f"NOT {claimed}",
                 "unknown": f"unknown for {claimed}"}[verdict.result]
        page = render_txn_report(verdict, f"{path.name}: {title}", history.locate)
        try:
            write_atomic(args.html, page)
        except OSError as e:
            return _bad(f"cannot write --html {args.html}: {e.strerror or e}")
    if args.json:
        print(json.dumps({"file": str(path), **verdict.to_json(history.locate)}, indent=2, default=str))
    else:
        print(f"{path}: {verdict.text(history.locate)}")
        if args.html is not None:
            print(f"cycles: {args.html}")
    return TXN_EXIT[verdict.result]

"""``hcc explore``: exhaustive breadth-first check of the v5 copy-on-write commit protocol.

``hcc explore --writers 2 --keys 2 --values 2 --file-groups 1 --ops 4 --monotonic-ts yes|no
--cc none|optimistic|pessimistic --put-if-absent yes|no --pk-check yes|no --salt yes|no
[--symmetry] [--json]``

Explores every interleaving of the configuration (the TLA+ specification
``hudi/v5_spec/basic_cow``, see :mod:`model.cow`) and checks ConsistentRead.  Prints
"holds" with the number of distinct states and the depth, or the shortest counterexample
step by step.  Exit codes: 0 holds, 1 violated, 2 bad input (the message names the option
and the value), 3 stopped by ``--max-states`` before the search was complete.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cli.options import add_json
from model.cow import CC, CowConfig, CowConfigError
from model.protocols.explore import cow_result_json, explore_cow

_YES = {"yes": True, "y": True, "true": True, "1": True, "no": False, "n": False, "false": False, "0": False}
_CC = {"none": CC.NONE, "0": CC.NONE, "optimistic": CC.OPTIMISTIC, "occ": CC.OPTIMISTIC, "1": CC.OPTIMISTIC,
       "pessimistic": CC.PESSIMISTIC, "2": CC.PESSIMISTIC}
_INTS = (("writers", 2), ("keys", 2), ("values", 2), ("file-groups", 1), ("ops", 4))
_FLAGS = (("monotonic-ts", "yes"), ("put-if-absent", "no"), ("pk-check", "yes"), ("salt", "no"))


def register(subparsers: Any) -> None:
    """Add the ``explore`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "explore",
        help="exhaustively check the v5 copy-on-write commit protocol (ConsistentRead)",
        description="Breadth-first search over all interleavings of a small copy-on-write configuration "
                    "(Vanlightly's TLA+ spec hudi/v5_spec/basic_cow), checking ConsistentRead.",
    )
    for name, default in _INTS:
        p.add_argument(f"--{name}", default=str(default), metavar="N", help=f"default {default}")
    for name, flag in _FLAGS:
        p.add_argument(f"--{name}", default=flag, metavar="yes|no", help=f"default {flag}")
    p.add_argument("--cc", default="optimistic", metavar="none|optimistic|pessimistic",
                   help="concurrency control (default optimistic)")
    p.add_argument("--symmetry", action="store_true",
                   help="reduce by symmetry: writers, keys and values are interchangeable")
    p.add_argument("--exact", action="store_true",
                   help="store whole states instead of 64-bit fingerprints (more memory)")
    p.add_argument("--max-states", default=None, metavar="N", help="stop after storing N states (exit 3)")
    add_json(p)
    p.set_defaults(func=run)


def _fail(msg: str) -> int:
    print(f"hcc explore: {msg}", file=sys.stderr)
    return 2


def parse_config(args: argparse.Namespace) -> CowConfig | str:
    """Build the configuration from parsed options, or return an error message naming the option."""
    ints: dict[str, int] = {}
    for name, _default in _INTS:
        raw = getattr(args, name.replace("-", "_"))
        try:
            ints[name] = int(str(raw))
        except ValueError:
            return f"--{name}: {raw!r} is not an integer"
    flags: dict[str, bool] = {}
    for name, _flag in _FLAGS:
        raw = str(getattr(args, name.replace("-", "_")))
        if raw.lower() not in _YES:
            return f"--{name}: {raw!r} must be yes or no"
        flags[name] = _YES[raw.lower()]
    cc_raw = str(args.cc)
    if cc_raw.lower() not in _CC:
        return f"--cc: {cc_raw!r} must be none, optimistic or pessimistic"
    cfg = CowConfig(writers=ints["writers"], keys=ints["keys"], values=ints["values"],
                    file_groups=ints["file-groups"], ops=ints["ops"], monotonic_ts=flags["monotonic-ts"],
                    cc=_CC[cc_raw.lower()], put_if_absent=flags["put-if-absent"], pk_check=flags["pk-check"],
                    salt=flags["salt"])
    try:
        cfg.validate()
    except CowConfigError as exc:
        return f"--{exc.field.replace('_', '-')}: {exc.value!r} {exc.reason}"
    return cfg


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit code (0 holds, 1 violated, 2 bad input, 3 incomplete)."""
    parsed = parse_config(args)
    if isinstance(parsed, str):
        return _fail(parsed)
    cfg = parsed
    max_states: int | None = None
    if args.max_states is not None:
        try:
            max_states = int(str(args.max_states))
        except ValueError:
            return _fail(f"--max-states: {args.max_states!r} is not an integer")
        if max_states < 1:
            return _fail(f"--max-states: {max_states!r} must be at least 1")
    res, seconds = explore_cow(cfg, bool(args.symmetry), bool(args.exact), max_states)
    if args.json:
        print(json.dumps(cow_result_json(cfg, res, seconds)))
    else:
        print(f"{cfg.row()}  symmetry={'on' if res.symmetry else 'off'}")
        if res.violation is not None:
            print(f"ConsistentRead: violated after {res.states} distinct states ({seconds:.2f} s); "
                  f"shortest counterexample: {res.counterexample_length} states")
            for st in res.trace:
                print(f"  {st.index:>2}. {st.text}")
                print(f"      {st.state}")
            print(res.violation.describe())
        elif res.complete:
            print(f"ConsistentRead: holds ({res.states} distinct states, depth {res.depth}, "
                  f"{res.generated} generated, {seconds:.2f} s)")
        else:
            print(f"ConsistentRead: unknown, stopped at --max-states {max_states} "
                  f"(depth {res.depth}, {seconds:.2f} s)")
    if res.verdict == "violated":
        return 1
    return 0 if res.complete else 3

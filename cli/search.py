"""``hcc search TARGET [--seed N] [--variant V] [--max-examples N] [--out FILE]``: the targeted bug search.

Searches the generic fault space of :mod:`analyses.bug_search` for a case of TARGET (long-pause,
throttled-renewal, failed-renewal, lost-reply), shrinks it, prints it with its search seed and
writes it (``--out``) as a scenario file that ``hcc run FILE`` replays.  Exit codes: 0 found,
1 not found within ``--max-examples``, 2 bad input (the message names the option and the value).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from engines.rundir import write_atomic
from model.config import ConfigError
from model.lock.variants import VARIANTS

TARGETS = ("long-pause", "throttled-renewal", "failed-renewal", "lost-reply")  # analyses.bug_search.TARGETS


def register(subparsers: Any) -> None:
    """Add the ``search`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "search", help="search a fault space for a lock violation class, shrink it, write a scenario",
        description="Targeted Hypothesis search of the lock model for one violation class; the shrunk "
                    "case is printed and written as a scenario file that hcc run replays.")
    p.add_argument("target", choices=TARGETS, help="the class to find")
    p.add_argument("--seed", type=int, default=0, help="the search seed (the same seed, the same search)")
    p.add_argument("--variant", choices=VARIANTS, default="hudi", help="the lock variant (default hudi)")
    p.add_argument("--max-examples", dest="max_examples", type=int, default=200,
                   help="cases to generate before giving up (default 200)")
    p.add_argument("--out", type=Path, help="write the find as a scenario file (TOML) here")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit code."""
    if args.max_examples <= 0:
        raise ConfigError("--max-examples", args.max_examples, "must be > 0")
    if args.out is not None and not args.out.parent.is_dir():
        raise ConfigError("--out", str(args.out), "its folder does not exist")
    try:
        from analyses import bug_search
    except ModuleNotFoundError as e:  # Hypothesis comes with the test extra
        print(f"hcc search: needs {e.name} (pip install 'hudi-cc-harness[test]')", file=sys.stderr)
        return 2
    result = bug_search.search(args.target, args.seed, variant=args.variant, max_examples=args.max_examples)
    print(result.describe())
    if not result.found:
        return 1
    if args.out is not None:
        write_atomic(args.out, bug_search.scenario_toml(result))
        print(f"written to {args.out}; replay: hcc run {args.out}")
    return 0

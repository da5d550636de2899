"""``hcc explore-lock``: ``hcc explore --protocol lock`` (the lock explorer's own name, kept as an alias).

``hcc explore-lock --variant V --writers N --faults K [--fault-kinds K1,K2] [--skew-ms S] [--json]``
plus the bounds (``--holds``, ``--validity-s``, ``--renew-s``, ``--steps``, ``--work-ms`` ...) and the
reductions (``--no-hashing``, ``--no-symmetry``, ``--no-por``); the defaults are the README table's
bounds (one hold of one read-modify-write per writer), so a row's words reproduce the row.

It runs the lock provider and the register workload themselves (``model/lock/provider.py``,
``model/lock/register_writer.py``) through the runtime kernel, in a world where a scheduler takes every
decision (``model/explore``), and judges each history with the simulation's checkers plus
bounded liveness.  A violation comes with a shortest counterexample: a step table, and with
``--out FILE`` a scenario TOML that ``hcc run FILE`` replays exactly in simulation (then
``hcc replay RUN_DIR --backend NAME`` on a real server).  The full search's shortest path is proved
shortest only without partial-order reduction (reordering independent steps can change the number of
decisions); ``--shortest`` proves it otherwise, or when the search stops at its budget, by iterative
deepening over depth-bounded searches (``--shortest-seconds``; JSON ``shortest_proved``,
``lower_bound``, ``deepening``).  While it runs, stderr says what it does: the search (and the
deepening) with its states so far every few seconds, then the replay of each counterexample,
each part with its seconds (JSON ``timings``).  ``--scenario FILE`` takes the lock,
storage and workload sections of a scenario (any variant the provider knows) instead of the
bound options.  Exit codes: 0 holds, 1 violated, 2 bad input, 3 stopped by ``--max-states`` or
``--max-seconds`` before the search was complete.
"""

from __future__ import annotations

import argparse
from typing import Any

from cli.explore import add_bound_options, found_json, parse_bounds, result_json, run_bounds
from cli.options import add_json

__all__ = ["found_json", "parse_bounds", "register", "result_json", "run"]


def register(subparsers: Any) -> None:
    """Add the ``explore-lock`` subcommand."""
    p = subparsers.add_parser(
        "explore-lock", help="exhaustively check the RFC-91 lock (hcc explore --protocol lock)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_bound_options(p, lock_only=True)
    p.add_argument("--no-symmetry", action="store_true",
                   help="do not merge states equal up to renaming writers")
    p.add_argument("--max-states", default=None, metavar="N", help="stop after N states (exit 3)")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code (0 holds, 1 violated, 2 bad input, 3 incomplete)."""
    return run_bounds(args, "lock", "hcc explore-lock")

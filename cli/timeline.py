"""``hcc timeline run NAME_OR_PATH``: an alias of ``hcc run`` for the catalogue's timeline (``occ``) entries.

A timeline scenario file is a lock-model scenario file (world, clocks, faults, lock, storage,
writers) with a ``[timeline]`` table (``model/timeline/config.py``) and ``protocol = "occ"``.
The run directory is the one every entry gets (``engines/rundir.py``), with the Hudi
COPY_ON_WRITE table the writers left under ``table/`` (readable with ``hcc slices OUT/table``).
"""

from __future__ import annotations

import argparse
from typing import Any

from cli.options import add_json, add_out, add_set
from cli.run import cmd_run
from scenarios.timeline_loader import load, timeline_names


def run(args: argparse.Namespace) -> int:
    """hcc timeline run: check the entry is a timeline one, then ``hcc run`` it."""
    load(args.scenario, args.set or [])  # ConfigError (exit 2) for a scenario of another protocol
    return cmd_run(argparse.Namespace(**vars(args), all=False, protocol=None))


def register(subparsers: Any) -> None:
    """Add ``hcc timeline run``."""
    parser = subparsers.add_parser("timeline", help="timeline, time generation and OCC commits "
                                                    "(an alias of hcc run for occ entries)")
    sub = parser.add_subparsers(dest="timeline_command", required=True)
    r = sub.add_parser("run", help="run a timeline scenario")
    r.add_argument("scenario", help=f"catalogue entry ({', '.join(timeline_names())}) or a TOML path")
    r.add_argument("--seed", type=int, help="override the scenario's seed")
    add_out(r, "a new folder out/runs/NAME/seedN-TIME")
    add_set(r)
    add_json(r)
    r.set_defaults(func=run)

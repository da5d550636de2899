"""Benchmark and tables of the OCC and NBCC explorers (not a test; prints figures, asserts nothing).

The README's lock table has its own script (``bench_explore_lock.py``); this one explores the model's
OCC and NBCC code exhaustively within small bounds (``model/explore/occ.py``, ``nbcc.py``) with the same
search, budgets and iterative deepening (its ``row``), two writers throughout:

* OCC: Hudi 1.2.1's copy-on-write writer (``hudi``) and Vanlightly's v5 specification's writer
  (``vanlightly-v5``, hypothetical) under each concurrency control, one upsert per writer of one key,
  one or two file groups (Hudi: partitions), the decisive checkers consistent reads (lost updates among
  them) and duplicate keys across file groups;
* NBCC: Hudi 1.2.0's ``HoodieFileGroup`` (``hudi-1.2.0``, issue #19774's anchor) and 1.2.1's (``hudi``, PR
  #19785's fix), one deltacommit per writer of one row to one shared file group, readers listing through the
  metadata table or storage, without faults and with one fault of each storage kind; every NBCC check
  decides (slice membership and coverage, compaction plans, durability, snapshots, time travel, incremental
  reads).

Each row prints the exact ``hcc explore --protocol ...`` command that reproduces it
(``cli/explore_command.py``: the options whose values differ from the CLI's defaults, which are the
bounds' defaults, and the row's budgets).  ``--readme``
rewrites the two tables between their markers in README.md.

Run: python benchmarks/bench_explore_protocols.py [--budget S] [--budget-shortest S] [--only occ|nbcc]
     [--readme]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_explore_lock import rate_of, row, write_readme  # noqa: E402

from cli.explore_command import command_of  # noqa: E402
from model.explore import Bounds  # noqa: E402
from model.explore.nbcc import NbccBounds  # noqa: E402
from model.explore.occ import OccBounds  # noqa: E402

MARKERS = {"occ": ("<!-- explore-occ-table -->", "<!-- /explore-occ-table -->"),
           "nbcc": ("<!-- explore-nbcc-table -->", "<!-- /explore-nbcc-table -->")}
STORAGE_KINDS = ("lost-reply", "timeout", "throttle-503")  # NBCC's storage faults: one request, or a window


def occ_rows() -> list[Bounds]:
    """The OCC table: Hudi 1.2.1's writer (every decisive checker; the duplicate-key checker alone; readers
    listing storage); the v5 writer without concurrency control, with OCC (one and two file groups, with
    and without its primary-key check) and with pessimistic file-group locks."""
    hudi = OccBounds(variant="hudi", writers=2)
    v5 = OccBounds(variant="vanlightly-v5", writers=2)
    return [hudi, dataclasses.replace(hudi, checkers=("duplicate-key",)),
            dataclasses.replace(hudi, metadata_table=False),
            dataclasses.replace(v5, cc="none"), v5, dataclasses.replace(v5, file_groups=2),
            dataclasses.replace(v5, file_groups=2, pk_check=False),
            dataclasses.replace(v5, file_groups=2, cc="pessimistic", pk_check=False)]


def nbcc_rows() -> list[Bounds]:
    """The NBCC table: ``hudi-1.2.0`` and ``hudi`` (1.2.1, which ships PR #19785's file group), metadata-table
    listing on and off, each (a) one deltacommit
    per writer, no fault; (b) two deltacommits per writer into two file groups, w1's second failing once
    after its log (the anchor of issue #19774 when a reader lists storage); (c) one deltacommit per writer
    and one storage fault."""
    out: list[Bounds] = []
    plans = ({}, {"batches": 2, "buckets": 2, "failed_attempts": 1},
             {"faults": 1, "fault_kinds": STORAGE_KINDS})
    for plan in plans:
        for variant in ("hudi-1.2.0", "hudi"):
            for listing in (True, False):
                out.append(NbccBounds(variant=variant, writers=2, metadata_table=listing, **plan))
    return out


def _bounds_cells(r: dict[str, Any]) -> str:
    b = r["bounds"]
    kinds = f" ({', '.join(b.fault_kinds)})" if b.faults else ""
    if b.protocol == "occ":
        mt = "on" if b.timeline().metadata_table_on else "off"  # the writer's default when not given
        return (f"`{b.variant}` | {b.cc} | {b.ops} | {b.keys} | {b.file_groups} | {mt} "
                f"| {b.faults}{kinds}")
    return (f"`{b.variant}` | {'metadata table' if b.metadata_table else 'storage'} | {b.batches} "
            f"| {b.buckets} | {b.failed_attempts} | {b.faults}{kinds}")


# what "holds" covers, under each table
COVERS = {
    "occ": ("**\"holds\" covers** only these runs: two writers, `ops` upserts each of the table's `keys` "
            "keys (every writer writes every key, its values its own), `file groups` v5 file groups or Hudi "
            "partitions, the commit lock Hudi's storage-based provider (validity 2 s, renewals every 1 s, "
            "polls every 1 s), the time generator's wait 500 ms (`max_expected_clock_skew_ms`), each writer "
            "starting at 0 or 500 ms, hops of zero latency, no clock skew, no fault (K = 0), every time on a "
            "500 ms grid; nothing about more writers, operations, keys, faults or other timings."),
    "nbcc": ("**\"holds\" covers** only these runs: two writers starting at 0 (and the compaction service,"
             " no compaction scheduled), `batches` deltacommits each of one row, the rows of batch b in "
             "file group b (bucket index; every writer writes the same keys), w1's last batch failing "
             "`failed attempts` times after its log and then retried, heartbeats every 1 s with the "
             "variant's tolerable misses (2 in 1.2.0, 10 in 1.2.1), the table lock Hudi's storage-based "
             "provider with the simulated NBCC plan's timings (validity 10 s, polls every 25 ms), hops of "
             "zero latency, one clock, every time on a 25 ms grid; K = 1: at most one fault on any "
             "request, a lost reply, a timeout, or a window of 503s lasting 10.0 or 10.5 s (one tick past "
             "a heartbeat expiry or a lease with its drift allowance); nothing about more writers, "
             "batches, compactions or other faults."),
}

HEADS = {"occ": ("writer", "cc", "ops", "keys", "file groups", "metadata table", "K"),
         "nbcc": ("variant", "listing", "batches", "file groups", "failed attempts", "K")}


def markdown(protocol: str, rows: list[dict[str, Any]], budget: float, budget_shortest: float,
             spent: float) -> str:
    """One protocol's README table, with its budgets and the time of all its rows."""
    cols = [*HEADS[protocol], "verdict", "states", "depth", "search", "shortest counterexample",
            "iterative deepening", "findings", "command"]
    head = f"| {' | '.join(cols)} |\n|{'---|' * len(cols)}\n"
    body = "".join(
        f"| {_bounds_cells(r)} | {r['verdict']} | {'' if r['complete'] else '≥ '}{r['states']:,} "
        f"| {r['depth']} | {r['search']:.1f} s | {r['example'] or '-'} | {r['proof']} "
        f"| {r['findings'] or '-'} | `{command_of(r['bounds'])} --max-seconds {budget:.0f} "
        f"--shortest-seconds {budget_shortest:.0f}` |\n" for r in rows)
    return head + body + (
        f"\n{len(rows)} rows in {spent:.0f} s. Time budget per row: {budget:.0f} s for the search, then "
        f"{budget_shortest:.0f} s for iterative deepening when the search found a violation or stopped at "
        "its budget; a row the search's budget stopped is `incomplete`, or `violated` if it found a "
        "violation, and its states (≥) are a lower bound; a counterexample the deepening did not prove is "
        "marked *not proved shortest*. A `holds` is the "
        f"search's, complete. {COVERS[protocol]}\n")


def main() -> None:
    """Measure, print, and optionally write the README tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=70.0, help="seconds of search per row (default 70)")
    ap.add_argument("--budget-shortest", type=float, default=30.0,
                    help="seconds of iterative deepening per OCC row (default 30)")
    ap.add_argument("--budget-shortest-nbcc", type=float, default=10.0,
                    help="seconds of iterative deepening per NBCC row (default 10: its paths are 50-150 "
                         "decisions long, beyond what the deepening reaches)")
    ap.add_argument("--only", choices=("occ", "nbcc"), default=None, help="one table only")
    ap.add_argument("--readme", action="store_true", help="rewrite the tables in README.md")
    args = ap.parse_args()
    plans = {"occ": occ_rows, "nbcc": nbcc_rows}
    started = time.perf_counter()
    tables: dict[str, str] = {}
    for protocol, rows_of in plans.items():
        if args.only not in (None, protocol):
            continue
        rows = []
        began = time.perf_counter()
        shortest = args.budget_shortest_nbcc if protocol == "nbcc" else args.budget_shortest
        for bounds in rows_of():
            r = row(bounds, args.budget, shortest)
            rows.append(r)
            print(f"{r['verdict']:<10} {r['states']:>8,} states depth {r['depth']:>4} {r['seconds']:7.1f} s "
                  f"{r['rate']:6.0f} states/s  {r['example']}  [{r['proof']}]\n    {command_of(bounds)}",
                  flush=True)
        spent = time.perf_counter() - began
        print(f"{protocol}: {len(rows)} rows, {spent:.0f} s; states/s over the rows that finished: "
              f"{rate_of(rows):.0f}")
        tables[protocol] = markdown(protocol, rows, args.budget, shortest, spent)
        print()
        print(tables[protocol])
    print(f"all rows: {time.perf_counter() - started:.0f} s")
    if args.readme:
        for protocol, table in tables.items():
            write_readme(table, *MARKERS[protocol])


if __name__ == "__main__":
    main()

"""Benchmark of the transactional (Elle-style) checker: how long ``hcc check-history --model
list-append|rw-register`` takes, and how the time grows with the history.

Histories come from the simulated multi-version store (model/checkers/txn_sim.py): 10
processes, 100 keys, transactions of 1-4 micro-ops (half writes), 2% aborts, 1% lost replies,
under four stores:

- ``serializable``: strict serializable (no anomaly; the graph is acyclic);
- ``snapshot-isolation``: write skew (G2-item cycles in many small components);
- ``read-committed``: G-single, G2-item, lost updates, non-repeatable reads;
- ``lagging-snapshots``: snapshot isolation whose snapshots are up to 200 commits old (a lagging
  replica): with the real-time order, most of the history is one strongly connected component.

Each history is checked against strict-serializable (the default claim: real-time edges
included).  Times: reading the JSON lines, the check (inference, components, cycle search), and
explaining (the text, the JSON and the HTML page with each cycle drawn), best of ``--rounds``.
Goal: 10,000 transactions over 100 keys in under 10 s, cycles explained, on the 2-core machine.

Run: python benchmarks/bench_txn_check.py [--sizes 1000,5000,10000,20000] [--rounds 1]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from model.checkers.txn_check import check_txns
from model.checkers.txn_history import read_txn_jsonl
from model.checkers.txn_sim import simulate
from reports.txn_cycles import render_txn_report

GOAL_SECONDS = 10.0
GOAL_SIZE = 10_000
STORES: dict[str, dict[str, Any]] = {
    "serializable": {"level": "serializable"},
    "snapshot-isolation": {"level": "snapshot-isolation"},
    "read-committed": {"level": "read-committed"},
    "lagging-snapshots": {"level": "snapshot-isolation", "lag": 200},
}


def measure(kind: str, store: str, n: int, rounds: int) -> dict[str, Any]:
    """Times (s) of reading, checking and explaining one simulated history, best of ``rounds``."""
    evs = simulate(n, kind=kind, keys=100, processes=10, seed=1, abort=0.02, lost_reply=0.01, **STORES[store])
    lines = [json.dumps(e) for e in evs]
    best: dict[str, Any] = {}
    for _ in range(rounds):
        t0 = time.perf_counter()
        h = read_txn_jsonl(lines, kind)
        t1 = time.perf_counter()
        v = check_txns(h)
        t2 = time.perf_counter()
        v.text(h.locate)
        json.dumps(v.to_json(h.locate), default=str)
        render_txn_report(v, "bench", h.locate)
        t3 = time.perf_counter()
        row = {"read": t1 - t0, "check": t2 - t1, "explain": t3 - t2, "total": t3 - t0,
               "largest": v.counts["largest_component"], "edges": v.counts["edges"],
               "anomalies": ", ".join(v.anomaly_types) or "-"}
        if not best or row["total"] < best["total"]:
            best = row
    return best


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit 1 when a 10,000-transaction history misses the goal."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--sizes", default="1000,5000,10000,20000")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--kinds", default="list-append,rw-register")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    missed = []
    print(f"{'kind':<12} {'store':<19} {'txns':>6} {'read s':>7} {'check s':>8} {'explain s':>9} "
          f"{'total s':>8} {'edges':>7} {'largest SCC':>11}  anomalies")
    for kind in args.kinds.split(","):
        for store in STORES:
            for n in sizes:
                r = measure(kind, store, n, args.rounds)
                print(f"{kind:<12} {store:<19} {n:>6} {r['read']:>7.2f} {r['check']:>8.2f} "
                      f"{r['explain']:>9.2f} {r['total']:>8.2f} {r['edges']:>7} {r['largest']:>11}  "
                      f"{r['anomalies']}", flush=True)
                if n == GOAL_SIZE and r["total"] > GOAL_SECONDS:
                    missed.append(f"{kind} {store}: {r['total']:.1f} s")
    if GOAL_SIZE in sizes:
        print(f"goal: {GOAL_SIZE} transactions over 100 keys in < {GOAL_SECONDS:g} s: "
              + ("met" if not missed else "MISSED: " + "; ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

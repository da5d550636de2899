"""The catalogue's OCC and NBCC entries on Hudi's own Spark writers: the README's "Hudi (real)" tables.

Not a test (``tests/test_real_hudi_spark_entries.py`` asserts two entries). Each OCC entry of the
catalogue that Hudi can run (:mod:`engines.hudi_spark.plans` refuses the others, and the row says why)
runs once on the pinned Hudi Spark bundle, each writer its own JVM, on SeaweedFS through the fault proxy
(``hcc contention ENTRY --world hudi``), and is then judged by the model (``hcc differential writers
ENTRY --run DIR``): each attempt's commit or abort by the model's conflict check, the final rows by the
model's reader and hudi-rs. A row says Hudi's verdict against the entry's ``expect``, the anomalies by
kind, commits and write conflicts, whether the model decided every attempt as Hudi did, and the cost:
wall time (JVM start included), the median commit time and the writers' peak resident memory.

Each NBCC entry (:mod:`engines.hudi_spark.nbcc_plans`: its deltacommits, a failed one a writer killed after
its first log and restarted) runs the same way and is judged by :mod:`analyses.nbcc_writers_differential`:
every deltacommit committed, the model's file slices against Hudi 1.2.0's and 1.2.1's own, the final rows;
its row also says which file groups each release's file-system view hides (storage listing; 1.2.1: PR #19785,
issue #19774).

Which commits overlap is the JVMs' timing, not the seed's: a row is one run.

Run: python benchmarks/bench_hudi_writers.py [--entries A,B] [--max-ops 3] [--out DIR] [--readme] [--rejudge]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_explore_lock import write_readme  # noqa: E402

from analyses.nbcc_writers_differential import judge_run  # noqa: E402
from engines.hudi_spark.check import check_again  # noqa: E402
from engines.hudi_spark.nbcc_plans import hudi_plans  # noqa: E402
from engines.hudi_spark.run import SETUPS, VERSION, run  # noqa: E402
from engines.hudi_spark.txns import isolation  # noqa: E402
from engines.rundir import RunWriter  # noqa: E402
from model.config import ConfigError  # noqa: E402
from model.run_format import HUDI_WRITERS  # noqa: E402
from reports.load import load_writers_run  # noqa: E402
from scenarios import catalogue  # noqa: E402

MARKERS = ("<!-- hudi-writers-table -->", "<!-- /hudi-writers-table -->")


def occ_entries() -> list[str]:
    """Every OCC entry of the catalogue that is not an explorer entry."""
    return [n for n in catalogue.names("occ") if not n.startswith("explore-")]


def nbcc_entries() -> list[str]:
    """Every NBCC entry of the catalogue (``nbcc-*``)."""
    return [n for n in catalogue.names("nbcc") if not n.startswith("explore-")]


def one(name: str, max_ops: int, out: Path) -> dict[str, Any]:
    """Run ``name`` on Hudi and judge it; the row's facts (or why Hudi cannot run it)."""
    entry = catalogue.load(name)
    try:
        protocol, plans = hudi_plans(entry, max_ops)
    except ConfigError as e:
        return {"entry": name, "expect": entry.expect, "protocol": entry.protocol, "refused": str(e)}
    run_dir = out / name
    shutil.rmtree(run_dir, ignore_errors=True)  # a rerun replaces the entry's run
    t0 = time.monotonic()
    run(run_dir, entry=plans, scenario_toml=entry.to_toml(), protocol=protocol)
    return judged(name, run_dir, round(time.monotonic() - t0), len(plans.batches), plans.untranslated)


def judged(name: str, run_dir: Path, wall_s: int, writers: int, untranslated: list[str]) -> dict[str, Any]:
    """The row of ``name``'s run in ``run_dir``: its checks (judged again by this code, so ``--rejudge``
    applies a changed check to an earlier run) and the model's judgement of it."""
    entry = catalogue.load(name)
    ran = load_writers_run(run_dir)
    metrics = ran.metrics
    checks = check_again(run_dir, SETUPS[entry.protocol].ordering)
    diff = judge_run(entry, run_dir)
    row = {"entry": name, "expect": entry.expect, "protocol": entry.protocol, "valid": checks["valid"],
           "kinds": sorted({a["kind"] for a in checks["anomalies"]}), "commits": checks["commits"],
           "conflicts": len(checks["conflicts"]), "attempts": len(diff["attempts"]),
           "differences": diff["differences"], "hudi_rs": diff["hudi_rs"],
           "wall_s": wall_s, "commit_s_median": metrics["commit_s_median"],
           "peak_rss_mb": max(metrics["peak_rss_mb"].values()), "writers": writers,
           "untranslated": untranslated}
    if entry.protocol == "nbcc":
        return row | {"killed": sum(1 for a in diff["attempts"] if a["outcome"] == "killed"),
                      "hidden": diff["hidden"], "notes": diff["notes"],
                      "hudi_rs_reads_as": diff.get("hudi_rs_reads_as")}
    # Elle judged again too (a changed records view applies to an earlier run), its view written beside it
    elle = isolation(run_dir, RunWriter(run_dir, entry.protocol, HUDI_WRITERS).write_text)
    return row | {"isolation": elle.get("anomalies")}


def _verdict(r: dict[str, Any]) -> str:
    """Hudi's verdict against the entry's ``expect``, with the anomalies' kinds."""
    got = "ok" if r["valid"] else "violation"
    same = "as expected" if (got == "ok") == (r["expect"] == "ok") else "**not as expected**"
    kinds = f" ({', '.join(r['kinds'])})" if r["kinds"] else ""
    return f"{got}{kinds}, {same}"


def _cost(r: dict[str, Any]) -> str:
    median = "no commit" if r["commit_s_median"] is None else f"commit median {r['commit_s_median']} s"
    return f"{r['writers']} writers, {r['wall_s']} s, {median}, peak {r['peak_rss_mb']} MB"


def nbcc_table(rows: dict[str, dict[str, Any]]) -> str:
    """The README's table of the NBCC entries."""
    lines = [f"| entry | expect | Hudi {VERSION} (real) | the model on Hudi's table | Hudi 1.2.1's reader "
             "(#19774, PR #19785) | cost |", "|---|---|---|---|---|---|"]
    for name in sorted(rows):
        r = rows[name]
        if "refused" in r:
            lines.append(f"| `{name}` | {r['expect']} | not run: {r['refused']} | | | |")
            continue
        hidden = r["hidden"]
        hid = {v: (f"hides {len(hidden[v])} file group(s)" if hidden.get(v) else "hides no file group")
               if v in hidden else "not read" for v in ("1.2.0", "1.2.1")}
        fixed = ": 1.2.1 reads the group 1.2.0 hides (PR #19785)" if hidden.get("1.2.0") and \
            not hidden.get("1.2.1", ["?"]) else ""
        ours = [d for d in r["differences"] if d["kind"] != "final-rows-hudi-rs"]
        kinds = sorted({f"{d['kind']} ({d['fidelity'].split(' (')[0]})" for d in ours})
        read = not any("final rows are not compared" in n for n in r["notes"])
        model = ("slices every file group as 1.2.0's and 1.2.1's views do; every deltacommit it did not "
                 "kill committed" + ("; its reader reads Hudi's rows" if read else "") if not ours else
                 f"**{len(ours)} differences**: " + "; ".join(kinds))
        rs_diff = [d for d in r["differences"] if d["kind"] == "final-rows-hudi-rs"]
        if r.get("hudi_rs_reads_as"):
            rs = f"; hudi-rs 0.5.0 reads as {r['hudi_rs_reads_as']}'s slicing does (the hidden group's rows)"
        elif rs_diff:
            rs = (f"; **hudi-rs 0.5.0 differs from Hudi's reader**: {len(rs_diff[0]['hudi_only'])} of Hudi's "
                  f"rows missing, {len(rs_diff[0]['hudi_rs_only'])} more")
        else:
            rs = "" if ours or not read or "not" in r["hudi_rs"] else ", and so does hudi-rs"
        # a note's first line: a table row is one line (a failed reader's stack stays in differential.json)
        notes = "".join(f"; {n.splitlines()[0]}" for n in r["notes"] if not n.startswith("hudi-rs"))
        lines.append(f"| `{name}` | {r['expect']} | {_verdict(r)}: {r['commits']} commits, "
                     f"{r['killed']} deltacommits killed mid-way; its file-system view (storage listing) "
                     f"{hid['1.2.0']} | {model}{rs}{notes} | its view {hid['1.2.1']}{fixed} | {_cost(r)} |")
    return "\n".join(lines)


def table(rows: dict[str, dict[str, Any]]) -> str:
    """The README's table of the OCC entries."""
    lines = [f"| entry | expect | Hudi {VERSION} (real) | the model on Hudi's schedule | cost |",
             "|---|---|---|---|---|"]
    for name in sorted(rows):
        r = rows[name]
        if "refused" in r:
            lines.append(f"| `{name}` | {r['expect']} | not run: {r['refused']} | | |")
            continue
        elle = r.get("isolation")
        elle_says = "" if elle is None else f"; Elle: {', '.join(elle) or 'no anomaly'}"
        model = (f"decides all {r['attempts']} attempts as Hudi did; its reader reads Hudi's rows"
                 if not r["differences"] else
                 f"**{len(r['differences'])} differences**: "
                 + "; ".join(d["kind"] for d in r["differences"]))
        rs = "" if r["differences"] or "not" in r["hudi_rs"] else ", and so does hudi-rs"
        lines.append(f"| `{name}` | {r['expect']} | {_verdict(r)}: {r['commits']} commits, "
                     f"{r['conflicts']} write conflicts{elle_says} | {model}{rs} | {_cost(r)} |")
    return "\n".join(lines)


def tables(rows: dict[str, dict[str, Any]]) -> str:
    """Both README tables: the OCC entries', then the NBCC entries'."""
    occ = {k: r for k, r in rows.items() if r.get("protocol", "occ") == "occ"}
    nbcc = {k: r for k, r in rows.items() if r.get("protocol") == "nbcc"}
    return table(occ) + ("\n\nNBCC entries:\n\n" + nbcc_table(nbcc) if nbcc else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", default="",
                    help="comma-separated entries (default: every OCC and NBCC entry)")
    ap.add_argument("--max-ops", type=int, default=3, help="each writer's first N operations (default 3)")
    ap.add_argument("--out", default="out/hudi-writers", help="run directories and hudi-writers.json")
    ap.add_argument("--readme", action="store_true", help="rewrite the README's table")
    ap.add_argument("--rejudge", action="store_true",
                    help="judge the runs already in OUT again (the checks and the model), running nothing")
    args = ap.parse_args()
    out = Path(args.out).resolve()  # absolute: the launched server runs in its own folder
    out.mkdir(parents=True, exist_ok=True)
    results = out / "hudi-writers.json"
    rows = {r["entry"]: r for r in json.loads(results.read_text())} if results.exists() else {}
    for name in [n for n in args.entries.split(",") if n] or occ_entries() + nbcc_entries():
        if args.rejudge:
            if "refused" not in rows.get(name, {"refused": ""}):
                r = rows[name]
                rows[name] = judged(name, out / name, r["wall_s"], r["writers"], r["untranslated"])
                results.write_text(json.dumps(list(rows.values()), indent=1))
            continue
        rows[name] = one(name, args.max_ops, out)
        print(f"{name}: {json.dumps(rows[name])[:300]}", flush=True)
        results.write_text(json.dumps(list(rows.values()), indent=1))
    print(tables(rows))
    if args.readme:
        write_readme(tables(rows) + "\n", *MARKERS)


if __name__ == "__main__":
    main()

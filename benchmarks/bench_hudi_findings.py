"""The lock catalogue replayed on Apache Hudi's own provider: the README's "Hudi 1.2.1 (real)" column.

Not a test (it asserts nothing; ``tests/test_real_hudi_lock.py`` asserts five entries). Each lock entry of
the catalogue runs twice at the same time scale and seed: in simulation with the model's provider, and
in the ``hudi`` world with Hudi's ``StorageBasedLockProvider`` from the pinned jars (``hcc run ENTRY
--world hudi --time-scale 30``, a SeaweedFS launched per entry). The cell says:

* ``reproduced``: Hudi's run gives the model's verdict, and every kind of violation and finding the
  model's run reports;
* ``not reproduced``: what each side gave (a claim to restate or withdraw);
* ``not expressible``: what the hudi world refuses, and why (the model's variants, clock drift, the
  hypothetical writer, the model's fault hooks).

A model run at scale 30 is the entry's scenario scaled (``scenarios/time_scale.py``), so both sides run
the same times; the catalogue's own verdict (unscaled) is the README's ``expect`` column. ``OVERRIDES``
lists the only settings changed per entry, with the reason. Real time decides what the model's seed
pins (who polls first, how many renewals fall in a window): a row is one run; ``--repeat N`` runs Hudi's
side N times and counts.

Run: python benchmarks/bench_hudi_findings.py [--entries A,B] [--scale 30] [--repeat 1]
     [--readme | --readme-only]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_explore_lock import write_readme  # noqa: E402

from backends.hudi.artifacts import default_version  # noqa: E402
from backends.hudi.world import check_scenario  # noqa: E402
from engines.hudi_world import HudiRequest, run_entry  # noqa: E402
from model.checkers.lock_run import check_lock_history  # noqa: E402
from model.config import ConfigError, Scenario  # noqa: E402
from model.runtime.sim import run_scenario  # noqa: E402
from scenarios import catalogue  # noqa: E402
from scenarios.time_scale import scale  # noqa: E402

MARKERS = ("<!-- lock-findings-table -->", "<!-- /lock-findings-table -->")
COLUMN = "Hudi {version} (real)"

# The settings changed for the hudi world, per entry, and why (every other setting is the entry's).
OVERRIDES: dict[str, tuple[str, ...]] = {
    # a JVM's clock can only be offset: 40 ppm over the scaled minute is 2.4 ms
    "rfc91-safe": ("clocks.w1.drift_ppm=0", "clocks.w2.drift_ppm=0"),
    # the 500 ms drift allowance does not scale: at 290 s / 30 the reentered transaction ends before the
    # kept lease + 500 ms, so it runs 320 s / 30 (past it) and the 503 moves to the expire after it
    "rfc91-failed-release-reuse": ("workload.work_ms.lo=320000", "faults.errors.0.start_ms=312000"),
}


# What a row's verdict and kinds do not say, per entry.
NOTES: dict[str, str] = {
    "rfc91-release-stall": "the stall itself is not compared: at scale 30 Hudi's fixed 15 s heartbeat stop "
                           "outlasts the 10 s lease; at scale 1 the stalled renewal ends at the SDK's 30 s "
                           "socket read timeout, so the others wait about 35 s, not 65 s",
    "rfc91-graceful-shutdown": "the provider's hook expires the lock, but a JVM halts only after every hook "
                               "has ended, and the writer's thread runs until then (Java runs hooks beside "
                               "the application's threads): here the expire came about 15 ms after "
                               "SIGTERM and the JVM ended 150-400 ms after it, and a contender polling in "
                               "between overlapped the still-writing holder. This entry stops the node as "
                               "soon as its hooks end; with the JVM's halt 300 ms later the model overlaps "
                               "too (`rfc91-graceful-shutdown-halt-window`)",
}


def lock_entries() -> list[str]:
    """The catalogue's lock entries (``rfc91-*``), in name order."""
    return [n for n in catalogue.names("lock") if n.startswith("rfc91-")]


def kinds(items: Sequence[Any]) -> list[str]:
    """The sorted distinct kinds of violations or findings (objects or verdict.json dicts)."""
    return sorted({i["kind"] if isinstance(i, dict) else i.kind for i in items})


def model_side(scenario: Scenario, seed: int) -> dict[str, Any]:
    """The model's verdict and kinds on the scaled scenario, in simulation."""
    verdict = check_lock_history(run_scenario(scenario, seed), scenario.checkers)
    return {"verdict": verdict.verdict, "violations": kinds(verdict.violations),
            "findings": kinds(verdict.findings)}


def replay(name: str, factor: int, out: Path, repeat: int) -> dict[str, Any]:
    """One entry on both sides: the row's data."""
    overrides = OVERRIDES.get(name, ())
    entry = catalogue.load(name, overrides)
    assert isinstance(entry.config, Scenario)
    row: dict[str, Any] = {"entry": name, "expect": entry.expect, "overrides": list(overrides)}
    scaled = scale(entry.config, factor)
    try:
        check_scenario(scaled)
    except ConfigError as e:
        row["refused"] = (f"the model's variant `{e.value}`" if e.field == "lock.variant"
                          else f"`{e.field}`: {e.reason}")
        return row
    seed = scaled.seed
    row["model"] = model_side(scaled, seed)
    row["hudi"] = []
    for i in range(repeat):
        t0 = time.monotonic()
        run_dir = out / f"{name}-{i}"
        shutil.rmtree(run_dir, ignore_errors=True)  # this script's own folder: a rerun replaces it
        summary = run_entry(entry, seed, run_dir, HudiRequest(time_scale=factor, quiet=True))
        row["hudi"].append({"verdict": summary["verdict"], "violations": kinds(summary["violations"]),
                            "findings": kinds(summary["findings"]), "out": summary.get("out"),
                            "seconds": round(time.monotonic() - t0, 1)})
    return row


def reproduced(model: dict[str, Any], hudi: dict[str, Any]) -> bool:
    """Hudi's run gives the model's verdict and every kind the model's run reports."""
    return (hudi["verdict"] == model["verdict"] and set(model["violations"]) <= set(hudi["violations"])
            and set(model["findings"]) <= set(hudi["findings"]))


def _said(side: dict[str, Any]) -> str:
    found = side["violations"] + [f"{k} (finding)" for k in side["findings"]]
    return f"{side['verdict']}" + (f": {', '.join(found)}" if found else "")


def cell(row: dict[str, Any]) -> str:
    """The README cell of one entry."""
    if "refused" in row:
        return f"not expressible: {row['refused']}"
    runs = row["hudi"]
    good = sum(reproduced(row["model"], h) for h in runs)
    count = f" ({good} of {len(runs)} runs give the model's verdict)" if len(runs) > 1 else ""
    if good == len(runs):
        text = f"reproduced{count}: {_said(runs[0])}"
        extra = [k for k in runs[0]["violations"] if k not in row["model"]["violations"]] + [
            f"{k} (finding)" for k in runs[0]["findings"] if k not in row["model"]["findings"]]
        if extra:
            text += f" (the scaled model's run gives no {', '.join(extra)})"
    else:
        bad = next(h for h in runs if not reproduced(row["model"], h))
        text = f"**not reproduced**{count}: Hudi {_said(bad)}; model {_said(row['model'])}"
    if row["overrides"]:
        text += f" (`--set {' '.join(row['overrides'])}`)"
    if row["entry"] in NOTES:
        text += f"; {NOTES[row['entry']]}"
    return text


def rewrite_table(text: str, rows: dict[str, dict[str, Any]], version: str) -> str:
    """The lock findings table with its last column (``COLUMN``) set from ``rows`` (by the entries a row
    names in its first cell; rows naming several entries get one cell each, joined)."""
    head = COLUMN.format(version=version)
    lines = text.strip("\n").splitlines()
    out: list[str] = []
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        has_column = lines[0].rstrip().endswith(f"| {head} |") or lines[0].rstrip().endswith(f"{head} |")
        if has_column:
            cells = cells[:-1]
        if i == 0:
            cells.append(head)
        elif i == 1:
            cells.append("---")
        else:
            names = [n for n in cells[0].replace("`", "").replace(",", " ").split() if n in rows]
            known = [rows[n] for n in names]
            if not known:
                cells.append("")
            elif len(known) == 1:
                cells.append(cell(known[0]))
            else:
                cells.append("; ".join(f"`{r['entry']}` {cell(r)}" for r in known))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", default="", help="comma-separated entries (default: every rfc91-* entry)")
    ap.add_argument("--scale", type=int, default=30, help="the time scale (default 30)")
    ap.add_argument("--repeat", type=int, default=1, help="Hudi runs per entry (default 1)")
    ap.add_argument("--out", default="out/hudi-findings", help="run directories and hudi-findings.json")
    ap.add_argument("--readme", action="store_true", help="rewrite the README's column")
    ap.add_argument("--readme-only", action="store_true",
                    help="rewrite the README's column from OUT/hudi-findings.json, running nothing")
    args = ap.parse_args()
    names = [] if args.readme_only else [n for n in args.entries.split(",") if n] or lock_entries()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "hudi-findings.json"
    rows: dict[str, dict[str, Any]] = {}
    if results_path.exists():  # a partial rerun keeps the other entries' rows
        rows = {r["entry"]: r for r in json.loads(results_path.read_text())}
    t0 = time.monotonic()
    for name in names:
        rows[name] = replay(name, args.scale, out, args.repeat)
        print(f"{name}: {cell(rows[name])}", flush=True)
        results_path.write_text(json.dumps(list(rows.values()), indent=1))
    print(f"{len(names)} entries in {time.monotonic() - t0:.0f} s; rows in {results_path}")
    if args.readme or args.readme_only:
        readme = Path(__file__).resolve().parent.parent / "README.md"
        text = readme.read_text()
        begin, end = MARKERS
        table = text.split(begin, 1)[1].split(end, 1)[0]
        write_readme(rewrite_table(table, rows, default_version()) + "\n", begin, end)


if __name__ == "__main__":
    main()

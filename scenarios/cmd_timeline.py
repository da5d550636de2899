"""``hcc timeline run NAME_OR_PATH [--seed N] [--out DIR] [--json]``: timeline scenarios in simulation.

A timeline scenario file is a lock-model scenario file (world, clocks, faults, lock,
storage, writers) with a ``[timeline]`` table (``model/timeline/config.py``).  Names are
looked up in ``scenarios/timeline/``.  The run directory holds history.jsonl, verdict.json,
metrics.json and scenario.toml (every default filled in), as for ``hcc run``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from model.config import ConfigError, Scenario
from model.history import Event
from model.timeline.config import TimelineConfig, TimelineScenario
from model.timeline.run import check_timeline_run, run_timeline, timeline_metrics
from scenarios import loader
from scenarios.rundir import HISTORY, METRICS, SCENARIO, VERDICT, write_atomic, write_json

TIMELINE_CATALOGUE = Path(__file__).parent / "timeline"


def timeline_names() -> list[str]:
    """Names of the scenarios shipped in ``scenarios/timeline``."""
    return loader.catalogue_names(TIMELINE_CATALOGUE)


def resolve(name_or_path: str) -> Path:
    """A timeline catalogue name or a path to a TOML file."""
    return loader.resolve(name_or_path, TIMELINE_CATALOGUE)


def load(name_or_path: str, overrides: list[str] | tuple[str, ...] = ()) -> TimelineScenario:
    """Load, override (``--set``), build and validate a timeline scenario."""
    path = resolve(name_or_path)
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ConfigError("scenario", str(path), f"is not valid TOML: {e}") from e
    for assignment in overrides:
        loader.apply_override(raw, assignment)
    tl_raw = raw.pop("timeline", {})
    if not isinstance(tl_raw, dict):
        raise ConfigError("timeline", tl_raw, "must be a table")
    if "checkers" in raw:
        raise ConfigError(
            "checkers", raw["checkers"], "timeline scenarios choose checkers in timeline.checkers"
        )
    scenario: Scenario = loader.build(Scenario, raw)
    timeline: TimelineConfig = loader.build(TimelineConfig, tl_raw, "timeline")
    ts = TimelineScenario(scenario, timeline)
    ts.validate()
    return ts


def to_toml(ts: TimelineScenario) -> str:
    """The timeline scenario as TOML with every default filled in."""
    data: dict[str, Any] = loader.to_dict(ts.scenario)
    data.pop("checkers", None)
    data["timeline"] = loader.to_dict(ts.timeline)
    return tomli_w.dumps(data)


def execute(ts: TimelineScenario, seed: int | None, out: Path) -> dict[str, Any]:
    """Run, stream the history to ``out``, check, write verdict and metrics; returns the summary."""
    seed = ts.scenario.seed if seed is None else seed
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / SCENARIO, to_toml(ts))
    with open(out / HISTORY, "w") as history:

        def sink(event: Event) -> None:
            history.write(event.to_json() + "\n")
            history.flush()

        events = run_timeline(ts, seed, sink)
    verdict = check_timeline_run(ts, events)
    metrics = timeline_metrics(events)
    summary = {
        "scenario": ts.name,
        "seed": seed,
        "expect": ts.scenario.expect,
        "matches_expectation": verdict.verdict == ts.scenario.expect,
        "out": str(out),
        **verdict.to_dict(),
    }
    write_json(out / METRICS, metrics)
    write_json(out / VERDICT, summary)
    return {**summary, "metrics": metrics}


def run(args: argparse.Namespace) -> int:
    """hcc timeline run."""
    ts = load(args.scenario, args.set or [])
    if ts.scenario.world == "spark":  # Spark tasks are the committing writers, against a launched server
        from scenarios.cmd_sweep import print_spark_commits, run_spark_commits

        spark_summary = run_spark_commits("occ", args.scenario, ts.scenario.backend, ts.scenario.duration_ms,
                                          seed=args.seed, out=Path(args.out) if args.out else None,
                                          overrides=args.set or [])
        if args.json:
            print(json.dumps(spark_summary, sort_keys=True))
        else:
            print_spark_commits(spark_summary)
        return 0 if spark_summary["matches_expectation"] else 1
    seed = ts.scenario.seed if args.seed is None else args.seed
    out = Path(args.out) if args.out else Path("out") / "timeline" / f"{ts.name}-seed{seed}"
    started = time.monotonic()
    summary = execute(ts, seed, out)
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    else:
        print(
            f"timeline scenario {ts.name}  seed {seed}  verdict {summary['verdict']} "
            f"(expected {ts.scenario.expect})  {time.monotonic() - started:.2f}s  -> {out}"
        )
        ops = summary["metrics"]["ops"]
        print(
            f"  ops: {ops['invoked']} started, {ops['committed']} committed, {ops['aborted']} aborted, "
            f"{ops['writer_failures']} writer failures; aborts {summary['metrics']['abort_reasons']}"
        )
        for v in summary["violations"][:10]:
            print(f"  violation [{v['kind']}] {v['message']}  events {v['events']}")
        if len(summary["violations"]) > 10:
            print(f"  ... and {len(summary['violations']) - 10} more")
        for f in summary["findings"][:5]:
            print(f"  finding   [{f['kind']}] {f['message']}")
    if not summary["matches_expectation"]:
        print(
            f"seed {seed}: timeline scenario {ts.name} expected {ts.scenario.expect}, "
            f"got {summary['verdict']}",
            file=sys.stderr,
        )
        return 1
    return 0


def register(subparsers: Any) -> None:
    """Add ``hcc timeline run``."""
    parser = subparsers.add_parser("timeline", help="timeline, time generation and OCC commits in simulation")
    sub = parser.add_subparsers(dest="timeline_command", required=True)
    r = sub.add_parser("run", help="run a timeline scenario")
    r.add_argument(
        "scenario", help=f"name in scenarios/timeline ({', '.join(timeline_names())}) or a TOML path"
    )
    r.add_argument("--seed", type=int, help="override the scenario's seed")
    r.add_argument("--out", help="run directory (default out/timeline/NAME-seedN)")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a field (dotted key)")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.set_defaults(func=run)

"""``hcc replay RUN_DIR --backend NAME``: re-run a simulated run step by step against a real backend.

RUN_DIR is a simulated lock run's directory (``hcc run NAME --out RUN_DIR``): its
``scenario.toml`` and the seed in ``verdict.json`` re-create the run; every
storage request that reaches the store goes to the model's store and to the
backend, the protocol gets the backend's answer, and each step records whether
the backend answered as the model did (see ``backends/replay.py``).  Time is
virtual, so long pauses cost nothing.  Output goes to
``RUN_DIR/replay-<backend>/`` (or ``--out``), a run directory of its own (world
``replay``): ``history.jsonl`` (streamed), ``scenario.toml``, ``steps.jsonl``,
``verdict.json`` (with the steps that agreed and the original verdict),
``metrics.json`` and the report.

Exit status: 0 every step agreed and the verdict is the original's, 1
otherwise (or the server could not start), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from backends import registry
from backends.launchers.process import LaunchError, Unavailable
from backends.replay import replay
from backends.secrets import redact, redact_url
from cli.options import add_backend, add_json, add_out
from engines.rundir import RunWriter, claim_out, fresh_dir, slug, with_audit
from model.config import ConfigError, Scenario
from model.protocols import plugin
from model.protocols.base import ModelRun
from model.run_format import STEPS, RunHead, verdict_file
from model.runtime.history import Event
from reports.load import RunDirError, load_run
from scenarios import loader


def register(subparsers: Any) -> None:
    """Add the ``replay`` subcommand."""
    p = subparsers.add_parser(
        "replay", help="re-run a simulated run step by step against a real storage backend",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="directory of a simulated run (hcc run ... --out)")
    add_backend(p, registry.NAMES, "hcc-replay/", "table prefix for the replay's keys")
    add_out(p, "RUN_DIR/replay-<backend>, or replay-<backend>-2, ... when that exists", "replay")
    p.add_argument("--show", type=int, default=10, help="disagreeing steps to print (default 10)")
    add_json(p)
    p.set_defaults(func=run)


def simulated_run(run_dir: Path) -> tuple[Any, int, list[Event], str | None]:
    """The scenario, seed, history and verdict of a simulated lock run's directory, read by the one loader
    (``reports/load.py``); ConfigError naming RUN_DIR when it is incomplete or another protocol's."""
    try:
        run = load_run(run_dir)
    except RunDirError as e:
        raise ConfigError("RUN_DIR", str(run_dir),
                          f"{e.reason} (is it a `hcc run --out` directory?)") from None
    if plugin(run.protocol).config_type is not Scenario:  # replay runs a lock scenario's model
        raise ConfigError("RUN_DIR", str(run_dir), f"holds a {run.protocol} run; replay replays lock runs")
    raw = {k: v for k, v in run.scenario.items() if k != "protocol"}
    return loader.from_raw(raw), run.seed, list(run.events), run.outcome


def run(args: argparse.Namespace) -> int:
    """Replay; returns the exit code."""
    try:
        registry.validate(args.backend)
    except ValueError as e:
        raise ConfigError("--backend", args.backend, str(e)) from e
    run_dir = Path(args.run_dir)
    scenario, seed, original, original_verdict = simulated_run(run_dir)
    name = redact_url(args.backend)
    if args.out:
        out = claim_out(Path(args.out), args.force)
        out.mkdir(parents=True, exist_ok=True)
    else:
        out = fresh_dir(run_dir / f"replay-{slug(args.backend)}")
    head: RunHead = {"scenario": scenario.name, "protocol": "lock", "world": "replay", "seed": seed,
                     "expect": scenario.expect, "models": plugin("lock").models(scenario), "backend": name}
    writer = RunWriter(out, "lock")
    writer.scenario(loader.to_toml(scenario))
    try:
        with writer.history(head) as sink, registry.open_endpoint(args.backend) as ep, \
                ep.backend(args.prefix, client=args.client, timeout_s=10) as backend:
            backend.ensure_container()
            report = replay(scenario, seed, backend, backend_name=name, original=original,
                            original_verdict=original_verdict, sink=sink)
    except (Unavailable, LaunchError) as e:
        print(f"hcc replay: {name} did not start: {redact(str(e))}", file=sys.stderr)
        return 1
    writer.write_text(STEPS, "".join(json.dumps(s.to_dict(), sort_keys=True) + "\n" for s in report.steps))
    summary = verdict_file(head, with_audit(report.verdict),
                           matches=report.verdict.verdict == scenario.expect, out=str(out))
    first = next((s for s in report.steps if not s.agree), None)
    summary["run_dir"] = str(run_dir)
    summary["steps"] = len(report.steps)
    summary["agreed"] = report.agreed
    summary["first_disagreement"] = first.to_dict() if first else None
    summary["original_verdict"] = report.original_verdict
    summary["same_verdict"] = report.same_verdict
    summary["version_notes"] = len(report.version_notes)
    summary["schedule_divergence"] = report.schedule_divergence
    writer.finish(summary, plugin("lock").metrics(scenario, ModelRun(report.events)))
    ok = report.all_agree and report.same_verdict
    if args.json:
        print(json.dumps(summary, sort_keys=True))
        return 0 if ok else 1
    print(f"replay of {scenario.name} seed {seed} on {name}: {report.agreed}/{len(report.steps)} "
          f"steps answered as the model did (virtual time: pauses cost nothing)")
    for s in [s for s in report.steps if not s.agree][:args.show]:
        print(f"  step {s.step} t={s.time} ms {s.node} {s.op} {s.key}: model {s.model}, backend {s.real}"
              f"  {s.note}")
    if report.version_notes:
        print(f"  {len(report.version_notes)} version-tag structure notes, first: {report.version_notes[0]}")
    at = report.schedule_divergence
    div = "identical" if at is None else f"diverges at event {at}"
    print(f"  schedule vs the simulated run: {div}")
    print(f"  verdict {report.verdict.verdict} (simulated run: {report.original_verdict})"
          f"{'' if report.same_verdict else '  DIFFERENT'}  -> {out}")
    for v in report.verdict.violations[:5]:
        print(f"  violation [{v.kind}] {v.message}")
    return 0 if ok else 1

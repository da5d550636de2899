"""``hcc realworld SCENARIO --backend NAME``: run a catalogue scenario on real threads against real storage.

The lock workload's generators run unchanged on threads with real clocks
(each node's ``clocks.<node>`` offset/drift added to ``time.time``), pauses,
crashes and thread deaths from the fault plan, and the plan's error rules and
cutoffs injected by the fault proxy (each node has its own proxy port).  The
history has the simulated format; its store-side events are the clients' view
of their successful writes (see ``backends/realworld.py``).

The catalogue's lock entries keep Hudi's timings (a 300 s lease) and run 7 to 30 minutes.
``--time-scale N`` divides every time of the scenario by N, as ``hcc run --world hudi`` does
(``scenarios/time_scale.py``: 30 gives Hudi's smallest lease, 10 s renewed every 1 s, within Hudi's
limits, and rfc91-safe's 30 minutes become 60 s); ``--set`` values are in the entry's own units and
are scaled with it (``--time-scale 30 --set duration_ms=600000`` runs 20 s).  Shorter still, outside
Hudi's limits, with ``--set``, e.g. ``--set lock.validity_secs=4 --set lock.renew_interval_secs=1
--set lock.enforce_hudi_limits=false --set duration_ms=15000 --set storage.timeout_ms=400``.

A server that dies mid-run stops the run with a clear error; the history
written so far stays in OUT/history.jsonl and is checked.

A server that never started (or a URL that does not answer) ends the run
folder with ``verdict.json`` saying ``not-started`` and why, and exit 2.

While it runs, stderr says what it does (the server's start, the run with a bar of its
duration in a terminal, reading the table, checking), each part with its seconds; the JSON and
``verdict.json`` have them as ``timings``.

Exit status: 0 the verdict is the scenario's expected one, 1 it is not (or
the server died mid-run), 2 bad input or a backend that did not start.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any

from backends import registry
from backends.launchers.process import LaunchError, Unavailable
from backends.realworld import ServerDied, Unreachable, map_scenario_keys, read_prefix, run_realworld
from backends.secrets import redact, redact_url
from cli.options import add_backend, add_json, add_out, add_quiet, add_set
from engines.progress import Progress, Steps
from engines.rundir import RunWriter, prepare_out
from model.config import ConfigError, Dist
from model.protocols import plugin
from model.protocols.base import ModelRun
from model.run_format import HISTORY, RunHead, verdict_file
from scenarios import loader
from scenarios.time_scale import scale


def register(subparsers: Any) -> None:
    """Add the ``realworld`` subcommand."""
    p = subparsers.add_parser(
        "realworld", help="run a scenario on real threads and clocks against a real storage backend",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scenario", help="catalogue name or path to a TOML file")
    add_backend(p, registry.NAMES, "hcc-realworld/", "table prefix, cleared before the run")
    add_set(p)
    p.add_argument("--seed", type=int, help="override the scenario's seed")
    p.add_argument("--time-scale", type=int, default=1, metavar="N",
                   help="divide the scenario's times by N (30: a 10 s lease renewed every 1 s; default 1)")
    p.add_argument("--latency", metavar="DIST",
                   help="latency added by the proxy each way: fixed:MS, uniform:LO:HI or exp:MEAN:CAP")
    add_out(p, "a new folder out/runs/SCENARIO-BACKEND/seedN-TIME")
    add_json(p)
    add_quiet(p)
    p.set_defaults(func=run)


def parse_dist(text: str) -> Dist:
    """``fixed:20``, ``uniform:5:40`` or ``exp:20:200`` as a Dist; ConfigError naming --latency."""
    parts = text.split(":")
    try:
        nums = [int(x) for x in parts[1:]]
    except ValueError:
        raise ConfigError("--latency", text, "numbers must be integers (ms)") from None
    if parts[0] not in ("fixed", "uniform", "exp") or len(nums) != (1 if parts[0] == "fixed" else 2):
        raise ConfigError("--latency", text, "must be fixed:MS, uniform:LO:HI or exp:MEAN:CAP")
    d = Dist(parts[0], nums[0], nums[1] if len(nums) > 1 else 0)
    d.validate("--latency")
    return d


def run(args: argparse.Namespace) -> int:
    """Run; returns the exit code."""
    try:
        registry.validate(args.backend)
    except ValueError as e:
        raise ConfigError("--backend", args.backend, str(e)) from e
    scenario = scale(loader.load(args.scenario, args.set or []), args.time_scale)
    seed = scenario.seed if args.seed is None else args.seed
    latency = parse_dist(args.latency) if args.latency else None
    backend = redact_url(args.backend)  # what outputs may show of the backend
    out = prepare_out(args.out, force=args.force, name=f"{scenario.name}-{backend}", seed=seed)
    writer = RunWriter(out, "lock")
    writer.scenario(loader.to_toml(map_scenario_keys(scenario, args.prefix)))
    lock = plugin("lock")
    error: str | None = None
    objects: dict[str, bytes] = {}
    scaled = f", times / {args.time_scale}" if args.time_scale > 1 else ""
    head: RunHead = {"scenario": scenario.name, "protocol": "lock", "world": "real", "seed": seed,
                     "expect": scenario.expect, "models": lock.models(scenario) + scaled,
                     "backend": backend}
    steps = Steps(f"hcc realworld {scenario.name} on {backend}", quiet=args.quiet)
    bar: list[Progress | None] = []

    def on_tick(now_ms: int, duration_ms: int) -> None:
        total = max(1, round(duration_ms / 1000))  # seconds of real time the run lasts
        if not bar:
            bar.append(steps.progress("run", total, unit="s"))
        if bar[0] is not None:
            bar[0].update(min(total, now_ms // 1000))

    with writer.history(head) as sink:
        try:
            with contextlib.ExitStack() as stack:
                with steps.part(f"start {backend}"):
                    ep = stack.enter_context(registry.open_endpoint(args.backend))
                with steps.part("run"):
                    result = run_realworld(scenario, ep, prefix=args.prefix, seed=seed, sink=sink,
                                           log_dir=out, latency=latency, client=args.client, on_tick=on_tick)
                events, actions = result.events, result.proxy_actions
                with steps.part("read the table"):
                    objects = read_prefix(ep, args.prefix)  # the table the run left, audit trail included
        except (Unavailable, LaunchError, Unreachable) as e:
            reason = redact(str(e))
            print(f"hcc realworld: backend {backend} did not start: {reason}; nothing ran ({out})",
                  file=sys.stderr)
            not_started = verdict_file(head, {"verdict": "not-started", "violations": [], "findings": []},
                                       matches=False, out=str(out))
            not_started["error"] = reason
            not_started["events"] = 0
            writer.finish(not_started, lock.metrics(scenario, ModelRun([])), report=False)
            return 2
        except ServerDied as e:
            error, events, actions = redact(str(e)), e.events, {}
            print(f"hcc realworld: {error}; history kept in {out / HISTORY}", file=sys.stderr)
    with steps.part("check"):
        ran = ModelRun(events)
        verdict, metrics = lock.check(scenario, ran), lock.metrics(scenario, ran)
        base = map_scenario_keys(scenario, args.prefix).lock.base_path
        found, audit = writer.keep_lock_table(objects, base, verdict)
    summary = verdict_file(head, found, matches=error is None and verdict.verdict == scenario.expect,
                           out=str(out))
    summary["error"] = error
    summary["proxy"] = actions
    summary["audit"] = audit
    summary["timings"] = dict(steps.seconds)
    writer.finish(summary, metrics)
    if args.json:
        print(json.dumps({**summary, "metrics": metrics}, sort_keys=True))
    else:
        print(f"scenario {scenario.name} on {backend} (real world{scaled})  seed {seed}  "
              f"verdict {verdict.verdict} (expected {scenario.expect})  events {len(events)}  -> {out}")
        if actions:
            print(f"  proxy: {', '.join(f'{k} {v}' for k, v in sorted(actions.items()))}")
        for v in verdict.violations[:10]:
            print(f"  violation [{v.kind}] {v.message}  events {list(v.events)}")
        for f in verdict.findings[:5]:
            print(f"  finding   [{f.kind}] {f.message}")
    return 0 if summary["matches_expectation"] else 1

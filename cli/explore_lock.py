"""``hcc explore-lock``: every schedule and fault placement of the RFC-91 lock within bounds, exhaustively.

``hcc explore-lock --variant V --writers N --faults K [--fault-kinds K1,K2] [--skew-ms S] [--json]``
plus the bounds (``--holds``, ``--validity-s``, ``--renew-s``, ``--steps``, ``--work-ms`` ...) and the
reductions (``--no-hashing``, ``--no-symmetry``, ``--no-por``).

It runs the lock provider and the register workload themselves (``model/storage_lock.py``,
``model/register_writer.py``) through the runtime kernel, in a world where a scheduler takes every
decision (``model/explore_lock``), and judges each history with the simulation's checkers plus
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
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

from cli.options import add_json, add_quiet
from engines.progress import Steps
from engines.rundir import write_atomic
from model.config import ConfigError
from model.explore_lock import Bounds, ExploreResult, Found, Reductions, explore
from model.explore_lock.bounds import DEFAULT_KINDS, FAULT_KINDS
from model.explore_lock.counterexample import Replayed, replay, replays_exactly, scenario_of, step_table
from scenarios import loader

# option, Bounds field, type, help
_OPTIONS: tuple[tuple[str, str, type, str], ...] = (
    ("--variant", "variant", str, "lock variant (default hudi)"),
    ("--writers", "writers", int, "identical writers N (default 2)"),
    ("--faults", "faults", int, "at most K faults per run (default 0)"),
    ("--skew-ms", "skew_ms", int, "each node's clock runs 0 or this many ms ahead (default 0)"),
    ("--holds", "holds", int, "acquisition attempts per writer (default 1)"),
    ("--steps", "steps_per_hold", int, "read-modify-write steps per hold (default 3)"),
    ("--validity-s", "validity_secs", int, "lock validity in seconds (default 2)"),
    ("--renew-s", "renew_interval_secs", int, "heartbeat interval in seconds (default 1)"),
    ("--poll-ms", "poll_ms", int, "tryLock poll interval (default 1000)"),
    ("--drift-ms", "drift_allowance_ms", int, "drift allowance (default 500)"),
    ("--work-ms", "work_ms", int, "work between a read and its write (default 1000)"),
    ("--think-ms", "think_ms", int, "pause between holds (default 500)"),
    ("--timeout-ms", "timeout_ms", int, "client timeout (default 500)"),
    ("--retries", "sdk_retries", int, "SDK retries (default 1)"),
    ("--backoff-ms", "retry_backoff_ms", int, "SDK backoff (default 0)"),
    ("--latency-ticks", "latency_ticks", int, "a hop may take up to this many ticks (default 0)"),
    ("--tick-ms", "tick_ms", int, "the time grid (default: gcd of the time constants)"),
    ("--liveness-ms", "liveness_ms", int, "liveness bound (default: a lease, a poll, a hold)"),
    ("--crash-restart-ms", "crash_restart_ms", int, "a crashed node restarts after this (default -1: never)"),
)


def register(subparsers: Any) -> None:
    """Add the ``explore-lock`` subcommand."""
    p = subparsers.add_parser(
        "explore-lock", help="exhaustively check the RFC-91 lock: every schedule and fault within bounds",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    for opt, _field, _type, text in _OPTIONS:
        p.add_argument(opt, default=None, metavar="N" if _type is int else "NAME", help=text)
    p.add_argument("--fault-kinds", default=None, metavar="K1,K2",
                   help=f"among {', '.join(FAULT_KINDS)} (default {','.join(DEFAULT_KINDS)})")
    p.add_argument("--pause-ms", default=None, metavar="D1,D2",
                   help="pause and error-window lengths (default: one tick past each boundary)")
    p.add_argument("--checkers", default=None, metavar="C1,C2",
                   help="checkers that decide (default all; fenced: stale-write,lost-update)")
    p.add_argument("--check-before-write", action="store_true", help="the careful (hypothetical) writer")
    p.add_argument("--audit", action="store_true",
                   help="Hudi's lock audit on (off by default: its writes add states, not verdicts)")
    p.add_argument("--no-phases", action="store_true", help="every writer starts at 0 (no start phases)")
    p.add_argument("--scenario", default=None, metavar="FILE",
                   help="take lock, storage and workload from this scenario (catalogue name or path)")
    p.add_argument("--no-hashing", action="store_true", help="do not merge runs that reach one state")
    p.add_argument("--no-symmetry", action="store_true",
                   help="do not merge states equal up to renaming writers")
    p.add_argument("--no-por", action="store_true", help="no partial-order reduction (ample and sleep sets)")
    p.add_argument("--first", action="store_true", help="stop at the first violation (not a shortest one)")
    p.add_argument("--shortest", action="store_true",
                   help="prove the counterexample shortest (iterative deepening after the search, when the "
                        "search leaves it unproved)")
    p.add_argument("--shortest-seconds", default=None, metavar="S",
                   help="time budget of the deepening (default: --max-seconds, else none)")
    p.add_argument("--max-states", default=None, metavar="N", help="stop after N states (exit 3)")
    p.add_argument("--max-seconds", default=None, metavar="S", help="stop after S seconds (exit 3)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="write the counterexample as a scenario TOML (hcc run FILE replays it)")
    add_json(p)
    add_quiet(p)
    p.set_defaults(func=run)


def _fail(msg: str) -> int:
    print(f"hcc explore-lock: {msg}", file=sys.stderr)
    return 2


def _ints(raw: str, option: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in raw.split(",") if x.strip())
    except ValueError:
        raise ConfigError(option, raw, "must be integers separated by commas") from None


def parse_bounds(args: argparse.Namespace) -> Bounds:
    """The bounds the options name; ConfigError names the option and the value."""
    kw: dict[str, Any] = {}
    for opt, field, kind, _text in _OPTIONS:
        raw = getattr(args, opt[2:].replace("-", "_"))
        if raw is None:
            continue
        if kind is int:
            try:
                kw[field] = int(str(raw))
            except ValueError:
                raise ConfigError(opt, raw, "is not an integer") from None
        else:
            kw[field] = str(raw)
    if args.fault_kinds is not None:
        kw["fault_kinds"] = tuple(k.strip() for k in str(args.fault_kinds).split(",") if k.strip())
    if args.pause_ms is not None:
        kw["pause_ms"] = _ints(str(args.pause_ms), "--pause-ms")
    if args.checkers is not None:
        kw["checkers"] = tuple(c.strip() for c in str(args.checkers).split(",") if c.strip())
    kw["check_before_write"] = bool(args.check_before_write)
    kw["audit"] = bool(args.audit)
    kw["phases"] = not args.no_phases
    if args.scenario is not None:
        kw["base"] = loader.load(str(args.scenario))
    bounds = Bounds(**kw)
    try:
        bounds.validate()
    except ConfigError as e:
        option = next((o for o, f, _k, _t in _OPTIONS if f == e.field), None)
        named = {"fault_kinds": "--fault-kinds", "pause_ms": "--pause-ms", "checkers": "--checkers"}
        raise ConfigError(option or named.get(e.field, e.field), e.value, e.reason) from None
    return bounds


def _limit(raw: Any, option: str, kind: type) -> Any:
    if raw is None:
        return None
    try:
        value = kind(str(raw))
    except ValueError:
        raise ConfigError(option, raw, f"is not a {'number' if kind is float else 'whole number'}") from None
    if value <= 0:
        raise ConfigError(option, raw, "must be > 0")
    return value


def found_json(found: Found, replayed: Replayed, exact: tuple[bool, int | None]) -> dict[str, Any]:
    """A violation or finding, its shortest path, and how it replays."""
    v = found.violation
    return {"kind": v.kind, "message": v.message, "decisions": len(found.path), "time_ms": found.time,
            "replays": replayed.violation is not None and replayed.violation.kind == v.kind
            or v.kind in {f.kind for f in replayed.findings},
            "replays_exactly_in_simulation": exact[0], "step_table": step_table(replayed)}


def result_json(res: ExploreResult, seconds: float) -> dict[str, Any]:
    """The JSON object printed by ``--json`` (``ExploreResult.to_json``, timed as the command saw it)."""
    out = res.to_json()
    out["seconds"] = round(seconds, 3)
    out["reductions"] = dataclasses.asdict(res.reductions)
    return out


def _print_table(rows: list[dict[str, Any]]) -> None:
    for r in rows:
        print(f"  {r['time']:>7} {r['who']:<14} {r['what']:<22} {r['detail']}")


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code (0 holds, 1 violated, 2 bad input, 3 incomplete)."""
    try:
        bounds = parse_bounds(args)
        max_states = _limit(args.max_states, "--max-states", int)
        max_seconds = _limit(args.max_seconds, "--max-seconds", float)
        shortest_seconds = _limit(args.shortest_seconds, "--shortest-seconds", float)
    except ConfigError as e:
        return _fail(str(e))
    reductions = Reductions(hashing=not args.no_hashing, symmetry=not args.no_symmetry, por=not args.no_por)
    steps = Steps("hcc explore-lock", quiet=args.quiet)
    searches = [0, -1]  # searches begun so far, the states of the last report (fewer: a new search)

    def progress(points: int, states: int, runs: int) -> None:
        if states < searches[1] or searches[0] == 0:
            searches[0] += 1
        searches[1] = states
        which = "search" if searches[0] == 1 else f"iterative deepening (search {searches[0]})"
        steps.status(f"{which}: {states:,} states, {points:,} decision points, {runs:,} runs so far")

    started = time.perf_counter()
    with steps.part("search", done=lambda: res.verdict):
        res = explore(bounds, reductions, max_states=max_states, max_seconds=max_seconds, first=args.first,
                      shortest=args.shortest, shortest_seconds=shortest_seconds, progress=progress)
    seconds = time.perf_counter() - started
    out: dict[str, Any] = result_json(res, seconds)
    plan = bounds.plan()
    shown: list[tuple[str, Found, Replayed, tuple[bool, int | None]]] = []
    for label, found in ([("violation", res.found)] if res.found else []) + sorted(res.findings.items()):
        with steps.part(f"replay {label}"):
            replayed = replay(plan, found.path, reductions)
            scenario = scenario_of(replayed, bounds.decisive_checkers())
            exact = replays_exactly(scenario, replayed)
        shown.append((label, found, replayed, exact))
        if label == "violation":
            out["violation"].update(found_json(found, replayed, exact))
            del out["violation"]["step_table"]  # it is out["counterexample"]
            if args.out:
                write_atomic(Path(args.out), loader.to_toml(scenario))
                out["violation"]["scenario"] = str(args.out)
        else:
            out["findings"][label] = found_json(found, replayed, exact)
    out["timings"] = dict(steps.seconds)
    if args.json:
        print(json.dumps(out, sort_keys=True))
        return {"holds": 0, "violated": 1}.get(res.verdict, 3)
    print(bounds.describe(), f"checkers={','.join(bounds.decisive_checkers())}",
          f"reductions: hashing={'on' if reductions.hashing else 'off'} "
          f"symmetry={'on' if reductions.symmetry else 'off'} por={'on' if reductions.por else 'off'}")
    print(f"{res.verdict}: {res.states} distinct states, {res.points} decision points, {res.runs} runs, "
          f"depth {res.depth} decisions, runs reach {res.reached_ms} ms, {seconds:.1f} s")
    if res.deepening:
        spent = sum(lv["seconds"] for lv in res.deepening)
        print(f"iterative deepening: depths 0-{res.deepening[-1]['depth']}, {spent:.1f} s; "
              f"every violation takes at least {res.lower_bound} decisions")
    for label, found, replayed, exact in shown:
        v = found.violation
        head = "violation" if label == "violation" else f"finding [{label}]"
        print(f"{head}: [{v.kind}] {v.message}")
        proof = "proved shortest" if label == "violation" and res.shortest_proved else "not proved shortest"
        print(f"  shortest path: {len(found.path)} decisions ({proof}), at {found.time} ms; replayed in "
              f"simulation: {'identical history' if exact[0] else f'differs at event {exact[1]}'}")
        if label == "violation":
            _print_table(step_table(replayed))
            if args.out:
                print(f"  scenario: {args.out}  (hcc run {args.out} replays it)")
    return {"holds": 0, "violated": 1}.get(res.verdict, 3)

"""``hcc explore --protocol cow|lock|occ|nbcc``: exhaustive exploration within bounds.

``--protocol cow`` (the default) checks Vanlightly's v5 copy-on-write specification breadth-first
(:mod:`model.cow`, TLC's table): ``--writers 2 --keys 2 --values 2 --file-groups 1 --ops 4
--monotonic-ts yes|no --cc none|optimistic|pessimistic --put-if-absent yes|no --pk-check yes|no
--salt yes|no [--symmetry]``; it prints "holds" with the distinct states and the depth, or the
shortest counterexample step by step.

``--protocol lock|occ|nbcc`` runs the model's own code through the runtime kernel in a world whose
scheduler takes every decision (``model/explore``): the lock provider guarding a register, the
timeline's writers under OCC (Hudi 1.2.1's or the v5 specification's), an NBCC table's writers,
compaction and cleaner.  Every order of steps and every placement of up to ``--faults`` faults is
covered with state hashing, symmetry and partial-order reduction; the protocol's checkers judge
each history.  A violation comes with its shortest counterexample: a step table, and with ``--out
FILE`` the protocol's scenario TOML that ``hcc run FILE`` replays exactly in simulation.
``--shortest`` proves it shortest by iterative deepening.  The bounds are the options below (each
applies to the protocols whose bounds have it); their defaults are the README tables' bounds.
``hcc explore-lock`` is ``hcc explore --protocol lock``.

``--jobs N`` (worker processes on this machine) and ``--master URL`` (Spark: ``local[*]``, standalone
``spark://host:7077``, YARN, Kubernetes) run the search level by level, breadth-first by hashed states
(``model/explore/level.py``): the same verdict, distinct states and shortest counterexample for every
N and every master (with ``--no-por``, the depth-first search's states too).  Without them the search
is depth-first in this process; it resumes runs from forked copies parked at their decisions instead of
replaying them from the start where runs are long (``--parked N``, at most N copies; 0: replay; default: 64
for nbcc, 0 for lock and occ), with the same result (``model/explore/parked.py``).

Exit codes: 0 holds, 1 violated, 2 bad input (the message names the option and the value), 3 stopped
by ``--max-states`` or ``--max-seconds`` before the search was complete.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import tomli_w

from cli.options import add_json, add_quiet
from engines.explore_pool import make_pool
from engines.progress import Steps
from engines.rundir import write_atomic
from engines.spark import SparkUnavailable
from model.config import ConfigError, Scenario
from model.cow import CC, CowConfig, CowConfigError
from model.explore import Bounds, ExploreResult, Found, Reductions, explore
from model.explore.bounds import DEFAULT_KINDS, FAULT_KINDS, ParkedRuns
from model.explore.counterexample import Replayed, replay, replays_exactly, scenario_of, step_table
from model.explore.protocols import bounds_class
from model.lock.variants import VARIANTS as LOCK_VARIANTS
from model.nbcc.config import NbccScenario
from model.nbcc.variants import VARIANTS as NBCC_VARIANTS
from model.protocols.explore import DEFAULT_EXPLORER, EXPLORERS, cow_result_json, explore_cow
from model.timeline.config import TimelineScenario
from model.timeline.variants import COMMIT_VARIANTS
from scenarios import loader, timeline_loader

_YES = {"yes": True, "y": True, "true": True, "1": True, "no": False, "n": False, "false": False, "0": False}
_CC = {"none": CC.NONE, "0": CC.NONE, "optimistic": CC.OPTIMISTIC, "occ": CC.OPTIMISTIC, "1": CC.OPTIMISTIC,
       "pessimistic": CC.PESSIMISTIC, "2": CC.PESSIMISTIC}
# the specification's options (cow) and their defaults
_COW_INTS = (("writers", 2), ("keys", 2), ("values", 2), ("file-groups", 1), ("ops", 4))
_COW_FLAGS = (("monotonic-ts", "yes"), ("put-if-absent", "no"), ("pk-check", "yes"), ("salt", "no"))

# option, bounds field, type, help: the model explorers' bounds (lock, occ, nbcc); an option applies to the
# protocols whose bounds have the field
BOUND_OPTIONS: tuple[tuple[str, str, type, str], ...] = (
    ("--variant", "variant", str, f"lock: the lock variant ({', '.join(LOCK_VARIANTS)}; default hudi); "
     f"occ: the writer ({', '.join(COMMIT_VARIANTS)}); nbcc: whose NBCC ({', '.join(NBCC_VARIANTS)}; "
     "default hudi-1.2.0)"),
    ("--writers", "writers", int, "identical writers N (default 2)"),
    ("--faults", "faults", int, "at most K faults per run (default 0)"),
    ("--skew-ms", "skew_ms", int, "each node's clock runs 0 or this many ms ahead (default 0)"),
    ("--holds", "holds", int, "lock: acquisition attempts per writer (default 1)"),
    ("--steps", "steps_per_hold", int, "lock: read-modify-write steps per hold (default 1)"),
    ("--validity-s", "validity_secs", int, "lock validity in seconds (default 2)"),
    ("--renew-s", "renew_interval_secs", int, "heartbeat interval in seconds (default 1)"),
    ("--poll-ms", "poll_ms", int, "tryLock poll interval (default 1000)"),
    ("--drift-ms", "drift_allowance_ms", int, "drift allowance (default 500)"),
    ("--work-ms", "work_ms", int, "work between read and write (lock, occ: 1000; nbcc: in flight, 500)"),
    ("--think-ms", "think_ms", int, "pause between holds / operations / batches (default 500)"),
    ("--timeout-ms", "timeout_ms", int, "client timeout (default 500)"),
    ("--retries", "sdk_retries", int, "SDK retries (default: the variant's)"),
    ("--backoff-ms", "retry_backoff_ms", int, "SDK backoff (default 0)"),
    ("--latency-ticks", "latency_ticks", int, "a hop may take up to this many ticks (default 0)"),
    ("--tick-ms", "tick_ms", int, "the time grid (default: gcd of the time constants)"),
    ("--liveness-ms", "liveness_ms", int, "lock: liveness bound (default: a lease, a poll, a hold)"),
    ("--crash-restart-ms", "crash_restart_ms", int, "a crashed node restarts after this (default -1: never)"),
    ("--ops", "ops", int, "occ: operations per writer (default 1)"),
    ("--keys", "keys", int, "occ: keys (default 1)"),
    ("--file-groups", "file_groups", int, "occ: v5 file groups, or Hudi's partitions (default 1)"),
    ("--cc", "cc", str, "occ: none, optimistic (default), pessimistic (v5)"),
    ("--lock-variant", "lock_variant", str, "occ: the commit lock's variant (default hudi)"),
    ("--time-generator", "time_generator", str, "occ: the time generator (default: the writer's)"),
    ("--max-skew-ms", "max_skew_ms", int, "occ, nbcc: the time generator's wait (default 500)"),
    ("--heartbeat-ms", "heartbeat_ms", int, "occ, nbcc: the write client's heartbeat (default 1000)"),
    ("--heartbeat-misses", "heartbeat_misses", int, "nbcc: tolerable heartbeat misses (the variant's)"),
    ("--batches", "batches", int, "nbcc: deltacommits per writer (default 1)"),
    ("--rows", "rows", int, "nbcc: rows per batch (default 1)"),
    ("--buckets", "buckets", int, "nbcc: file groups (bucket index, default 1)"),
    ("--compactions", "compactions", int, "nbcc: compactions scheduled (default 0)"),
    ("--failed-attempts", "failed_attempts", int,
     "nbcc: attempts of w1's last batch that fail after their logs (default 0)"),
    ("--compaction-ms", "compaction_ms", int, "nbcc: first compaction's instant and gap (1000)"),
)
YES_NO_OPTIONS = (
    ("--metadata-table", "metadata_table", "occ, nbcc: readers list through the metadata table"),
    ("--put-if-absent", "put_if_absent", "occ (v5), cow: instant and slice files made if absent"),
    ("--pk-check", "pk_check", "occ (v5), cow: the specification's primary-key check"),
)


def add_bound_options(p: argparse.ArgumentParser, lock_only: bool = False) -> None:
    """The model explorers' bound options, the reductions, the budgets and what to print."""
    for opt, _field, kind, text in BOUND_OPTIONS:
        if lock_only and text.startswith(("occ", "nbcc")):
            continue
        if lock_only and text.startswith("lock: "):  # explore-lock: the lock's part alone
            text = text.split("; occ: ", 1)[0].removeprefix("lock: ")
        p.add_argument(opt, default=None, metavar="N" if kind is int else "NAME", help=text)
    if not lock_only:
        for opt, _field, text in YES_NO_OPTIONS:
            p.add_argument(opt, default=None, metavar="yes|no", help=text)
    p.add_argument("--fault-kinds", default=None, metavar="K1,K2",
                   help=f"among {', '.join(FAULT_KINDS)} (default {','.join(DEFAULT_KINDS)})")
    p.add_argument("--pause-ms", default=None, metavar="D1,D2",
                   help="pause and error-window lengths (default: one tick past each boundary)")
    p.add_argument("--checkers", default=None, metavar="C1,C2",
                   help="checkers that decide (lock: default all, fenced: stale-write,lost-update; occ: "
                        "timeline checkers, default consistent-read,duplicate-key)")
    p.add_argument("--check-before-write", action="store_true",
                   help="lock: the careful (hypothetical) writer")
    p.add_argument("--audit", action="store_true",
                   help="lock: Hudi's lock audit on (off by default: its writes add states, not verdicts)")
    p.add_argument("--no-phases", action="store_true", help="every writer starts at 0 (no start phases)")
    p.add_argument("--scenario", default=None, metavar="FILE",
                   help="lock: take lock, storage and workload from this scenario (catalogue name or path)")
    p.add_argument("--no-hashing", action="store_true", help="do not merge runs that reach one state")
    p.add_argument("--jobs", default=None, metavar="N",
                   help="search level by level (breadth-first by hashed states) in N worker processes "
                        "(1: this process) instead of depth-first: the same verdict, distinct states and "
                        "shortest counterexample for every N; needs hashing (with --no-por its states are "
                        "the depth-first search's with --no-por --no-dominance; with partial-order reduction "
                        "they may differ)")
    p.add_argument("--master", default=None, metavar="URL",
                   help="the level-by-level search of --jobs on Spark: local[*], spark://host:7077, yarn, "
                        "k8s://... (one Spark job per level; the project's code is shipped as the sweeps do)")
    p.add_argument("--no-por", action="store_true", help="no partial-order reduction (ample and sleep sets)")
    p.add_argument("--no-dominance", action="store_true",
                   help="expand a state even when one with the same core and at least its fault budget was "
                        "(the depth-first search; with --no-por the whole graph of states)")
    p.add_argument("--parked", default=None, metavar="N",
                   help="the depth-first search resumes runs from at most N forked copies parked at their "
                        "decisions instead of replaying them from the start (0: always replay; default: the "
                        "protocol's: 64 for nbcc with a fault, else 0): the same result, in less time where "
                        "runs are long")
    p.add_argument("--first", action="store_true", help="stop at the first violation (not a shortest one)")
    p.add_argument("--shortest", action="store_true",
                   help="prove the counterexample shortest (iterative deepening after the search, when the "
                        "search leaves it unproved)")
    p.add_argument("--shortest-seconds", default=None, metavar="S",
                   help="time budget of the deepening (default: --max-seconds, else none)")
    p.add_argument("--max-seconds", default=None, metavar="S", help="stop after S seconds (exit 3)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="write the counterexample as a scenario TOML (hcc run FILE replays it)")
    add_quiet(p)


def register(subparsers: Any) -> None:
    """Add the ``explore`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "explore",
        help="exhaustively check a protocol within bounds: the v5 specification (cow) or the model's own "
             "code (lock, occ, nbcc)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--protocol", default=DEFAULT_EXPLORER, choices=tuple(EXPLORERS),
                   help=f"what to explore (default {DEFAULT_EXPLORER})")
    add_bound_options(p)
    # the specification's own options (cow)
    p.add_argument("--values", default=None, metavar="N", help="cow: values (default 2)")
    p.add_argument("--monotonic-ts", default=None, metavar="yes|no",
                   help="cow: monotonic times (default yes)")
    p.add_argument("--salt", default=None, metavar="yes|no", help="cow: salted instants (default no)")
    p.add_argument("--symmetry", action="store_true",
                   help="cow: reduce by symmetry (writers, keys and values are interchangeable); the model "
                        "explorers always do (--no-symmetry turns it off)")
    p.add_argument("--no-symmetry", action="store_true", help="lock, occ, nbcc: no symmetry reduction")
    p.add_argument("--exact", action="store_true",
                   help="store whole states instead of 64-bit fingerprints (more memory)")
    p.add_argument("--max-states", default=None, metavar="N", help="stop after storing N states (exit 3)")
    add_json(p)
    p.set_defaults(func=run)


def _fail(msg: str, command: str = "hcc explore") -> int:
    print(f"{command}: {msg}", file=sys.stderr)
    return 2


# ---- the specification (cow) ----------------------------------------------------------------------


def parse_config(args: argparse.Namespace) -> CowConfig | str:
    """The copy-on-write configuration from parsed options, or an error message naming the option."""
    ints: dict[str, int] = {}
    for name, default in _COW_INTS:
        raw = getattr(args, name.replace("-", "_"))
        raw = default if raw is None else raw
        try:
            ints[name] = int(str(raw))
        except ValueError:
            return f"--{name}: {raw!r} is not an integer"
    flags: dict[str, bool] = {}
    for name, default_flag in _COW_FLAGS:
        raw = getattr(args, name.replace("-", "_"))
        raw = str(default_flag if raw is None else raw)
        if raw.lower() not in _YES:
            return f"--{name}: {raw!r} must be yes or no"
        flags[name] = _YES[raw.lower()]
    cc_raw = str(args.cc if args.cc is not None else "optimistic")
    if cc_raw.lower() not in _CC:
        return f"--cc: {cc_raw!r} must be none, optimistic or pessimistic"
    cfg = CowConfig(writers=ints["writers"], keys=ints["keys"], values=ints["values"],
                    file_groups=ints["file-groups"], ops=ints["ops"], monotonic_ts=flags["monotonic-ts"],
                    cc=_CC[cc_raw.lower()], put_if_absent=flags["put-if-absent"], pk_check=flags["pk-check"],
                    salt=flags["salt"])
    try:
        cfg.validate()
    except CowConfigError as exc:
        return f"--{exc.field.replace('_', '-')}: {exc.value!r} {exc.reason}"
    return cfg


def run_cow(args: argparse.Namespace) -> int:
    """Explore the specification (``--protocol cow``)."""
    parsed = parse_config(args)
    if isinstance(parsed, str):
        return _fail(parsed)
    cfg = parsed
    max_states: int | None = None
    if args.max_states is not None:
        try:
            max_states = int(str(args.max_states))
        except ValueError:
            return _fail(f"--max-states: {args.max_states!r} is not an integer")
        if max_states < 1:
            return _fail(f"--max-states: {max_states!r} must be at least 1")
    res, seconds = explore_cow(cfg, bool(args.symmetry), bool(args.exact), max_states)
    if args.json:
        print(json.dumps(cow_result_json(cfg, res, seconds)))
    else:
        print(f"{cfg.row()}  symmetry={'on' if res.symmetry else 'off'}")
        if res.violation is not None:
            print(f"ConsistentRead: violated after {res.states} distinct states ({seconds:.2f} s); "
                  f"shortest counterexample: {res.counterexample_length} states")
            for st in res.trace:
                print(f"  {st.index:>2}. {st.text}")
                print(f"      {st.state}")
            print(res.violation.describe())
        elif res.complete:
            print(f"ConsistentRead: holds ({res.states} distinct states, depth {res.depth}, "
                  f"{res.generated} generated, {seconds:.2f} s)")
        else:
            print(f"ConsistentRead: unknown, stopped at --max-states {max_states} "
                  f"(depth {res.depth}, {seconds:.2f} s)")
    if res.verdict == "violated":
        return 1
    return 0 if res.complete else 3


# ---- the model explorers (lock, occ, nbcc) -------------------------------------------------------------


def _ints(raw: str, option: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in raw.split(",") if x.strip())
    except ValueError:
        raise ConfigError(option, raw, "must be integers separated by commas") from None


def parse_bounds(args: argparse.Namespace, protocol: str) -> Bounds:
    """The bounds of ``protocol`` the options name; ConfigError names the option and the value (and an option
    the protocol's bounds do not have)."""
    cls = bounds_class(protocol, "--protocol")
    fields = {f.name for f in dataclasses.fields(cls)}
    kw: dict[str, Any] = {}

    def give(option: str, field: str, value: Any) -> None:
        if field not in fields:
            raise ConfigError(option, value, f"is not a bound of --protocol {protocol}")
        kw[field] = value

    for opt, field, kind, _text in BOUND_OPTIONS:
        raw = getattr(args, opt[2:].replace("-", "_"), None)
        if raw is None:
            continue
        if kind is int:
            try:
                number = int(str(raw))
            except ValueError:
                raise ConfigError(opt, raw, "is not an integer") from None
            give(opt, field, number)
        else:
            give(opt, field, str(raw))
    for opt, field, _text in YES_NO_OPTIONS:
        raw = getattr(args, opt[2:].replace("-", "_"), None)
        if raw is None:
            continue
        if str(raw).lower() not in _YES:
            raise ConfigError(opt, raw, "must be yes or no")
        give(opt, field, _YES[str(raw).lower()])
    if args.fault_kinds is not None:
        kw["fault_kinds"] = tuple(k.strip() for k in str(args.fault_kinds).split(",") if k.strip())
    if args.pause_ms is not None:
        kw["pause_ms"] = _ints(str(args.pause_ms), "--pause-ms")
    if args.checkers is not None:
        kw["checkers"] = tuple(c.strip() for c in str(args.checkers).split(",") if c.strip())
    for flag, field in (("check_before_write", "check_before_write"), ("audit", "audit")):
        if getattr(args, flag, False):
            give(f"--{flag.replace('_', '-')}", field, True)
    if args.no_phases:
        kw["phases"] = False
    if getattr(args, "scenario", None) is not None:
        if not cls.takes_base:
            raise ConfigError("--scenario", args.scenario, f"is not a bound of --protocol {protocol}")
        kw["base"] = loader.load(str(args.scenario))
    bounds = cls(**kw)
    try:
        bounds.validate()
    except ConfigError as e:
        option = next((o for o, f, _k, _t in BOUND_OPTIONS if f == e.field), None)
        option = option or next((o for o, f, _t in YES_NO_OPTIONS if f == e.field), None)
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


def _parked(raw: Any) -> ParkedRuns | None:
    """``--parked N``: at most N runs parked (0: none), spaced as the default; None: the protocol's."""
    if raw is None:
        return None
    try:
        limit = int(str(raw))
    except ValueError:
        raise ConfigError("--parked", raw, "is not a whole number") from None
    if limit < 0:
        raise ConfigError("--parked", raw, "must be >= 0 (0: every run replays from the start)")
    return ParkedRuns(limit=limit)


def scenario_toml(replay_scenario: Any) -> str:
    """The TOML of a found run's replay scenario (``hcc run FILE`` loads it), by its protocol."""
    if isinstance(replay_scenario, TimelineScenario):
        return timeline_loader.to_toml(replay_scenario)
    if isinstance(replay_scenario, NbccScenario):
        return tomli_w.dumps({"protocol": "nbcc", **loader.to_dict(replay_scenario)})
    assert isinstance(replay_scenario, Scenario)
    return loader.to_toml(replay_scenario)


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


def run_bounds(args: argparse.Namespace, protocol: str, command: str = "hcc explore") -> int:
    """Explore ``protocol``'s model within the options' bounds; the exit code."""
    try:
        bounds = parse_bounds(args, protocol)
        max_states = _limit(args.max_states, "--max-states", int)
        max_seconds = _limit(args.max_seconds, "--max-seconds", float)
        shortest_seconds = _limit(args.shortest_seconds, "--shortest-seconds", float)
        jobs = _limit(args.jobs, "--jobs", int)
        parked = _parked(args.parked)
        if parked is not None and (jobs is not None or args.master is not None):
            raise ConfigError("--parked", args.parked,
                              "the level-by-level search (--jobs, --master) parks no run")
        if (jobs is not None or args.master is not None) and args.no_hashing:
            opt, val = ("--master", args.master) if args.master is not None else ("--jobs", args.jobs)
            raise ConfigError(opt, val, "the level-by-level search needs state hashing (drop --no-hashing)")
    except ConfigError as e:
        return _fail(str(e), command)
    reductions = Reductions(hashing=not args.no_hashing, symmetry=not args.no_symmetry, por=not args.no_por,
                            dominance=not args.no_dominance)
    steps = Steps(command, quiet=args.quiet)
    searches = [0, -1]  # searches begun so far, the states of the last report (fewer: a new search)

    def progress(points: int, states: int, runs: int) -> None:
        if states < searches[1] or searches[0] == 0:
            searches[0] += 1
        searches[1] = states
        which = "search" if searches[0] == 1 else f"iterative deepening (search {searches[0]})"
        steps.status(f"{which}: {states:,} states, {points:,} decision points, {runs:,} runs so far")

    started = time.perf_counter()
    try:
        pool = make_pool(jobs, args.master)
    except SparkUnavailable as e:
        return _fail(f"--master {args.master}: {e}", command)
    try:
        with steps.part("search", done=lambda: res.verdict):
            res = explore(bounds, reductions, max_states=max_states, max_seconds=max_seconds,
                          first=args.first, shortest=args.shortest, shortest_seconds=shortest_seconds,
                          progress=progress, pool=pool, parked=parked)
    finally:
        if pool is not None:
            pool.close()
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
                write_atomic(Path(args.out), scenario_toml(scenario))
                out["violation"]["scenario"] = str(args.out)
        else:
            out["findings"][label] = found_json(found, replayed, exact)
    out["timings"] = dict(steps.seconds)
    if args.json:
        print(json.dumps(out, sort_keys=True))
        return {"holds": 0, "violated": 1}.get(res.verdict, 3)
    print(bounds.describe(), f"checkers={','.join(bounds.decisive_checkers()) or 'all'}",
          f"reductions: hashing={'on' if reductions.hashing else 'off'} "
          f"symmetry={'on' if reductions.symmetry else 'off'} por={'on' if reductions.por else 'off'} "
          f"dominance={'on' if res.reductions.dominance else 'off'}")
    print(f"{res.verdict}: {res.states} distinct states, {res.points} decision points, {res.runs} runs, "
          f"depth {res.depth} decisions, runs reach {res.reached_ms} ms, {seconds:.1f} s")
    if res.deepening:
        spent = sum(lv["seconds"] for lv in res.deepening)
        print(f"iterative deepening: depths 0-{res.deepening[-1]['depth']}, {spent:.1f} s; "
              f"every violation takes at least {res.lower_bound} decisions")
    for label, found, replayed, exact in shown:
        v = found.violation
        head = "violation" if label == "violation" else "finding"  # a finding's label is its kind
        print(f"{head}: [{v.kind}] {v.message}")
        proof = "proved shortest" if label == "violation" and res.shortest_proved else "not proved shortest"
        print(f"  shortest path: {len(found.path)} decisions ({proof}), at {found.time} ms; replayed in "
              f"simulation: {'identical history' if exact[0] else f'differs at event {exact[1]}'}")
        if label == "violation":
            _print_table(step_table(replayed))
            if args.out:
                print(f"  scenario: {args.out}  (hcc run {args.out} replays it)")
    return {"holds": 0, "violated": 1}.get(res.verdict, 3)


def run(args: argparse.Namespace) -> int:
    """Run the command; the exit code (0 holds, 1 violated, 2 bad input, 3 incomplete)."""
    if EXPLORERS[args.protocol].specification:
        model_only = [o for o in [*(b[0] for b in BOUND_OPTIONS), "--metadata-table"]
                      if getattr(args, o[2:].replace("-", "_"), None) is not None
                      and o not in ("--writers", "--keys", "--file-groups", "--ops", "--cc")]
        model_only += [o for o in ("--jobs", "--master", "--parked") if getattr(args, o[2:]) is not None]
        if model_only:
            return _fail(f"{model_only[0]}: is not an option of --protocol cow (the specification)")
        return run_cow(args)
    for opt in ("values", "monotonic_ts", "salt"):
        if getattr(args, opt) is not None:
            return _fail(f"--{opt.replace('_', '-')}: is an option of --protocol cow only")
    return run_bounds(args, args.protocol)

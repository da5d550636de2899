"""Hudi Spark writer plans from a catalogue OCC entry: the same writers, keys, values and order as the
entry's simulated run, so one entry runs in simulation and on Hudi.

The entry is simulated with its seed; each writer's operations (``op`` invoke lines: key, upsert,
delete or insert_overwrite, value ``w<N>.<i>``; or a clustering of a partition) become its batches, one
row per batch (one commit each, as in the model; a clustering is one replacecommit of the partition's
file groups, by Hudi's ``run_clustering`` procedure), capped at ``max_ops`` per writer. A preloaded table
(``timeline.preload``) is one seed batch of every key by the first writer, which every other writer
waits for. Values are numbers on Hudi: ``w<N>.<i>`` is ``1000 * N + i``, the preload's ``0``.

The entry's Hudi settings become Hudi's write options (metadata table, conflict resolution strategy,
heartbeat, clustering update strategy). What the hudi world cannot apply is listed in
:attr:`EntryPlans.untranslated` and recorded in the run's ``scenario.toml``: the writers' JVMs share the
host's clock (no skew), and the entry's timing (work and think times, start times) is Hudi's own. An
entry Hudi cannot run at all is refused by name: the specification's hypothetical writer, the
hypothetical replace handlings, instant-time-only workloads, SINGLE_WRITER mode, and pauses other than
one at a write, crashes and the other faults (not translated yet). Storage faults (``faults.errors``) are
the fault proxy's rules (:mod:`engines.hudi_spark.storage_faults`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engines.hudi_spark.launch import ENDED, WriterFault
from engines.hudi_spark.storage_faults import proxy_rules
from engines.hudi_spark.storage_faults import untranslated as errors_untranslated
from model.config import ConfigError, ErrorRule
from model.timeline.config import UPDATE_STRATEGY_CLASS, TimelineScenario
from model.timeline.hudi_writer import partition_of
from model.timeline.run import run_timeline
from scenarios import catalogue
from scenarios.catalogue import Entry

# Hudi's class for each of the model's conflict resolution strategies
# (hoodie.write.lock.conflict.resolution.strategy)
STRATEGY_CLASS = {
    "simple": "org.apache.hudi.client.transaction.SimpleConcurrentFileWritesConflictResolutionStrategy",
    "prefer-writer": "org.apache.hudi.client.transaction.PreferWriterConflictResolutionStrategy",
}
# Hudi's class for each timeline.clustering_updates (hoodie.clustering.updates.strategy)
UPDATE_STRATEGY = {name: f"org.apache.hudi.client.clustering.update.strategy.{cls}"
                   for name, cls in UPDATE_STRATEGY_CLASS.items()}
MAX_OPS = 3
_VALUE = re.compile(r"w(\d+)\.(\d+)")


@dataclass(frozen=True)
class EntryPlans:
    """Each writer's batches, Hudi's write options for the entry, and what the hudi world leaves out."""

    entry: str
    seed: int
    batches: dict[str, list[dict[str, Any]]]
    options: dict[str, str]
    untranslated: list[str] = field(default_factory=list)
    faults: tuple[WriterFault, ...] = ()  # writer pauses and kills at their requests (launch.py)
    errors: tuple[ErrorRule, ...] = ()  # storage faults: the proxy's rules (storage_faults.py)


def hudi_value(value: str) -> int:
    """The model's value ``w<N>.<i>`` as a number (``1000 * N + i``); a preloaded value is 0."""
    m = _VALUE.fullmatch(value)
    return 1000 * int(m.group(1)) + int(m.group(2)) if m else 0


def _refuse_untranslatable(ts: TimelineScenario) -> None:
    tl, sc = ts.timeline, ts.scenario
    if tl.spec.writer != "hudi":
        raise ConfigError("timeline.variant", tl.variant, "the specification's writer is hypothetical: Hudi "
                                                          "has no such writer to run")
    if tl.workload != "commits":
        raise ConfigError("timeline.workload", tl.workload, "instant times only: no rows for Hudi to write")
    if tl.cc != "optimistic":
        raise ConfigError("timeline.cc", tl.cc, "the hudi world runs OCC writers only")
    for i, pause in enumerate(sc.faults.pauses):
        if pause.trigger != "write" or i > 0:
            raise ConfigError(f"faults.pauses[{i}].trigger", pause.trigger,
                              "the hudi world translates one pause, triggered at a write (in the commit)")
    for name in ("crashes", "writer_deaths", "cutoffs", "heartbeat_start_failures",
                 "shutdowns"):
        if getattr(sc.faults, name):
            raise ConfigError(f"faults.{name}", len(getattr(sc.faults, name)),
                              "faults are not translated to the hudi world yet")
    if tl.hypothetical_replace is not None:
        raise ConfigError("timeline.hypothetical_replace", tl.hypothetical_replace,
                          "a hypothetical writer (one of Hudi's replace handlings taken out): Hudi has no "
                          "such writer to run")


def hudi_write_options(ts: TimelineScenario) -> dict[str, str]:
    """Hudi's write options for the entry's settings (the rest are the hudi world's defaults)."""
    tl = ts.timeline
    opts = {"hoodie.metadata.enable": str(tl.metadata_table_on).lower(),
            "hoodie.write.lock.conflict.resolution.strategy": STRATEGY_CLASS[tl.strategy]}
    if tl.heartbeat_interval_ms is not None:
        opts["hoodie.client.heartbeat.interval_in_ms"] = str(tl.heartbeat_interval_ms)
    if tl.heartbeat_tolerable_misses is not None:
        opts["hoodie.client.heartbeat.tolerable.misses"] = str(tl.heartbeat_tolerable_misses)
    if tl.clustering_updates is not None:  # else Hudi infers it as the model does (config.update_strategy)
        opts["hoodie.clustering.updates.strategy"] = UPDATE_STRATEGY[tl.clustering_updates]
    return opts


def load_occ_entry(field: str, name: str, overrides: Sequence[str] = ()) -> Entry:
    """Catalogue entry ``name`` (a name or path, ``--set`` overrides applied) when it is an OCC (timeline)
    entry, the kind Hudi's Spark writers run; else ConfigError naming ``field`` and ``name``."""
    entry = catalogue.load(name, overrides)
    if not isinstance(entry.config, TimelineScenario):
        raise ConfigError(field, name, f"a {entry.protocol} entry: Hudi's Spark writers run OCC (timeline) "
                                       "entries")
    return entry


def entry_plans(name: str, ts: TimelineScenario, max_ops: int = MAX_OPS) -> EntryPlans:
    """The plans of catalogue entry ``name`` (its config ``ts``), from its simulated run with its seed."""
    if max_ops < 1:
        raise ConfigError("max_ops", max_ops, "must be 1 or more")
    _refuse_untranslatable(ts)
    tl, sc = ts.timeline, ts.scenario
    seed = sc.seed
    ops: dict[str, list[dict[str, Any]]] = {f"w{i}": [] for i in range(1, sc.workload.writers + 1)}
    invoked: dict[str, list[int]] = {w: [] for w in ops}  # when each op began (ms)
    died: dict[str, tuple[int, int]] = {}  # writer -> (its op that died in its commit, when)
    for e in run_timeline(ts, seed):
        if e.f == "op" and e.type == "invoke" and e.process in ops:
            ops[e.process].append(dict(e.value))
            invoked[e.process].append(e.time)
        elif e.f == "op" and e.type == "info" and e.value.get("result") == "failed" and e.process in ops:
            died[e.process] = (len(ops[e.process]) - 1, e.time)
    cut = any(len(v) > max_ops for v in ops.values())

    def row(key: str, value: int) -> dict[str, Any]:
        return {"key": key, "partition": partition_of(key, tl.partition_count), "value": value}

    def batch(op: dict[str, Any]) -> dict[str, Any]:
        after = {"after_commits": 1 if tl.preload else 0}
        if op["kind"] == "cluster":  # a clustering of the partition's file groups (writer.py: run_clustering)
            return {"op": "cluster", "partition": op["partition"], "rows": [], **after}
        return {"op": op["kind"], "rows": [row(op["key"], hudi_value(op["value"]))], **after}

    # the preloaded table: one seed commit of every key by the first writer, which the others wait for
    seed_rows = [row(f"k{j}", 0) for j in range(1, tl.keys + 1)] if tl.preload else []
    batches = {w: ([{"op": "upsert", "rows": seed_rows}] if seed_rows and w == "w1" else [])
               + [batch(op) for op in todo[:max_ops]]
               for w, todo in ops.items()}
    untranslated = ["the writers' JVMs share the host's clock: the entry's clocks (skew, drift) do not apply",
                    "work, think and start times are Hudi's own (the plan fixes each writer's order only)"]
    if cut:
        untranslated.append(f"each writer's first {max_ops} operations only (the entry runs more)")
    options = hudi_write_options(ts)
    errors = proxy_rules(sc.faults.errors, sorted(batches), ts.base_path)
    untranslated += errors_untranslated(errors)
    faults: tuple[WriterFault, ...] = ()
    if sc.faults.pauses:
        node = sc.faults.pauses[0].node
        faults = _commit_pause(node, tl.preload and node == "w1", batches, options, untranslated)
    dying = {w: d for w, d in died.items() if d[0] < max_ops}
    if died and not dying:
        untranslated.append(f"timeline.fail_commit_prob = {tl.fail_commit_prob:g}: no writer dies in its "
                            f"first {max_ops} operations in the simulation ({', '.join(sorted(died))} later)")
    if dying:
        cut_invoked = {w: t[:max_ops] for w, t in invoked.items()}
        faults += _deaths_in_commit(ts, dying, cut_invoked, batches, options, untranslated)
    return EntryPlans(name, seed, batches, options, untranslated, faults, errors)


# A pause in the commit, scaled: the lock's validity, its renewal and the writers' heartbeat at Hudi's
# smallest settings (StorageBasedLockConfig: validity >= 10 s and >= 10 x renew, renew >= 1 s), so a
# pause of PAUSE_S outlasts the lock and the heartbeat as the entry's does at full scale
PAUSE_S = 60.0
PAUSE_OPTIONS = {"hoodie.write.lock.storage.validity.timeout.secs": "10",
                 "hoodie.write.lock.storage.renew.interval.secs": "1",
                 "hoodie.client.heartbeat.interval_in_ms": "2000",
                 "hoodie.client.heartbeat.tolerable.misses": "1"}


# the writer's own instant files of a commit: its PUT of <instant>.inflight, then (after the conflict check,
# under the lock) its HEAD of it in ActiveTimelineV2#transitionStateToComplete's existence check, just before
# its completed instant file (Hudi 1.2.0, ActiveTimelineV2 lines 568-570; one PUT and one in-commit HEAD per
# commit, as proxy logs show)
INFLIGHT = r"table/\.hoodie/timeline/\d{17}\.inflight$"
LOCK_OPTIONS = {k: v for k, v in PAUSE_OPTIONS.items() if ".write.lock." in k}
WRITES = ("upsert", "delete")  # the batches that are commits (an .inflight each); the rest replacecommits
# the heartbeat when a writer dies: expired 20 s after the kill (interval x misses, HoodieHeartbeatClient line
# 70, 1.2.0), within the run. Not the entry's 1 s x 2: on this loaded 2-core machine a live writer's own
# table-creating commit (35 s) failed with it (HeartbeatUtils#abortIfHeartbeatExpired, lines 94-105, called by
# BaseHoodieWriteClient#commitStats line 266): its last heartbeat file was more than 2 s old
DEATH_HEARTBEAT = {"hoodie.client.heartbeat.interval_in_ms": "10000",
                   "hoodie.client.heartbeat.tolerable.misses": "2"}


def _deaths_in_commit(ts: TimelineScenario, dying: dict[str, tuple[int, int]], invoked: dict[str, list[int]],
                      batches: dict[str, list[dict[str, Any]]], options: dict[str, str],
                      untranslated: list[str]) -> tuple[WriterFault, ...]:
    """``timeline.fail_commit_prob``'s deaths (writer -> the index of its op that died in its commit, and
    when) as kills of the writer's JVM at the same point: the model's writer dies after its conflict check
    and its in-flight check, before its completed instant; on Hudi, after its HEAD of its own ``.inflight``
    in the commit (``then``), with the lock held. The model's writer dies for good, so its op is its last:
    it restarts after its last batch and only reads. An op the simulation began after the death waits for
    the kill, so survivors commit after it and their LAZY clean rolls the dead attempt back once its
    heartbeat expires (DEATH_HEARTBEAT, 20 s; the lock's validity 10 s, renewal 1 s, as the dead writer
    holds it)."""
    tl = ts.timeline
    options.update(LOCK_OPTIONS | DEATH_HEARTBEAT)
    faults = []
    for w, (i, at) in sorted(dying.items()):
        todo = batches[w]
        seeded = len(todo) - len(invoked[w])  # the preload batch before the writer's ops
        kind = todo[seeded + i]["op"]
        if kind not in WRITES:
            raise ConfigError("timeline.fail_commit_prob", tl.fail_commit_prob,
                              f"{w}'s {kind} dies in its commit in the simulation: only an upsert's or a "
                              "delete's death is translated (a commit's .inflight)")
        nth = sum(1 for b in todo[:seeded + i + 1] if b["op"] in WRITES)
        faults.append(WriterFault(w, "kill", INFLIGHT, "PUT", nth, restart_at=len(todo), then="HEAD"))
        for other, times in invoked.items():
            for j, t in enumerate(times):
                b = batches[other][len(batches[other]) - len(times) + j]
                if other != w and t > at and "after_info" not in b:  # the kill, or Hudi's abort instead
                    b["after_info"] = {"process": w, "ended": ENDED}
        untranslated.append(
            f"timeline.fail_commit_prob = {tl.fail_commit_prob:g}: {w}'s operation {i + 1} dies in its "
            f"commit (at {at} ms): its JVM killed at its in-commit HEAD of its own .inflight (after the "
            "conflict check, lock held, before the completed instant), restarted after its last batch to "
            "read; operations begun after the death wait for the kill (or for Hudi's abort of the attempt, "
            "a write conflict, which spares it)")
    hb = (options.get("hoodie.client.heartbeat.interval_in_ms"), options.get("hoodie.client.heartbeat."
                                                                             "tolerable.misses"))
    untranslated.append(f"the dead writer holds the lock: its validity 10 s (renewal 1 s), Hudi's smallest; "
                        f"heartbeat {hb[0]} ms x {hb[1]} misses, so a survivor's LAZY clean rolls the dead "
                        "attempt back within the run")
    return tuple(faults)


def _commit_pause(node: str, seeded: bool, batches: dict[str, list[dict[str, Any]]],
                  options: dict[str, str], untranslated: list[str]) -> tuple[WriterFault, ...]:
    """The entry's pause at a write (the model pauses a writer at its completion write, decided, not yet
    sent) as a pause of ``node``'s JVM in its first operation's commit, after Hudi's in-flight check: at
    its HEAD of ``.hoodie/timeline/<instant>.inflight``, the second of each commit (the first is the
    write's start), so the n-th is 2 x (its commits so far + 1: ``seeded``, it wrote the preload); the
    other writers start their batches once it is paused, as the entry's other writers go on during the
    pause."""
    options.update(PAUSE_OPTIONS)
    for w, todo in batches.items():
        if w != node and todo:
            todo[0]["after_info"] = {"process": node, "f": "pause"}
    untranslated.append(f"the pause: {node}'s JVM stopped for {PAUSE_S:g} s at its commit's in-flight check "
                        "(HEAD of its .inflight), with the lock's validity 10 s (renewal 1 s) and the "
                        "heartbeat 2 s x 1 miss, Hudi's smallest settings, in place of the entry's durations")
    inflight = r"table/\.hoodie/timeline/\d{17}\.inflight$"
    return (WriterFault(node, "pause", inflight, "HEAD", 4 if seeded else 2, PAUSE_S),)

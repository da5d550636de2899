"""Hudi Spark writer plans from a catalogue NBCC entry (``protocol = "nbcc"``): the same writers, file groups,
rows and order as the entry's simulated run, so one entry runs in simulation and on Hudi's own NBCC writers.

The entry is simulated with its seed (:func:`model.nbcc.sim_table.run_table`). Each writer's deltacommit
attempts, in the simulated order and capped at ``max_ops`` per writer, become its batches, one Hudi
deltacommit each:

- **Keys and buckets.** The model puts key ``k<n>`` in bucket ``crc32 % buckets``; Hudi's simple bucket index
  hashes the key as Java does (:func:`engines.hudi_spark.nbcc.bucket_of`). Each model key becomes the Hudi key
  of the same bucket with the same rank (the model's r-th key of bucket b is Hudi's r-th key of bucket b,
  :func:`~engines.hudi_spark.nbcc.key_in_bucket`), with the entry's bucket count
  (``hoodie.bucket.index.num.buckets``), so the same rows share the same file groups on both sides.
- **Values.** A row's value is also its ordering field ``ts`` (the writers' rows, event-time merging):
  ``(ts * 100 + writer) * 100 + batch``, which orders as the model's ordering value ``ts`` does and tells each
  writer's batch apart.
- **Order.** An attempt waits until the table has as many completed commits as the simulation had completed
  (of the translated attempts) when it began (``after_commits``). The first attempt the simulation began
  creates the table; every other waits for it (a commit, or the kill of the first attempt's writer): Hudi
  writers creating one table at once is not the entry's workload.
- **Failed attempts.** An attempt the model fails part-way (an injected failure after ``n`` logs, or its
  writer's crash while it was under way, :mod:`engines.hudi_spark.nbcc_faults`) becomes its
  writer killed (SIGKILL of its process group, :class:`~engines.hudi_spark.launch.WriterFault`) at the same
  point: after its first log PUT when the model wrote one or more logs (Hudi writes one log per file group and
  deltacommit, so "after n logs" is "after the first"), after its ``.deltacommit.inflight`` PUT when it wrote
  none. The model's writer retries the batch as a new deltacommit: on Hudi the writer restarts (a new process,
  the same name) from the next batch, as a Spark job that died is run again; after its last batch it restarts
  too, and only reads the table (so a read follows every kill). A writer whose crash the model never restarts
  is not restarted.
- **Compactions.** Each compaction plan the simulated compaction service executed (node ``w{N+1}``) is Hudi's
  ``run_compaction`` procedure (``scheduleandexecute``, :func:`engines.hudi_spark.writer.compact`) on a
  compactor process of that name, once the table has the commits the simulation had completed when it
  planned; Hudi then plans it from the table it finds (``hoodie.compact.inline.max.delta.commits = 1``: the
  model's slots, not Hudi's trigger, NB10). An execution the model fails part-way (injected, or cut by the
  compactor's crash) is the compactor killed inside that batch, after its first base file PUT when the model
  wrote one, else after its ``.compaction.inflight`` PUT, and restarted from its next batch; a later execution
  of the plan the model's service resumed is ``run_compaction``'s ``execute`` of the pending plans (Hudi's
  ``compact`` rolls the killed inflight back and runs it again). An execution the model refused because the
  killed executor's heartbeat still lives (Hudi's variants, NB34: its restart's resume, or a plan scheduled
  in the same slot behind it) is that ``run_compaction`` with no kill, which Hudi must refuse with
  ``HoodieLockException`` ("... due to heartbeat by concurrent writer/job"); the hudi world's heartbeat
  (6 min x misses) outlasts a run, and an entry whose heartbeat expires within its simulated run is refused,
  so a model execution after the heartbeat expired is never translated. An execution failing for a storage
  fault is the proxy's to fail (not a kill).
- **Clusterings.** Each clustering the compaction service planned (``nbcc.clustering_at_ms``) is Hudi's
  ``run_clustering`` on the compactor, once the table has as many deltacommits past their ``.inflight`` as
  the model's plan found (``after_instants``: those commit, NBC4), and each deltacommit the model began after
  a plan waits for the plan on the timeline; the model's outcomes are the plan's (``refused``: planned, its
  execution refused, NBC1, NBC2; ``rejected``: a deltacommit the plan refuses, NBC3, no kill).
- **Crashes and pauses** (``faults.crashes``, time-triggered ``faults.pauses``): at a request the model and
  Hudi share, not at a time (:mod:`engines.hudi_spark.nbcc_faults`).

What the hudi world cannot apply is refused by field (variants other than ``hudi-1.2.0``: Hudi 1.2.0's bundle
is the only one served; another time generator; writer deaths, cut-offs, heartbeat-start failures and
shutdowns; a crash or pause no shared request marks; a reader during the run; a heartbeat that expires within
the run) or listed in :attr:`EntryPlans.untranslated` (the heartbeat, scaled; timings). Storage faults
(``faults.errors``) are the fault proxy's rules (:mod:`engines.hudi_spark.storage_faults`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engines.hudi_spark.launch import WriterFault
from engines.hudi_spark.nbcc import PARTITION, key_in_bucket
from engines.hudi_spark.nbcc_faults import (
    BASE_PUT,
    COMPACTION_INFLIGHT_PUT,
    INFLIGHT_PUT,
    LOG_PUT,
    map_faults,
)
from engines.hudi_spark.nbcc_sim import Outline, SimAttempt, left_to_the_proxy, outline
from engines.hudi_spark.plans import MAX_OPS, EntryPlans, entry_plans, load_occ_entry
from engines.hudi_spark.storage_faults import proxy_rules
from engines.hudi_spark.storage_faults import untranslated as errors_untranslated
from model.config import ConfigError
from model.nbcc.config import NbccScenario
from model.nbcc.sim_clustering import UPDATE_REJECTED
from model.nbcc.sim_layout import bucket_of as model_bucket_of
from model.nbcc.sim_plan import TablePlan
from model.nbcc.sim_table import HEARTBEAT_REFUSED, run_table
from scenarios import catalogue
from scenarios.catalogue import Entry

VARIANT = "hudi-1.2.0"  # the one release whose Spark bundle the hudi world runs
# the heartbeat on Hudi when the entry's outlasts its simulated run: 6 min x the variant's 2 misses, longer
# than a run's timeout (engines/hudi_spark/run.py TIMEOUT_S), so no clean rolls a killed attempt back
HEARTBEAT_MS = 360_000


def load_entry(field: str, name: str, overrides: Sequence[str] = ()) -> Entry:
    """Catalogue entry ``name`` when Hudi's Spark writers run its kind: an NBCC entry, or an OCC (timeline)
    entry (:func:`engines.hudi_spark.plans.load_occ_entry`); else ConfigError naming ``field``."""
    entry = catalogue.load(name, overrides)
    if isinstance(entry.config, NbccScenario):
        return entry
    return load_occ_entry(field, name, overrides)


def _refuse_untranslatable(sc: NbccScenario) -> None:
    n = sc.nbcc
    if n.variant != VARIANT:
        raise ConfigError("nbcc.variant", n.variant, "Hudi 1.2.0's Spark bundle is the only one served: the "
                          f"hudi world runs variant {VARIANT} (1.2.1's reader reads its table in hcc "
                          "differential writers)")
    if n.time_generator != "skew-adjusting":
        raise ConfigError("nbcc.time_generator", n.time_generator,
                          "Hudi's writers draw their times with Hudi's own skew-adjusting generator")
    for name in ("writer_deaths", "cutoffs", "heartbeat_start_failures", "shutdowns"):
        if getattr(sc.faults, name):
            raise ConfigError(f"faults.{name}", len(getattr(sc.faults, name)),
                              "faults are not translated to the hudi world yet")
    if n.read_every_ms:
        raise ConfigError("nbcc.read_every_ms", n.read_every_ms,
                          "a reader during the run is not translated (Hudi's writers read at their end)")


def simulated_attempts(plan: TablePlan, seed: int) -> Outline:
    """Every writer's deltacommit attempts and the compaction service's operations of the simulated run
    (:func:`engines.hudi_spark.nbcc_sim.outline`)."""
    return outline(plan, run_table(plan, seed).events)


def _outcome(a: SimAttempt) -> str:
    """The model's outcome of an operation: ``ok``, ``failed`` (part-way: its process killed on Hudi),
    ``rejected`` (a deltacommit a pending clustering plan refused, NBC3), ``refused`` (a clustering whose
    plan was written and whose execution was refused, NBC1, NBC2) or ``heartbeat-refused`` (a compaction
    execution a killed executor's live heartbeat refused, or a plan scheduled behind it, NB34: no kill)."""
    if a.ok_ms is not None:
        return "ok"
    if a.op == "cluster":
        return "refused"
    if a.reason == HEARTBEAT_REFUSED:
        return "heartbeat-refused"
    return "rejected" if a.reason == UPDATE_REJECTED else "failed"


def _killed(a: SimAttempt) -> bool:
    """Whether Hudi's process is killed in operation ``a`` (the model failed it part-way)."""
    return _outcome(a) == "failed"


def _service_batch(a: SimAttempt, i: int, kept: Sequence[SimAttempt], after_commits: int,
                   model: dict[str, Any], faults: list[WriterFault], restart: int | None) -> dict[str, Any]:
    """The compactor's batch ``i`` for operation ``a`` (a compaction's execution or a clustering); a failed
    execution appends its kill to ``faults`` (inside the batch: after its first base file PUT when the model
    wrote one, else after its .compaction.inflight PUT)."""
    if a.op == "cluster":  # run_clustering once the deltacommits the model's plan found past .inflight are
        begun = sum(1 for x in kept if x.op == "upsert" and x.inflight_ms is not None
                    and x.inflight_ms < a.invoked_ms)
        return {"op": "cluster", "partition": PARTITION, "rows": [], "after_commits": after_commits,
                "after_instants": {"deltacommit.inflight": begun} if begun else {}, "model": model}
    batch: dict[str, Any] = {"op": "compact", "rows": [], "after_commits": after_commits, "model": model}
    if a.pending:  # the plan an earlier execution left pending: run_compaction's execute
        batch["pending"] = True
    if _killed(a):
        key = BASE_PUT if a.logs_written else COMPACTION_INFLIGHT_PUT
        faults.append(WriterFault(a.writer, "kill", key, "PUT", 1, restart_at=restart, batch=i))
        model["killed_at"] = "its first base file PUT" if a.logs_written else "its .compaction.inflight PUT"
    return batch


def hudi_keys(plan: TablePlan) -> dict[int, str]:
    """Model key number -> the Hudi key of the same simple bucket (the entry's bucket count) and rank."""
    keys = sorted({k for w in plan.writers for b in w.batches for k, _ in b.rows})
    rank: dict[int, int] = {}
    out = {}
    for k in keys:
        bucket = model_bucket_of(f"k{k}", plan.buckets)
        out[k] = key_in_bucket(bucket, plan.buckets, rank.get(bucket, 0))
        rank[bucket] = rank.get(bucket, 0) + 1
    return out


def hudi_value(ts: int, writer: int, batch: int) -> int:
    """A row's value and ordering field: ordered as the model's ``ts``, then by writer and batch."""
    return (ts * 100 + writer) * 100 + batch


def nbcc_entry_plans(name: str, sc: NbccScenario, max_ops: int = MAX_OPS) -> EntryPlans:
    """The plans of NBCC catalogue entry ``name`` (its config ``sc``), from its simulated run, its seed."""
    if max_ops < 1:
        raise ConfigError("max_ops", max_ops, "must be 1 or more")
    _refuse_untranslatable(sc)
    plan = sc.plan(sc.seed)
    ol = simulated_attempts(plan, sc.seed)
    if plan.heartbeat_expiry_ms <= ol.last_ms:
        raise ConfigError("nbcc.heartbeat_interval_ms", plan.heartbeat_interval_ms,
                          f"the heartbeat expires ({plan.heartbeat_expiry_ms} ms) within the simulated run "
                          f"({ol.last_ms} ms): a clean rolling failed writes back mid-run is not translated")
    per: dict[str, list[SimAttempt]] = {}
    for a in ol.attempts:
        if left_to_the_proxy(a):
            continue
        per.setdefault(a.writer, [])
        if len(per[a.writer]) < max_ops:
            per[a.writer].append(a)
    kept = sorted((a for v in per.values() for a in v), key=lambda a: a.invoked_ms)
    mapped = map_faults(sc.faults, ol, per)
    keys = hudi_keys(plan)
    first = next((a for a in kept if not a.compaction), None)  # it creates the table
    batches: dict[str, list[dict[str, Any]]] = {f"w{i}": [] for i in range(1, len(plan.writers) + 1)}
    faults: list[WriterFault] = list(mapped.faults)
    for w, todo in per.items():
        index = int(w[1:])
        puts = {"log": 0, "inflight": 0}  # this writer's matching PUTs before each attempt
        for i, a in enumerate(todo):
            done = sum(1 for x in kept if x.ok_ms is not None and x.ok_ms < a.invoked_ms)
            plans_before = sum(1 for x in kept if x.op == "cluster" and x.invoked_ms < a.invoked_ms)
            model: dict[str, Any] = {"instant": a.instant, "batch": a.batch, "attempt": a.attempt,
                                     "outcome": _outcome(a)}
            batch: dict[str, Any]
            restart = None if (w, a.instant) in mapped.not_restarted else i + 1
            after_kill = i > 0 and _killed(todo[i - 1])
            if a.compaction:
                batch = _service_batch(a, i, kept, max(done, 1), model, faults, restart)
                if after_kill:
                    batch["after_info"] = {"process": w, "f": "kill"}
                batches.setdefault(w, []).append(batch)
                continue
            rows = [{"key": keys[k], "partition": PARTITION, "value": hudi_value(ts, index, a.batch)}
                    for k, ts in plan.writers[index - 1].batches[a.batch].rows]
            batch = {"op": "upsert", "rows": rows, "after_commits": done, "model": model}
            if plans_before:  # a clustering plan the model's attempt found pending (NBC3)
                batch["after_instants"] = {"clustering.requested": plans_before}
            if after_kill:  # the restarted writer: after its kill
                batch["after_info"] = {"process": w, "f": "kill"}
            elif a is not first and done == 0 and first is not None:  # the table is the first attempt's
                if first.ok_ms is not None:
                    batch["after_commits"] = 1
                else:
                    batch["after_info"] = {"process": first.writer, "f": "kill"}
            buckets = {model_bucket_of(f"k{k}", plan.buckets)
                       for k, _ in plan.writers[index - 1].batches[a.batch].rows}
            if a.reason == UPDATE_REJECTED:  # refused before its .inflight (NBC3): no PUT of its own
                batches[w].append(batch)
                continue
            puts["inflight"] += 1
            if a.ok_ms is None:
                logs = a.logs_written > 0
                pattern, nth = (LOG_PUT, puts["log"] + 1) if logs else (INFLIGHT_PUT, puts["inflight"])
                # restarted even after its last attempt: it then only reads, after the kill
                faults.append(WriterFault(w, "kill", pattern, "PUT", nth, restart_at=restart))
                batch["model"]["killed_at"] = "its first log PUT" if logs else "its .inflight PUT"
                puts["log"] += 1 if logs else 0
            else:
                puts["log"] += len(buckets)
            batches[w].append(batch)
    untranslated = [
        "work, think and start times are Hudi's own (the plan fixes each writer's order and waits for the "
        "commits the simulation had completed when each attempt began)",
        f"heartbeat {HEARTBEAT_MS} ms x {plan.tolerable_misses} misses on Hudi (the entry's "
        f"{plan.heartbeat_interval_ms} ms outlasts its simulated run, as this outlasts a Hudi run)",
        f"keys: the model's k<n> as Hudi keys of the same simple bucket of {plan.buckets} "
        f"({', '.join(f'k{k}={v}' for k, v in sorted(keys.items()))})",
    ]
    planned = len({a.instant for a in ol.attempts if a.op == "compact"})
    if plan.compactions:
        untranslated.append(
            f"nbcc.compactions = {len(plan.compactions)}: the {planned} compaction plan(s) the simulation "
            "executed are Hudi's run_compaction (scheduleandexecute) on a compactor "
            f"{plan.compactor_node}, each planned by Hudi when the simulation planned it (the table's "
            "commits then), hoodie.compact.inline.max.delta.commits = 1; an execution the model fails "
            "part-way is the compactor killed after its .compaction.inflight or first base file PUT, and a "
            "later execution of the pending plan run_compaction's execute; one the model refused for the "
            "killed executor's live heartbeat (Hudi's variants, NB34) a run_compaction Hudi must refuse too "
            "(its heartbeat, 6 min x misses, outlasts a run; a model execution after the heartbeat expired "
            "is never translated, as an entry whose heartbeat expires within its simulated run is refused); "
            "one failing for a storage fault "
            f"is the proxy's to fail; {ol.unfinished} planned and never executed to the end not run")
    if plan.clusterings:
        untranslated.append(
            f"nbcc.clustering_at_ms = {[c.at_ms for c in plan.clusterings]}: each clustering the simulation "
            f"planned is Hudi's run_clustering on {plan.compactor_node} once the table has the deltacommits "
            "the model's plan found past their .inflight (after_instants), and each deltacommit begun after "
            "a plan waits for it on the timeline")
    if sc.faults.crashes or sc.faults.pauses:
        untranslated.append(
            "crashes and pauses at a request the model and Hudi share, not at a time (nbcc_faults.py): "
            "inside an attempt after its first file (or .inflight) PUT, between two after the first request "
            "once the previous ended; a restart is at once (the new JVM's start is the delay)")
        untranslated += mapped.untranslated
    if any(len(v) < sum(1 for a in ol.attempts if a.writer == w) for w, v in per.items()):
        untranslated.append(f"each writer's first {max_ops} deltacommit attempts only (the entry runs more)")
    wrote_more = [a for v in per.values() for a in v if a.ok_ms is None and a.logs_written > 1]
    if wrote_more:
        which = ", ".join(f"{a.writer} batch {a.batch}: {a.logs_written}" for a in wrote_more)
        untranslated.append(f"a failed attempt that wrote several logs in the model is killed after its "
                            f"first ({which})")
    errors = proxy_rules(sc.faults.errors, sorted(batches), plan.base)
    untranslated += errors_untranslated(errors)
    options = {"hoodie.metadata.enable": str(plan.metadata_table).lower(),
               "hoodie.bucket.index.num.buckets": str(plan.buckets),
               "hoodie.client.heartbeat.interval_in_ms": str(HEARTBEAT_MS),
               "hoodie.client.heartbeat.tolerable.misses": str(plan.tolerable_misses),
               "hoodie.clean.automatic": str(plan.auto_clean).lower(),
               # the compaction service plans whenever asked (the model's slots; NB10's trigger not modelled)
               "hoodie.compact.inline.max.delta.commits": "1"}
    if errors or sc.faults.crashes or sc.faults.pauses:
        # a storage fault on the lock file can leave it dangling until its validity ends, and a pause
        # outlast it: the model's validity
        lock = plan.lock_config()
        options |= {"hoodie.write.lock.storage.validity.timeout.secs": str(lock.validity_secs),
                    "hoodie.write.lock.storage.renew.interval.secs": str(lock.renew_interval_secs)}
        untranslated.append(f"the lock's validity {lock.validity_secs} s (renewal {lock.renew_interval_secs} "
                            "s), the model's, as a storage fault can leave the lock file dangling until it "
                            "ends or a pause outlasts it (Hudi's default 300 s would outlast a run)")
    return EntryPlans(name, sc.seed, batches, options, untranslated, tuple(faults), errors)


def hudi_plans(entry: Entry, max_ops: int = MAX_OPS) -> tuple[str, EntryPlans]:
    """The protocol Hudi's writers run ``entry`` under (``nbcc`` or ``occ``) and its plans (an OCC entry's:
    :func:`engines.hudi_spark.plans.entry_plans`)."""
    if isinstance(entry.config, NbccScenario):
        return "nbcc", nbcc_entry_plans(entry.config.name, entry.config, max_ops)
    return "occ", entry_plans(entry.config.name, entry.config, max_ops)

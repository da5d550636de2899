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
- **Failed attempts.** An attempt the model fails part-way (an injected failure after ``n`` logs) becomes its
  writer killed (SIGKILL of its process group, :class:`~engines.hudi_spark.launch.WriterFault`) at the same
  point: after its first log PUT when the model wrote one or more logs (Hudi writes one log per file group and
  deltacommit, so "after n logs" is "after the first"), after its ``.deltacommit.inflight`` PUT when it wrote
  none. The model's writer retries the batch as a new deltacommit: on Hudi the writer restarts (a new process,
  the same name) from the next batch, as a Spark job that died is run again; after its last batch it restarts
  too, and only reads the table (so a read follows every kill).
- **Compactions.** Each compaction the simulated compaction service planned (node ``w{N+1}``) is Hudi's
  ``run_compaction`` procedure (``scheduleandexecute``, :func:`engines.hudi_spark.writer.compact`) on a
  compactor process of that name, once the table has the commits the simulation had completed when it
  planned; Hudi then plans it from the table it finds (``hoodie.compact.inline.max.delta.commits = 1``: the
  model's slots, not Hudi's trigger, NB10).

What the hudi world cannot apply is refused by field (variants other than ``hudi-1.2.0``: Hudi 1.2.0's bundle
is the only one served; another time generator; crashes and pauses; a reader during the run;
a heartbeat that expires within the run) or listed in :attr:`EntryPlans.untranslated` (compactions that fail
part-way in the simulation; the heartbeat, scaled; timings). Storage faults (``faults.errors``) are the fault
proxy's rules (:mod:`engines.hudi_spark.storage_faults`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engines.hudi_spark.launch import WriterFault
from engines.hudi_spark.nbcc import PARTITION, key_in_bucket
from engines.hudi_spark.plans import MAX_OPS, EntryPlans, entry_plans, load_occ_entry
from engines.hudi_spark.storage_faults import proxy_rules
from engines.hudi_spark.storage_faults import untranslated as errors_untranslated
from model.config import ConfigError
from model.nbcc.config import NbccScenario
from model.nbcc.sim_layout import bucket_of as model_bucket_of
from model.nbcc.sim_plan import TablePlan
from model.nbcc.sim_table import run_table
from scenarios import catalogue
from scenarios.catalogue import Entry

VARIANT = "hudi-1.2.0"  # the one release whose Spark bundle the hudi world runs
# a log file of the data table (not a marker or the metadata table's, both under .hoodie/)
LOG_PUT = rf"^(?!.*/\.hoodie/).*/{PARTITION}/\.[^/]*\.log\."
INFLIGHT_PUT = r"table/\.hoodie/timeline/\d{17}\.deltacommit\.inflight$"
# the heartbeat on Hudi when the entry's outlasts its simulated run: 6 min x the variant's 2 misses, longer
# than a run's timeout (engines/hudi_spark/run.py TIMEOUT_S), so no clean rolls a killed attempt back
HEARTBEAT_MS = 360_000


@dataclass(frozen=True)
class SimAttempt:
    """One deltacommit attempt (or a compaction the compaction service planned) of the simulated run."""

    writer: str
    batch: int
    attempt: int
    instant: str
    invoked_ms: int
    ok_ms: int | None  # when it completed (None: failed)
    logs_written: int  # logs it wrote before failing (failed attempts)
    compaction: bool = False


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
    for name in ("crashes", "pauses", "writer_deaths", "cutoffs", "heartbeat_start_failures",
                 "shutdowns"):
        if getattr(sc.faults, name):
            raise ConfigError(f"faults.{name}", len(getattr(sc.faults, name)),
                              "faults are not translated to the hudi world yet")
    if n.read_every_ms:
        raise ConfigError("nbcc.read_every_ms", n.read_every_ms,
                          "a reader during the run is not translated (Hudi's writers read at their end)")
    if n.clustering_at_ms:
        raise ConfigError("nbcc.clustering_at_ms", list(n.clustering_at_ms),
                          "clusterings are not translated to the hudi world yet (Hudi 1.2.0 plans one on an "
                          "NBCC table and never executes it: fidelity NBC1-NBC5)")


def simulated_attempts(plan: TablePlan, seed: int) -> tuple[list[SimAttempt], int, int]:
    """Every writer's deltacommit attempts and the compactions that completed (the compaction service's,
    node ``plan.compactor_node``) of the simulated run, in invoke order; how many planned compactions never
    completed, and when the run's last deltacommit ended (ms)."""
    writers = {f"w{i}" for i in range(1, len(plan.writers) + 1)}
    begun: dict[str, dict[str, Any]] = {}
    ended: dict[str, tuple[int | None, int]] = {}
    planned: dict[str, int] = {}
    compacted: dict[str, int] = {}
    last = 0
    for e in run_table(plan, seed).events:
        if e.f == "compaction-plan" and e.type == "ok":
            planned[e.value["instant"]] = e.time
        elif e.f == "compaction" and e.type == "ok":
            compacted[e.value["instant"]] = e.time
        if e.f != "deltacommit" or e.process not in writers:
            continue
        if e.type == "invoke":
            begun[e.value["instant"]] = {**e.value, "time": e.time}
        elif e.value.get("instant") in begun:
            logs = int(e.value.get("logs_written", 0))
            ended[e.value["instant"]] = (e.time if e.type == "ok" else None, logs)
            last = max(last, e.time)
    out = [SimAttempt(v["writer"], int(v["batch"]), int(v["attempt"]), inst, int(v["time"]),
                      *ended.get(inst, (None, 0)))
           for inst, v in begun.items()]
    # the compactions that completed (one failing part-way and never finished is not translated)
    done = sorted((t, inst) for inst, t in planned.items() if inst in compacted)
    out += [SimAttempt(plan.compactor_node, i, 0, inst, t, compacted[inst], 0, compaction=True)
            for i, (t, inst) in enumerate(done)]
    return sorted(out, key=lambda a: (a.invoked_ms, a.instant)), len(planned) - len(done), last


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
    attempts, unfinished, run_end_ms = simulated_attempts(plan, sc.seed)
    if plan.heartbeat_expiry_ms <= run_end_ms:
        raise ConfigError("nbcc.heartbeat_interval_ms", plan.heartbeat_interval_ms,
                          f"the heartbeat expires ({plan.heartbeat_expiry_ms} ms) within the simulated run "
                          f"({run_end_ms} ms): a clean rolling failed writes back mid-run is not translated")
    per: dict[str, list[SimAttempt]] = {}
    for a in attempts:
        per.setdefault(a.writer, [])
        if len(per[a.writer]) < max_ops:
            per[a.writer].append(a)
    kept = sorted((a for v in per.values() for a in v), key=lambda a: a.invoked_ms)
    keys = hudi_keys(plan)
    first = next((a for a in kept if not a.compaction), None)  # it creates the table
    batches: dict[str, list[dict[str, Any]]] = {f"w{i}": [] for i in range(1, len(plan.writers) + 1)}
    faults: list[WriterFault] = []
    for w, todo in per.items():
        index = int(w[1:])
        puts = {"log": 0, "inflight": 0}  # this writer's matching PUTs before each attempt
        for i, a in enumerate(todo):
            done = sum(1 for x in kept if x.ok_ms is not None and x.ok_ms < a.invoked_ms)
            model = {"instant": a.instant, "batch": a.batch, "attempt": a.attempt,
                     "outcome": "ok" if a.ok_ms is not None else "failed"}
            if a.compaction:  # the compaction service's plan: Hudi's run_compaction (writer.compact)
                batches.setdefault(w, []).append({"op": "compact", "rows": [], "after_commits": max(done, 1),
                                                  "model": model})
                continue
            rows = [{"key": keys[k], "partition": PARTITION, "value": hudi_value(ts, index, a.batch)}
                    for k, ts in plan.writers[index - 1].batches[a.batch].rows]
            batch: dict[str, Any] = {"op": "upsert", "rows": rows, "after_commits": done, "model": model}
            if i > 0 and todo[i - 1].ok_ms is None:  # the restarted writer: after its kill
                batch["after_info"] = {"process": w, "f": "kill"}
            elif a is not first and done == 0 and first is not None:  # the table is the first attempt's
                if first.ok_ms is not None:
                    batch["after_commits"] = 1
                else:
                    batch["after_info"] = {"process": first.writer, "f": "kill"}
            buckets = {model_bucket_of(f"k{k}", plan.buckets)
                       for k, _ in plan.writers[index - 1].batches[a.batch].rows}
            puts["inflight"] += 1
            if a.ok_ms is None:
                logs = a.logs_written > 0
                pattern, nth = (LOG_PUT, puts["log"] + 1) if logs else (INFLIGHT_PUT, puts["inflight"])
                # restarted even after its last attempt: it then only reads, after the kill
                faults.append(WriterFault(w, "kill", pattern, "PUT", nth, restart_at=i + 1))
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
    planned = sum(1 for a in attempts if a.compaction)
    if plan.compactions:
        untranslated.append(
            f"nbcc.compactions = {len(plan.compactions)}: the {planned} compaction(s) the simulation "
            "completed are Hudi's run_compaction (scheduleandexecute) on a compactor "
            f"{plan.compactor_node}, each planned by Hudi when the simulation planned it (the table's "
            "commits then), hoodie.compact.inline.max.delta.commits = 1; "
            f"{unfinished} planned and never completed (failing part-way) not run")
    if any(len(v) < sum(1 for a in attempts if a.writer == w) for w, v in per.items()):
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
    if errors:  # a fault on the lock file can leave it dangling until its validity ends: the model's validity
        lock = plan.lock_config()
        options |= {"hoodie.write.lock.storage.validity.timeout.secs": str(lock.validity_secs),
                    "hoodie.write.lock.storage.renew.interval.secs": str(lock.renew_interval_secs)}
        untranslated.append(f"the lock's validity {lock.validity_secs} s (renewal {lock.renew_interval_secs} "
                            "s), the model's, as a storage fault can leave the lock file dangling until it "
                            "ends (Hudi's default 300 s would outlast a run)")
    return EntryPlans(name, sc.seed, batches, options, untranslated, tuple(faults), errors)


def hudi_plans(entry: Entry, max_ops: int = MAX_OPS) -> tuple[str, EntryPlans]:
    """The protocol Hudi's writers run ``entry`` under (``nbcc`` or ``occ``) and its plans (an OCC entry's:
    :func:`engines.hudi_spark.plans.entry_plans`)."""
    if isinstance(entry.config, NbccScenario):
        return "nbcc", nbcc_entry_plans(entry.config.name, entry.config, max_ops)
    return "occ", entry_plans(entry.config.name, entry.config, max_ops)

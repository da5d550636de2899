"""Two or more Hudi Spark writers (real Hudi bytecode) on one table (copy-on-write under OCC, or merge-on-read
under NBCC), on SeaweedFS (or MinIO: ``--backend minio``) through the fault proxy, and the run directory they
leave.

``python -m engines.hudi_spark.run --out DIR [--rounds N] [--keys K] [--hudi-version V] [--workload W]``
runs the conflict workload (:func:`conflict_plan`, the default; ``--workload duplicate-key`` runs
:func:`duplicate_plan`): ``w1`` seeds the table, then every writer upserts the same keys (one file group)
``N`` times, so Hudi's OCC must abort some of them with HoodieWriteConflictException.
``--protocol nbcc`` runs merge-on-read writers under Hudi's NBCC (:mod:`engines.hudi_spark.nbcc`:
``--workload overlap``, the default, ``uncommitted-anchor``, which kills ``w1`` mid-commit, or its control
``anchor-first``), or an NBCC catalogue entry's plans (:mod:`engines.hudi_spark.nbcc_plans`); a run with a
writer fault or of an entry also writes ``fsview.json``, the file slices Hudi 1.2.0's and 1.2.1's own readers
build of the table (:mod:`engines.hudi_spark.fsview`).
Every writer reads the table at its end. The run directory holds ``history.jsonl`` (each writer's
invoke/ok/fail lines, Hudi's exception class and message on a failure), ``table/`` (every object Hudi
wrote under the run's prefix, the lock file under ``.hoodie/.locks`` among them), ``timeline.json`` (the
instants read from ``.hoodie/timeline``), ``verdict.json`` (world ``hudi``, the version, each jar's
sha256, the checks), ``metrics.json`` and each writer's plan and log; its files are written through the
one run-directory writer (``engines.rundir.RunWriter``, the format's kind ``hudi-writers``) and read
through ``reports.load.load_writers_run``.

What cannot be pinned: the interleaving of the writers' JVMs (thread timing, JIT, GC), so which upserts
abort varies between runs; the plan fixes only the order "seed first".
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from backends.fault_proxy import fault_proxy
from backends.hudi.artifacts import ArtifactError, check_version, spark_checksums
from backends.launchers.minio import cached_binary, minio
from backends.launchers.process import LaunchError, Unavailable, which
from backends.launchers.seaweedfs import seaweedfs
from engines.hudi_spark.check import check_run
from engines.hudi_spark.classpath import writer_classpath
from engines.hudi_spark.fsview import reader_views
from engines.hudi_spark.launch import FaultInjector, WriterFault, WriterProcess, start_writer, wait_all
from engines.hudi_spark.nbcc import WORKLOADS as NBCC_WORKLOADS
from engines.hudi_spark.plans import EntryPlans
from engines.hudi_spark.storage_faults import TABLE, proxy_keys
from engines.hudi_spark.txns import isolation
from engines.rundir import RunWriter
from model.run_format import FSVIEW, HUDI_WRITERS, PROXY_LOG, TIMELINE
from reports.load import load_writers_history

BUCKET = "hcc-hudi"
PREFIX = "hcc-hudi-spark/"
VERSION = "1.2.0"
TIMEOUT_S = 600.0
BACKENDS = {"seaweedfs": seaweedfs, "minio": minio}


def conflict_plan(writers: list[str], rounds: int, keys: int) -> dict[str, list[dict[str, Any]]]:
    """Batches per writer: the first writer seeds ``keys`` keys in partition ``p0``, then every writer upserts
    all of them ``rounds`` times (values ``1000 * writer + round``, so each write is told apart)."""
    def rows(v: int) -> list[dict[str, Any]]:
        return [{"key": f"k{j}", "partition": "p0", "value": v} for j in range(keys)]

    plans: dict[str, list[dict[str, Any]]] = {}
    for n, w in enumerate(writers, start=1):
        seed = [{"op": "upsert", "rows": rows(0)}] if n == 1 else []
        plans[w] = seed + [{"op": "upsert", "rows": rows(1000 * n + r), "after_commits": 1}
                           for r in range(1, rounds + 1)]
    return plans


def duplicate_plan(writers: list[str], rounds: int, keys: int) -> dict[str, list[dict[str, Any]]]:
    """Batches per writer: every writer upserts the same ``keys`` new keys into the empty table at once, then
    ``rounds - 1`` more times (the catalogue's ``tl-hudi-occ-duplicate-key``: Hudi's OCC sees no conflict
    between two new file groups, upstream's known limitation, apache/hudi #3246 and #9831)."""
    return {w: [{"op": "upsert", "rows": [{"key": f"k{j}", "partition": "p0", "value": 1000 * n + r}
                                          for j in range(keys)]} for r in range(rounds)]
            for n, w in enumerate(writers, start=1)}


PLANS = {"conflict": conflict_plan, "duplicate-key": duplicate_plan}


def _no_faults(writers: list[str]) -> list[WriterFault]:
    return []


@dataclass(frozen=True)
class Setup:
    """A protocol as Hudi's Spark writers run it: its workloads (each a plan maker and the writer faults it
    injects, the first the default), the table type, which acknowledged write of a key a read must show
    (``check.ORDERINGS``), whether catalogue entries run under it (engines/hudi_spark/plans.py), whether
    Elle's records view reads its tables (copy-on-write base files), whether a run with a writer
    fault also records Hudi 1.2.0's and 1.2.1's file slices (``fsview.json``), whether the final read lists
    as the writers do (the entry's ``hoodie.metadata.enable``; else storage), and the entry field that
    holds its writer count."""

    workloads: Mapping[str, tuple[Callable[..., dict[str, list[dict[str, Any]]]],
                                  Callable[[list[str]], list[WriterFault]]]]
    table_type: str
    ordering: str
    entries: bool
    isolation: bool
    reader_views: bool
    reader_lists_as_writers: bool
    writers_field: str


SETUPS = {
    "occ": Setup({name: (make, _no_faults) for name, make in PLANS.items()}, "COPY_ON_WRITE", "completion",
                 entries=True, isolation=True, reader_views=False, reader_lists_as_writers=False,
                 writers_field="workload.writers"),
    "nbcc": Setup(dict(NBCC_WORKLOADS), "MERGE_ON_READ", "event-time",
                  entries=True, isolation=False, reader_views=True, reader_lists_as_writers=True,
                  writers_field="nbcc.writers"),
}
# protocol -> its workloads, the first the default (NBCC's: engines/hudi_spark/nbcc.py)
WORKLOADS = {name: tuple(s.workloads) for name, s in SETUPS.items()}


def list_table(ep: Any, prefix: str) -> dict[str, bytes]:
    """Every object under ``prefix`` (the run's own), read straight from the server (not the proxy).

    Not :func:`backends.realworld.read_prefix`: s3a writes directory markers (keys ending in ``/``), which
    the harness's backends refuse as keys."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=ep.url, aws_access_key_id=ep.access_key,
                      aws_secret_access_key=ep.secret_key, region_name=ep.region)
    objects: dict[str, bytes] = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=ep.bucket, Prefix=prefix):
        for o in page.get("Contents") or []:
            objects[o["Key"]] = s3.get_object(Bucket=ep.bucket, Key=o["Key"])["Body"].read()
    return objects


def timeline_of(objects: dict[str, bytes], table_prefix: str) -> list[dict[str, str]]:
    """The instants of ``.hoodie/timeline`` (Hudi 1.x layout): requested time, state, action, completion."""
    out = []
    for key in sorted(objects):
        rel = key[len(table_prefix):]
        if not rel.startswith(".hoodie/timeline/") or rel.endswith("/"):
            continue
        name = rel.rsplit("/", 1)[1]
        stem, _, action = name.partition(".")
        requested, _, completed = stem.partition("_")
        state = "completed" if completed else ("requested" if action.endswith("requested") else "inflight")
        out.append({"requested": requested, "completed": completed, "state": state, "file": name,
                    "action": action.removesuffix(".requested") or "commit"})
    return out


NOT_PINNED = ("the interleaving of the writers' JVMs (JVM start, thread timing, JIT, GC): which commits "
              "overlap, and so which abort, varies between runs; the plan fixes each writer's batches and "
              "their order")


def run(out: Path, *, version: str = VERSION, writers: int = 2, rounds: int = 3, keys: int = 3,
        workload: str | None = None, python: str | None = None,
        entry: EntryPlans | None = None, scenario_toml: str = "", protocol: str = "occ",
        timeout_s: float = TIMEOUT_S, backend: str = "seaweedfs") -> dict[str, Any]:
    """Run a workload on Hudi ``version`` and write the run directory ``out``; the verdict.

    ``protocol``: ``occ`` (copy-on-write, workloads ``conflict`` (default) and ``duplicate-key``) or ``nbcc``
    (merge-on-read, NBCC, simple bucket index: ``overlap`` (default), ``uncommitted-anchor`` and its control
    ``anchor-first``, whose writer fault the run injects; :mod:`engines.hudi_spark.nbcc`). ``entry``: a
    catalogue entry's plans (:mod:`engines.hudi_spark.plans`, :mod:`engines.hudi_spark.nbcc_plans` under
    ``nbcc``; its TOML in ``scenario_toml``) instead of the fixed ``workload``; a writer an entry's fault
    kills with ``restart_at`` is started again from that batch.
    Writers still running after ``timeout_s`` are killed (exit code None in metrics.json). ``backend``:
    ``seaweedfs`` or ``minio`` (the build of backends/install.sh or one on PATH; Unavailable naming why
    not)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}: one of {', '.join(BACKENDS)}")
    if backend == "minio" and cached_binary()[0] is None and which("minio") is None:
        raise Unavailable(cached_binary()[1] or "no minio binary")
    if protocol not in WORKLOADS:
        raise ValueError(f"protocol={protocol!r}: one of {', '.join(WORKLOADS)}")
    setup = SETUPS[protocol]
    if entry is not None and not setup.entries:
        raise ValueError(f"protocol={protocol!r}: catalogue entries run under "
                         f"{', '.join(n for n, s in SETUPS.items() if s.entries)}")
    workload = workload or WORKLOADS[protocol][0]
    if entry is None and workload not in WORKLOADS[protocol]:
        raise ValueError(f"workload={workload!r}: under {protocol} one of {', '.join(WORKLOADS[protocol])}")
    check_version(version)
    classpath = [str(p) for p in writer_classpath(version)]  # ArtifactError: no bundle for the version
    if (out / "table").exists():  # a second run would copy its table over the first's: two runs in one
        raise ValueError(f"out={str(out)!r}: holds a run already (table/): give a new or empty folder")
    out.mkdir(parents=True, exist_ok=True)
    if entry is not None:
        plans, options, workload = entry.batches, entry.options, f"entry {entry.entry}"
        names = sorted(plans)
    else:
        names = [f"w{i}" for i in range(1, writers + 1)]
        make, inject = setup.workloads[workload]
        plans, options = make(names, rounds, keys), {}
    faults: list[WriterFault] = list(entry.faults) if entry is not None else inject(names)
    for f in faults:
        f.check(names)
    recorded = [{k: v for k, v in vars(f).items() if v is not None} for f in faults]  # TOML has no None
    hudi: dict[str, Any] = {"version": version, "workload": workload, "writers": names,
                            "not_pinned": NOT_PINNED, "plans": plans, "options": options}
    if entry is not None:
        hudi |= {"entry": entry.entry, "seed": entry.seed, "untranslated": entry.untranslated,
                 "faults": recorded,
                 # the storage faults as the proxy applies them (keys under the run's prefix; no end: 2**62)
                 "proxy_errors": [vars(r) for r in entry.errors], "proxy_key_prefix": f"{PREFIX}{out.name}/"}
    else:
        hudi |= {"rounds": rounds, "keys": keys, "protocol": protocol,
                 "faults": recorded}
    writer = RunWriter(out, protocol, HUDI_WRITERS)
    writer.scenario(scenario_toml + tomli_w.dumps({"hudi": hudi}))
    table_prefix = f"{PREFIX}{out.name}/{TABLE}/"
    base_path = f"s3a://{BUCKET}/{table_prefix.rstrip('/')}"
    history = writer.shared_history()
    injector = FaultInjector(faults, history)
    # an entry's storage faults: the proxy's rules (storage_faults.py), their keys under the run's prefix
    errors = entry.errors if entry is not None else ()
    storage = ({"errors": errors, "seed": entry.seed, **proxy_keys(f"{PREFIX}{out.name}/")}
               if entry is not None and errors else {})
    t0 = time.monotonic()
    procs: list[WriterProcess] = []
    with BACKENDS[backend](out / "server", bucket=BUCKET) as ep, \
            fault_proxy(str(ep.url), names, dialect="s3", log_path=writer.log_path(PROXY_LOG),
                        on_exchange=injector if faults else None, **storage) as proxy:
        def plan_of(w: str) -> dict[str, Any]:
            return {"writer": w, "base_path": base_path, "table": "hcc_t", "endpoint": proxy.url(w),
                    "access_key": ep.access_key, "secret_key": ep.secret_key, "region": ep.region,
                    "classpath": classpath, "history": str(history), "batches": plans[w],
                    "read_at_end": True, "options": options, "protocol": protocol,
                    # SigV2: SeaweedFS without S3 auth refuses the SDK v1's streaming (chunked) SigV4 PUTs
                    "hadoop": {"fs.s3a.signing-algorithm": "S3SignerType"} if backend == "seaweedfs" else {},
                    # an NBCC entry's readers list as its writers do (hoodie.metadata.enable)
                    "read_metadata_table": SETUPS[protocol].reader_lists_as_writers
                    and options.get("hoodie.metadata.enable") == "true"}

        def restart(w: str, first_batch: int) -> WriterProcess:
            """``w`` started again from ``first_batch`` (after a kill), its plan and log file numbered."""
            n = sum(1 for p in procs if p.name.partition("-")[0] == w) + 1
            procs.append(start_writer(f"{w}-{n}", {**plan_of(w), "first_batch": first_batch}, writer,
                                      python=python))
            return procs[-1]

        injector.restart = restart
        for w in names:
            procs.append(start_writer(w, plan_of(w), writer, python=python))
            injector.add(procs[-1])
        codes = wait_all(procs, timeout_s)
        objects = list_table(ep, table_prefix)
    wall = time.monotonic() - t0
    table = writer.table(objects, prefix=table_prefix)  # as every world keeps the table it left
    timeline = timeline_of(objects, table_prefix)
    # the file slices Hudi 1.2.0's and 1.2.1's readers build of a table a writer fault left pending files in
    views: dict[str, Any] = {}
    if setup.reader_views and (faults or entry is not None):
        views = reader_views(table, sorted({r["partition"] for b in plans.values() for x in b
                                            for r in x["rows"]}))
        writer.write_json(FSVIEW, views)
    writer.write_json(TIMELINE, timeline)
    events = load_writers_history(out)
    checks = check_run(events, timeline, ordering=setup.ordering)
    metrics = {"wall_s": round(wall, 3), "exit_codes": codes, "proxy_actions": dict(proxy.stats.actions),
               "peak_rss_mb": {p.name: round(p.peak_rss_kb / 1024) for p in procs}, **checks.pop("metrics")}
    verdict = {"world": "hudi", "workload": workload, "version": version, "real": f"Hudi {version} (real)",
               "protocol": protocol,
               "table_type": setup.table_type,
               "backend": backend, "jars": spark_checksums(version),
               "lock_client": "the harness's transcription of hudi-aws's S3StorageLockClient "
                              "(hudi-aws is not served)", **checks}
    if views:
        verdict["file_slices"] = {v: x.get("summary", x) for v, x in views.items()}
    if setup.isolation:  # Elle on the commits
        verdict["isolation"] = isolation(out, writer.write_text)
    writer.finish(verdict, metrics, report=False)
    return verdict


def main(argv: list[str] | None = None) -> int:
    """CLI: exit 0 (run written, verdict ok), 1 (a check failed), 2 (bad input, a version without bundle)."""
    ap = argparse.ArgumentParser(prog="python -m engines.hudi_spark.run", description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--hudi-version", default=VERSION)
    ap.add_argument("--writers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keys", type=int, default=3)
    ap.add_argument("--protocol", choices=tuple(WORKLOADS), default="occ")
    ap.add_argument("--backend", choices=tuple(BACKENDS), default="seaweedfs")
    ap.add_argument("--workload", help="occ: conflict (default), duplicate-key; nbcc: overlap (default), "
                                       "uncommitted-anchor, anchor-first, overlap-pause")
    a = ap.parse_args(argv)
    if a.workload is not None and a.workload not in WORKLOADS[a.protocol]:
        print(f"hudi run: --workload={a.workload}: under --protocol {a.protocol} one of "
              f"{', '.join(WORKLOADS[a.protocol])}", file=sys.stderr)
        return 2
    for field, value, lo in (("--writers", a.writers, 2), ("--rounds", a.rounds, 1), ("--keys", a.keys, 1)):
        if value < lo:
            print(f"hudi run: {field}={value}: must be {lo} or more", file=sys.stderr)
            return 2
    try:
        verdict = run(a.out, version=a.hudi_version, writers=a.writers, rounds=a.rounds, keys=a.keys,
                      workload=a.workload, protocol=a.protocol, backend=a.backend)
    except ArtifactError as e:
        print(f"hudi run: {e}", file=sys.stderr)
        return 2
    except LaunchError as e:
        print(f"hudi run: the server did not start: {e}", file=sys.stderr)
        return 2
    print(json.dumps({k: verdict[k] for k in ("valid", "commits", "conflicts", "anomalies")}, indent=1))
    return 0 if verdict["valid"] else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""One Hudi Spark writer: ``python -m engines.hudi_spark.writer PLAN.json`` (PySpark 3.5, ``local[1]``).

The plan (JSON) names the writer, the table's base path (``s3a://bucket/prefix/table``), the S3 endpoint
(the fault proxy) and credentials, the extra classpath (:mod:`engines.hudi_spark.classpath`), Hudi's write
options and the batches: ``{"op": "upsert"|"insert"|"delete"|"insert_overwrite"|"delete_partition",
"rows": [{"key", "partition", "value"}, ...]}`` (a delete's rows name the keys it deletes; Hudi's ``delete``
operation reads only their key and partition; an ``insert_overwrite`` replaces every file group of its
rows' partitions, a ``delete_partition`` every file group of the partitions its rows name, writing none of
their keys) or ``{"op": "cluster", "partition": P}``, a clustering of partition ``P`` (:func:`cluster`), or
``{"op": "compact"}``, a compaction of the merge-on-read table's file groups (:func:`compact`). Each batch
is one Hudi commit. Before it, an ``invoke`` line goes to the history file (JSON lines, flushed and
fsynced per line, so a crash keeps what was written); after it an ``ok`` line with the instant Hudi
committed, or a ``fail`` line with Hudi's exception: its class and message (the root of the chain too),
and the instant if Hudi completed it all the same (:func:`failed_instant`).
The plan's ``protocol`` (``occ``, the default, or ``nbcc``) picks Hudi's write options (:func:`hudi_options`).
A batch may wait for the table's ``after_commits`` completed commits, for ``after_instants``
(``{"<action>.<state>": n}``: n instants of that action in that state or a later one, e.g.
``{"deltacommit.inflight": 4}``, four deltacommits past their ``.inflight`` PUT, or
``{"clustering.requested": 1}``, a clustering plan) and for the harness's ``after_info`` history line
(e.g. ``{"process": "w1", "f": "kill"}``: a fault :mod:`engines.hudi_spark.launch` injected). A
``compact`` batch with ``"pending": true`` executes the pending compaction plans (``run_compaction``'s
``execute``) instead of scheduling one.
A writer restarted after a kill runs the plan from its ``first_batch``. The read at the end lists storage,
or through the metadata table when the plan's ``read_metadata_table`` is true (an NBCC entry's setting).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import IO, Any

PLAN_FIELDS = ("writer", "base_path", "table", "endpoint", "classpath", "history", "batches")
OPS = ("upsert", "insert", "delete", "insert_overwrite", "delete_partition", "cluster", "compact")
# Hudi copies write options with the commit-metadata key prefix ("_") into the commit's metadata
MARK = "_hcc_"
WAIT_POLL_S = 0.5
NOTHING_TO_CLUSTER = "nothing-to-cluster"  # an ok clustering that Hudi planned nothing for
NOTHING_TO_COMPACT = "nothing-to-compact"  # an ok compaction that Hudi planned nothing for
STATES = ("REQUESTED", "INFLIGHT", "COMPLETED")  # an instant's states in order (HoodieInstant.State)


class PlanError(ValueError):
    """A plan the writer cannot run: the message names the field and value."""


def load_plan(path: Path) -> dict[str, Any]:
    """The plan at ``path``, checked; PlanError naming the first bad field."""
    try:
        plan = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise PlanError(f"plan {path}: {e}") from None
    if not isinstance(plan, dict):
        raise PlanError(f"plan {path}: not a JSON object")
    for field in PLAN_FIELDS:
        if field not in plan:
            raise PlanError(f"plan {path}: field {field!r} is missing")
    if not str(plan["base_path"]).startswith("s3a://"):
        raise PlanError(f"plan field base_path={plan['base_path']!r}: expected s3a://bucket/...")
    for i, batch in enumerate(plan["batches"]):
        if batch.get("op") not in OPS:
            raise PlanError(f"plan field batches[{i}].op={batch.get('op')!r}: "
                            f"expected one of {', '.join(OPS)}")
        for what in batch.get("after_instants") or {}:
            action, _, state = str(what).partition(".")
            if not action or state.upper() not in STATES:
                raise PlanError(f"plan field batches[{i}].after_instants: {what!r} is not <action>.<state> "
                                f"(a state one of {', '.join(s.lower() for s in STATES)})")
        if batch["op"] == "cluster":  # a clustering names its partition and writes no rows of its own
            if not batch.get("partition") or batch.get("rows"):
                raise PlanError(f"plan field batches[{i}]: a cluster batch has a 'partition' and no rows")
            continue
        if batch["op"] == "compact":  # a compaction writes no rows of its own
            if batch.get("rows"):
                raise PlanError(f"plan field batches[{i}]: a compact batch has no rows")
            continue
        for j, row in enumerate(batch.get("rows") or []):
            for k in ("key", "partition", "value"):
                if k not in row:
                    raise PlanError(f"plan field batches[{i}].rows[{j}]: {k!r} is missing")
        if not batch.get("rows"):
            raise PlanError(f"plan field batches[{i}].rows: empty")
    if plan.get("protocol", "occ") not in PROTOCOL_OPTIONS:
        raise PlanError(f"plan field protocol={plan['protocol']!r}: expected one of "
                        f"{', '.join(PROTOCOL_OPTIONS)}")
    return plan


# protocol -> the options it adds to the OCC copy-on-write base, and the base's options it drops
PROTOCOL_OPTIONS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    # the last committed write of a key wins, as the OCC checks (ordering "completion") and the model
    # assume: with an ordering field Hudi 1.2 infers EVENT_TIME_ORDERING
    # (HoodieTableConfig#handleMergeModeConfigs), where an upsert of a smaller ``ts`` loses to the stored
    # row (seen on tl-skew-adjusting-safe: w2's later 2003 under w3's 3002)
    "occ": ({"hoodie.record.merge.mode": "COMMIT_TIME_ORDERING",
             "hoodie.write.record.merge.mode": "COMMIT_TIME_ORDERING"}, ()),
    "nbcc": ({
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        # the write config's own table type too: NBCC's check reads it (HoodieWriteConfig#getTableType,
        # 1515-1518: "hoodie.table.type", default COPY_ON_WRITE), and the first write to a new table
        # gets it from no hoodie.properties: without it that write fails the check (IllegalArgument...)
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.write.concurrency.mode": "NON_BLOCKING_CONCURRENCY_CONTROL",
        "hoodie.index.type": "BUCKET",  # HoodieIndexConfig.java:74
        "hoodie.index.bucket.engine": "SIMPLE",  # HoodieIndexConfig.java:280
        "hoodie.clean.failed.writes.policy": "LAZY",
        "hoodie.compact.inline": "false",
    }, ("hoodie.cleaner.policy.failed.writes",)),  # the same option under its old name
}


def hudi_options(plan: dict[str, Any]) -> dict[str, str]:
    """Hudi's write options for the plan: copy-on-write under OCC with the storage-based lock and LAZY
    failed-write cleaning (the plan's ``options`` override), the harness's S3 lock client's endpoint.

    ``protocol = "nbcc"``: Hudi's own configuration for non-blocking concurrency control (Hudi 1.2.0's
    sources): merge-on-read with the simple bucket index, which ``HoodieWriteConfig`` requires of NBCC
    (``Builder#validate``, HoodieWriteConfig.java:3825-3829); LAZY failed-write cleaning, required of any
    multi-writer mode (3818-3823; ``hoodie.clean.failed.writes.policy``, HoodieCleanConfig.java:153);
    no inline compaction (``hoodie.compact.inline``, HoodieCompactionConfig.java:49, false by default,
    set so a plan's ``options`` is the only way to ask for it). NBCC resolves no write conflict except
    for bulk insert (``needResolveWriteConflict``, HoodieWriteConfig.java:2999-3015), and the bucket index
    gives every writer the same file id per bucket (``BucketIdentifier#newBucketFileIdForNBCC``,
    BucketIdentifier.java:95-104), so concurrent writers append logs to one file group."""
    protocol = plan.get("protocol", "occ")
    opts = {
        "hoodie.table.name": plan["table"],
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
        "hoodie.datasource.write.recordkey.field": "key",
        "hoodie.datasource.write.partitionpath.field": "partition",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
        "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.StorageBasedLockProvider",
        "hoodie.cleaner.policy.failed.writes": "LAZY",
        "hoodie.metadata.enable": "false",
        "hoodie.embed.timeline.server": "false",
        "hoodie.upsert.shuffle.parallelism": "1",
        "hoodie.insert.shuffle.parallelism": "1",
        "hoodie.write.lock.hcc.s3.endpoint": plan["endpoint"],
        "hoodie.write.lock.hcc.s3.access.key": plan.get("access_key", "any"),
        "hoodie.write.lock.hcc.s3.secret.key": plan.get("secret_key", "any"),
        "hoodie.write.lock.hcc.s3.region": plan.get("region", "us-east-1"),
    }
    extra, dropped = PROTOCOL_OPTIONS[protocol]
    opts.update(extra)
    if opts.get("hoodie.index.type") == "BUCKET":  # the plan's bucket count, HoodieIndexConfig.java:293
        opts["hoodie.bucket.index.num.buckets"] = str(plan.get("buckets", 4))
    for key in dropped:
        del opts[key]
    opts.update({str(k): str(v) for k, v in (plan.get("options") or {}).items()})
    return opts


def spark_session(plan: dict[str, Any]) -> Any:
    """A ``local[1]`` PySpark session with Hudi's bundle and s3a pointed at the plan's endpoint."""
    from pyspark.sql import SparkSession

    cp = os.pathsep.join(plan["classpath"])
    b = (SparkSession.builder.master("local[1]").appName(f"hcc-hudi-{plan['writer']}")
         .config("spark.driver.extraClassPath", cp)
         .config("spark.driver.memory", plan.get("driver_memory", "512m"))
         .config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "1")
         .config("spark.default.parallelism", "1")
         .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
         .config("spark.kryo.registrator", "org.apache.spark.HoodieSparkKryoRegistrar")
         .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
         .config("spark.hadoop.fs.s3a.endpoint", plan["endpoint"])
         .config("spark.hadoop.fs.s3a.path.style.access", "true")
         .config("spark.hadoop.fs.s3a.connection.ssl.enabled", "false")
         .config("spark.hadoop.fs.s3a.access.key", plan.get("access_key", "any"))
         .config("spark.hadoop.fs.s3a.secret.key", plan.get("secret_key", "any"))
         .config("spark.hadoop.fs.s3a.endpoint.region", plan.get("region", "us-east-1"))
         .config("spark.hadoop.fs.s3a.aws.credentials.provider",
                 "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider")
         .config("spark.hadoop.fs.s3a.attempts.maximum", str(plan.get("s3a_attempts", 3)))
         .config("spark.hadoop.fs.s3a.retry.limit", str(plan.get("s3a_attempts", 3))))
    for k, v in (plan.get("hadoop") or {}).items():  # the plan's own s3a / Hadoop settings
        b = b.config(f"spark.hadoop.{k}", str(v))
    return b.getOrCreate()


def _line(out: IO[str], rec: dict[str, Any]) -> None:
    out.write(json.dumps(rec, sort_keys=True) + "\n")
    out.flush()
    os.fsync(out.fileno())


def java_error(exc: BaseException) -> dict[str, str]:
    """Hudi's exception behind a Py4J error: the outermost Java class and message, and the root cause's."""
    # Py4JJavaError's java_exception; PySpark's CapturedException (an IllegalArgumentException, ...) keeps
    # the Java exception as _origin
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    if java is None:
        return {"class": type(exc).__name__, "message": str(exc)[:2000]}
    top = java
    root = java
    while root.getCause() is not None and root.getCause() != root:
        root = root.getCause()
    chain: list[str] = []
    e = java
    while e is not None and len(chain) < 10:
        chain.append(e.getClass().getName())
        e = e.getCause()
    frames = [str(f) for f in list(root.getStackTrace())[:12]]  # where Hudi threw it
    return {"class": top.getClass().getName(), "message": str(top.getMessage())[:2000],
            "root_class": root.getClass().getName(), "root_message": str(root.getMessage())[:2000],
            "chain": " <- ".join(chain), "root_stack": frames}


def _meta_client(spark: Any, base_path: str) -> Any:
    jvm = spark.sparkContext._jvm  # py4j's public gateway view
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    storage_conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(conf)
    return (jvm.org.apache.hudi.common.table.HoodieTableMetaClient.builder()
            .setConf(storage_conf).setBasePath(base_path).build())


def completed_commits(spark: Any, base_path: str) -> int:
    """How many commits the table's timeline shows completed (0 when there is no table yet)."""
    try:
        meta = _meta_client(spark, base_path)
    except Exception:  # no table yet: Hudi's TableNotFoundException
        return 0
    return int(meta.getActiveTimeline().getCommitsTimeline().filterCompletedInstants().countInstants())


def instants_at_least(spark: Any, base_path: str, action: str, state: str) -> int:
    """How many instants of ``action`` the table's active timeline holds in ``state`` or a later one (0 when
    there is no table yet)."""
    try:
        meta = _meta_client(spark, base_path)
    except Exception:  # no table yet: Hudi's TableNotFoundException
        return 0
    instants = meta.getActiveTimeline().getInstants()
    least = STATES.index(state.upper())
    return sum(1 for j in range(instants.size())
               if instants.get(j).getAction() == action
               and str(instants.get(j).getState().name()) in STATES[least:])


def own_instant(spark: Any, base_path: str, writer: str, batch: int) -> str | None:
    """The completed instant whose commit metadata carries this writer's and batch's marks, or None."""
    meta = _meta_client(spark, base_path)
    timeline = meta.getActiveTimeline().getCommitsTimeline().filterCompletedInstants()
    instants = timeline.getInstants()
    for i in range(instants.size() - 1, -1, -1):
        instant = instants.get(i)
        extra = timeline.readCommitMetadata(instant).getExtraMetadata()
        if extra.get(f"{MARK}writer") == writer and extra.get(f"{MARK}batch") == str(batch):
            return f"{instant.requestedTime()}_{instant.getCompletionTime()}"
    return None


def failed_instant(spark: Any, plan: dict[str, Any], batch: int, op: str) -> dict[str, str | None]:
    """What a failed batch's line records of its instant: ``{"instant": I}``, the completed instant carrying
    its marks (:func:`own_instant`: Hudi completed it and the call failed after, e.g. in the failed-writes
    clean that ``commitStats`` runs after the commit), or ``{"instant": None}`` when none did; nothing for
    a clustering or compaction (no marks) or when the timeline cannot be read (the outcome stays unknown)."""
    if op in ("cluster", "compact"):
        return {}
    try:
        return {"instant": own_instant(spark, plan["base_path"], plan["writer"], batch)}
    except Exception:  # no table yet, or storage failing: the history does not tell
        return {}


def cluster(spark: Any, plan: dict[str, Any], opts: dict[str, str], partition: str) -> str | None:
    """A clustering of ``partition``'s file groups by Hudi's ``run_clustering`` procedure (Spark SQL
    ``CALL``: the write client schedules the plan, ``scheduleClusteringAtInstant``, and executes it,
    ``cluster(instant, true)``, completing a replacecommit), with the writer's own options (the lock, OCC,
    the table's fields); the completed instant ``<requested>_<completion>``, or None when Hudi planned
    nothing (no file group eligible: every one in a pending clustering)."""
    return _table_service(spark, plan, opts, "run_clustering", f"selected_partitions => '{partition}'")


def compact(spark: Any, plan: dict[str, Any], opts: dict[str, str], pending: bool = False) -> str | None:
    """A compaction of the merge-on-read table by Hudi's ``run_compaction`` procedure (Spark SQL ``CALL``,
    ``op => 'scheduleandexecute'``: the write client schedules a plan, ``scheduleCompaction``, and executes
    it, completing a ``commit``), with the writer's own options (NBCC, the lock, the bucket index); the
    completed instant, or None when Hudi planned nothing (no completed log to compact). ``pending``:
    ``op => 'execute'``, the pending plans only (one a killed compactor left: ``client.compact`` rolls its
    inflight back and runs it again)."""
    op = "execute" if pending else "scheduleandexecute"
    return _table_service(spark, plan, opts, "run_compaction", f"op => '{op}'")


def _table_service(spark: Any, plan: dict[str, Any], opts: dict[str, str], procedure: str,
                   args: str) -> str | None:
    """Hudi's table-service ``procedure`` on the plan's table with ``args`` and the writer's options; the
    completed instant ``<requested>_<completion>`` of the instant it returns first, or None."""
    # HoodieCLIUtils#extractOptions splits "k=v" pairs on ","; none of the writer's values holds "," or "="
    options = ",".join(f"{k}={v}" for k, v in sorted(opts.items()))
    call = f"CALL {procedure}(path => '{plan['base_path']}', {args}, options => '{options}')"
    got = spark.sql(call).collect()
    if not got:
        return None
    requested = str(got[0][0])
    timeline = _meta_client(spark, plan["base_path"]).getActiveTimeline().filterCompletedInstants()
    instants = timeline.getInstants()
    for j in range(instants.size()):
        instant = instants.get(j)
        if instant.requestedTime() == requested:
            return f"{requested}_{instant.getCompletionTime()}"
    return None


def wait_for_info(history: Path, want: dict[str, str]) -> None:
    """Wait until the history holds an ``info`` line carrying every field of ``want``."""
    while True:
        for line in history.read_text().splitlines():
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("type") == "info" and all(e.get(k) == v for k, v in want.items()):
                return
        time.sleep(WAIT_POLL_S)


def run(plan: dict[str, Any]) -> int:
    """Write every batch of ``plan`` and record the history; the number of failed batches."""
    t0 = time.time()
    failed = 0
    with open(plan["history"], "a", encoding="utf-8") as out:
        _line(out, {"process": plan["writer"], "type": "start", "time": t0, "pid": os.getpid()})
        spark = spark_session(plan)
        _line(out, {"process": plan["writer"], "type": "ready", "time": time.time(),
                    "jvm_start_s": round(time.time() - t0, 3)})
        opts = hudi_options(plan)
        try:
            for i, batch in enumerate(plan["batches"]):
                if i < int(plan.get("first_batch", 0)):  # a restarted writer: the batches before it ran
                    continue
                rows = [(str(r["key"]), str(r["partition"]), int(r["value"]), int(r.get("ts", r["value"])))
                        for r in batch["rows"]]
                value = {"batch": i, "op": batch["op"], "rows": [[r[0], r[1], r[2]] for r in rows]}
                after = int(batch.get("after_commits", 0))  # the plan's order: wait for N commits first
                while after and completed_commits(spark, plan["base_path"]) < after:
                    time.sleep(WAIT_POLL_S)
                for what, n in (batch.get("after_instants") or {}).items():
                    action, _, state = what.partition(".")
                    while instants_at_least(spark, plan["base_path"], action, state) < int(n):
                        time.sleep(WAIT_POLL_S)
                if batch.get("after_info"):
                    wait_for_info(Path(plan["history"]), batch["after_info"])
                if batch["op"] == "cluster":
                    value["partition"] = batch["partition"]
                _line(out, {"process": plan["writer"], "type": "invoke", "f": "write", "value": value,
                            "time": time.time()})
                start = time.time()
                extra: dict[str, Any] = {}
                try:
                    if batch["op"] == "cluster":
                        instant = cluster(spark, plan, opts, batch["partition"])
                        extra = {} if instant else {"result": NOTHING_TO_CLUSTER}
                    elif batch["op"] == "compact":
                        instant = compact(spark, plan, opts, bool(batch.get("pending")))
                        extra = {} if instant else {"result": NOTHING_TO_COMPACT}
                    else:
                        df = spark.createDataFrame(rows, "key string, partition string, value long, ts long")
                        writer = df.write.format("hudi").options(**opts)
                        if batch["op"] == "delete_partition":  # the partitions its rows name
                            writer = writer.option("hoodie.datasource.write.partitions.to.delete",
                                                   ",".join(sorted({r[1] for r in rows})))
                        (writer
                         .option("hoodie.datasource.write.operation", batch["op"])
                         .option(f"{MARK}writer", plan["writer"]).option(f"{MARK}batch", str(i))
                         .mode("append").save(plan["base_path"]))
                        instant = own_instant(spark, plan["base_path"], plan["writer"], i)
                except Exception as e:  # Hudi's failure is the outcome recorded, whatever its class
                    failed += 1
                    _line(out, {"process": plan["writer"], "type": "fail", "f": "write", "value": value,
                                "time": time.time(), "elapsed_s": round(time.time() - start, 3),
                                "error": java_error(e), **failed_instant(spark, plan, i, batch["op"])})
                    continue
                _line(out, {"process": plan["writer"], "type": "ok", "f": "write", "value": value,
                            "time": time.time(), "elapsed_s": round(time.time() - start, 3),
                            "instant": instant, **extra})
            if plan.get("read_at_end"):
                read_table(spark, plan, out)
        finally:
            spark.stop()
    return failed


def read_table(spark: Any, plan: dict[str, Any], out: IO[str]) -> None:
    """A snapshot read of the table by Hudi's Spark reader: a ``read`` invoke/ok (rows: key, partition,
    value, commit time, file name) or fail line."""
    w = plan["writer"]
    _line(out, {"process": w, "type": "invoke", "f": "read", "value": None, "time": time.time()})
    try:
        # storage listing unless the plan's reader lists through the metadata table (an NBCC entry's
        # hoodie.metadata.enable); MOR: Hudi's snapshot read merges the logs
        listing = str(bool(plan.get("read_metadata_table", False))).lower()
        got = (spark.read.format("hudi").option("hoodie.metadata.enable", listing)
               .option("hoodie.datasource.query.type", "snapshot").load(plan["base_path"])
               .select("key", "partition", "value", "_hoodie_commit_time", "_hoodie_file_name").collect())
    except Exception as e:  # recorded as the read's outcome
        _line(out, {"process": w, "type": "fail", "f": "read", "value": None, "time": time.time(),
                    "error": java_error(e)})
        return
    rows = sorted([r[0], r[1], int(r[2]), r[3], r[4]] for r in got)
    _line(out, {"process": w, "type": "ok", "f": "read", "value": rows, "time": time.time()})


def main(argv: list[str] | None = None) -> int:
    """``python -m engines.hudi_spark.writer PLAN.json``: exit 0 (every batch written), 1 (some failed) or
    2 (bad plan)."""
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        print("usage: python -m engines.hudi_spark.writer PLAN.json", file=sys.stderr)
        return 2
    try:
        plan = load_plan(Path(args[0]))
    except PlanError as e:
        print(f"hudi writer: {e}", file=sys.stderr)
        return 2
    return 1 if run(plan) else 0


if __name__ == "__main__":
    raise SystemExit(main())

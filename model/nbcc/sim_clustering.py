"""Clustering of an NBCC table as Hudi 1.2.0 and 1.2.1 do it (read in 1.2.0's sources and Spark bundle, run
on Hudi 1.2.0's own Spark writers): the plan is scheduled, its execution is refused, and the plan stays.

NBCC needs a MERGE_ON_READ table with the simple bucket index (``HoodieWriteConfig$Builder#validate``,
1.2.0 HoodieWriteConfig.java:3825-3829), whose storage layout is ``HoodieSimpleBucketLayout``. Its
``SUPPORTED_OPERATIONS`` (HoodieSimpleBucketLayout.java:34-46; the same eleven in 1.2.1's class file) hold
INSERT, UPSERT, DELETE, COMPACT, INSERT_OVERWRITE and DELETE_PARTITION, not CLUSTER. So:

* scheduling succeeds: under the table lock the plan takes the latest committed slice of every file group
  not in a pending compaction or clustering (``ClusteringPlanStrategy#getFileSlicesEligibleForClustering``,
  ClusteringPlanStrategy.java:120-131) and ``<t>.clustering.requested`` is written;
* executing it throws before anything is written: ``SparkExecuteClusteringCommitActionExecutor``'s
  constructor reaches ``BaseCommitActionExecutor``'s check (BaseCommitActionExecutor.java:99-102):
  ``UnsupportedOperationException: Executor SparkExecuteClusteringCommitActionExecutor is not compatible
  with table layout HoodieSimpleBucketLayout`` (seen on Hudi 1.2.0's Spark bundle, ``run_clustering``);
  the plan stays requested. A clustering has no heartbeat (``hoodie.clustering.enable.expirations``,
  default false, HoodieClusteringConfig.java:269-275) and LAZY cleaning rolls back deltacommits only, so
  nothing removes it;
* from then on every deltacommit that updates a file group of the plan is refused before its inflight
  file: ``BaseSparkCommitActionExecutor#clusteringHandleUpdate`` (bundle class file, lines 116-143, called
  at line 183 of ``#execute``) with ``SparkRejectUpdateStrategy``, which Hudi infers for every strategy but
  PreferWriter (HoodieClusteringConfig.java:254-266), throws ``HoodieClusteringUpdateException``
  (SparkRejectUpdateStrategy.java:55); the bucket index tags every record of an existing bucket as an
  update of its group, so a writer of those buckets is refused for good;
* the compaction planner leaves the plan's groups out too (``BaseHoodieCompactionPlanGenerator``,
  1.2.0 lines 109-114 and 132): their logs are never compacted.

No replacecommit is ever written, so no file group is replaced and no committed write is hidden: safe,
with every later update of the planned buckets refused (a finding, not a safety violation).
"""

from __future__ import annotations

from collections.abc import Iterable

from model.nbcc.sim_io import Gen, list_until_answered, read_until_answered
from model.nbcc.sim_layout import LAYOUT, PARTITION, requested_key
from model.nbcc.slicing import FileSlice
from model.timeline.layout import State, format_instant, parse_instant_path, timeline_dir
from model.timeline.metadata import (
    clustering_plan,
    decode_instant_metadata,
    encode_clustering_plan,
    plan_file_groups,
)

# why a deltacommit or a clustering fails (history ``reason``)
UPDATE_REJECTED = "clustering-update-rejected"
UNSUPPORTED_LAYOUT = "unsupported-layout: HoodieSimpleBucketLayout does not support CLUSTER"


def clustering_plan_body(slices: Iterable[FileSlice]) -> bytes:
    """``<t>.clustering.requested``: Hudi's HoodieRequestedReplaceMetadata of one input group holding the
    slices (``dataFilePath`` empty for a log-only slice, as ``ClusteringPlanStrategy#getFileSliceInfo``)."""
    infos = [(PARTITION, s.file_id, f"{PARTITION}/{s.base_file.name}" if s.base_file else "") for s in slices]
    return encode_clustering_plan(clustering_plan(infos))


def pending_clustering_groups(base: str) -> Gen:
    """``getFileGroupsInPendingClustering``: the file ids of every clustering plan with no completed
    replacecommit, read from the timeline (until the store answers)."""
    keys = yield from list_until_answered(timeline_dir(base, LAYOUT))
    instants = [i for i in (parse_instant_path(k, base, LAYOUT) for k in keys) if i is not None]
    done = {i.requested for i in instants if i.is_completed}
    out: set[str] = set()
    _over = sorted(i.requested for i in instants
                   if i.action == "clustering" and i.state is State.REQUESTED and i.requested not in done)
    for _at, t in enumerate(_over):  # the loop's position
        key = requested_key(base, t, "clustering")
        body = yield from read_until_answered(key)
        out |= {fid for _p, fid in plan_file_groups(decode_instant_metadata(body or b"", key))}
    return frozenset(out)


def describe_plan(t: int, slices: Iterable[FileSlice]) -> dict[str, object]:
    """The ``clustering-plan`` record's value: its instant and the planned file groups."""
    return {"instant": format_instant(t), "file_groups": sorted(s.file_id for s in slices)}

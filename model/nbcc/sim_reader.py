"""A snapshot reader of the simulated NBCC table: while the writers run, it lists the table every
``read_every_ms`` (one listing of the whole table, then the timeline metadata it needs), builds every
file group's slices as the run's variant does, reads the latest slice of each and records what it read
(``read`` ``ok``: the instants it saw completed, the rows, the file groups whose every slice Hudi hid).

It reads as Hudi's snapshot query does (``HoodieFileIndex`` over ``getLatestMergedFileSlicesBeforeOrOn``):
through the metadata table when the table records one (``hoodie.metadata.enable`` for readers, default
true in Hudi 1.1+, and the table's ``files`` partition available), else from a storage listing, and only
the committed files of each slice (``filterUncommittedLogs``).  The checker (``sim_checks``, ``read``)
compares each snapshot with the committed writes of the instants the reader saw completed.  This is
what shows a failed write's window: its logs hide a file group from Hudi 1.2.0 readers until a clean
rolls it back.
"""

from __future__ import annotations

from collections.abc import Hashable

from model.explorable import Keyer
from model.nbcc.filegroup import build_group
from model.nbcc.sim_io import Gen, TableLoader
from model.nbcc.sim_layout import Row, data_key, decode_rows, merge_rows
from model.nbcc.sim_plan import TablePlan
from model.nbcc.slicing import HUDI_RULES, Rule
from model.nbcc.views import group_view
from model.runtime.clock import EPOCH_MS
from model.runtime.effects import Now, Read, Record, Sleep, StoreResult
from model.timeline.layout import BaseFile, LogFile, format_instant


class SnapshotReader:
    """Reads the latest snapshot again and again until ``plan.read_until_ms``."""

    def __init__(self, plan: TablePlan) -> None:
        self.plan = plan
        self.base = plan.base
        self.rule = plan.nbcc_variant.slicing
        self.loader = TableLoader(plan.base, plan.metadata_table)

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "base": "plan.base (the plan is in the state)",
        "rule": "plan.nbcc_variant.slicing (the plan is in the state)",
    }

    def __explore_state__(self, k: Keyer) -> Hashable:
        """Its plan (a constant of the run) and its table view."""
        return (k.value(self.plan), k.value(self.loader))

    def run(self) -> Gen:
        """Read every ``read_every_ms`` (the node's clock) until ``read_until_ms``."""
        while True:
            now: int = yield Now()
            if now - EPOCH_MS >= self.plan.read_until_ms:
                break
            yield from self.read_once()
            yield Sleep(self.plan.read_every_ms)
        yield Record("reader-done", "info", {})

    def read_once(self) -> Gen:
        """One snapshot read; records it (or why it failed)."""
        table = yield from self.loader.load()
        if table is None:
            yield Record("read", "fail", {"reason": "table not listed"})
            return
        ct = table.timeline.completion_time
        mdt = table.has_metadata_table
        rows: dict[str, list[object]] = {}
        hidden = []
        _over = table.listed_groups(mdt)
        for _at, g in enumerate(_over):  # the loop's position
            s = group_view(g, ct, self.rule, None, mdt)
            committed_logs = any(ct(lf.instant) is not None for lf in g.log_files)
            fix = self.rule is Rule.PR_19785
            if self.rule in HUDI_RULES and committed_logs and not build_group(g, ct, fix_19785=fix).committed:
                hidden.append(g.file_id)
            if s is None:
                continue
            files: list[BaseFile | LogFile] = ([s.base_file] if s.base_file else []) + sorted(
                s.log_files, key=lambda lf: (ct(lf.instant) or 0, lf.sort_key))
            merged: dict[str, Row] = {}
            for _at2, f in enumerate(files):  # _at2: the loop's position
                got: StoreResult = yield Read(data_key(self.base, f))
                if not got.ok:
                    yield Record("read", "fail", {"reason": f"{f.name} {got.outcome.name}"})
                    return
                merged = merge_rows(decode_rows(got.body or b""), merged)
            rows.update({k: [r.ts, r.rid] for k, r in merged.items()})
        completed = [format_instant(i.requested) for i in table.timeline.completed()]
        yield Record("read", "ok",
                     {"completed": completed, "rows": dict(sorted(rows.items())), "hidden": hidden})

"""The transaction records of a copy-on-write writer (Hudi's or the specification's), one per operation.

No effects: a run's history is the same with or without them; ``model/timeline/run.py`` appends them to
the history after the run (``record_txns``) and ``model/checkers/txn_from_runs.py`` reads them.
"""

from __future__ import annotations

from typing import Any

from model.timeline.config import TimelineConfig


class TxnRecording:
    """Mixin of a writer that keeps its operations' transaction records in ``txn_log`` (when given and the
    workload is ``commits``); ``txn`` is the record of the operation under way."""

    WRITER = ""  # the record's ``writer``: "hudi" or "v5"
    node: str
    tl: TimelineConfig
    txn_log: list[dict[str, Any]] | None
    txn: dict[str, Any] | None

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "txn": "the record of the operation under way, for reports: no decision reads it (None in the "
               "explorer, which keeps no txn_log)",
        "txn_log": "the transaction records, appended for reports and read by no decision (None in the "
                   "explorer)",
    }

    def _txn_begin(self, op: dict[str, Any]) -> None:
        """Start the operation's transaction record (``commits`` workload, a ``txn_log`` given)."""
        if self.txn_log is None or self.tl.workload != "commits":
            self.txn = None
            return
        self.txn = {"process": self.node, "writer": self.WRITER, "op": op["value"], "key": op["key"],
                    "kind": op["kind"], "instant": None, "snapshot": None, "reads": [], "found": None,
                    "target": None, "write": None, "completing": False, "outcome": None, "reason": None}
        self.txn_log.append(self.txn)

    def _txn_set(self, **fields: Any) -> None:
        if self.txn is not None:
            self.txn.update(fields)

    def _txn_end(self, outcome: str, reason: str | None) -> None:
        """The outcome: a failure after the completed instant's write was sent and not refused is ``info``."""
        txn, self.txn = self.txn, None
        if txn is not None:
            txn["outcome"] = "info" if outcome == "fail" and txn["completing"] else outcome
            txn["reason"] = reason

"""The report of any run directory: its protocol's report builder, then what every report adds.

:data:`REPORTS` is the reports' part of each protocol (``model/protocols``), keyed by its name.
"""

from __future__ import annotations

from collections.abc import Callable

from reports.document import Report
from reports.explore import build_explore_report
from reports.isolation import add_isolation
from reports.load import RunData
from reports.lock import build_lock_report
from reports.nbcc import build_nbcc_report
from reports.occ import build_occ_report
from reports.oracle import add_oracle_section

REPORTS: dict[str, Callable[[RunData], Report]] = {
    "lock": build_lock_report,
    "occ": build_occ_report,
    "nbcc": build_nbcc_report,
    "explore": build_explore_report,
}


def build_report(run: RunData) -> Report:
    """Every section of the report of one run, with its figures rendered (any protocol); the first
    section opens with whose behaviour the run models (``models`` in ``verdict.json``), and an OCC or
    NBCC run's report ends with its isolation section (``reports/isolation.py``)."""
    report = REPORTS[run.protocol](run)
    models = run.verdict.get("models")
    if models:
        if report.sections:
            report.sections[0].text.insert(0, f"Models: {models}.")
        report.summary["models"] = models
    add_oracle_section(run, report)  # occ, nbcc: table/ in Hudi's encoding, read back by hudi-rs
    add_isolation(report, run)  # OCC and NBCC: Elle's check of the run's transactions
    return report

"""The report section of the second oracle: the run's ``table/`` in Hudi's encoding, read back by hudi-rs.

Added to every OCC and NBCC report by :func:`reports.build.build_report`; it reads ``oracle.json``
(``engines/oracle.py``) and ``verdict.json``'s ``table_encoding``.  It says what ``table/`` holds, how
many read points hudi-rs 0.5.0 agreed on with the expected rows and the model's reader, and lists every
disagreement with its key, its read point and which of the three differ.  A disagreement never changes
the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from model.protocols import PROTOCOLS
from model.run_format import ORACLE
from reports.document import Report, Section
from reports.load import RunData
from reports.times import with_times

TITLE = "Second oracle: hudi-rs reads the table back"
MAX_ROWS = 200

MEANINGS = {
    "agree": "expected rows, the model's reader and hudi-rs read the same",
    "hudi-rs differs": "the model's reader reads the expected rows, hudi-rs does not, and no known "
                       "behaviour of hudi-rs 0.5.0 explains it: a finding about hudi-rs to investigate",
    "model differs": "hudi-rs reads the expected rows, the model's reader does not: the Hudi (Java) "
                     "behaviour the model reproduces and its checkers report (hudi-rs does not share it), "
                     "or, where the checkers are silent, a bug in the model",
    "both differ": "the model's reader and hudi-rs read the same rows, not the expected ones (the checkers' "
                   "violation, read alike by hudi-rs)",
    "all differ": "three different readings",
}


def _meaning(outcome: str) -> str:
    if outcome.startswith("hudi-rs: "):
        return (f"a known behaviour of hudi-rs 0.5.0 ({outcome[len('hudi-rs: '):]}); the model's reader "
                "reads the expected rows")
    base = outcome.split(" (", 1)[0]
    extra = f"; hudi-rs reads what {outcome.split(' (hudi-rs: ', 1)[1].rstrip(')')} reads" \
        if " (hudi-rs: " in outcome else ""
    return MEANINGS.get(base, outcome) + extra


def _encoding_text(encoding: Mapping[str, Any]) -> str:
    if encoding.get("encoding") == "hudi":
        n = encoding.get("encoded") or {}
        bases, logs, commits = n.get("base_files", 0), n.get("log_files", 0), n.get("commits", 0)
        return (f"table/ is in Hudi's encoding (model/hudi_files/export.py): {bases} Parquet base "
                f"file(s) with Hudi's meta columns, {logs} Hudi log file(s) (one Avro data block each), "
                f"{commits} completed commit(s) rewritten with real write stats; the history and the "
                "checkers used the model's own encoding, unchanged.")
    return str(encoding.get("note") or "table/ holds the model's own encoding.")


def oracle_section(run: RunData) -> Section | None:
    """The section, or None for a run without a Hudi table."""
    encoding = run.verdict.get("table_encoding")
    oracle = run.files.get(ORACLE)  # read and checked by reports/load.py
    if not encoding and oracle is None:
        return None
    sec = Section(TITLE, [_encoding_text(encoding or {})])
    if oracle is None:
        sec.text.append("No oracle.json: the run was not read back by hudi-rs.")
        return sec
    if oracle.get("status") == "skipped":
        sec.text.append(f"Not read back by hudi-rs: {oracle.get('reason')}.")
        return sec
    if oracle.get("hudi_rs_error"):
        sec.text.append(f"hudi-rs failed: {oracle['hudi_rs_error']} (reported, not raised; the points it did "
                        "not answer are listed below).")
    outcomes: dict[str, int] = oracle.get("outcomes") or {}
    points, agree, differ = (oracle.get(k, 0) for k in ("points", "points_agreeing", "points_differing"))
    read, refused = oracle.get("files_read", 0), len(oracle.get("files_refused") or {})
    sec.text.append(
        f"hudi-rs 0.5.0 (a reader nobody here wrote) read the run's own table at {points} read point(s) (the "
        "snapshot, time travel as of each completed instant's request and completion time, incremental reads "
        f"between consecutive completion times): {agree} agree with the expected rows and the model's reader "
        f"key for key, {differ} differ somewhere. Every data file read on its own: {read} read, {refused} "
        "refused. An oracle disagreement is a finding, never a violation: it does not change the verdict "
        "(where the model's own reader disagrees with the expected rows, the run's checkers report it).")
    if outcomes.get("model differs") and run.outcome == "ok":
        sec.text.append("The model's reader disagrees with the expected rows where hudi-rs agrees, and the "
                        "checkers report no violation: a possible bug in the model (see 'model differs').")
    sec.tables.append(("Keys by outcome, over every read point", pd.DataFrame(
        [{"outcome": k, "keys": v, "meaning": _meaning(k)} for k, v in sorted(outcomes.items())])))
    rows = [{"read point": with_times(c["point"]), "key": d["key"], "outcome": d["outcome"],
             "expected": with_times(d["expected"]), "model reader": with_times(d["model"]),
             "hudi-rs": with_times(d["hudi_rs"])}
            for c in oracle.get("comparisons") or () for d in c["differences"]]
    if rows:
        first = f" (the first {MAX_ROWS} of {len(rows)})" if len(rows) > MAX_ROWS else ""
        sec.tables.append((f"Disagreements (key, read point, which differ){first}",
                           pd.DataFrame(rows[:MAX_ROWS])))
    problems = [{"what": e["point"], "error": e["error"]} for e in oracle.get("errors") or ()]
    problems += [{"what": p, "error": e} for p, e in sorted((oracle.get("files_refused") or {}).items())]
    problems += [{"what": f"{p} (the model's decoder)", "error": e}
                 for p, e in sorted((oracle.get("files_refused_by_model") or {}).items())]
    silent = oracle.get("files_skipped_silently_by_hudi_rs") or []
    if silent:
        names = ", ".join(silent)
        sec.text.append(f"hudi-rs read {len(silent)} file(s) the model's decoder refuses without any error "
                        f"(it skips a block it takes for corrupt, as Java's reader does): {names}.")
    if problems:
        sec.tables.append(("What hudi-rs refused or could not answer", pd.DataFrame(problems)))
    return sec


def add_oracle_section(run: RunData, report: Report) -> None:
    """Append the section (a protocol whose table is a Hudi table: OCC, NBCC) and its summary to a built
    report."""
    if PROTOCOLS[run.protocol].hudi_table is None:
        return
    sec = oracle_section(run)
    if sec is None:
        return
    report.sections.append(sec)
    report.summary["oracle"] = run.verdict.get("oracle")
    report.summary["table_encoding"] = run.verdict.get("table_encoding")

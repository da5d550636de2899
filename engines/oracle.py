"""The end of a simulated OCC or NBCC run's directory: its ``table/`` in Hudi's encoding, read back by
hudi-rs as a second oracle.

* :func:`encode_table`: the final store's table re-encoded by :func:`model.hudi_files.export.export_table`
  (Parquet base files, Hudi log files, commit metadata with real write stats, reader properties) where
  pyarrow is installed; without it the model's own encoding, said so (``table_encoding`` in
  ``verdict.json`` and the report).  The store and the history are untouched: the encoding happens after
  the run and its checkers, so histories stay byte-identical.
* :func:`read_back`: where hudi-rs is installed (the ``oracle`` extra), the run reads its own table back
  with hudi-rs (``backends/hudi_rs.py``, a subprocess with a timeout) at every read point of
  :mod:`model.oracle` (snapshot, time travel, incremental), compares the rows three ways (expected,
  the model's reader, hudi-rs) and reads every data file on its own; ``oracle.json`` holds it all and
  ``verdict.json``'s ``oracle`` a summary.

``HCC_ORACLE=0`` in the environment skips the read-back (the table is still exported): about half a second
per run, most of it the hudi-rs child's start.

An oracle disagreement does not change the verdict: it is a finding about hudi-rs or about the model,
for a person to read (the report's section names each); where the model's own reader disagrees with the
expected rows, the run's checkers already report a violation.  A hudi-rs crash, timeout or error is
reported in ``oracle.json``, never raised.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from backends.hudi_rs import Query, hudi_rs_available, read_with_hudi_rs
from model.hudi_files.errors import HudiFileError
from model.hudi_files.export import (
    HUDI_ENCODING,
    MODEL_ENCODING,
    MODEL_ENCODING_NOTE,
    export_table,
    pyarrow_available,
)
from model.hudi_files.records import read_data_file
from model.oracle.points import compare_point
from model.protocols.base import HudiTable, ModelRun
from model.run_format import ORACLE

HUDI_RS_MISSING = "hudi-rs is not installed: pip install 'hudi-cc-harness[oracle]' for the second oracle"


def encode_table(hudi: HudiTable[Any] | None, objects: Mapping[str, bytes],
                 prefix: str) -> tuple[Mapping[str, bytes], dict[str, Any]]:
    """The objects to write as the run's ``table/`` and what encoding they are in (``{}`` for a protocol
    without a Hudi table: ``hudi`` None).  An export that fails keeps the model's encoding and says why."""
    if hudi is None:
        return objects, {}
    if not pyarrow_available():
        return objects, {"encoding": MODEL_ENCODING, "note": MODEL_ENCODING_NOTE}
    files = {k[len(prefix):]: v for k, v in objects.items() if k.startswith(prefix)}
    started = time.perf_counter()
    try:
        exported = export_table(files)
    except (ValueError, KeyError) as exc:
        return objects, {"encoding": MODEL_ENCODING, "note": f"the export to Hudi's encoding failed: {exc}"}
    encoded = {**{k: v for k, v in objects.items() if not k.startswith(prefix)},
               **{prefix + k: v for k, v in exported.files.items()}}
    return encoded, {"encoding": HUDI_ENCODING, "encoded": exported.counts,
                     "seconds": round(time.perf_counter() - started, 4)}


def data_files(table: Path) -> list[str]:
    """Every base and log file under the table folder (relative paths), ``.hoodie/`` left out."""
    out = []
    for p in sorted(table.rglob("*")):
        rel = p.relative_to(table).as_posix()
        if p.is_file() and not rel.startswith(".hoodie/") and (rel.endswith(".parquet") or ".log." in p.name):
            out.append(rel)
    return out


def refused_by_model(table: Path, files: list[str]) -> dict[str, str]:
    """The data files the model's own decoder (:mod:`model.hudi_files.records`) refuses, with its error
    (which names the file and the byte)."""
    out = {}
    for rel in files:
        try:
            read_data_file(rel, (table / rel).read_bytes())
        except HudiFileError as exc:
            out[rel] = str(exc)
    return out


def read_back(hudi: HudiTable[Any] | None, config: Any, run: ModelRun, table: Path,
              encoding: Mapping[str, Any]) -> dict[str, Any]:
    """The second oracle's comparison of one run (``{}`` for a protocol without a Hudi table: ``hudi``
    None); ``run`` holds the final store in the model's encoding, ``table`` is the written folder."""
    if hudi is None:
        return {}
    if encoding.get("encoding") != HUDI_ENCODING:
        return {"status": "skipped", "reason": str(encoding.get("note") or MODEL_ENCODING_NOTE)}
    if not hudi_rs_available():
        return {"status": "skipped", "reason": HUDI_RS_MISSING}
    if os.environ.get("HCC_ORACLE", "1").strip().lower() in ("0", "off", "false", "no"):
        return {"status": "skipped", "reason": "HCC_ORACLE=0 in the environment: not read back by hudi-rs"}
    started = time.perf_counter()
    files = data_files(table)
    points = hudi.points(config, run)
    if not files:  # no data (the ``times`` workload): every read is empty, the snapshot says so
        points = points[:1]
    model_seconds = time.perf_counter() - started
    queries = [Query(p.id, p.kind, as_of=p.as_of, start=p.start, end=p.end) for p in points]
    queries.append(Query("files", "files", paths=tuple(files)))
    result = read_with_hudi_rs(table, queries)
    compared, errors = [], []
    for p in points:
        answer = result.answer(p.id)
        if "error" in answer:
            errors.append({"point": p.id, "error": answer["error"]})
            continue
        compared.append(compare_point(p, hudi.reading(answer["rows"])))
    model_refused = refused_by_model(table, files)
    file_answer = result.answer("files")
    unread = {path: a["error"] for path, a in (file_answer.get("files") or {}).items() if "error" in a}
    if "error" in file_answer:
        errors.append({"point": "files", "error": file_answer["error"]})
    outcomes: dict[str, int] = {}
    for c in compared:
        for outcome, n in c["counts"].items():
            outcomes[outcome] = outcomes.get(outcome, 0) + n
    differing = [c for c in compared if c["differences"]]
    return {
        "status": "error" if result.error or errors else "done",
        "hudi_rs_error": result.error,
        "points": len(points),
        "points_agreeing": len(compared) - len(differing),
        "points_differing": len(differing),
        "outcomes": dict(sorted(outcomes.items())),
        "errors": errors,
        "files_read": len(files) - len(unread),
        "files_refused": unread,
        "files_refused_by_model": model_refused,
        # files the model's decoder refuses and hudi-rs reads without a word (it skips a corrupt block)
        "files_skipped_silently_by_hudi_rs": sorted(p for p in model_refused if p not in unread),
        "comparisons": compared,
        "seconds": {"model": round(model_seconds, 3), "hudi_rs": result.seconds},
    }


def summary_of(oracle: Mapping[str, Any]) -> dict[str, Any]:
    """What ``verdict.json`` keeps of the comparison (no comparisons, no timings: deterministic)."""
    keep = ("status", "reason", "hudi_rs_error", "points", "points_agreeing", "points_differing", "outcomes",
            "files_read", "files_refused", "files_refused_by_model", "files_skipped_silently_by_hudi_rs")
    out = {k: oracle[k] for k in keep if k in oracle}
    if oracle.get("errors"):
        out["errors"] = len(oracle["errors"])
    return out


def write_run_table(out: Path, hudi: HudiTable[Any] | None, config: Any, run: ModelRun,
                    write_table: Callable[..., Path], write_json: Callable[[str, Any], None]
                    ) -> tuple[Path, dict[str, Any]]:
    """Write a run's ``table/`` (``write_table``: the store under ``run.table_prefix``), in Hudi's encoding
    where the protocol's table is a Hudi table (``hudi``: OCC, NBCC), then the second oracle's
    ``oracle.json`` (``write_json``: the run directory's writer, by file name); returns the folder and
    what ``verdict.json`` says of both
    (``table_encoding``, ``oracle``; ``{}`` for a table as stored)."""
    prefix = run.table_prefix or ""
    objects, encoding = encode_table(hudi, run.objects, prefix)
    table = write_table(out, objects, prefix=prefix)
    if not encoding:
        return table, {}
    oracle = read_back(hudi, config, run, table, encoding)
    write_json(ORACLE, {**oracle, "export": encoding})
    return table, {"table_encoding": {k: v for k, v in encoding.items() if k != "seconds"},
                   "oracle": summary_of(oracle)}

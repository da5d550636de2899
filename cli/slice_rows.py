"""The rows of file slices for ``hcc slices --rows``: the model's reader and hudi-rs, side by side.

The model's rows come from :func:`model.nbcc.timeline_reader.slice_records` over the slices the command
prints; hudi-rs's from its own slices (``get_file_slices`` with the same ``--as-of``), each read from its
paths (``backends/hudi_rs.py``, a subprocess).  A slice both list (same partition and file id) is marked
``same rows`` or ``rows differ`` with the keys that differ (:func:`model.hudi_files.records.same_records`).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends.hudi_rs import Query, hudi_rs_available, read_with_hudi_rs
from backends.hudi_table_source import table_folder
from model.hudi_files.errors import HudiFileError
from model.hudi_files.records import record_id, same_records
from model.hudi_files.schema import COMMIT_TIME, META_COLUMNS
from model.nbcc.slicing import FileSlice
from model.nbcc.timeline_reader import HudiTable, slice_records

HUDI_RS_MISSING = "hudi-rs is not installed (pip install 'hudi-cc-harness[oracle]'): the model's rows only"


def json_safe(v: Any) -> Any:
    """A value as JSON can hold it (bytes as hex, decimals and times as text, nested values inside)."""
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, bytes | bytearray):
        return bytes(v).hex()
    if isinstance(v, decimal.Decimal | dt.date | dt.datetime | dt.time):
        return str(v)
    if isinstance(v, Mapping):
        return {str(k): json_safe(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [json_safe(x) for x in v]
    return base64.b64encode(repr(v).encode()).decode()


def _sorted(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [json_safe(dict(r)) for r in sorted(rows, key=lambda r: (*record_id(r), str(r.get(COMMIT_TIME))))]


def _differing(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> list[str]:
    keys = sorted({record_id(r)[1] for r in [*a, *b]})
    return [k for k in keys if not same_records([r for r in a if record_id(r)[1] == k],
                                                [r for r in b if record_id(r)[1] == k])]


@dataclass
class FoundRows:
    """Per printed slice the model's rows (``rows``, or ``rows_error``) and hudi-rs's answer."""

    model: list[dict[str, Any]] = field(default_factory=list)
    hudi_rs: dict[str, Any] = field(default_factory=dict)

    def print_hudi_rs(self) -> None:
        """The hudi-rs part of the text output."""
        if "skipped" in self.hudi_rs:
            print(f"# hudi-rs: {self.hudi_rs['skipped']}")
            return
        if self.hudi_rs.get("error"):
            print(f"# hudi-rs 0.5.0 failed: {self.hudi_rs['error']}")
            return
        slices = self.hudi_rs.get("slices") or []
        print(f"# hudi-rs 0.5.0: {len(slices)} file slice(s), each read from its paths")
        for s in slices:
            where = f"{s['partition'] or '<root>'}/{s['file_id']}"
            print(f"{where}  base_instant={s['base_instant']}  base={s['base_file'] or '-'}  "
                  f"logs={len(s['log_files'])}  [{s.get('versus_model', '')}]")
            print_rows(s)


def _model_rows(table: HudiTable, s: FileSlice, read: Callable[[str], bytes]) -> dict[str, Any]:
    try:
        return {"rows": _sorted(list(slice_records(table, s, read).values()))}
    except HudiFileError as exc:
        return {"rows_error": str(exc)}
    except (OSError, KeyError) as exc:
        return {"rows_error": f"{type(exc).__name__}: {exc}"}


def slice_rows(table: HudiTable, slices: Sequence[FileSlice], read: Callable[[str], bytes], path: str,
               root: str, as_of: str | None) -> FoundRows:
    """The model's rows of ``slices`` and hudi-rs's rows of its own slices of the table at ``path``
    (its base path ``root`` inside it), compared where both list a slice."""
    found = FoundRows([_model_rows(table, s, read) for s in slices])
    if not hudi_rs_available():
        found.hudi_rs = {"skipped": HUDI_RS_MISSING}
        return found
    with tempfile.TemporaryDirectory(prefix="hcc-slices-") as scratch:
        folder = table_folder(path, root, Path(scratch))
        result = read_with_hudi_rs(folder, [Query("slices", "slices", as_of=as_of)])
    answer = result.answer("slices")
    if "error" in answer:
        found.hudi_rs = {"error": answer["error"]}
        return found
    theirs = {(s["partition"], s["file_id"]): s for s in answer["slices"]}
    for s, mine in zip(slices, found.model, strict=True):
        other = theirs.get((s.partition, s.file_id))
        if other is None:
            mine["versus_hudi_rs"] = "hudi-rs lists no slice of this file group"
        elif "rows" in mine and "rows" in other:
            bad = _differing(mine["rows"], other["rows"])
            mine["versus_hudi_rs"] = "same rows" if not bad else f"rows differ: {', '.join(bad)}"
            other["versus_model"] = mine["versus_hudi_rs"]
    for other in answer["slices"]:
        other.setdefault("versus_model", "the model shows no slice of this file group"
                         if (other["partition"], other["file_id"]) not in
                         {(s.partition, s.file_id) for s in slices} else "not compared")
        if "rows" in other:
            other["rows"] = _sorted(other["rows"])
    found.hudi_rs = {"slices": answer["slices"], "error": result.error}
    return found


def _text(r: Mapping[str, Any]) -> str:
    data = {k: v for k, v in r.items() if k not in META_COLUMNS}
    return (f"{r.get('_hoodie_record_key')}  commit={r.get(COMMIT_TIME)}  "
            f"{json.dumps(data, sort_keys=True, separators=(',', ':'))}")


def print_rows(r: Mapping[str, Any]) -> None:
    """A slice's rows (or the error that kept them from being read), indented under the slice."""
    if r.get("rows_error") or r.get("error"):
        print(f"    rows: not read: {r.get('rows_error') or r.get('error')}")
        return
    rows = r.get("rows") or []
    mark = f"  [{r['versus_hudi_rs']}]" if r.get("versus_hudi_rs") else ""
    print(f"    rows ({len(rows)}){mark}:")
    for row in rows:
        print(f"      {_text(row)}")

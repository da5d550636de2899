"""hudi-rs (PyPI ``hudi`` 0.5.0, the ``oracle`` extra) reading a table, in a subprocess.

hudi-rs 0.5.0 aborts the interpreter on some damaged log files (a content length one short makes it
ask for tens of gigabytes: SIGABRT), so every read runs in a child Python process with a timeout; a
crash, a timeout or an error is reported as text, never raised.  One child answers a batch of queries
(:class:`Query`), one JSON line each, flushed as it goes, so the answers given before an abort are kept.

Queries:

* ``snapshot``, ``as_of`` (``HudiReadOptions.with_as_of_timestamp``), ``incremental``
  (``HudiQueryType.Incremental`` with start and end): ``HudiTable.read``, the rows;
* ``slices`` (optionally ``as_of``): ``get_file_slices``, and each slice's rows read through the file
  group reader from the slice's own paths (``read_file_slice_from_paths``: hudi-rs 0.5.0's
  ``read_file_slice(HudiFileSlice)`` without read options returns fewer records than the same files
  read by path or by ``read()`` on a slice with late logs, see ``tests/test_real_tables_oracle.py``);
* ``files``: every data file read on its own (a base file alone, a log alone), to find the file
  hudi-rs refuses.

Rows come back JSON-safe: timestamps as microseconds, dates as days, bytes as hex, anything else
unusual as its text.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from model.nbcc.slices import FileGroupId
    from model.nbcc.timeline_reader import HudiTable

DEFAULT_TIMEOUT_S = 120.0

_CHILD = r"""
import datetime, decimal, json, sys
req = json.loads(sys.stdin.read())
import pyarrow as pa
from hudi import HudiQueryType, HudiReadOptions, HudiTable
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

def safe(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, datetime.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=datetime.timezone.utc)
        return (v - EPOCH) // datetime.timedelta(microseconds=1)
    if isinstance(v, datetime.date):
        return (v - datetime.date(1970, 1, 1)).days
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, dict):
        return {str(k): safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [safe(x) for x in v]
    return str(v)

def rows(batches):
    batches = [b for b in batches if b is not None]
    if not batches:
        return []
    return [{k: safe(v) for k, v in r.items()} for r in pa.Table.from_batches(batches).to_pylist()]

def options(q):
    o = HudiReadOptions()
    if q.get("as_of"):
        o = o.with_as_of_timestamp(q["as_of"])
    if q["kind"] == "incremental":
        o = (o.with_query_type(HudiQueryType.Incremental)
             .with_start_timestamp(q["start"]).with_end_timestamp(q["end"]))
    return o

def err(e):
    return f"{type(e).__name__}: {e}"

table = None
for q in req["queries"]:
    try:
        if table is None:
            table = HudiTable(req["table"])
        o = options(q)
        if q["kind"] == "slices":
            reader = table.create_file_group_reader_with_options(o)
            out = []
            for fs in table.get_file_slices(o):
                s = {"partition": fs.partition_path, "file_id": fs.file_id,
                     "base_instant": fs.creation_instant_time, "base_file": fs.base_file_name or None,
                     "log_files": list(fs.log_file_names)}
                try:
                    base = fs.base_file_relative_path() if fs.base_file_name else ""
                    logs = list(fs.log_files_relative_paths())
                    s["rows"] = rows([reader.read_file_slice_from_paths(base, logs, o)])
                except BaseException as e:
                    if isinstance(e, (KeyboardInterrupt, SystemExit)):
                        raise
                    s["error"] = err(e)
                out.append(s)
            answer = {"slices": out}
        elif q["kind"] == "files":
            reader = table.create_file_group_reader_with_options()
            out = {}
            for path in q["paths"]:
                try:
                    if ".log." in path.rsplit("/", 1)[-1]:
                        got = reader.read_file_slice_from_paths("", [path])
                    else:
                        got = reader.read_file_slice_from_paths(path, [])
                    out[path] = {"rows": got.num_rows}
                except BaseException as e:
                    if isinstance(e, (KeyboardInterrupt, SystemExit)):
                        raise
                    out[path] = {"error": err(e)}
            answer = {"files": out}
        else:
            answer = {"rows": rows(table.read(o))}
    except BaseException as e:
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        answer = {"error": err(e)}
    print(json.dumps({"id": q["id"], **answer}), flush=True)
"""


# hudi-rs 0.5.0 (crate hudi-core 0.5.0) lists through the metadata table whenever hoodie.properties names its
# `files` partition, and there builds file groups only around base files: a group of logs only is never read
SKIPS_LOG_ONLY_GROUPS = (
    "hudi-rs 0.5.0 lists a table whose hoodie.properties names the metadata table's files partition "
    "through it (Table::is_metadata_table_enabled, crates/core/src/metadata/table/mod.rs 102-130: "
    "hoodie.metadata.enable=false does not turn it off) and builds file groups there only for file ids with "
    "a base file (file_groups_from_files_partition_records, crates/core/src/file_group/builder.rs 320-334, "
    "'TODO: Support file groups with only log files'; apache/hudi-rs#389, open): a group of logs only is "
    "not read")


def groups_hudi_rs_skips(table: HudiTable) -> frozenset[FileGroupId]:
    """The file groups of ``table`` hudi-rs 0.5.0 reads no row of (:data:`SKIPS_LOG_ONLY_GROUPS`): on a table
    of version 8 or later whose ``hoodie.properties`` lists the ``files`` partition, the groups the metadata
    table lists no base file of (a bucket index's groups before their first compaction); else none."""
    from model.nbcc.timeline_reader import METADATA_PARTITIONS

    if table.table_version < 8 or "files" not in table.properties.get(METADATA_PARTITIONS, "").split(","):
        return frozenset()
    return frozenset(g.group_id for g in table.listed_groups(True) if not g.base_files)


def hudi_rs_available() -> bool:
    """True when hudi-rs and pyarrow (the ``oracle`` extra) can be imported."""
    return importlib.util.find_spec("hudi") is not None and importlib.util.find_spec("pyarrow") is not None


@dataclass(frozen=True)
class Query:
    """One read: ``kind`` is ``snapshot``, ``as_of``, ``incremental``, ``slices`` or ``files``."""

    id: str
    kind: str
    as_of: str | None = None
    start: str | None = None
    end: str | None = None
    paths: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The query as the child reads it."""
        out: dict[str, Any] = {"id": self.id, "kind": self.kind}
        for name in ("as_of", "start", "end"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.kind == "files":
            out["paths"] = list(self.paths)
        return out


@dataclass(frozen=True)
class HudiRsResult:
    """The answers of one child, by query id, and what went wrong with the child (None: nothing)."""

    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0

    def answer(self, query_id: str) -> dict[str, Any]:
        """The query's answer; ``{"error": ...}`` when the child gave none (it died first)."""
        return self.answers.get(query_id) or {"error": f"no answer: {self.error or 'hudi-rs gave none'}"}


def _describe_exit(code: int, stderr: str) -> str:
    tail = " ".join(stderr.strip().splitlines()[-3:])[:400]
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"hudi-rs aborted the process ({name})" + (f": {tail}" if tail else "")
    return f"hudi-rs exited with status {code}" + (f": {tail}" if tail else "")


def read_with_hudi_rs(table: Path, queries: Sequence[Query],
                      timeout: float = DEFAULT_TIMEOUT_S) -> HudiRsResult:
    """Run ``queries`` against the table folder ``table`` in one hudi-rs child process."""
    import time

    request = json.dumps({"table": str(Path(table).resolve()), "queries": [q.to_json() for q in queries]})
    started = time.monotonic()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD], input=request, capture_output=True, text=True,
                              timeout=timeout, env=env, check=False)
        stdout, stderr, code = done.stdout, done.stderr, done.returncode
        problem = None if code == 0 else _describe_exit(code, stderr)
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        problem = f"hudi-rs did not finish within {timeout:g} s (killed)"
    answers: dict[str, dict[str, Any]] = {}
    for line in stdout.splitlines():
        try:
            got = json.loads(line)
        except ValueError:
            continue
        if isinstance(got, dict) and "id" in got:
            answers[str(got.pop("id"))] = got
    return HudiRsResult(answers, problem, round(time.monotonic() - started, 3))

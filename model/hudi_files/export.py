"""A simulated table's files re-encoded as Hudi writes them: the run directory's ``table/``.

The simulated store keeps the model's own encoding while a run goes (base files of JSON, logs of
JSON lines, text-safe commit metadata), because the history records file bodies as text and the
checkers read them back.  When the run directory is written, :func:`export_table` turns the final
store's table into Hudi's bytes, a pure function of those files:

* base files become Parquet with Hudi's meta columns and the table's schema
  (:mod:`model.hudi_files.export_cow` for a COPY_ON_WRITE table, :mod:`model.hudi_files.export_mor`
  for MERGE_ON_READ compaction output);
* log files become Hudi log files, one Avro data block per log (``INSTANT_TIME`` and ``SCHEMA``
  headers) (:mod:`model.hudi_files.export_mor`);
* completed commits are rewritten with the full 1.x ``HoodieCommitMetadata`` and real write stats (the
  sizes of the encoded files), keeping the model's ``hcc.*`` extra metadata;
* ``hoodie.properties`` gains the entries a reader needs (:func:`reader_properties`).

Everything else (requested and inflight files, compaction plans, rollbacks, heartbeats, the lock's
files, the harness's ``.hoodie/.aux/``) is copied as it is.  Parquet needs pyarrow (the ``oracle``
extra): :func:`pyarrow_available` says whether the caller can export at all; without it the run keeps
the model's encoding and says so (:data:`MODEL_ENCODING_NOTE`).
"""

from __future__ import annotations

import importlib.util

from model.hudi_files.export_common import HUDI_ENCODING as HUDI_ENCODING
from model.hudi_files.export_common import ExportedTable, TableFiles, table_info
from model.hudi_files.export_cow import export_cow
from model.hudi_files.export_mor import export_mor

MODEL_ENCODING = "model"
MODEL_ENCODING_NOTE = ("table/ holds the model's own encoding; pip install 'hudi-cc-harness[oracle]' for "
                       "Hudi's")


def pyarrow_available() -> bool:
    """True when pyarrow (the ``oracle`` extra) can be imported, so base files can be Parquet."""
    return importlib.util.find_spec("pyarrow") is not None


def export_table(files: TableFiles) -> ExportedTable:
    """The table in ``files`` (relative path -> bytes) with its data files and commit metadata in Hudi's
    encoding (needs pyarrow).  ValueError names a file the model did not write as it should."""
    info = table_info(files)
    if info.table_type == "MERGE_ON_READ":
        return export_mor(files, info)
    return export_cow(files, info)

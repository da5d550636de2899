"""Codecs for Apache Hudi's data files (table versions 8 and 9, as Hudi 1.x writes them).

Pure computation, bytes in and bytes out, no I/O:

* :mod:`~model.hudi_files.log_format`: the framing of log files (blocks, headers, footers);
* :mod:`~model.hudi_files.log_blocks`: Avro data blocks, delete blocks, rollback command blocks;
* :mod:`~model.hudi_files.schema`: the record schemas Hudi writes and its meta columns;
* :mod:`~model.hudi_files.parquet_files`: Parquet base files (pyarrow, imported lazily);
* :mod:`~model.hudi_files.table_properties`: ``hoodie.properties`` entries readers need;
* :mod:`~model.hudi_files.write_stats`: commit metadata write stats and their Avro schema.

Every decoding failure raises :class:`~model.hudi_files.errors.HudiFileError`, naming the file and
the byte offset.
"""

from model.hudi_files.errors import HudiFileError

__all__ = ["HudiFileError"]

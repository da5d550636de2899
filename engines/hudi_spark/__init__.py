"""Hudi's own Spark writers (the pinned ``hudi-spark3.5-bundle_2.12``) writing one S3 table at once.

:mod:`engines.hudi_spark.writer` is one writer process (``python -m``, its own PySpark 3.5 session,
``local[1]``); :mod:`engines.hudi_spark.classpath` assembles its jars; :mod:`engines.hudi_spark.launch`
starts writers and never lets them outlive the command.
"""

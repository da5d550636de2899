"""The Hudi timeline: its layout and metadata formats, time generation, and copy-on-write commits.

``layout`` (instant times, instants, file names), ``metadata`` (``hoodie.properties``, partition
metadata, commit metadata, rollback metadata and compaction plans), ``avro`` (the container codec) and
``timegen`` (the one time generator) serve every writer of the harness, NBCC's included.  The commit
writers are variants (``variants``): ``hudi_writer`` (Hudi 1.2.1's commit path, with ``conflicts``,
``fsview`` and ``failed_writes``) and ``v5`` (Vanlightly's v5 specification); ``commits`` picks one,
``modeldata`` is what both leave for the checkers.  Protocol steps are sans-I/O generators of effects
(see ``model/runtime/effects.py``) that the simulated world (``model/runtime/sim.py``) runs through a
writer factory (``run``).
"""

"""The Hudi timeline: its layout and metadata formats, time generation, and copy-on-write commits under OCC.

``layout`` (instant times, instants, file names), ``metadata`` (``hoodie.properties``, partition
metadata, commit metadata and compaction plans), ``avro`` (the container codec) and ``timegen``
(the one time generator) serve every writer of the harness, NBCC's included.  Protocol steps are
sans-I/O generators of effects (see ``model/effects.py``) that the simulated world
(``model/sim.py``) runs through a writer factory.
"""

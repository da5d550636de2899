"""A second oracle: what a run's readers should read, what the model's reader read, and (from outside,
hudi-rs on the run's exported table) what a real reader reads, compared key by key.

* :mod:`model.oracle.points`: a read point (snapshot, time travel as of T, incremental (start, end])
  with the expected rows and the model reader's, and the three-way classification of a difference;
* :mod:`model.oracle.nbcc`: the points of an NBCC run (``model/nbcc``);
* :mod:`model.oracle.occ`: the points of an OCC (copy-on-write timeline) run (``model/timeline``).

Pure: the hudi-rs side is read by ``backends/hudi_rs.py`` and joined in ``engines/oracle.py``.
"""

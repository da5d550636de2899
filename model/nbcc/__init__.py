"""Non-Blocking Concurrency Control (RFC-66): timelines, file slicing (the harness's rules and Hudi's
``HoodieFileGroup``, :mod:`~model.nbcc.filegroup`), checkers, a simulated MERGE_ON_READ table with
heartbeats and the clean that rolls failed writes back, and a pure reader of real Hudi tables.  Whose
behaviour a run follows is a variant (:mod:`~model.nbcc.variants`).  Everything here is pure: no I/O,
no clocks, no Hudi library.

Instant times are instant numbers (a 17-digit Hudi instant read as the integer it spells); file
names, instants and the time codec are in :mod:`model.timeline.layout`.
"""

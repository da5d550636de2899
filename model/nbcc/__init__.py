"""Non-Blocking Concurrency Control (RFC-66): timelines, file slicing, checkers, a simulated
MERGE_ON_READ table, and a pure reader of real Hudi tables.  Everything here is pure: no I/O, no
clocks, no Hudi library.

Instant times are instant numbers (a 17-digit Hudi instant read as the integer it spells); file
names, instants and the time codec are in :mod:`model.timeline.layout`.
"""

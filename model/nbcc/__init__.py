"""Non-Blocking Concurrency Control (RFC-66): file names, timelines, file slicing, checkers, and a
pure reader of real Hudi tables.  Everything here is pure: no I/O, no clocks, no Hudi library.

Instant times are integers (17-digit Hudi instants parse to the integer they spell); see
:mod:`model.nbcc.files`.
"""

"""Engines: where runs execute.  ``local`` (this process) and ``spark`` run sweep tasks;
``contention`` and ``contention_commits`` run Spark tasks as writers against a launched server;
``rundir`` writes run directories; ``sweep_engines`` opens the engine a sweep runs on.

``scenarios.grid`` loads grid files, ``cells`` expands them into (cell, seed) tasks and runs
one task into one row, and ``analyses.sweep_summary`` writes the rows (Parquet) and a per-cell
summary (CSV, JSON).
"""


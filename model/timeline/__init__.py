"""The Hudi timeline on the simulated store: instants, time generation and copy-on-write commits under OCC.

Everything here is sans-I/O: protocol steps are generators of effects (see
``model/effects.py``) that the simulated world (``model/sim.py``) runs through
a writer factory.
"""

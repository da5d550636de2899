"""Every protocol the harness runs, registered once by name: ``PROTOCOLS[name]`` is its :class:`Plugin`.

==========  ===========================================================  ==========================
name        what runs                                                    module
==========  ===========================================================  ==========================
``lock``    Hudi's storage-based lock (RFC-91) guarding a register        ``model/protocols/lock.py``
``occ``     the timeline under OCC: time generation, copy-on-write        ``model/protocols/occ.py``
``nbcc``    a MERGE_ON_READ table under NBCC (RFC-66)                     ``model/protocols/nbcc.py``
``explore`` an exhaustive search within bounds (``[explore] model``)      ``model/protocols/explore.py``
==========  ===========================================================  ==========================

The contract is :class:`model.protocols.base.Plugin`; the layers above ``model/`` key their own parts
by the same names (``scenarios/catalogue.py``'s loaders, ``reports/build.py``'s report builders,
``engines/spark_worlds.py``'s Spark runs).
"""

from __future__ import annotations

from typing import Any

from model.config import ConfigError
from model.protocols import explore, lock, nbcc, occ
from model.protocols.base import EntryHead, GateMetric, ModelRun, Plugin, Transactions

PROTOCOLS: dict[str, Plugin[Any, Any]] = {p.name: p for p in (lock.PLUGIN, occ.PLUGIN, nbcc.PLUGIN,
                                                               explore.PLUGIN)}
NAMES = tuple(PROTOCOLS)  # lock, occ, nbcc, explore: the order hcc list prints them in


def plugin(name: str) -> Plugin[Any, Any]:
    """The protocol called ``name``; ConfigError (naming ``protocol``) for another name."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise ConfigError("protocol", name, f"must be one of {', '.join(NAMES)}") from None


__all__ = ["NAMES", "PROTOCOLS", "EntryHead", "GateMetric", "ModelRun", "Plugin", "Transactions", "plugin"]

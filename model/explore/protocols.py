"""The explorer's bounds of each protocol, by name: the lock's (:class:`~model.explore.bounds.Bounds`),
OCC's (``occ.py``) and NBCC's (``nbcc.py``); a configuration from plain data picks its class here.

The one table of names (no module of the explorer compares a protocol's name): ``hcc explore --protocol``
and a scenario's ``[explore]`` table (``protocol`` or ``model``) read it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from model.config import ConfigError
from model.explore.bounds import Bounds, _reductions, _require, _typed
from model.explore.nbcc import NbccBounds
from model.explore.occ import OccBounds

BOUNDS: dict[str, type[Bounds]] = {cls.protocol: cls for cls in (Bounds, OccBounds, NbccBounds)}


def bounds_class(protocol: str, where: str = "protocol") -> type[Bounds]:
    """The bounds of ``protocol``: the lock's (:class:`Bounds`), OCC's or NBCC's."""
    _require(protocol in BOUNDS, where, protocol, f"must be one of {', '.join(BOUNDS)}")
    return BOUNDS[protocol]


def config_from_dict(data: dict[str, Any], where: str = "explore") -> Bounds:
    """The explorer's configuration from plain data (e.g. a scenario file's ``[explore]`` table).

    ``protocol`` (or ``model``) picks the bounds: ``lock`` (the default, :class:`Bounds`), ``occ``
    (``model/explore/occ.py``) or ``nbcc`` (``model/explore/nbcc.py``); the other keys are its fields
    (``variant``, ``writers``, ``faults``, ``fault_kinds``, ``skew_ms``, ``reductions`` ...; see there);
    ``reductions`` is a list of the reductions switched on or a table of booleans.  A bad key or value
    raises :class:`~model.config.ConfigError` naming ``where.key`` and the value.
    """
    _require(isinstance(data, dict), where or "explore", data, "must be a table")
    data = dict(data)
    named = [data.pop(k) for k in ("protocol", "model") if k in data]
    _require(len(set(named)) <= 1, f"{where}.protocol" if where else "protocol", named, "must be given once")
    cls = bounds_class(str(named[0]) if named else "lock", f"{where}.protocol" if where else "protocol")
    fields = {f.name for f in dataclasses.fields(cls) if f.name != "base"}
    kw: dict[str, Any] = {}
    for key, value in data.items():
        if key == "reductions":
            kw[key] = _reductions(where, value)
            continue
        _require(key in fields, f"{where}.{key}" if where else key, value,
                 f"is not a setting of the explorer (one of {', '.join(sorted(fields))})")
        kw[key] = _typed(where, key, value, cls)
    bounds = cls(**kw)
    try:
        bounds.validate()
    except ConfigError as e:
        if where and not e.field.startswith(f"{where}."):
            raise ConfigError(f"{where}.{e.field}", e.value, e.reason) from None
        raise
    return bounds


__all__ = ["BOUNDS", "bounds_class", "config_from_dict"]

"""The one scenario catalogue: every entry is a TOML file in ``scenarios/catalogue/`` with a ``protocol``.

=========  ================================================  =================================
protocol   what runs                                         its own table
=========  ================================================  =================================
lock       the RFC-91 lock guarding a register (simulated)   ``[lock]``, ``[workload]``, ...
occ        the timeline: time generation, COW commits       ``[timeline]``
nbcc       a MERGE_ON_READ table under NBCC (RFC-66)         ``[nbcc]``
explore    an exhaustive search within bounds                ``[explore]`` (``model = ...``)
=========  ================================================  =================================

A file without ``protocol`` is a lock scenario, or a timeline one when it has ``[timeline]``
(files written before the catalogue was one).  ``--set dotted.key=value`` overrides apply to the
raw TOML before it is checked, so they get the same errors (naming the field and the value).

The protocol of an entry is its registered object (``model/protocols``, :attr:`Entry.plugin`); the
catalogue's own part of each protocol, how its TOML is read and written, is :data:`LOADERS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import tomli_w

from model.config import ConfigError
from model.cow.scenario import CowSettings, ExploreScenario
from model.nbcc.config import NbccScenario
from model.protocols import NAMES, EntryHead, Plugin, plugin
from model.protocols.base import World
from model.protocols.explore import DEFAULT_EXPLORER, explorer
from scenarios import loader, timeline_loader
from scenarios.loader import CATALOGUE, protocol_of

C = TypeVar("C")


@dataclass(frozen=True)
class Entry:
    """A loaded, validated catalogue entry; ``config`` is its protocol's scenario object
    (``plugin.config_type``)."""

    protocol: str
    config: Any

    @property
    def plugin(self) -> Plugin[Any, Any]:
        """The entry's protocol (``model/protocols``)."""
        return plugin(self.protocol)

    @property
    def _head(self) -> EntryHead:
        return self.plugin.head(self.config)

    @property
    def name(self) -> str:
        return self._head.name

    @property
    def seed(self) -> int:
        return self._head.seed

    @property
    def expect(self) -> str:
        return self._head.expect

    @property
    def description(self) -> str:
        return self._head.description

    @property
    def world(self) -> World:
        """``sim``, ``search`` (explore) or ``spark`` (lock and occ entries may run as Spark tasks against a
        server)."""
        return self._head.world

    @property
    def models(self) -> str:
        """Whose behaviour the entry runs: the Hudi release (and pinned commit) or the specification it
        follows, and the reader configuration where it matters (one line; reports and ``hcc list``)."""
        return self.plugin.models(self.config)

    def to_toml(self) -> str:
        """The entry as TOML with every default filled in (what a run directory keeps)."""
        return LOADERS[self.protocol].to_toml(self.config)


def _nbcc(raw: dict[str, Any]) -> NbccScenario:
    scenario: NbccScenario = loader.build(NbccScenario, raw)
    scenario.validate()
    return scenario


def _nbcc_toml(scenario: NbccScenario) -> str:
    return tomli_w.dumps({"protocol": "nbcc", **loader.to_dict(scenario)})


def _explore_settings(raw: dict[str, Any]) -> Any:
    if explorer(str(raw.get("model", DEFAULT_EXPLORER))).specification:
        return loader.build(CowSettings, raw, "explore")
    from model.explore.protocols import config_from_dict  # the model explorers (model/explore)

    return config_from_dict(raw)  # lock, occ, nbcc: the keys are the bounds' fields (hcc explore's options)


def _explore(raw: dict[str, Any]) -> ExploreScenario:
    raw = dict(raw)
    table = raw.pop("explore", {})
    if not isinstance(table, dict):
        raise ConfigError("explore", table, "must be a table")
    common = {f.name for f in dataclasses.fields(ExploreScenario)} - {"settings"}
    for key, value in raw.items():
        if key not in common:
            raise ConfigError(key, value, f"unknown field (known: explore, {', '.join(sorted(common))})")
    scenario = ExploreScenario(**{k: raw[k] for k in raw}, settings=_explore_settings(table))
    for key, kind in (("name", str), ("description", str), ("expect", str), ("seed", int)):
        if not isinstance(getattr(scenario, key), kind):
            raise ConfigError(key, getattr(scenario, key), f"must be a {kind.__name__}")
    scenario.validate()
    return scenario


def _explore_toml(scenario: ExploreScenario) -> str:
    settings = scenario.settings
    table = (loader.to_dict(settings) if isinstance(settings, CowSettings) else
             {"model": settings.protocol, **{k: v for k, v in settings.to_json().items() if v is not None}})
    common = {k: v for k, v in loader.to_dict(scenario).items() if k != "settings"}
    return tomli_w.dumps({"protocol": "explore", **common, "explore": table})


@dataclass(frozen=True)
class Loader(Generic[C]):
    """How a protocol's entries are read from and written to TOML."""

    from_raw: Callable[[dict[str, Any]], C]  # build and validate from the parsed TOML (without protocol)
    to_toml: Callable[[C], str]  # every default filled in


# The catalogue's part of each protocol (model/protocols): its TOML, keyed by the protocol's name.
LOADERS: dict[str, Loader[Any]] = {
    "lock": Loader(loader.from_raw, loader.to_toml),
    "occ": Loader(timeline_loader.from_raw, timeline_loader.to_toml),
    "nbcc": Loader(_nbcc, _nbcc_toml),
    "explore": Loader(_explore, _explore_toml),
}


def load(name_or_path: str, overrides: Sequence[str] = ()) -> Entry:
    """Load, override (``--set``), build and validate any catalogue entry or scenario file."""
    raw = loader.load_raw(name_or_path)
    for assignment in overrides:
        loader.apply_override(raw, assignment)
    protocol = plugin(protocol_of(raw)).name  # ConfigError naming protocol when there is no such one
    raw.pop("protocol", None)
    return Entry(protocol, LOADERS[protocol].from_raw(raw))


def names(protocol: str | None = None, folder: Path = CATALOGUE) -> list[str]:
    """Names of the catalogue's entries (of one protocol when given), sorted."""
    if protocol is not None and protocol not in NAMES:
        raise ConfigError("--protocol", protocol, f"must be one of {', '.join(NAMES)}")
    return loader.catalogue_names(folder, protocol)


__all__ = ["CATALOGUE", "Entry", "load", "names", "protocol_of"]

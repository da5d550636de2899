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
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from model.config import ConfigError
from model.cow.scenario import CowSettings, ExploreScenario
from model.lock_variants import variant as lock_variant
from model.nbcc.config import NbccScenario
from scenarios import loader, timeline_loader
from scenarios.loader import CATALOGUE, PROTOCOLS, protocol_of


@dataclass(frozen=True)
class Entry:
    """A loaded, validated catalogue entry; ``config`` is its protocol's scenario object."""

    protocol: str
    config: Any  # Scenario | TimelineScenario | NbccScenario | ExploreScenario

    @property
    def _common(self) -> Any:
        return self.config.scenario if self.protocol == "occ" else self.config

    @property
    def name(self) -> str:
        return str(self._common.name)

    @property
    def seed(self) -> int:
        return int(self._common.seed)

    @property
    def expect(self) -> str:
        return str(self._common.expect)

    @property
    def description(self) -> str:
        return str(self._common.description)

    @property
    def world(self) -> str:
        """``sim`` or ``spark`` (lock and occ entries may run as Spark tasks against a server)."""
        return str(getattr(self._common, "world", "sim"))

    @property
    def models(self) -> str:
        """Whose behaviour the entry runs: the Hudi release (and pinned commit) or the specification it
        follows, and the reader configuration where it matters (one line; reports and ``hcc list``)."""
        config = self.config
        own = getattr(config, "models", None)
        if callable(own):
            return str(own())
        if self.protocol == "explore":
            settings = config.settings
            if isinstance(settings, CowSettings):
                return "Vanlightly's v5 TLA+ specification of copy-on-write commits (not Hudi's code)"
            return f"lock provider: {lock_variant(settings.lock().variant).follows}"
        if self.protocol == "lock":
            writer = ("; writer: hypothetical (checks its lock before each write, "
                      "workload.check_before_write)" if config.workload.check_before_write else "")
            return f"lock provider: {lock_variant(config.lock.variant).follows}{writer}"
        raise AssertionError(f"{self.protocol} scenario {self.name} does not say whose behaviour it models")

    def to_toml(self) -> str:
        """The entry as TOML with every default filled in (what a run directory keeps)."""
        if self.protocol == "lock":
            return loader.to_toml(self.config)
        if self.protocol == "occ":
            return timeline_loader.to_toml(self.config)
        if self.protocol == "explore":
            settings = self.config.settings
            table = (loader.to_dict(settings) if isinstance(settings, CowSettings) else
                     {"model": "lock", **{k: v for k, v in settings.to_json().items() if v is not None}})
            common = {k: v for k, v in loader.to_dict(self.config).items() if k != "settings"}
            return tomli_w.dumps({"protocol": "explore", **common, "explore": table})
        return tomli_w.dumps({"protocol": self.protocol, **loader.to_dict(self.config)})


def _nbcc(raw: dict[str, Any]) -> NbccScenario:
    scenario: NbccScenario = loader.build(NbccScenario, raw)
    scenario.validate()
    return scenario


def _explore_settings(raw: dict[str, Any]) -> Any:
    model = raw.get("model", "cow")
    if model == "cow":
        return loader.build(CowSettings, raw, "explore")
    if model == "lock":
        from model.explore import config_from_dict  # the lock explorer (model/explore)

        return config_from_dict({k: v for k, v in raw.items() if k != "model"})
    raise ConfigError("explore.model", model, "must be cow or lock")


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


_BUILDERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "lock": loader.from_raw,
    "occ": timeline_loader.from_raw,
    "nbcc": _nbcc,
    "explore": _explore,
}


def load(name_or_path: str, overrides: Sequence[str] = ()) -> Entry:
    """Load, override (``--set``), build and validate any catalogue entry or scenario file."""
    raw = loader.load_raw(name_or_path)
    for assignment in overrides:
        loader.apply_override(raw, assignment)
    protocol = protocol_of(raw)
    raw.pop("protocol", None)
    return Entry(protocol, _BUILDERS[protocol](raw))


def names(protocol: str | None = None, folder: Path = CATALOGUE) -> list[str]:
    """Names of the catalogue's entries (of one protocol when given), sorted."""
    if protocol is not None and protocol not in PROTOCOLS:
        raise ConfigError("--protocol", protocol, f"must be one of {', '.join(PROTOCOLS)}")
    return loader.catalogue_names(folder, protocol)


__all__ = ["CATALOGUE", "PROTOCOLS", "Entry", "load", "names", "protocol_of"]

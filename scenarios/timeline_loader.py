"""Timeline scenario files: a lock-model scenario file with a ``[timeline]`` table.

Names are the catalogue's entries of protocol ``occ`` (``scenarios/catalogue/``); see
``model/timeline/config.py`` for the table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomli_w

from model.config import ConfigError, Scenario
from model.timeline.config import TimelineConfig, TimelineScenario
from scenarios import loader


def timeline_names() -> list[str]:
    """Names of the catalogue's timeline (``occ``) entries."""
    return loader.catalogue_names(protocol="occ")


def resolve(name_or_path: str) -> Path:
    """A catalogue name or a path to a TOML file."""
    return loader.resolve(name_or_path)


def load(name_or_path: str, overrides: list[str] | tuple[str, ...] = ()) -> TimelineScenario:
    """Load, override (``--set``), build and validate a timeline scenario."""
    return from_raw(loader.raw_of(name_or_path, "occ", overrides))


def from_raw(raw: dict[str, Any]) -> TimelineScenario:
    """Build and validate a timeline scenario from its parsed TOML (without ``protocol``)."""
    raw = dict(raw)
    tl_raw = raw.pop("timeline", {})
    if not isinstance(tl_raw, dict):
        raise ConfigError("timeline", tl_raw, "must be a table")
    if "checkers" in raw:
        raise ConfigError(
            "checkers", raw["checkers"], "timeline scenarios choose checkers in timeline.checkers"
        )
    scenario: Scenario = loader.build(Scenario, raw)
    timeline: TimelineConfig = loader.build(TimelineConfig, tl_raw, "timeline")
    ts = TimelineScenario(scenario, timeline)
    ts.validate()
    return ts


def to_toml(ts: TimelineScenario) -> str:
    """The timeline scenario as TOML with every default filled in.

    A setting left unset (its variant's default) stays unset, so the file loads back to the same
    scenario; ``models`` says whose behaviour the run is (a comment)."""
    data: dict[str, Any] = {"protocol": "occ", **loader.to_dict(ts.scenario)}
    data.pop("checkers", None)
    data["timeline"] = {k: v for k, v in loader.to_dict(ts.timeline).items() if v is not None}
    return f"# models: {ts.models()}\n" + tomli_w.dumps(data)

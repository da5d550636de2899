"""Timeline scenario files: a lock-model scenario file with a ``[timeline]`` table.

Names are looked up in ``scenarios/timeline/``; see ``model/timeline/config.py`` for the table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomli_w

from model.config import ConfigError, Scenario
from model.timeline.config import TimelineConfig, TimelineScenario
from scenarios import loader

TIMELINE_CATALOGUE = Path(__file__).parent / "timeline"


def timeline_names() -> list[str]:
    """Names of the scenarios shipped in ``scenarios/timeline``."""
    return loader.catalogue_names(TIMELINE_CATALOGUE)


def resolve(name_or_path: str) -> Path:
    """A timeline catalogue name or a path to a TOML file."""
    return loader.resolve(name_or_path, TIMELINE_CATALOGUE)


def load(name_or_path: str, overrides: list[str] | tuple[str, ...] = ()) -> TimelineScenario:
    """Load, override (``--set``), build and validate a timeline scenario."""
    raw = loader.read_toml(resolve(name_or_path))
    for assignment in overrides:
        loader.apply_override(raw, assignment)
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
    """The timeline scenario as TOML with every default filled in."""
    data: dict[str, Any] = loader.to_dict(ts.scenario)
    data.pop("checkers", None)
    data["timeline"] = loader.to_dict(ts.timeline)
    return tomli_w.dumps(data)


def is_timeline_scenario(name_or_path: str) -> bool:
    """True for a name in ``scenarios/timeline`` or a TOML file with a ``[timeline]`` table."""
    try:
        return "timeline" in loader.read_toml(resolve(name_or_path))
    except ConfigError:
        return False

"""An explorer entry of the scenario catalogue: which exhaustive search, its bounds, its expected verdict.

``[explore]`` names the ``model`` searched (``cow``: Vanlightly's copy-on-write specification,
:mod:`model.cow`) and its settings; ``expect`` is ``ok`` (the invariant holds within the bounds)
or ``violation`` (a counterexample exists).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from model.config import ConfigError
from model.cow.config import CC, CowConfig, CowConfigError

_CC = {"none": CC.NONE, "optimistic": CC.OPTIMISTIC, "pessimistic": CC.PESSIMISTIC}


@dataclass(frozen=True)
class CowSettings:
    """``[explore]`` of ``model = "cow"``: a :class:`CowConfig` in TOML types, and the search options."""

    model: str = "cow"
    writers: int = 2
    keys: int = 2
    values: int = 2
    file_groups: int = 1
    ops: int = 4
    monotonic_ts: bool = True
    cc: str = "optimistic"
    put_if_absent: bool = False
    pk_check: bool = True
    salt: bool = False
    symmetry: bool = False
    max_states: int = 0  # 0: no bound

    def config(self) -> CowConfig:
        """The explorer's configuration; ConfigError names ``explore.<field>`` and the value."""
        if self.cc not in _CC:
            raise ConfigError("explore.cc", self.cc, f"must be one of {', '.join(_CC)}")
        cfg = CowConfig(self.writers, self.keys, self.values, self.file_groups, self.ops, self.monotonic_ts,
                        _CC[self.cc], self.put_if_absent, self.pk_check, self.salt)
        try:
            cfg.validate()
        except CowConfigError as e:
            raise ConfigError(f"explore.{e.field}", e.value, e.reason) from None
        if self.max_states < 0:
            raise ConfigError("explore.max_states", self.max_states, "must be >= 0 (0: no bound)")
        return cfg


@dataclass(frozen=True)
class ExploreScenario:
    """A catalogue entry of protocol ``explore``; ``settings`` is the model's validated settings."""

    name: str = "explore"
    description: str = ""
    seed: int = 0  # exhaustive: no randomness; kept so every entry has a seed
    expect: str = "ok"
    settings: Any = field(default_factory=CowSettings)

    def validate(self) -> None:
        """Check the common fields and the model's settings."""
        if not self.name:
            raise ConfigError("name", self.name, "must not be empty")
        if self.expect not in ("ok", "violation"):
            raise ConfigError("expect", self.expect, "must be ok (holds) or violation")
        if isinstance(self.settings, CowSettings):
            self.settings.config()

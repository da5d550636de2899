"""Durations drawn from a scenario's distributions (``model.config.Dist``), from a seeded generator."""

from __future__ import annotations

import random

from model.config import Dist


def draw(rng: random.Random, dist: Dist) -> int:
    """Draw integer milliseconds from a distribution."""
    if dist.kind == "fixed":
        return dist.lo
    if dist.kind == "uniform":
        return rng.randint(dist.lo, dist.hi)
    value = int(rng.expovariate(1.0 / dist.lo)) if dist.lo > 0 else 0
    return min(value, dist.hi) if dist.hi > 0 else value

"""The ``hcc explore`` command line that explores given bounds (the README tables print it in each row)."""

from __future__ import annotations

import dataclasses

from cli.explore import BOUND_OPTIONS, YES_NO_OPTIONS
from model.explore import Bounds


def command_of(bounds: Bounds, shortest: bool = True) -> str:
    """The ``hcc explore`` command that explores ``bounds``: ``--protocol``, ``--writers`` always, every other
    option whose value differs from the CLI's default (the bounds class's default), and ``--shortest`` (the
    tables prove their counterexamples shortest) unless ``shortest`` is False.  Budgets (``max_states``,
    ``max_seconds``) and reductions are no part of it."""
    default = type(bounds)()
    fields = {f.name for f in dataclasses.fields(bounds)}
    words = ["hcc explore", f"--protocol {bounds.protocol}"]
    for opt, field, _kind, _text in BOUND_OPTIONS:
        if field in fields and (getattr(bounds, field) != getattr(default, field) or field == "writers"):
            words.append(f"{opt} {getattr(bounds, field)}")
    for opt, field, _text in YES_NO_OPTIONS:
        value = getattr(bounds, field, None)
        if field in fields and value != getattr(default, field) and value is not None:
            words.append(f"{opt} {'yes' if value else 'no'}")
    if bounds.faults and bounds.fault_kinds != default.fault_kinds:
        words.append(f"--fault-kinds {','.join(bounds.fault_kinds)}")
    if bounds.checkers is not None:
        words.append(f"--checkers {','.join(bounds.checkers)}")
    if bounds.pause_ms is not None:
        words.append(f"--pause-ms {','.join(map(str, bounds.pause_ms))}")
    if default.phases and not bounds.phases:
        words.append("--no-phases")
    return " ".join([*words, "--shortest"] if shortest else words)

"""Times in a report, in one format: ms since the run's start.

An event's ``time`` is already that (true time).  What a history also carries are clock readings: a node's
clock (``clock``, a lock file's ``valid_until``, a heartbeat file's body) in epoch ms, and Hudi instants
(``20260101000004220``: a node's clock as yyyyMMddHHmmssSSS).  A report shows each of them as
``t<ms>``: the same unit, ms since the run's start, read on that clock (a node whose clock is skewed reads
t differing from true time by its skew; an instant ``t4220`` is 4.22 s after the start on its writer's
clock).  Column headers say "(ms since start)".

The run's start on the clocks is :data:`model.runtime.clock.EPOCH_MS` for a simulated run; a run on real
clocks
(``hcc realworld``, the hudi world) has no such constant, and :func:`run_epoch` takes the median of its
events' ``clock - time``.

File names keep their instants as Hudi writes them: a name is a name, not a time shown to the reader.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Sequence
from typing import Any

from model.runtime.clock import EPOCH_MS
from model.runtime.history import Event
from model.timeline.layout import instant_to_ms
from reports.document import Clock, cell_text

TIME = "time (ms since start)"  # the header of a column of events' true times
# what every report says once, in its first section
NOTE = ("Times are in ms since the run's start (true time, the column headers say so); an instant or a "
        "clock reading shows as t<ms>: the same unit, read on that writer's clock.")

# a clock reading: epoch ms within this window of the run's start (simulated runs last hours at most)
_BEFORE_MS, _AFTER_MS = 86_400_000, 1000 * 86_400_000
# a 17-digit instant standing alone in a text (not inside a file name or a longer number)
_INSTANT = re.compile(r"(?<![\w./-])(\d{17})(?![\w.])")


def run_epoch(events: Sequence[Event]) -> int:
    """Epoch ms of the run's start on its clocks: :data:`EPOCH_MS` when the history's clocks read from it
    (a simulated run), else the median of ``clock - time`` over its events (a run on real clocks)."""
    offsets = [e.clock - e.time for e in events if e.clock is not None]
    if not offsets:
        return EPOCH_MS
    median = int(statistics.median(offsets))
    return EPOCH_MS if abs(median - EPOCH_MS) < _BEFORE_MS else median


def since_start(epoch_ms: int, epoch: int = EPOCH_MS) -> str:
    """A clock reading (epoch ms) as ``t<ms since the run's start>``."""
    return cell_text(Clock(epoch_ms - epoch))


def _is_clock(n: int, epoch: int) -> bool:
    return epoch - _BEFORE_MS <= n <= epoch + _AFTER_MS


def instant_text(text: str, epoch: int = EPOCH_MS) -> str:
    """``text`` with each 17-digit Hudi instant standing alone (``as of 20260101000004220``,
    ``w1/2/0@20260101000004220``) as ``t<ms>``; instants inside file names stay."""

    def one(m: re.Match[str]) -> str:
        try:
            ms = instant_to_ms(int(m.group(1)))
        except ValueError:
            return m.group(1)
        return since_start(ms, epoch) if _is_clock(ms, epoch) else m.group(1)

    return _INSTANT.sub(one, text)


def with_times(value: Any, epoch: int = EPOCH_MS) -> Any:
    """``value`` (a string, a number, nested dicts and lists; anything else as it is) with its clock
    readings (epoch ms near the run's start) and standalone instants as ``t<ms>``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and _is_clock(value, epoch):
        return since_start(value, epoch)
    if isinstance(value, str):
        if value.isdigit() and len(value) == 13 and _is_clock(int(value), epoch):
            return since_start(int(value), epoch)  # a heartbeat file's body: the writer's clock
        return instant_text(value, epoch)
    if isinstance(value, dict):
        return {k: with_times(v, epoch) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [with_times(v, epoch) for v in value]
    return value


def value_text(value: Any, epoch: int = EPOCH_MS) -> str:
    """An event's value as compact JSON (a string as it is), its clock readings and instants as
    ``t<ms>``; nothing for None."""
    if value is None:
        return ""
    shown = with_times(value, epoch)
    return shown if isinstance(shown, str) else json.dumps(shown, separators=(",", ":"), default=str)


def detail_text(detail: str, epoch: int = EPOCH_MS) -> str:
    """A counterexample step's detail (compact JSON, or a sentence) with its times as ``t<ms>``."""
    if detail.startswith(("{", "[")):
        try:
            return value_text(json.loads(detail), epoch)
        except ValueError:
            pass
    return instant_text(detail, epoch)

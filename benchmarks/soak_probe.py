"""Shared parts of the soak benchmarks: resource samples over time and a history's completeness.

Not a benchmark itself.  :class:`Sampler` prints, every ``every_s`` seconds, the resident
memory and open descriptors of the harness and of each launched server (from ``/proc``),
the size of each history and the events per second since the last sample, and keeps the
samples for the summary (:func:`print_summary`: first-quarter vs last-quarter means, so a
leak shows as a ratio above 1).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model.runtime.history import Event, loads


def rss_kib(pid: int | str = "self") -> int | None:
    """Resident memory of a process in KiB (None when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def open_fds(pid: int | str = "self") -> int | None:
    """Open file descriptors of a process (None when it is gone)."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def threads(pid: int | str = "self") -> int | None:
    """Threads of a process."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


@dataclass
class Stream:
    """One run being soaked: its history file, event counter and server pid."""

    name: str
    history: Path
    server_pid: Callable[[], int | None]
    events: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def sink(self, f: Any) -> Callable[[Event], None]:
        """A history sink writing to ``f`` and counting events."""

        def write(event: Event) -> None:
            f.write(event.to_json() + "\n")
            f.flush()
            with self.lock:
                self.events += 1

        return write


@dataclass
class Sample:
    t_s: float
    harness_rss_kib: int
    harness_fds: int
    harness_threads: int
    per_stream: dict[str, dict[str, Any]]


class Sampler:
    """Samples every ``every_s`` seconds in a thread of its own and prints one line per stream."""

    def __init__(self, streams: list[Stream], every_s: float) -> None:
        self.streams = streams
        self.every_s = every_s
        self.samples: list[Sample] = []
        self._stop = threading.Event()
        self._t0 = time.monotonic()
        self._last_events = {s.name: 0 for s in streams}
        self._last_t = self._t0
        self._thread = threading.Thread(target=self._loop, name="soak-sampler", daemon=True)

    def start(self) -> None:
        print(f"{'t (s)':>7} {'stream':<10} {'harness RSS MiB':>15} {'fds':>5} {'thr':>4} "
              f"{'server RSS MiB':>14} {'fds':>5} {'events':>8} {'history KiB':>11} {'ev/s':>6}", flush=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()  # the last one, after the run

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self.sample()

    def sample(self) -> None:
        now = time.monotonic()
        dt = max(now - self._last_t, 1e-9)
        per: dict[str, dict[str, Any]] = {}
        h_rss, h_fds, h_thr = rss_kib() or 0, open_fds() or 0, threads() or 0
        for s in self.streams:
            pid = s.server_pid()
            with s.lock:
                n = s.events
            size = s.history.stat().st_size if s.history.exists() else 0
            rate = (n - self._last_events[s.name]) / dt
            self._last_events[s.name] = n
            per[s.name] = {"server_rss_kib": rss_kib(pid) if pid else None,
                           "server_fds": open_fds(pid) if pid else None,
                           "events": n, "history_kib": size // 1024, "events_per_s": rate}
            srv = per[s.name]["server_rss_kib"]
            print(f"{now - self._t0:7.0f} {s.name:<10} {h_rss / 1024:15.1f} {h_fds:5d} {h_thr:4d} "
                  f"{(srv or 0) / 1024:14.1f} {per[s.name]['server_fds'] or 0:5d} {n:8d} "
                  f"{size // 1024:11d} {rate:6.1f}", flush=True)
        self._last_t = now
        self.samples.append(Sample(now - self._t0, h_rss, h_fds, h_thr, per))


def _quarters(values: list[float]) -> tuple[float, float]:
    q = max(1, len(values) // 4)
    return sum(values[:q]) / q, sum(values[-q:]) / q


def print_summary(sampler: Sampler) -> None:
    """First-quarter vs last-quarter means of memory and descriptors (growth shows as a ratio > 1)."""
    samples = sampler.samples
    if len(samples) < 4:
        print("too few samples for a trend (run longer or sample more often)")
        return
    a, b = _quarters([s.harness_rss_kib / 1024 for s in samples])
    print(f"harness RSS: first quarter {a:.1f} MiB, last quarter {b:.1f} MiB (x{b / a:.3f})")
    fds = [s.harness_fds for s in samples]
    thr = [s.harness_threads for s in samples]
    print(f"harness fds: min {min(fds)}, max {max(fds)}, last {fds[-1]}; "
          f"threads min {min(thr)}, max {max(thr)}")
    for name in samples[0].per_stream:
        rss = [s.per_stream[name]["server_rss_kib"] or 0 for s in samples[:-1]]  # the last: server stopped
        sfds = [s.per_stream[name]["server_fds"] or 0 for s in samples[:-1]]
        a, b = _quarters([r / 1024 for r in rss])
        rates = [s.per_stream[name]["events_per_s"] for s in samples[1:-1]]
        ra, rb = _quarters(rates) if len(rates) >= 4 else (0.0, 0.0)
        print(f"{name}: server RSS first quarter {a:.1f} MiB, last quarter {b:.1f} MiB "
              f"(x{b / max(a, 1e-9):.3f}); server fds min {min(sfds)}, max {max(sfds)}; "
              f"events/s first quarter {ra:.1f}, last {rb:.1f}")


def history_complete(path: Path, expected_events: int) -> tuple[bool, list[Event], str]:
    """Whether a history file parses, runs from run-start to run-end and holds every event; why not."""
    try:
        events = loads(path.read_text())
    except (OSError, ValueError) as e:
        return False, [], f"does not parse: {e}"
    if not events:
        return False, [], "empty"
    problems = []
    if events[0].f != "run-start":
        problems.append(f"first event is {events[0].f}, not run-start")
    if events[-1].f != "run-end":
        problems.append(f"last event is {events[-1].f}, not run-end")
    if [e.index for e in events] != list(range(len(events))):
        problems.append("indices are not 0..n-1")
    if len(events) != expected_events:
        problems.append(f"{len(events)} events in the file, {expected_events} recorded")
    return not problems, events, "; ".join(problems) or f"{len(events)} events, run-start..run-end"

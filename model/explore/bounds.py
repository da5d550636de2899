"""The bounds of one exploration of the lock: writers, holds, faults, clocks, and the scenario they make.

Everything the explorer enumerates is finite because of these bounds: ``writers``
identical writers that each make ``holds`` acquisition attempts (``workload.holds``),
at most ``faults`` faults of ``fault_kinds``, clock offsets of 0 or ``skew_ms`` per
node, start phases on the tick grid, network hops delivered on the grid within
``latency_ticks`` ticks, and pause durations from ``pause_ms``.  Time constants are
small (validity in whole seconds as Hudi has it, but two, not 300; the check
``enforce_hudi_limits`` is off), so a lease is a couple of renewals; what matters is
the order of events against validUntil, validUntil + drift and the renewals, not the
number of renewals per lease.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import typing
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from model import typed
from model.checkers.lock_run import check_lock_history
from model.checkers.verdict import Verdict
from model.config import (
    CHECKERS,
    ClockSpec,
    ConfigError,
    Dist,
    FaultPlan,
    LockConfig,
    Scenario,
    StorageConfig,
    WorkloadConfig,
)
from model.lock.variants import VARIANTS
from model.lock.variants import variant as lock_variant
from model.runtime.history import Event
from model.runtime.kernel import Workload
from model.runtime.objectstore import StoredObject
from model.runtime.sim import SimWorld
from model.workloads.lock import LockWorkload

# One request's error answer (not applied), an unanswered request, an applied one whose reply is lost.
REQUEST_FAULTS = ("409", "412", "429", "503", "timeout", "lost-reply")
CONDITIONAL_ONLY = ("409", "412")  # answers to conditional writes only: never offered on a read
# A window in which every request of one class (node, lock or register, read or write) gets the status;
# it lasts one of the fault durations (as long as a pause).
WINDOW_FAULTS = ("throttle-429", "throttle-503")
FAULT_KINDS = ("pause", "crash", *REQUEST_FAULTS, *WINDOW_FAULTS)
DEFAULT_KINDS = ("pause", "lost-reply", "timeout", "412", "throttle-503")
PAUSE_TRIGGERS = ("acquired", "write")
# the events of a writer that may start a pause (its acquisition, its write), as the kernel names them
TRIGGERS = {("acquire", "ok"): "acquired", ("write", "invoke"): "write"}


def _require(cond: bool, name: str, value: Any, reason: str) -> None:
    if not cond:
        raise ConfigError(name, value, reason)


@dataclass(frozen=True)
class Reductions:
    """Which reductions the search uses; each can be switched off (the tests compare with it off)."""

    hashing: bool = True  # merge schedules that reach the same state
    symmetry: bool = True  # writers are interchangeable: states equal up to renaming them merge
    por: bool = True  # sleep sets: an order of two independent steps is explored once
    # root decisions up to a uniform shift of every start and of every clock (``run.time_shift_breaks``)
    shifts: bool = True
    # a read whose reply is lost is a read that timed out (a read changes nothing, and both answer TIMEOUT
    # at sent + timeout): offer the timeout alone (``Run._lost_read_is_timeout``)
    lost_read_is_timeout: bool = True
    # a state is not expanded when one with the same core, as many faults left or more, no later end of the
    # faults' effects and its options explored was (``search.Search._dominated``); depth-first only
    dominance: bool = True


NO_REDUCTION = Reductions(hashing=False, symmetry=False, por=False, shifts=False, lost_read_is_timeout=False,
                          dominance=False)
ALL_REDUCTIONS = Reductions()
# every state and step of the graph (hashing and symmetry keep its distances): its Dijkstra path is a shortest
WHOLE_GRAPH = Reductions(por=False, dominance=False)


@dataclass(frozen=True)
class ParkedRuns:
    """How the depth-first search parks runs (``parked.py``): at most ``limit`` forked copies at once
    (0: none, every run replays from the start), each ``spacing_ms`` or more of a run's true time past the
    one above it.  Not a reduction: the result is the same with it on or off.  The spacing is measured
    (``parked.py``): a copy at every decision cost an NBCC fault row more than its replays did; 500 ms apart
    (20 of its 25 ms ticks), 1.6-2.4x less CPU than replaying.
    """

    limit: int = 64
    spacing_ms: int = 500

    def validate(self) -> None:
        """Raise ConfigError naming a negative field."""
        _require(self.limit >= 0, "parked.limit", self.limit, "must be >= 0 (0: no run parked)")
        _require(self.spacing_ms >= 0, "parked.spacing_ms", self.spacing_ms, "must be >= 0")


NO_PARKING = ParkedRuns(limit=0)


@dataclass(frozen=True)
class Bounds:
    """One configuration of the explorer: the protocol under test and the bounds of the search.

    This class is the lock's (``protocol = "lock"``: Hudi's provider guarding a register); the OCC and
    NBCC explorers' bounds derive from it (``model/explore/occ.py``, ``nbcc.py``) and override what a
    protocol decides: its workload, the checkers that judge a run, how a found run is replayed in the
    simulated world, and which events may start a pause.
    """

    protocol: ClassVar[str] = "lock"
    # judge the history at every decision point (the lock's checkers are cheap and say at once), or at the
    # end of each run only (a protocol whose checkers read the final table)
    judge_at_points: ClassVar[bool] = True
    checks_liveness: ClassVar[bool] = True  # bounded liveness (the lock changes hands within a bound)
    known_checkers: ClassVar[tuple[str, ...]] = CHECKERS  # what ``checkers`` may name
    # a state is also when it is (the protocol compares clocks with absolute instants of its plan), so no
    # two states met at different times merge; else times are relative to now
    absolute_time: ClassVar[bool] = False
    # a scenario may give the lock, storage and workload (``base``, ``hcc explore --scenario``)
    takes_base: ClassVar[bool] = True
    variant: str = "hudi"
    writers: int = 2
    faults: int = 0
    fault_kinds: tuple[str, ...] = DEFAULT_KINDS
    skew_ms: int = 0
    holds: int = 1
    validity_secs: int = 2
    renew_interval_secs: int = 1
    poll_ms: int = 1_000
    drift_allowance_ms: int = 500
    steps_per_hold: int = 1  # the README table's bound (one read-modify-write under each hold)
    work_ms: int = 1_000
    think_ms: int = 500
    timeout_ms: int = 500
    sdk_retries: int = -1  # -1: the variant's Hudi client (hudi: none, PR #17869; hudi-1.1: the SDK's)
    retry_backoff_ms: int = 0
    check_before_write: bool = False
    # Hudi's lock audit (the provider's audit-trail writes) is off while exploring: its writes add requests
    # and states but never change who holds the lock or the register (the audit checker is not among
    # CHECKERS).  True explores with the audit enable file seeded, as simulated runs have it.
    audit: bool = False
    flavor: str = "s3"
    latency_ticks: int = 0
    phases: bool = True
    crash_restart_ms: int = -1
    pause_ms: tuple[int, ...] | None = None  # pauses and windows of errors; None: see pause_durations
    liveness_ms: int | None = None  # None: see liveness_bound
    tick_ms: int | None = None  # None: the gcd of every time constant
    guard_ms: int | None = None  # None: see time_guard
    checkers: tuple[str, ...] | None = None  # the checkers that decide; None: see decisive_checkers
    reductions: Reductions = ALL_REDUCTIONS
    max_states: int | None = None  # stop (verdict incomplete) after this many distinct states
    max_seconds: float | None = None  # stop (verdict incomplete) after this long
    # A scenario whose lock, storage and workload sections replace the fields above (variant included).
    base: Scenario | None = field(default=None, compare=False)

    @property
    def parked_runs(self) -> ParkedRuns:
        """How the depth-first search parks runs (``ParkedRuns``): none here, a lock run costs about one
        fork."""
        return NO_PARKING

    # ---- what the protocol decides ------------------------------------------------------------

    def kernel_workload(self, scenario: Scenario) -> Workload:
        """The kernel workload of a run of ``scenario`` (the register writers over Hudi's provider)."""
        return LockWorkload(scenario)

    def triggers(self) -> dict[tuple[str, str], str]:
        """The recorded events of a writer at which a pause may start, and the trigger each is."""
        return TRIGGERS

    def verdict(self, events: list[Event], objects: Mapping[str, StoredObject]) -> Verdict:
        """The protocol's checkers on a history (and the store as the run left it)."""
        return check_lock_history(events, self.decisive_checkers())

    def replay_scenario(self, scenario: Scenario) -> Any:
        """The protocol's scenario that replays an explored run (``scenario``: its world, faults and
        schedule) in the simulated world, as ``hcc run FILE`` does."""
        return scenario

    def simulate(self, replay: Any) -> list[Event]:
        """Run a :meth:`replay_scenario` in the simulated world: its history."""
        return SimWorld(replay).run()

    # ---- what the bounds make ----------------------------------------------------------------

    def lock(self) -> LockConfig:
        if self.base is not None:
            return self.base.lock
        return LockConfig(variant=self.variant, validity_secs=self.validity_secs,
                          renew_interval_secs=self.renew_interval_secs, poll_ms=self.poll_ms,
                          drift_allowance_ms=self.drift_allowance_ms, enforce_hudi_limits=False,
                          audit=self.audit)

    def storage(self) -> StorageConfig:
        if self.base is not None:
            return dataclasses.replace(self.base.storage, latency_ms=Dist("fixed", 0), conflict_prob=0.0)
        return StorageConfig(flavor=self.flavor, latency_ms=Dist("fixed", 0), timeout_ms=self.timeout_ms,
                             sdk_retries=self.sdk_retries, retry_backoff_ms=self.retry_backoff_ms)

    def workload(self) -> WorkloadConfig:
        if self.base is not None:
            return dataclasses.replace(self.base.workload, writers=self.writers, node_start_ms={},
                                       holds=self.holds)
        return WorkloadConfig(writers=self.writers, steps_per_hold=self.steps_per_hold,
                              work_ms=Dist("fixed", self.work_ms), think_ms=Dist("fixed", self.think_ms),
                              start_ms=Dist("fixed", 0), check_before_write=self.check_before_write,
                              holds=self.holds)

    def nodes(self) -> list[str]:
        return self.workload().nodes()

    def scenario(self, name: str = "") -> Scenario:
        """The scenario every explored run starts from (no faults, no skew, zero latency), named
        ``explore-<protocol>`` (``explore-lock``) unless ``name`` is given."""
        lock = self.lock()
        name = name or f"explore-{self.protocol}"
        about = f"hcc explore --protocol {self.protocol}: {self.describe()}"
        return Scenario(name=name, description=about, seed=1,
                        duration_ms=self.time_guard(), expect="ok", lock=lock, storage=self.storage(),
                        workload=self.workload(), clocks={}, faults=FaultPlan())

    def _constants(self) -> list[int]:
        lock, st, wl = self.lock(), self.storage(), self.workload()
        out = [lock.validity_secs * 1000, lock.renew_interval_secs * 1000, lock.poll_ms,
               lock.drift_allowance_ms, st.timeout_ms, st.retry_backoff_ms, wl.work_ms.lo, wl.think_ms.lo,
               wl.start_ms.lo, self.skew_ms]
        return [c for c in out if c > 0]

    def tick(self) -> int:
        """The grid every event falls on: the given tick, or the gcd of every time constant."""
        return self.tick_ms if self.tick_ms is not None else math.gcd(*self._constants())

    def boundaries(self) -> dict[str, int]:
        """The durations a pause can cross (from the moment the lock was renewed or taken)."""
        lock = self.lock()
        validity = lock.validity_secs * 1000
        takeover = validity + lock.drift_allowance_ms + self.skew_ms
        return {"renew interval": lock.renew_interval_secs * 1000, "validity": validity,
                "validity + drift allowance + skew": takeover,
                "a takeover and a write": takeover + lock.poll_ms + self.workload().work_ms.lo}

    def pause_durations(self) -> tuple[int, ...]:
        """Pause lengths enumerated: given, or one tick past each boundary that matters."""
        if self.pause_ms is not None:
            return self.pause_ms
        b = self.boundaries()
        return tuple(sorted({b["renew interval"] + self.tick(), b["a takeover and a write"] + self.tick()}))

    def decisive_checkers(self) -> tuple[str, ...]:
        """The checkers whose violations decide the verdict (the others are reported as findings).

        By default all of them; for ``fenced`` the data checkers only, as in the catalogue's fenced
        scenario: a fencing token protects the register, it does not shorten a lease, so a paused
        holder still *believes* it holds the lock (an overlap, reported as a finding).
        """
        if self.checkers is not None:
            return self.checkers
        return ("stale-write", "lost-update") if self.lock().variant == "fenced" else CHECKERS

    def hold_ms(self) -> int:
        """The longest a writer holds the lock when nothing goes wrong (its steps, and a tick)."""
        wl = self.workload()
        return wl.steps_per_hold * wl.work_ms.lo + self.tick()

    def liveness_bound(self) -> int:
        """After the faults stop, the lock changes hands within this many ms while a writer waits for it.

        Default: a lease that nobody renews runs out (validity + drift allowance + skew), a poll
        later a waiting writer takes it, or a holder's whole hold and a think pass.
        """
        if self.liveness_ms is not None:
            return self.liveness_ms
        lock = self.lock()
        return (lock.validity_secs * 1000 + lock.drift_allowance_ms + self.skew_ms + lock.poll_ms
                + self.hold_ms() + self.workload().think_ms.lo + self.tick())

    def time_guard(self) -> int:
        """A run that is still going at this true time means the bounds did not bound it (a bug)."""
        if self.guard_ms is not None:
            return self.guard_ms
        per_hold = self.liveness_bound() + max(self.pause_durations(), default=0) + self.lock().poll_ms
        return 10 * self.writers * max(self.workload().holds, 1) * per_hold

    def crash_instants(self) -> list[int]:
        """When a crash may happen: every tick until the writers would be done without faults."""
        wl = self.workload()
        busy = self.writers * max(wl.holds, 1) * (self.hold_ms() + wl.think_ms.lo + self.lock().poll_ms)
        return list(range(self.tick(), self.lock().poll_ms + busy, self.tick()))

    def start_phases(self) -> list[int]:
        """Where a writer's first attempt may fall within a poll interval (just 0 without ``phases``)."""
        if not self.phases:
            return [0]
        return list(range(0, self.lock().poll_ms, self.tick()))

    def clock_offsets(self) -> list[int]:
        """Each node's clock offset: 0, or ``skew_ms`` ahead (any two writers can be skewed either way)."""
        return [0] if self.skew_ms == 0 else [0, self.skew_ms]

    def clocks(self, offsets: dict[str, int]) -> dict[str, ClockSpec]:
        return {n: ClockSpec(offset_ms=o) for n, o in offsets.items() if o}

    def describe(self) -> str:
        """One line: the variant and every bound."""
        lock = self.lock()
        kinds = ",".join(self.fault_kinds) if self.faults else "-"
        return (f"variant={lock.variant} writers={self.writers} faults={self.faults} kinds={kinds} "
                f"skew={self.skew_ms}ms validity={lock.validity_secs}s renew={lock.renew_interval_secs}s "
                f"poll={lock.poll_ms}ms holds={self.holds}x{self.workload().steps_per_hold} "
                f"tick={self.tick()}ms latency<={self.latency_ticks}t")

    # ---- validation ----------------------------------------------------------------------------

    def validate(self) -> None:
        """Raise ConfigError naming the first bad field (the CLI's option names follow the field names)."""
        _require(self.lock().variant in VARIANTS, "variant", self.lock().variant,
                 f"must be one of {', '.join(VARIANTS)}")
        _require(1 <= self.writers <= 4, "writers", self.writers, "must be between 1 and 4")
        _require(1 <= self.holds <= 4, "holds", self.holds, "must be between 1 and 4")
        _require(0 <= self.faults <= 4, "faults", self.faults, "must be between 0 and 4")
        for k in self.fault_kinds:
            _require(k in FAULT_KINDS, "fault_kinds", k, f"must be among {', '.join(FAULT_KINDS)}")
        _require(bool(self.fault_kinds) or self.faults == 0, "fault_kinds", "", "name at least one kind")
        _require(0 <= self.skew_ms < 60_000, "skew_ms", self.skew_ms, "must be >= 0 and below a minute")
        _require(self.latency_ticks >= 0, "latency_ticks", self.latency_ticks, "must be >= 0")
        _require(self.steps_per_hold >= 1, "steps_per_hold", self.steps_per_hold, "must be >= 1")
        for name in ("work_ms", "think_ms", "timeout_ms", "poll_ms"):
            _require(getattr(self, name) > 0, name, getattr(self, name), "must be > 0")
        _require(self.retry_backoff_ms >= 0, "retry_backoff_ms", self.retry_backoff_ms, "must be >= 0")
        _require(self.sdk_retries >= -1, "sdk_retries", self.sdk_retries,
                 "must be >= 0, or -1 (the variant's)")
        sc = self.scenario()
        sc.validate()
        wl = sc.workload
        for name, dist in (("work_ms", wl.work_ms), ("think_ms", wl.think_ms), ("start_ms", wl.start_ms)):
            _require(dist.kind == "fixed", f"workload.{name}.kind", dist.kind,
                     "must be fixed: the explorer enumerates schedules, it draws nothing")
        tick = self.tick()
        _require(tick > 0, "tick_ms", tick, "must be > 0")
        for c in self._constants():
            _require(c % tick == 0, "tick_ms", tick, f"must divide every time constant ({c} ms does not)")
        for d in self.pause_durations():
            _require(d > 0 and d % tick == 0, "pause_ms", d,
                     f"must be > 0 and a multiple of the tick ({tick})")
        _require(2 * self.latency_ticks * tick <= sc.storage.timeout_ms, "latency_ticks", self.latency_ticks,
                 f"a request and its reply must fit in the client's timeout ({sc.storage.timeout_ms} ms)")
        _require(self.time_guard() > 0, "guard_ms", self.time_guard(), "must be > 0")
        for name in self.decisive_checkers():
            _require(name in self.known_checkers, "checkers", name,
                     f"must be among {', '.join(self.known_checkers)}")
        _require(self.liveness_bound() > 0, "liveness_ms", self.liveness_bound(), "must be > 0")
        _require(self.crash_restart_ms == -1 or self.crash_restart_ms > 0, "crash_restart_ms",
                 self.crash_restart_ms, "must be -1 (never) or > 0")
        _require(self.max_states is None or self.max_states > 0, "max_states", self.max_states, "must be > 0")
        _require(self.max_seconds is None or self.max_seconds > 0, "max_seconds", self.max_seconds,
                 "must be > 0")

    def models(self) -> str:
        """Whose code an exploration of these bounds runs (a catalogue entry's ``models`` line)."""
        return f"lock provider: {lock_variant(self.lock().variant).follows}"

    def derived_json(self) -> dict[str, Any]:
        """What :meth:`to_json` adds to the fields for this protocol: the lock's variant (a base scenario's,
        when it has one)."""
        return {"variant": self.lock().variant}

    def to_json(self) -> dict[str, Any]:
        """The configuration as plain data (what :func:`config_from_dict` reads back), with derived values."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "base":
                continue
            v = getattr(self, f.name)
            out[f.name] = dataclasses.asdict(v) if isinstance(v, Reductions) else list(v) if isinstance(
                v, tuple) else v
        out.update(self.derived_json())
        out.update(protocol=self.protocol, tick_ms=self.tick(), liveness_ms=self.liveness_bound(),
                   pause_ms=list(self.pause_durations()), checkers=list(self.decisive_checkers()))
        return out

    def plan(self) -> Plan:
        """Everything the bounds derive, computed once for a whole exploration."""
        self.validate()
        return Plan(self, self.scenario(), self.tick(), self.time_guard(), self.pause_durations(),
                    self.liveness_bound(), tuple(self.nodes()), tuple(self.start_phases()),
                    tuple(self.clock_offsets()),
                    tuple(self.crash_instants()) if "crash" in self.fault_kinds and self.faults else (),
                    frozenset(self.fault_kinds) if self.faults else frozenset())


@dataclass(frozen=True)
class Plan:
    """The values a run needs of its bounds (see :meth:`Bounds.plan`)."""

    bounds: Bounds
    scenario: Scenario
    tick: int
    guard: int
    durations: tuple[int, ...]
    liveness: int
    nodes: tuple[str, ...]
    phases: tuple[int, ...]
    offsets: tuple[int, ...]
    crash_instants: tuple[int, ...]
    kinds: frozenset[str]
    # the scenario of each choice of root decisions met so far (``Run._root``: every run of a search makes
    # one, and most runs repeat the same root decisions)
    roots: dict[Hashable, Scenario] = field(default_factory=dict, compare=False, repr=False)


# ---- a configuration from plain data (a TOML table [explore]) ----------------------------------------

def _typed(where: str, name: str, value: Any, cls: type) -> Any:
    """``value`` as the field ``name`` of the bounds class ``cls`` through ``model/typed.py``; ConfigError
    naming ``where.name`` (and the item in a list) otherwise."""
    return _convert(f"{where}.{name}" if where else name, value, _field_type(name, cls))


@functools.cache
def _field_type(name: str, cls: type) -> Any:
    """The declared type of the field ``name`` of the bounds class ``cls``."""
    return typing.get_type_hints(cls)[name]


def _convert(field_name: str, value: Any, tp: Any) -> Any:
    try:
        return typed.convert(value, tp, table="a table")
    except typed.Invalid as e:
        p = e.problem
        if p.kind == "unknown":
            raise ConfigError(p.dotted(prefix=field_name), p.value,
                              f"is not a {p.owner.lower()} field (one of {', '.join(p.known)})") from None
        raise ConfigError(p.dotted(prefix=field_name), p.value, f"must be {p.wants}") from None


def _reductions(where: str, value: Any) -> Reductions:
    """Reductions from a list of the names switched on, or a table of booleans."""
    field_name = f"{where}.reductions" if where else "reductions"
    names = [f.name for f in dataclasses.fields(Reductions)]
    if isinstance(value, list | tuple):
        for x in value:
            _require(x in names, field_name, x, f"must be among {', '.join(names)}")
        return Reductions(**{n: n in value for n in names})
    _require(isinstance(value, dict), field_name, value, f"must be a list of names among {', '.join(names)} "
             "or a table of booleans")
    reductions: Reductions = _convert(field_name, value, Reductions)
    return reductions

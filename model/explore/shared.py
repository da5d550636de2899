"""What the tasks of one node share, declared, and what each explored step read and wrote of it.

Two steps of one node's different tasks (its writer, heartbeat, pause end) commute when neither writes what
the other reads or writes (``search.independent``).  What they read and write is recorded while a step runs,
on the objects that the tasks of a node share: the kernel's ``Task`` and ``Node`` (flags, pauses, tasks,
hooks), the heartbeat-start faults, the explorer's fault bookkeeping (``FaultState``) and what the workload
declares (``shared_state``: the lock's provider and audit trail).  Each such class declares its shared
attributes in ``__explore_shared__``, a dict from attribute to its kind:

- ``"r"``: a field; a read reads it, an assignment of another value writes it;
- ``"m"``: a field holding a mutable container (list, set, dict), changed through the field only (never
  through an alias kept across a suspension);
- ``"c"``: a constant once the step that made the object is over (an assignment later is refused).

A field whose value (a container: its content) is at the step's end what it was when the step first touched it
was only read.  Objects made by the step itself are nobody else's yet.  An access to an attribute the class
does not declare is the business of the task that made the object; from any other task it is refused, naming
the class and the attribute (:class:`UndeclaredShared`): an undeclared shared field is never assumed
independent.  Methods, properties and class attributes are looked up as usual (what they read of the object is
recorded).

Sound when, besides that: every object two tasks of a node reach is of a declared class (an object of an
undeclared class is not seen here: a workload that does not declare ``shared_state`` keeps every two steps of
one node dependent), a step is deterministic (its footprint a function of the state it runs in), and the
checkers do not depend on the order, within one instant, of events of different tasks of one node (the lock's
read the writer's, the store's and the nemesis's events only), as the relation already assumes for steps of
different nodes.

The explored world installs the hooks on the declared classes (:func:`install`) when it first records; the
simulated and real worlds never do.  Objects are labelled in the order a run makes them, so two runs along one
path label them alike (``Run`` labels from the start of every run, and records the steps whose footprints the
search asks for).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from model.explore.coverage import UndeclaredState

SHARED = "__explore_shared__"
_KINDS = ("r", "m", "c")
Access = tuple[int, str]  # (the object's label in the run, the attribute)


class UndeclaredShared(UndeclaredState):
    """A task touched an attribute of another task's shared object that its class does not declare."""


@dataclass(frozen=True)
class Footprint:
    """What one step read and wrote of the declared shared state."""

    reads: frozenset[Access]
    writes: frozenset[Access]

    def conflicts(self, other: Footprint) -> bool:
        """True when one writes what the other reads or writes."""
        w, ow = self.writes, other.writes
        return not (w.isdisjoint(other.reads) and w.isdisjoint(ow) and ow.isdisjoint(self.reads))

    def __or__(self, other: Footprint) -> Footprint:
        return Footprint(self.reads | other.reads, self.writes | other.writes)


class Recorder:
    """One run's labels of shared objects, and the footprint of the step running now (when recording).

    ``current()`` names the task running now (its process identity), for the owner check.
    """

    def __init__(self, current: Callable[[], tuple[Any, ...]]) -> None:
        self.current = current
        self.labels: dict[int, tuple[int, int, tuple[Any, ...]]] = {}  # id -> (label, step made in, owner)
        self.keep: list[Any] = []  # labelled objects stay alive (their ids stay theirs) for the run
        self.step = 0  # steps begun so far
        self.recording = False
        self.reads: set[Access] = set()
        self.writes: set[Access] = set()
        # a field the step read or assigned: (object, name, its value or content when the step first did)
        self.seen: dict[Access, tuple[Any, str, Any]] = {}

    def made(self, obj: Any) -> None:
        """``obj`` is being made now (in the current step, by the task running now): label it."""
        self.labels[id(obj)] = (len(self.keep), self.step, self.current()[:4])
        self.keep.append(obj)

    def begin(self) -> None:
        """A step begins: record what it touches."""
        self.step += 1
        self.recording = True
        _reading(True)
        self.reads, self.writes, self.seen = set(), set(), {}

    def end(self) -> Footprint:
        """The step is over: its footprint."""
        self.recording = False
        _reading(False)
        # a field whose value (a container: its content) is at the end what it was when the step first touched
        # it was only read, whatever the step did with it meanwhile (nothing else ran in between)
        for access, (obj, name, before) in self.seen.items():
            if _content(_GET(obj, name, _MISSING)) != before:
                self.writes.add(access)
            else:
                self.writes.discard(access)
                self.reads.add(access)
        return Footprint(frozenset(self.reads), frozenset(self.writes))

    def pause(self) -> None:
        """Stop recording without a footprint (the step was cut short)."""
        self.recording = False
        _reading(False)

    # ---- called by the installed hooks ----------------------------------------------------------

    def read(self, obj: Any, name: str, kind: str, value: Any) -> None:
        got = self.labels.get(id(obj))
        if got is None:  # not this run's (an object of an earlier run that the garbage collector finalises)
            return
        label, made, _ = got
        if made == self.step:  # made by this step: nobody else can have seen it yet
            return
        access = (label, name)
        self.reads.add(access)
        if access not in self.seen:
            self.seen[access] = (obj, name, _content(value))

    def assign(self, obj: Any, name: str, kind: str, old: Any, new: Any) -> None:
        got = self.labels.get(id(obj))
        if got is None:
            return
        label, made, _ = got
        if made == self.step:
            return
        if kind == "c":
            kind_name = type(obj).__qualname__
            raise UndeclaredShared(f"{type(obj).__module__}.{kind_name}.{name} is declared constant "
                                   f"({SHARED}) but a step after the one that made the object assigns it")
        access = (label, name)
        if access not in self.seen:
            self.seen[access] = (obj, name, _content(old))
        # an assignment of the value it has changes nothing, but what it does depends on that value
        if old is _MISSING or old is not new and old != new:
            self.writes.add(access)
        else:
            self.reads.add(access)

    def private(self, obj: Any, name: str) -> None:
        """An undeclared attribute: the owner task's alone."""
        got = self.labels.get(id(obj))
        if got is None:
            return
        _, made, owner = got
        if made == self.step:
            return
        me = self.current()[:4]
        if me != owner:
            kind = type(obj)
            raise UndeclaredShared(
                f"{kind.__module__}.{kind.__qualname__}.{name}: task {'/'.join(map(str, me[:2]))} touches an "
                f"attribute that {kind.__qualname__}'s {SHARED} does not declare, of an object made by task "
                f"{'/'.join(map(str, owner[:2]))}: declare it (r, m or c), or keep it to its owner task")


_MISSING = object()
def _GET(obj: Any, name: str, default: Any) -> Any:  # noqa: N802 - the hook-free lookup
    try:
        return object.__getattribute__(obj, name)
    except AttributeError:
        return default
ACTIVE: list[Recorder | None] = [None]  # the recorder of the run going on in this process, if any


def _content(value: Any) -> Any:
    """What a field's value is compared by: a container's content, anything else itself."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, set | frozenset):
        return frozenset(value)
    if isinstance(value, list):
        return tuple(value)
    return value


def declaration(kind: type) -> dict[str, str]:
    """The shared attributes ``kind`` and its bases declare, checked: each kind one of r, m, c."""
    out: dict[str, str] = {}
    for base in reversed(kind.__mro__):
        out.update(vars(base).get(SHARED, {}))
    for name, k in out.items():
        if k not in _KINDS:
            raise UndeclaredShared(f"{kind.__module__}.{kind.__qualname__}.{SHARED}[{name!r}] = {k!r}: "
                                   f"the kind of a shared attribute is one of {', '.join(_KINDS)}")
    return out


_INSTALLED: set[type] = set()
_READS: dict[type, Callable[[Any, str], Any]] = {}  # each installed class's reading hook


def _reading(on: bool) -> None:
    """Hook the installed classes' reads while a step records (a replayed step pays no hook on a read)."""
    for kind, hook in _READS.items():
        if on:
            kind.__getattribute__ = hook  # type: ignore[method-assign,assignment]
        elif "__getattribute__" in vars(kind):
            del kind.__getattribute__


def install(kinds: tuple[type, ...]) -> None:
    """Record accesses to the declared classes' objects while a recorder is active (once per class)."""
    for kind in kinds:
        if kind not in _INSTALLED:
            _install(kind)
            _INSTALLED.add(kind)


def _install(kind: type) -> None:
    decl = declaration(kind)
    if not decl:
        raise UndeclaredShared(f"{kind.__module__}.{kind.__qualname__} is shared between tasks but declares "
                               f"no {SHARED}")
    # what a lookup finds on the class and not in the instance: methods, properties, class constants
    fields = set(getattr(kind, "__dataclass_fields__", {}))
    static = {n for base in kind.__mro__ for n in vars(base) if n not in fields}
    get, put = object.__getattribute__, object.__setattr__
    active = ACTIVE

    def __getattribute__(self: Any, name: str) -> Any:
        value = get(self, name)
        rec = active[0]
        if rec is not None and rec.recording:
            k = decl.get(name)
            if k is not None:
                if k != "c":
                    rec.read(self, name, k, value)
            elif name not in static:
                rec.private(self, name)
        return value

    def __setattr__(self: Any, name: str, value: Any) -> None:
        rec = active[0]
        if rec is not None:
            if not get(self, "__dict__"):
                rec.made(self)  # its first attribute: labels follow the order objects are made in
            elif rec.recording:
                k = decl.get(name)
                if k is not None:
                    rec.assign(self, name, k, get(self, "__dict__").get(name, _MISSING), value)
                else:
                    rec.private(self, name)
        put(self, name, value)

    _READS[kind] = __getattribute__
    kind.__setattr__ = __setattr__  # type: ignore[method-assign,assignment]

"""The canonical key of an explored state: what decides the future of a run, and nothing else.

Python generators cannot be copied, but they can be read: a task's state is the
position of each generator in its ``yield from`` chain (``gi_frame.f_lasti``) and
the frame's locals.  :class:`Encoder` walks the run's object graph from its roots
(the kernel's nodes and tasks, the pending steps, the store's objects, the faults
left) and turns it into nested tuples:

- generators: code, instruction offset, the locals still live there (a local that is
  written before it is read again cannot change the future: a bytecode liveness
  analysis drops it), and the generator they delegate to;
- closures and bound methods: the function's name and the values they capture;
- shared objects (tasks, events, processes, the provider) are numbered on first
  visit and referred to by that number afterwards, so sharing and cycles are kept;
- run-wide objects (the kernel, the world, configuration) are named, not walked;
- names a run invents are renamed in order of first appearance: owner ids (random
  UUIDs), version tags (S3 ETags, GCS generations, Azure ETags), also inside bodies;
- times are relative to now: clock readings and values made from them (epoch
  milliseconds, e.g. a lock's validUntil, also inside bodies) by their size, true
  times by name (``sent``, ``now``, ``until``, ``at_ms``, ``pauses``: the kernel's and
  the network's); so a state met again later is the same state, and runs that only
  wait and poll come back to states already seen;
- with symmetry, node names are permuted and the smallest encoding is the key, so
  two states equal up to renaming identical writers get one key.

The history is not part of the key: checkers read it along every path, and what
they need of the past to judge the future (who holds the lock, the register's
value, when the faults stopped) is in the state.
"""

from __future__ import annotations

import dis
import enum
import functools
import gc
import itertools
import re
import types
from collections.abc import Callable, Hashable, Iterable
from dataclasses import fields, is_dataclass
from typing import Any

import simpy

UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
VERSION = re.compile(rb'"[0-9a-f]{32}"|"0x[0-9A-F]+"|(?<![0-9])[0-9]{16,}(?![0-9])')
_NAMES = re.compile(UUID.pattern + b"|" + VERSION.pattern)
_EPOCH_TEXT = re.compile(rb"(?<![0-9#])[0-9]{13}(?![0-9])")
EPOCH_SCALE = 10**12  # clock readings are epoch milliseconds (2026: about 1.77e12)
TRUE_TIMES = frozenset({"sent", "now", "until", "at_ms", "pauses"})


class Encoder:
    """One canonical encoding of one state (see the module doc); ``names`` permutes node names."""

    def __init__(self, constants: dict[int, str], names: dict[str, str], timers: Callable[[Any], Any],
                 now: int, epoch_now: int) -> None:
        self.constants = constants  # id(obj) -> name, for run-wide objects
        self.names = names  # node name -> canonical node name
        self.timers = timers  # a SimPy event -> its pending timer, or None
        self.now = now  # true time
        self.epoch_now = epoch_now  # an unskewed clock's reading now
        self.memo: dict[int, int] = {}
        self.keep: list[Any] = []  # objects numbered in the memo stay alive while it is used
        self.renamed: dict[bytes, bytes] = {}
        self._texts: dict[str, str] = {}

    def fork(self) -> Encoder:
        """A scratch copy (to order objects by their encodings without numbering them here)."""
        f = Encoder(self.constants, self.names, self.timers, self.now, self.epoch_now)
        f.memo = dict(self.memo)
        f.renamed = dict(self.renamed)
        f._texts = dict(self._texts)
        return f

    # ---- times ----------------------------------------------------------------------------------

    def true_time(self, v: Any) -> Hashable:
        """A true time (ms since the run started) under one of the names of TRUE_TIMES: relative to now."""
        if isinstance(v, int) and not isinstance(v, bool):
            return ("@", v - self.epoch_now) if v >= EPOCH_SCALE else ("~", v - self.now)
        if isinstance(v, tuple | list):
            return ("t", *[self.true_time(x) for x in v])
        return self.enc(v)

    def _epoch_text(self, m: re.Match[bytes]) -> bytes:
        return b"@%d" % (int(m.group(0)) - self.epoch_now)

    # ---- names ----------------------------------------------------------------------------------

    def _fresh(self, m: re.Match[bytes]) -> bytes:
        token = m.group(0)
        got = self.renamed.get(token)
        if got is None:
            got = b"#%d" % len(self.renamed)
            self.renamed[token] = got
        return got

    def text(self, s: str) -> str:
        got = self._texts.get(s)
        if got is None:
            got = self._texts[s] = self._text(s)
        return got

    def _text(self, s: str) -> str:
        if s in self.names:
            return self.names[s]
        head, sep, tail = s.partition("/")
        if sep and head in self.names:
            return f"{self.names[head]}/{tail}"
        if len(s) >= 16 and _NAMES.search(s.encode()):
            return _NAMES.sub(self._fresh, s.encode()).decode()
        return s

    def data(self, b: bytes) -> bytes:
        if len(b) < 13:
            return b
        return _EPOCH_TEXT.sub(self._epoch_text, _NAMES.sub(self._fresh, b))

    # ---- objects --------------------------------------------------------------------------------

    def enc(self, obj: Any) -> Hashable:
        """The encoding of any value of the run (dispatched on its type)."""
        kind = type(obj)
        if kind is str:  # the commonest values, looked up before the handler table
            got: str | None = self._texts.get(obj)
            return got if got is not None else self.text(obj)
        if obj is None or kind is bool:
            return obj  # type: ignore[no-any-return]  # None or a bool
        handler = _HANDLERS.get(kind)
        if handler is None:
            handler = _HANDLERS[kind] = _handler_for(kind)
        return handler(self, obj)

    def _int(self, v: int) -> Hashable:
        return ("@", v - self.epoch_now) if v >= EPOCH_SCALE else v

    def _str(self, s: str) -> Hashable:
        return self.text(s)

    def _bytes(self, b: bytes) -> Hashable:
        return ("b", self.data(b))

    def _tuple(self, t: tuple[Any, ...]) -> Hashable:
        return ("t", *[self.enc(x) for x in t])

    def _frozenset(self, fs: frozenset[Any]) -> Hashable:
        return ("fs", *sorted((self.enc(x) for x in fs), key=repr))

    def _shared(self, obj: Any, then: Callable[[Encoder, Any], Hashable]) -> Hashable:
        """Objects that may be shared or cyclic: named if run-wide, numbered on first visit."""
        oid = id(obj)
        const = self.constants.get(oid)
        if const is not None:
            return ("c", const)
        seen = self.memo.get(oid)
        if seen is not None:
            return ("r", seen)
        self.memo[oid] = len(self.memo)
        self.keep.append(obj)
        return then(self, obj)

    def _named(self, name: str, value: Any) -> Hashable:
        return self.true_time(value) if name in TRUE_TIMES else self.enc(value)

    def _events(self, ev: simpy.Event) -> Hashable:
        cbs = ev.callbacks
        return None if cbs is None else ("l", *[self.enc(c) for c in cbs])

    def _items(self, items: Iterable[tuple[Any, Any]], named: bool = False) -> tuple[Hashable, ...]:
        enc = self.enc
        pairs = [(k, enc(k), v) for k, v in items]
        if all(type(e) is str for _, e, _ in pairs):
            pairs.sort(key=_second)
        if named:
            return tuple((e, (self.true_time(v) if k in TRUE_TIMES else enc(v)) if type(k) is str else enc(v))
                         for k, e, v in pairs)
        return tuple((e, enc(v)) for _, e, v in pairs)

    def generator(self, gen: types.GeneratorType[Any, Any, Any]) -> Hashable:
        frame = gen.gi_frame
        if frame is None:
            return ("g", gen.gi_code.co_qualname, None)
        loc = frame.f_locals
        live = live_locals(gen.gi_code, frame.f_lasti)
        named = self._named
        local = tuple((name, named(name, loc[name]))
                      for name in sorted(loc) if live is None or name in live)
        enc = self.enc
        stack = tuple(enc(x) for x in frame_stack(gen, frame, loc))
        sub = gen.gi_yieldfrom
        return ("g", gen.gi_code.co_qualname, frame.f_lasti, local, stack,
                self.enc(sub) if sub is not None else None)


def _second(kv: tuple[Any, Any, Any]) -> Any:
    return kv[1]


# ---- a suspended frame's value stack ------------------------------------------------------------


def frame_stack(gen: types.GeneratorType[Any, Any, Any], frame: types.FrameType,
                loc: dict[str, Any]) -> list[Any]:
    """What a suspended generator keeps on its value stack (a ``for`` loop's iterator, a pending call).

    Python shows a frame's locals but not its stack; the garbage collector's view of the
    generator lists both, locals first: the stack is what follows the bound locals.  When the
    layout is not the expected one (cell variables), every object after the header is kept.
    """
    refs = gc.get_referents(gen)
    code = gen.gi_code
    i = 3  # gi_code, gi_name, gi_qualname
    while i < len(refs) and (refs[i] is frame or refs[i] is loc or refs[i] is code
                             or (isinstance(refs[i], types.FunctionType) and refs[i].__code__ is code)):
        i += 1
    start = i
    if code.co_cellvars or code.co_freevars:
        return refs[start:]
    for name in code.co_varnames:
        if name in loc:
            if i >= len(refs) or refs[i] is not loc[name]:
                return refs[start:]
            i += 1
    return refs[i:]


# ---- live locals ----------------------------------------------------------------------------------

_TERMINAL = frozenset({"RETURN_VALUE", "RAISE_VARARGS", "RERAISE"})
_JUMPS = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP",
                    "JUMP_NO_INTERRUPT"})
_BRANCHES = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


@functools.cache
def _liveness(code: types.CodeType) -> dict[int, frozenset[str]]:
    """For each instruction offset, the local variables live after it (read before being written again).

    A plain backward dataflow over the bytecode, with the edges of jumps, branches and the
    exception table; cell variables are not tracked here (see :func:`live_locals`).
    """
    ins = list(dis.get_instructions(code))
    offsets = [i.offset for i in ins]
    at = {o: k for k, o in enumerate(offsets)}
    succ: list[list[int]] = [[] for _ in ins]
    use: list[frozenset[str]] = []
    kill: list[frozenset[str]] = []
    for k, i in enumerate(ins):
        nxt = [k + 1] if k + 1 < len(ins) else []
        if i.opname in _TERMINAL:
            pass
        elif i.opname in _JUMPS:
            succ[k].append(at[i.argval])
        elif i.opcode in _BRANCHES:
            succ[k] += [at[i.argval], *nxt]
        else:
            succ[k] += nxt
        use.append(frozenset({i.argval}) if i.opname.startswith("LOAD_FAST") else frozenset())
        kill.append(frozenset({i.argval}) if i.opname in ("STORE_FAST", "DELETE_FAST") else frozenset())
    for e in dis.Bytecode(code).exception_entries:  # type: ignore[attr-defined]  # 3.11+
        for k, o in enumerate(offsets):
            if e.start <= o < e.end:
                succ[k].append(at[e.target])
    live_in: list[frozenset[str]] = [frozenset()] * len(ins)
    live_out: list[frozenset[str]] = [frozenset()] * len(ins)
    changed = True
    while changed:
        changed = False
        for k in range(len(ins) - 1, -1, -1):
            out = frozenset().union(*(live_in[j] for j in succ[k])) if succ[k] else frozenset()
            inn = use[k] | (out - kill[k])
            if out != live_out[k] or inn != live_in[k]:
                live_out[k], live_in[k] = out, inn
                changed = True
    return dict(zip(offsets, live_out, strict=True))


@functools.cache
def live_locals(code: types.CodeType, lasti: int) -> frozenset[str] | None:
    """The locals a generator suspended at ``lasti`` may still read (None: all of them)."""
    live = _liveness(code).get(lasti)
    if live is None:
        return None  # not started, or an offset the analysis does not know: keep everything
    return live | frozenset(code.co_cellvars) | frozenset(code.co_freevars)


# ---- encoders by type (built on first sight of a type) ------------------------------------------


def _function(e: Encoder, f: types.FunctionType) -> Hashable:
    cells = tuple(e._named(name, c.cell_contents)
                  for name, c in zip(f.__code__.co_freevars, f.__closure__ or (), strict=True))
    return ("f", f.__qualname__, cells)


def _event(e: Encoder, ev: simpy.Event) -> Hashable:
    timer = e.timers(ev)
    if timer is not None:
        return ("T", timer.lo - e.now, e._events(ev))
    return ("E", ev.triggered, e.enc(ev.value) if ev.triggered else None, e._events(ev))


def _mutable(body: Callable[[Encoder, Any], Hashable]) -> Callable[[Encoder, Any], Hashable]:
    return lambda e, obj: e._shared(obj, body)


def _handler_for(kind: type) -> Callable[[Encoder, Any], Hashable]:
    """How to encode values of ``kind`` (see the module doc)."""
    if issubclass(kind, type):  # a class (the kernel keeps an effect's type): a constant of the program
        return lambda e, c: ("type", c.__module__, c.__qualname__)
    if issubclass(kind, enum.Enum):
        return lambda e, v: ("e", kind.__name__, v.name)
    if is_dataclass(kind) and kind.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        names = tuple(f.name for f in fields(kind))
        name = kind.__name__

        def frozen(e: Encoder, obj: Any) -> Hashable:
            const = e.constants.get(id(obj))
            if const is not None:
                return ("c", const)
            return (name, *[e._named(n, getattr(obj, n)) for n in names])

        return frozen
    if issubclass(kind, simpy.Process):  # the explorer's processes keep their generator (ReadableProcess)
        return _mutable(lambda e, p: ("p", e.enc(p.generator), e.enc(p.target), e._events(p)))
    if issubclass(kind, simpy.Event):
        return _mutable(_event)
    if issubclass(kind, BaseException):
        return _mutable(lambda e, x: ("x", kind.__name__, e.enc(x.args)))
    if kind.__name__.endswith("iterator"):
        def iterator(e: Encoder, it: Any) -> Hashable:
            red = it.__reduce__()
            return ("i", kind.__name__, e.enc(red[1]), e.enc(red[2] if len(red) > 2 else None))

        return _mutable(iterator)
    if kind.__name__ == "Random":
        return lambda e, r: ("rng",)  # the explorer's workloads draw nothing (fixed distributions only)
    if kind is range:
        return lambda e, r: ("range", r.start, r.stop, r.step)
    name = kind.__name__

    def instance(e: Encoder, obj: Any) -> Hashable:
        if hasattr(obj, "__dict__"):
            return (name, *e._items(vars(obj).items(), named=True))
        return (name, e.enc(obj.__reduce__()[1:]))  # a built-in: what pickling would keep of it

    return _mutable(instance)


_HANDLERS: dict[type, Callable[[Encoder, Any], Hashable]] = {
    bool: lambda e, v: v,
    float: lambda e, v: v,
    type(None): lambda e, v: v,
    int: Encoder._int,
    str: Encoder._str,
    bytes: Encoder._bytes,
    tuple: Encoder._tuple,
    frozenset: Encoder._frozenset,
    list: _mutable(lambda e, v: ("l", *[e.enc(x) for x in v])),
    dict: _mutable(lambda e, v: ("d", *e._items(v.items()))),
    set: _mutable(lambda e, v: ("s", *sorted((e.enc(x) for x in v), key=repr))),
    types.GeneratorType: _mutable(Encoder.generator),
    types.MethodType: _mutable(lambda e, m: ("m", m.__func__.__qualname__, e.enc(m.__self__))),
    types.FunctionType: _mutable(_function),
}


def shape(gen: Any) -> tuple[Any, ...]:
    """Where a generator stands: the code and instruction of each frame of its ``yield from`` chain.

    Cheap, and blind to names, so states equal up to renaming nodes give their nodes equal shapes.
    """
    out: list[Any] = []
    while gen is not None and getattr(gen, "gi_frame", None) is not None:
        out.append((gen.gi_code.co_qualname, gen.gi_frame.f_lasti))
        gen = gen.gi_yieldfrom
    return tuple(out)


def canonical(encode: Callable[[dict[str, str]], Hashable], nodes: list[str], symmetry: bool,
              signature: Callable[[str], Hashable] | None = None) -> tuple[Hashable, dict[str, str]]:
    """The key and the renaming of nodes that gives it.

    Without symmetry, ``encode`` under the identity.  With it, the least encoding (by ``repr``)
    over the renamings that list the nodes in the order of their ``signature`` (a function of a
    node's state that ignores names); nodes with equal signatures are tried in every order, so
    the key is the same for every state of one orbit.
    """
    if not symmetry or len(nodes) < 2:
        names = {n: n for n in nodes}
        return encode(names), names
    sig = signature or (lambda n: 0)
    groups: dict[str, list[str]] = {}
    for n in nodes:
        groups.setdefault(repr(sig(n)), []).append(n)
    ordered = [groups[k] for k in sorted(groups)]
    best: tuple[str, Hashable, dict[str, str]] | None = None
    for parts in itertools.product(*(itertools.permutations(g) for g in ordered)):
        flat = [n for part in parts for n in part]
        names = {n: nodes[i] for i, n in enumerate(flat)}  # the i-th in order gets the i-th name
        key = encode(names)
        if len(ordered) == len(nodes):
            return key, names
        r = repr(key)
        if best is None or r < best[0]:
            best = (r, key, names)
    assert best is not None
    return best[1], best[2]

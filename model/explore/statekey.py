"""The canonical key of an explored state, built from what each part of the run declares.

What a state consists of is stated by the code that owns it (``model/explorable.py``): the
kernel's nodes and tasks, the lock provider, the register writer, the store, the requests on
their way each have an ``__explore_state__``; a frozen dataclass is its fields.  This module
encodes a run's state from those declarations with a :class:`Keyer`:

- a time is recognised by its type or by its owner's declaration, never by a name or a digit
  pattern: the explored world's clocks answer with :class:`~model.explore.values.WallMs` and
  :class:`~model.explore.values.InstantMs`, and a declaration says ``k.wall(...)`` or
  ``k.instant(...)``; both are made relative to now, so runs that only wait and poll come back
  to states already seen;
- a name the run invents (an owner id, a version tag) is one the run made: its id generator and
  its store keep them (``invented``), and each is renamed in order of first appearance, so runs
  that drew them in another order meet; a node's name is one of the scenario's nodes, permuted
  by symmetry (``nodes``); a string that contains one (``w1/heartbeat``) is renamed too;
- a stored object's body is what the workload says of it (``body``);
- shared objects (tasks, events, processes, the provider) are numbered on first visit and
  referred to by number afterwards, so sharing and cycles are kept; run-wide objects (the
  kernel, the world, the configuration) are named, not encoded (``constants``);
- a protocol generator is where it is suspended, its source line (a documented attribute of
  its frame, the same in every Python that runs the same source), and its local variables,
  all of them, by their values; the generator it delegates to (``yield from``) follows.  A
  suspension whose state is not in the frame's locals is refused, naming the function and the
  line (:func:`check_suspension`): two suspension points on one line, a ``for`` loop around
  one that does not keep its position in a local (``range``, or ``enumerate`` of a local or of an
  attribute that stays the same while the loop runs), a
  value computed before it in the same expression or statement and kept on the interpreter's stack
  (an assignment's value before its target's index, a slice's lower bound, ``*a`` and ``**d``), a
  ``with`` other than ``contextlib.suppress``, a suspension in a ``finally`` block; and a
  suspension inside any form whose stack the model does not know (``_kept``: a ``match``, an
  unpacking target, ...), named with the form;
- a class met without a declaration is an error that names it (:class:`UndeclaredState`), and so is an
  attribute of a declared object that its declaration neither reads nor excludes with a reason
  (``coverage``, checked on every object the key encodes).

With symmetry, node names are permuted and the least encoding is the key (:func:`canonical`).
The history is not part of the key: what the checkers need of the past is in the state.
"""

from __future__ import annotations

import ast
import enum
import functools
import hashlib
import inspect
import itertools
import random
import textwrap
import types
from collections.abc import Callable, Hashable, Set
from dataclasses import fields, is_dataclass
from typing import Any

from model.explore.coverage import UncoveredAttribute, UndeclaredState, check_covered
from model.explore.values import Body, InstantMs, WallMs

__all__ = ["Keyer", "UncoveredAttribute", "UndeclaredState", "canonical", "check_suspension", "shape"]


class Keyer:
    """One canonical encoding of one state (``model.explorable.Keyer``; see the module doc)."""

    def __init__(self, *, constants: dict[int, str], nodes: dict[str, str], invented: Set[str], now: int,
                 epoch_now: int, body: Callable[[str, bytes | None, Keyer], Hashable],
                 event: Callable[[Keyer, Any], Hashable], base_offset: int = 0) -> None:
        self.constants = constants  # id(obj) -> name, for run-wide objects
        self.nodes = nodes  # node name -> canonical node name
        self.invented = invented  # the names the run made (owner ids, version tags)
        self.now = int(now)  # true time
        # the least skewed clock's reading now: ``epoch_now`` is an unskewed clock's, ``base_offset`` the
        # least offset of the run's clocks (a uniform shift of every clock changes no key)
        self.base_offset = int(base_offset)
        self.epoch_now = int(epoch_now) + self.base_offset
        self._body = body
        self._event = event  # how the world encodes a SimPy event or process
        self.memo: dict[int, int] = {}
        self.keep: list[Any] = []  # objects numbered in the memo stay alive while it is used
        self.renamed: dict[str, str] = {}
        self._texts: dict[str, Hashable] = {}

    def fork(self) -> Keyer:
        """A scratch copy (to order objects by their encodings without numbering them here)."""
        f = Keyer(constants=self.constants, nodes=self.nodes, invented=self.invented, now=self.now,
                  epoch_now=self.epoch_now - self.base_offset, body=self._body, event=self._event,
                  base_offset=self.base_offset)
        f.memo = dict(self.memo)
        f.renamed = dict(self.renamed)
        f._texts = dict(self._texts)
        return f

    # ---- the Keyer protocol (model/explorable.py) ------------------------------------------------

    def value(self, obj: Any) -> Hashable:
        """Any value, by its type or its declaration."""
        kind = type(obj)
        if kind in _PLAIN:  # itself; tested first as most values are (bench_explore_speed's states/s)
            return obj  # type: ignore[no-any-return]
        handler = _HANDLERS.get(kind)
        if handler is None:
            handler = _HANDLERS[kind] = _handler_for(kind)
        return handler(self, obj)

    def wall(self, ms: int) -> Hashable:
        """A wall-clock reading, relative to the least skewed clock's reading now."""
        return ("w", int(ms) - self.epoch_now)

    def offset(self, ms: int) -> Hashable:
        """A clock's offset from true time, relative to the least offset of the run's clocks."""
        return ("o", int(ms) - self.base_offset)

    def instant(self, ms: int) -> Hashable:
        """An instant of true or monotonic time, relative to now."""
        return ("t", int(ms) - self.now)

    def name(self, s: str | None) -> Hashable:
        """A name the run invented, renamed in order of first appearance."""
        if s is None:
            return None
        got = self.renamed.get(s)
        if got is None:
            got = self.renamed[s] = f"#{len(self.renamed)}"
        return got

    def node(self, s: str) -> Hashable:
        """A node's name, permuted."""
        return self.nodes.get(s, s)

    def body(self, key: str, body: bytes | None) -> Hashable:
        """An object's body, as the workload declares it."""
        return self._body(key, body, self)

    # ---- values by type ----------------------------------------------------------------------------

    def _str(self, s: str) -> Hashable:
        got = self._texts.get(s)
        if got is None:
            got = self._texts[s] = self._text(s)
        return got

    def _text(self, s: str) -> Hashable:
        nodes = self.nodes
        if s in nodes:
            return nodes[s]
        if s in self.invented:
            return self.name(s)
        head, sep, tail = s.partition("/")
        if sep and head in nodes:
            return f"{nodes[head]}/{tail}"
        return s

    def generator(self, gen: types.GeneratorType[Any, Any, Any]) -> Hashable:
        """Where a generator is suspended (its source line), its locals, and what it delegates to."""
        frame = gen.gi_frame
        if frame is None:
            return ("g", gen.__qualname__, "closed")
        state = inspect.getgeneratorstate(gen)
        if state == inspect.GEN_RUNNING:
            raise UndeclaredState(f"{gen.__qualname__} is running: a state is read between steps only")
        if state == inspect.GEN_CREATED:
            where: Hashable = "created"
        else:
            where = frame.f_lineno
            check_suspension(gen.gi_code, where)
        loc = frame.f_locals
        value = self.value
        local = tuple([(name, value(loc[name])) for name in sorted(loc)])
        sub = gen.gi_yieldfrom
        return ("g", gen.__qualname__, where, local, value(sub) if sub is not None else None)


# ---- encoders by type (built on first sight of a type) ------------------------------------------


def _function(k: Keyer, f: types.FunctionType) -> Hashable:
    cells = []
    for name, cell in zip(f.__code__.co_freevars, f.__closure__ or (), strict=True):
        try:
            cells.append((name, k.value(cell.cell_contents)))
        except ValueError:  # a cell not yet filled
            cells.append((name, "<empty>"))
    return ("f", f.__qualname__, tuple(cells))


def _mutable(body: Callable[[Keyer, Any], Hashable]) -> Callable[[Keyer, Any], Hashable]:
    """Objects that may be shared or cyclic, encoded by ``body``: named if run-wide, numbered on first visit
    and referred to by number afterwards."""
    def encode(k: Keyer, obj: Any) -> Hashable:
        oid = id(obj)
        const = k.constants.get(oid)
        if const is not None:
            return ("c", const)
        seen = k.memo.get(oid)
        if seen is not None:
            return ("r", seen)
        k.memo[oid] = len(k.memo)
        k.keep.append(obj)
        return body(k, obj)

    return encode


def _constant_or(body: Callable[[Keyer, Any], Hashable]) -> Callable[[Keyer, Any], Hashable]:
    """Immutable values: named if run-wide (the scenario's configuration), else encoded."""
    def encode(k: Keyer, obj: Any) -> Hashable:
        const = k.constants.get(id(obj))
        return ("c", const) if const is not None else body(k, obj)

    return encode


def _declared(k: Keyer, obj: Any) -> Hashable:
    check_covered(obj)
    return (type(obj).__qualname__, obj.__explore_state__(k))


def _fields(kind: type) -> Callable[[Keyer, Any], Hashable]:
    """A frozen dataclass without a declaration: its fields (and nothing else of it, ``coverage``)."""
    names = tuple(f.name for f in fields(kind))
    qual = kind.__qualname__

    def encode(k: Keyer, obj: Any) -> Hashable:
        check_covered(obj)
        return (qual, *[k.value(getattr(obj, n)) for n in names])

    return encode


def _handler_for(kind: type) -> Callable[[Keyer, Any], Hashable]:
    """How to encode values of ``kind`` (see the module doc)."""
    import simpy  # the explored world's events and processes: their encoding is the world's

    if issubclass(kind, type):  # a class (the kernel keeps an effect's type): a constant of the program
        return lambda k, c: ("type", c.__module__, c.__qualname__)
    if issubclass(kind, enum.Enum):
        return lambda k, v: ("e", kind.__name__, v.name)
    if hasattr(kind, "__explore_state__"):
        if is_dataclass(kind) and kind.__dataclass_params__.frozen:  # type: ignore[attr-defined]
            return _constant_or(_declared)
        return _mutable(_declared)
    if is_dataclass(kind) and kind.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        return _constant_or(_fields(kind))
    if issubclass(kind, simpy.Event):
        return _mutable(lambda k, ev: k._event(k, ev))
    if issubclass(kind, BaseException):
        return _mutable(lambda k, x: ("x", kind.__name__, k.value(x.args)))
    if issubclass(kind, random.Random):  # its state decides what it draws next (a 64-bit fingerprint)
        return _mutable(lambda k, r: ("rng", hash(r.getstate())))

    def undeclared(k: Keyer, obj: Any) -> Hashable:
        const = k.constants.get(id(obj))  # a run-wide object (the kernel, the world): named, not encoded
        if const is not None:
            return ("c", const)
        raise UndeclaredState(f"{kind.__module__}.{kind.__qualname__} is part of an explored state but "
                              "declares none: give it __explore_state__ (model/explorable.py)")

    return undeclared


_PLAIN = frozenset({bool, float, type(None), int})  # encoded as themselves (``Keyer.value``)
_HANDLERS: dict[type, Callable[[Keyer, Any], Hashable]] = {
    InstantMs: lambda k, v: k.instant(v),
    WallMs: lambda k, v: k.wall(v),
    str: Keyer._str,
    bytes: lambda k, b: ("b", b),
    Body: lambda k, b: k.body(b.key, bytes(b)),
    tuple: lambda k, t: ("t", *[k.value(x) for x in t]),
    frozenset: lambda k, fs: ("fs", *sorted((k.value(x) for x in fs), key=repr)),
    range: lambda k, r: ("range", r.start, r.stop, r.step),
    list: _mutable(lambda k, v: ("l", *[k.value(x) for x in v])),
    dict: _mutable(lambda k, v: ("d", *[(k.value(a), k.value(b)) for a, b in v.items()])),
    set: _mutable(lambda k, v: ("s", *sorted((k.value(x) for x in v), key=repr))),
    types.GeneratorType: _mutable(Keyer.generator),
    types.MethodType: _mutable(lambda k, m: ("m", m.__func__.__qualname__, k.value(m.__self__))),
    types.FunctionType: _mutable(_function),
    types.BuiltinMethodType: lambda k, b: (
        "bm", b.__qualname__, None if isinstance(b.__self__, types.ModuleType) else k.value(b.__self__)),
}


# ---- where a generator may be suspended ------------------------------------------------------------


@functools.cache
def _function_tree(code: types.CodeType) -> tuple[ast.AST, int, dict[int, ast.AST]]:
    """The function's AST, the offset of its first line in the file, and each node's parent."""
    lines, first = inspect.getsourcelines(code)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    parents: dict[int, ast.AST] = {}
    for parent in ast.walk(fn):
        for child in ast.iter_child_nodes(parent):
            parents[id(child)] = parent
    return fn, first - 1, parents


def _suspensions(fn: ast.AST) -> list[ast.expr]:
    """The ``yield``, ``yield from`` and ``await`` expressions of ``fn`` itself (not of nested functions)."""
    out: list[ast.expr] = []
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        n = todo.pop()
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(n, ast.Yield | ast.YieldFrom | ast.Await):
            out.append(n)
        todo.extend(ast.iter_child_nodes(n))
    return out


def _stable(e: ast.AST, how: str) -> bool:
    """An operand whose value, loaded before a suspension and kept on the stack, is what the frame still
    shows after it: a constant, a variable, or (called) a function or method looked up on one.  A value
    unpacked into the stack (``*a``, ``**d``) is a copy made before the suspension: never."""
    if how == "unpacked":
        return False
    if isinstance(e, ast.Constant | ast.Name):
        return True
    return how == "callee" and isinstance(e, ast.Attribute) and _stable(e.value, how)


Kept = list[tuple[ast.AST, str]]  # operands kept on the stack, each "value", "callee" or "unpacked"


def _preceding(items: list[Any], child: ast.AST) -> list[Any]:
    """The items before ``child`` (all of them when ``child`` is not one)."""
    for i, x in enumerate(items):
        if x is child:
            return items[:i]
    return items


def _values(items: list[Any]) -> Kept:
    return [(x, "value") for x in items]


def _kept(parent: ast.AST, child: ast.AST) -> Kept | None:
    """What the interpreter keeps on its stack in ``parent`` while its operand ``child`` (which holds the
    suspension) runs: the operands evaluated before it (CPython evaluates left to right, an assignment's
    value before its targets).  None: a form this model does not know; the caller refuses it by name."""
    if isinstance(parent, ast.BoolOp | ast.NamedExpr | ast.UnaryOp | ast.IfExp | ast.Await | ast.Yield
                  | ast.YieldFrom | ast.Attribute | ast.Starred | ast.keyword | ast.Expr | ast.Return
                  | ast.If | ast.While | ast.Assert | ast.Delete):
        return []  # an operand's value is used (and popped) before the next runs, or there is none
    if isinstance(parent, ast.BinOp):
        return _values([parent.left]) if child is parent.right else []
    if isinstance(parent, ast.Compare):
        return _values(_preceding([parent.left, *parent.comparators], child))
    if isinstance(parent, ast.Call):
        if child is parent.func:
            return []
        args: Kept = [(a, "value") for a in parent.args]
        kws: Kept = [(kw, "unpacked") if kw.arg is None else (kw.value, "value") for kw in parent.keywords]
        operands = [*parent.args, *parent.keywords]
        before = _preceding(operands, child)
        return [(parent.func, "callee"), *[*args, *kws][:len(before)]]
    if isinstance(parent, ast.List | ast.Tuple | ast.Set):
        if not isinstance(getattr(parent, "ctx", ast.Load()), ast.Load):
            return None  # an unpacking target: the values still to store are on the stack
        return _values(_preceding(parent.elts, child))
    if isinstance(parent, ast.Dict):
        flat: Kept = []
        for k, v in zip(parent.keys, parent.values, strict=True):
            flat.extend([(v, "unpacked")] if k is None else [(k, "value"), (v, "value")])
        return flat[:len(_preceding([x for x, _ in flat], child))]
    if isinstance(parent, ast.JoinedStr):
        return _values(_preceding(parent.values, child))
    if isinstance(parent, ast.FormattedValue):
        return _values([parent.value]) if child is parent.format_spec else []
    if isinstance(parent, ast.Subscript):
        return _values([parent.value]) if child is parent.slice else []
    if isinstance(parent, ast.Slice):
        return _values(_preceding([x for x in (parent.lower, parent.upper, parent.step) if x is not None],
                                  child))
    if isinstance(parent, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
        return [] if parent.generators and child is parent.generators[0] else None
    if isinstance(parent, ast.comprehension):
        return [] if child is parent.iter else None  # the outermost iterable is evaluated first, outside
    if isinstance(parent, ast.Assign):
        return [] if child is parent.value else _values([parent.value])
    if isinstance(parent, ast.AnnAssign):
        if child is parent.target:
            return _values([parent.value]) if parent.value is not None else []
        return []
    if isinstance(parent, ast.AugAssign):
        return _values([parent.target]) if child is parent.value else []
    if isinstance(parent, ast.Raise):
        return _values([parent.exc]) if child is parent.cause and parent.exc is not None else []
    if isinstance(parent, ast.For | ast.AsyncFor):
        return None if child is parent.target else []  # the body's iterator: check_suspension
    if isinstance(parent, ast.With | ast.AsyncWith | ast.Try | ast.TryStar | ast.ExceptHandler):
        return []  # their own rules: check_suspension
    if isinstance(parent, ast.withitem):
        return [] if child is parent.context_expr else None
    return None


def _suppress_only(items: list[ast.withitem]) -> ast.expr | None:
    """The first context manager of ``items`` other than ``contextlib.suppress`` (stateless), or None."""
    for item in items:
        ctx = item.context_expr
        manager = ast.unparse(ctx.func) if isinstance(ctx, ast.Call) else ""
        if manager not in ("contextlib.suppress", "suppress"):
            return ctx
    return None


# bounded: a cache keeps its keys, and a whole key (~40 KB in an NBCC fault row) for every state is what a
# fingerprint is kept instead of (800 states: 66 MB unbounded, 32 MB without; the K = 1 rows reach 10^5)
@functools.lru_cache(maxsize=1024)
def fingerprint(key: Hashable) -> int:
    """A 64-bit digest of a state key, the same in every process (a worker's, a Spark executor's): blake2b of
    the key's ``repr``, which for a key (nested tuples of strings, bytes, numbers, None; sets sorted by the
    keyer) depends only on its value, where ``hash`` of a string depends on the process's hash secret.
    About 80 us a key against ``hash``'s 16 us, next to the 1.5 ms a state costs to reach (a lock row)."""
    return int.from_bytes(hashlib.blake2b(repr(key).encode(), digest_size=8).digest(), "little")


@functools.cache  # a function of the source: the AST walk cost a third of an NBCC run's time
def check_suspension(code: types.CodeType, line: int) -> None:
    """Raise :class:`UndeclaredState` unless a generator of ``code`` suspended at ``line`` keeps all its state
    in its locals and the objects they reach (see the module doc).

    Each form the suspension sits in, from the ``yield`` up to the function, must be one whose stack this
    model knows (``_kept``); any other form is refused, named with the function, file and line."""
    fn, offset, parents = _function_tree(code)
    where = f"{code.co_filename}:{line} ({code.co_qualname})"
    here = [n for n in _suspensions(fn) if n.lineno + offset <= line <= (n.end_lineno or n.lineno) + offset]
    if len(here) != 1:
        raise UndeclaredState(f"{where}: {len(here)} suspension points span this line; the explorer tells "
                              "them apart by line: put each on a line of its own")
    child: ast.AST = here[0]
    parent = parents.get(id(child))
    while parent is not None and parent is not fn:
        form = type(parent).__name__
        kept = _kept(parent, child)
        if kept is None:
            raise UndeclaredState(f"{where}: the suspension sits in a form the explorer's stack model cannot "
                                  f"read ({form}: `{_short(parent)}`): what the interpreter keeps on its "
                                  "stack there is not modelled; move the suspension out of it")
        for operand, how in kept:
            if not _stable(operand, how):
                raise UndeclaredState(f"{where}: `{_short(operand)}` is computed before the suspension and "
                                      f"kept on the interpreter's stack ({form}: `{_short(parent)}`), where "
                                      "no declaration reaches it: keep it in a local")
        if isinstance(parent, ast.For | ast.AsyncFor) and any(child is s for s in parent.body):
            it = parent.iter
            ok = isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and (
                it.func.id == "range" or (it.func.id == "enumerate" and len(it.args) == 1
                                         and _stable(it.args[0], "callee")))
            if not ok:
                raise UndeclaredState(f"{where}: the `for` loop over `{ast.unparse(it)}` keeps its position "
                                      "in an iterator no declaration reaches: loop over range(...) or "
                                      "enumerate(a local, or an attribute that does not change meanwhile)")
        if isinstance(parent, ast.With | ast.AsyncWith):
            inside = any(child is s for s in parent.body)
            other = _suppress_only(parent.items if inside else _preceding(parent.items, child))
            if other is not None:
                raise UndeclaredState(f"{where}: `with {ast.unparse(other)}` keeps a context manager on "
                                      "the stack; only contextlib.suppress (stateless) may enclose a "
                                      "suspension")
        if isinstance(parent, ast.Try | ast.TryStar) and any(child is s for s in parent.finalbody):
            raise UndeclaredState(f"{where}: a suspension in a `finally` block keeps the pending exception "
                                  "or return value on the stack")
        if isinstance(parent, ast.ExceptHandler):
            if child is parent.type:
                raise UndeclaredState(f"{where}: a suspension in an `except` clause's type is a form the "
                                      "explorer's stack model cannot read")
            reraises = any(isinstance(n, ast.Raise) and n.exc is None for n in ast.walk(parent))
            if parent.name is None and reraises:
                raise UndeclaredState(f"{where}: a suspension in an `except` block that re-raises keeps the "
                                      "exception on the stack: bind it (`except E as e`)")
        child, parent = parent, parents.get(id(parent))


def _short(node: ast.AST) -> str:
    """Source text of ``node``, cut to one readable line."""
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 80 else text[:77] + "..."


# ---- positions and symmetry ------------------------------------------------------------------------


def shape(gen: Any) -> tuple[Any, ...]:
    """Where a generator stands: the function and source line of each generator of its ``yield from`` chain.

    Cheap, and blind to names, so states equal up to renaming nodes give their nodes equal shapes.
    """
    out: list[Any] = []
    while isinstance(gen, types.GeneratorType) and gen.gi_frame is not None:
        out.append((gen.__qualname__, gen.gi_frame.f_lineno))
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

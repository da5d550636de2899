"""Every attribute of an explored object is in its state or declared excluded, with a reason.

The explorer merges two runs whose state keys are equal, so an attribute that decides a run's
future but is missing from its class's declaration merges two different states, and a search
can report ``holds`` where a violation is reachable, with no sign.  This module makes such an
omission an error naming the class and the attribute:

- what a class's ``__explore_state__`` reads of its object is read from the declaration's
  source: each ``self.<name>`` (and ``getattr``/``hasattr(self, "<name>")``), following the properties
  and methods of the class it calls on ``self``; a frozen dataclass without a declaration is
  its fields.  A declaration that passes ``self`` whole elsewhere cannot be read this way and is
  refused by name;
- what a class leaves out on purpose it names in ``__explore_excluded__``, a dict from each
  attribute to the reason it does not decide the run's future (a cache, a constant of the run
  reachable from elsewhere, a record of the past only reports read); a name both read and
  excluded, or an empty reason, is an error too;
- :func:`check_covered` is called on every declared object the state key encodes
  (``statekey``), so an attribute set late in an object's life is caught at the first state
  that holds it: its instance attributes (``vars``; slots once per class) must be among those
  names.  What a class covers is computed once per process (declarations do not change while
  the program runs; a test that patches one calls :func:`forget`).

It proves the declaration *mentions* every attribute, not that it encodes each one faithfully
(a ``k.value`` where ``k.wall`` was due is not seen here), nor that an exclusion's reason is true.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any

EXCLUDED = "__explore_excluded__"


class UndeclaredState(Exception):
    """A part of a state the explorer cannot encode from a declaration (the message names it)."""


class UncoveredAttribute(UndeclaredState):
    """An attribute of an explored object neither in its class's state nor declared excluded."""


class Coverage:
    """What a class's state declaration covers: the names it reads, those it excludes, both."""

    __slots__ = ("allowed", "declaration", "excluded", "kind", "state")

    def __init__(self, kind: type, declaration: Any, state: frozenset[str], excluded: dict[str, str]) -> None:
        self.kind = kind
        self.declaration = declaration  # the __explore_state__ function read (None: a frozen dataclass)
        self.state = state
        self.excluded = excluded
        self.allowed = state | frozenset(excluded)


_COVERAGE: dict[type, Coverage] = {}


def coverage(kind: type) -> Coverage:
    """What ``kind``'s declaration covers (computed once per class and declaration; see the module doc)."""
    got = _COVERAGE.get(kind)
    if got is None:
        got = _COVERAGE[kind] = _coverage(kind, getattr(kind, "__explore_state__", None))
    return got


def forget() -> None:
    """Drop what was computed of every class (a test that patches a declaration calls it before and after)."""
    _COVERAGE.clear()


def check_covered(obj: Any) -> None:
    """Raise :class:`UncoveredAttribute`, naming the class and the attribute, if an instance attribute of
    ``obj`` is neither read by its class's state declaration nor declared excluded."""
    kind = type(obj)
    cov = _COVERAGE.get(kind)
    if cov is None:
        cov = coverage(kind)
    names = getattr(obj, "__dict__", None)
    if names is not None and not names.keys() <= cov.allowed:
        missing = sorted(set(names) - cov.allowed)
        raise UncoveredAttribute(_uncovered(kind, missing[0]))


def _uncovered(kind: type, name: str) -> str:
    return (f"{kind.__module__}.{kind.__qualname__}.{name} is an attribute of an explored object that its "
            f"state declaration does not read and {EXCLUDED} does not name: add it to __explore_state__, or "
            f"exclude it with the reason it does not decide the run's future (model/explorable.py)")


def _excluded(kind: type) -> dict[str, str]:
    """The exclusions of ``kind`` and its bases."""
    out: dict[str, str] = {}
    for base in reversed(kind.__mro__):
        out.update(vars(base).get(EXCLUDED, {}))
    return out


def _coverage(kind: type, declaration: Any) -> Coverage:
    name = f"{kind.__module__}.{kind.__qualname__}"
    if declaration is not None:
        state = frozenset(_reads(kind, declaration, name))
    elif is_dataclass(kind):
        state = frozenset(f.name for f in fields(kind))
    else:
        raise UndeclaredState(f"{name} is part of an explored state but declares none: give it "
                              "__explore_state__ (model/explorable.py)")
    excluded = _excluded(kind)
    for attr, why in excluded.items():
        if not isinstance(why, str) or not why.strip():
            raise UncoveredAttribute(f"{name}.{EXCLUDED}[{attr!r}]: give the reason it does not decide the "
                                     f"run's future (got {why!r})")
        if attr in state:
            raise UncoveredAttribute(f"{name}.{attr} is read by its state declaration and also named in "
                                     f"{EXCLUDED}: it is one or the other")
    cov = Coverage(kind, declaration, state, excluded)
    for attr in _slots(kind):
        if attr not in cov.allowed:
            raise UncoveredAttribute(_uncovered(kind, attr))
    return cov


def _slots(kind: type) -> list[str]:
    """The slot names of ``kind`` and its bases (``__dict__`` and ``__weakref__`` are not state)."""
    out: list[str] = []
    for base in kind.__mro__:
        slots = vars(base).get("__slots__", ())
        out.extend([slots] if isinstance(slots, str) else slots)
    return [s for s in out if s not in ("__dict__", "__weakref__")]


def _reads(kind: type, function: Callable[..., Any], name: str) -> set[str]:
    """The attributes of ``self`` that ``function`` (a method of ``kind``) reads, following the properties and
    methods of ``kind`` it reaches through ``self``."""
    # a dataclass field is an instance attribute: its default (a function, say) is no method to follow
    instance = {f.name for f in fields(kind)} if is_dataclass(kind) else set()
    seen: set[int] = set()
    out: set[str] = set()
    todo: list[Callable[..., Any]] = [function]
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        for attr in _self_attributes(fn, name):
            out.add(attr)
            if attr in instance:
                continue
            member = inspect.getattr_static(kind, attr, None)
            if isinstance(member, staticmethod | classmethod):
                continue
            if isinstance(member, property) and member.fget is not None:
                todo.append(member.fget)
            elif isinstance(member, functools.cached_property):
                todo.append(member.func)
            elif inspect.isfunction(member):
                todo.append(member)
    return out


@functools.cache
def _self_attributes(fn: Callable[..., Any], owner: str) -> frozenset[str]:
    """The names ``fn`` reads on its first argument: ``self.<name>`` and ``getattr(self, "<name>", ...)``."""
    code = getattr(fn, "__code__", None)
    where = f"{owner}: {getattr(fn, '__qualname__', fn)}"
    if code is None or code.co_argcount == 0:
        raise UncoveredAttribute(f"{where} is not a method whose source the coverage check can read")
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    me = node.args.args[0].arg
    parents: dict[int, ast.AST] = {}
    for above in ast.walk(node):
        for child in ast.iter_child_nodes(above):
            parents[id(child)] = above
    out: set[str] = set()
    for n in ast.walk(node):
        if not (isinstance(n, ast.Name) and n.id == me):
            continue
        parent = parents.get(id(n))
        if isinstance(parent, ast.Attribute) and parent.value is n:
            out.add(parent.attr)
        elif (_is_getattr(parent) and isinstance(parent, ast.Call) and parent.args[0] is n
              and isinstance(parent.args[1], ast.Constant) and isinstance(parent.args[1].value, str)):
            out.add(parent.args[1].value)
        else:
            line = code.co_firstlineno + n.lineno - 1
            raise UncoveredAttribute(f"{where}, line {line}: `{ast.unparse(parent or n)}` uses `{me}` whole: "
                                     f"the coverage check reads a declaration's `{me}.<name>` only; name "
                                     "the attributes")
    return frozenset(out)


def _is_getattr(node: ast.AST | None) -> bool:
    """``getattr(x, y, ...)`` or ``hasattr(x, y)``."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr") and len(node.args) > 1)

"""Plain data (parsed TOML or JSON) into typed values, through one library (pydantic): scenarios
(``scenarios/loader.build``), the explorer's bounds (``model/explore/bounds.py``) and run-directory
files (``model/run_format.check``) all convert here, and the run directory's JSON Schema is pydantic's.

The declarations stay plain dataclasses and TypedDicts.  A conversion is strict as JSON is: an integer
is not a boolean nor ``1.0`` nor ``"1"``, a number may be an integer, a list stands for a tuple, an
object for a dataclass; a dataclass or TypedDict is closed (a field it does not declare is refused)
unless marked :func:`open_fields`.  A refusal is one :class:`Problem`: the field's path, its value and
what the declaration wants, in words (:func:`describe`), which each caller phrases in its own errors
(``ConfigError`` for scenarios and bounds, ``FormatError`` for run directories).

pydantic is imported on first use, not with this module: ``hcc --help`` does not pay for it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired

from typing_extensions import is_typeddict

if TYPE_CHECKING:
    from pydantic import TypeAdapter
    from pydantic_core import core_schema

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()  # a field that is not there


class OneOf:
    """``Annotated[str, OneOf(names)]``: a string that must be one of ``names`` (decided at run time)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        from pydantic_core import core_schema

        return core_schema.literal_schema(list(self.names))


def open_fields(tp: type) -> type:
    """Mark a TypedDict open: undeclared fields are kept, not refused (a file that may say more)."""
    # pydantic's with_config does just this; setting it here leaves pydantic unimported until a conversion
    setattr(tp, "__pydantic_config__", {"extra": "allow", "strict": True})  # noqa: B010
    return tp


@dataclasses.dataclass(frozen=True)
class Problem:
    """Why a value does not convert: ``path`` of the field, its ``value`` (:data:`MISSING` when absent),
    ``kind`` (``type``: the wrong kind or value, ``missing``, ``unknown``: not a declared field),
    ``wants`` (the declared type, in words) and ``known`` (for ``unknown``: the declared field names)."""

    path: tuple[str | int, ...]
    value: Any
    kind: Literal["type", "missing", "unknown"]
    wants: str
    known: tuple[str, ...] = ()
    owner: str = ""  # for unknown: the declaring class's name

    def dotted(self, key: typing.Callable[[str], str] = str, prefix: str = "") -> str:
        """The path as ``prefix.a.b[0].c`` (each name through ``key``)."""
        out = prefix
        for step in self.path:
            out = f"{out}[{step}]" if isinstance(step, int) else f"{out}.{key(step)}" if out else key(step)
        return out


class Invalid(ValueError):
    """A value that does not match its declaration (see :class:`Problem`)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(f"{problem.dotted()} = {problem.value!r}: {problem.kind} ({problem.wants})")
        self.problem = problem


def convert(value: Any, tp: Any, table: str = "an object") -> Any:
    """``value`` (plain data) as ``tp``: dataclasses built, lists made tuples where declared; raise
    :class:`Invalid` for the first field that does not match (``table``: how :func:`describe` names an
    object)."""
    import pydantic

    try:
        text = json.dumps([value], allow_nan=False, default=_not_plain)
        return _adapter(tp).validate_json(text)[0]
    except (pydantic.ValidationError, ValueError) as e:
        errors = e.errors(include_url=False) if isinstance(e, pydantic.ValidationError) else []
        # a missing field is named before a wrong one, the first by name (pydantic lists them in
        # declaration order)
        errors.sort(key=lambda error: (error["type"] != "missing",
                                       [(isinstance(s, str), s) for s in error["loc"]]
                                       if error["type"] == "missing" else []))
        raise Invalid(_problem(tp, value, errors[0] if errors else None, table)) from None


class _NotPlain(ValueError):
    pass


def _not_plain(value: Any) -> Any:
    raise _NotPlain(f"{value!r} is not plain data")  # a TOML date: no declared field is one


@functools.cache
def _adapter(tp: Any) -> TypeAdapter[Any]:
    # wrapped in a list: the wrapper's config (closed, strict) is what every dataclass and TypedDict
    # inside inherits, none has to carry it
    from pydantic import ConfigDict, TypeAdapter

    return TypeAdapter(list[tp], config=ConfigDict(extra="forbid", strict=True))


def json_schema(types_by_key: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The JSON Schema of each type (a ``$ref`` into shared definitions) and the definitions."""
    from pydantic import TypeAdapter

    mode: Literal["validation"] = "validation"
    inputs = [(key, mode, _adapter(tp)) for key, tp in types_by_key.items()]
    by_key, defs = TypeAdapter.json_schemas(inputs, ref_template="#/$defs/{model}")
    return {key: schema["items"] for (key, _), schema in by_key.items()}, defs.get("$defs", {})


# ---- a refusal in words ----------------------------------------------------------------------------


def _problem(tp: Any, value: Any, error: Any, table: str) -> Problem:
    if error is None:  # not plain data (a TOML date, NaN): find it to name it
        return _not_plain_at(tp, value, (), table)
    loc, kind = tuple(error["loc"])[1:], error["type"]  # [1:]: the wrapping list's index
    declared, found, path, known, owner = _walk(tp, value, loc)
    if kind in ("extra_forbidden", "unexpected_keyword_argument") and len(path) == len(loc):
        return Problem(path, found, "unknown", describe(declared, table), known, owner)
    if kind == "missing" and len(path) == len(loc):
        return Problem(path, MISSING, "missing", describe(declared, table))
    return Problem(path, found, "type", describe(declared, table))


def _not_plain_at(tp: Any, value: Any, path: tuple[str | int, ...], table: str) -> Problem:
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        try:
            json.dumps(item, allow_nan=False, default=_not_plain)
        except ValueError:
            declared = _walk(tp, value, (key,))[0]
            return _not_plain_at(declared, item, (*path, key), table)
    return Problem(path, value, "type", describe(tp, table))


Walked = tuple[Any, Any, tuple[str | int, ...], tuple[str, ...], str]


def _walk(tp: Any, value: Any, loc: tuple[Any, ...]) -> Walked:
    """Follow ``loc`` (a pydantic error's) through the declaration and the value as far as both go: the
    declared type there, the value, the path, and the declared field names of the object it stops in."""
    path: list[str | int] = []
    for step in loc:
        tp = _strip(tp, value)
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if _is_object(tp):
            fields = _fields(tp)
            if not isinstance(value, dict) or step not in value and step not in fields:
                break
            known = tuple(sorted(fields))
            if step not in fields:  # not declared: the object names what it knows
                return tp, value[step], (*path, step), known, tp.__name__
            tp, value = fields[step], value.get(step, MISSING)
        elif origin in (dict, Mapping) and isinstance(value, dict) and step in value:
            tp, value = args[1], value[step]
        elif (origin in (list, tuple, Sequence) and isinstance(value, list) and isinstance(step, int)
              and step < len(value)):
            tp = args[step] if origin is tuple and Ellipsis not in args else args[0]
            value = value[step]
        else:
            break
        path.append(step)
    return tp, value, tuple(path), (), ""


def _strip(tp: Any, value: Any) -> Any:
    """``tp`` without ``Annotated``/``NotRequired``, and an optional type's non-null member for a value
    that is not null."""
    while typing.get_origin(tp) in (Annotated, NotRequired):
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is not None and len(members) == 1:
            return _strip(members[0], value)
    return tp


def _is_object(tp: Any) -> bool:
    return isinstance(tp, type) and (is_typeddict(tp) or dataclasses.is_dataclass(tp))


def _fields(tp: type) -> dict[str, Any]:
    """A TypedDict's or dataclass's fields (name -> type, ``NotRequired`` kept)."""
    hints = typing.get_type_hints(tp, include_extras=True)
    if dataclasses.is_dataclass(tp):
        return {f.name: hints[f.name] for f in dataclasses.fields(tp)}
    return hints


def describe(tp: Any, table: str = "an object") -> str:
    """``tp`` in words, for an error message (``table``: an object's word)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return "anything"
    if tp is type(None) or tp is None:
        return "null"
    if origin in (Annotated, NotRequired):
        one_of = [m for m in args[1:] if isinstance(m, OneOf)]
        return f"one of {', '.join(one_of[0].names)}" if one_of else describe(args[0], table)
    if origin is Literal:
        return f"one of {', '.join(map(str, args))}"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(describe(a, table) for a in args)
    if origin is tuple and Ellipsis not in args:
        return f"a list of {len(args)}"
    if origin in (list, tuple, Sequence) or tp in (list, tuple):
        item = args[0] if args else Any
        plural = {int: "integers", str: "strings", float: "numbers", bool: "booleans"}.get(item)
        return f"a list of {plural}" if plural else "a list"
    if origin in (dict, Mapping) or tp is dict or _is_object(tp):
        return table
    return {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(tp, str(tp))

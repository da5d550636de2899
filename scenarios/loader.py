"""Load scenario files (TOML) into frozen dataclasses, with errors that name the field and the value.

The dataclasses in ``model/config.py`` are the schema: every field has a
default, unknown fields are rejected, types are checked (``model/typed.py``:
pydantic, strict as JSON is), then the model's own ``validate()`` checks the
protocol rules.  ``--set dotted.key=value`` overrides
are applied to the raw TOML before conversion, so they are checked the same way.
"""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from model import typed
from model.config import ConfigError, Scenario

CATALOGUE = Path(__file__).parent / "catalogue"


def protocol_of(raw: dict[str, Any]) -> str:
    """The ``protocol`` of a parsed scenario file: a lock scenario without one, or a timeline (``occ``)
    one when it has a ``[timeline]`` table (files written before the catalogue was one).  Whether a
    protocol of that name exists is the catalogue's question (``scenarios/catalogue.load``)."""
    return str(raw.get("protocol", "occ" if "timeline" in raw else "lock"))


def catalogue_names(folder: Path = CATALOGUE, protocol: str | None = None) -> list[str]:
    """Names of the TOML files shipped in a folder (by default the scenario catalogue), of one
    ``protocol`` when given."""
    paths = sorted(folder.glob("*.toml"), key=lambda p: p.stem)
    return [p.stem for p in paths if protocol is None or protocol_of(read_toml(p)) == protocol]


def resolve(name_or_path: str, folder: Path = CATALOGUE, what: str = "scenario") -> Path:
    """A name shipped in ``folder`` (the catalogue by default) or a path to a TOML file."""
    path = Path(name_or_path)
    candidate = folder / f"{name_or_path}.toml"
    try:
        if path.suffix == ".toml" and path.exists():
            return path
        if candidate.exists():
            return candidate
    except (OSError, ValueError):  # a name no file system accepts (NUL byte, too long)
        pass
    raise ConfigError(
        what, name_or_path, f"no such file and not in {folder.name}/ ({', '.join(catalogue_names(folder))})"
    )


def _toml_key(key: str) -> str:
    """``key`` as TOML writes it: bare when it can be, else quoted (an empty key is ``""``)."""
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key)


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def build(cls: type, raw: dict[str, Any], where: str = "") -> Any:
    """Build dataclass ``cls`` from a TOML table (through ``model/typed.py``); an unknown field or a
    wrong type raises ConfigError naming its dotted path (under ``where``), the value and what it must be."""
    try:
        return typed.convert(raw, cls, table="a table")
    except typed.Invalid as e:
        p = e.problem
        field = p.dotted(_toml_key, where) or where or cls.__name__
        if p.kind == "unknown":
            raise ConfigError(field, p.value, f"unknown field (known: {', '.join(p.known)})") from None
        raise ConfigError(field, p.value, f"must be {p.wants}") from None


def parse_value(text: str) -> Any:
    """A --set value as a TOML literal (number, bool, string, array, inline table); else a plain string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_override(raw: dict[str, Any], assignment: str) -> None:
    """Apply ``dotted.key=value`` (list items as ``faults.pauses.0.at_ms`` or ``faults.pauses[0].at_ms``)."""
    if "=" not in assignment:
        raise ConfigError("--set", assignment, "must look like dotted.key=value")
    dotted, text = assignment.split("=", 1)
    parts = dotted.strip().replace("[", ".").replace("]", "").split(".")
    node: Any = raw
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ConfigError(dotted, part, f"is not an index of a list of {len(node)}")
            if last:
                node[int(part)] = parse_value(text)
            else:
                node = node[int(part)]
        elif isinstance(node, dict):
            if last:
                node[part] = parse_value(text)
            else:
                node = node.setdefault(part, {})
        else:
            raise ConfigError(dotted, part, "goes below a value that is not a table")


def read_toml(path: Path, what: str = "scenario") -> dict[str, Any]:
    """Parse a TOML file; ConfigError names the file and why (with the line for bad bytes or syntax)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError(what, str(path), f"cannot be read ({e.strerror or e})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ConfigError(what, str(path), f"is not UTF-8 text (byte {e.start}, line {line})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(what, str(path), f"is not valid TOML: {e}") from e


def load_raw(name_or_path: str) -> dict[str, Any]:
    """The parsed TOML of a scenario (no defaults filled in)."""
    return read_toml(resolve(name_or_path))


def raw_of(name_or_path: str, protocol: str, overrides: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """The parsed TOML of a scenario of ``protocol``, overridden (``--set``), without its ``protocol`` field;
    ConfigError when the file is another protocol's."""
    raw = load_raw(name_or_path)
    for assignment in overrides:
        apply_override(raw, assignment)
    found = protocol_of(raw)
    raw.pop("protocol", None)
    if found != protocol:
        raise ConfigError("protocol", found,
                          f"{name_or_path} is not a {protocol} scenario (hcc run runs any)")
    return raw


def load(name_or_path: str, overrides: list[str] | tuple[str, ...] = ()) -> Scenario:
    """Load, override, build and validate a lock scenario (``protocol = "lock"``)."""
    return from_raw(raw_of(name_or_path, "lock", overrides))


def from_raw(raw: dict[str, Any]) -> Scenario:
    """Build and validate a lock scenario from its parsed TOML (without ``protocol``)."""
    scenario: Scenario = build(Scenario, raw)
    scenario.validate()
    return scenario


def to_dict(obj: Any) -> Any:
    """A scenario (or any config dataclass) as plain TOML-ready data, every default filled in."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        # a removed field stays on its dataclass only so that a file setting it gets a ConfigError; a field
        # left unset (None) is left out, as TOML has no null (reading the file back gives None again)
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if "removed" not in f.metadata and getattr(obj, f.name) is not None}
    if isinstance(obj, tuple | list):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    return obj


def to_toml(scenario: Scenario) -> str:
    """The scenario as TOML with every default filled in (but ``backend``, which only a ``spark`` world
    uses: a simulated scenario naming a server beside its storage flavor reads as a contradiction)."""
    data = to_dict(scenario)
    if scenario.world != "spark":
        data.pop("backend", None)
    return tomli_w.dumps({"protocol": "lock", **data})

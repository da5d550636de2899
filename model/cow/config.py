"""Configuration of the v5 copy-on-write commit model (one explorer run).

The fields mirror the constants of Jack Vanlightly's TLA+ specification
``hudi/v5_spec/basic_cow`` (Writers, Keys, Values, FileGroupCount, OpLimit,
MonotonicTs, ConcurrencyControl, PutIfAbsentSupported, PrimaryKeyConflictCheck,
UseSalt).  Writers, keys and values are anonymous: only their number matters.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class CC(IntEnum):
    """Concurrency control: the numbering of the TLA+ specification."""

    NONE = 0
    OPTIMISTIC = 1
    PESSIMISTIC = 2


class CowConfigError(ValueError):
    """A bad setting: names the field, the value and the reason."""

    def __init__(self, field_name: str, value: object, reason: str) -> None:
        self.field = field_name
        self.value = value
        self.reason = reason
        super().__init__(f"{field_name} = {value!r}: {reason}")


@dataclass(frozen=True)
class CowConfig:
    """One configuration of the copy-on-write commit protocol.

    ``ops`` bounds the number of started operations (``OpLimit``); aborted and
    failed operations count.  Limits keep the state space finite and the
    encoding compact (at most 9 writers, 9 keys, 9 values, 9 file groups).
    """

    writers: int = 2
    keys: int = 2
    values: int = 2
    file_groups: int = 1
    ops: int = 4
    monotonic_ts: bool = True
    cc: CC = CC.OPTIMISTIC
    put_if_absent: bool = False
    pk_check: bool = True
    salt: bool = False

    def validate(self) -> None:
        """Raise :class:`CowConfigError` naming the first bad field."""
        for name in ("writers", "keys", "values", "file_groups"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 9:
                raise CowConfigError(name, value, "must be an integer from 1 to 9")
        if not isinstance(self.ops, int) or isinstance(self.ops, bool) or not 0 <= self.ops <= 12:
            raise CowConfigError("ops", self.ops, "must be an integer from 0 to 12")
        if not isinstance(self.cc, CC):
            raise CowConfigError("cc", self.cc, "must be none, optimistic or pessimistic")
        for name in ("monotonic_ts", "put_if_absent", "pk_check", "salt"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise CowConfigError(name, value, "must be a boolean")

    def row(self) -> str:
        """The configuration in the notation of the issue's table (M CC PIA PK salt FG Op)."""

        def tf(flag: bool) -> str:
            return "T" if flag else "F"

        return (f"M={tf(self.monotonic_ts)} CC={int(self.cc)} PIA={tf(self.put_if_absent)} "
                f"PK={tf(self.pk_check)} salt={tf(self.salt)} FG={self.file_groups} Op={self.ops} "
                f"W={self.writers} K={self.keys} V={self.values}")

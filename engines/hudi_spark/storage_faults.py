"""A catalogue entry's storage faults (``faults.errors``) as the fault proxy's error rules on a Hudi run.

The model's keys are the bucket's, its table under ``lock.base_path`` (``table/``:
``table/.hoodie/timeline/``, ``table/p0/...``, the lock file ``table/.hoodie/.locks/table_lock.json``);
a Hudi run's table is ``<run prefix>table/`` with Hudi's own layout under it (the same folders: the
model transcribes Hudi 1.x's layout). So a rule's key has the entry's base path replaced by the run's
table folder (``table``) and the proxy puts the run's prefix in front (``key_prefix``); the ``lock`` class
is the lock file Hudi's ``StorageBasedLockProvider`` writes, under the run's prefix (``lock_key``).
Nodes ``w1..wN`` are the writer processes of the same names (a restarted writer goes on under its name's
proxy port), the window is in ms since the proxy started (the run's clock), ``prob`` is drawn from the
proxy's RNG seeded with the entry's seed, ``count`` and ``method`` are the proxy's as the model's.

Refused by field, naming the value: a rule on a node that is not one of the run's writers, the ``register``
class (the lock scenarios' guarded register: no Hudi table has one), a key prefix that matches none of the
model's keys (a table-relative ``.hoodie/timeline/`` matches nothing in the model, whose keys start with
``table/``: it is written ``table/.hoodie/timeline/``), and a status the proxy cannot give.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from model.config import ConfigError, ErrorRule, LockConfig

# what the proxy answers itself (backends/fault_proxy.py FaultProxy._serve)
PROXY_STATUSES = ("409", "412", "429", "503", "timeout", "lost-reply")
TABLE = "table"  # the run's table folder under its prefix (engines/hudi_spark/run.py)


def proxy_rules(errors: Sequence[ErrorRule], nodes: Sequence[str], base: str) -> tuple[ErrorRule, ...]:
    """``errors`` (the entry's ``faults.errors``, its table under ``base``) as the proxy's rules on a run of
    writers ``nodes``; ConfigError naming ``faults.errors[i].<field>`` for what has no Hudi counterpart."""
    root = base.rstrip("/") + "/"
    out = []
    for i, rule in enumerate(errors):
        if rule.node != "any" and rule.node not in nodes:
            raise ConfigError(f"faults.errors[{i}].node", rule.node,
                              f"not one of the hudi run's writers ({', '.join(nodes)})")
        if rule.key == "register":
            raise ConfigError(f"faults.errors[{i}].key", rule.key,
                              "the lock scenarios' guarded register: a Hudi table has no such object")
        if rule.key not in ("any", "lock") and not (rule.key.startswith(root) or root.startswith(rule.key)):
            raise ConfigError(f"faults.errors[{i}].key", rule.key,
                              f"matches none of the model's keys (all under {root!r}; a table-relative "
                              f"prefix is written {root + rule.key.lstrip('/')!r})")
        if rule.status not in PROXY_STATUSES:
            raise ConfigError(f"faults.errors[{i}].status", rule.status,
                              f"the fault proxy answers {', '.join(PROXY_STATUSES)} only")
        if rule.key.startswith(root):  # the entry's table folder is the run's
            rule = dataclasses.replace(rule, key=f"{TABLE}/{rule.key[len(root):]}")
        elif rule.key not in ("any", "lock"):  # a prefix of the base path: every key of the table
            rule = dataclasses.replace(rule, key="")
        out.append(rule)
    return tuple(out)


def proxy_keys(run_prefix: str) -> dict[str, Any]:
    """The proxy's settings that place :func:`proxy_rules`' keys under a run's prefix (``key_prefix``, and
    the ``lock`` class's object: Hudi's lock file under the run's table)."""
    return {"key_prefix": run_prefix, "lock_key": run_prefix + LockConfig(base_path=TABLE).lock_key}


def untranslated(errors: Sequence[ErrorRule]) -> list[str]:
    """What of the rules the hudi world applies differently (recorded in the run's ``scenario.toml``)."""
    if not errors:
        return []
    out = [f"faults.errors = {len(errors)}: the fault proxy's rules (the model's keys under the run's "
           "prefix, the lock class Hudi's .hoodie/.locks/table_lock.json, prob from the proxy's RNG seeded "
           "with the entry's seed); windows in ms since the proxy started, while Hudi's run is far slower "
           "than the simulated one (JVM start 7-9 s, a commit 5-45 s), so a window covers other work"]
    if any(r.status == "timeout" for r in errors):
        out.append("a timeout is the proxy holding the connection 30 s (hold_s), not storage.timeout_ms: "
                   "the s3a client's own timeouts and retries apply")
    return out

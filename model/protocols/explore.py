"""Run an ``explore`` catalogue entry: the exhaustive search its ``[explore]`` table names.

The result is the JSON object ``hcc explore --json`` prints (verdict, distinct states, depth,
seconds, the shortest counterexample as steps); the gate reads the counts from the metrics
(``states``, ``depth``, ``counterexample_length``: counts of the search, never its seconds).
"""

from __future__ import annotations

import gc
import time
from typing import Any

from model.checkers.verdict import Verdict, Violation
from model.cow import explore
from model.cow.config import CowConfig
from model.cow.explorer import ExploreResult
from model.cow.scenario import CowSettings


def cow_result_json(cfg: CowConfig, res: ExploreResult, seconds: float) -> dict[str, Any]:
    """The JSON object of one copy-on-write exploration (``hcc explore --json``)."""
    out: dict[str, Any] = {
        "model": "cow",
        "verdict": res.verdict,
        "states": res.states,
        "generated": res.generated,
        "depth": res.depth,
        "seconds": round(seconds, 3),
        "symmetry": res.symmetry,
        "complete": res.complete,
        "config": {"writers": cfg.writers, "keys": cfg.keys, "values": cfg.values,
                   "file_groups": cfg.file_groups, "ops": cfg.ops, "monotonic_ts": cfg.monotonic_ts,
                   "cc": cfg.cc.name.lower(), "put_if_absent": cfg.put_if_absent, "pk_check": cfg.pk_check,
                   "salt": cfg.salt},
    }
    if res.violation is not None:
        v = res.violation
        out["counterexample_length"] = res.counterexample_length
        out["violation"] = {"invariant": "ConsistentRead", "kind": v.kind, "key": f"k{v.key + 1}", "ts": v.ts,
                            "expected": None if v.expected is None else "ABCDEFGHI"[v.expected],
                            "found": [{"file_group": fg, "value": "ABCDEFGHI"[val]} for fg, val in v.found],
                            "text": v.describe()}
        out["counterexample"] = [{"state": st.index, "action": st.action, "writer": st.writer,
                                  "step": st.text, "snapshot": st.state} for st in res.trace]
    return out


def explore_cow(cfg: CowConfig, symmetry: bool, exact: bool = False,
                max_states: int | None = None) -> tuple[ExploreResult, float]:
    """One copy-on-write exploration and its seconds (the cyclic GC paused: states are acyclic tuples)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        res = explore(cfg, symmetry=symmetry, exact=exact, max_states=max_states)
        return res, time.perf_counter() - start
    finally:
        if was_enabled:
            gc.enable()


def run_explore(settings: Any) -> dict[str, Any]:
    """Run the search ``settings`` describe (``CowSettings`` or the lock explorer's) and return its JSON."""
    if isinstance(settings, CowSettings):
        cfg = settings.config()
        res, seconds = explore_cow(cfg, settings.symmetry, max_states=settings.max_states or None)
        return cow_result_json(cfg, res, seconds)
    from model.explore_lock import explore as explore_lock  # the lock explorer (model/explore_lock)

    result: dict[str, Any] = explore_lock(settings).to_json()
    return {"model": "lock", **result}


def explore_verdict(result: dict[str, Any]) -> Verdict:
    """The run's verdict: one violation carrying the shortest counterexample's length, or none.

    A search its budget stopped before it was complete and without a violation proves nothing: it
    is a violation of kind ``incomplete-search`` (so it never passes as "holds")."""
    if result["verdict"] in ("holds", "ok"):
        return Verdict((), ())
    if result["verdict"] != "violated":
        return Verdict((Violation("incomplete-search", f"the search stopped at its budget after "
                                  f"{result.get('states')} states without a verdict", ()),), ())
    v = result.get("violation") or {}
    kind = str(v.get("invariant") or v.get("kind") or "invariant")
    text = v.get("text") or v.get("message") or "violated"
    steps = result.get("counterexample_length")
    unit = "states" if result.get("model", "cow") == "cow" else "decisions"
    return Verdict((Violation(kind, f"{text} (shortest counterexample: {steps} {unit})", (),
                              {"counterexample_length": steps}),), ())


def explore_metrics(result: dict[str, Any]) -> dict[str, Any]:
    """What the gate compares: counts of the search (seconds are reported, never gated)."""
    return {"states": result["states"], "depth": result["depth"], "complete": result.get("complete", True),
            "counterexample_length": result.get("counterexample_length"), "seconds": result["seconds"]}

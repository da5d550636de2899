"""One protocol contract: every protocol is registered once (``model/protocols``) and each layer's part of it
is keyed by the same names; no module outside those tables switches on a protocol's name."""

from __future__ import annotations

import ast
from pathlib import Path

from engines.spark_worlds import SPARK_WORLDS
from model.protocols import NAMES, PROTOCOLS
from model.run_format import files_of
from reports.build import REPORTS
from reports.gate import DEFAULT_METRICS
from scenarios.catalogue import LOADERS, load, names

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("model", "backends", "scenarios", "engines", "analyses", "reports", "cli")


def test_every_layer_keys_its_part_by_the_registered_names() -> None:
    assert NAMES == ("lock", "occ", "nbcc", "explore")
    assert tuple(PROTOCOLS) == NAMES and all(PROTOCOLS[n].name == n for n in NAMES)
    assert set(LOADERS) == set(NAMES)
    assert set(REPORTS) == set(NAMES)
    assert set(DEFAULT_METRICS) == set(NAMES)
    assert set(SPARK_WORLDS) <= set(NAMES)
    for name in NAMES:
        assert files_of(name)["metrics.json"] is PROTOCOLS[name].metrics_type


def test_every_catalogue_entry_is_its_protocols_config() -> None:
    for name in names():
        entry = load(name)
        assert isinstance(entry.config, entry.plugin.config_type), name
        head = entry.plugin.head(entry.config)
        assert (head.name, entry.models) == (name, entry.plugin.models(entry.config)) and entry.models


def _switches(path: Path) -> list[str]:
    """Comparisons of a protocol-ish name (``protocol``, ``workload``) with a protocol's name as text."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        idents = [s.id if isinstance(s, ast.Name) else s.attr for s in sides
                  if isinstance(s, ast.Name | ast.Attribute)]
        named = any(w in ident for ident in idents for w in ("protocol", "workload"))
        texts = {c.value for s in sides for c in ast.walk(s) if isinstance(c, ast.Constant)}
        if named and texts & set(NAMES):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_module_switches_on_a_protocols_name() -> None:
    found = [hit for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py")) for hit in _switches(p)]
    assert found == []


def test_the_switch_finder_finds_a_switch(tmp_path: Path) -> None:
    p = tmp_path / "m.py"
    p.write_text("def f(entry, workload):\n    if entry.protocol == 'occ':\n        return 1\n"
                 "    return workload in ('lock', 'nbcc')\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert _switches(p) == ["m.py:2", "m.py:4"]
    finally:
        ROOT = saved

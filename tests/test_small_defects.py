"""Small defects of everyday use, each pinned: files written atomically are readable by the team that
shares the folder (the umask decides, not mkstemp's 0600), and counts of one are singular."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from engines.rundir import write_atomic
from model.checkers.linearizable import INVOKE, OK, OpEvent, check_operations, count, pair


def test_atomic_writes_get_the_mode_of_a_new_file(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "report.html", "<html></html>")
        (tmp_path / "plain.txt").write_text("x")
    finally:
        os.umask(old)
    mode = stat.S_IMODE((tmp_path / "report.html").stat().st_mode)
    assert mode == stat.S_IMODE((tmp_path / "plain.txt").stat().st_mode) == 0o644


def test_atomic_writes_follow_a_stricter_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        write_atomic(tmp_path / "verdict.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "verdict.json").stat().st_mode) == 0o600


def test_counts_of_one_are_singular() -> None:
    assert count(1, "operation") == "1 operation"
    assert count(0, "operation") == "0 operations"
    assert count(2, "operation") == "2 operations"


def test_a_one_operation_history_says_operation() -> None:
    events = [OpEvent(0, INVOKE, "write", 1, 0), OpEvent(0, OK, "write", 1, 1)]
    assert check_operations(pair(events)).explain() == "linearizable (1 operation)"
    two = [*events, OpEvent(1, INVOKE, "read", None, 2), OpEvent(1, OK, "read", 1, 3)]
    assert check_operations(pair(two)).explain() == "linearizable (2 operations)"


def test_hcc_help_lists_each_command_once_under_its_group() -> None:
    from cli.main import COMMAND_GROUPS, build_parser

    text = build_parser().format_help()
    commands = text.split("commands:\n", 1)[1]
    names = [line.split()[0] for line in commands.splitlines() if line.startswith("    ")]
    assert len(names) == len(set(names)) >= 19
    assert "run" in names and "gate" in names and "check-history" in names
    groups = [line.strip().rstrip(":") for line in commands.splitlines() if line.startswith("  ")
              and not line.startswith("    ")]
    assert groups == [g for g, _ in COMMAND_GROUPS]
    head = text.split("commands:\n", 1)[0]
    assert "check-history" not in head  # argparse's own flat list is not printed as well


def test_install_sh_takes_its_pip_packages_from_the_backends_extra() -> None:
    import subprocess
    import tomllib

    root = Path(__file__).resolve().parent.parent
    script = (root / "backends" / "install.sh").read_text()
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert not any(spec in script for spec in extras["backends"])  # no second list to keep in step
    # the script's own reading of pyproject.toml, run alone, gives exactly the extra's packages
    snippet = script.split("<<'PY'\n", 1)[1].split("\nPY\n", 1)[0]
    out = subprocess.run(["python3", "-", str(root / "pyproject.toml")], input=snippet, text=True,
                         capture_output=True, check=True).stdout.split()
    assert out[: len(extras["backends"])] == extras["backends"] and out[-1].startswith("pytest")


def test_shared_options_are_declared_once() -> None:
    """--out/--force, --json, --quiet, --set and --backend/--prefix come from cli/options.py; a command's
    own --out that names a file (explore-lock, search) or its own --client help is its own option."""
    import re

    root = Path(__file__).resolve().parent.parent / "cli"
    shared = re.compile(r'add_argument\("--(json|quiet|set|force|backend|prefix)"')
    found = [f"{p.name}:{n}" for p in sorted(root.glob("*.py")) if p.name != "options.py"
             for n, line in enumerate(p.read_text().splitlines(), start=1) if shared.search(line)]
    assert not found, f"declare these through cli/options.py: {found}"

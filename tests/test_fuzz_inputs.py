"""Hostile and broken inputs, fuzzed with Hypothesis: every reader answers exit 2 naming what is wrong.

Scenario, timeline and grid TOML files, Hudi tables (folders and zips: missing instants,
truncated zips, bad Avro, random bytes in instant files) and run directories (for ``hcc report``
and ``hcc gate``) are mutated from valid ones: fields set to values of any type or deleted,
bytes flipped, files truncated, deleted or replaced by random bytes.  Whatever the mutation,
the command returns normally (no traceback), a refusal is exit 2 with a message naming the
file or the field, and a refused command prints nothing on stdout and writes no report.

``HCC_FUZZ_EXAMPLES`` raises the number of examples per test (default 25).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tomllib
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli.main import main
from engines.rundir import execute
from model.config import ConfigError
from scenarios import grid, loader, timeline_loader

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = int(os.environ.get("HCC_FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=bool(os.environ.get("CI")),
                suppress_health_check=list(HealthCheck))
SCENARIOS = sorted((REPO / "scenarios" / "catalogue").glob("*.toml"))
TIMELINES = sorted((REPO / "scenarios" / "timeline").glob("*.toml"))
GRIDS = sorted((REPO / "scenarios" / "grids").glob("*.toml"))
HUDI_DATA = Path("/work/shared/hudi-tables")  # used where present, never needed

ANY_VALUE = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70), st.floats(), st.text(max_size=12), st.booleans(),
    st.lists(st.integers(-5, 10**7), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.sampled_from([0, -1, 1, 10**12, 0.5, "", "any", "w1", "w9", "lock", "time", [], {}]))
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**65), 2**65) | st.floats() | st.text(max_size=8),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3), max_leaves=6)


def cli(argv: list[str]) -> tuple[int, str, str]:
    """Run ``hcc argv`` in this process; any exception other than argparse's exit fails the test."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as e:  # argparse
        code = int(e.code or 0)
    return code, out.getvalue(), err.getvalue()


def garble(data: st.DataObject, b: bytes) -> bytes:
    """``b`` with bytes flipped, cut short, or replaced by random bytes."""
    how = data.draw(st.sampled_from(["flip", "truncate", "random"]))
    if how == "random" or not b:
        return data.draw(st.binary(max_size=200))
    if how == "truncate":
        return b[: data.draw(st.integers(0, len(b) - 1))]
    bb = bytearray(b)
    for _ in range(data.draw(st.integers(1, 8))):
        bb[data.draw(st.integers(0, len(bb) - 1))] = data.draw(st.integers(0, 255))
    return bytes(bb)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for k, v in items:
        out += _paths(v, (*prefix, k))
    return out


def mutate_structure(data: st.DataObject, raw: Any, values: st.SearchStrategy[Any]) -> Any:
    """``raw`` (parsed TOML or JSON) with 1-3 fields set to any value or deleted."""
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(raw)
        if not paths:
            return data.draw(values)
        path = data.draw(st.sampled_from(paths))
        node = raw
        for k in path[:-1]:
            node = node[k]
        if data.draw(st.booleans()):
            node[path[-1]] = data.draw(values)
        else:
            del node[path[-1]]
    return raw


def mutated_toml(data: st.DataObject, source: Path) -> bytes:
    if data.draw(st.booleans()):
        return garble(data, source.read_bytes())
    raw = mutate_structure(data, tomllib.loads(source.read_text()), ANY_VALUE)
    try:
        return tomli_w.dumps(raw).encode()
    except (TypeError, ValueError, AttributeError):  # not representable in TOML (a bare value at the top)
        return source.read_bytes()


# ---- scenario, timeline and grid files ---------------------------------------------------------


@FUZZ
@given(st.data())
def test_scenario_files(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    path = tmp_path_factory.mktemp("scenario") / "broken.toml"
    path.write_bytes(mutated_toml(data, data.draw(st.sampled_from(SCENARIOS + TIMELINES))))
    code, out, err = cli(["show", str(path)])
    assert code in (0, 2)
    if code == 2:
        assert out == "" and err.startswith("hcc: error:") and " = " in err  # the field (or file) and value
    try:
        timeline_loader.load(str(path))
    except ConfigError as e:
        assert e.field and e.reason


@FUZZ
@given(st.data())
def test_grid_files(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    path = tmp_path_factory.mktemp("grid") / "broken.toml"
    path.write_bytes(mutated_toml(data, data.draw(st.sampled_from(GRIDS))))
    try:
        grid.load(str(path))
    except ConfigError as e:
        assert e.field and e.reason


def test_a_key_toml_must_quote_is_named_quoted(tmp_path: Path) -> None:
    # found by test_grid_files: an empty key in a grid's base table gave an error naming no field
    for body, field in ((b'"" = 0\n', '""'), (b'[storage]\n"a b" = 1\n', 'storage."a b"')):
        bad = tmp_path / "bad.toml"
        bad.write_bytes(body)
        with pytest.raises(ConfigError, match="unknown field") as e:
            loader.load(str(bad))
        assert e.value.field == field


def test_unreadable_files_name_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'name = "x"\nseed = 1\n\xff\xfe = 2\n')
    for load in (loader.load, timeline_loader.load, grid.load):
        with pytest.raises(ConfigError, match=r"not UTF-8 text \(byte 20, line 3\)") as e:
            load(str(bad))
        assert e.value.value == str(bad)
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    with pytest.raises(ConfigError, match="cannot be read"):
        loader.load(str(folder))


# ---- Hudi tables --------------------------------------------------------------------------------


def _zip_folder(root: Path) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                zf.write(p, p.relative_to(root.parent).as_posix())
    return buf.getvalue()


@pytest.fixture(scope="module")
def hudi_tables(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """A simulated NBCC table (v8, merge-on-read) as a zip, and a few real tables where they are staged."""
    out = tmp_path_factory.mktemp("nbcc") / "run"
    code, _, err = cli(["nbcc", "run", "--seed", "3", "--out", str(out)])
    assert code == 0, err
    tables = [_zip_folder(out / "table")]
    if HUDI_DATA.is_dir():
        tables += [z.read_bytes() for z in sorted(HUDI_DATA.rglob("*.zip")) if z.stat().st_size < 500_000][:6]
    return tables


@FUZZ
@given(st.data())
def test_hudi_tables(hudi_tables: list[bytes], tmp_path_factory: pytest.TempPathFactory,
                     data: st.DataObject) -> None:
    source = data.draw(st.sampled_from(hudi_tables))
    with zipfile.ZipFile(io.BytesIO(source)) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist() if not i.is_dir()}
    timeline = (sorted(n for n in members if "/.hoodie/" in n or n.endswith("hoodie.properties"))
                or sorted(members))
    how = data.draw(st.sampled_from(["missing-instants", "garbled-instants", "properties", "truncated-zip"]))
    for _ in range(data.draw(st.integers(1, 4))):
        name = data.draw(st.sampled_from(timeline))
        if name not in members:
            continue
        if how == "missing-instants":
            del members[name]
        elif how == "garbled-instants":  # JSON and Avro instant files alike: bad Avro, random bytes
            members[name] = garble(data, members[name])
    props = [n for n in members if n.endswith(".hoodie/hoodie.properties")]
    if how == "properties" and props:
        members[props[0]] = data.draw(st.sampled_from([
            b"hoodie.table.version=x\n", b"hoodie.table.version=99\n", b"", b"\xff\xfe",
            b"hoodie.table.type=FOO\nhoodie.table.version=8\n",
            b"hoodie.table.version=8\nhoodie.timeline.layout.version=7\n"]))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, body in members.items():
            zf.writestr(name, body)
    blob = source[: data.draw(st.integers(0, len(source) - 1))] if how == "truncated-zip" else buf.getvalue()
    path = tmp_path_factory.mktemp("table") / "table.zip"
    path.write_bytes(blob)
    extra = data.draw(st.sampled_from([[], ["--all"], ["--of-metadata-table"], ["--json"],
                                       ["--as-of", "20240101000000000"]]))
    code, out, err = cli(["slices", str(path), *extra])
    assert code in (0, 2), err
    if code == 2:
        assert out == "" and err.startswith("hcc slices:") and ("TABLE_PATH" in err or str(path) in err), err


# ---- run directories --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two complete runs (``hcc run --all --out`` style, no reports) and their baseline."""
    root = tmp_path_factory.mktemp("runs") / "runs"
    execute(loader.load("rfc91-long-pause", ["duration_ms=480000"]), None, root / "rfc91-long-pause",
            report=False)
    execute(loader.load("rfc91-safe", ["duration_ms=60000"]), None, root / "rfc91-safe", report=False)
    baseline = root.parent / "baseline.json"
    code, _, err = cli(["gate", str(root), "--baseline", str(baseline), "--update"])
    assert code == 0, err
    return root, baseline


RUN_FILES = ["history.jsonl", "verdict.json", "metrics.json", "scenario.toml"]


def _mutate_run_file(data: st.DataObject, f: Path) -> None:
    how = data.draw(st.sampled_from(["delete", "bytes", "structure"]))
    if how == "delete":
        f.unlink()
        return
    b = f.read_bytes()
    try:
        if how == "bytes":
            f.write_bytes(garble(data, b))
        elif f.suffix == ".json":
            f.write_text(json.dumps(mutate_structure(data, json.loads(b), JSON_VALUE)))
        elif f.suffix == ".jsonl":
            lines = b.decode().splitlines()
            i = data.draw(st.integers(0, max(0, len(lines) - 1)))
            lines[i] = json.dumps(mutate_structure(data, json.loads(lines[i]), JSON_VALUE))
            f.write_text("\n".join(lines) + "\n")
        else:
            f.write_bytes(mutated_toml(data, f))
    except (ValueError, IndexError):  # already garbled by an earlier mutation: garble it further
        f.write_bytes(garble(data, b))


@FUZZ
@given(st.data())
def test_run_directories(run_folder: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory,
                         data: st.DataObject) -> None:
    source, baseline_source = run_folder
    work = tmp_path_factory.mktemp("fuzzed")
    root = work / "runs"
    shutil.copytree(source, root)
    baseline = work / "baseline.json"
    baseline.write_bytes(baseline_source.read_bytes())
    run = root / data.draw(st.sampled_from(["rfc91-long-pause", "rfc91-safe"]))
    for _ in range(data.draw(st.integers(1, 3))):
        f = run / data.draw(st.sampled_from(RUN_FILES))
        if f.exists():
            _mutate_run_file(data, f)
    if data.draw(st.integers(0, 4)) == 0:
        baseline.write_text(json.dumps(mutate_structure(data, json.loads(baseline.read_text()), JSON_VALUE)))
    target = data.draw(st.sampled_from([run, root]))
    named: Callable[[str], bool] = lambda err: any(str(p) in err for p in (run, root, baseline))  # noqa: E731
    before = sorted(p.name for p in run.iterdir())
    code, _, err = cli(["report", str(target), "--format", "md,json"])
    assert code in (0, 2), err
    if code == 2:
        assert named(err), err
        if target == run:
            assert sorted(p.name for p in run.iterdir()) == before  # no partial report
    code, _, err = cli(["gate", str(target), "--baseline", str(baseline)])
    assert code in (0, 1, 2), err
    if code == 2:
        assert named(err), err

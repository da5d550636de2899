"""Hudi's own Spark writers' run directory is the format's kind ``hudi-writers`` (``model/run_format.py``):
written through the one writer (``RunWriter(out, protocol, "hudi-writers")``) and read through the one
loader (``reports.load.load_writers_run``), each file checked against its declaration; the history that the
writer processes append themselves is kept line by line when a run is killed; a verdict or a history line
that breaks the format is refused naming the file, the line and the field.  The files added to a finished
run (Hudi's Spark reads, their log, the model's judgement) go through a writer opened on it
(``RunWriter.after_run``), which writes nothing else, and are read by ``reports.load.load_writers_file``, as
are each writer process's plan (``RunWriter.writer_plan``), the records view of the commits and the logs the
run's own processes write (``RunWriter.log_path``: the fault proxy's, each writer process's)."""

from __future__ import annotations

import json
import typing
from dataclasses import asdict
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from engines.hudi_spark import reads, writer
from engines.hudi_spark.check import check_run
from engines.rundir import RunFileError, RunWriter
from model.run_format import (
    DIFFERENTIAL,
    FSVIEW,
    HISTORY,
    HUDI_WRITERS,
    ISOLATION_RECORDS,
    METRICS,
    PROXY_LOG,
    READS,
    READS_LOG,
    TIMELINE,
    VERDICT,
    WRITER_LOG,
    ReadPoint,
    WriterBatch,
    json_schema,
    process_file,
)
from reports.load import (
    RunDirError,
    load_run,
    load_writers_file,
    load_writers_history,
    load_writers_plan,
    load_writers_run,
)

TIMELINE_ROWS = [{"requested": "1", "completed": "2", "state": "completed", "file": "1_2.commit",
                  "action": "commit"},
                 {"requested": "3", "completed": "", "state": "inflight", "file": "3.commit.inflight",
                  "action": "commit.inflight"}]
ROWS = [["k0", "p0", 1001, "1", "f0_0-1-1_1.parquet"]]


def _lines() -> list[dict[str, Any]]:
    """A writer's lines as engines/hudi_spark/writer.py and the fault injector append them."""
    batch = {"batch": 0, "op": "upsert", "rows": [["k0", "p0", 1001]]}
    return [{"process": "w1", "type": "start", "time": 10.0, "pid": 7},
            {"process": "w1", "type": "ready", "time": 11.5, "jvm_start_s": 1.5},
            {"process": "w1", "type": "invoke", "f": "write", "time": 12.0, "value": batch},
            {"process": "w1", "type": "ok", "f": "write", "time": 13.0, "value": batch, "elapsed_s": 1.0,
             "instant": "1_2"},
            {"process": "w2", "type": "invoke", "f": "write", "time": 12.5, "value": batch},
            {"process": "w2", "type": "info", "f": "kill", "time": 12.9, "ended": "in-commit",
             "value": {"method": "PUT", "key": "t/p0/x"}},
            {"process": "w1", "type": "invoke", "f": "read", "time": 14.0, "value": None},
            {"process": "w1", "type": "ok", "f": "read", "time": 15.0, "value": ROWS}]


def _verdict(events: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """verdict.json and metrics.json as engines/hudi_spark/run.py builds them from check_run."""
    checks = check_run(events, TIMELINE_ROWS)
    metrics = {"wall_s": 5.0, "exit_codes": {"w1": 0, "w2": -9}, "proxy_actions": {"forward": 40},
               "peak_rss_mb": {"w1": 700, "w2": 650}, **checks.pop("metrics")}
    verdict = {"world": "hudi", "workload": "conflict", "version": "1.2.0", "real": "Hudi 1.2.0 (real)",
               "protocol": "occ", "table_type": "COPY_ON_WRITE", "backend": "seaweedfs",
               "jars": {"org.apache.hudi:hudi-spark3.5-bundle_2.12:1.2.0": "cc79"}, "lock_client": "model",
               **checks, "isolation": {"view": "records", "valid": True, "anomalies": [], "not": [],
                                       "about": "Hudi's commits", "transactions": 2, "notes": []}}
    return verdict, metrics


def _write_run(out: Path, lines: list[dict[str, Any]], torn: str = "") -> RunWriter:
    """A hudi-writers run directory as engines/hudi_spark/run.py writes it, ``torn`` appended after the
    lines (a killed writer's unfinished line)."""
    writer = RunWriter(out, "occ", HUDI_WRITERS)
    writer.scenario('[hudi]\nversion = "1.2.0"\n')
    history = writer.shared_history()
    with open(history, "a") as f:  # the writer processes' own appends
        f.writelines(json.dumps(e) + "\n" for e in lines)
        f.write(torn)
    writer.write_json(TIMELINE, TIMELINE_ROWS)
    writer.write_json(FSVIEW, {"1.2.0": {"error": "no java"}})
    return writer


def test_a_writers_run_is_written_and_loaded_and_validates_against_the_published_kind(tmp_path: Path) -> None:
    writer = _write_run(tmp_path, _lines())
    verdict, metrics = _verdict(load_writers_history(tmp_path))
    assert verdict["valid"] and verdict["commits"] == 1 and verdict["notes"]  # the kill, the pending instant
    writer.finish(verdict, metrics, report=False)
    run = load_writers_run(tmp_path)
    assert (run.verdict, run.metrics, list(run.events)) == (verdict, metrics, _lines())
    assert list(run.timeline) == TIMELINE_ROWS and run.file_slices == {"1.2.0": {"error": "no java"}}
    assert run.scenario == {"hudi": {"version": "1.2.0"}}
    whole = {name: json.loads((tmp_path / name).read_text()) for name in (VERDICT, METRICS, TIMELINE, FSVIEW)}
    whole |= {HISTORY: _lines(), "scenario.toml": (tmp_path / "scenario.toml").read_text()}
    jsonschema.validate(whole, json_schema())
    with pytest.raises(jsonschema.ValidationError):  # neither kind: a writers' verdict in a harness run
        jsonschema.validate({**whole, HISTORY: [{"index": 0}]}, json_schema())
    # the harness's loader names what the folder is instead of a missing field
    with pytest.raises(RunDirError, match="Hudi's own Spark writers"):
        load_run(tmp_path)


def test_a_killed_writers_run_keeps_its_history_but_a_torn_line(tmp_path: Path) -> None:
    _write_run(tmp_path, _lines()[:4], torn='{"process": "w1", "type": "inv')  # killed mid-line, no verdict
    assert load_writers_history(tmp_path) == _lines()[:4]
    with pytest.raises(RunDirError, match="missing verdict.json"):
        load_writers_run(tmp_path)


@pytest.mark.parametrize(("field", "value", "named"), [
    ("valid", "yes", "field valid = 'yes' is not true or false"),
    ("table_type", "MERGE", "field table_type = 'MERGE' is not one of COPY_ON_WRITE, MERGE_ON_READ"),
    ("conflicts", [{"process": "w1", "batch": 0}], "field conflicts[0].class is missing"),
    ("surprise", 1, "field surprise = 1 is not a field of WritersVerdict"),
])
def test_a_writers_verdict_that_breaks_the_format_is_refused_and_not_written(
        tmp_path: Path, field: str, value: Any, named: str) -> None:
    writer = _write_run(tmp_path, _lines())
    verdict, metrics = _verdict(_lines())
    with pytest.raises(RunFileError, match=named.replace("[", r"\[").replace("]", r"\]")):
        writer.finish({**verdict, field: value}, metrics, report=False)
    assert not (tmp_path / VERDICT).exists() and not (tmp_path / METRICS).exists()


def test_a_history_line_that_breaks_the_format_is_refused_by_line(tmp_path: Path) -> None:
    lines = _lines()
    lines[2] = {**lines[2], "type": "begin"}
    writer = _write_run(tmp_path, lines)
    verdict, metrics = _verdict(_lines())
    with pytest.raises(RunFileError, match=r"history.jsonl: line 3: field type = 'begin' is not one of"):
        writer.finish(verdict, metrics, report=False)
    with pytest.raises(RunDirError, match="line 3"):
        load_writers_history(tmp_path)


def test_a_harness_run_is_not_read_as_a_writers_run(tmp_path: Path) -> None:
    (tmp_path / VERDICT).write_text(json.dumps({"scenario": "x", "verdict": "ok"}))
    with pytest.raises(RunDirError, match="not a run of Hudi's own Spark writers"):
        load_writers_run(tmp_path)
    with pytest.raises(ValueError, match="appended by RunWriter.history"):
        RunWriter(tmp_path, "occ").shared_history()


# reads.json as engines/hudi_spark/reads.py writes it: a time-travel read Hudi answered, one it refused
REFUSAL = {"class": "org.apache.hudi.exception.HoodieTimeTravelException",
           "message": "Time travel's timestamp '4' must be earlier than the first incomplete commit "
                      "timestamp '3'."}
READS_FILE = {"points": [asdict(ReadPoint("as_of 2", "as_of", "1", at="2")),
                         asdict(ReadPoint("as_of 4", "as_of", "3", at="4"))],
              "answers": {"as_of 2": {"rows": [["k0", "p0", 1001, "1"]]}, "as_of 4": {"error": REFUSAL}},
              "metadata_table": False, "seconds": 20.5}
# differential.json as hcc differential writers writes it (an OCC run's judgement)
JUDGEMENT = {"agree": True, "attempts": [{"process": "w1", "batch": 0, "hudi": "commit", "model": "commit"}],
             "differences": [], "hudi_rows": [["k0", "p0", 1001]], "model_rows": [["k0", "p0", 1001]],
             "notes": [], "hudi_rs": "not installed", "hudi_rs_rows": None,
             "reads": [{"point": "as_of 2", "kind": "as_of", "outcome": "agree", "hudi": 1, "model": 1}],
             "read_differences": [], "read_declared": [], "read_notes": [], "reads_seconds": 20.5}


def _finished(out: Path) -> None:
    writer = _write_run(out, _lines())
    writer.finish(*_verdict(_lines()), report=False)


def test_files_added_after_the_run_go_through_a_writer_opened_on_it(tmp_path: Path) -> None:
    _finished(tmp_path)
    assert load_writers_file(tmp_path, READS) is None  # none yet
    added = RunWriter.after_run(tmp_path)
    text = json.dumps(READS_FILE, indent=1, sort_keys=True) + "\n"
    added.write_text(READS, text)
    added.write_text(READS_LOG, "WARN Utils: ...\n")
    added.write_json(DIFFERENTIAL, JUDGEMENT)
    assert (tmp_path / READS).read_text() == text  # the bytes given, as engines/hudi_spark/reads.py wrote
    assert load_writers_file(tmp_path, READS) == READS_FILE
    assert load_writers_file(tmp_path, DIFFERENTIAL) == JUDGEMENT
    # the whole folder, the added files with it, is of the published kind
    whole = {name: json.loads((tmp_path / name).read_text())
             for name in (VERDICT, METRICS, TIMELINE, FSVIEW, READS, DIFFERENTIAL)}
    whole |= {HISTORY: _lines(), READS_LOG: (tmp_path / READS_LOG).read_text()}
    jsonschema.validate(whole, json_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**whole, READS: {**READS_FILE, "seconds": "20"}}, json_schema())
    # the run's own files are not rewritten after it, by any method
    for write in (lambda: added.write_json(VERDICT, {}), lambda: added.write_text(TIMELINE, "[]"),
                  lambda: added.finish(*_verdict(_lines()), report=False), added.shared_history,
                  lambda: added.table({})):
        with pytest.raises(ValueError, match="given only the files added after its run"):
            write()
    assert load_writers_run(tmp_path).verdict == _verdict(_lines())[0]


@pytest.mark.parametrize(("name", "value", "named"), [
    (READS, {**READS_FILE, "answers": {"as_of 2": {"rows": [["k0", "p0", "1001", "1"]]}}},
     r"reads.json: field answers\.as_of 2\.rows\[0\]\[2\] = '1001' is not"),
    (READS, {**READS_FILE, "points": [{**READS_FILE["points"][0], "kind": "snapshot"}]},
     r"reads.json: field points\[0\]\.kind = 'snapshot' is not one of as_of, incremental"),
    (DIFFERENTIAL, {k: v for k, v in JUDGEMENT.items() if k != "agree"},
     r"differential.json: field agree is missing"),
])
def test_an_added_file_that_breaks_the_format_is_refused_by_the_writer_and_the_loader(
        tmp_path: Path, name: str, value: Any, named: str) -> None:
    _finished(tmp_path)
    with pytest.raises(RunFileError, match=named):
        RunWriter.after_run(tmp_path).write_json(name, value)
    assert not (tmp_path / name).exists()
    (tmp_path / name).write_text(json.dumps(value))  # a file written around the writer
    with pytest.raises(RunDirError, match=named):
        load_writers_file(tmp_path, name)


def test_only_a_finished_run_is_given_files_after_it(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _write_run(tmp_path, _lines())  # no verdict yet
    with pytest.raises(RunDirError, match="missing verdict.json"):
        RunWriter.after_run(tmp_path)
    (tmp_path / "table" / ".hoodie" / "timeline").mkdir(parents=True)
    assert reads.main([str(tmp_path)]) == 2  # refused before Spark starts
    assert "missing verdict.json" in capsys.readouterr().err
    with pytest.raises(ValueError, match="not a file of a hudi-writers run read apart from load_writers_run"):
        load_writers_file(tmp_path, VERDICT)


def test_hcc_differential_writers_refuses_a_run_whose_reads_break_the_format(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    _finished(tmp_path)
    (tmp_path / READS).write_text(json.dumps({**READS_FILE, "metadata_table": "no"}))
    assert main(["differential", "writers", "tl-hudi-lazy-rollback-safe", "--run", str(tmp_path)]) == 2
    assert "reads.json: field metadata_table = 'no' is not true or false" in capsys.readouterr().err


# a writer process's plan as engines/hudi_spark/run.py gives it (plan_of), and a restarted writer's
PLAN = {"writer": "w1", "base_path": "s3a://hcc/runs/r1/table", "table": "hcc_t", "endpoint": "http://x/w1",
        "access_key": "any", "secret_key": "any", "region": "us-east-1", "classpath": ["/jars/a.jar"],
        "history": "/runs/r1/history.jsonl", "read_at_end": True, "options": {}, "protocol": "occ",
        "hadoop": {}, "read_metadata_table": False,
        "batches": [{"op": "upsert", "rows": [{"key": "k0", "partition": "p0", "value": 1001}]},
                    {"op": "cluster", "partition": "p0", "rows": [], "after_commits": 1,
                     "after_info": {"process": "w2", "f": "kill"}}]}
# the records view as engines/hudi_spark/txns.py writes it (RunView.jsonl)
RECORDS = "".join(json.dumps({"process": "w1", "time": t, "type": typ,
                              "value": [["r", "k0", None], ["w", "k0", 1001]]}) + "\n"
                  for t, typ in ((12.0, "invoke"), (13.0, "ok")))


def test_writer_plans_the_records_view_and_the_logs_are_declared_files_of_the_run(tmp_path: Path) -> None:
    run = _write_run(tmp_path, _lines())
    path = run.writer_plan("w1", PLAN)
    run.writer_plan("w1-2", {**PLAN, "first_batch": 1})
    assert path == tmp_path / "plan-w1.json" and json.loads(path.read_text()) == PLAN  # what it reads
    assert writer.load_plan(path) == PLAN  # and the writer process takes it
    run.write_text(ISOLATION_RECORDS, RECORDS)
    proxy_log = run.log_path(PROXY_LOG)
    proxy_log.write_text("12 w1 PUT 'runs/r1/table/p0/f0_0-1-1_1.parquet' forward 200\n")  # the proxy's own
    run.log_path(process_file(WRITER_LOG, "w1")).write_text("JVM started\n")
    run.finish(*_verdict(_lines()), report=False)
    # read through the loader: the first writer's plan (by name: w1-2's comes first), the lines, the texts
    assert load_writers_plan(tmp_path) == {**PLAN, "first_batch": 1}
    assert load_writers_file(tmp_path, "plan-w1.json") == PLAN
    assert load_writers_file(tmp_path, ISOLATION_RECORDS) == [json.loads(x) for x in RECORDS.splitlines()]
    assert load_writers_file(tmp_path, PROXY_LOG) == proxy_log.read_text()
    assert load_writers_file(tmp_path, "writer-w1.log") == "JVM started\n"
    assert load_writers_file(tmp_path, "writer-w9.log") is None
    # the whole folder is of the published kind; a plan or a records line that breaks it is not
    whole = {name: json.loads((tmp_path / name).read_text()) for name in (VERDICT, METRICS, TIMELINE, FSVIEW)}
    whole |= {HISTORY: _lines(), "plan-w1.json": PLAN, "plan-w1-2.json": {**PLAN, "first_batch": 1},
              ISOLATION_RECORDS: load_writers_file(tmp_path, ISOLATION_RECORDS),
              PROXY_LOG: proxy_log.read_text(), "writer-w1.log": "JVM started\n"}
    jsonschema.validate(whole, json_schema())
    for bad in ({"plan-w1.json": {**PLAN, "batches": [{"op": "merge"}]}},
                {ISOLATION_RECORDS: [{"process": "w1", "time": 1.0, "type": "ok",
                                      "value": [["x", "k0", 1]]}]},
                {"writer-w1.log": 7}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**whole, **bad}, json_schema())


@pytest.mark.parametrize(("name", "text", "named"), [
    ("plan-w1.json", json.dumps({**PLAN, "batches": [{"op": "merge", "rows": []}]}),
     r"plan-w1.json: field batches\[0\]\.op = 'merge' is not one of upsert, insert"),
    ("plan-w1.json", json.dumps({k: v for k, v in PLAN.items() if k != "base_path"}),
     r"plan-w1.json: field base_path is missing"),
    ("plan-w1.json", json.dumps({**PLAN, "read_at_end": "yes"}),
     r"plan-w1.json: field read_at_end = 'yes' is not true or false"),
    (ISOLATION_RECORDS, RECORDS + '{"process": "w1", "time": 14.0, "type": "ok", "value": [["r", "k0"]]}\n',
     r"isolation-records.jsonl: line 3: field value\[0\]"),
    (ISOLATION_RECORDS, RECORDS + "{not json\n", r"isolation-records.jsonl: line 3: not valid JSON"),
])
def test_a_plan_or_records_line_that_breaks_the_format_is_refused_by_the_writer_and_the_loader(
        tmp_path: Path, name: str, text: str, named: str) -> None:
    run = _write_run(tmp_path, _lines())
    with pytest.raises(RunFileError, match=named):
        run.write_text(name, text)
    assert not (tmp_path / name).exists()
    (tmp_path / name).write_text(text)  # a file written around the writer
    with pytest.raises(RunDirError, match=named.split(":")[0].replace(".", r"\.")):
        load_writers_file(tmp_path, name)
    if name.startswith("plan-"):  # the first writer's plan is read only when every plan is as declared
        run.writer_plan("w0", PLAN)
        with pytest.raises(RunDirError, match=named.split(":")[0].replace(".", r"\.")):
            load_writers_plan(tmp_path)


def test_only_the_run_s_own_logs_have_a_path_and_a_plan_names_its_process(tmp_path: Path) -> None:
    run = _write_run(tmp_path, _lines())
    for name in (VERDICT, "writer-.log", "plan-w1.json", "server.log"):
        with pytest.raises(ValueError, match="not a log a hudi-writers run's own processes write"):
            run.log_path(name)
    with pytest.raises(ValueError, match="not a log a harness run's own processes write"):
        RunWriter(tmp_path, "occ").log_path(PROXY_LOG)
    with pytest.raises(ValueError, match=r"writer='\.\./w1': a writer process's name is"):
        run.writer_plan("../w1", PLAN)
    with pytest.raises(RunDirError, match="holds no writer's plan"):
        load_writers_plan(tmp_path)
    # the plan's operations are the writer's (engines/hudi_spark/writer.py checks them again)
    assert typing.get_args(typing.get_type_hints(WriterBatch)["op"]) == writer.OPS

"""A report shows its times in one format: ms since the run's start (column headers say so), a clock
reading or a Hudi instant as ``t<ms>``; no epoch milliseconds and no 17-digit instant beside them."""

from __future__ import annotations

import re

import pytest

from cli.main import main
from model.runtime.clock import EPOCH_MS
from model.runtime.history import Event
from reports.document import Clock, cell_text
from reports.times import detail_text, instant_text, run_epoch, value_text

# an epoch-ms clock reading or a 17-digit instant standing alone (not inside a file name)
RAW_TIME = re.compile(r"(?<![\w./-])(17\d{11}|20\d{15})(?![\w.])")
ENTRIES = {
    "lock": ["rfc91-long-pause"],
    "occ": ["tl-hudi-occ-duplicate-key"],
    "nbcc": ["nbcc-uncommitted-anchor"],
    "explore": ["explore-nbcc-uncommitted-anchor"],
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = {}
    for protocol, argv in ENTRIES.items():
        d = tmp_path_factory.mktemp(protocol) / "run"
        main(["run", *argv, "--out", str(d)])
        out[protocol] = (d / "report.md").read_text()
    return out


def _headers(md: str) -> list[str]:
    """Every column header of the Markdown's tables."""
    return [h.strip() for line in md.splitlines() if line.startswith("| ")
            for nxt in [md.split(line + "\n", 1)[1].split("\n", 1)[0]] if nxt.startswith("|---")
            for h in line.strip("|").split(" | ")]


@pytest.mark.parametrize("protocol", list(ENTRIES))
def test_a_report_shows_every_time_in_ms_since_the_start(reports: dict[str, str], protocol: str) -> None:
    md = reports[protocol]
    raw = RAW_TIME.findall(md)
    assert not raw, f"{protocol}: clock readings or instants not in ms since the start: {raw[:5]}"
    assert "t<ms>" in md  # the report says what t means, once
    point = re.compile(r"\btime\b|\bclock\b|^(start|end|requested|completed)\b")  # a time, not a duration
    times = [h for h in _headers(md) if point.search(h)]
    assert times, protocol
    assert all("(ms since start)" in h for h in times), times


def test_the_cited_events_read_clock_and_lock_file_in_the_same_unit(reports: dict[str, str]) -> None:
    # the lock report's events: true time, the node's clock and the lock file's validity all in ms since
    # the start, so a reader compares them without arithmetic (here the simulated clocks have no offset)
    table = reports["lock"].split("**Minimal events", 1)[1].split("\n\n")[1]
    rows = table.splitlines()[2:]
    assert rows
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert re.fullmatch(r"t\d+", cells[6]) and int(cells[6][1:]) - int(cells[1]) in range(-1000, 1001)
        assert "{'" not in cells[7]  # JSON, not a Python repr


def test_clock_readings_and_instants_become_ms_since_the_start() -> None:
    assert cell_text(Clock(4220)) == "t4220"
    assert instant_text("as of 20260101000004220") == "as of t4220"
    assert instant_text("w1/2/0@20260101000010219") == "w1/2/0@t10219"
    # a file name keeps its instant: it is a name, not a time shown to the reader
    name = "table/.hoodie/timeline/20260101000001158_20260101000003542.commit"
    assert instant_text(name) == name
    assert instant_text(".0000-0_20260101000002821.log.1_1-0-1") == ".0000-0_20260101000002821.log.1_1-0-1"
    assert value_text({"owner": "ab", "valid_until": EPOCH_MS + 2000, "count": 3}) == \
        '{"owner":"ab","valid_until":"t2000","count":3}'
    assert detail_text('{"key":"table/.hoodie/.heartbeat/x","body":"1767225600500"}') == \
        '{"key":"table/.hoodie/.heartbeat/x","body":"t500"}'
    assert detail_text("w1 starts at 0 ms") == "w1 starts at 0 ms"


def test_a_run_on_real_clocks_counts_from_its_own_start() -> None:
    start = 1_795_923_000_000  # a real run: its clocks read the date it ran
    events = [Event(i, t, "w1", "w1", "ok", "acquire", None, start + t + 3)
              for i, t in enumerate((0, 50, 900))]
    assert run_epoch(events) == start + 3
    assert run_epoch([Event(0, 10, "w1", "w1", "ok", "acquire", None, EPOCH_MS + 40)]) == EPOCH_MS

"""A fake key in the environment and in a URL never reaches a run directory, report, log or JUnit file.

moto (launched here, it takes any credentials) stands for a real bucket reached by URL; every
command that can take that URL runs, then every file under the test folder (run directories,
reports, the proxy log, the server's log, the JUnit file, the baseline) and everything printed
is searched for the planted values.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.registry import open_endpoint
from cli.main import main

ENV_KEY, ENV_SECRET = "AKIAHCCENVFAKE000002", "envFakeSecret+/0123456789abcdefQRS"
URL_KEY, URL_SECRET = "AKIAHCCURLFAKE000003", "urlFakeSecret/9876543210fedcbaTUV"
PLANTED = (ENV_KEY, ENV_SECRET, URL_KEY, URL_SECRET)
SHORT = ["lock.validity_secs=4", "lock.renew_interval_secs=1", "lock.enforce_hudi_limits=false",
         "storage.timeout_ms=1000", "lock.wait_time_ms=10000", "duration_ms=6000"]


def _sets(items: list[str]) -> list[str]:
    return [x for s in items for x in ("--set", s)]


def test_planted_keys_appear_in_no_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ENV_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", ENV_SECRET)
    monkeypatch.setenv("HCC_RUN_TMP", str(tmp_path / "servers"))
    monkeypatch.chdir(tmp_path)
    with open_endpoint("moto", tmp_path / "servers") as ep:
        host = ep.url.split("://", 1)[1]  # type: ignore[union-attr]
        with_userinfo = f"s3+http://{URL_KEY}:{URL_SECRET}@{host}/secrets"
        from_env = f"s3+http://{host}/secrets"
        for i, url in enumerate((with_userinfo, from_env)):
            out = tmp_path / f"real{i}"
            code = main(["realworld", "rfc91-safe", "--backend", url, "--out", str(out), *_sets(SHORT)])
            assert code in (0, 1)
            assert (out / "verdict.json").is_file() and (out / "proxy.log").is_file()
            assert main(["report", str(out)]) == 0
            baseline = tmp_path / f"baseline{i}.json"
            main(["gate", str(out), "--baseline", str(baseline), "--update"])
            main(["gate", str(out), "--baseline", str(baseline), "--junit", str(tmp_path / f"junit{i}.xml")])
        assert (tmp_path / "junit1.xml").is_file()
        sim = tmp_path / "sim"
        assert main(["run", "rfc91-lost-reply", "--out", str(sim), "--set", "duration_ms=60000"]) == 0
        assert main(["replay", str(sim), "--backend", with_userinfo]) in (0, 1)
        assert main(["conformance", with_userinfo, "--rounds", "1", "--clients", "2", "--json"]) in (0, 1)
        assert main(["realworld", "rfc91-safe", "--backend", f"s3+http://{URL_KEY}:{URL_SECRET}@127.0.0.1:9/x",
                     "--out", str(tmp_path / "unreachable"), *_sets(SHORT)]) == 2
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert "***@" in printed  # the URL is shown, masked
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) > 20 and any(p.name == "moto.log" for p in files)
    for text, where in [(printed, "stdout/stderr"), *((p.read_bytes().decode(errors="replace"), str(p))
                                                      for p in files)]:
        for planted in PLANTED:
            assert planted not in text, f"{planted} leaked into {where}"

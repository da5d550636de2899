"""Every configuration the loader accepts runs: catalogue entries with fields changed within what the
loader takes (flavours, variants, listings, fault kinds, numeric ranges) end, briefly run, with a
verdict, or with exit 2 naming the field and the value; never with a traceback.  The loader refuses what
the model cannot run, so a refusal is the only acceptable way not to run."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli.main import main
from model.lock.variants import VARIANTS
from model.nbcc.variants import VARIANTS as NBCC_VARIANTS
from model.timeline.variants import COMMIT_VARIANTS as TIMELINE_VARIANTS
from scenarios import catalogue

# hcc: error: <field> = <value>: <reason>
REFUSAL = re.compile(r"^hcc: error: (?P<field>[\w.\[\]-]+) = (?P<value>.+?): .+", re.M)

ENTRIES = {p: catalogue.names(p) for p in ("lock", "occ", "nbcc")}

FAULT_STATUSES = ("503", "429", "412", "409", "500", "timeout", "lost-reply")


def _lock_overrides() -> st.SearchStrategy[list[str]]:
    # the flavour is always drawn: each flavour's lock client maps the store's answers its own way
    flavour = st.sampled_from(["s3", "gcs", "azure"]).map(lambda f: f"storage.flavor={f}")
    return st.tuples(flavour, st.lists(st.one_of(
        st.sampled_from(sorted(VARIANTS)).map(lambda v: f"lock.variant={v}"),
        st.integers(1, 400).map(lambda n: f"lock.validity_secs={n}"),
        st.integers(1, 40).map(lambda n: f"lock.renew_interval_secs={n}"),
        st.booleans().map(lambda b: f"lock.enforce_hudi_limits={str(b).lower()}"),
        st.integers(0, 3).map(lambda n: f"lock.client_num_retries={n}"),
        st.integers(1, 6).map(lambda n: f"workload.writers={n}"),
        st.sampled_from(["next-storage-call", "checkpoints", "never"]).map(
            lambda i: f"workload.interrupt={i}"),
        st.sampled_from(["close", "keep-client"]).map(lambda a: f"workload.after_failed_release={a}"),
        st.integers(-1, 3).map(lambda n: f"storage.sdk_retries={n}"),
        st.sampled_from([0, 1, 50, 5_000]).map(lambda n: f"storage.timeout_ms={n}"),
    ), max_size=3)).map(lambda drawn: [drawn[0], *drawn[1]])


def _occ_overrides() -> st.SearchStrategy[list[str]]:
    return st.lists(st.one_of(
        st.sampled_from(sorted(TIMELINE_VARIANTS)).map(lambda v: f'timeline.variant="{v}"'),
        st.booleans().map(lambda b: f"timeline.metadata_table={str(b).lower()}"),
        st.sampled_from(["none", "optimistic", "pessimistic"]).map(lambda c: f'timeline.cc="{c}"'),
        st.sampled_from(["skew-adjusting", "monotonic", "local-clock"]).map(
            lambda g: f'timeline.time_generator="{g}"'),
        st.integers(1, 4).map(lambda n: f"timeline.keys={n}"),
        st.integers(1, 3).map(lambda n: f"workload.writers={n}"),
        st.sampled_from(["s3", "gcs", "azure"]).map(lambda f: f"storage.flavor={f}"),
        st.floats(0, 0.5).map(lambda p: f"timeline.fail_commit_prob={p:.2f}"),
    ), max_size=4)


def _nbcc_overrides() -> st.SearchStrategy[list[str]]:
    return st.lists(st.one_of(
        st.sampled_from(sorted(NBCC_VARIANTS)).map(lambda v: f'nbcc.variant="{v}"'),
        st.booleans().map(lambda b: f"nbcc.metadata_table={str(b).lower()}"),
        st.integers(1, 4).map(lambda n: f"nbcc.writers={n}"),
        st.integers(1, 3).map(lambda n: f"nbcc.batches={n}"),
        st.integers(1, 4).map(lambda n: f"nbcc.buckets={n}"),
        st.integers(0, 2).map(lambda n: f"nbcc.compactions={n}"),
        st.floats(0, 1).map(lambda p: f"nbcc.fail_prob={p:.2f}"),
        st.sampled_from(["skew-adjusting", "monotonic", "local-clock"]).map(
            lambda g: f'nbcc.time_generator="{g}"'),
    ), max_size=4)


def _short(protocol: str) -> list[str]:
    """Keep each drawn run brief (the point is that it ends well, not what it finds)."""
    return ["duration_ms=20000"] if protocol in ("lock", "occ") else []


def _run(protocol: str, name: str, overrides: list[str], capsys: pytest.CaptureFixture[str],
         tmp_path_factory: pytest.TempPathFactory) -> None:
    argv = ["run", name, "--out", str(tmp_path_factory.mktemp("space")), "--force"]
    for o in [*_short(protocol), *overrides]:
        argv += ["--set", o]
    code = main(argv)  # any exception here is a traceback a user would see: the test fails on it
    err = capsys.readouterr().err
    assert code in (0, 1, 2), (argv, code, err)
    if code == 2:
        m = REFUSAL.search(err)
        assert m, f"a refusal must name the field and the value: {err!r} ({argv})"


SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@SETTINGS
@given(name=st.sampled_from(ENTRIES["lock"]), overrides=_lock_overrides())
def test_lock_entries_with_changed_fields_end_well(name: str, overrides: list[str],
                                                   capsys: pytest.CaptureFixture[str],
                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    _run("lock", name, overrides, capsys, tmp_path_factory)


@SETTINGS
@given(name=st.sampled_from(ENTRIES["occ"]), overrides=_occ_overrides())
def test_occ_entries_with_changed_fields_end_well(name: str, overrides: list[str],
                                                  capsys: pytest.CaptureFixture[str],
                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    _run("occ", name, overrides, capsys, tmp_path_factory)


@SETTINGS
@given(name=st.sampled_from(ENTRIES["nbcc"]), overrides=_nbcc_overrides())
def test_nbcc_entries_with_changed_fields_end_well(name: str, overrides: list[str],
                                                   capsys: pytest.CaptureFixture[str],
                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    _run("nbcc", name, overrides, capsys, tmp_path_factory)


@pytest.mark.parametrize("overrides, field", [
    (["lock.validity_secs=4", "lock.enforce_hudi_limits=false", "lock.renew_interval_secs=1"],
     "lock.validity_secs"),
    (["storage.flavor=azure", "lock.variant=hudi-1.1"], "storage.flavor"),
])
def test_what_the_model_cannot_run_is_refused_naming_the_field(overrides: list[str], field: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "rfc91-safe"] + [a for o in overrides for a in ("--set", o)]
    assert main(argv) == 2
    m = REFUSAL.search(capsys.readouterr().err)
    assert m and m["field"] == field


@pytest.mark.parametrize("flavour", ["s3", "gcs", "azure"])
@pytest.mark.parametrize("name", ENTRIES["lock"] + ENTRIES["occ"])
def test_every_lock_and_occ_entry_on_every_flavour(name: str, flavour: str,
                                                   capsys: pytest.CaptureFixture[str],
                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each flavour's lock client maps the store's answers (and its own exceptions) its own way."""
    protocol = "lock" if name in ENTRIES["lock"] else "occ"
    _run(protocol, name, [f"storage.flavor={flavour}"], capsys, tmp_path_factory)


@pytest.mark.parametrize("listing", ["true", "false"])
@pytest.mark.parametrize("variant", sorted(NBCC_VARIANTS))
def test_every_nbcc_variant_with_either_listing(variant: str, listing: str,
                                                capsys: pytest.CaptureFixture[str],
                                                tmp_path_factory: pytest.TempPathFactory) -> None:
    _run("nbcc", "nbcc-storage-faults", [f'nbcc.variant="{variant}"', f"nbcc.metadata_table={listing}"],
         capsys, tmp_path_factory)

"""A lock entry run in the ``hudi`` world (Hudi's own provider in a JVM per node) and its run directory.

``hcc run ENTRY --world hudi [--hudi-version V] [--backend B] [--time-scale N]`` comes here: the entry's
scenario (its times divided by ``N``, :mod:`scenarios.time_scale`) runs through
:func:`backends.hudi.world.run_hudi_world` against a launched server, and the run leaves the same run
directory as every world: the streamed ``history.jsonl``, the resolved ``scenario.toml``, the table the
run left under ``table/`` (the lock file and Hudi's own audit trail, written by Hudi's audit service) with
Hudi's audit validator run on it, ``verdict.json`` with ``world = "hudi"``, the Hudi release, the sha256
of each Hudi jar that ran and each node's JVMs, ``metrics.json``, ``proxy.log`` and each JVM's log
(``jvm-<node>-<n>.log``: Hudi's own log lines).
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass
from pathlib import Path

from backends import registry
from backends.hudi.artifacts import checksums, default_version, driver_classpath, require_tool
from backends.hudi.world import HudiRunResult, check_scenario, run_hudi_world
from backends.launchers.process import LaunchError, Unavailable
from backends.realworld import ServerDied, Unreachable, read_prefix
from backends.secrets import redact, redact_url
from engines.progress import Steps
from engines.rundir import RunWriter, prepare_out
from model.config import ConfigError, Scenario
from model.protocols import plugin
from model.protocols.base import ModelRun
from model.run_format import HISTORY, HudiInfo, RunHead, VerdictFile, verdict_file
from scenarios import loader
from scenarios.catalogue import Entry
from scenarios.time_scale import scale

DEFAULT_BACKEND = "seaweedfs"


@dataclass(frozen=True)
class HudiRequest:
    """How to run an entry in the hudi world."""

    version: str = ""  # "" : the newest pinned release
    backend: str = DEFAULT_BACKEND
    time_scale: int = 1
    prefix: str = "hcc-hudi/"
    quiet: bool = False


def run_entry(entry: Entry, seed: int, out: Path | None, req: HudiRequest) -> VerdictFile:
    """Run a lock entry on Hudi's provider and write its run directory; the ``verdict.json`` written.

    ConfigError for what the world cannot run (another protocol, a model variant, drift), ArtifactError
    for a Hudi version or tool that is missing; a server that does not start gives ``not-started``.
    """
    if not isinstance(entry.config, Scenario):  # the lock protocol's configuration
        raise ConfigError("--world", "hudi", f"runs lock entries only ({entry.name} is {entry.protocol})")
    registry.validate(req.backend)
    version = req.version or default_version()
    jars = checksums(version)  # an unknown version fails here, before any server starts
    scenario = scale(entry.config, req.time_scale)
    check_scenario(scenario)  # what the world cannot run is refused before a server starts
    require_tool("java")
    driver_classpath(version)  # the jars fetched and the driver built (javac) before the run's folder
    backend = redact_url(req.backend)
    out = prepare_out(out, name=f"{entry.name}-hudi-{version}", seed=seed)
    writer = RunWriter(out, "lock")
    writer.scenario(loader.to_toml(scenario))
    lock = plugin("lock")
    scaled = f", times / {req.time_scale}" if req.time_scale > 1 else ""
    head: RunHead = {"scenario": entry.name, "protocol": "lock", "world": "hudi", "seed": seed,
                     "expect": entry.expect, "backend": backend,
                     "models": f"Hudi {version}'s StorageBasedLockProvider (real, its jars), the harness's "
                               f"{scenario.storage.flavor} lock client and writer{scaled}"}
    info: HudiInfo = {"version": version, "jars": jars, "time_scale": req.time_scale, "jvms": {}}
    steps = Steps(f"hcc run {entry.name} --world hudi (Hudi {version}) on {backend}", quiet=req.quiet)
    error: str | None = None
    objects: dict[str, bytes] = {}
    run: HudiRunResult | None = None
    with writer.history(head) as sink:
        try:
            with contextlib.ExitStack() as stack:
                with steps.part(f"start {backend}"):
                    ep = stack.enter_context(registry.open_endpoint(req.backend))
                with steps.part("run"):
                    run = run_hudi_world(scenario, ep, version=version, prefix=req.prefix, seed=seed,
                                         sink=sink, log_dir=out)
                with steps.part("read the table"):
                    objects = read_prefix(ep, req.prefix)
        except (Unavailable, LaunchError, Unreachable) as e:
            reason = redact(str(e))
            print(f"hcc run: backend {backend} did not start: {reason}; nothing ran ({out})", file=sys.stderr)
            not_started = verdict_file(head, {"verdict": "not-started", "violations": [], "findings": []},
                                       matches=False, out=str(out))
            not_started["error"] = reason
            not_started["hudi"] = info
            writer.finish(not_started, lock.metrics(scenario, ModelRun([])), report=False)
            return not_started
        except ServerDied as e:
            error, events = redact(str(e)), e.events
            print(f"hcc run: {error}; history kept in {out / HISTORY}", file=sys.stderr)
    if run is not None:
        events = run.result.events
        info["jvms"] = run.jvms
    with steps.part("check"):
        verdict = lock.check(scenario, ModelRun(events))
        found, audit = writer.keep_lock_table(objects, f"{req.prefix}{scenario.lock.base_path}", verdict)
    matches = error is None and verdict.verdict == entry.expect
    summary = verdict_file(head, found, matches=matches, out=str(out))
    summary["error"] = error
    summary["audit"] = audit
    summary["proxy"] = run.result.proxy_actions if run is not None else {}
    summary["hudi"] = info
    summary["timings"] = dict(steps.seconds)
    writer.finish(summary, lock.metrics(scenario, ModelRun(events)))
    return summary


def describe(summary: VerdictFile) -> list[str]:
    """The lines ``hcc run`` prints for a hudi-world run."""
    version = summary["hudi"]["version"] if "hudi" in summary else "?"
    lines = [f"lock scenario {summary['scenario']} on Hudi {version} (real)  seed {summary['seed']}  "
             f"verdict {summary['verdict']} (expected {summary['expect']})  -> {summary['out']}"]
    lines += [f"  violation [{v['kind']}] {v['message']}" for v in summary["violations"][:10]]
    lines += [f"  finding   [{f['kind']}] {f['message']}" for f in summary["findings"][:5]]
    return lines

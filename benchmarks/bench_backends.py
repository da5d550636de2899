"""Benchmark of the real-world interpreter on fake-gcs-server (not a test; prints figures, asserts nothing).

1. Uncontended acquire + release: Hudi's tryLock and unlock as the model's
   generators, interpreted by backends/realworld.py (threads, a heartbeat
   task started and cancelled, the Backend's outcome mapping), against the
   same requests done directly: once through ``Backend.perform`` and once with
   the bare google-cloud-storage client.  An acquire + release is 4 round
   trips in Hudi 1.2.0, in this order: read the lock file, create (or replace)
   it, read the audit enable file (the audit service is made after the lock is
   taken), expire it; the physical floor is that many x the median round trip
   of a single small read on the same connection.
   Every kind runs on a thread of its own that is woken for each cycle, as the
   harness's writer thread is: a thread that has just woken sends its requests
   measurably slower than one that never slept (where the scheduler puts it;
   the main-thread control below shows by how much), which would otherwise
   count against the harness alone.  Every round runs one cycle of each kind
   back to back, in an order that rotates from round to round, with clients
   and connections kept for the whole run, so that the server's and the
   machine's drift over time favour none of them; the ratios are printed both
   as ratios of medians and as the median of the per-round ratios.  The ratio
   harness / bare client is the harness's overhead; the bare client runs with
   the SDK's defaults, and once more with the session setting the harness's
   backend uses (proxies read once, not per request; no bucket GET of the SDK's
   own after a 404, see backends/gcs.py).  The HTTP requests per
   harness cycle are also counted on the wire, with those the SDK sends on
   threads of its own.
2. Contended acquisitions per second with 2, 8 and 32 writers (shortened
   timings: validity 5 s, renew 1 s, no work, think 0-20 ms, Hudi's 1 s poll),
   over 8 s each, with fairness (Jain) and the acquire latency p50.

Run: python benchmarks/bench_backends.py [--n 200] [--seconds 8]
"""

from __future__ import annotations

import argparse
import contextlib
import queue
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Generator
from typing import Any

from backends.base import Backend
from backends.realworld import RealWorld, clear_prefix
from backends.registry import open_endpoint
from model.checkers.lock_run import check_lock_history
from model.config import Dist, LockConfig, Scenario, StorageConfig, WorkloadConfig
from model.lock.audit import enable_key
from model.lock.lockfile import LockData
from model.lock.metrics import lock_metrics
from model.lock.provider import StorageLockProvider
from model.runtime.effects import (
    CreateIfAbsent,
    Effect,
    Read,
    ReplaceIfMatch,
    Sleep,
    StorageEffect,
    StoreResult,
)
from model.runtime.kernel import WriterContext
from model.workloads.lock import LockWorkload


class Counting(Backend):
    """Counts storage requests of a wrapped backend."""

    def __init__(self, inner: Backend) -> None:  # noqa: D107 - bench helper
        self.inner = inner
        self.prefix = inner.prefix
        self.requests = 0

    def perform(self, effect: StorageEffect) -> StoreResult:
        self.requests += 1
        return self.inner.perform(effect)

    def describe(self) -> str:
        return self.inner.describe()

    # unused abstract methods
    def _read(self, key: str) -> StoreResult: raise NotImplementedError  # noqa: E704
    def _create_if_absent(self, key: str, body: bytes) -> StoreResult: raise NotImplementedError  # noqa: E704
    def _replace_if_match(self, key: str, body: bytes, v: str) -> StoreResult: raise NotImplementedError  # noqa: E704
    def _put(self, key: str, body: bytes) -> StoreResult: raise NotImplementedError  # noqa: E704
    def _list_prefix(self, prefix: str) -> StoreResult: raise NotImplementedError  # noqa: E704
    def _delete(self, key: str) -> StoreResult: raise NotImplementedError  # noqa: E704


def lock_scenario(writers: int, seconds: float) -> Scenario:
    return Scenario(
        name="bench-backends", duration_ms=int(seconds * 1000),
        lock=LockConfig(validity_secs=5, renew_interval_secs=1, enforce_hudi_limits=False,
                        base_path="bench/table"),
        storage=StorageConfig(timeout_ms=3000, sdk_retries=2, retry_backoff_ms=50),
        workload=WorkloadConfig(writers=writers, work_ms=Dist("fixed", 0), think_ms=Dist("uniform", 0, 20),
                                start_ms=Dist("fixed", 0), register_key="bench/table/register"),
    )


class HarnessCycles:
    """Acquire + release cycles through the real-world interpreter, one per :meth:`cycle` call.

    One writer generator runs on the interpreter's own thread for the whole
    benchmark and blocks between cycles, so that every measured cycle uses the
    same world, threads and connections (as the bare clients below do).
    """

    def __init__(self, backend: Backend) -> None:
        sc = lock_scenario(1, 3600)
        self.counting = Counting(backend)
        self._go: queue.SimpleQueue[bool] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[float] = queue.SimpleQueue()

        def factory(ctx: WriterContext) -> Generator[Effect, Any, Any]:
            provider = StorageLockProvider(sc.lock, ctx.new_id)
            while self._go.get():  # blocks this writer's thread until the next cycle
                t = time.perf_counter()
                assert (yield from provider.try_lock())
                assert (yield from provider.unlock())
                self._done.put(time.perf_counter() - t)
            yield Sleep(0)

        self.world = RealWorld(sc, {"w1": self.counting}, workload=LockWorkload(sc, factory))
        self.world.kernel.start_writer(self.world.kernel.nodes["w1"])  # just the writer, no run loop

    def cycle(self) -> float:
        """One acquire + release; its seconds."""
        self._go.put(True)
        return self._done.get()

    def close(self) -> None:
        """End the writer and the interpreter's threads."""
        self._go.put(False)
        self.world.kernel.stop_all()


def wire_requests(harness: HarnessCycles, backend: Any, cycles: int = 20) -> tuple[float, float]:
    """HTTP requests per harness cycle on the wire: (sent by the harness's task threads, by other threads).

    Counted at the backend client's HTTP session, alone (no other kind runs meanwhile), so that a
    request the SDK sends on a thread of its own is seen too: the round trips a server gets, not only
    those the harness asks for.
    """
    session = backend._client._http
    sent = {"task": 0, "other": 0}
    send = session.send

    def counting_send(request: Any, **kwargs: Any) -> Any:
        sent["task" if threading.current_thread().name.startswith("hcc-task-") else "other"] += 1
        return send(request, **kwargs)

    time.sleep(0.5)  # what earlier cycles started on other threads ends first
    session.send = counting_send
    try:
        for _ in range(cycles):
            harness.cycle()
        time.sleep(0.5)  # and what these started is counted
    finally:
        del session.send  # the class's method again
    return sent["task"] / cycles, sent["other"] / cycles


def backend_cycle(backend: Backend) -> float:
    """One harness cycle's requests, in its order, through Backend.perform (no interpreter); its seconds."""
    key = "bench/table/.hoodie/.locks/table_lock.json"
    t = time.perf_counter()
    read = backend.perform(Read(key))
    data = LockData(False, int(time.time() * 1000) + 5000, str(uuid.uuid4()))
    if read.ok and read.version:
        res = backend.perform(ReplaceIfMatch(key, data.encode(), read.version))
    else:
        res = backend.perform(CreateIfAbsent(key, data.encode()))
    assert res.ok and res.version
    backend.perform(Read(enable_key("bench/table")))  # Hudi's provider reads the audit enable file (absent)
    done = backend.perform(ReplaceIfMatch(key, LockData(True, data.valid_until, data.owner).encode(),
                                          res.version))
    assert done.ok
    return time.perf_counter() - t


class OnThread:
    """Runs ``fn`` on a thread of its own, woken for each :meth:`cycle` call as the harness's writer is."""

    def __init__(self, fn: Callable[[], float]) -> None:
        self._go: queue.SimpleQueue[bool] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[float] = queue.SimpleQueue()

        def loop() -> None:
            while self._go.get():
                self._done.put(fn())

        self._thread = threading.Thread(target=loop, name="bench-kind", daemon=True)
        self._thread.start()

    def cycle(self) -> float:
        """One call of ``fn`` on the thread; the seconds it measured."""
        self._go.put(True)
        return self._done.get()

    def close(self) -> None:
        """End the thread."""
        self._go.put(False)
        self._thread.join(5)


class BareClient:
    """The same requests with the bare google-cloud-storage client (one client, kept for all cycles)."""

    def __init__(self, endpoint: Any, bucket: str, trust_env: bool = True,
                 metadata_cache: bool = True) -> None:
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import storage

        client = storage.Client(project="hcc", credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
                                client_options={"api_endpoint": endpoint})
        client._http.trust_env = trust_env
        if not metadata_cache:  # as backends/gcs.py: no bucket GET of the SDK's own after a 404
            client._bucket_metadata_cache = None
        self.bucket = client.bucket(bucket)
        # object names of the harness's shape and length (bench/table/...): the client percent-encodes
        # every '/' of a name, so shorter names would make the bare client's requests cheaper
        base = f"bsdk{int(trust_env)}/table"
        self.name, self.enable = f"{base}/.hoodie/.locks/table_lock.json", enable_key(base)

    def cycle(self) -> float:
        """One acquire + release, in the harness's order; its seconds."""
        b = self.bucket
        t = time.perf_counter()
        blob = b.blob(self.name)
        try:
            blob.download_as_bytes(retry=None)
            gen = blob.generation
        except Exception:  # noqa: BLE001 - NotFound on the first cycle
            gen = 0
        body = LockData(False, int(time.time() * 1000) + 5000, str(uuid.uuid4())).encode()
        blob.upload_from_string(body, if_generation_match=gen, retry=None)
        with contextlib.suppress(Exception):  # the audit enable file, as Hudi's provider reads it (absent)
            b.blob(self.enable).download_as_bytes(retry=None)
        blob.upload_from_string(body.replace(b"false", b"true"), if_generation_match=blob.generation,
                                retry=None)
        return time.perf_counter() - t

    def read(self) -> float:
        """One single small read; its seconds."""
        t = time.perf_counter()
        self.bucket.blob(self.name).download_as_bytes(retry=None)
        return time.perf_counter() - t


def contended(ep: Any, writers: int, seconds: float) -> dict[str, Any]:
    sc = lock_scenario(writers, seconds)
    clear_prefix(ep, "bench-c/")
    from backends.realworld import map_scenario_keys

    sc = map_scenario_keys(sc, "bench-c/")
    backends = {n: ep.backend("bench-c/", timeout_s=3)
                for n in sc.workload.nodes()}
    try:
        events = RealWorld(sc, backends).run()
    finally:
        for b in backends.values():
            b.close()
    m = lock_metrics(events)
    return {"acq_per_s": m["acquisitions"] / seconds, "fairness": m["fairness_jain"],
            "p50_ms": m["acquire_latency_ms"]["p50"], "verdict": check_lock_history(events).verdict}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=8.0)
    args = ap.parse_args()
    with open_endpoint("fake-gcs") as ep:
        with ep.backend("bench/", timeout_s=5) as b:
            harness = HarnessCycles(b)
            sdk, sdk_once = BareClient(ep.url, ep.bucket), BareClient(ep.url, ep.bucket, trust_env=False,
                                                                           metadata_cache=False)
            threads = {"perform": OnThread(lambda: backend_cycle(b)), "sdk": OnThread(sdk.cycle),
                       "sdk_once": OnThread(sdk_once.cycle), "read": OnThread(sdk_once.read)}
            kinds: dict[str, Callable[[], float]] = {
                "harness": harness.cycle, **{k: t.cycle for k, t in threads.items()},
                "main": sdk_once.cycle}  # the control: the same bare client on the main thread, never asleep
            times: dict[str, list[float]] = {k: [] for k in kinds}
            try:
                for i in range(args.n + 10):  # the first 10 rounds warm up
                    order = list(kinds)
                    order = order[i % len(order):] + order[:i % len(order)]  # rotate: no kind always first
                    for k in order:
                        t = kinds[k]()
                        if i >= 10:
                            times[k].append(t)
                per_cycle = harness.counting.requests // (args.n + 10)
                by_task, by_others = wire_requests(harness, b)
            finally:
                harness.close()
                for t in threads.values():
                    t.close()
        med = statistics.median
        h = med(times["harness"])

        def paired(other: str) -> float:
            """Median of the per-round ratios harness / other (each round runs both back to back)."""
            return med(a / o for a, o in zip(times["harness"], times[other], strict=True))

        floor = per_cycle * med(times["read"])
        print(f"fake-gcs-server, {args.n} rounds, each one uncontended acquire + release cycle of every "
              f"kind in rotating order, each kind on a thread woken per cycle; median per cycle:")
        print(f"  harness (realworld interpreter): {h * 1000:7.2f} ms  ({per_cycle} requests/cycle)")
        print(f"  Backend.perform, same requests : {med(times['perform']) * 1000:7.2f} ms")
        print(f"  bare google-cloud-storage      : {med(times['sdk']) * 1000:7.2f} ms  (SDK defaults)")
        print(f"  bare, proxies read once        : {med(times['sdk_once']) * 1000:7.2f} ms  (trust_env off)")
        print(f"  the same, main thread (control): {med(times['main']) * 1000:7.2f} ms  (never sleeps: "
              f"{med(times['main']) / med(times['sdk_once']):.2f} x on a woken thread)")
        print(f"  floor {per_cycle} x single-read RTT      : {floor * 1000:7.2f} ms  "
              f"(read RTT {med(times['read']) * 1000:.2f} ms)")
        print(f"  on the wire per harness cycle  : {by_task + by_others:7.1f} HTTP requests  "
              f"({by_task:.1f} by the harness's threads, {by_others:.1f} by the SDK's own)")
        print(f"  ratio harness / bare client    : {h / med(times['sdk']):7.2f}  (per-round "
              f"{paired('sdk'):.2f})")
        print(f"  ratio harness / bare, once     : {h / med(times['sdk_once']):7.2f}  (per-round "
              f"{paired('sdk_once'):.2f})")
        print(f"  ratio harness / Backend.perform: {h / med(times['perform']):7.2f}  (per-round "
              f"{paired('perform'):.2f})")
        print(f"  ratio Backend.perform / bare, once: {med(times['perform']) / med(times['sdk_once']):4.2f}")
        print(f"contended, {args.seconds:g} s each (validity 5 s, renew 1 s, poll 1 s, think 0-20 ms):")
        for n in (2, 8, 32):
            r = contended(ep, n, args.seconds)
            print(f"  {n:2d} writers: {r['acq_per_s']:7.1f} acquisitions/s  fairness {r['fairness']:.2f}  "
                  f"acquire p50 {r['p50_ms']} ms  verdict {r['verdict']}")


if __name__ == "__main__":
    main()

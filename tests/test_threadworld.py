"""The real world's trampoline: where an interrupt is carried out, and by which thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator
from typing import Any

import pytest

from backends.threadworld import Handle, Interruption, ThreadWorld
from model.runtime.clock import EPOCH_MS, ClockJump, NodeClock
from model.runtime.effects import Outcome, Read, StoreResult
from model.runtime.kernel import THREAD_INTERRUPT, Node


def world(perform: Any = None) -> ThreadWorld:
    return ThreadWorld(perform or (lambda node, effect: StoreResult(Outcome.NOT_FOUND)))


def wait_until(done: Callable[[], object], what: str) -> None:
    """Poll ``done`` until it is true; fail with ``what`` after 10 s."""
    deadline = time.monotonic() + 10
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.001)


def parked(h: Handle) -> None:
    wait_until(lambda: h.parked, "the task never reached its wait")


def test_a_cause_that_ends_a_parked_task_is_carried_out_by_the_interrupting_thread() -> None:
    w = world()
    seen: list[str] = []

    def task() -> Generator[Any, Any, None]:
        try:
            yield w.timeout(60_000)
        finally:
            seen.append(threading.current_thread().name)

    h = w.start(task())
    parked(h)
    h.interrupt("cancel")
    assert h.finished and h.ended.is_set()  # at once: no wait for the task's own thread
    assert seen == [threading.current_thread().name]


def test_the_cause_a_task_survives_is_left_to_its_own_thread() -> None:
    w = world()
    seen: list[tuple[Any, str]] = []

    def task() -> Generator[Any, Any, None]:
        try:
            yield w.timeout(60_000)
        except Interruption as i:
            seen.append((i.cause, threading.current_thread().name))

    h = w.start(task())
    parked(h)
    h.interrupt(THREAD_INTERRUPT)
    assert h.ended.wait(10)
    assert seen and seen[0][0] == THREAD_INTERRUPT
    assert seen[0][1] != threading.current_thread().name


def test_a_task_in_the_middle_of_a_request_gets_the_cause_at_its_next_wait_on_its_own_thread() -> None:
    entered, release = threading.Event(), threading.Event()

    def perform(node: Any, effect: Any) -> StoreResult:
        entered.set()
        release.wait(10)
        return StoreResult(Outcome.NOT_FOUND)

    w = world(perform)
    seen: list[tuple[Any, str]] = []

    def task() -> Generator[Any, Any, None]:
        try:
            yield w.request(None, Read("t/k"))  # type: ignore[arg-type]
        except Interruption as i:
            seen.append((i.cause, threading.current_thread().name))

    h = w.start(task())
    assert entered.wait(10)
    h.interrupt("crash")
    assert not h.finished  # the request is not recalled
    release.set()
    assert h.ended.wait(10)
    assert seen and seen[0][0] == "crash"
    assert seen[0][1] != threading.current_thread().name


def test_an_error_of_a_step_taken_by_the_interrupting_thread_is_raised_on_the_tasks_own_thread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    raised: list[tuple[type[BaseException] | None, str]] = []
    monkeypatch.setattr(threading, "excepthook",
                        lambda args: raised.append((args.exc_type, args.thread.name if args.thread else "")))
    w = world()

    def task() -> Generator[Any, Any, None]:
        try:
            yield w.timeout(60_000)
        except Interruption:
            raise ValueError("boom") from None

    h = w.start(task())
    parked(h)
    h.interrupt("cancel")  # does not raise here
    assert h.finished
    wait_until(lambda: raised, "no error was raised")
    assert raised[0][0] is ValueError
    assert raised[0][1] != threading.current_thread().name


def task_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("hcc-task-")}


def idle(w: ThreadWorld, n: int) -> None:
    wait_until(lambda: w._idle == n, f"not {n} idle worker threads")


def sleeping(h: Handle) -> None:
    wait_until(lambda: h.sleeping is not None, "the task never went to the timer")


def test_a_task_started_by_a_step_takes_its_first_step_after_it_and_sleeps_without_a_thread() -> None:
    w = world()
    seen: list[tuple[str, str]] = []
    children: list[Handle] = []
    before = task_threads()

    def child() -> Generator[Any, Any, None]:
        seen.append(("child-first-step", threading.current_thread().name))
        yield w.timeout(60_000)
        seen.append(("child-woke", threading.current_thread().name))

    def parent() -> Generator[Any, Any, None]:
        children.append(w.start(child()))
        seen.append(("parent-step-ends", threading.current_thread().name))
        yield w.timeout(60_000)

    p = w.start(parent())
    sleeping(p)
    c = children[0]
    sleeping(c)
    parent_thread = seen[0][1]
    assert seen == [("parent-step-ends", parent_thread), ("child-first-step", parent_thread)]
    c.interrupt("cancel")  # the heartbeat's case: cancelled while it waits for its first renewal
    assert c.finished and c.sleeping is None
    assert [t.name for t in task_threads() - before] == [parent_thread]  # the child never had a thread
    w.stop()
    assert p.finished


def test_a_sleeping_task_holds_no_thread_and_its_interrupt_ends_the_sleep_at_once() -> None:
    w = world()
    seen: list[tuple[str, str]] = []

    def sleeper() -> Generator[Any, Any, None]:
        seen.append(("first", threading.current_thread().name))
        try:
            yield w.timeout(60_000)
        except Interruption as i:
            seen.append((i.cause, threading.current_thread().name))

    def quick() -> Generator[Any, Any, None]:
        seen.append(("quick", threading.current_thread().name))
        yield w.timeout(0)

    h = w.start(sleeper())
    sleeping(h)
    idle(w, 1)
    q = w.start(quick())
    assert q.ended.wait(10)
    assert seen[1] == ("quick", seen[0][1])  # the sleeper's worker was free: reused
    t = time.monotonic()
    h.interrupt(THREAD_INTERRUPT)
    assert h.ended.wait(10) and time.monotonic() - t < 5
    assert seen[2][0] == THREAD_INTERRUPT and seen[2][1] != threading.current_thread().name


def test_sleeps_wake_in_due_order_and_never_early() -> None:
    w = world()
    woke: list[tuple[int, float]] = []

    def sleeper(ms: int) -> Generator[Any, Any, None]:
        t = time.monotonic()
        yield w.timeout(ms)
        woke.append((ms, time.monotonic() - t))

    handles = [w.start(sleeper(ms)) for ms in (400, 100, 300, 0, 200)]
    for h in handles:
        assert h.ended.wait(10)
    assert [ms for ms, _ in woke] == [0, 100, 200, 300, 400]
    assert all(slept >= ms / 1000 for ms, slept in woke)


def test_an_interrupt_racing_a_task_on_its_way_to_the_timer_is_not_lost() -> None:
    w = world()

    def sleeper() -> Generator[Any, Any, None]:
        try:
            yield w.timeout(60_000)
        except Interruption:
            return

    handles = []
    for _ in range(200):
        h = w.start(sleeper())
        h.interrupt(THREAD_INTERRUPT)  # before, during or after its first step and its hand-over to the timer
        handles.append(h)
    deadline = time.monotonic() + 10
    for h in handles:
        assert h.ended.wait(max(0.0, deadline - time.monotonic())), "an interrupt was lost: the sleep went on"


def test_a_request_is_sent_by_a_worker_not_by_the_step_that_starts_its_task() -> None:
    entered, release = threading.Event(), threading.Event()
    sender: list[str] = []

    def perform(node: Any, effect: Any) -> StoreResult:
        sender.append(threading.current_thread().name)
        entered.set()
        release.wait(30)
        return StoreResult(Outcome.NOT_FOUND)

    w = world(perform)
    replies: list[Any] = []
    parent_thread: list[str] = []

    def child() -> Generator[Any, Any, None]:
        replies.append((yield w.request(None, Read("t/k"))))  # type: ignore[arg-type]

    def parent() -> Generator[Any, Any, None]:
        parent_thread.append(threading.current_thread().name)
        c = w.start(child())
        yield w.timeout(0)
        assert not c.finished

    p = w.start(parent())
    try:
        assert p.ended.wait(5)  # the parent did not wait for its child's request
        assert entered.wait(10)
        assert sender == [sender[0]] and sender[0] != parent_thread[0]
    finally:
        release.set()
    wait_until(lambda: replies, "the request was never answered")
    assert replies[0].outcome is Outcome.NOT_FOUND


def test_a_tasks_own_worker_ends_the_step_sends_its_request_and_answers_it_with_no_wait_round() -> None:
    order: list[str] = []

    def perform(node: Any, effect: Any) -> StoreResult:
        order.append("sent")
        return StoreResult(Outcome.NOT_FOUND)

    w = world(perform)
    answers: list[Any] = []

    def child() -> Generator[Any, Any, None]:
        order.append("child's first step")
        yield w.timeout(60_000)

    def parent() -> Generator[Any, Any, None]:
        w.start(child())
        order.append("parent asks")
        answers.append(w.request(None, Read("t/k")))  # type: ignore[arg-type]
        yield w.timeout(0)

    p = w.start(parent())
    assert p.ended.wait(10)
    # what the end of the step does (the child's first step) comes before the request, as when it is yielded
    assert order == ["parent asks", "child's first step", "sent"]
    assert isinstance(answers[0], StoreResult) and answers[0].outcome is Outcome.NOT_FOUND
    w.stop(5)


@pytest.mark.parametrize("cause", ["crash", THREAD_INTERRUPT])
def test_a_cause_that_comes_while_the_own_worker_sends_is_delivered_at_that_wait(cause: str) -> None:
    entered, release = threading.Event(), threading.Event()
    sent: list[Any] = []

    def perform(node: Any, effect: Any) -> StoreResult:
        sent.append(effect)
        entered.set()
        release.wait(10)
        return StoreResult(Outcome.NOT_FOUND)

    w = world(perform)
    seen: list[Any] = []

    def task() -> Generator[Any, Any, None]:
        reply = w.request(None, Read("t/k"))  # type: ignore[arg-type]
        seen.append(type(reply).__name__)
        try:
            seen.append((yield reply))
        except Interruption as i:
            seen.append(i.cause)
        seen.append("went on")
        yield w.timeout(0)

    h = w.start(task())
    assert entered.wait(10)
    h.interrupt(cause)
    release.set()
    assert h.ended.wait(10)
    assert seen == ["Request", cause, "went on"]  # the cause, at this wait, not at the next
    assert len(sent) == 1  # sent once, not again when yielded


def test_an_error_in_a_first_step_taken_by_the_starting_thread_is_raised_on_a_worker_of_the_new_task(
        monkeypatch: pytest.MonkeyPatch) -> None:
    raised: list[tuple[type[BaseException] | None, str]] = []
    monkeypatch.setattr(threading, "excepthook",
                        lambda args: raised.append((args.exc_type, args.thread.name if args.thread else "")))
    w = world()
    after: list[str] = []

    def child() -> Generator[Any, Any, None]:
        raise ValueError("boom")
        yield

    def parent() -> Generator[Any, Any, None]:
        w.start(child())
        after.append(threading.current_thread().name)
        yield w.timeout(0)
        after.append(threading.current_thread().name)

    p = w.start(parent())
    assert p.ended.wait(10) and len(after) == 2  # the parent went on
    wait_until(lambda: raised, "no error was raised")
    assert raised[0][0] is ValueError


def test_stop_ends_sleeping_tasks_and_the_timer_thread() -> None:
    w = world()

    def sleeper() -> Generator[Any, Any, None]:
        yield w.timeout(60_000)

    handles = [w.start(sleeper()) for _ in range(3)]
    for h in handles:
        sleeping(h)
    assert any(t.name == "hcc-timer" and t.is_alive() for t in threading.enumerate())
    w.stop(5)
    assert all(h.finished for h in handles)
    assert w.timer._thread is None


def test_a_task_interrupted_by_a_step_wakes_once_that_step_has_ended() -> None:
    w = world()
    order: list[str] = []

    def target() -> Generator[Any, Any, None]:
        try:
            yield w.timeout(60_000)
        except Interruption:
            order.append("target woke")

    t = w.start(target())
    sleeping(t)

    def interrupter() -> Generator[Any, Any, None]:
        t.interrupt(THREAD_INTERRUPT)
        time.sleep(0.05)  # the rest of a step (the heartbeat's record after interrupting the writer)
        order.append("interrupter's step ended")
        yield w.timeout(0)

    i = w.start(interrupter())
    assert t.ended.wait(10) and i.ended.wait(10)
    assert order == ["interrupter's step ended", "target woke"]


@pytest.mark.parametrize("clock", [NodeClock(), NodeClock(offset_ms=-7_000),
                                   NodeClock(offset_ms=500, drift_ppm=200_000),
                                   NodeClock(jumps=(ClockJump(0, 3_000), ClockJump(10**9, 5)))])
def test_a_nodes_wall_clock_is_the_machines_plus_the_skew_its_clock_spec_gives(clock: NodeClock) -> None:
    w = world()
    w.reset_clock()
    time.sleep(0.05)  # some true time, so that a drift shows
    node = Node("n1", clock, [])
    before = int(time.time() * 1000)
    reading = w.read_clock(node)
    after = int(time.time() * 1000)
    true_ms = w.now()
    skew = clock.read(true_ms) - EPOCH_MS - true_ms  # the simulated clock's distance from true time
    assert before + skew - 2 <= reading <= after + skew + 2
    assert clock.steady_skew == (None if clock.drift_ppm or clock.jumps else clock.offset_ms)

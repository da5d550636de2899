"""The real world's trampoline: where an interrupt is carried out, and by which thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from typing import Any

import pytest

from backends.threadworld import Handle, Interruption, ThreadWorld
from model.effects import Outcome, Read, StoreResult
from model.kernel import INTERRUPT


def world(perform: Any = None) -> ThreadWorld:
    return ThreadWorld(perform or (lambda node, effect: StoreResult(Outcome.NOT_FOUND)),
                       lambda node, now: now)


def parked(h: Handle) -> None:
    deadline = time.monotonic() + 10
    while not h.parked:
        assert time.monotonic() < deadline, "the task never reached its wait"
        time.sleep(0.001)


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
    h.interrupt(INTERRUPT)
    assert h.ended.wait(10)
    assert seen and seen[0][0] == INTERRUPT
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
    deadline = time.monotonic() + 10
    while not raised and time.monotonic() < deadline:
        time.sleep(0.001)
    assert raised and raised[0][0] is ValueError
    assert raised[0][1] != threading.current_thread().name

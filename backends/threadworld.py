"""The kernel's primitives on real threads and real time: a small trampoline.

:class:`ThreadWorld` implements :class:`model.kernel.World`: every generator the
kernel starts runs on a daemon thread of its own (threads are reused once their
generator ends, as Hudi's heartbeat executor reuses its thread), and the trampoline resolves each
thing the generator yields by blocking: a timeout until its deadline, a signal
until it fires, a storage request at once (the request is performed on the
calling thread, so it is already answered when the kernel waits for it).  An
``interrupt(cause)`` reaches the generator as :class:`Interruption` at its current
or next wait, exactly as SimPy delivers ``simpy.Interrupt``.  A cause that ends the
task (a cancel, a crash, the end of the run) reaching a task that is waiting is
carried out by the interrupting thread itself, so that stopping an idle heartbeat
costs no thread hand-off (as cancelling an idle scheduled task in Java does not).
"""

from __future__ import annotations

import collections
import queue
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

from model.effects import StorageEffect, StoreResult
from model.kernel import INTERRUPT, Node

Gen = Generator[Any, Any, Any]


class Interruption(Exception):
    """Thrown into a started generator at its wait; ``cause`` says why."""

    def __init__(self, cause: Any = None) -> None:
        super().__init__(cause)
        self.cause = cause


class _Timeout:
    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + max(0.0, seconds)

    def poll(self) -> tuple[bool, Any]:
        return time.monotonic() >= self.deadline, None

    def left(self) -> float:
        return self.deadline - time.monotonic()


class Signal:
    """A one-shot event: ``succeed(value)`` fires it and wakes whoever waits for it."""

    def __init__(self) -> None:
        self._fired = threading.Event()
        self._value: Any = None
        self._waiters: set[Handle] = set()
        self._lock = threading.Lock()

    def succeed(self, value: Any = None) -> None:
        with self._lock:
            self._value = value
            self._fired.set()
            waiters, self._waiters = self._waiters, set()
        for h in waiters:
            h.wake.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block a thread that is not a task until the signal fires (or ``timeout`` s pass)."""
        return self._fired.wait(timeout)

    def poll(self) -> tuple[bool, Any]:
        return self._fired.is_set(), self._value

    @property
    def triggered(self) -> bool:
        return self._fired.is_set()

    def left(self) -> float:
        return 0.5

    def watch(self, h: Handle) -> None:
        with self._lock:
            if not self._fired.is_set():
                self._waiters.add(h)


class AnyOf:
    """Done when the first of several timeouts / signals is (``ThreadWorld.any_of``)."""

    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts

    def poll(self) -> tuple[bool, Any]:
        return any(p.poll()[0] for p in self.parts), None

    def left(self) -> float:
        return min(p.left() for p in self.parts)

    def watch(self, h: Handle) -> None:
        for p in self.parts:
            if isinstance(p, Signal):
                p.watch(h)


class Answered:
    """A storage reply that is already there (the request ran on the calling thread)."""

    def __init__(self, result: StoreResult) -> None:
        self.result = result

    def poll(self) -> tuple[bool, Any]:
        return True, self.result

    def left(self) -> float:
        return 0.0


class Handle:
    """A generator running on its own thread (see :meth:`ThreadWorld.start`).

    ``run`` is held while a thread steps the generator and is free while the generator waits
    (``parked``): an interrupt that ends the task is then carried out at once by the
    interrupting thread (see :meth:`interrupt`).
    """

    def __init__(self, gen: Gen) -> None:
        self.gen = gen
        self.causes: collections.deque[Any] = collections.deque()
        self.wake = threading.Event()
        self.finished = False
        self.ended = threading.Event()
        self.run = threading.Lock()
        self.parked = False  # started, and waiting at a yield for ``waiting``
        self.waiting: Any = None
        self.error: BaseException | None = None  # escaped a step taken by an interrupting thread

    @property
    def is_alive(self) -> bool:
        return not self.finished

    def interrupt(self, cause: Any = None) -> None:
        """Deliver ``cause`` as an :class:`Interruption` at the generator's current or next wait.

        A cause that ends a kernel task (any but ``INTERRUPT``) reaching a parked generator is thrown
        in at once on the calling thread, as cancelling an idle scheduled task is immediate in Java:
        the task's end does not wait for its own thread to wake up.  A generator in the middle of a
        step (e.g. performing a storage request) gets it at its next wait.
        """
        self.causes.append(cause)
        if cause != INTERRUPT and self.run.acquire(blocking=False):
            try:
                if self.parked and self.causes:
                    try:
                        self.step(None, Interruption(self.causes.popleft()))
                    except BaseException as e:  # noqa: BLE001 - the task's own thread raises it
                        self.error = e
            finally:
                self.run.release()
        self.wake.set()

    def step(self, send: Any, throw: BaseException | None) -> None:
        """Resume the generator (the caller holds ``run``): it parks at its next wait or finishes."""
        self.parked = False
        try:
            waiting = self.gen.throw(throw) if throw is not None else self.gen.send(send)
        except (StopIteration, Interruption):  # Interruption: a generator with no use for the cause
            self.finish()
            return
        except BaseException:
            self.finish()
            raise
        if isinstance(waiting, Signal | AnyOf):
            waiting.watch(self)
        self.waiting, self.parked = waiting, True

    def finish(self) -> None:
        """Mark the generator ended and wake whoever waits for that."""
        self.finished = True
        self.ended.set()


class ThreadWorld:
    """Real threads, real time (``now``: ms since the run started, or since ``start_epoch``)."""

    Interrupt: type[BaseException] = Interruption

    def __init__(self, perform: Callable[[Node, StorageEffect], StoreResult],
                 read_clock: Callable[[Node, int], int], start_epoch: float | None = None) -> None:
        self._perform = perform
        self._read_clock = read_clock
        self.start_epoch = start_epoch
        self._t0 = time.monotonic()
        self.lock = threading.RLock()
        self.handles: list[Handle] = []  # the generators not known to have ended
        self._queue: queue.SimpleQueue[Handle | None] = queue.SimpleQueue()
        self._idle = 0  # worker threads waiting for a generator
        self._workers = 0

    def reset_clock(self) -> None:
        """True time 0 is now (unless a shared ``start_epoch`` was given)."""
        self._t0 = time.monotonic()

    def now(self) -> int:
        if self.start_epoch is not None:
            return int((time.time() - self.start_epoch) * 1000)
        return int((time.monotonic() - self._t0) * 1000)

    def read_clock(self, node: Node) -> int:
        return self._read_clock(node, self.now())

    def timeout(self, ms: int) -> _Timeout:
        return _Timeout(ms / 1000)

    def event(self) -> Signal:
        return Signal()

    def any_of(self, events: list[Any]) -> AnyOf:
        return AnyOf(events)

    def start(self, gen: Gen) -> Handle:
        h = Handle(gen)
        with self.lock:
            self.handles = [x for x in self.handles if x.is_alive]
            self.handles.append(h)
            reuse = self._idle > 0
            if reuse:
                self._idle -= 1
            else:
                self._workers += 1
        if reuse:
            self._queue.put(h)
        else:
            threading.Thread(target=self._worker, args=(h,), name=f"hcc-task-{self._workers}",
                             daemon=True).start()
        return h

    def _worker(self, h: Handle | None) -> None:
        while h is not None:
            self._trampoline(h)
            with self.lock:
                self._idle += 1
            h = self._queue.get()

    def request(self, node: Node, effect: StorageEffect) -> Answered:
        return Answered(self._perform(node, effect))

    def stop(self, join_s: float = 15.0) -> None:
        """Interrupt every running generator with cause ``stop`` and wait for their threads."""
        with self.lock:
            handles = list(self.handles)
        for h in handles:
            if h.is_alive:
                h.interrupt("stop")
        deadline = time.monotonic() + join_s
        for h in handles:
            h.ended.wait(max(0.0, deadline - time.monotonic()))
        with self.lock:
            idle, self._idle = self._idle, 0
        for _ in range(idle):
            self._queue.put(None)  # idle workers end

    def _trampoline(self, h: Handle) -> None:
        """Step ``h``'s generator and block on what it waits for, until it finishes (here or elsewhere)."""
        try:
            with h.run:
                h.step(None, None)
            while True:
                with h.run:
                    if h.finished:
                        if h.error is not None:
                            raise h.error
                        return
                    if h.causes:
                        h.step(None, Interruption(h.causes.popleft()))
                        continue
                    done, value = h.waiting.poll()
                    if done:
                        h.step(value, None)
                        continue
                    left = h.waiting.left()
                h.wake.wait(min(max(left, 0.0), 0.5))
                h.wake.clear()
        finally:
            if not h.finished:
                h.finish()

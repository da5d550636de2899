"""The kernel's primitives on real threads and real time: a small trampoline.

:class:`ThreadWorld` implements :class:`model.kernel.World`: every generator the
kernel starts runs on a daemon thread of its own (threads are reused once their
generator ends, as Hudi's heartbeat executor reuses its thread), and the trampoline resolves each
thing the generator yields by blocking: a timeout until its deadline, a signal
until it fires, a storage request at once (the request is performed on the
calling thread, so it is already answered when the kernel waits for it).  An
``interrupt(cause)`` reaches the generator as :class:`Interruption` at its current
or next wait, exactly as SimPy delivers ``simpy.Interrupt``.
"""

from __future__ import annotations

import collections
import queue
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

from model.effects import StorageEffect, StoreResult
from model.kernel import Node

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
    """A generator running on its own thread (see :meth:`ThreadWorld.start`)."""

    def __init__(self, gen: Gen) -> None:
        self.gen = gen
        self.causes: collections.deque[Any] = collections.deque()
        self.wake = threading.Event()
        self.finished = False
        self.ended = threading.Event()

    @property
    def is_alive(self) -> bool:
        return not self.finished

    def interrupt(self, cause: Any = None) -> None:
        """Deliver ``cause`` as an :class:`Interruption` at the generator's current or next wait."""
        self.causes.append(cause)
        self.wake.set()


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
        send: Any = None
        throw: BaseException | None = None
        try:
            while True:
                try:
                    waiting = h.gen.throw(throw) if throw is not None else h.gen.send(send)
                except StopIteration:
                    return
                except Interruption:
                    return  # a generator with no use for the cause (the nemesis at the end of a run)
                send, throw = None, None
                if isinstance(waiting, Signal | AnyOf):
                    waiting.watch(h)
                while True:
                    if h.causes:
                        throw = Interruption(h.causes.popleft())
                        break
                    done, value = waiting.poll()
                    if done:
                        send = value
                        break
                    h.wake.wait(min(max(waiting.left(), 0.0), 0.5))
                    h.wake.clear()
        finally:
            h.finished = True
            h.ended.set()

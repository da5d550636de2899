"""The kernel's primitives on real threads and real time: a small trampoline and a timer.

:class:`ThreadWorld` implements :class:`model.runtime.kernel.World`.  A generator the
kernel starts takes a thread only while it has work to do: a pool of daemon
worker threads (reused, as Hudi's heartbeat executor reuses its thread) steps
generators and resolves what they yield: a storage request is sent by the
worker and its reply awaited there, a signal is waited for there.  A generator
that waits for a timeout (a sleep) gives its thread back: one timer thread keeps
the sleepers in a heap of due times and hands each to a worker when it is due,
as Java's ScheduledExecutorService takes no thread for a scheduled task until it
runs.  A generator started by another one's step takes its first step on the
starting thread once that step has ended (as SimPy runs a new process right after
its parent yields), so a heartbeat that begins with a sleep never costs a thread
hand-off, and cancelling it before its first renewal costs none either.  Only a
task's own worker sends its storage requests, and it sends one at once, inside the
step, after doing what the step's end does (:meth:`ThreadWorld.request`): the
kernel takes the result with no wait round.  A step taken by another thread (a
child's first step, an interrupter's) gets the request back unsent, and the
task's worker sends it (a starting thread never waits for its child's).

An ``interrupt(cause)`` reaches the generator as :class:`Interruption` at its
current or next wait, exactly as SimPy delivers ``simpy.Interrupt``.  A cause that
ends the task (a cancel, a crash, the end of the run) reaching a task that is
waiting is carried out by the interrupting thread itself, so that stopping an
idle heartbeat costs no thread hand-off (as cancelling an idle scheduled task in
Java does not); the cause a task survives (``THREAD_INTERRUPT``) is left to a worker.
"""

from __future__ import annotations

import collections
import heapq
import itertools
import math
import queue
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

from model.runtime.clock import EPOCH_MS
from model.runtime.effects import StorageEffect, StoreResult
from model.runtime.kernel import THREAD_INTERRUPT, Node

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


# Guards the few fields of every Signal: held only while they change and never waited under, so one lock
# serves them all.
_SIGNALS = threading.Lock()


class Signal:
    """A one-shot event: ``succeed(value)`` fires it and wakes whoever waits for it.

    A task waits for it through its handle (``watch``); a thread that is no task blocks in ``wait``,
    on a ``threading.Event`` made only then (a signal is made for every task, and most are never
    waited for that way).
    """

    __slots__ = ("triggered", "_value", "_waiters", "_event")

    def __init__(self) -> None:
        self.triggered = False
        self._value: Any = None
        self._waiters: list[Handle] | None = None  # the handles watching it, once one does
        self._event: threading.Event | None = None

    def succeed(self, value: Any = None) -> None:
        with _SIGNALS:
            self._value = value
            self.triggered = True
            waiters, self._waiters = self._waiters, None
            event = self._event
        if event is not None:
            event.set()
        if waiters is not None:
            for h in waiters:
                h.alarm()

    def wait(self, timeout: float | None = None) -> bool:
        """Block a thread that is not a task until the signal fires (or ``timeout`` s pass)."""
        with _SIGNALS:
            if self.triggered:
                return True
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        return event.wait(timeout)

    def is_set(self) -> bool:
        """Whether it fired (as ``threading.Event.is_set``)."""
        return self.triggered

    def poll(self) -> tuple[bool, Any]:
        return self.triggered, self._value

    def left(self) -> float:
        return 0.5

    def watch(self, h: Handle) -> None:
        with _SIGNALS:
            if not self.triggered:
                if self._waiters is None:
                    self._waiters = [h]
                else:
                    self._waiters.append(h)


class AnyOf:
    """Done when the first of several timeouts / signals is (``ThreadWorld.any_of``)."""

    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts

    def poll(self) -> tuple[bool, Any]:
        return any(p.poll()[0] for p in self.parts), None

    def left(self) -> float:
        return float(min(p.left() for p in self.parts))

    def watch(self, h: Handle) -> None:
        for p in self.parts:
            if isinstance(p, Signal):
                p.watch(h)


class Request:
    """One storage request, sent by the worker that resolves the generator's yield (see ``_run``)."""

    def __init__(self, perform: Callable[[Node, StorageEffect], StoreResult], node: Node,
                 effect: StorageEffect) -> None:
        self._perform = perform
        self.node = node
        self.effect = effect
        self.sent = False
        self.result: StoreResult | None = None

    def send(self) -> None:
        """Perform the request (its errors propagate to the caller, who throws them into the generator)."""
        self.sent = True
        self.result = self._perform(self.node, self.effect)

    def poll(self) -> tuple[bool, Any]:
        return self.result is not None, self.result

    def left(self) -> float:
        return 0.0


class Handle:
    """A started generator (see :meth:`ThreadWorld.start`).

    ``run`` is held while a thread steps the generator or sends its request, and is free while the
    generator waits (``parked``): an interrupt that ends the task is then carried out at once by the
    interrupting thread (see :meth:`interrupt`).  ``sleeping``: held by the world's timer, no thread.
    """

    def __init__(self, gen: Gen, world: ThreadWorld) -> None:
        self.gen = gen
        self.world = world
        self.causes: collections.deque[Any] = collections.deque()  # appended under the timer's lock
        self.wake: threading.Event | None = None  # made by the first worker that runs it (see ``alarm``)
        self.started = False
        self.finished = False
        self.ended = Signal()
        self.run = threading.Lock()
        self.parked = False  # started, and waiting at a yield for ``waiting`` (a request: once sent)
        self.sleeping: tuple[float, int, Handle] | None = None  # its entry in the timer's heap
        self.waiting: Any = None
        self.error: BaseException | None = None  # escaped a step taken by a thread not its worker

    @property
    def is_alive(self) -> bool:
        return not self.finished

    def interrupt(self, cause: Any = None) -> None:
        """Deliver ``cause`` as an :class:`Interruption` at the generator's current or next wait.

        A cause that ends a kernel task (any but ``THREAD_INTERRUPT``) reaching a parked generator is
        thrown in at once on the calling thread, as cancelling an idle scheduled task is immediate in Java:
        the task's end does not wait for a thread to wake up.  A generator in the middle of a step
        (e.g. sending a storage request) gets it at its next wait; one that is not stepped here is
        woken (a sleeper handed to a worker) at once, or, when the caller is itself taking a step,
        once that step has ended (so an interrupted task never runs beside the rest of its
        interrupter's step, as in SimPy, where the interrupter goes on until it yields).
        """
        world = self.world
        timer = world.timer
        timer.add_cause(self, cause)
        stepped = False
        if cause != THREAD_INTERRUPT and self.run.acquire(blocking=False):
            try:
                if self.parked and self.causes:
                    stepped, took = True, timer.take(self)
                    try:
                        world.step(self, None, Interruption(self.causes.popleft()))
                    except BaseException as e:  # noqa: BLE001 - raised on a worker of the task instead
                        self.error = e
                    if took:
                        world.place(self)
            finally:
                self.run.release()
        step = world._local.step
        if stepped and self.finished:
            self.alarm()  # an ended task runs nothing more: a worker waiting for it may see that at once
        elif step is not None:  # the interrupter is in a step: wake this task once the step ends, as SimPy
            step.wakes.append(self)  # resumes an interrupted process only after the interrupter yields
        elif stepped:
            self.alarm()  # a worker waiting for it sees it ended (or waiting anew)
        else:
            self.resume()

    def resume(self) -> None:
        """Wake the task for a cause left to it: a sleeper goes to a worker, a waiting worker wakes."""
        if self.world.timer.take(self):
            self.world.dispatch(self)
        self.alarm()

    def alarm(self) -> None:
        """Wake the worker that waits for this task, if one does.

        Only a worker waits on ``wake``, and it makes ``wake`` before it first looks at the task's state
        (under ``run``): a change made before that is seen by the look, one made after it sets the event.
        Most tasks never get a worker (a heartbeat cancelled while it sleeps), so most make no event.
        """
        wake = self.wake
        if wake is not None:
            wake.set()

    def step(self, send: Any, throw: BaseException | None) -> None:
        """Resume the generator (the caller holds ``run``): it parks at its next wait or finishes."""
        self.started, self.parked = True, False
        try:
            waiting = self.gen.throw(throw) if throw is not None else self.gen.send(send)
        except (StopIteration, Interruption):  # Interruption: a generator with no use for the cause
            self.finish()
            return
        except BaseException:
            self.finish()
            raise
        kind = type(waiting)
        if kind is Signal or kind is AnyOf:
            waiting.watch(self)
        self.waiting, self.parked = waiting, kind is not Request

    def finish(self) -> None:
        """Mark the generator ended and wake whoever waits for that."""
        self.finished = True
        self.ended.succeed()


class _Timer:
    """One thread and a heap of sleeping handles by due time; a due handle goes to ``dispatch``.

    The thread is woken early only when a new sleeper is due before its planned wake-up, so a
    sleeper removed before it is due (a cancelled heartbeat) usually costs the thread nothing.
    """

    def __init__(self, dispatch: Callable[[Handle], None]) -> None:
        self._dispatch = dispatch
        self._lock = threading.Lock()  # the condition's lock, taken directly where nothing waits on it
        self._cond = threading.Condition(self._lock)
        self._heap: list[tuple[float, int, Handle]] = []
        self._seq = itertools.count()
        self._planned = math.inf  # when the thread looks at the heap next (-inf: it is looking now)
        self._thread: threading.Thread | None = None

    def add_cause(self, h: Handle, cause: Any) -> None:
        """Queue an interrupt's cause (under the lock that :meth:`add` checks causes under)."""
        with self._lock:
            h.causes.append(cause)

    def add(self, h: Handle, deadline: float) -> bool:
        """Hold ``h`` until ``deadline``; False (``h`` not held) when a cause is waiting for it."""
        with self._lock:
            if h.causes:
                return False
            h.sleeping = entry = (deadline, next(self._seq), h)
            heapq.heappush(self._heap, entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="hcc-timer", daemon=True)
                self._thread.start()
            elif deadline < self._planned:
                self._cond.notify()
        return True

    def take(self, h: Handle) -> bool:
        """Remove ``h`` if held: True when it was (the caller now places it)."""
        with self._lock:
            entry = h.sleeping
            if entry is None:
                return False
            h.sleeping = None
            self._heap.remove(entry)
            heapq.heapify(self._heap)
            return True

    def stop(self) -> None:
        """End the thread (a later :meth:`add` starts another)."""
        with self._lock:
            thread, self._thread = self._thread, None
            self._cond.notify()
        if thread is not None:
            thread.join(5)

    def _loop(self) -> None:
        me = threading.current_thread()
        with self._cond:
            while self._thread is me:
                due: list[Handle] = []
                now = time.monotonic()
                while self._heap and self._heap[0][0] <= now:
                    h = heapq.heappop(self._heap)[2]
                    h.sleeping = None
                    due.append(h)
                if due:
                    self._planned = -math.inf
                    self._cond.release()
                    try:
                        for h in due:
                            self._dispatch(h)
                    finally:
                        self._cond.acquire()
                    continue
                self._planned = self._heap[0][0] if self._heap else math.inf
                self._cond.wait(None if self._planned == math.inf else self._planned - now)
                self._planned = -math.inf


class _Step:
    """A step a thread takes: what is left for its end, and whose own worker takes it."""

    __slots__ = ("starts", "wakes", "own")

    def __init__(self, own: Handle | None) -> None:
        self.starts: list[Handle] = []  # the generators it started: first stepped when it ends
        self.wakes: list[Handle] = []  # the tasks it interrupted: woken when it ends
        # the handle whose own worker takes the step; None for a first step taken by the starting thread,
        # or a step taken by an interrupting thread
        self.own = own


class _Steps(threading.local):
    step: _Step | None = None  # the step this thread takes, if any


class ThreadWorld:
    """Real threads, real time (``now``: ms since the run started, or since ``start_epoch``)."""

    Interrupt: type[BaseException] = Interruption

    def __init__(self, perform: Callable[[Node, StorageEffect], StoreResult],
                 start_epoch: float | None = None) -> None:
        self._perform = perform
        self.start_epoch = start_epoch
        self._t0 = time.monotonic()
        self.lock = threading.RLock()
        self.handles: list[Handle] = []  # the generators started, less some that have ended
        self._prune_at = 8
        self.timer = _Timer(self.dispatch)
        self._local = _Steps()
        self._pool = threading.Lock()
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
        """``node``'s wall clock: the machine's (epoch ms) plus the node's injected skew (``NodeClock``)."""
        clock = node.clock
        skew = clock.steady_skew
        if skew is None:
            true_ms = self.now()
            skew = clock.read(true_ms) - EPOCH_MS - true_ms
        return int(time.time() * 1000) + skew

    def timeout(self, ms: int) -> _Timeout:
        return _Timeout(ms / 1000)

    def event(self) -> Signal:
        return Signal()

    def any_of(self, events: list[Any]) -> AnyOf:
        return AnyOf(events)

    def request(self, node: Node, effect: StorageEffect) -> Request | StoreResult:
        """Send a storage request: at once when the task's own worker asks, else by the worker resolving it.

        A task's own worker would send it as soon as the step ends (see ``_run``), so it ends the step here
        (the first steps of the generators it started, the wakes of the tasks it interrupted), sends the
        request and hands back its result: the kernel goes on with no wait round.  A cause that came
        meanwhile is still delivered at this wait: the request comes back sent, and ``_run`` throws it
        in.  Any other step (a first step, an interrupter's) returns the request unsent: that thread must
        not wait for it.
        """
        step = self._local.step
        if step is None or step.own is None:
            return Request(self._perform, node, effect)
        starts, wakes = step.starts, step.wakes
        if starts or wakes:
            step.starts, step.wakes = [], []
            self._end_step(starts, wakes)
        result = self._perform(node, effect)  # not recalled: a cause that comes meanwhile waits for it
        if step.own.causes:
            req = Request(self._perform, node, effect)
            req.sent, req.result = True, result
            return req
        return result

    def start(self, gen: Gen) -> Handle:
        """Run ``gen`` concurrently: first stepped after the step that starts it, else by a worker."""
        h = Handle(gen, self)
        with self.lock:
            handles = self.handles
            if len(handles) >= self._prune_at:  # drop the ended ones now and then, not on every start
                self.handles = handles = [x for x in handles if not x.finished]
                self._prune_at = 2 * len(handles) + 8
            handles.append(h)
        step = self._local.step
        if step is not None:
            step.starts.append(h)
        else:
            self.dispatch(h)
        return h

    def dispatch(self, h: Handle) -> None:
        """Hand ``h`` to a worker thread (an idle one, else a new one)."""
        with self._pool:
            reuse = self._idle > 0
            if reuse:
                self._idle -= 1
            else:
                self._workers += 1
                name = f"hcc-task-{self._workers}"
        if reuse:
            self._queue.put(h)
        else:
            threading.Thread(target=self._worker, args=(h,), name=name, daemon=True).start()

    def step(self, h: Handle, send: Any, throw: BaseException | None, own: bool = False) -> None:
        """``h.step`` (the caller holds ``h.run``), then the first step of each generator it started.

        ``own``: the caller is ``h``'s own worker (in ``_run``), which may send ``h``'s requests at once.
        """
        local = self._local
        outer = local.step
        local.step = step = _Step(h if own else None)
        try:
            h.step(send, throw)
        finally:
            local.step = outer
            self._end_step(step.starts, step.wakes)

    def _end_step(self, starts: list[Handle], wakes: list[Handle]) -> None:
        """What follows a step: the first step of each generator it started, then the wakes it left."""
        for child in starts:
            with child.run:
                try:
                    self.step(child, None, None)
                except BaseException as e:  # noqa: BLE001 - raised on a worker of the child instead
                    child.error = e
                self.place(child)
        for target in wakes:
            target.resume()

    def place(self, h: Handle) -> None:
        """Give ``h`` to the timer or a worker (its caller holds ``h.run`` and is not a worker running it)."""
        if h.finished:
            if h.error is not None:
                self.dispatch(h)  # its worker raises it
            return
        if not self._to_timer(h):
            self.dispatch(h)

    def _to_timer(self, h: Handle) -> bool:
        """True when ``h`` waits for a timeout and the timer now holds it (no thread until it is due)."""
        waiting = h.waiting
        return type(waiting) is _Timeout and self.timer.add(h, waiting.deadline)

    def _worker(self, h: Handle | None) -> None:
        while h is not None:
            self._run(h)
            with self._pool:
                self._idle += 1
            h = self._queue.get()

    def stop(self, join_s: float = 15.0) -> None:
        """Interrupt every running generator with cause ``stop`` and wait for them; end idle threads."""
        with self.lock:
            handles = list(self.handles)
        for h in handles:
            if h.is_alive:
                h.interrupt("stop")
        deadline = time.monotonic() + join_s
        for h in handles:
            h.ended.wait(max(0.0, deadline - time.monotonic()))
        self.timer.stop()
        with self._pool:
            idle, self._idle = self._idle, 0
        for _ in range(idle):
            self._queue.put(None)  # idle workers end

    def _run(self, h: Handle) -> None:
        """Step ``h`` and resolve what it waits for, until it finishes (here or elsewhere) or sleeps."""
        run = h.run
        try:
            while True:
                with run:
                    if h.wake is None:
                        h.wake = threading.Event()
                    wake = h.wake
                    while True:  # whatever needs no waiting, in one hold of ``run``
                        if h.finished:
                            if h.error is not None:
                                raise h.error
                            return
                        if not h.started:
                            self.step(h, None, None, True)
                            continue
                        waiting = h.waiting
                        if type(waiting) is Request and not waiting.sent:
                            try:
                                waiting.send()  # not recalled: a cause that came meanwhile waits for it
                            except BaseException as e:  # noqa: BLE001 - the generator gets it at its yield
                                self.step(h, None, e, True)
                                continue
                            h.parked = True
                        if h.causes:
                            self.step(h, None, Interruption(h.causes.popleft()), True)
                            continue
                        done, value = waiting.poll()
                        if done:
                            self.step(h, value, None, True)
                            continue
                        if self._to_timer(h):
                            return  # this thread is free
                        left = waiting.left()
                        break
                wake.wait(min(max(left, 0.0), 0.5))
                wake.clear()
        except BaseException:
            if not h.finished:
                h.finish()
            raise

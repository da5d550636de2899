"""Parked runs: the depth-first walk resumes a run from a forked copy parked at a decision, not its start.

A run is real Python code whose generators CPython cannot copy, so the search reaches a decision point again
by running its path again from the start (``run.py``); in the NBCC fault rows 96-98% of a run is that replayed
prefix.  A process can be copied: with parking the runs execute in *run processes* and the search (this
process) is their driver over a socket.  When the search takes the first option of a decision that has
options left, the run process forks: the child goes on with that option, the parent stays *parked* at the
decision.  To take the next option there, the search asks the parked process to fork again, and the new child
goes on from the decision with that option; a frame without a parked process (past the limit) resumes from the
nearest parked frame above it, replaying only the decisions between them, or from the root process (a run
process parked before any run starts).  A frame popped from the stack ends its parked process.

What the search decides does not change: it keeps ``seen``, the edges, the stack and the sleep sets, and takes
every decision through the same ``decide``; a run process asks at each decision past its path and answers what
``decide`` reads of the run (its time, state key, history, store, liveness gap) on request.  The runs are
deterministic (every random stream and id generator lives in the run), so a forked copy is the same run as a
replay: verdicts, states, paths and findings are those of the search without parking
(``tests/test_explore_parked.py``).  ``runs`` counts the paths executed either way.

Processes: every run process is in one process group of its own (a Ctrl-C to the terminal's group reaches only
the search, which then ends them), the root process is the subreaper of the others (a parked process outlives
the process that forked it) and ignores SIGCHLD, so the kernel reaps every one that exits; each exits when its
socket closes, so none outlives the search, and :meth:`Parking.close` kills the group, with the harness's
watchdog (``backends.launchers.process.watchdog``) as the last resort if the search is killed.

What a fork costs is not the fork (0.5 ms) but the pages the copy that goes on then writes (CPython writes
reference counts into every object it reads): ~8 ms of CPU a copy on this 2-core machine, about half an NBCC
fault row's run (~20 ms).  So a copy is parked at a decision only ``ParkedRuns.spacing_ms`` of the run's true
time past the nearest parked one above it, and a frame's last option is taken by its parked process itself
(no fork).  Measured on the NBCC K = 1 rows (their first 600 and 2,500 states, CPU seconds of the search and
every run process together, on a loaded machine): a copy at every decision 20.7 s against 18.1 s replaying;
every 500-1,000 ms, 10.1 s; 2,500 states with the metadata table, 65.1 s replaying, 39.9 s every 500 ms,
47.3 s every 1,000 ms; 3,500 states of the storage row, 145.5 s replaying (499 s on the clock), 60.8 s every
500 ms (127 s).  Where a run costs
about one fork (the lock's, OCC's, NBCC's without a fault: its storage K = 0 row's brute force took 131 s
parked against 18 s replaying) nothing is parked (``Bounds.parked_runs``).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import signal
import socket
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.reduction import recv_handle, send_handle
from typing import Any, Protocol

from backends.launchers.process import _child_setup, _libc, watchdog
from model.explore.bounds import ParkedRuns, Plan, Reductions
from model.explore.run import Run, RunOutcome, StepInfo, Stop


class Frame(Protocol):
    """A decision point of the search's stack (``search.Frame``), as parking reads it."""

    prefix: tuple[int, ...]
    todo: list[int]


class Walk(Protocol):
    """The depth-first walk that drives the runs (``search.DepthFirst``), as parking reads it (a protocol, so
    that this module, which the search imports, imports nothing of the search)."""

    @property
    def stack(self) -> Sequence[Frame]: ...

    def decide(self, run: Run, kind: str, options: int, steps: list[StepInfo]) -> int: ...

_PR_SET_CHILD_SUBREAPER = 36
# the calls a run makes of its driver besides ``decide`` (when the driver has them), and whether each answers
_HOOKS = {"record_start": True, "fired": False}
__all__ = ["Parking", "RunFailed"]


class RunFailed(RuntimeError):
    """A run process raised (its traceback is the message) or died."""


@dataclass
class Stats:
    """What parking did: copies parked, runs resumed from one or from the root, decisions replayed."""

    parked: int = 0
    resumed: int = 0
    from_root: int = 0
    replayed: int = 0  # decisions a resumed run took from its path (between its parked frame and its own)


class RemoteRun:
    """What the search's ``decide`` reads of a run going on in a run process (the names are ``Run``'s)."""

    def __init__(self, conn: Connection, taken: Sequence[int]) -> None:
        self.conn = conn
        self.taken = list(taken)
        self.time = 0

    def now(self) -> int:
        """The run's true time at this decision."""
        return self.time

    def _ask(self, *request: Any) -> Any:
        self.conn.send(request)
        return _recv(self.conn)[1]

    def key(self) -> Any:
        """The state key and renaming (``Run.key``), computed in the run process."""
        return self._ask("key")

    @property
    def events(self) -> Any:
        """The history so far."""
        return self._ask("events")

    @property
    def objects(self) -> Any:
        """The store's objects so far."""
        return self._ask("objects")

    def gap(self, now: int) -> int:
        """``Run.gap``."""
        return int(self._ask("gap", now))

    def stuck(self) -> tuple[str, ...]:
        """``Run.stuck``."""
        return tuple(self._ask("stuck"))


def _recv(conn: Connection) -> Any:
    """A run process's message; its error raised here."""
    try:
        msg = conn.recv()
    except (EOFError, OSError) as e:
        raise RunFailed(f"a run process ended without answering ({type(e).__name__})") from None
    if msg[0] == "error":
        raise RunFailed(msg[1])
    return msg


class Parking:
    """The search's side of the run processes (see the module doc), parking as ``settings`` say."""

    def __init__(self, plan: Plan, reductions: Reductions, settings: ParkedRuns,
                 finish: Callable[[Plan, Run], RunOutcome | None], walk: Walk) -> None:
        settings.validate()
        self.limit, self.spacing_ms = settings.limit, settings.spacing_ms
        # id(frame) -> its frame, the process parked at it, and the run's time there
        self.parked: dict[int, tuple[Frame, Connection, int]] = {}
        self.stats = Stats()
        mine, theirs = socket.socketpair()
        parent = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:  # the root process
            mine.close()
            hooks = tuple(n for n in _HOOKS if callable(getattr(walk, n, None)))
            _serve_root(Connection(theirs.detach()), plan, reductions, finish, parent, hooks)
        theirs.close()
        self.root = Connection(mine.detach())
        self.pgid = self.pid  # the root made a group of its own (it did before it answered)
        _recv(self.root)
        watchdog.watch(self.pgid, [])

    def close(self) -> None:
        """End every run process (closing their sockets ends them; the group is killed besides)."""
        for _frame, conn, _t in self.parked.values():
            conn.close()
        self.parked.clear()
        self.root.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        watchdog.forget(self.pgid)

    def __enter__(self) -> Parking:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def release(self, frame: Frame) -> None:
        """``frame`` was popped: its parked process (if any) ends."""
        got = self.parked.pop(id(frame), None)
        if got is not None:
            got[1].close()

    def _resume(self, walk: Walk, path: tuple[int, ...]) -> Connection:
        """A run process on ``path``: forked from the deepest parked frame on it, else from the root; the top
        frame's parked process itself takes the frame's last option (the frame is done with it)."""
        base: tuple[int, ...] = ()
        conn = self.root
        for frame in reversed(walk.stack):
            got = self.parked.get(id(frame))
            if got is not None and path[:len(frame.prefix)] == frame.prefix:
                base, conn = frame.prefix, got[1]
                if frame is walk.stack[-1] and not frame.todo and len(path) == len(base) + 1:
                    del self.parked[id(frame)]
                    self.stats.resumed += 1
                    conn.send(("go", path[len(base):], False))
                    return conn
                break
        if conn is self.root:
            self.stats.from_root += 1
        else:
            self.stats.resumed += 1
            self.stats.replayed += len(path) - len(base) - 1
        return _fork(conn, ("go", path[len(base):]))

    def _worth(self, walk: Walk, now: int) -> bool:
        """Park here: below the limit, and ``spacing_ms`` or more of the run past the nearest parked frame."""
        if len(self.parked) >= self.limit:
            return False
        for frame in reversed(walk.stack):
            got = self.parked.get(id(frame))
            if got is not None:
                return now - got[2] >= self.spacing_ms
        return now >= self.spacing_ms

    def go(self, walk: Walk, path: tuple[int, ...]) -> RunOutcome | None:
        """Run ``path``, ``walk`` deciding past it (as ``walk._go`` does); the outcome, None when stopped."""
        conn = self._resume(walk, path)
        run = RemoteRun(conn, path)
        try:
            while True:
                kind, *rest = _recv(conn)
                if kind == "end":
                    return rest[0]  # type: ignore[no-any-return]
                if kind == "hook":  # the run calls its driver (``Run``'s callbacks other than decide)
                    name, args, answer = rest
                    got = getattr(walk, name)(*args)
                    if answer:
                        conn.send(("ok", got))
                    continue
                what, options, steps, run.time = rest
                depth = len(walk.stack)
                try:
                    i = walk.decide(run, what, options, steps)  # type: ignore[arg-type]
                except Stop:
                    conn.send(("stop",))  # it unwinds as a stopped run does (calling its driver on the way)
                    continue
                pushed = walk.stack[-1] if len(walk.stack) > depth else None
                if pushed is not None and pushed.todo and self._worth(walk, run.time):
                    child = _fork(conn, ("take", i))
                    self.parked[id(pushed)] = (pushed, conn, run.time)
                    self.stats.parked += 1
                    conn = run.conn = child
                else:
                    conn.send(("take", i, False))
                run.taken.append(i)
        finally:
            if all(conn is not c for _f, c, _t in self.parked.values()):
                conn.close()


def _fork(conn: Connection, request: tuple[Any, ...]) -> Connection:
    """Ask the process at ``conn`` to fork a child serving ``request`` on a new socket; the search's end."""
    mine, theirs = socket.socketpair()
    conn.send((*request, True))
    send_handle(conn, theirs.fileno(), 0)
    theirs.close()
    return Connection(mine.detach())


# ---- the run processes --------------------------------------------------------------------------------


def _child(conn: Connection) -> Connection:
    """In a run process asked to fork: the child's new socket, or None in the parent (which stays)."""
    fd = recv_handle(conn)
    if os.fork() == 0:
        conn.close()
        return Connection(fd)
    os.close(fd)
    return None  # type: ignore[return-value]


def _serve_root(conn: Connection, plan: Plan, reductions: Reductions,
                finish: Callable[[Plan, Run], RunOutcome | None], parent: int,
                hooks: tuple[str, ...]) -> None:
    """The root process: a new group, subreaper of the run processes; forks one for each fresh run."""
    try:
        _child_setup(parent)()  # killed with the search (as the harness's servers are)
        os.setpgid(0, 0)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the search decides when to stop (it ends the group)
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps every run process that exits
        if _libc is not None:
            _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        gc.disable()  # a run process lives one run; a collection would copy every page it touches
        gc.freeze()
        conn.send(("ready", None))
        while True:
            try:
                request = conn.recv()
            except (EOFError, OSError):
                break
            child = _child(conn)
            if child is not None:
                driver = _Remote(child, hooks)
                _serve_run(driver, Run(plan, request[1], driver, reductions), finish)
    finally:
        os._exit(0)


def _serve_run(driver: _Remote, run: Run, finish: Callable[[Plan, Run], RunOutcome | None]) -> None:
    """Run to the end (or a stop), answering the search; then exit (a copy forked on the way answers on its
    own socket: ``driver.conn`` is this process's)."""
    try:
        try:
            out = finish(run.plan, run)
        except BaseException as e:  # noqa: BLE001 - reported to the search, which raises it
            _send(driver.conn, ("error", _describe(e)))
            os._exit(1)
        _send(driver.conn, ("end", out))
    finally:
        os._exit(0)


def _describe(e: BaseException) -> str:
    return "".join(traceback.format_exception(e)).rstrip()


def _send(conn: Connection, msg: Any) -> None:
    try:
        conn.send(msg)
    except OSError:  # the search is gone
        os._exit(1)
    except Exception as e:  # noqa: BLE001 - a message that does not pickle: the search raises it
        conn.send(("error", f"a run process could not send {msg[0]!r}: {_describe(e)}"))
        os._exit(1)


class _Remote:
    """The ``Driver`` of a run in a run process: each decision past its path asks the search, and so does each
    other call the run makes of its driver (``hooks``: the walk's methods of those names, see ``_HOOKS``)."""

    def __init__(self, conn: Connection, hooks: tuple[str, ...]) -> None:
        self.conn = conn
        for name in hooks:
            setattr(self, name, functools.partial(self._hook, name, _HOOKS[name]))

    def _hook(self, name: str, answer: bool, *args: Any) -> Any:
        _send(self.conn, ("hook", name, args, answer))
        if not answer:
            return None
        try:
            return self.conn.recv()[1]
        except (EOFError, OSError):  # the search is gone
            os._exit(0)

    def decide(self, run: Run, kind: str, options: int, steps: list[StepInfo]) -> int:
        """Send the decision; answer the search's questions until it says which option (or to stop)."""
        conn = self.conn
        _send(conn, ("decide", kind, options, steps, run.now()))
        while True:
            try:
                request = conn.recv()
            except (EOFError, OSError):  # the search is gone
                os._exit(0)
            what = request[0]
            if what == "take":
                i, fork = request[1], request[2]
                if not fork:
                    return int(i)
                # stay parked here: the child takes option i; a later "go" forks again (or goes on here)
                while True:
                    child = _child(conn) if request[2] else conn
                    if child is not None:
                        self.conn = child
                        if request[0] == "go":  # resumed: the path from here, then the search decides
                            suffix = tuple(request[1])
                            run.path = (*run.taken, *suffix)
                            i = suffix[0]
                            if getattr(run, "record_from", None) is not None:  # asked when a run starts
                                run.record_from = self.record_start(run.path)  # type: ignore[attr-defined]
                        return int(i)
                    try:
                        request = conn.recv()
                    except (EOFError, OSError):
                        os._exit(0)
            if what == "stop":
                raise Stop()
            try:
                if what == "key":
                    answer: Any = run.key()
                elif what == "events":
                    answer = list(run.events)
                elif what == "objects":
                    answer = dict(run.objects)
                elif what == "gap":
                    answer = run.gap(request[1])
                else:
                    answer = run.stuck()
            except Exception as e:  # noqa: BLE001 - the search raises it
                _send(conn, ("error", _describe(e)))
                os._exit(1)
            _send(conn, ("ok", answer))

"""The one child-process launcher: every worker process of Session Lens starts here.

:data:`WORKERS` is the table of worker kinds and their entry points.  A worker is started as
``python -m app --session-lens-worker KIND ARGS...`` from source, and as
``session-lens --session-lens-worker KIND ARGS...`` from the packaged binary (its entry point
dispatches the flag to :func:`worker_main` before anything else), so the development app, the
CLI and the frozen app run the same workers the same way.  :func:`worker_argv` builds that
command and :func:`spawn_worker` starts it; :func:`run_child` runs a request/answer worker.

A child runs :func:`serve`: it lowers its priority, runs its body and writes pickled messages
to stdout: any number of ``(kind, ...)`` progress messages sent by the body, then
``("done", result)`` or ``("error", text)``.  The parent runs :func:`run_child`, which starts
the child (with this tree on ``PYTHONPATH``), optionally pickles one request to its stdin,
hands every other message to ``on_message`` in the caller's thread, returns the result of
``done`` and kills the child when ``cancelled()`` turns true.  A :class:`ChildSpec` names one such
run (kind, arguments, request, and the in-process fallback when no child can start); :func:`run_spec`
runs it in the caller's thread and ``app.ui.workers.Jobs.submit_child`` as a job of the window.  Reading the pipe blocks in
``read()``, which releases the GIL: the waiting thread costs the GUI nothing.
"""
from __future__ import annotations

import importlib
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..log.jobctl import Cancel, is_cancelled

Send = Callable[[tuple[object, ...]], None]

WORKER_FLAG = "--session-lens-worker"
PING = "--ping"                 # ``… --session-lens-worker KIND --ping``: import KIND's entry, answer, exit
# kind -> "module:function"; the function takes the arguments after the kind and returns an exit code
WORKERS: dict[str, str] = {
    "index": "app.store.indexer:child_main",          # the seq index (and fold checkpoints) of one log
    "scan": "app.store.scan_child:child_main",        # whole-log find and the outline pass
    "titles": "app.store.titles_child:child_main",    # exact titles of a store's sessions
    "fts-shard": "app.store.fulltext:shard_main",     # one shard of a home's first full-text build
    "fts-extract": "app.log.query.extract:worker_main",   # searchable text of session files
    "qt-probe": "app.ui.diagnostics_dialog:qt_probe_main",  # doctor: Qt and its platform plugin, in a child
    "timeline": "app.store.timeline_child:child_main",    # the timeline spans of one log (issue 31)
    "timeline-part": "app.store.timeline_child:part_main",  # … the second half of a big one, beside the first
    "fts-build": "app.store.ftslive:build_main",      # a home's full-text index brought up to date, detached
    "replay": "app.store.replay_child:child_main",     # the state of a session as of a seq (the time scrubber)
}


def worker_argv(kind: str, *args: str) -> list[str]:
    """The command that runs worker ``kind`` with ``args`` (frozen binary or source tree alike)."""
    if kind not in WORKERS:
        raise KeyError(f"no worker kind {kind!r}")
    if getattr(sys, "frozen", False):
        return [sys.executable, WORKER_FLAG, kind, *args]
    return [sys.executable, "-m", "app", WORKER_FLAG, kind, *args]


def worker_main(argv: Sequence[str]) -> int:
    """The child's entry: run the worker named by ``argv[0]`` with the rest of ``argv``."""
    target = WORKERS.get(argv[0]) if argv else None
    if target is None:
        print(f"session-lens: unknown worker kind {argv[0] if argv else ''!r}", file=sys.stderr)
        return 2
    from . import diagnostics
    diagnostics.setup(f"worker-{argv[0]}")      # faulthandler and the rotating log, as in the window
    _Role.kind = argv[0]
    module, func = target.split(":")
    entry = getattr(importlib.import_module(module), func)
    if list(argv[1:]) == [PING]:                # doctor: the entry imports here and the pipe answers
        return serve(lambda send: {"kind": argv[0], "entry": target, "pid": os.getpid(), "ppid": os.getppid()}, 0)
    return int(entry(list(argv[1:])) or 0)


class _Role:
    kind: Optional[str] = None            # the worker kind this process runs (None: not a worker)


# tests: ``SESSION_LENS_WORKER_CRASH_TEST=KIND`` makes worker KIND die of SIGSEGV at its first message,
# in the middle of real work (the fatal-report test)
_CRASH_TEST = "SESSION_LENS_WORKER_CRASH_TEST"


def _crash_test() -> None:
    if _Role.kind is not None and os.environ.get(_CRASH_TEST) == _Role.kind and hasattr(signal, "SIGSEGV"):
        os.kill(os.getpid(), signal.SIGSEGV)


def spawn_worker(kind: str, *args: str, **popen: object) -> subprocess.Popen[bytes]:
    """Start worker ``kind`` (pipes and stderr as the caller asks in ``popen``); raises OSError."""
    return subprocess.Popen(worker_argv(kind, *args), env=child_env(), close_fds=True, **popen)  # type: ignore[call-overload, no-any-return]


class ChildFailed(RuntimeError):
    """A child process reported an error or ended without a result."""


class NoChild(OSError):
    """No child process could be started (the caller runs the work in-process instead)."""


class _Background:
    """The running children doing work nobody waits on (``run_child(background=True)``: the
    window's outline/problems pass), which the window stops while the user scrolls.

    On 2 shared cores such a child takes one core for the whole pass; stopped (SIGSTOP) it takes
    none, and the UI thread, the page worker and the rest of the machine share both.  A child
    started while paused is stopped at once; ``resume`` (SIGCONT) lets them all go on from where
    they were.  A stopped child whose parent dies is not left behind: its process group is
    orphaned then, and the kernel sends it SIGHUP and SIGCONT.  No-op where there is no SIGSTOP."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.procs: set[subprocess.Popen[bytes]] = set()
        self.paused = False

    def _signal(self, proc: subprocess.Popen[bytes], sig: Optional[int]) -> bool:
        if sig is None:
            return False
        try:
            proc.send_signal(sig)          # (a reaped child is skipped: Popen polls first)
            return proc.returncode is None
        except OSError:
            return False

    def add(self, proc: subprocess.Popen[bytes]) -> None:
        with self.lock:
            self.procs.add(proc)
            if self.paused:
                self._signal(proc, getattr(signal, "SIGSTOP", None))

    def discard(self, proc: subprocess.Popen[bytes]) -> None:
        with self.lock:
            self.procs.discard(proc)

    def pause(self) -> int:
        with self.lock:
            self.paused = True
            return sum(self._signal(p, getattr(signal, "SIGSTOP", None)) for p in list(self.procs))

    def resume(self) -> int:
        with self.lock:
            self.paused = False
            return sum(self._signal(p, getattr(signal, "SIGCONT", None)) for p in list(self.procs))


_background = _Background()


def pause_background() -> int:
    """Stop every background child, and every one started until :func:`resume_background`
    (the user is scrolling); returns how many running children were stopped."""
    return _background.pause()


def resume_background() -> int:
    """Let the background children go on; returns how many were signalled."""
    return _background.resume()


def background_paused() -> bool:
    return _background.paused


def background_pids() -> list[int]:
    """Process ids of the running background children (tests, benches)."""
    with _background.lock:
        return [p.pid for p in _background.procs]


def serve(body: Callable[[Send], object], nice: int) -> int:
    """The child's side: run ``body(send)`` and report its result or its error on stdout."""
    out = sys.stdout.buffer
    try:
        os.nice(nice)    # background work: on a busy machine the UI thread gets the CPU first
    except (AttributeError, OSError):
        pass

    def send(msg: tuple[object, ...]) -> None:
        _crash_test()
        data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)   # (whole first: a message that cannot be
        out.write(data)                                                #  pickled leaves no half of it in the pipe)
        out.flush()
    try:
        send(("done", body(send)))
        return 0
    except BrokenPipeError:
        return 1
    except BaseException as e:  # noqa: BLE001 - everything is reported to the parent
        from .diagnostics import log, redacted_traceback
        log.error("worker %s failed\n%s", _Role.kind, redacted_traceback(type(e), e.__traceback__))
        try:
            send(("error", f"{type(e).__name__}: {e}"))
        except Exception:
            pass
        return 1


JOB_ENV = "SESSION_LENS_CHILD_JOB"    # the window job a child runs for (its name: memory benches tell children apart)


def child_env(job: object = None) -> dict[str, str]:
    """The environment of a child: ours, with this source tree first on ``PYTHONPATH`` (and, when
    ``job`` is a window job, its name in ``SESSION_LENS_CHILD_JOB``)."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    name = getattr(job, "name", None)
    if isinstance(name, str) and name:
        env[JOB_ENV] = name
    return env


def _kill_when(proc: subprocess.Popen[bytes], cancelled: Callable[[], bool], over: threading.Event,
               killed: list[bool]) -> None:
    """Kill ``proc`` as soon as ``cancelled()`` turns true (polled every 20 ms until ``over`` is set):
    a child busy between two messages (a phase that reports nothing) is stopped at once."""
    while not over.wait(0.02):
        if cancelled():
            killed[0] = True
            try:
                proc.kill()
            except OSError:
                pass
            return


def _kill(proc: subprocess.Popen[bytes], killed: list[bool]) -> None:
    """Kill ``proc`` now (a job's cancel hook: from the cancelling thread; a reaped child is skipped)."""
    killed[0] = True
    try:
        proc.kill()
    except OSError:
        pass


def run_child(argv: Sequence[str], request: object, on_message: Callable[[tuple[object, ...]], None],
              cancelled: Cancel, what: str,
              failed: type[ChildFailed] = ChildFailed, background: bool = False) -> object:
    """The result a child (command ``argv``) reports with ``done``.

    ``request`` (when not None) is pickled to the child's stdin.  Raises :class:`NoChild` when
    the child cannot be started, ``failed(text)`` when it reports an error or ends without a
    result (``what`` names it in the message) and ``InterruptedError`` when ``cancelled`` (any
    form of :data:`app.log.jobctl.Cancel`) says stop (checked before every message); the child never
    outlives the call.  A token with ``on_cancel`` (a window job) kills the child from its cancel at
    once; any other form is polled every 20 ms by a watcher thread.
    ``background``: work nobody waits on, stopped while :func:`pause_background` holds."""
    err = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL if request is None else subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err, env=child_env(cancelled), close_fds=True)
    except OSError as e:
        err.close()
        raise NoChild(str(e)) from e
    stdout = proc.stdout
    assert stdout is not None
    if background:
        _background.add(proc)
    watching = threading.Event()
    killed = [False]
    hook = getattr(cancelled, "on_cancel", None)

    def stop() -> bool:
        return is_cancelled(cancelled)
    if hook is not None:                    # Cancel kills the child at once, not at its next message
        hook(lambda: _kill(proc, killed))
    elif cancelled is not None:
        threading.Thread(target=_kill_when, args=(proc, stop, watching, killed), daemon=True).start()
    try:
        if request is not None:
            assert proc.stdin is not None
            pickle.dump(request, proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            proc.stdin.close()
        while True:
            if stop():
                raise InterruptedError(f"{what} cancelled")
            try:
                msg = pickle.load(stdout)         # blocks in read(): the GIL is released
            except Exception as e:
                if killed[0]:
                    raise InterruptedError(f"{what} cancelled") from None
                if not isinstance(e, EOFError):
                    raise
                code = proc.wait(5)
                from .diagnostics import log
                log.warning("%s process %d ended without a result (exit code %s)", what, proc.pid, code)
                err.seek(0)
                tail = err.read()[-600:].decode("utf-8", "replace").strip()
                raise failed(f"{what} process ended without a result (exit code {code})"
                             + (f": {tail.splitlines()[-1]}" if tail else ""))
            if msg[0] == "done":
                try:
                    proc.wait(2)
                except subprocess.TimeoutExpired:
                    pass
                return msg[1]
            if msg[0] == "error":
                raise failed(msg[1])
            on_message(msg)
    finally:
        watching.set()
        _background.discard(proc)
        if killed[0]:
            from .diagnostics import forget_killed
            forget_killed(proc.pid)          # killed on Cancel: its header-only fatal file goes
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
            from .diagnostics import forget_killed
            forget_killed(proc.pid)          # killed on purpose: its header-only fatal file goes
        stdout.close()
        proc.wait(5)
        err.close()


def _never() -> bool:
    return False


@dataclass(frozen=True)
class ChildSpec:
    """One run of a worker of :data:`WORKERS`: what :func:`run_spec` (the caller's thread) and the
    window's ``Jobs.submit_child`` (a job) run."""
    kind: str
    args: tuple[str, ...] = ()
    request: object = None                 # pickled to the child's stdin (None: no stdin)
    what: str = ""                         # names the work in messages (default: the kind)
    background: bool = False               # work nobody waits on (see pause_background)
    failed: type[ChildFailed] = ChildFailed
    # the same work in the calling thread, ``fallback(send, cancelled)``, when no child can start
    fallback: Optional[Callable[[Send, Callable[[], bool]], object]] = None
    in_process: bool = False               # run ``fallback`` right away (a frozen build, a test switch)


def run_spec(spec: ChildSpec, on_message: Callable[[tuple[object, ...]], None], cancelled: Cancel) -> object:
    """The result of ``spec`` (see :func:`run_child`; its ``fallback`` runs in-process when asked to or
    when no child can be started; without one, :class:`NoChild` is raised)."""
    check = _never if cancelled is None else (lambda: is_cancelled(cancelled))
    if spec.in_process and spec.fallback is not None:
        return spec.fallback(on_message, check)
    try:
        return run_child(worker_argv(spec.kind, *spec.args), spec.request, on_message, cancelled,
                         spec.what or spec.kind, spec.failed, spec.background)
    except NoChild:
        if spec.fallback is None:
            raise
        return spec.fallback(on_message, check)

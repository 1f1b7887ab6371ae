"""Replay for the window (issue 30): the state as of a seq, answered by a child process.

:class:`ReplayContext` holds what :func:`app.log.fold.asof.as_of` needs for one session: a reader,
its saved fold checkpoints and surface index (:mod:`app.store.indexcache`, built by the index child
when missing) and the side index.  :class:`ReplayClient` runs one in a child process (worker kind
``replay``, :data:`app.store.childproc.WORKERS`) that stays up while the session is scrubbed: the
window's worker thread writes a request and blocks in ``read()`` (the GIL released), so neither the
answers nor the side index's background pass (which the child runs between requests, a few
checkpoints at a time) take the window's interpreter.  Messages both ways are length-prefixed pickles.
Where no child can be started, :func:`open_context` gives the same context in-process.
"""
from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
from typing import Any, BinaryIO, Optional
from collections.abc import Callable

from ..log.jobctl import Cancel, Cancelled, is_cancelled

FILL_CHUNK = 4          # checkpoints of the side index filled per step of the background pass


class ReplayContext:
    """One session's replay state (in the process that answers)."""

    def __init__(self, reader: Any, cps: Any, surface: Any) -> None:
        from ..log.fold.asof import SideIndex, last_seq
        self.reader, self.cps, self.surface = reader, cps, surface
        self.side = SideIndex(reader, cps) if cps is not None else None
        self.lock = threading.Lock()
        self.next_fill = 0
        turns: list[int] = []
        steps: list[int] = []
        idx = reader.index
        if idx is not None:
            for s, t in idx.marks():
                if t == "turn/start":
                    turns.append(s)
                if t in ("turn/start", "turn/end", "assistant/message"):
                    steps.append(s)
        self.info: dict[str, Any] = {"last": last_seq(reader), "turns": sorted(set(turns)),
                                     "steps": sorted(set(steps))}

    @property
    def filled(self) -> bool:
        return self.cps is None or self.next_fill >= len(self.cps.points)

    def fill_some(self, check: Optional[Callable[[], None]] = None) -> bool:
        """A few more checkpoints of the side index (True: all done).  ``check()`` may raise to stop
        early (a request came): the snapshots made so far are kept, the next call goes on from them."""
        if self.filled or self.side is None:
            return True
        n = len(self.cps.points)
        target = min(n - 1, self.next_fill + FILL_CHUNK - 1)
        with self.lock:
            self.side.at(target, check)
        self.next_fill = target + 1
        return self.filled

    def answer(self, seq: int, diff_from: Optional[int], check: Optional[Callable[[], None]] = None) -> dict[str, Any]:
        """The state as of ``seq`` (:func:`as_of` without the request: the Request tab computes it),
        with ``diff`` (:func:`~app.log.query.asofdiff.diff_states`) from ``diff_from``."""
        from ..log.fold.asof import as_of
        from ..log.query.asofdiff import diff_states
        t0 = time.perf_counter()
        with self.lock:
            st = as_of(self.reader, seq, self.cps, self.side, check=check, request=False)
            if diff_from is not None and diff_from != seq:
                other = as_of(self.reader, diff_from, self.cps, self.side, check=check, request=False)
                st["diff"] = diff_states(other, st, self.surface) if diff_from < seq else \
                    diff_states(st, other, self.surface)
        st["elapsed"] = time.perf_counter() - t0
        st["filled"] = self.filled
        return st

    def close(self) -> None:
        with self.lock:
            try:
                self.reader.close()
            except Exception:
                pass


def open_context(path: str, session_id: Optional[str], cancelled: Cancel = None) -> ReplayContext:
    """A session's replay context: the saved caches, built by the index child when missing."""
    from .faces import open_reader
    from .indexcache import cached_checkpoints, cached_index
    from .surface_cache import cached_surface
    from .indexer import CACHE_SCAN_IN_PROCESS, build_index_isolated
    r = open_reader(path, session_id)
    if r.fatal:
        raise ValueError(f"{path}: {r.fatal}")
    cps = None
    if r.header is not None and r.header.version in (0, None, 2, 3, 4) and r.source.kind in ("jsonl", "zstd") \
            and not r.envelope_free:
        idx, _ = cached_index(r, max_scan=CACHE_SCAN_IN_PROCESS)
        cps, _ = cached_checkpoints(r, build=False) if idx is not None else (None, "miss")
        if idx is None or cps is None:
            build_index_isolated(path, session_id, cancelled=cancelled, what="checkpoints")
            r.close()
            r = open_reader(path, session_id)
            cached_index(r)
            cps, _ = cached_checkpoints(r)
        si, _ = cached_surface(r)
    else:
        from ..log.fold.surface import index_for
        r.build_index()
        si = index_for(r)
    return ReplayContext(r, cps, si)


# --------------------------------------------------------------------------- framing

def send(out: BinaryIO, msg: object) -> None:
    data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(struct.pack("<I", len(data)) + data)
    out.flush()


def _read_exact(fd: int, n: int) -> bytes:
    parts, got = [], 0
    while got < n:
        b = os.read(fd, n - got)             # (blocks releasing the GIL)
        if not b:
            raise EOFError("replay child closed its pipe")
        parts.append(b)
        got += len(b)
    return b"".join(parts)


def recv(fd: int) -> Any:
    (n,) = struct.unpack("<I", _read_exact(fd, 4))
    return pickle.loads(_read_exact(fd, n))


# --------------------------------------------------------------------------- the child

class _Pending(Exception):
    """Something came in on the pipe (a request, a cancel) while the child was busy."""


class Superseded(ValueError):
    """The answer asked for was cancelled by the parent (a newer position is wanted)."""


def child_main(argv: list[str]) -> int:
    """``replay PATH [SESSION]``: ("ready", info) once loaded, then one answer per request:
    ("asof", seq, diff_from) -> ("done", state), or ("cancelled",) when a ("cancel",) comes before it
    is done; ("status",) -> ("done", filled); ("quit",) ends.  Between requests the side index is
    filled, a few checkpoints at a time, giving way as soon as anything comes in."""
    out = sys.stdout.buffer
    fd = sys.stdin.fileno()
    try:
        ctx = open_context(argv[0], argv[1] if len(argv) > 1 and argv[1] else None)
    except Exception as e:          # noqa: BLE001 - reported to the parent
        send(out, ("error", f"{type(e).__name__}: {e}"))
        return 1
    send(out, ("ready", ctx.info))

    def interrupt() -> None:                 # a request waits: the background pass gives way at once
        if select.select([fd], [], [], 0)[0]:
            raise _Pending()
    while True:
        wait = None if ctx.filled else 0.0
        ready, _w, _x = select.select([fd], [], [], wait)
        if not ready:
            try:
                ctx.fill_some(interrupt)
            except _Pending:
                pass
            continue
        try:
            req = recv(fd)
        except EOFError:
            return 0
        if req[0] == "quit":
            return 0
        if req[0] == "cancel":                # (the answer it meant is already sent)
            continue
        try:
            if req[0] == "asof":
                try:
                    send(out, ("done", ctx.answer(int(req[1]), req[2], interrupt)))
                except _Pending:
                    send(out, ("cancelled",))
            elif req[0] == "status":
                send(out, ("done", ctx.filled))
            else:
                send(out, ("error", f"unknown request {req[0]!r}"))
        except BrokenPipeError:
            return 1
        except Exception as e:      # noqa: BLE001 - one bad request never ends the child
            send(out, ("error", f"{type(e).__name__}: {e}"))


class ReplayClient:
    """The parent's side of a ``replay`` child (one request at a time; see the module doc)."""

    def __init__(self, path: str, session_id: Optional[str], cancel: Cancel = None) -> None:
        """Start the child and wait until it has opened the session (seconds for a big log seen first).
        ``cancel``: the opening job's token; its cancel (``on_cancel``) kills a child still opening it, and
        this raises :class:`app.log.jobctl.Cancelled` at once (an answered client is no longer its job's)."""
        from .childproc import NoChild, spawn_worker
        try:
            self.proc = spawn_worker("replay", path, session_id or "", stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError as e:
            raise NoChild(str(e)) from e
        self.lock = threading.Lock()             # one request and its answer at a time
        self._wlock = threading.Lock()           # writes to the pipe (a cancel comes from another thread)
        self.filled = False
        self._opening = True
        hook = getattr(cancel, "on_cancel", None)
        if hook is not None:
            hook(self._abandon)
        try:
            msg = self._recv()
        except ValueError:
            if is_cancelled(cancel):
                self.close()
                raise Cancelled("replay") from None
            raise
        self._opening = False
        if msg[0] != "ready":
            self.close()
            raise ValueError(str(msg[1]))
        self.info: dict[str, Any] = msg[1]

    def _abandon(self) -> None:
        """The opening job was cancelled: a child still opening the session is killed (its pipe ends)."""
        if self._opening and self.proc.poll() is None:
            self.proc.kill()

    def _recv(self) -> Any:
        assert self.proc.stdout is not None
        try:
            return recv(self.proc.stdout.fileno())
        except (EOFError, OSError, ValueError, struct.error) as e:
            raise ValueError(f"the replay process ended ({e})") from None

    def _write(self, req: tuple[object, ...]) -> None:
        assert self.proc.stdin is not None
        with self._wlock:
            send(self.proc.stdin, req)           # type: ignore[arg-type]

    def ask(self, *req: object) -> Any:
        with self.lock:
            try:
                self._write(req)
            except (OSError, ValueError) as e:
                raise ValueError(f"the replay process ended ({e})") from None
            msg = self._recv()
        if msg[0] == "cancelled":
            raise Superseded(f"seq {req[1] if len(req) > 1 else '?'}: a newer position was asked for")
        if msg[0] == "error":
            raise ValueError(msg[1])
        return msg[1]

    def cancel(self) -> None:
        """Stop the answer being computed (from any thread; its ``ask`` raises :class:`Superseded`)."""
        try:
            self._write(("cancel",))
        except (OSError, ValueError):
            pass

    def answer(self, seq: int, diff_from: Optional[int]) -> dict[str, Any]:
        st: dict[str, Any] = self.ask("asof", seq, diff_from)
        self.filled = bool(st.get("filled"))
        return st

    def close(self) -> None:
        """End the child now, never waiting on it (a request in flight ends with an error in its
        thread; the child is reaped by a thread of its own)."""
        p = self.proc
        if p.poll() is None:
            p.kill()

        def reap() -> None:
            p.wait()
            for f in (p.stdin, p.stdout):
                if f is not None:
                    try:
                        f.close()
                    except OSError:
                        pass
        threading.Thread(target=reap, name="replay child reaper", daemon=True).start()

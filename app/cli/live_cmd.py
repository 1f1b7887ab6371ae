"""``session-lens follow`` and ``session-lens simulate``: live sessions from the command line.

``follow PATH [--json] [--idle S] [--from-start] [--session ID]``
    Default: print the tail page (spec §8 paging), then every event as it is written, stitched
    exactly like the client does (:mod:`app.log.fold.stitch`): no duplicate, no gap.  With
    ``--from-start`` every stored event from seq 0, then live ones.  ``--json``: one line per
    event, the event envelope (``{"type","seq","time","data",…}``).  A torn last line or frame is
    held until complete.  With ``--idle S`` it exits after S seconds without a new row (waiting
    for a not-yet-published file counts); records a cold reader recovers from a torn zstd
    frame are printed then.  The end is reported on stderr: ``complete`` (last turn closed),
    ``open`` (open turn or torn tail: the writer is busy, idle or dead).

``simulate OUT [--events N] [--rate R] [--crash-at SEQ] [--zstd] [--seed S] [--batch-delay-ms MS]``
    Write a realistic session (:class:`app.tools.synth.SessionSynth`: streams, retries, tool
    calls) live through :class:`app.store.writer.SessionWriter` at R events/s, in bursts of
    1..``--max-burst`` events, flushing at some turn ends.  Whole turns until at least N
    events.  ``--crash-at SEQ``: flush everything before SEQ, then die by SIGKILL (an open
    tail, mid-turn when SEQ is); ``--torn`` additionally leaves half of the next batch's
    bytes (a torn line / frame) before dying.
"""
from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from typing import Any

from ..textutil import json_text
from .errors import WriteError
from .main import COMMANDS, CliError


def _line(ev) -> str:
    return json_text(ev.envelope(), ensure_ascii=False, separators=(",", ":"))


def _text(ev) -> str:
    d = ev.data if isinstance(ev.data, dict) else {}
    extra = ""
    if ev.type == "assistant/chunk" and isinstance(d.get("chunk"), dict):
        c = d["chunk"]
        extra = c.get("type", "")
        t = c.get("text") or c.get("argumentsDelta")
        if isinstance(t, str):
            extra += " " + json.dumps(t[:60], ensure_ascii=False)
    elif ev.type in ("tool/call",):
        extra = str(d.get("name", ""))
    elif ev.type in ("turn/start", "turn/end", "step/start", "step/end"):
        extra = f"turn {d.get('turn')}" + (f" step {d.get('step')}" if "step" in d else "")
    return f"{ev.seq:>8}  {ev.type:<22} {extra}".rstrip()


# --------------------------------------------------------------------------- follow

def _cfg_follow(p):
    p.add_argument("path", help="session file or folder (may not exist yet), or SQLite store with --session")
    p.add_argument("--session", help="session id inside a SQLite store")
    p.add_argument("--idle", type=float, default=None, help="exit after this many seconds without a new row")
    p.add_argument("--from-start", action="store_true", help="print every stored event, then follow")
    p.add_argument("--max-messages", type=int, default=50, help="tail page size in messages (default 50)")
    p.add_argument("--poll-ms", type=float, default=100.0, help="stat poll interval (default 100 ms)")
    p.add_argument("--no-inotify", action="store_true", help="poll only")


def _run_follow(args):
    from ..store.watch import IDLE_AFTER_S, Follower
    f = Follower(args.path, args.session, from_start=args.from_start, poll_interval=args.poll_ms / 1000.0,
                 use_inotify=not args.no_inotify,
                 idle_after=IDLE_AFTER_S if args.idle is None else min(IDLE_AFTER_S, args.idle))
    run = _Follow(args, f)
    start = time.monotonic()
    try:
        if not run.opened(start):
            return 0
        if f.sqlite and args.session is None:
            args.session = f.session_id
        if not args.from_start:
            run.begin_stitched()
        run.follow(start)
        return 0
    finally:
        f.close()


class _Follow:
    """One ``follow`` run: prints what its follower ``f`` reads (stitched onto the tail page unless
    ``--from-start``: :mod:`app.log.fold.stitch`), until ``--idle`` or an interrupt."""

    def __init__(self, args, f):
        from .termtext import json_safe, term_safe
        self.args, self.f = args, f
        self.out = sys.stdout
        self.fmt = (lambda ev: json_safe(_line(ev))) if args.json else (lambda ev: term_safe(_text(ev)))
        self.printed = -1               # the last seq printed
        self.reader: Any = None         # (set by begin_stitched: a LogReader, a Stitcher)
        self.stitcher: Any = None

    def emit(self, events):
        for ev in events:
            self.out.write(self.fmt(ev) + "\n")
            self.printed = ev.seq
        if events:
            self.out.flush()

    def opened(self, start):
        """Wait for the log to open: False when ``--idle`` passed first (reported: ``waiting``)."""
        args, f = self.args, self.f
        while not f.open():
            if args.idle is not None and time.monotonic() - start >= args.idle:
                _report(args, f, "waiting")
                return False
            f.wait(0.25)
        return True

    def begin_stitched(self):
        """The tail page, printed; the follower's rows are stitched onto it from now on."""
        from ..log.fold.stitch import Stitcher
        from ..store.faces import open_reader
        f = self.f
        self.reader = reader = open_reader(f.path, self.args.session)
        if reader.fatal:
            raise CliError(f"{self.args.path}: {reader.fatal}")
        self.stitcher = stitcher = Stitcher()
        assert f.subscribed_last is not None          # set when the follower opened the log
        stitcher.subscribed(f.subscribed_last)
        stitcher.begin_load()
        self.load()

    def load(self):
        """The tail page (again: the stitcher asked for a refetch), its new rows printed."""
        reader, stitcher = self.reader, self.stitcher
        while True:
            reader.source.refresh()
            page = reader.tail_page(self.args.max_messages)
            st = stitcher.install(page.events)
            if st.reinstall is not None:
                fresh = [e for e in st.reinstall if e.seq > self.printed]
                if self.printed >= 0 and fresh and fresh[0].seq != self.printed + 1:
                    print(f"session-lens follow: gap before seq {fresh[0].seq} (log rewritten?)",
                          file=sys.stderr)
                self.emit(fresh)
            self.emit(st.appended)
            if not st.refetch:
                return

    def follow(self, last_row):
        """Print the rows as they come until ``--idle`` seconds pass without one; then the held tail."""
        args, f, stitcher = self.args, self.f, self.stitcher
        seen_resets = 0                 # the follower's resets the stitcher has been told of
        while True:
            evs = f.poll()
            if f.resets and stitcher is not None and f.resets != seen_resets:
                seen_resets = f.resets
                stitcher.reset()
            if evs:
                last_row = time.monotonic()
                if stitcher is None:
                    self.emit(evs)
                else:
                    st = stitcher.offer(evs)
                    self.emit(st.appended)
                    if st.refetch:
                        self.load()
                continue
            if args.idle is not None and time.monotonic() - last_row >= args.idle:
                break
            left = 0.5 if args.idle is None else max(0.001, args.idle - (time.monotonic() - last_row))
            f.wait(min(0.5, left))
        tail = f.finish()
        if tail:
            self.emit(tail if stitcher is None else stitcher.offer(tail).appended)
        _report(args, f, "end")


def _report(args, f, why):
    info = {"follow": why, "state": f.state(), "lastSeq": f.last_seq, "openTurn": f.open_turn,
            "heldBytes": f.held, "badRows": len(f.bad), "recovered": f.recovered, "resets": f.resets}
    if args.json:
        print(json.dumps(info), file=sys.stderr)
    else:
        tail = "open tail (turn open or torn): the writer is busy, idle or dead" if f.open_tail else \
            "last turn closed"
        print(f"session-lens follow: {why} at seq {f.last_seq}; {tail}", file=sys.stderr)


COMMANDS["follow"] = ("print a session's events as they are written", _cfg_follow, _run_follow)


# --------------------------------------------------------------------------- simulate

def _cfg_simulate(p):
    p.add_argument("out", help="session file to create (.jsonl or .jsonl.zstd), or a folder for session.jsonl[.zstd]")
    p.add_argument("--events", type=int, default=2000, help="at least this many events, whole turns (default 2000)")
    p.add_argument("--rate", type=float, default=200.0, help="events per second (0: as fast as possible)")
    p.add_argument("--crash-at", type=int, default=None, help="die (SIGKILL) before writing this seq")
    p.add_argument("--torn", action="store_true", help="with --crash-at: leave half a batch (torn tail)")
    p.add_argument("--zstd", action="store_true", help="zstd frames (session.jsonl.zstd)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch-delay-ms", type=int, default=200, help="write-behind window (default 200, as dsh)")
    p.add_argument("--max-burst", type=int, default=8, help="events per append call: random 1..N (default 8)")
    p.add_argument("--no-pack", action="store_true", help="do not pack delta runs")
    p.add_argument("--lock", action="store_true", help="hold session.lock (flock) beside the log while writing, "
                                                      "as a v1+ dsh writer does")


def _sim_events(synth, n: int, crash_at):
    evs: list = []
    for turn in synth.turns():
        evs.extend(turn)
        if len(evs) >= n and (crash_at is None or len(evs) > crash_at):
            break
    return evs


def _run_simulate(args):
    from ..log.format.codec import encode_row, pack_events
    from ..store.writer import SessionWriter
    from ..tools.synth import SessionSynth

    out = os.path.abspath(args.out)
    if os.path.isdir(out) or out.endswith(os.sep):
        out = os.path.join(out, "session.jsonl.zstd" if args.zstd else "session.jsonl")
    fmt = "zstd" if args.zstd or out.endswith((".zstd", ".zst")) else "jsonl"
    if os.path.exists(out):
        raise WriteError(f"{out} exists; simulate never overwrites")
    lock_fd = None
    if getattr(args, "lock", False):
        import fcntl
        os.makedirs(os.path.dirname(out), exist_ok=True)
        lock_fd = os.open(os.path.join(os.path.dirname(out), "session.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(lock_fd, fcntl.LOCK_EX)       # held until this process ends (or is killed)
    synth = SessionSynth(args.seed)
    events = _sim_events(synth, max(1, args.events), args.crash_at)
    rng = random.Random(args.seed * 7919 + 1)
    w = SessionWriter(out, synth.header(), fmt=fmt, batch_delay_ms=args.batch_delay_ms, pack=not args.no_pack)
    t0 = time.monotonic()
    rate = args.rate
    i = 0
    flushes = 0
    crash = args.crash_at
    while i < len(events):
        if crash is not None and i >= crash:
            break
        k = rng.randint(1, max(1, args.max_burst))
        burst = events[i:i + k]
        if crash is not None:
            burst = [e for e in burst if e["seq"] < crash]
        if rate > 0:
            due = t0 + i / rate
            d = due - time.monotonic()
            if d > 0:
                time.sleep(d)
        w.append(burst)
        i += len(burst)
        if any(e["type"] == "turn/end" for e in burst) and rng.random() < 0.5:
            w.flush()
            flushes += 1
    if crash is not None and crash < len(events):
        w.flush()                                  # what was written so far is durable
        if args.torn:
            nxt = events[crash:crash + max(2, args.max_burst)]
            rows = pack_events(nxt) if not args.no_pack else nxt
            blob = b"".join(encode_row(r) + b"\n" for r in rows)
            if fmt == "zstd":
                # the whole frame but its 4 checksum bytes: torn, yet its records are recoverable
                from ..log.source.zstdframes import encode_frame
                part = encode_frame(blob)[:-4]
            else:
                part = blob[:max(1, len(blob) // 2)]
            fd = os.open(out, os.O_WRONLY | os.O_APPEND)
            os.write(fd, part)
            os.fsync(fd)
            os.close(fd)
        sys.stdout.flush()
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)
        os._exit(137)                              # not reached
    w.close()
    info = {"path": out, "format": fmt, "events": len(events), "lastSeq": len(events) - 1,
            "batches": w.batches_written, "flushes": flushes, "seconds": round(time.monotonic() - t0, 3)}
    if args.json:
        print(json.dumps(info))
    else:
        print(f"wrote {info['events']} events in {info['batches']} batches to {out} ({info['seconds']} s)")
    return 0


COMMANDS["simulate"] = ("write a synthetic session live (tests, demos, benchmarks)", _cfg_simulate,
                        _run_simulate)

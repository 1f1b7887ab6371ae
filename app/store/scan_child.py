"""Whole-log scans of the window (search, outline) in a separate process.

Like the seq index (:mod:`app.store.indexer`): a scan of a 1 GB log is CPU-bound Python and
long C calls (``bytes.find``, regex, msgspec) that hold the GIL; run in a thread of the GUI
process they stall its UI thread for 50-170 ms at a time.  In a child process the scan has
a core of its own; the GUI's worker thread only waits on a pipe (which releases the GIL).

The child writes pickled messages to stdout: ``("progress", done, total)``, ``("hits",
[Hit, ...])`` (search, in batches), ``("surface", index or None)`` (the outline pass: :func:`surface_message`),
``("turn-blocks", data, ends)`` (:func:`send_blocks_apart`), then ``("done", result)`` (FindStats or Outline) or ``("error", text)``.  :func:`run_isolated` reads them, calls back in the caller's thread,
and kills the child when ``cancelled()`` turns true.  It falls back to running the scan in
the calling thread when no child can be started, in a frozen build (its entry point runs
only the index child), or with ``SESSION_LENS_SCAN_INPROC=1``.  The store is only read.
"""
from __future__ import annotations

import os
import pickle
import sys
import time
from collections.abc import Callable
from typing import Any, Optional

from ..log.jobctl import JOB_INTERVAL, Throttle
from .childproc import ChildFailed, ChildSpec, Send, run_spec, serve

HITS_INTERVAL = 0.05
CHILD_NICE = 5
OUTLINE_NICE = 15   # the outline pass (a child of its own): lower still
BLOCKS_PER_MESSAGE = 256   # turn blocks a message (~1 MB: send_blocks_apart)
TRIM_EVERY = 32 << 20   # the outline pass trims its heap after each 32 MB of the log read (heap_trimmer)


class ScanFailed(ChildFailed):
    """The scan process reported an error or died."""


def heap_trimmer() -> Optional[Callable[[], bool]]:
    """glibc's ``malloc_trim(0)`` (None: not glibc).  The background pass calls it with the progress message after
    each :data:`TRIM_EVERY` bytes read (issue 36; with every message, 25 a second, the pages given back and taken
    again cost ~9 % CPU): the pass's rows are short-lived objects among a few long-lived ones,
    so the freed memory stays scattered in the heap; on a 1 GB v0 log 12.5 of its 18.8 MB were free at the end,
    resident, and the child's anonymous memory grew with the log (trimmed: 35.5 -> 24.4 MB)."""
    from ..log.heap import give_back, glibc
    return give_back if glibc() is not None else None


def surface_message(reader: Any, sindex: Any) -> Any:
    """What the pass sends the window of the surface index it built (for its row statuses): None when the index is
    saved in its cache file (the window's surface job reads it from there, its columns a map of the file: issue 36,
    neither process pickles ~5 MB of columns and records a 4 GB log's), else the index itself."""
    from app.store.surface_cache import surface_on_disk
    return None if surface_on_disk(reader) else sindex


def send_blocks_apart(turns: Any, send: Callable[[Any], None]) -> None:
    """The packed turns' blocks sent ahead of the outline, ``BLOCKS_PER_MESSAGE`` at a time, joined: ``("turn-blocks",
    data, ends)`` (:meth:`~app.log.blockfile.BlockFile.add_joined`), and ``turns.blocks`` set to None (issue 36:
    the outline sent whole was ~9 MB pickled at once at 4.3 GB, the child's peak; the window appends the blocks to a
    file of its own as they come and puts them back: :func:`take_blocks`)."""
    from app.log.blockfile import BlockFile
    blocks = turns.blocks if isinstance(turns.blocks, BlockFile) else BlockFile(turns.blocks)
    for k in range(0, len(blocks), BLOCKS_PER_MESSAGE):
        send(("turn-blocks", *blocks.joined(k, k + BLOCKS_PER_MESSAGE)))
    turns.blocks = None


def take_blocks(turns: Any, blocks: Any) -> None:
    """Give ``turns`` (sent by :func:`send_blocks_apart`) the ``blocks`` that came ahead of them."""
    from app.log.query.outline_packed import TURN_BLOCK
    if turns.blocks is None:
        if len(blocks) != -(-len(turns) // TURN_BLOCK):
            raise ScanFailed(f"the outline's turns came in {len(blocks)} blocks, not {-(-len(turns) // TURN_BLOCK)}")
        turns.blocks = blocks


def scan(task: str, path: str, session_id: Optional[str], args: dict[str, Any], send: Callable[[Any], None],
         cancelled: Optional[Callable[[], bool]] = None) -> Any:
    """Run ``task`` ("find": args {"opts": FindOptions, "limit": N}; "outline": args {"blocks_apart": True}: the turns'
    blocks sent ahead, :func:`send_blocks_apart`) over the
    session, reporting through ``send(message)``; returns the result."""
    from app.store.faces import open_reader
    r = open_reader(path, session_id)
    trim = heap_trimmer() if task == "outline" else None
    trimmed = [0]

    def report(done: int, total: int) -> None:
        if trim is not None and done - trimmed[0] >= TRIM_EVERY:
            trimmed[0] = done
            trim()
        send(("progress", done, total))
    progress = Throttle(JOB_INTERVAL).wrap(report)
    try:
        if task == "outline":           # the work done ahead: checkpoints, surface index and outline in one read,
            from app.store.ahead_cache import cached_ahead     # saved beside the index (a reopen has them at once)
            from app.log.query.outline_packed import packed    # (turns packed: the window never holds them unpacked)
            ol = packed(cached_ahead(r, progress, cancelled, lambda sx: send(("surface", surface_message(r, sx))))[0])
            ol.turns.narrow()   # type: ignore[attr-defined]  # (sent: 32-bit columns)
            if args.get("blocks_apart"):
                send_blocks_apart(ol.turns, send)
            return ol
        from app.log.query.find import FindStats, find
        st = FindStats()
        batch: list[Any] = []
        t = time.monotonic()
        for h in find(r, args["opts"], cancel=cancelled, stats=st, limit=args.get("limit"), progress=progress):
            batch.append(h)
            now = time.monotonic()
            if st.hits == 1 or now - t >= HITS_INTERVAL or len(batch) >= 2000:
                send(("hits", batch))
                batch, t = [], now
        if batch:
            send(("hits", batch))
        return st
    finally:
        r.close()


def child_main(_argv: list[str]) -> int:
    """The child: reads (task, path, session_id, args) pickled on stdin."""
    def body(send: Send) -> Any:
        task, path, sid, args = pickle.load(sys.stdin.buffer)
        if task == "outline":           # background work nobody waits on: after the UI and a search
            try:
                os.nice(OUTLINE_NICE - CHILD_NICE)
            except (AttributeError, OSError):
                pass
        return scan(task, path, sid, args, send)
    return serve(body, CHILD_NICE)


def spec(task: str, path: str, session_id: Optional[str], args: dict[str, Any]) -> ChildSpec:
    """``task`` over the session as a child run (:func:`run_isolated`, or ``Jobs.submit_child`` in the
    window): in-process with ``SESSION_LENS_SCAN_INPROC=1`` or when no child can start."""
    def fallback(send: Send, cancelled: Callable[[], bool]) -> Any:
        return scan(task, path, session_id, args, send, cancelled)
    return ChildSpec("scan", request=(task, path, session_id, args), what=task, background=task == "outline",
                     failed=ScanFailed, fallback=fallback, in_process=os.environ.get("SESSION_LENS_SCAN_INPROC") == "1")


def run_isolated(task: str, path: str, session_id: Optional[str], args: dict[str, Any],
                 on_message: Callable[[Any], None], cancelled: Callable[[], bool]) -> Any:
    """The result of ``task`` scanned in a child process; ``on_message(msg)`` gets every
    progress/hits message in the caller's thread.  Raises InterruptedError when cancelled."""
    return run_spec(spec(task, path, session_id, args), on_message, cancelled)

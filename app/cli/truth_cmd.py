"""Which truth a command shows: surface status per row, writer state and the live face, both tails.

The ``page``, ``inspect`` and ``list`` commands of :mod:`app.cli.main` call these helpers
(one line each, so that their own code stays theirs); ``tails`` is registered here.
"""
from __future__ import annotations

from typing import Any, Optional

from .main import COMMANDS, cfg_session_path, session_reader, emit


# --------------------------------------------------------------------------- writer state

def cfg_writer(p) -> None:
    # (the defaults are the window's own waits, app.store.watch.IDLE_AFTER_S / CRASH_AFTER_S: not
    # imported here, as building the parser must stay light)
    p.add_argument("--live-window", type=float, help="without a writer lock: seen growing within this many "
                                                     "seconds = live (default: the window's, 3)")
    p.add_argument("--crash-after", type=float, help="without a writer lock: an open tail seen growing, then "
                                                     "quiet this long = crashed (default: the window's, 30)")


def writer_of(args, reader) -> Optional[dict[Any, Any]]:
    """The writer state of the session ``args`` name (None when it cannot be told)."""
    if reader.fatal:
        return None
    from ..store.writerlock import writer_state
    sid = getattr(args, "session", None)
    def ask():
        return writer_state(reader.source.path if sid is None else args.path, sid,
                            idle_after=getattr(args, "live_window", None),
                            crash_after=getattr(args, "crash_after", None),
                            reader=reader if sid is None else None)     # (its tail analysis, reused)
    try:
        ws = ask()
        if _second_look(ws):
            _wait_second_look()
            ws = ask()
        return ws
    except Exception:               # no writer state (e.g. an unreadable store): the logical face as before
        return None


def _second_look(ws: Optional[dict[Any, Any]]) -> bool:
    """A one-shot command saw a lockless open tail it never saw before: growth is the only sign of
    a writer, so it is worth a second look after SECOND_LOOK_S.  Only a file changed within the
    last minute gets one (a stale file would not say more; no verdict is taken from its age)."""
    if not ws or ws.get("writer") != "crashed" or ws.get("signal") == "lock" or ws.get("grew"):
        return False
    age = ws.get("lastAppendAge")
    return isinstance(age, (int, float)) and age <= 60


def _wait_second_look() -> None:
    import time

    from ..store.watch import SECOND_LOOK_S
    time.sleep(SECOND_LOOK_S)


def is_live(ws: Optional[dict[Any, Any]]) -> bool:
    return bool(ws and ws["writer"] == "live")


def add_writer(obj: dict[Any, Any], ws: Optional[dict[Any, Any]], reader=None) -> dict[Any, Any]:
    """``writer``, ``writerState``, the truth an ``inspect`` answer shows and, while the writer
    is live, ``inFlight`` (what the open turn has so far) instead of a synthesized closure."""
    from ..log.fold.tails import TRUTHS
    obj["inFlight"] = None                  # (one shape: null unless a live writer is in a turn)
    if ws is not None:
        obj["writer"] = ws["writer"]
        obj["writerState"] = ws
        face = "live" if is_live(ws) else "logical"
        obj["truth"] = {"name": TRUTHS[face][0], "contract": TRUTHS[face][1]}
        if is_live(ws) and reader is not None:
            from ..log.fold.inflight import in_flight
            st = reader.tail_state()
            obj["inFlight"] = in_flight(st.tracker) if st.tracker is not None else None
    return obj


def list_writers(rows: list[Any], sessions: list[Any]) -> None:
    """Recently modified sessions of a listing: their writer state (lock, fresh fork seed, growth)."""
    from ..store.writerlock import writer_state
    todo = [(row, s) for row, s in zip(rows, sessions) if row.get("live")]
    for attempt in (0, 1):
        again = []
        for row, s in todo:
            try:
                ws = writer_state(s.path, s.id if s.format == "sqlite" else None)
            except Exception:            # an unreadable log keeps the cheap answer
                continue
            row["writer"] = ws["writer"]
            row["live"] = row["writer"] == "live"
            if _second_look(ws):
                again.append((row, s))
        if not again or attempt:
            return
        _wait_second_look()            # once for the whole listing
        todo = again


# --------------------------------------------------------------------------- fork title

def with_fork_title(reader, obj: dict[Any, Any], preview: bool) -> dict[Any, Any]:
    """``title``: the title the fork child gets under dsh's rule ("X" -> "X (1)" -> "X (2)"), from
    the titles in the store (a preview: the next child's; a fork: the published child's)."""
    obj["title"] = None
    if reader.source.kind == "sqlite":
        return obj
    try:
        from ..store import lineage
        if preview:
            obj["title"] = lineage.fork_child_title(reader.source.path)
        else:
            obj["title"] = lineage.display_title(obj["child"])
    except Exception:                # the title is a courtesy: a lineage problem never fails the fork
        obj["title"] = None
    return obj


# --------------------------------------------------------------------------- page

def page_items(page, physical: bool, live: bool) -> list[Any]:
    """The rows of a page for its face: stored rows, the live face (no closure), or the logical face."""
    from ..log.fold.inflight import live_items
    if physical:
        return page.items
    return live_items(page) if live and page.tail else page.logical_items()


def annotate_page(reader, page, items: list[Any], entries: list[Any], obj: dict[Any, Any], live: bool, physical: bool,
                  wait: bool = True) -> dict[Any, Any]:
    """Surface status on each event entry (``entries`` parallel to the events kept of ``items``),
    the page's compaction groups, the truth it shows, and the in-flight summary when live.
    ``wait`` False: pending statuses where they would need a fold of a big log (:mod:`.page_cold`)."""
    from .page_cold import mark_pending, page_surface
    sidx = page_surface(reader, wait)         # saved beside the seq index: no pass over the log once warm
    obj["surfaceStatus"] = "ready"
    if sidx is None:
        mark_pending(entries, obj)
    else:
        _annotate_surface(sidx, items, entries, obj)
    return _annotate_face(page, obj, live, physical)


def _annotate_surface(sidx, items: list[Any], entries: list[Any], obj: dict[Any, Any]) -> None:
    from ..log.format.model import is_event
    from ..log.fold.surface import compaction_group, row_surface
    by_seq = {it.seq: it for it in items if is_event(it)}
    for e in entries:
        ev = by_seq.get(e["event"]["seq"]) if "event" in e else None
        if ev is None:
            continue
        st = row_surface(sidx, ev)
        e["surface"] = st.pop("surface")
        if st:
            e["surfaceDetail"] = st
    groups = []
    if by_seq:
        lo, hi = min(by_seq), max(by_seq)
        for rec in sidx.compactions:
            end = rec["endSeq"] if rec["endSeq"] is not None else sidx.last_seq
            if rec["startSeq"] <= hi and end >= lo:
                groups.append(compaction_group(sidx, rec["compactionId"] if rec["compactionId"] is not None
                                               else rec["startSeq"]))
    obj["compactions"] = groups


def _annotate_face(page, obj: dict[Any, Any], live: bool, physical: bool) -> dict[Any, Any]:
    from ..log.fold.inflight import in_flight
    from ..log.fold.tails import TRUTHS
    live = live and page.tail and not physical
    face = "physical" if physical else ("live" if live else "logical")
    obj["face"] = face
    obj["truth"] = {"name": TRUTHS[face][0], "contract": TRUTHS[face][1]}
    obj["inFlight"] = None                  # (one shape: null unless a live writer is in a turn)
    if live:
        obj["closure"] = []
        if page.tail_state is not None and page.tail_state.tracker is not None:
            obj["inFlight"] = in_flight(page.tail_state.tracker)
    return obj


def entry_marks(e: dict[Any, Any]) -> str:
    """Text-mode marks of a page entry: shadowed since which seq, what a replacement replaces."""
    sd = e.get("surfaceDetail") or {}
    if e.get("surface") == "shadowed":
        return f" [not in the model's view since seq {sd.get('since')}]"
    if sd.get("replaces"):
        return f" [replaces seqs {', '.join(map(str, sd['replaces']))}]"
    return ""


def compaction_lines(obj: dict[Any, Any]) -> list[Any]:
    from ..log.fold.surface import compaction_line
    return [f"  seq {g['startSeq']}–{g['endSeq'] if g['endSeq'] is not None else '…'}: {compaction_line(g)}"
            for g in obj.get("compactions") or []]


# --------------------------------------------------------------------------- tails

def _cfg_tails(p):
    cfg_session_path(p)
    p.add_argument("--limit", type=int, default=50, help="messages in the tail page (default 50)")


def _run_tails(args):
    from ..log.fold.tails import TRUTHS, align_tails
    r = session_reader(args)
    page = r.tail_page(args.limit)
    rows = [row.to_dict() for row in align_tails(page)]
    obj = {"physical": {"name": TRUTHS["physical"][0], "contract": TRUTHS["physical"][1]},
           "logical": {"name": TRUTHS["logical"][0], "contract": TRUTHS["logical"][1]},
           "rows": rows, "openTail": bool(page.tail_state and page.tail_state.is_open)}

    def text():
        def cell(side, mark):
            if side is None:
                return "-"
            body = f"{side['seq']} {side['type']}" if "seq" in side else f"!! {side['bad']}: {side['reason']}"
            return body + (f" [{mark}]" if mark else "")
        lines = [f"{TRUTHS['physical'][0]:<48} | {TRUTHS['logical'][0]}"]
        for row in rows:
            m = row["marks"]
            lines.append(f"{cell(row['physical'], m.get('physical'))[:48]:<48} | "
                         f"{cell(row['logical'], m.get('logical'))}")
        return "\n".join(lines)
    emit(args, obj, text)


COMMANDS["tails"] = ("the physical and logical tails side by side, aligned by seq", _cfg_tails, _run_tails)

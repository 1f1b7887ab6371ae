"""What a live writer has in flight: the open turn as it stands, not closed by crash repair.

Pure (no Qt, no store).  :func:`in_flight` reads a fed :class:`~app.log.fold.repair.TailTracker`
(the rows after the last ``turn/end``) and says which turn and step are open, how much
assistant text / reasoning the current model call has streamed so far (v0/v1 chunk rows;
from v2 on a stream is stored only with its committed message, so nothing streams on
disk), whether that call already finished, and which tool calls are running (a
``tool/call`` logged, no result yet) or only requested (named in an assistant message, not
started).  The crash closure of the same tail is what a reader shows once the writer is
gone; while it is alive these rows are simply not written yet.
"""
from __future__ import annotations

from typing import Any, Optional

from ..format.model import is_event

WRITE_BEHIND_NOTE = ("the file lags the writer's memory by its write-behind window (dsh batches appends, "
                     "200 ms by default), so the newest events may not be on disk yet")


def in_flight(tracker: Any) -> Optional[dict[str, Any]]:
    """The in-flight summary of a tail (None when the log ends between turns and is not torn)."""
    rep = tracker.repair
    region = [it for it in tracker.region if is_event(it)]
    torn = len(tracker.dropped)
    if rep.open_turn is None and not torn:
        return None
    calls: dict[Any, Any] = {}
    text = reasoning = chunks = 0
    finished: Optional[str] = None
    attempt_first: Optional[int] = None
    for ev in region:
        d = ev.data if isinstance(ev.data, dict) else {}
        t = ev.type
        if t in ("step/start", "assistant/message", "step/end", "turn/start"):
            text = reasoning = chunks = 0
            finished = attempt_first = None
        elif t == "assistant/chunk":
            raw_chunk = d.get("chunk")
            c: dict[str, Any] = raw_chunk if isinstance(raw_chunk, dict) else {}
            ct = c.get("type")
            if finished is not None:                 # a new attempt after a finished one (retry)
                text = reasoning = chunks = 0
                finished = attempt_first = None
            if attempt_first is None:
                attempt_first = ev.seq
            chunks += 1
            if ct == "text-delta":
                text += len(str(c.get("text", "")))
            elif ct == "reasoning-delta":
                reasoning += len(str(c.get("text", "")))
            elif ct == "finish":
                r = c.get("reason")
                finished = r.get("kind") if isinstance(r, dict) else str(r)
        elif t == "tool/call":
            calls[d.get("callId")] = {"callId": d.get("callId"), "name": d.get("name"), "seq": ev.seq}
    running: list[dict[str, Any]] = []
    requested: list[dict[str, Any]] = []
    for cid, call_seq in rep.pending.items():
        if call_seq is not None:
            running.append(calls.get(cid) or {"callId": cid, "name": None, "seq": call_seq})
        else:
            requested.append({"callId": cid})
    step = rep.open_step
    return {
        "openTurn": rep.open_turn,
        "openStep": {"turn": step[0], "step": step[1]} if step else None,
        "turnStartSeq": rep.turn_start_seq,
        "lastSeq": rep.last_seq,
        "lastEventTime": rep.last_time,
        "streaming": {"firstSeq": attempt_first, "chunks": chunks, "textChars": text, "reasoningChars": reasoning,
                      "finished": finished} if attempt_first is not None else None,
        "runningTools": running,
        "requestedTools": requested,
        "heldRows": torn,
        "note": WRITE_BEHIND_NOTE,
    }


def live_items(page: Any) -> list[Any]:
    """The live face of a page: its stored events as they stand (the open turn in flight), no
    crash closure, without the rows a repair would drop (a torn last row is a write in progress)."""
    from ..index.reader import row_key
    drop = {row_key(x) for x in (page.dropped or [])}
    return [it for it in page.items if is_event(it) and row_key(it) not in drop]

"""Plain rows of the one background pass read from their lean records (issue 29: the pass decoded every row).

Most rows of a long log are non-surface events of a few types -- ``assistant/chunk`` (block starts and ends,
finishes, usage), step and turn boundaries, tool calls, inbox splices, retries -- and none of the pass's products
reads more of them than a few fields.  :class:`LeanRows` takes such a row from the lean record of
:mod:`app.log.format.fastrows` (a msgspec Struct that accepts a row only when the exact decode would read it with
no problem, no conversion and no dropped field; the row screen in C first) and does to the three builders exactly
what their ``event``/``item``/``row`` steps do with the decoded :class:`~app.log.format.model.Event`:

* the outline (:class:`~app.log.query.outline.OutlineBuilder`): the count, the seq order, the step mark of its
  surface fold, and what the row adds to its turn (a new turn, a step, a tool call, an error finish, a retry, a
  failed log-only attempt, the turn's end) -- such rows have no ``sourceEventSeqs``, so its load checks find nothing;
* the checkpoints (:class:`~app.log.fold.checkpoints.CheckpointBuilder`): the seq order, the turn starts, the
  attempt tracker's step (a chunk, a boundary, a retry, a log-only attempt's settlement) and the step mark; a type that the legacy edges of its
  surface fold read (v0-v2: :mod:`~app.log.fold.v2heads`, :mod:`~app.log.fold.v0chain`) is never taken here;
* the surface index: a row whose bytes hold one of its needles is counted (a step boundary: the step mark, as
  :meth:`~app.log.fold.surface.SurfaceIndex.lean_step`).

Surface appends too (:data:`SURFACE_TYPES`: an assistant message, a tool result, a user message whose surfaceOp is
exactly ``"append"``, citing plain seqs below its own): the outline's node, error, interruption and (a user message
that may be its turn's prompt: its payload read whole for the text) prompt; the checkpoints' attempt step (a
settlement or a cite), cited span and node, whose event the fold keeps as the stored row (:class:`RowEvent`, decoded
only if an image offload names it); the surface index's node and estimated tokens
(:meth:`~app.log.fold.surface.SurfaceIndex.lean_append`).

Any other row, and any row its record or checks refuse, takes the exact decode in its place.  Pure core.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, cast

from ..fold.v0chain import TYPES as V0_TYPES
from ..fold.v2heads import TYPES as V2_TYPES
from ..format import fastrows as fr, rowscreen
from ..format.limits import MAX_DEPTH, MAX_ROW_BYTES
from ..format.model import Event, Problem, is_event
from ..source.sources import RowPos
from ..format.codec import decode_js
from ..format.payloads import content_text, obj
from .outline import TurnEntry, first_line

if TYPE_CHECKING:
    from ..fold.checkpoints import CheckpointBuilder
    from ..index.reader import LogReader
    from .outline import OutlineBuilder

LEAN_TYPES = frozenset({"assistant/chunk", "step/start", "step/end", "tool/call", "todo/write", "agent/inbox/spliced",
                        "llm/retry", "llm/retry-started", "turn/start", "turn/end", "assistant/attempt"})
# surface appends taken lean too (issue 29: most of a long log's bytes; a user message that may be its turn's
# prompt is read whole for its text)
SURFACE_TYPES = frozenset({"assistant/message", "tool/result", "user/message"})
_STEP, _CHUNK, _MESSAGE, _SURFACE, _TURN_START, _TURN_END, _RETRY, _ATTEMPT = \
    fr.STEP, fr.CHUNK, fr.MESSAGE, fr.SURFACE, fr.TURN_START, fr.TURN_END, fr.RETRY, fr.ATTEMPT
Row = tuple[RowPos, int, Optional[int], bytes, bool]        # (a row as ``Segment.split_rows`` gives it)


def lean_decoders(reader: LogReader, cb: CheckpointBuilder) -> dict[bytes, Any]:
    """Row type (the bytes after ``{"type":"``) -> its lean decoder, for the types taken here (none: a log whose
    rows carry their seqs elsewhere, or a builder that applies its own load checks)."""
    if reader.codec.envelope_seqs is not None or cb.own_checks:
        return {}
    skip: set[str] = set()
    if cb.sf.v2 is not None:
        skip |= V2_TYPES
    if cb.sf.v0 is not None:
        skip |= V0_TYPES
    take = (LEAN_TYPES | SURFACE_TYPES) - skip
    return {k: v for k, v in fr.pass_decoders(reader.version or 0).items() if k.decode() in take}


class LeanRows:
    """The lean way for the rows it can take (see the module doc): :meth:`record` gives a row's lean record when
    this way may take it, :meth:`take` does to the outline and the checkpoints what their steps do with its event."""

    def __init__(self, reader: LogReader, ob: OutlineBuilder, cb: CheckpointBuilder) -> None:
        self.reader = reader
        self.decs = lean_decoders(reader, cb)
        self.legacy = (reader.version or 0) < 2
        self.ob, self.cb = ob, cb
        self.screen = rowscreen.c_screens()[0]     # (the row screen in C, looked up once, not per row)
        self.summ: tuple[int, Any, Any] = (0, None, None)    # (the stream summary of the last settlement :meth:`ok`)

    def record(self, raw: bytes) -> Any:
        """The row's lean record when this way may take it, else None (:func:`~app.log.format.fastrows.record_of`)."""
        dec = self.decs.get(raw[9:raw.find(b'"', 9)]) if raw.startswith(b'{"type":"') else None
        if dec is None:
            return None
        screen = self.screen
        if screen(raw, MAX_ROW_BYTES, MAX_DEPTH) if screen is not None else fr.row_refused(raw):
            return None
        try:
            rec = dec(raw)
        except fr.DECODE_ERRORS:
            return None
        return rec if rec.K < _ATTEMPT or self.ok(rec) else None

    def ok(self, rec: Any) -> bool:
        """The checks of a decoded record of kind ``ATTEMPT`` or above that its Struct cannot make
        (:func:`~app.log.format.fastrows.record_ok`; a settlement's stream: :func:`~app.log.format.fastrows.pass_stream`,
        its summary kept in :attr:`summ` for :meth:`take`)."""
        k = rec.K
        if k >= fr.CHECKED and not fr.record_ok(rec, self.legacy):
            return False
        if k in (_MESSAGE, _ATTEMPT):
            stream = rec.data.stream
            if stream is not None:
                summ = fr.pass_stream(stream)
                if summ is None:
                    return False
                self.summ = summ
        return True

    def take(self, rec: Any, pos: Any, off: int, line: Optional[int], row: Row, cp_on: bool) -> bool:
        """:meth:`OutlineBuilder.event` of the row's event, then (``cp_on``: the checkpoints still run)
        :meth:`CheckpointBuilder.item`; -> whether the checkpoints still run after it.  (``rec``: a record that
        :meth:`record` gave, or that :meth:`ok` has just accepted.)"""
        self._outline(rec, pos, off, line, row)
        return cp_on and self._checkpoint(rec, row)

    def _outline(self, rec: Any, pos: Any, off: int, line: Optional[int], row: Row) -> None:
        """:meth:`take`'s outline part."""
        ob, seq, typ, d, k = self.ob, rec.seq, rec.T, rec.data, rec.K
        count_event(ob, seq, line, off)
        if k == _STEP:
            ob.sf.step_mark = (typ, seq)
        elif k == _MESSAGE:                 # (an append: a node; with no content, an empty one)
            empty = not d.message.content
            ob.sf.append_node(seq, empty)
        elif k == _SURFACE:
            ob.sf.append_node(seq)
        cur = ob.cur
        if k == _TURN_START:
            ob.cur = TurnEntry(turn=d.turn, first_seq=seq, last_seq=seq)
            ob.turns.append(ob.cur)
        elif cur is not None:
            cur.last_seq = seq
            if k == _STEP:
                if typ == "step/start":
                    cur.steps += 1
            elif k == _CHUNK:
                c = d.chunk
                if c.type == "finish":
                    r = c.reason
                    if isinstance(r, dict) and r.get("kind") == "error":
                        _error(cur, seq, pos, off, line)
            elif k == _MESSAGE:
                if d.interrupted is True:
                    cur.interrupted = True
            elif typ == "tool/result":
                if d.error is not None:
                    _error(cur, seq, pos, off, line)
            elif typ == "user/message":
                if cur.prompt_seq is None or cur.prompt_kind_weak:
                    _prompt(cur, seq, row[3])
            elif typ == "tool/call":
                name = d.name or "?"
                cur.tools[name] = cur.tools.get(name, 0) + 1
            elif typ == "llm/retry":
                cur.retries += 1
            elif k == _ATTEMPT:             # (a log-only attempt: an error when its stream failed)
                if _failed(d.stream):
                    _error(cur, seq, pos, off, line)
            elif k == _TURN_END:
                kind = d.reason.get("kind")
                cur.end = kind or "?"
                cur.open = False
                if kind == "error":
                    _error(cur, seq, pos, off, line)
                elif kind in ("aborted", "interrupted"):
                    cur.interrupted = True
                ob.cur = None

    def _checkpoint(self, rec: Any, row: Row) -> bool:
        """:meth:`take`'s checkpoints part; -> whether the checkpoints still run after it."""
        seq, typ, d, k = rec.seq, rec.T, rec.data, rec.K
        cb = self.cb
        if cb.done:
            return False
        if seq != cb.nxt:
            cb.done = True
            return False
        cb.nxt = seq + 1
        at = cb.at
        if k == _STEP:
            if at.open_attempts:               # (none open: ``boundary`` closes nothing)
                at.boundary(typ, d.turn)
            cb.sf.step_mark = (typ, seq)
        elif k == _CHUNK:
            c = d.chunk
            at.add_chunk(seq, (d.turn, d.step), c.type, c.reason, c.usage, "")
        elif k in (_MESSAGE, _SURFACE):
            ses = rec.sourceEventSeqs
            if k == _MESSAGE:
                stream = d.stream
                if stream is not None:         # (v2+: the attempt settled in the message's embedded stream)
                    chunks, finish, usage = self.summ
                    at.settle(typ, seq, (d.turn, d.step), chunks, finish, usage if usage is not None else d.usage,
                              d.interrupted)
                else:
                    at.cite(seq, (d.turn, d.step), ses, d.interrupted)
            if ses:                            # (plain seqs, all below this one: record_ok)
                lo, hi = min(ses), max(ses)
                cb.lo, cb.hi = (lo, hi) if cb.lo is None or cb.hi is None else (min(cb.lo, lo), max(cb.hi, hi))
            sf = cb.sf
            sf.append_node(seq, k == _MESSAGE and not d.message.content)
            sf.events[seq] = cast(Event, RowEvent(self.reader, row, seq, typ))
        elif k == _TURN_START:
            cb.turn_seq, cb.disp_turn = seq, at.count
            if cb.cps.points:
                cb.cps.points[-1].turns.append((cb.turn_seq, cb.disp_turn))
            if at.open_attempts:
                at.boundary(typ, d.turn)
        elif k == _TURN_END:
            if at.open_attempts:
                at.boundary(typ, d.turn)
        elif k == _RETRY:
            at.retry(typ, seq, (d.turn, d.step), d.retry)
        elif k == _ATTEMPT:                    # (``AttemptTracker.apply``'s settlement of its embedded stream)
            chunks, finish, usage = self.summ
            at.settle(typ, seq, (d.turn, d.step), chunks, finish, usage if usage is not None else d.usage,
                      None)                    # (an attempt's ``interrupted`` is not read)
        return True


class RowEvent:
    """A surface node's event as the checkpoints' fold keeps it when the pass took its row lean: its seq and type,
    and its stored row, decoded (once) only when the fold reads anything else of it (an image offload naming it)."""
    __slots__ = ("seq", "type", "_row", "_reader", "_ev")

    def __init__(self, reader: LogReader, row: Row, seq: int, typ: str) -> None:
        self.seq, self.type, self._row, self._reader = seq, typ, row, reader
        self._ev: Optional[Event] = None

    def __getattr__(self, name: str) -> Any:
        ev = self._ev
        if ev is None:
            for it in self._reader.decode_split_row(self._row):
                if is_event(it) and it.seq == self.seq:
                    ev = self._ev = it
                    break
            else:
                raise RuntimeError(f"seq {self.seq} is not in its row")
        return getattr(ev, name)


def count_event(ob: OutlineBuilder, seq: int, line: Optional[int], off: int) -> None:
    """An event of a lean row counted by the outline, as ``OutlineBuilder.event`` counts it: its seq's problem when it
    is not the one expected (a gap or a step back), the next seq expected, the last seq."""
    ob.events += 1
    if seq != ob.expected:
        ob.problems.append(Problem(code="seq-gap" if seq > ob.expected else "seq-order",
                                   message=f"seq {seq} where {ob.expected} was expected", seq=seq, line=line,
                                   offset=off if off >= 0 else None))
    ob.expected = seq + 1
    if seq > ob.last_seq:
        ob.last_seq = seq


def _prompt(cur: TurnEntry, seq: int, raw: bytes) -> None:
    """What a user message (stored as ``raw``, a row its lean record accepts: the codec reads its payload as the
    JSON decoder gives it) adds to its turn's prompt, as ``outline._note_in_turn`` reads it."""
    d = obj(obj(decode_js(raw)).get("data"))
    src = obj(d.get("source"))
    if cur.prompt_seq is None or (src.get("kind") == "user" and cur.prompt_kind_weak):
        text = first_line(content_text(d.get("content")))
        if text:
            cur.prompt, cur.prompt_seq = text, seq
            cur.prompt_kind_weak = src.get("kind") not in (None, "user")


def _failed(stream: list[Any]) -> bool:
    """An attempt's stream (its lean records) holds a finish chunk whose reason is an error: what
    ``outline._note_in_turn`` finds in its ``event_fields``."""
    for it in stream:
        c = it.chunk if it.type == "chunk" else None
        if c is not None and c.type == "finish":
            r = c.reason
            if isinstance(r, dict) and r.get("kind") == "error":
                return True
    return False


def _error(cur: TurnEntry, seq: int, pos: Any, off: int, line: Optional[int]) -> None:
    cur.errors += 1
    cur.error_seqs.append(seq)
    cur.error_rows.append((pos, off, line))

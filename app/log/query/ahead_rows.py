"""Plain rows of the one background pass read from their lean records (issue 29: the pass decoded every row).

Most rows of a long log are non-surface events of a few types -- ``assistant/chunk`` (block starts and ends,
finishes, usage), step and turn boundaries, tool calls, inbox splices, retries -- and none of the pass's products
reads more of them than a few fields.  :class:`LeanRows` takes such a row from the lean record of
:mod:`app.log.format.fastrows` (a msgspec Struct that accepts a row only when the exact decode would read it with
no problem, no conversion and no dropped field; the row screen in C first) and does to the three builders exactly
what their ``event``/``item``/``row`` steps do with the decoded :class:`~app.log.format.model.Event`:

* the outline (:class:`~app.log.query.outline.OutlineBuilder`): the count, the seq order, the step mark of its
  surface fold, and what the row adds to its turn (a new turn, a step, a tool call, an error finish, a retry, the
  turn's end) -- such rows have no ``sourceEventSeqs``, so its load checks find nothing;
* the checkpoints (:class:`~app.log.fold.checkpoints.CheckpointBuilder`): the seq order, the turn starts, the
  attempt tracker's step (a chunk, a boundary, a retry) and the step mark; a type that the legacy edges of its
  surface fold read (v0-v2: :mod:`~app.log.fold.v2heads`, :mod:`~app.log.fold.v0chain`) is never taken here;
* the surface index: a row whose bytes hold one of its needles is counted (a step boundary: the step mark, as
  :meth:`~app.log.fold.surface.SurfaceIndex.lean_step`).

Any other row, and any row its record or checks refuse, takes the exact decode in its place.  Pure core.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from ..fold.v0chain import TYPES as V0_TYPES
from ..fold.v2heads import TYPES as V2_TYPES
from ..format import fastrows as fr
from ..format.model import Problem
from .outline import TurnEntry

if TYPE_CHECKING:
    from ..fold.checkpoints import CheckpointBuilder
    from ..index.reader import LogReader
    from .outline import OutlineBuilder

LEAN_TYPES = frozenset({"assistant/chunk", "step/start", "step/end", "tool/call", "todo/write", "agent/inbox/spliced",
                        "llm/retry", "llm/retry-started", "turn/start", "turn/end"})
_STEPS = ("step/start", "step/end")


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
    take = LEAN_TYPES - skip
    return {k: v for k, v in fr.decoders(reader.version or 0).items() if k.decode() in take}


class LeanRows:
    """The lean way for the rows it can take (see the module doc): :meth:`take` is True when it took one."""

    def __init__(self, reader: LogReader, ob: OutlineBuilder, cb: CheckpointBuilder) -> None:
        self.decs = lean_decoders(reader, cb)
        self.legacy = (reader.version or 0) < 2
        self.ob, self.cb = ob, cb
        self.cp_on = True            # False once the checkpoints stopped (a break in the seq order)

    def record(self, raw: bytes) -> Any:
        """The row's lean record when this way may take it, else None."""
        return fr.record_of(self.decs, raw, self.legacy)

    def outline(self, rec: Any, pos: Any, off: int, line: Optional[int]) -> None:
        """:meth:`OutlineBuilder.event` of the row's event."""
        ob, seq, typ, d = self.ob, rec.seq, rec.T, rec.data
        ob.events += 1
        if seq != ob.expected:
            ob.problems.append(Problem(code="seq-gap" if seq > ob.expected else "seq-order",
                                       message=f"seq {seq} where {ob.expected} was expected", seq=seq, line=line,
                                       offset=off if off >= 0 else None))
        ob.expected = seq + 1
        if seq > ob.last_seq:
            ob.last_seq = seq
        if typ in _STEPS:
            ob.sf.step_mark = (typ, seq)
        if typ == "turn/start":
            ob.cur = TurnEntry(turn=d.turn, first_seq=seq, last_seq=seq)
            ob.turns.append(ob.cur)
            return
        cur = ob.cur
        if cur is None:
            return
        cur.last_seq = seq
        if typ == "assistant/chunk":
            c = d.chunk
            if c.type == "finish":
                r = c.reason
                if isinstance(r, dict) and r.get("kind") == "error":
                    _error(cur, seq, pos, off, line)
        elif typ == "step/start":
            cur.steps += 1
        elif typ == "tool/call":
            name = d.name or "?"
            cur.tools[name] = cur.tools.get(name, 0) + 1
        elif typ == "llm/retry":
            cur.retries += 1
        elif typ == "turn/end":
            kind = d.reason.get("kind")
            cur.end = kind or "?"
            cur.open = False
            if kind == "error":
                _error(cur, seq, pos, off, line)
            elif kind in ("aborted", "interrupted"):
                cur.interrupted = True
            ob.cur = None

    def checkpoint(self, rec: Any) -> bool:
        """:meth:`CheckpointBuilder.item` of the row's event (False: the builder is done)."""
        cb, seq, typ, d = self.cb, rec.seq, rec.T, rec.data
        if cb.done:
            return False
        if seq != cb.nxt:
            cb.done = True
            return False
        at = cb.at
        if typ == "assistant/chunk":
            c = d.chunk
            at.add_chunk(seq, (d.turn, d.step), c.type, c.reason, c.usage, "")
        elif typ.startswith(("step/", "turn/")):
            if typ == "turn/start":
                cb.turn_seq, cb.disp_turn = seq, at.count
                if cb.cps.points:
                    cb.cps.points[-1].turns.append((cb.turn_seq, cb.disp_turn))
            at.boundary(typ, d.turn)
            if typ in _STEPS:
                cb.sf.step_mark = (typ, seq)
        elif typ in ("llm/retry", "llm/retry-started"):
            at.retry(typ, seq, (d.turn, d.step), d.retry)
        cb.nxt = seq + 1
        return True


def _error(cur: TurnEntry, seq: int, pos: Any, off: int, line: Optional[int]) -> None:
    cur.errors += 1
    cur.error_seqs.append(seq)
    cur.error_rows.append((pos, off, line))

"""Outline and problems of a whole log, from one streaming pass (pure core, no Qt).

:func:`build_outline` reads every event once (bounded memory: one :class:`TurnEntry` per turn,
a few ints per surface message) and returns

* ``turns``: per turn its seq range, the first line of its user prompt, step count, tools
  used (name -> calls), and markers: errors (failed tools, failed attempts, error turn end),
  retries, interruption, the turn-end reason, or ``open`` when the log ends inside it;
* ``problems``: every problem of the log, each with line, byte offset and seq where known:
  header and source problems, unreadable rows (malformed, torn, bad envelope, bad packed row,
  bad UTF-8), envelope problems (unexpected keys, bad time, no data, unknown types), payloads
  that do not have their documented shape, seq gaps and disorder, surface violations, and
  the torn tail a repair would truncate.  It is a superset of what
  :func:`app.log.query.analysis.inspect` lists (the tests check it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, cast
from collections.abc import Callable

import msgspec

from .analysis import dedupe_problems, load_checks
from ..fold.folds import SurfaceFold
from ..index.integrity import EventChecks
from ..index.verdict import ReadPath
from ..format.model import Event, Problem, typed
from ..format.payloads import content_text, obj
from .find_match import Cancel
from .textview import event_fields

if TYPE_CHECKING:
    from ..index.reader import LogReader

PROMPT_CHARS = 200


@dataclass
class TurnEntry:
    turn: int
    first_seq: int
    last_seq: int
    prompt: str = ""                  # first line of the turn's user prompt
    prompt_seq: Optional[int] = None
    steps: int = 0
    tools: dict[str, int] = field(default_factory=dict)     # name -> calls, in first-call order
    errors: int = 0
    error_seqs: list[int] = field(default_factory=list)   # seqs of the errors (failed tools, failed attempts, error end)
    # where each error's row is stored, beside ``error_seqs``: (pos, offset, line) (*Errors only* reads just those rows)
    error_rows: list[tuple[Any, int, Optional[int]]] = field(default_factory=list, compare=False)
    retries: int = 0
    interrupted: bool = False
    end: Optional[str] = None          # turn/end reason kind (None: open)
    open: bool = True
    # a turn's prompt may first come from a non-user source (runtime context); a user prompt wins
    prompt_kind_weak: bool = field(default=False, repr=False, compare=False)

    @property
    def markers(self) -> list[str]:
        out = []
        if self.errors:
            out.append("error")
        if self.retries:
            out.append("retry")
        if self.interrupted:
            out.append("interrupted")
        if self.open:
            out.append("open")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"turn": self.turn, "firstSeq": self.first_seq, "lastSeq": self.last_seq, "prompt": self.prompt,
                "promptSeq": self.prompt_seq, "steps": self.steps, "tools": dict(self.tools),
                "errors": self.errors, "retries": self.retries, "interrupted": self.interrupted,
                "end": self.end, "markers": self.markers}


@dataclass
class Outline:
    turns: list[TurnEntry]
    problems: list[Problem]
    events: int = 0
    last_seq: int = -1
    complete: bool = True              # False: cancelled before the end
    refusals: list[Problem] = field(default_factory=list)   # why dsh would refuse the log (index.verdict)

    def to_dict(self) -> dict[str, Any]:
        return {"turns": [t.to_dict() for t in self.turns], "events": self.events, "lastSeq": self.last_seq,
                "problems": [problem_dict(p) for p in self.problems], "complete": self.complete}


def problem_dict(p: Problem) -> dict[str, Any]:
    return {"code": p.code, "message": p.message, "line": p.line,
            "offset": p.offset if p.offset is not None and p.offset >= 0 else None, "seq": p.seq,
            "fatal": p.fatal, "text": str(p)}


def first_line(text: str, limit: int = PROMPT_CHARS) -> str:
    for ln in (text or "").splitlines():
        s = " ".join(ln.split())
        if s:
            return s if len(s) <= limit else s[:limit - 1] + "…"
    return ""


def build_outline(reader: LogReader, progress: Optional[Callable[[int, int], None]] = None,
                  cancel: Cancel = None) -> Outline:
    """Outline (turns) and every problem of the log of ``reader``, one forward pass."""
    b = OutlineBuilder(reader)
    if reader.fatal:
        return b.finish(True)
    is_set = getattr(cancel, "is_set", None) if cancel is not None else None
    for ev in reader.iter_events(logical=False, problems=b.problems, progress=progress):
        if cancel is not None and (is_set() if is_set is not None else cast(Callable[[], object], cancel)()):
            return b.finish(False)
        b.event(ev)
    return b.finish(True)


class OutlineBuilder:
    """:func:`build_outline` fed an event at a time (the problems of decoding go to :attr:`problems`);
    the one background pass (:mod:`app.log.query.ahead`) feeds it beside the checkpoints and the surface index."""

    def __init__(self, reader: LogReader) -> None:
        self.reader = reader
        self.problems: list[Problem] = list(reader.problems)
        # the turns so far (the one pass packs each once final: ``outline_packed.TurnSpool``, ``sealed()`` at the end)
        self.turns: list[TurnEntry] = []
        self.sf = SurfaceFold(keep_events=False, keep_replaced=False)   # (the nodes and violations: who shadowed
        #                                                                  whom would grow with the log, issue 36)
        self.checks = EventChecks()
        self.inherited: Optional[int] = None   # v2+: seq of the last tagged session/end-seed
        self.cur: Optional[TurnEntry] = None
        self.expected = 0
        self.events = 0
        self.last_seq = -1

    def event(self, ev: Event) -> None:
        problems = self.problems
        self.events += 1
        if ev.seq != self.expected:
            problems.append(Problem(code="seq-gap" if ev.seq > self.expected else "seq-order",
                                    message=f"seq {ev.seq} where {self.expected} was expected", seq=ev.seq,
                                    line=ev.line, offset=ev.offset if ev.offset >= 0 else None))
        self.expected = ev.seq + 1
        self.last_seq = max(self.last_seq, ev.seq)
        try:
            typed(ev)
        except msgspec.ValidationError as e:
            problems.append(Problem(code="bad-payload", message=f"{ev.type} payload: {e}", seq=ev.seq, line=ev.line,
                                    offset=ev.offset if ev.offset >= 0 else None))
        self.sf.apply(ev)
        self.checks.apply(ev)
        typ = ev.type
        d = obj(ev.data)
        if typ == "session/end-seed" and d.get("inherited") is True:
            self.inherited = ev.seq
        if typ == "turn/start":
            t = d.get("turn")
            self.cur = TurnEntry(turn=t if type(t) is int else len(self.turns) + 1, first_seq=ev.seq, last_seq=ev.seq)
            self.turns.append(self.cur)
            return
        if self.cur is not None and _note_in_turn(self.cur, ev, typ, d):
            self.cur = None

    def block(self, seq0: int, n: int, line: Optional[int], offset: int) -> None:
        """:meth:`event` of each of the ``n`` members of a well-formed packed chunk row (deltas from ``seq0``):
        they are contiguous, valid ``assistant/chunk`` payloads, no surface events and no finish chunks, so only
        the first can break the seq order and the rest only count (the one pass feeds them without expanding)."""
        if seq0 != self.expected:
            self.problems.append(Problem(code="seq-gap" if seq0 > self.expected else "seq-order",
                                         message=f"seq {seq0} where {self.expected} was expected", seq=seq0,
                                         line=line, offset=offset if offset >= 0 else None))
        last = seq0 + n - 1
        self.events += n
        self.expected = last + 1
        self.last_seq = max(self.last_seq, last)
        if self.cur is not None:
            self.cur.last_seq = last

    def finish(self, complete: bool, path: Optional[ReadPath] = None) -> Outline:
        """The outline (``complete``: every event was fed; False: cut short, without the load checks;
        ``path``: dsh's read-path rules already fed every segment by the caller's read)."""
        reader, problems = self.reader, self.problems
        if reader.fatal:
            return Outline(turns=[], problems=dedupe_problems(problems))
        refusals: list[Problem] = []
        if complete:
            st = reader.tail_state()
            for ev in st.closure:
                self.sf.apply(ev)
            refusals = load_checks(reader, problems, st, self.sf, self.checks, self.inherited, path)
        turns = self.turns
        sealed = getattr(turns, "sealed", None)
        return Outline(turns=turns if sealed is None else sealed(), problems=dedupe_problems(problems), events=self.events,
                       last_seq=self.last_seq, complete=complete, refusals=refusals)


def _error(cur: TurnEntry, ev: Event) -> None:
    cur.errors += 1
    cur.error_seqs.append(ev.seq)
    cur.error_rows.append((ev.pos, ev.offset, ev.line))


def _note_in_turn(cur: TurnEntry, ev: Event, typ: str, d: dict[str, Any]) -> bool:
    """What ``ev`` adds to its turn's outline entry; True when it ends the turn."""
    cur.last_seq = ev.seq
    if typ == "user/message":
        src = obj(d.get("source"))
        if cur.prompt_seq is None or (src.get("kind") == "user" and cur.prompt_kind_weak):
            line = first_line(content_text(d.get("content")))
            if line:
                cur.prompt, cur.prompt_seq = line, ev.seq
                cur.prompt_kind_weak = src.get("kind") not in (None, "user")
    elif typ == "step/start":
        cur.steps += 1
    elif typ == "tool/call":
        name = str(d.get("name") or "?")
        cur.tools[name] = cur.tools.get(name, 0) + 1
    elif typ == "tool/result":
        if d.get("error") is not None:
            _error(cur, ev)
    elif typ == "assistant/chunk":
        c = d.get("chunk")
        if isinstance(c, dict) and c.get("type") == "finish":
            r = c.get("reason")
            if isinstance(r, dict) and r.get("kind") == "error":
                _error(cur, ev)
    elif typ == "assistant/attempt":           # v2+: a log-only attempt; its stream may end in failure
        if any(f.kind == "error" for f in event_fields(ev)):
            _error(cur, ev)
    elif typ == "assistant/message":
        if d.get("interrupted") is True:
            cur.interrupted = True
    elif typ == "llm/retry":
        cur.retries += 1
    elif typ == "turn/end":
        r = d.get("reason")
        kind = r.get("kind") if isinstance(r, dict) else (r if isinstance(r, str) else None)
        cur.end = kind or "?"
        cur.open = False
        if kind == "error":
            _error(cur, ev)
        elif kind in ("aborted", "interrupted"):
            cur.interrupted = True
        return True
    return False

"""Attempts (spec §4): each model call's chunk run inside a step, and its outcome.

An attempt is a run of ``assistant/chunk`` events of one ``(turn, step)``; it ends at a
``finish`` chunk, at the ``assistant/message`` that cites it, or at a step/turn boundary.
Failed attempts (``finish`` of kind error/aborted, not cited by a message) are hidden by
default in the UI; the raw log keeps them.  ``llm/retry`` / ``llm/retry-started`` are
linked to the failed attempt they retry.

v2+ logs embed each attempt's chunks in its settlement (``assistant/message.data.stream``
or the log-only ``assistant/attempt``): such an attempt is that one event (first = last =
its seq); an ``assistant/attempt`` never produced a message, so it is hidden by default
with its reason (the failure, or "abandoned" when the stream has no finish).
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any, Optional
from collections.abc import Iterable

from ..format.model import Event
from ..format.payloads import JsonList, JsonObj, as_obj
from ..format.versions import STREAM_RUN_TYPES, stream_summary


def embedded_chunks(ev: Event) -> list[Event]:
    """The chunks of a v2+ settlement's embedded stream as ``assistant/chunk``-shaped events
    (for display next to v0 chunk rows): seq = the settlement's, ``member`` = chunk index,
    ``packed`` = "embedded".  They are views of the one stored row (``raw`` is that row)."""
    from ..format.versions import stream_chunks
    stream = embedded_stream(ev)
    if stream is None:
        return []
    d = ev.data
    return [Event(seq=ev.seq, type="assistant/chunk", time=t if type(t) is int else 0,
                  data={"turn": d.get("turn"), "step": d.get("step"), "chunk": c}, raw=ev.raw, pos=ev.pos,
                  offset=ev.offset, line=ev.line, member=k, packed="embedded")
            for k, (t, c) in enumerate(stream_chunks(stream))]


def embedded_stream(ev: Event) -> Optional[JsonList]:
    """The embedded chunk stream of a v2+ settlement event, else None."""
    if ev.type in ("assistant/message", "assistant/attempt") and isinstance(ev.data, dict):
        s = ev.data.get("stream")
        if isinstance(s, list):
            return s
    return None

def settle_summary(stream: object) -> tuple[int, Optional[JsonObj], Any]:
    """(chunks, finish, usage) of an embedded stream, as :func:`~app.log.format.versions.stream_summary` sums
    them, without its text and times (what an attempt tracker that keeps no text needs)."""
    chunks = 0
    finish: Optional[JsonObj] = None
    usage: Any = None
    for rec in stream if isinstance(stream, list) else ():
        if not isinstance(rec, dict):
            continue
        rt = rec.get("type")
        if rt == "chunk":
            c = rec.get("chunk")
            if not isinstance(c, dict):
                continue
            chunks += 1
            ct = c.get("type")
            if ct == "finish":
                r = c.get("reason")
                finish = r if isinstance(r, dict) else {"kind": str(r)}
            elif ct == "usage":
                usage = c.get("usage")
        elif isinstance(rt, str) and rt in STREAM_RUN_TYPES:
            payload = rec.get("args") if rt == "tool-call-chunks" else rec.get("texts")
            if isinstance(payload, list) and payload:
                chunks += len(payload)
    return chunks, finish, usage


FAILED_FINISH = ("error", "aborted")
# an attempt's (turn, step) as logged: JSON values, compared and hashed, never validated
_StepKey = tuple[Any, Any]


@dataclass(slots=True)
class Attempt:
    turn: Optional[int]
    step: Optional[int]
    first_seq: int
    last_seq: int
    chunks: int = 0
    finish: Optional[JsonObj] = None        # the finish chunk's reason
    usage: object = None                    # the usage as logged (a TokenUsage object when well-formed)
    message_seq: Optional[int] = None       # the assistant/message citing it
    interrupted: bool = False               # message carries interrupted:true
    retry_seq: Optional[int] = None         # llm/retry scheduled after this failure
    retry_started_seq: Optional[int] = None
    retry_number: Optional[int] = None
    closed: bool = False
    text: list[str] = field(default_factory=list)   # text deltas (bounded), for previews of failed attempts
    log_only: bool = False                  # a v2+ ``assistant/attempt``: settled without a message

    @property
    def finish_kind(self) -> Optional[str]:
        kind = self.finish.get("kind") if self.finish is not None else None
        return kind if isinstance(kind, str) else None

    @property
    def failed(self) -> bool:
        return self.message_seq is None and (self.finish_kind in FAILED_FINISH or self.log_only)

    @property
    def hidden_by_default(self) -> bool:
        return self.failed

    @property
    def failure(self) -> Optional[JsonObj]:
        """The finish reason's ``failure`` object (None when absent or not an object)."""
        return as_obj(self.finish.get("failure")) if self.finish is not None else None

    @property
    def status(self) -> str:
        if self.message_seq is not None:
            return "interrupted" if self.interrupted else "committed"
        if self.failed:
            return "failed"
        if self.finish is not None:
            return "finished"            # finished but no message (yet)
        return "closed" if self.closed else "in-flight"

    def covers(self, seq: int) -> bool:
        return self.first_seq <= seq <= self.last_seq

    def failure_reason(self) -> str:
        f = self.failure or {}
        if self.log_only and not f and self.finish_kind not in FAILED_FINISH:
            return f"abandoned ({self.finish_kind or 'no finish'})"
        code = f.get("code") or self.finish_kind or "?"
        msg = f.get("message") or ""
        return f"{code}: {msg}" if msg else str(code)

    def to_dict(self) -> JsonObj:
        return {"turn": self.turn, "step": self.step, "firstSeq": self.first_seq, "lastSeq": self.last_seq,
                "chunks": self.chunks, "status": self.status, "finish": self.finish, "usage": self.usage,
                "messageSeq": self.message_seq, "retrySeq": self.retry_seq,
                "retryStartedSeq": self.retry_started_seq, "hiddenByDefault": self.hidden_by_default}


_TEXT_KEEP = 4096


_INT_ONLY = {int}


def cited_ints(seqs: object) -> list[int]:
    """The seqs a ``sourceEventSeqs`` value cites: its integers.  A hostile value (a null or a string
    among the seqs, a string, an object) cites only those; the checks report the row
    (``bad-source-seqs``), and the other rows read as usual."""
    return [s for s in seqs if type(s) is int] if isinstance(seqs, list) else []


_ODD = -(1 << 63)          # a turn or step that is no int of 8 bytes (kept in ``SealedAttempts.odd``)


class SealedAttempts:
    """Failed attempts a tracker keeps only for the count of dispatches (:meth:`AttemptTracker.seal`), as
    columns (issue 36: ~40 bytes each, not ~250 as objects): their first and last seqs, turn, step and whether
    they were log-only (else their finish kind, error or aborted).  Log order, as the tracker's list."""

    def __init__(self) -> None:
        self.first, self.last, self.turn, self.step = array("q"), array("q"), array("q"), array("q")
        self.kind = bytearray()              # 0: error, 1: aborted, 2: log-only
        self.odd: dict[int, _StepKey] = {}   # position -> (turn, step) when either is no 8-byte int

    def __len__(self) -> int:
        return len(self.first)

    def add(self, a: Attempt) -> None:
        i = len(self.first)
        self.first.append(a.first_seq)
        self.last.append(a.last_seq)
        t, st = a.turn, a.step
        if type(t) is int and type(st) is int and _ODD < t < -_ODD and _ODD < st < -_ODD:
            self.turn.append(t)
            self.step.append(st)
        else:
            self.turn.append(_ODD)
            self.step.append(_ODD)
            self.odd[i] = (t, st)
        self.kind.append(2 if a.log_only else FAILED_FINISH.index(a.finish_kind or "error"))

    def key(self, i: int) -> _StepKey:
        got = self.odd.get(i)
        return got if got is not None else (self.turn[i], self.step[i])

    def find(self, lo: int) -> Optional[int]:
        """The position :meth:`AttemptTracker.cite`'s scan (newest first) stops at for cited seq ``lo``."""
        first, last = self.first, self.last
        for i in range(len(first) - 1, -1, -1):
            if first[i] <= lo <= last[i]:
                return i
            if last[i] < lo:
                return None
        return None

    def take(self, i: int, same: Optional[Attempt]) -> Attempt:
        """Attempt ``i`` as an object (``same``: the tracker's object of it, when it still has one), removed."""
        turn, step = self.key(i)
        a = same if same is not None else Attempt(
            turn=turn, step=step, first_seq=self.first[i], last_seq=self.last[i], closed=True,
            finish=None if self.kind[i] == 2 else {"kind": FAILED_FINISH[self.kind[i]]}, log_only=self.kind[i] == 2)
        for col in (self.first, self.last, self.turn, self.step, self.kind):
            del col[i]
        if self.odd:
            self.odd = {j - (j > i): k for j, k in self.odd.items() if j != i}
        return a


class AttemptTracker:
    """Streaming attempt grouping; ``attempts`` in order of first chunk."""

    def __init__(self, keep_text: bool = True):
        self.attempts: list[Attempt] = []
        self.open_attempts: dict[_StepKey, Attempt] = {}    # (turn, step) -> open attempt
        self._last: dict[_StepKey, Attempt] = {}    # (turn, step) -> last attempt
        self.keep_text = keep_text
        self.pruned = 0                              # settled, non-failed attempts dropped by prune()
        # prune() re-checks only what may have changed since the last one: attempts[:_stable] (and
        # every _last entry but those in _last_new) were failed and not open then; an attempt
        # failed stays failed until a message commits it (which resets both)
        self._stable = 0
        self._last_stable = False
        self._last_new: set[_StepKey] = set()
        # a pass over a part of a log (app/log/query/timeline_split.py): the step keys looked up and not found,
        # and ("cite", seq) for a message citing a seq below ``floor`` (what an earlier part might have answered)
        self.misses: Optional[set[Any]] = None
        self.floor = -1
        self.sealed = SealedAttempts()              # failed attempts before ``attempts`` (:meth:`seal`)

    def seal(self) -> None:
        """Keep the failed attempts of the stable prefix as columns only (a tracker that only counts dispatches:
        the checkpoint builder).  ``attempts``, :meth:`attempt_of` and :attr:`failed` then leave them out;
        :attr:`count` and :meth:`cite` still see them."""
        if self.open_attempts or not self._stable:
            return
        for a in self.attempts[:self._stable]:
            self.sealed.add(a)
        del self.attempts[:self._stable]
        self._stable = 0

    @property
    def count(self) -> int:
        return self.pruned + len(self.attempts) + len(self.sealed)

    def prune(self) -> None:
        """Forget settled attempts that did not fail (bounded memory on huge logs); keep failed ones."""
        s = self._stable
        tail = self.attempts[s:]
        keep = [a for a in tail if (a.message_seq is None and (a.log_only or (a.finish is not None and a.finish.get("kind")
                                                                             in FAILED_FINISH)))
                or (a.turn, a.step) in self.open_attempts]           # (a.failed, inline: once per attempt per turn)
        self.pruned += len(tail) - len(keep)
        self.attempts[s:] = keep
        if self._last_stable:
            for k in self._last_new:
                a = self._last.get(k)
                if a is not None and not (k in self.open_attempts or a.failed):
                    del self._last[k]
        else:
            self._last = {k: a for k, a in self._last.items() if k in self.open_attempts or a.failed}
        self._last_new = set()
        if not self.open_attempts:                           # every attempt and _last entry kept is a failed one
            self._stable = len(self.attempts)
            self._last_stable = True
        else:                                        # (entries kept for an open key: all re-checked next time)
            self._last_stable = False

    def apply(self, ev: Event) -> None:
        t = ev.type
        stream = embedded_stream(ev) if t in ("assistant/message", "assistant/attempt") else None
        if stream is not None:
            self._settle_embedded(ev, stream)
            return
        if t == "assistant/chunk":
            d = ev.data if isinstance(ev.data, dict) else {}
            c = d.get("chunk")
            if not isinstance(c, dict):
                c = {}
            self.add_chunk(ev.seq, (d.get("turn"), d.get("step")), c.get("type"), c.get("reason"), c.get("usage"),
                           c.get("text", ""))
        elif t == "assistant/message":
            d = ev.data if isinstance(ev.data, dict) else {}
            self.cite(ev.seq, (d.get("turn"), d.get("step")), ev.source_event_seqs, d.get("interrupted"))
        elif t in ("llm/retry", "llm/retry-started"):
            d = ev.data if isinstance(ev.data, dict) else {}
            self.retry(t, ev.seq, (d.get("turn"), d.get("step")), d.get("retry"))
        elif t in ("step/end", "turn/end", "turn/start", "step/start"):
            d = ev.data if isinstance(ev.data, dict) else {}
            self.boundary(t, d.get("turn"))

    # the steps of :meth:`apply`, one per kind of event (whole-log passes that decode rows into their own
    # typed records call them directly: :mod:`app.log.format.fastrows`)
    def add_chunk(self, seq: int, key: _StepKey, ct: object, reason: object, usage: object, text: object) -> None:
        """An ``assistant/chunk`` of step ``key`` (its chunk's type, reason, usage and text as logged)."""
        a = self.open_attempts.get(key)
        if a is None:
            a = Attempt(turn=key[0], step=key[1], first_seq=seq, last_seq=seq)
            self.attempts.append(a)
            self.open_attempts[key] = a
            self._last[key] = a
            self._last_new.add(key)
        a.last_seq = seq
        a.chunks += 1
        if ct == "finish":
            a.finish = reason if isinstance(reason, dict) else {"kind": str(reason)}
            del self.open_attempts[key]
        elif ct == "usage":
            a.usage = usage
        elif ct in ("text-delta", "reasoning-delta") and self.keep_text:
            if sum(map(len, a.text)) < _TEXT_KEEP:
                a.text.append(str(text))

    def cite(self, seq: int, key: _StepKey, cited: Optional[list[Any]], interrupted: object) -> None:
        """An ``assistant/message`` (no embedded stream) citing ``cited`` (its ``sourceEventSeqs``)."""
        target: Optional[Attempt] = None
        if cited:
            if isinstance(cited, list) and set(map(type, cited)) == _INT_ONLY:
                ints = cited                          # (the writer's: every seq an int; one C-level look)
            else:
                ints = cited_ints(cited)
            lo = min(ints) if ints else -1
            if self.misses is not None and ints and lo < self.floor:
                self.misses.add(("cite", lo))
            for a in reversed(self.attempts) if ints else ():
                if a.covers(lo):
                    target = a
                    break
                if a.last_seq < lo:
                    break
            else:
                if ints and len(self.sealed):
                    target = self._unseal(lo)
        elif cited is None:
            last = self._last.get(key)
            if last is None and self.misses is not None:
                self.misses.add(key)
            if last is not None and last.message_seq is None and not last.failed:
                target = last
        if target is not None:
            if target.failed:                   # a failed attempt stops being one: prune re-checks all (the
                self._stable = 0                # others are never in the stable prefix, which holds failed ones)
                self._last_stable = False
            target.message_seq = seq
            target.interrupted = bool(interrupted)
            self.open_attempts.pop((target.turn, target.step), None)

    def _unseal(self, lo: int) -> Optional[Attempt]:
        """The sealed attempt covering cited seq ``lo``, back at the head of ``attempts`` (None: none)."""
        i = self.sealed.find(lo)
        if i is None:
            return None
        same = self._last.get(self.sealed.key(i))
        a = self.sealed.take(i, same if same is not None and same.first_seq == self.sealed.first[i] else None)
        self.attempts.insert(0, a)
        return a

    def retry(self, t: str, seq: int, key: _StepKey, number: Any) -> None:
        """``llm/retry`` (``t``) or ``llm/retry-started`` of step ``key``."""
        a = self._last.get(key)
        if a is None and self.misses is not None:
            self.misses.add(key)
        if a is not None:
            if t == "llm/retry":
                a.retry_seq = seq
                a.retry_number = number
            else:
                a.retry_started_seq = seq

    def boundary(self, t: str, turn: object) -> None:
        """A step or turn boundary (``t``) of ``turn``: its open attempts (at a turn boundary: all) close."""
        for key in [k for k in self.open_attempts if k[0] == turn or t.startswith("turn")]:
            self.open_attempts.pop(key).closed = True

    def apply_deltas(self, turn: Optional[int], step: Optional[int], seq0: int, n: int) -> None:
        """``apply`` of ``n`` consecutive delta chunks (a packed row, seqs ``seq0..seq0+n-1``)
        when text is not kept: the attempt bookkeeping without building the events."""
        if self.keep_text:
            raise ValueError("apply_deltas keeps no text: use apply() per event")
        key = (turn, step)
        a = self.open_attempts.get(key)
        if a is None:
            a = Attempt(turn=turn, step=step, first_seq=seq0, last_seq=seq0)
            self.attempts.append(a)
            self.open_attempts[key] = a
            self._last[key] = a
            self._last_new.add(key)
        a.last_seq = seq0 + n - 1
        a.chunks += n

    def _settle_embedded(self, ev: Event, stream: JsonList) -> None:
        d = ev.data
        if not self.keep_text:                  # (no text kept: its text and times are not even summed)
            chunks, finish, usage = settle_summary(stream)
            self.settle(ev.type, ev.seq, (d.get("turn"), d.get("step")), chunks, finish,
                        usage if usage is not None else d.get("usage"), d.get("interrupted"))
            return
        summ = stream_summary(stream)
        self.settle(ev.type, ev.seq, (d.get("turn"), d.get("step")), summ["chunks"], summ["finish"],
                    summ["usage"] if summ["usage"] is not None else d.get("usage"), d.get("interrupted"), summ["text"])

    def settle(self, t: str, seq: int, key: _StepKey, chunks: int, finish: Optional[JsonObj], usage: object,
               interrupted: object, text: Iterable[str] = ()) -> None:
        """A v2+ settlement (``t``: ``assistant/message`` or the log-only ``assistant/attempt``) whose embedded
        stream holds ``chunks`` chunks, its ``finish`` reason and ``usage`` (:func:`stream_summary`)."""
        a = Attempt(turn=key[0], step=key[1], first_seq=seq, last_seq=seq, chunks=chunks, finish=finish,
                    usage=usage, closed=True)
        if t == "assistant/message":
            a.message_seq = seq
            a.interrupted = bool(interrupted)
        else:
            a.log_only = True
        if self.keep_text:
            txt, n = [], 0
            for x in text:
                if n >= _TEXT_KEEP:
                    break
                txt.append(x)
                n += len(x)
            a.text = txt
        self.open_attempts.pop(key, None)
        self.attempts.append(a)
        self._last[key] = a
        self._last_new.add(key)

    def at_rest(self, part: bool = False) -> bool:
        """Nothing open, looked up for a part (unless ``part``) or changed since the last :meth:`prune` (or a fresh
        tracker): where a turn of committed settlements may be applied by :meth:`committed` (the timeline's whole turns
        in C).  ``part``: a pass over a later part of a log (:attr:`misses` set) may be at rest too: :meth:`committed`
        looks nothing up (a turn's settlements are new attempts, its other steps go through :meth:`retry` and
        :meth:`settle`, which record their misses as row by row)."""
        return not self.open_attempts and (part or self.misses is None) and not self._last_new \
            and self._stable == len(self.attempts) and (self._last_stable or not self._last)

    def committed(self, keys: list[_StepKey]) -> None:
        """At rest (:meth:`at_rest`): what :meth:`settle` of one committed ``assistant/message`` per step key of
        ``keys`` (no failed attempt among them) and then :meth:`prune` leave."""
        for k in keys:
            self._last.pop(k, None)
        self.pruned += len(keys)
        self._last_stable = True

    def carried(self) -> tuple[bool, set[_StepKey]]:
        """(whether an attempt is open, the step keys of the last attempts kept): what a pass over a later
        part of the log would not know."""
        return bool(self.open_attempts), set(self._last)

    def attempt_of(self, seq: int) -> Optional[Attempt]:
        # attempts are ordered by first_seq; binary search (the last one first: a pass over a log asks it
        # about the chunk it has just added, and the search would end there)
        atts = self.attempts
        if atts:
            a = atts[-1]
            if a.first_seq <= seq:
                return a if seq <= a.last_seq else None
        lo, hi = 0, len(atts)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.attempts[mid].first_seq <= seq:
                lo = mid + 1
            else:
                hi = mid
        if lo and self.attempts[lo - 1].covers(seq):
            return self.attempts[lo - 1]
        return None

    @property
    def failed(self) -> list[Attempt]:
        return [a for a in self.attempts if a.failed]


def find_attempts(events: Iterable[Event], keep_text: bool = True) -> AttemptTracker:
    """The attempts of ``events``; ``keep_text=False``: without their text (no pass over a settlement's stream
    for it: what the history's rows need, which show a failed attempt's text from its own event)."""
    tr = AttemptTracker(keep_text)
    for ev in events:
        tr.apply(ev)
    return tr

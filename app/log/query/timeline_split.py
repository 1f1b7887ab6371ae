"""The timeline of a big raw JSONL log in two parts read at the same time (issue 31), cut where a turn starts.

:func:`split_point` finds a row start near the middle of the log whose row is a ``turn/start`` (told by its
first key, as dsh writes it: a newline then ``{"type":"turn/start",``; a JSON string never holds a raw
newline).  :func:`part` gives the spans of the rows before it (``stop``) or from it on (``start``), and what
the other part would have told or asked; :func:`merge` joins the two into exactly the spans of one pass, or
says it cannot (None: the caller makes one pass).

What crosses a turn boundary in one pass, and how the parts stand for it:

* the model, the context window and the last prompt size (``model``, ``contextWindow`` of attempts,
  ``tokensBefore`` of compactions): the second part starts with a :class:`Mark` for each, replaced by the
  first part's final value in :func:`merge`;
* the last logged time (a crash-repaired span's ``atLeastMs``): the second part must have one of its own
  whenever the first has one;
* the last dispatch mark per turn and the last attempt per step (the attempt tracker): the second part
  records the keys it looked up and did not find (and any message citing a seq before its first row); none of
  them may be a key the first part ended with;
* anything open at the cut (a turn, step, tool call, compaction, approval or retry without its end, a held tool
  span, an attempt not given out, a compaction waiting for the next prompt size): the first part must end with
  none.

Every part reads the turns the row scan in C reads whole as one pass does (``Builder.turn_c``, with the part's probes
in place): such a turn looks up no dispatch mark from before it (its ``turn/start`` drops its turn's), its committed
settlements add attempts and look nothing up, and its retries go through the tracker's ``retry``, which records its
misses as row by row.  A later part's spans cross back to the first part's process as MessagePack
(:func:`packed_part`, :func:`unpacked_part`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Optional, Union, cast

import msgspec

from ..format.payloads import JsonObj
from .timeline import Block, Builder, Settlement, feed

if TYPE_CHECKING:
    from ..index.reader import LogReader

TURN_START = b'\n{"type":"turn/start",'
_LOOK = 1 << 20               # bytes read at a time looking for a turn start
_LOOK_MAX = 64 << 20          # … and at most this far from the middle


class Mark:
    """"The value at the end of the first part" (pickled as its name, so it stays the one object)."""
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return _mark, (self.name,)

    def __repr__(self) -> str:
        return f"Mark({self.name})"


MARKS = {n: Mark(n) for n in ("model", "contextWindow", "tokensBefore")}


def _mark(name: str) -> Mark:
    return MARKS[name]


class _Probe(dict[Any, Any]):
    """A dict that records the keys looked up with ``get`` and not found."""

    def __init__(self) -> None:
        super().__init__()
        self.missed: set[Any] = set()

    def get(self, key: Any, default: Any = None) -> Any:
        if key in self:
            return self[key]
        self.missed.add(key)
        return default


_MARK_EXT = 1


def _enc_mark(x: Any) -> Any:
    if type(x) is Mark:
        return msgspec.msgpack.Ext(_MARK_EXT, x.name.encode())
    raise NotImplementedError(type(x))


_PART_ENC = msgspec.msgpack.Encoder(enc_hook=_enc_mark)


def packed_part(got: tuple[list[JsonObj], JsonObj]) -> tuple[Union[bytes, list[JsonObj]], JsonObj]:
    """A part's (spans, state) as a process sends it: its spans as MessagePack bytes (each :class:`Mark` an extension
    naming it), which another process reads back several times faster than pickled dicts
    (:func:`unpacked_part`; the spans hold JSON values, lists and dicts only, as the cache saves them); as they are when
    MessagePack cannot hold them (an integer of more than 64 bits, a string that is no UTF-8)."""
    spans, state = got
    try:
        return _PART_ENC.encode(spans), state
    except (TypeError, ValueError, OverflowError, NotImplementedError):
        return got


def unpacked_part(got: tuple[Union[bytes, list[JsonObj]], JsonObj]) -> tuple[list[JsonObj], JsonObj]:
    """The (spans, state) of :func:`packed_part`'s form (the state's ``marks``: how many marks the spans hold, which
    :func:`merge_all` then looks for only until it has found them all)."""
    spans, state = got
    if not isinstance(spans, bytes):
        return spans, state
    marks = [0]

    def mark(code: int, data: memoryview) -> Any:
        if code != _MARK_EXT:
            raise ValueError(f"unknown extension {code}")
        marks[0] += 1
        return MARKS[bytes(data).decode()]
    out = cast(list[JsonObj], msgspec.msgpack.Decoder(ext_hook=mark).decode(spans))
    return out, {**state, "marks": marks[0]}


def split_point(reader: LogReader) -> Optional[int]:
    """The byte offset of a ``turn/start`` row near the middle of a raw JSONL log (before its repair cut), else
    None (another kind of log, an envelope-free one, no turn start near the middle)."""
    got = split_points(reader, 2)
    return got[0] if got else None


def split_points(reader: LogReader, n: int) -> list[int]:
    """Up to ``n - 1`` byte offsets, increasing, of ``turn/start`` rows near ``k / n`` of a raw JSONL log (before
    its repair cut): where to cut it into parts ([] for another kind of log or an envelope-free one)."""
    src = reader.source
    if src.kind != "jsonl" or reader.envelope_free or not hasattr(src, "pread_into"):
        return []
    lo = src.header_end
    cut = reader.tail_state().cut_pos
    out: list[int] = []
    for k in range(1, n):
        at = max(lo + (src.size - lo) * k // n, out[-1] if out else 0)
        pos = _turn_start_from(src, at)
        if pos is None or (cut is not None and not (type(cut) is int and cut > pos)):
            break
        if not out or pos > out[-1]:
            out.append(pos)
    return out


def _turn_start_from(src: Any, at: int) -> Optional[int]:
    """The start of the first ``turn/start`` row after byte ``at`` (within :data:`_LOOK_MAX`), else None."""
    end = min(src.size, at + _LOOK_MAX)
    while at < end:
        n = min(_LOOK, end - at)
        buf = src.pread_into(bytearray(min(n + len(TURN_START), src.size - at)), at)
        i = buf.find(TURN_START)
        if i >= 0:
            return int(at + i + 1)
        at += n
    return None


def _floor(items: Iterator[Any], b: Builder) -> Iterator[Any]:
    """``items``, the tracker's floor set to the seq of the first."""
    for it in items:
        t = type(it)
        b.at.floor = it.seq0 if t is Block else it.ev.seq if t is Settlement else \
            (it[0][1] if len(it) == 2 else it[0][2][2] if len(it) == 3 else it[1]) if t is tuple else it.seq
        yield it
        break
    yield from items


def part(reader: LogReader, start: Optional[int], stop: Optional[int],
         sink: Optional[Callable[[list[JsonObj]], None]] = None, batch: int = 1 << 14) -> tuple[list[JsonObj], JsonObj]:
    """The spans of the rows before byte ``stop`` (the first part) or from byte ``start`` on (the second, with
    the spans its end gives out), and what :func:`merge` needs of it.  ``sink``: given the spans in batches of about
    ``batch`` as the pass makes them (a part's process sends them while it reads on, and the first part's process
    reads them back meanwhile), the rest returned; a span the pass may still change (a compaction waiting for its
    ``tokensAfter``) and the spans after it are held until it is final."""
    from .timeline_rows import timeline_items
    b = Builder(True)
    items: Iterator[Any] = timeline_items(reader, start, stop)
    if start is not None:
        b.model, b.window, b.last_input = cast(Any, MARKS["model"]), cast(Any, MARKS["contextWindow"]), \
            cast(Any, MARKS["tokensBefore"])
        probe = _Probe()
        b.dispatch = probe
        b.at.misses = set()
        items = _floor(items, b)
    spans: list[JsonObj] = []
    if sink is None:
        spans = list(feed(b, items))
    else:
        for sp in feed(b, items):
            spans.append(sp)
            if len(spans) >= batch:
                held = {id(c) for c in b.compactions}
                k = next((i for i, x in enumerate(spans) if id(x) in held), len(spans)) if held else len(spans)
                if k:
                    sink(spans[:k])
                    del spans[:k]
    if stop is None:
        spans += b.finish()
    state: JsonObj = {"time": b.last_time}
    if start is not None:
        state.update(missed=probe.missed, misses=b.at.misses)
    if stop is not None:
        open_attempt, last = b.at.carried()
        clean = not (b.open or b.calls or b.step_tools or b.compactions or b.summaries or b.times or open_attempt) \
            and b.turn is None and all(a.first_seq in b.done for a in b.at.attempts)
        state.update(clean=clean, model=b.model, contextWindow=b.window, tokensBefore=b.last_input,
                     dispatch=set(b.dispatch), last=last)
    return spans, state


def merge(first: tuple[list[JsonObj], JsonObj], second: tuple[list[JsonObj], JsonObj]) -> Optional[list[JsonObj]]:
    """The spans of one pass from the two parts' (in the order one pass gives them out), or None when the
    second part may have needed what only the first knew."""
    return merge_all([first, second])


def merge_all(parts: list[tuple[list[JsonObj], JsonObj]]) -> Optional[list[JsonObj]]:
    """The spans of one pass from consecutive parts' (the first from the log's start, the last to its end, each
    other from a ``start`` to a ``stop``), or None when a part may have needed what only the parts before it
    knew.  What the parts before a part ended with is taken as the union of their keys (the last dispatch
    marks, the last attempts: a superset of what one pass would still hold, so a doubt refuses, never joins)
    and the last value of each :class:`Mark` (model, context window, prompt size) and of the last time."""
    s1, a = parts[0]
    out = list(s1)
    carried = {"model": a["model"], "contextWindow": a["contextWindow"], "tokensBefore": a["tokensBefore"]}
    dispatch, last, time = set(a["dispatch"]), set(a["last"]), a["time"]
    clean = a["clean"]
    for s2, z in parts[1:]:
        if not clean or z["missed"] & dispatch or (z["time"] is None and time is not None):
            return None
        if any(k in last or k[0] == "cite" for k in z["misses"]):
            return None
        left = z.get("marks", -1)              # (-1: how many is not known)
        for s in s2 if left else ():
            for key, mark in MARKS.items():
                if s.get(key) is mark:
                    s[key] = carried[key]
                    left -= 1
            if not left:
                break
        out += s2
        if "clean" in z:                       # (a part with a stop: what the next one may need)
            clean = z["clean"]
            for key, mark in MARKS.items():
                if z[key] is not mark:
                    carried[key] = z[key]
            dispatch |= z["dispatch"]
            last |= set(z["last"])
        if z["time"] is not None:
            time = z["time"]
    return out


__all__ = ["MARKS", "Mark", "merge", "merge_all", "packed_part", "part", "split_point", "split_points", "unpacked_part"]

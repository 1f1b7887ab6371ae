"""The timeline's records of settlement rows (``assistant/message``, ``assistant/attempt``; issue 31).

A v2+ log's bytes are mostly settlement rows: the message (its content, the text again) and the embedded stream
(runs of texts with their ``dt``).  The timeline reads none of the text: of a settlement only ``turn``, ``step``,
``interrupted``, ``usage``, the envelope, and of its stream each record's ``type``, ``time``/``time0``, its
``chunk`` (type, reason, usage), the *number* of a run's texts (or args) and the sum of its ``dt``.  These records
leave the message and every run's texts, args and ``dt`` as unparsed JSON (``msgspec.Raw``: still validated as JSON,
never built), counted and summed in C (``tl_count``, ``tl_dtsum`` of the row scanner; :func:`count_py` and
:func:`dtsum_py` here are their definitions).  Where the row scanner is built the whole stream is left raw and
summed by its ``tl_stream`` (a stream of the usual shapes; any other is decoded into the records here and summed by
:func:`stream_summary`, the definition, which ``tests/test_timeline_lean.py`` holds it equal to).

They give what :func:`app.log.format.fastrows.timeline_decoders`' records give, field for field, on every row both
take, and may take rows fastrows refuses only where that refusal is about a field the spans never read (the
message's content, a stream record's ``index``, ``id``...): the exact decoder drops such a field alone, in memory,
and reads the rest as these records do (:func:`app.log.format.versions.field_problems`).  Every field they read is
checked as fastrows checks it (the envelope exactly; ``turn``/``step`` integers, ``usage`` an object, a stream
record an object with a string ``type``, integer times, an object ``chunk``; a ``dt`` other than integers or null,
and an embedded payload ``type`` not the row's, refuse the row: it goes the exact way).
``tests/test_timeline_lean.py`` holds them equal on fixtures, generated and changed rows.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, Optional, Union

import msgspec

from ..format import fastrows as fr
from ..format.model import MAX_SAFE_INT, Event
from ..index.fastindex import load_rowscan_c
from .timeline import Settlement

_NULL = msgspec.Raw(b"null")
_c = load_rowscan_c()
_count_c = getattr(_c, "tl_count", None)
_dtsum_c = getattr(_c, "tl_dtsum", None)
_seqs_c = getattr(_c, "tl_seqs", None)
_SEQS = msgspec.json.Decoder(Optional[list[int]]).decode


class _Chunk(msgspec.Struct, kw_only=True, gc=False):
    type: Any = None
    reason: Any = None
    usage: Any = None


class _Item(msgspec.Struct, kw_only=True, gc=False):
    type: Optional[str] = None
    time: Optional[int] = None
    time0: Optional[int] = None
    chunk: Optional[_Chunk] = None
    dt: msgspec.Raw = _NULL
    texts: msgspec.Raw = _NULL
    args: msgspec.Raw = _NULL


class _MessageData(msgspec.Struct, kw_only=True, gc=False):
    type: Literal["assistant/message"] = "assistant/message"
    turn: int
    step: int
    message: msgspec.Raw
    interrupted: Optional[bool] = None
    usage: Optional[dict[str, Any]] = None
    stream: Optional[list[_Item]] = None


class _AttemptData(msgspec.Struct, kw_only=True, gc=False):
    turn: Optional[int] = None
    step: Optional[int] = None
    usage: Optional[dict[str, Any]] = None
    stream: list[_Item]


_Seq = Annotated[int, msgspec.Meta(ge=0, le=MAX_SAFE_INT)]


class _Message(msgspec.Struct, tag_field="type", tag="assistant/message", forbid_unknown_fields=True, kw_only=True,
               gc=False):
    seq: _Seq
    data: _MessageData
    time: int = 0
    ignorable: Any = None
    surfaceOp: Literal["append"]
    sourceEventSeqs: msgspec.Raw = _NULL


class _Attempt(msgspec.Struct, tag_field="type", tag="assistant/attempt", forbid_unknown_fields=True, kw_only=True,
               gc=False):
    seq: _Seq
    data: _AttemptData
    time: int = 0
    ignorable: Any = None
    surfaceOp: None = None
    sourceEventSeqs: None = None


_DEC: dict[bytes, Callable[[bytes], Any]] = {b"assistant/message": msgspec.json.Decoder(_Message).decode,
                                              b"assistant/attempt": msgspec.json.Decoder(_Attempt).decode}
TAGS = frozenset(_DEC)


class _MessageDataRaw(_MessageData, kw_only=True, gc=False):
    stream: msgspec.Raw = _NULL                  # type: ignore[assignment]


class _AttemptDataRaw(_AttemptData, kw_only=True, gc=False):
    stream: msgspec.Raw                          # type: ignore[assignment]


class _MessageRaw(_Message, tag="assistant/message", kw_only=True, gc=False):
    data: _MessageDataRaw


class _AttemptRaw(_Attempt, tag="assistant/attempt", kw_only=True, gc=False):
    data: _AttemptDataRaw


# the same rows with the stream left as raw JSON, summed by tl_stream (where it is built)
_RAW: dict[bytes, Callable[[bytes], Any]] = {b"assistant/message": msgspec.json.Decoder(_MessageRaw).decode,
                                             b"assistant/attempt": msgspec.json.Decoder(_AttemptRaw).decode}
_stream_c = getattr(_c, "tl_stream", None)
_ANY = msgspec.json.Decoder().decode


def settlement(raw: bytes) -> Union[Event, Settlement, None]:
    """A settlement row read lean (what ``timeline_rows._event`` makes of it with fastrows' records), else None:
    the row goes the exact way."""
    tag = raw[9:raw.find(b'"', 9)]
    dec = _DEC.get(tag)
    if dec is None:
        return None
    summ: Optional[dict[str, Any]] = None
    try:
        rec = _RAW[tag](raw) if _stream_c is not None else dec(raw)
        if type(rec.data.stream) is msgspec.Raw:
            summ = summary_c(rec.data.stream)
            if summ is None and (rec.data.stream != _NULL or type(rec) is _AttemptRaw):
                rec = dec(raw)                  # (a stream tl_stream does not take: its records decoded)
    except fr.DECODE_ERRORS:
        return None
    d = rec.data
    msg = isinstance(rec, _Message)
    ses: Optional[list[int]] = None
    if msg:
        got = cited(rec.sourceEventSeqs, rec.seq)
        if got is False or not fr.usage_ok(d.usage):
            return None
        ses = got
        data = {"turn": d.turn, "step": d.step, "interrupted": d.interrupted, "usage": d.usage}
        typ = "assistant/message"
    else:
        data = {"turn": d.turn, "step": d.step, "usage": d.usage}
        typ = "assistant/attempt"
    ev = Event(seq=rec.seq, type=typ, time=rec.time, data=data, surface_op=rec.surfaceOp,
               source_event_seqs=ses, ignorable=rec.ignorable)
    if summ is None:
        if d.stream is None or type(d.stream) is msgspec.Raw:
            return ev
        summ = stream_summary(d.stream)
    return Settlement(ev, summ) if summ is not None else None


def settled(x: tuple[Any, ...], data: bytes) -> Union[Event, Settlement]:
    """The lean record of a settlement row that the C row scan read (``tl_scan``'s SETTLE tuple, its ranges in
    ``data``): what :func:`settlement` gives of that row (``tests/test_timeline_tlc.py`` holds them equal)."""
    code, seq, time, turn, step, inter, use, ses, st, ign = x
    b = memoryview(data)
    usage = _ANY(b[use[0]:use[1]]) if use is not None else None
    ignorable = _ANY(b[ign[0]:ign[1]]) if ign is not None else None
    if code == 3:
        ev = Event(seq=seq, type="assistant/message", time=time,
                   data={"turn": turn, "step": step, "interrupted": inter, "usage": usage}, surface_op="append",
                   source_event_seqs=ses, ignorable=ignorable)
    else:
        ev = Event(seq=seq, type="assistant/attempt", time=time, data={"turn": turn, "step": step, "usage": usage},
                   ignorable=ignorable)
    if st is None:
        return ev
    return Settlement(ev, _summary(b, st))


def _summary(b: memoryview, got: tuple[Any, ...]) -> dict[str, Any]:
    """:func:`summary_c`'s dict of ``tl_stream``'s answer (its ranges in ``b``)."""
    chunks, time0, time1, fin, use = got
    finish: Optional[dict[str, Any]] = None
    if fin is not None:
        r = _ANY(b[fin[0]:fin[1]]) if fin else None
        finish = r if isinstance(r, dict) else {"kind": str(r)}
    usage = _ANY(b[use[0]:use[1]]) if use is not None else None
    return {"chunks": chunks, "finish": finish, "usage": usage, "time0": time0, "time1": time1}


def summary_c(stream: msgspec.Raw) -> Optional[dict[str, Any]]:
    """:func:`stream_summary` of a raw stream by ``tl_stream`` (None: a stream it does not take, or null)."""
    got = _stream_c(stream) if _stream_c is not None else None
    if got is None:
        return None
    return _summary(memoryview(stream), got)


def cited(raw: msgspec.Raw, seq: int) -> Union[list[int], None, Literal[False]]:
    """A message's ``sourceEventSeqs`` as the spans read it: None (null or absent), ``[]``, or the first seq it
    cites (what :meth:`~app.log.fold.attempts.AttemptTracker.cite` reads of a list of integers: that it is not
    empty, its smallest); False when fastrows would refuse it (not integers, a seq at or after the row's own,
    repeated seqs).  Read in C (``tl_seqs``) when the seqs are integers in increasing order, as dsh writes them."""
    got = (_seqs_c or seqs_py)(raw)
    if got is None:                                 # (another shape: decoded and checked as fastrows does)
        try:
            ses = _SEQS(raw)
        except msgspec.DecodeError:
            return False
        if ses and (max(ses) >= seq or len(set(ses)) != len(ses)):
            return False
        return [min(ses)] if ses else ses
    n, lo, hi = got
    if n < 0:
        return None
    if n and hi >= seq:
        return False
    return [lo] if n else []


def stream_summary(stream: list[_Item]) -> Optional[dict[str, Any]]:
    """``timeline_rows.stream_summary`` of the records (None: a ``dt`` that is neither null nor integers)."""
    count = _count_c or count_py
    dtsum = _dtsum_c or dtsum_py

    def run(rec: Any, field: Optional[str]) -> Optional[tuple[int, int]]:
        if dtsum(rec.dt, 0) is None:               # (every record's dt: integers or null, as fastrows types it)
            raise _BadDt
        if field is None:
            return None
        n = count(rec.args if field == "args" else rec.texts)
        if n <= 0:
            return None
        s = dtsum(rec.dt, n - 1)
        if s is None:
            raise _BadDt
        return n, s
    try:
        return summarize_runs(stream, run)
    except _BadDt:
        return None


class _BadDt(Exception):
    """A run record's ``dt`` is neither null nor integers."""


def summarize_runs(stream: list[Any], run: Callable[[Any, Optional[str]], Optional[tuple[int, int]]]) -> dict[str, Any]:
    """The chunk count, finish, usage and first and last chunk time of a stream's records: a ``chunk`` record
    read here, any other by ``run(record, its payload field or None)``, which gives (members, their time span
    from ``time0``) or None (a record that adds nothing); the one loop of both lean stream readers."""
    chunks = 0
    finish: Optional[dict[str, Any]] = None
    usage: Any = None
    time0: Any = None
    time1: Any = None
    for rec in stream:
        rt = rec.type
        if rt == "chunk":
            c = rec.chunk
            if c is None:
                continue
            chunks += 1
            time1 = rec.time if rec.time is not None else 0
            if time0 is None:
                time0 = time1
            ct = c.type
            if ct == "finish":
                r = c.reason
                finish = r if isinstance(r, dict) else {"kind": str(r)}
            elif ct == "usage":
                usage = c.usage
            continue
        got = run(rec, fr.STREAM_RUNS.get(rt) if rt is not None else None)
        if got is None:
            continue
        n, span = got
        t = rec.time0 if rec.time0 is not None else 0
        if time0 is None:
            time0 = t
        time1 = t + span
        chunks += n
    return {"chunks": chunks, "finish": finish, "usage": usage, "time0": time0, "time1": time1}


# ----------------------------------------------------------------------------- definitions of the C helpers

_INTS = re.compile(rb"\s*\[\s*(?:-?(?:0|[1-9][0-9]{0,17})(?:\s*,\s*-?(?:0|[1-9][0-9]{0,17}))*)?\s*\]\s*")


def count_py(raw: Union[bytes, msgspec.Raw]) -> int:
    """The elements of the JSON array ``raw``, -1 when it is not an array."""
    v = json.loads(bytes(memoryview(raw)))
    return len(v) if isinstance(v, list) else -1


def dtsum_py(raw: Union[bytes, msgspec.Raw], k: int) -> Optional[int]:
    """0 for null; for an array of integers (each ``-?[0-9]{1,18}``) the sum of its first ``k``, None when a partial
    sum leaves 64 bits; None for anything else."""
    b = bytes(memoryview(raw))
    if b.strip(b" \t\r\n") == b"null":
        return 0
    if not _INTS.fullmatch(b):
        return None
    total = 0
    for v in json.loads(b)[:max(k, 0)]:
        total += v
        if not -2 ** 63 <= total < 2 ** 63:
            return None
    return total


def seqs_py(raw: Union[bytes, msgspec.Raw]) -> Optional[tuple[int, int, int]]:
    """(-1, 0, 0) for null; (n, first, last) for an array of n integers (each ``-?[0-9]{1,18}``) in strictly
    increasing order; None for anything else."""
    b = bytes(memoryview(raw))
    if b.strip(b" \t\r\n") == b"null":
        return (-1, 0, 0)
    if not _INTS.fullmatch(b):
        return None
    v = json.loads(b)
    if any(a >= c for a, c in zip(v, v[1:])):
        return None
    return (len(v), v[0], v[-1]) if v else (0, 0, 0)

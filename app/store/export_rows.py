"""The rows an export reads, streamed (no Qt): the logical face row by row, packed chunk rows
written without building their events, rows an export does not show left undecoded.

:func:`logical_rows` walks the stored rows of the logical face (the rows at and after the repair cut
left out; the closure is the caller's) and reports progress in bytes per segment.
:func:`logical_jsonl` is the logical export's text: a packed chunk row that the lean decoder of
:mod:`app.log.format.fastrows` accepts is written member by member from its lists (the same bytes
as its expanded events' envelopes, ``tests/test_export_stream.py``); any other row takes the exact
decode (:meth:`~app.log.index.reader.LogReader.decode_segment`'s), in its place.
:func:`row_type` reads only a row's ``type`` (the rest is parsed, never built), so a pass can leave
out rows of types it does not use: they are events of that type or bad rows, never anything else.
"""
from __future__ import annotations

import gc
from itertools import accumulate, count
from typing import Any, Optional, cast
from collections.abc import Callable, Iterator

import msgspec

from ..log.format import fastrows as fr
from ..log.format.lazyrows import PACKED_PREFIXES as _PACKED_PREFIXES
from ..log.format.limits import MAX_DEPTH, MAX_ROW_BYTES, nested_over
from ..log.format.model import MAX_SAFE_INT, Event, PACKED_TAGS, is_event
from ..log.format.versions import DATA_TYPE
from ..log.index.fastindex import load_rowscan_c
from ..log.index.reader import LogReader
from ..log.source.sources import Segment
from .redact import Redactor, quiet_values

Progress = Optional[Callable[[int, int], None]]
Row = tuple[Any, int, Optional[int], bytes, bool]      # (pos, text offset, line, raw, complete)

_enc = msgspec.json.Encoder()
_decode = msgspec.json.Decoder().decode          # (the codec's generic decoder: the same answer)
_native = load_rowscan_c()       # (its packed_lines writes a packed row's lines; None: the Python way)
_row_type_c = getattr(_native, "ex6_row_type", None)     # (row_type from a row's bytes: the exp6 section)
CHUNK_BYTES = 1 << 20            # text handed to the writer at a time
PROGRESS_ROWS = 64               # rows between two progress reports (and cancellation points) in a segment


class _TypeOnly(msgspec.Struct, gc=False):
    type: str


_type_of = msgspec.json.Decoder(_TypeOnly).decode


def row_type(raw: bytes) -> Optional[str]:
    """The ``type`` string of a JSON object row (None when the row is not one: the exact decode decides).
    Read from the row's first bytes when its only ``"type"`` is the first key and nothing in it is
    written with a ``\\u`` escape (so no other spelling of the key can follow), else parsed.  A row that is
    not valid JSON may get what its first bytes say: it is a bad row, which gives no event either way.  In C
    where built (``ex6_row_type``: its only top-level ``type`` key read from the bytes, any key spelled with an
    escape sending the row the exact way), else the quick read below."""
    if _row_type_c is not None and type(raw) is bytes:
        got: Optional[str] = _row_type_c(raw)
        if got is not None:
            return got
    if raw.startswith(b'{"type":"'):
        end = raw.find(b'"', 9)
        t = raw[9:end]
        if end > 0 and b"\\" not in t and raw.count(b'"type"') == 1 and b"\\u" not in raw:
            try:
                return t.decode("utf-8")
            except UnicodeDecodeError:
                pass
    try:
        return _type_of(raw).type
    except (msgspec.DecodeError, RecursionError):
        return None


def _packed(tag: str, call: bool) -> Any:
    """The lean packed row of ``tag`` (fastrows' shape), a tool-call row telling an absent ``name`` from null."""
    if call:
        fields: list[Any] = [("turn", int), ("step", int), ("index", int), ("dt", list[int]), ("id", Any),
                             ("args", list[str]), ("name", Any, msgspec.UNSET)]
    else:
        fields = [("turn", int), ("step", int), ("index", int), ("dt", list[int]), ("texts", list[str])]
    data = msgspec.defstruct(f"_ExportPacked_{tag}", fields, forbid_unknown_fields=True, kw_only=True, gc=False)
    return msgspec.defstruct(f"_ExportRow_{tag}", [("seq", int, msgspec.field(name="seq0")), ("time0", int),
                                                   ("data", data)],
                             tag_field="type", tag=tag, forbid_unknown_fields=True, kw_only=True, gc=False,
                             namespace={"K": fr.PACKED_CALL if call else fr.PACKED_TEXT, "T": tag})


_PACKED_DECODERS = {tag.encode(): msgspec.json.Decoder(_packed(tag, tag == "tool-call-chunks")).decode
                    for tag in PACKED_TAGS}


def packed_record(reader: LogReader, raw: bytes) -> Any:
    """The lean record of a packed chunk row when the exact decode would expand it with no problem
    (so it may be read from its lists), else None.  Never for a v2+ log (packed rows are bad rows there)
    or a log whose rows carry no envelope."""
    if reader.version >= 2 or reader.codec.envelope_seqs is not None or not raw.startswith(b'{"type":"'):
        return None
    tag = raw[9:raw.find(b'"', 9)]
    dec = _PACKED_DECODERS.get(tag)
    if dec is None or len(raw) > MAX_ROW_BYTES:
        return None
    # a text row that decodes has the Struct's depth (3) and only strings msgspec checked as UTF-8; a
    # tool-call row's free ``id``/``name`` values still need the depth and UTF-8 checks
    if tag == b"tool-call-chunks" and fr.refused_rows([raw], False):
        return None
    try:
        rec = dec(raw)
    except fr.DECODE_ERRORS:
        return None
    if rec.seq < 0 or not fr.packed_members(rec):
        return None
    return rec


def logical_rows(reader: LogReader, progress: Progress = None, logical: bool = True) -> Iterator[Row]:
    """Every stored row of the logical face (``logical=False``: of the physical one), oldest first (bad
    segments left out: they hold no event).  ``progress(done, total)`` in bytes, never going back: after
    each segment, and every :data:`PROGRESS_ROWS` rows of a file whose rows are placed by byte offset."""
    cut: Any = reader.tail_state().cut_pos if logical else None     # (a RowPos: an int or a tuple, as the rows')
    total = max(1, reader.physical_total())
    done = 0
    for seg in reader.source.forward():
        if not seg.bad:
            for k, row in enumerate(seg.split_rows(), 1):
                if cut is not None and row[0] >= cut:
                    return
                yield row
                if progress and k % PROGRESS_ROWS == 0 and type(row[0]) is int and done < row[0] <= total:
                    done = row[0]
                    progress(done, total)
        if progress:
            done = max(done, min(total, reader.progress_of(seg.end)))
            progress(done, total)
        if not gc.isenabled():       # (an export holds the collector off: the cycles a segment's rows left, e.g.
            gc.collect(0)            # json.dumps' encoders, swept young, so that memory stays bounded)


# the top-level keys of a row whose envelope is the row itself (Event.envelope()'s keys, in its order)
_ENVELOPE_ORDERS = frozenset(("type", "seq", "time", "data") + extra for extra in (
    (), ("sourceEventSeqs",), ("surfaceOp",), ("ignorable",), ("sourceEventSeqs", "surfaceOp"),
    ("sourceEventSeqs", "ignorable"), ("surfaceOp", "ignorable"), ("sourceEventSeqs", "surfaceOp", "ignorable")))
# v0/v1 rows the codec converts in memory (codec.RowCodec._legacy): (type, key whose absence converts, key whose
# presence does); a turn/end of those versions always goes the exact way
_LEGACY = {"user/message": ("id", None), "assistant/message": ("message", "content"),
           "tool/result": ("message", "callId"), "turn/start": (None, "trigger")}


def plain_envelope(reader: LogReader, raw: bytes) -> Optional[dict[str, Any]]:
    """The envelope (``Event.envelope()``) of the one event the exact decode reads from ``raw`` when that
    decode would take the row as it is: within the row limits, valid UTF-8, a JSON object whose keys are
    exactly the envelope's in the envelope's order, an event (not packed) with an integer seq and time, no
    field the codec drops (:func:`~app.log.format.versions.field_problems`) and no in-memory conversion
    (v0/v1 legacy shapes, range-encoded ``sourceEventSeqs``, an object ``surfaceOp``): then the decoded row
    *is* its envelope, with no Event built.  None: the row takes the exact decode (``tests/test_export_fast.py``
    checks both agree on every fixture, generated and hostile row)."""
    codec = reader.codec
    if codec.envelope_seqs is not None or len(raw) > MAX_ROW_BYTES or not raw.startswith(b'{"type":"'):
        return None
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and nested_over(raw, MAX_DEPTH):
        return None
    try:
        obj = _decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None
    if type(obj) is not dict or tuple(obj) not in _ENVELOPE_ORDERS:
        return None
    typ, seq, d = obj["type"], obj["seq"], obj["data"]
    if type(typ) is not str or typ in PACKED_TAGS or type(seq) is not int or not 0 <= seq <= MAX_SAFE_INT \
            or type(obj["time"]) is not int:
        return None
    if "sourceEventSeqs" in obj:
        ses = obj["sourceEventSeqs"]
        if type(ses) is not list or (codec.version >= 1 and any(type(x) is list for x in ses)):
            return None
    if "surfaceOp" in obj and type(obj["surfaceOp"]) is not str:
        return None
    if "ignorable" in obj and obj["ignorable"] is not True:
        return None
    if codec.version < 2 and (typ in ("steering/message", "turn/end") or typ in _LEGACY and type(d) is dict
                              and _legacy_shape(d, *_LEGACY[typ])):
        return None
    if type(d) is dict and d:             # (field_problems' check of the payload, made on the row's text)
        try:
            _data_check(raw)
        except (msgspec.DecodeError, RecursionError):
            return None
    return obj


_top = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode     # (an object's keys, its values left as bytes)
_str_of = msgspec.json.Decoder(str).decode
_int_of = msgspec.json.Decoder(int).decode
_list_of = msgspec.json.Decoder(list).decode


def plain_row(reader: LogReader, raw: bytes) -> bool:
    """Whether :func:`plain_envelope` of ``raw`` is not None, told without building the row's values: its
    top level decoded with each value left as bytes (only ``type``, ``seq``, ``time``, ``sourceEventSeqs``
    and the keys of ``data`` decoded), the same checks.  For a row whose values all decode (a row
    :meth:`~app.store.redact.Redactor.canonical_row` reads, for one): then the answers are the same
    (``tests/test_redact_quiet.py`` holds them so on every fixture, generated and hostile row)."""
    codec = reader.codec
    if codec.envelope_seqs is not None or len(raw) > MAX_ROW_BYTES or not raw.startswith(b'{"type":"'):
        return False
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and nested_over(raw, MAX_DEPTH):
        return False
    try:
        obj = _top(raw)
        if tuple(obj) not in _ENVELOPE_ORDERS:
            return False
        typ, seq = _str_of(obj["type"]), _int_of(obj["seq"])
        _int_of(obj["time"])
        data = memoryview(obj["data"])
        d = _top(data) if data[:1].tobytes() == b"{" else None
        if "sourceEventSeqs" in obj:
            ses = _list_of(obj["sourceEventSeqs"])
            if codec.version >= 1 and any(type(x) is list for x in ses):
                return False
        if "surfaceOp" in obj:
            _str_of(obj["surfaceOp"])
    except (msgspec.DecodeError, RecursionError):     # (a ValidationError is one: a value of another type)
        return False
    if typ in PACKED_TAGS or not 0 <= seq <= MAX_SAFE_INT or ("ignorable" in obj and bytes(obj["ignorable"]) != b"true"):
        return False
    if codec.version < 2 and (typ in ("steering/message", "turn/end") or typ in _LEGACY and d is not None
                              and _legacy_shape(d, *_LEGACY[typ])):
        return False
    if d:
        try:
            _data_check(raw)
        except (msgspec.DecodeError, RecursionError):
            return False
    return True


def plain_spans(reader: LogReader, raw: bytes) -> Optional[list[int]]:
    """:meth:`~app.store.redact.Redactor.canonical_spans` of a row :func:`plain_row` accepts (so the row is its own
    envelope, and its redaction is :meth:`~app.store.redact.Redactor.spliced` with these spans), else None.  In one
    pass over the row where the C scanner module is built (``plain_spans``: the top level read while the row's form
    is checked; :data:`_data_check` still asked here); else by its definition (:func:`plain_spans_exact`)."""
    fast = getattr(_native, "plain_spans", None)
    if fast is None:
        return plain_spans_exact(reader, raw)
    if reader.codec.envelope_seqs is not None or len(raw) > MAX_ROW_BYTES:
        return None
    got = fast(raw, MAX_DEPTH, reader.codec.version)
    if got is None:
        return None
    if got[1]:
        try:
            _data_check(raw)
        except (msgspec.DecodeError, RecursionError):
            return None
    spans: list[int] = got[0]
    return spans


def plain_spans_exact(reader: LogReader, raw: bytes) -> Optional[list[int]]:
    """:func:`plain_spans` by its definition: the row's canonical spans when :func:`plain_row` accepts it."""
    spans = Redactor.canonical_spans(Redactor(), raw)     # (None: not in msgspec's form, or no C module)
    return spans if spans is not None and plain_row(reader, raw) else None


class _DataCheck(msgspec.Struct, gc=False):
    """A row's ``data`` checked against :data:`~app.log.format.versions.DATA_TYPE` while the row is parsed (the
    same verdict as ``msgspec.convert(data, DATA_TYPE)`` on the decoded payload, without walking it again)."""
    data: Optional[DATA_TYPE] = None


_data_check = msgspec.json.Decoder(_DataCheck).decode


def _legacy_shape(d: dict[str, Any], missing: Optional[str], present: Optional[str]) -> bool:
    if present is None:
        return missing not in d
    if missing is None:
        return present in d
    return missing not in d and present in d


def exact_events(reader: LogReader, row: Row) -> Iterator[Event]:
    """The events of one row as the exact decode reads them, one at a time (a packed row of any member
    count expanded a batch at a time: :meth:`~app.log.format.codec.RowCodec.iter_row`)."""
    pos, off, line, raw, complete = row
    items = reader.codec.iter_row(raw, pos=pos, offset=off, line=line) if complete and raw.strip() \
        else reader.decode_split_row(row)
    return (it for it in items if is_event(it))


def _packed_lines(rec: Any, red: Optional[Redactor]) -> tuple[list[bytes], int]:
    """The envelopes of a packed row's members (as ``Event.envelope()`` encodes them), from its lists:
    (lines, or one block of them joined by newlines, when the C scanner module writes them; their count)."""
    d = rec.data
    enc = _enc.encode
    head = b'{"type":"assistant/chunk","seq":'
    if rec.K == fr.PACKED_TEXT:
        delta = PACKED_TAGS[rec.T]
        mid = b',"data":{"turn":%d,"step":%d,"chunk":{"type":"%s","index":%d,"text":' % (
            d.turn, d.step, delta.encode(), d.index)
        strs = d.texts if red is None else red.obj(d.texts)      # (one walk of the list: C where built)
    else:
        mid = b',"data":{"turn":%d,"step":%d,"chunk":{"type":"tool-call-delta","index":%d,"id":' % (
            d.turn, d.step, d.index)
        has_name = d.name is not msgspec.UNSET
        if red is not None and not (red.quiet(d.id) and (not has_name or red.quiet(d.name))):
            return _call_lines_redacted(rec, red, head, mid, has_name)    # (member by member: the report counts
        mid += enc(d.id) + (b',"name":%s' % enc(d.name) if has_name else b"") + b',"argumentsDelta":'  # each one's)
        strs = d.args if red is None else red.obj(d.args)  # (id and name mask nothing: the arguments in one walk)
    n = min(len(strs), len(d.dt) + 1)
    if _native is not None and n:
        block = _native.packed_lines(head, mid, b"}}}", rec.seq, rec.time0, d.dt, strs)
        if block is not NotImplemented:
            return [block], n
    # one line per member from one template, formatted and encoded in C loops (map)
    line = head + b'%d,"time":%d' + mid.replace(b"%", b"%%") + b'%s}}}'
    times = accumulate(d.dt, initial=rec.time0)
    return list(map(line.__mod__, zip(count(rec.seq), times, map(enc, strs)))), n


def _call_lines_redacted(rec: Any, red: Redactor, head: bytes, mid: bytes, has_name: bool) -> tuple[list[bytes], int]:
    d = rec.data
    enc = _enc.encode
    out = []
    for s, t, arg in zip(count(rec.seq), accumulate(d.dt, initial=rec.time0), d.args):
        cid, name = red.obj(d.id), d.name
        if has_name:
            name = red.obj(name)
        arg = red.text(arg)
        named = b',"name":%s' % enc(name) if has_name else b""
        out.append(b'%s%d,"time":%d%s%s%s,"argumentsDelta":%s}}}' % (head, s, t, mid, enc(cid), named, enc(arg)))
    return out, len(out)


class _Lines:
    """The logical export's text as it is made: :attr:`buf` (lines, each ended by a newline), :attr:`n` (the events
    written), a row's lines the Python way (:meth:`row`) or a run of a segment's rows at once (:meth:`block`:
    rowscan_c's ``logical_block``, the lines :meth:`row` gives each of them, ``tests/test_logical_block.py``)."""

    def __init__(self, reader: LogReader, red: Optional[Redactor], progress: Progress) -> None:
        self.reader, self.red, self.progress = reader, red, progress
        hdr = reader.source.header_raw
        self.buf = bytearray()
        self.used = 0                    # (the text in buf: the bytes after it are room logical_block made)
        self.put(red.row(hdr) if red else hdr)
        self.n = 0
        self.total = max(1, reader.physical_total())
        self.done = 0                    # (the progress reported)
        plain = _native is not None and reader.codec.envelope_seqs is None
        # a writer's packed row straight from its bytes (C: rowscan_c.packed_raw; None: the lean record below),
        # redacting: when no string value of it passes a gate (redact.quiet_values: redaction leaves it as it is)
        self.from_bytes = getattr(_native, "packed_raw", None) if reader.version < 2 and plain else None
        self.plain = plain
        self.spliced = red.spliced if red is not None else None
        self.fast: Any = getattr(_native, "logical_block", None)
        self.stopped: Any = None         # (the plain_spans of the row the last block stopped at, or None)
        self.flags = (1 if self.from_bytes is not None else 0) | (2 if red is not None else 0) | (4 if plain else 0)

    def put(self, line: bytes) -> None:
        """``line`` and a newline added to :attr:`buf`'s text (into its room where it has enough)."""
        u, k, buf = self.used, len(line), self.buf
        if u + k < len(buf):
            buf[u:u + k] = line
            buf[u + k] = 10
        else:
            del buf[u:]
            buf += line
            buf += b"\n"
        self.used = u + k + 1

    def chunk(self) -> bytes:
        """:attr:`buf`'s text handed on (a new one started), as it is: the export's writer (``publish_file``:
        ``write``, its hash and count) takes any bytes-like object, so no copy of it is made."""
        got, self.buf = self.buf, bytearray()
        del got[self.used:]
        self.used = 0
        return cast(bytes, got)

    def row(self, row: Row) -> Iterator[bytes]:
        """The lines of one stored row, added to :attr:`buf` (handed on as it goes when the row has many events)."""
        raw, red = row[3], self.red
        if not row[4]:
            got = None
        elif raw.startswith(_PACKED_PREFIXES):
            got = self.from_bytes(raw) if self.from_bytes is not None and len(raw) <= MAX_ROW_BYTES \
                and (red is None or quiet_values(raw)) else None
        else:
            # (a plain row in msgspec's form is its envelope: its bytes, its strings redacted in place)
            spans = plain_spans(self.reader, raw) if self.plain else None
            got = None if spans is None else (raw if self.spliced is None else self.spliced(raw, spans), 1)
        if got is not None:
            self.put(got[0])
            self.n += got[1]
            return
        # (a packed row starts with its tag: the other rows are never one)
        rec = packed_record(self.reader, raw) if row[4] and raw.startswith(_PACKED_PREFIXES) else None
        if rec is not None:
            lines, k = _packed_lines(rec, red)
            self.n += k
            self.put(b"\n".join(lines))
            return
        env0 = plain_envelope(self.reader, raw) if row[4] else None
        enc = _enc.encode
        for env in (env0,) if env0 is not None else (ev.envelope() for ev in exact_events(self.reader, row)):
            self.put(enc(red.obj(env) if red else env))
            self.n += 1
            if self.used >= CHUNK_BYTES:              # (a row of many members: handed on as it goes)
                yield self.chunk()

    def block(self, data: bytes, at: int, stop: int, nrows: int) -> tuple[int, int]:
        """The lines of up to ``nrows`` rows of ``data`` from offset ``at`` (rows starting before ``stop``) that
        ``logical_block`` writes, added to :attr:`buf`; -> (the offset after them, their count), or (the offset
        after them, -1) when the data of one of them does not check: then none is added (the caller takes them
        the Python way)."""
        used, end, rows, events, checks, self.stopped = self.fast(
            self.buf, self.used, data, at, stop, nrows, self.reader.codec.version, self.flags, MAX_DEPTH, MAX_ROW_BYTES)
        if checks:
            view = memoryview(data)
            try:
                for a, b in checks:
                    _data_check(view[a:b])
            except (msgspec.DecodeError, RecursionError):
                self.stopped = None
                return end, -1                  # (buf's text as it was: what the block wrote is room again)
        self.used = used
        self.n += events
        return end, rows

    def spliced_row(self, raw: bytes) -> bool:
        """The row the last :meth:`block` stopped at, redacting, when it handed back its ``plain_spans`` (the row's
        strings a gate passes on): its line, as :meth:`row` writes it, added; False: the row takes :meth:`row`."""
        got, self.stopped = self.stopped, None
        if got is None or self.spliced is None:
            return False
        if got[1]:
            try:
                _data_check(raw)
            except (msgspec.DecodeError, RecursionError):
                return False
        self.put(self.spliced(raw, got[0]))
        self.n += 1
        return True

    def report(self, done: int) -> None:
        """Progress at ``done`` (bytes) within a segment, when it moves forward."""
        if self.progress and self.done < done <= self.total:
            self.done = done
            self.progress(done, self.total)

    def segment_done(self, end: int) -> None:
        """Progress at the end of a segment (``progress_of`` its end)."""
        if self.progress:
            self.done = max(self.done, min(self.total, self.reader.progress_of(end)))
            self.progress(self.done, self.total)


def _segment_chunks(out: _Lines, seg: Any, stop: int) -> Iterator[bytes]:
    """The lines of the rows of a segment of a file placed by byte offset that start before ``stop``, added to
    ``out`` (``logical_block`` where it can, :meth:`_Lines.row` for the others; ``out.buf`` handed on whenever it
    holds :data:`CHUNK_BYTES`); progress every :data:`PROGRESS_ROWS` rows, as :func:`logical_rows` reports it."""
    data = seg.data
    at = k = 0
    line0 = seg.line0
    back = 0                            # (rows before this offset go the Python way: a block's data check failed)
    while at < stop:
        end, rows = out.block(data, at, stop, PROGRESS_ROWS - k % PROGRESS_ROWS) if at >= back else (at, 0)
        if rows > 0:
            k += rows
            at = end
        else:
            if rows < 0:
                back = end
            nl = data.find(b"\n", at)
            raw = data[at:] if nl < 0 else data[at:nl]
            if not out.spliced_row(raw):
                yield from out.row((seg.row_pos(at), seg.text_pos(at), None if line0 is None else line0 + k, raw,
                                    nl >= 0))
            at = len(data) if nl < 0 else nl + 1
            k += 1
        if k % PROGRESS_ROWS == 0:
            out.report(seg.pos + at)
        if out.used >= CHUNK_BYTES:
            yield out.chunk()


def logical_jsonl(reader: LogReader, red: Optional[Redactor] = None, progress: Progress = None,
                  counter: Optional[list[int]] = None) -> Iterator[bytes]:
    """The logical export's JSONL text (header, every event's envelope, the closure) in chunks of about
    :data:`CHUNK_BYTES`; ``counter[0]`` counts the events written.  The rows of :func:`logical_rows`, read a
    segment at a time where its rows are placed by byte offset (:func:`_segment_chunks`)."""
    out = _Lines(reader, red, progress)
    cut: Any = reader.tail_state().cut_pos
    for seg in reader.source.forward():
        if seg.bad:
            pass
        elif out.fast is not None and type(seg) is Segment and seg.rows is None and (cut is None or type(cut) is int):
            stop = len(seg.data) if cut is None else max(0, min(len(seg.data), cut - seg.pos))
            yield from _segment_chunks(out, seg, stop)
            if stop < len(seg.data):
                break                    # (the cut: no row after it)
        else:
            cutoff = False
            for k, row in enumerate(seg.split_rows(), 1):
                if cut is not None and row[0] >= cut:
                    cutoff = True
                    break
                yield from out.row(row)
                if k % PROGRESS_ROWS == 0 and type(row[0]) is int:
                    out.report(row[0])
                if out.used >= CHUNK_BYTES:
                    yield out.chunk()
            if cutoff:
                break
        out.segment_done(seg.end)
        if not gc.isenabled():       # (an export holds the collector off: the cycles a segment's rows left, e.g.
            gc.collect(0)            # json.dumps' encoders, swept young, so that memory stays bounded)
    enc = _enc.encode
    for ev in reader.tail_state().closure:
        env = ev.envelope()
        out.put(enc(red.obj(env) if red else env))
        out.n += 1
    if counter is not None:
        counter[0] = out.n
    if out.used:
        yield out.chunk()

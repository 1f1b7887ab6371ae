"""Searchable text straight from stored rows: the extraction side of the home full-text index.

Pure (no Qt, no SQLite): it turns the stored bytes of a session into entries
``(seq, turn, time, kind, tool, text)`` (``text`` one plain line, :func:`app.log.query.textview.plain`),
the text the window and whole-log find show of the decoded events
(:func:`app.log.query.textview.shown_fields`: the text fields, generic rows' payloads, and the
tool-call blocks of assistant messages whose call has no tool/call row in their turn), so any
engine can take them (the SQLite FTS5 index of :mod:`app.store.fulltext`, a shared search service).

Fast paths, each checked against the exact decoder (``tests/test_fulltext_extract.py``):

* the rows written the plain dsh way are read in C straight from their bytes (``text_row`` and
  ``text_rows`` of the row scanner's extension, defined by :mod:`app.log.query.textrow`): the same
  entries, with no Python object per row; anything unusual is handed back and decoded as below;
* a byte prefilter: rows written the dsh way (``{"type":"…"`` first) whose type shows no text
  (:data:`NO_TEXT_B`) are never decoded (most rows of a long session are streamed chunks);
* the rows that may carry text are decoded by msgspec into plain dicts (the limits of
  :func:`app.log.format.codec.decode_json` apply) and handed to ``event_fields`` as they are: no typed
  event objects, no codec problems; rows in a legacy shape (spec §1.7, formats v0/v1) and
  envelope-free snapshots go through :class:`app.log.format.codec.RowCodec` as the reader does;
* :func:`extract_jsonl` reads a whole JSONL session with one ``open`` and one ``read`` (the
  header checked in memory), so it can run in a worker process (results are plain tuples).
"""
from __future__ import annotations

import json
import os
import re
import zlib

import msgspec
from typing import TYPE_CHECKING, Any, NamedTuple, Optional

from .. import jobctl
from ..format.codec import DecodeError, RowCodec, decode_json, parse_header
from ..format.limits import MAX_DEPTH, MAX_ROW_BYTES, open_regular
from ..format.model import MAX_SAFE_INT, PACKED_TAGS, is_event
from .textrow import CALL, FIELDS, NOTHING, RESULT, TURN, legacy_shape, text_row_c, text_rows_c
from .textview import NO_PAYLOAD_TYPES, TITLE, TOOL_CALL, TOOL_OUTPUT, event_turn, plain, shown_fields

if TYPE_CHECKING:
    from ..index.reader import LogReader

CRC_WINDOW = 4096
ERROR_ONLY_B = frozenset({b"assistant/chunk", b"turn/end"})   # text only when they carry an error
# rows written the dsh way that show no text (never decoded): the types whose row shows no payload
# (:data:`~app.log.query.textview.NO_PAYLOAD_TYPES`; turn starts and steering messages are still
# read: the turn, a legacy shape) and packed chunk rows (streamed deltas: no field).  Every other
# type shows text: a text type's fields or a generic row's payload (the ``event`` field of
# :func:`~app.log.query.textview.shown_fields`, the text the window and whole-log find show)
NO_TEXT_B = frozenset(t.encode() for t in NO_PAYLOAD_TYPES - {"turn/start", "steering/message"}) \
    | frozenset(t.encode() for t in PACKED_TAGS)
_DECODE = msgspec.json.Decoder().decode
BLOCKS_WAIT = 4096                  # tool-call blocks of one turn held back while their call's row may come …
BLOCKS_WAIT_BYTES = 8 << 20         # … and their text (memory stays bounded on a hostile turn)
FAST_MAX_BYTES = MAX_ROW_BYTES      # whole-file reads up to this size (no row can pass the row limit)

# (seq, turn, time, kind, tool, text): one field of one event
Entry = tuple[int, Optional[int], Optional[int], str, Optional[str], str]


class _Ev:
    """What ``event_fields`` reads of an event (its type and payload): no typed event built."""
    __slots__ = ("type", "data")

    def __init__(self, type: str, data: Any):
        self.type = type
        self.data = data


def row_type(raw: bytes) -> Optional[bytes]:
    """The ``type`` of a row written the dsh way (``{"type":"…"`` first), else None (decode it)."""
    if raw.startswith(b'{"type":"'):
        e = raw.find(b'"', 9)
        if e > 9:
            return raw[9:e]
    return None


def may_hold_text(raw: bytes) -> bool:
    """False only for a row written the dsh way whose type shows no text (no decode needed)."""
    t = row_type(raw)
    if t is None:
        return True
    if t in NO_TEXT_B:
        return False
    return t not in ERROR_ONLY_B or b'"error"' in raw


def skips(t: bytes, raw: bytes) -> bool:
    """Row ``raw`` of type ``t`` (written the dsh way) shows no text: never decoded."""
    return t in NO_TEXT_B or (t in ERROR_ONLY_B and b'"error"' not in raw)


class RowText:
    """The entries of one session's rows, fed in order; keeps the turn and the call id -> tool
    name map between calls (an index resumes a grown log from them)."""

    def __init__(self, codec: RowCodec, turn: Optional[int] = None, calls: Optional[dict[Any, str]] = None,
                 blocks: Optional[list[tuple[Any, Entry]]] = None, fast: bool = True):
        self.codec = codec
        self.legacy = codec.version < 2
        self.exact = codec.envelope_seqs is not None      # envelope-free snapshot: the codec restores seqs
        self.turn = turn
        self.calls: dict[Any, str] = calls if calls is not None else {}
        # the tool-call blocks of this turn's assistant messages (call id, entry) whose tool/call row
        # has not come: an entry once the turn ends with none (whole-log find shows such a block;
        # one whose row came is the row's echo, :func:`app.log.query.find.find`)
        self.blocks: list[tuple[Any, Entry]] = blocks if blocks is not None else []
        self.held = sum(len(b[1][5]) for b in self.blocks)      # their text
        self.title: Optional[str] = None
        self.text_bytes = 0
        self.fast = text_row_c() if fast else None

    @classmethod
    def resumed(cls, codec: RowCodec, turn: Optional[int], state: Optional[str]) -> RowText:
        """A RowText going on from :meth:`state` (a grown log indexed from where it stopped; the
        caller removes the entries of the blocks still open: the session's last ``len(blocks)``)."""
        calls, blocks = _read_state(state)
        return cls(codec, turn, calls, blocks)

    def finish(self, out: list[Entry]) -> None:
        """The end of the rows read: the blocks still open are entries (the last ones of ``out``);
        :meth:`state` keeps them open for a resume (their call's row may still come)."""
        for _call, e in self.blocks:
            out.append(e)
            self.text_bytes += len(e[5])

    def _settle_oldest(self, out: list[Entry]) -> None:
        """Too many blocks wait (a hostile turn): the oldest half are entries now (whole-log find
        stops holding back hits past the same bound, :data:`app.log.query.find.ECHO_WAIT`)."""
        k = max(1, len(self.blocks) // 2)
        for _call, e in self.blocks[:k]:
            out.append(e)
            self.text_bytes += len(e[5])
        self.blocks = self.blocks[k:]
        self.held = sum(len(b[1][5]) for b in self.blocks)

    def state(self) -> Optional[str]:
        """What a resume needs besides the turn (JSON): the call -> tool names, the open blocks."""
        if not self.calls and not self.blocks:
            return None
        return json.dumps({"calls": self.calls, "open": [[c, *e] for c, e in self.blocks]})

    def feed(self, raw: bytes, out: list[Entry], pos: Any = None, offset: int = -1,
             line: Optional[int] = None) -> None:
        """Append the entries of one complete row (``raw`` without its newline) to ``out``."""
        if self.exact:
            self._exact(raw, out, pos, offset, line)
            return
        if self.fast is not None and len(raw) <= MAX_ROW_BYTES:
            r = self.fast(raw, self.legacy)         # the rows written the plain dsh way, from their bytes
            if r is not None:
                self._fast(r, out)
                return
        self.decode(raw, out, pos, offset, line)

    def feed_items(self, items: list[tuple[Any, ...]], out: list[Entry]) -> None:
        """Append the entries of rows the C ``text_rows`` read (:mod:`app.log.query.textrow`): its
        answers, and ``(-1, offset, raw)`` for a row to decode the exact way."""
        for r in items:
            if r[0] < 0:
                self.decode(r[2], out, r[1], r[1])
            else:
                self._fast(r, out)

    def decode(self, raw: bytes, out: list[Entry], pos: Any = None, offset: int = -1,
               line: Optional[int] = None) -> None:
        """:meth:`feed` of a row decoded the exact way (msgspec, then ``shown_fields``)."""
        obj: Any = None
        # the limits of decode_json (check_row): the depth scan only when the brackets could pass it
        if len(raw) <= MAX_ROW_BYTES and raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
            try:
                obj = _DECODE(raw)
            except (msgspec.DecodeError, RecursionError):
                pass                                # decode_json says why (invalid UTF-8 is retried)
        if obj is None:
            try:
                obj, _replaced = decode_json(raw)
            except DecodeError:
                return                              # a bad row: the reader reports it, it has no text
        if type(obj) is not dict:
            return
        typ = obj.get("type")
        if type(typ) is not str:
            return
        seq = obj.get("seq")
        if type(seq) is not int or seq < 0 or seq > MAX_SAFE_INT:
            return
        d = obj.get("data")
        if self.legacy and legacy_shape(typ, d):
            self._exact(raw, out, pos, offset, line)
            return
        t = obj.get("time", 0)
        self._fields(_Ev(typ, d), seq, t if type(t) is int else 0, out)

    def _fast(self, r: tuple[Any, ...], out: list[Entry]) -> None:
        """:meth:`_fields` of a row read by the C ``text_row`` (:mod:`app.log.query.textrow`)."""
        op = r[0]
        if op == NOTHING:
            return
        seq, time, et = r[1], r[2], r[3]
        if op == TURN:
            self._turn_start(et, out)
            return
        turn = et if et is not None else self.turn
        if op == FIELDS:
            for kind, body in r[4]:
                out.append((seq, turn, time, kind, None, body))
                self.text_bytes += len(body)
            for call, tool, body in r[5] or ():
                self._block(call, (seq, turn, time, TOOL_CALL, tool, body), out)
        elif op == CALL:
            call, name, body = r[4], r[5], r[6]
            if call is not None:
                self.calls[call] = name
                if self.blocks:                    # the block of its call is its echo
                    self._drop_block(call)
            out.append((seq, turn, time, TOOL_CALL, name or None, body))
            self.text_bytes += len(body)
        elif op == RESULT:
            body = r[5]
            out.append((seq, turn, time, TOOL_OUTPUT, self.calls.get(r[4]), body))
            self.text_bytes += len(body)
        else:                                       # TITLE
            self.title = r[4]
            body = plain(r[4])
            out.append((seq, turn, time, TITLE, None, body))
            self.text_bytes += len(body)

    def _turn_start(self, tt: Optional[int], out: list[Entry]) -> None:
        if tt is not None:
            self.turn = tt
        self.calls.clear()
        if self.blocks:                           # the turn before ended: its open blocks are entries
            self.finish(out)
            self.blocks, self.held = [], 0

    def _block(self, call: Any, e: Entry, out: list[Entry]) -> None:
        self.blocks.append((call, e))
        self.held += len(e[5])
        if len(self.blocks) > BLOCKS_WAIT or self.held > BLOCKS_WAIT_BYTES:
            self._settle_oldest(out)

    def _drop_block(self, call: Any) -> None:
        self.blocks = [b for b in self.blocks if b[0] != call]
        self.held = sum(len(b[1][5]) for b in self.blocks)

    def _exact(self, raw: bytes, out: list[Entry], pos: Any, offset: int, line: Optional[int]) -> None:
        items, _ = self.codec.decode_row(raw, pos=pos, offset=offset, line=line)
        for ev in items:
            if is_event(ev):
                self._fields(ev, ev.seq, ev.time, out)

    def _fields(self, ev: Any, seq: int, time: Optional[int], out: list[Entry]) -> None:
        if ev.type == "turn/start":
            self._turn_start(event_turn(ev), out)
            return
        shown = shown_fields(ev, self.calls)
        if not shown:
            return
        et = event_turn(ev)
        turn = et if et is not None else self.turn
        for fl, call, block in shown:
            body = plain(fl.text)
            if block:
                self._block(call, (seq, turn, time, fl.kind, fl.tool, body), out)
                continue
            if call is not None and self.blocks:  # a tool/call row: the block of its call is its echo
                self._drop_block(call)
            out.append((seq, turn, time, fl.kind, fl.tool, body))
            self.text_bytes += len(body)
            if fl.kind == "title":
                self.title = fl.text


def _read_state(state: Optional[str]) -> tuple[dict[Any, str], list[tuple[Any, Entry]]]:
    """(calls, open blocks) of :meth:`RowText.state`."""
    if not state:
        return {}, []
    d = json.loads(state)
    blocks = [(b[0], (b[1], b[2], b[3], b[4], b[5], b[6])) for b in d.get("open") or []]
    return dict(d.get("calls") or {}), blocks


def _candidates_re() -> re.Pattern[bytes]:
    skip = b"|".join(re.escape(t) for t in sorted(NO_TEXT_B | ERROR_ONLY_B))
    errs = b"|".join(re.escape(t) for t in sorted(ERROR_ONLY_B))
    # a row that may hold text, with its newline: a type written the dsh way that shows text, an
    # error-only type holding "error", or any row not written the dsh way (decoded to learn its type)
    return re.compile(rb'^(?:\{"type":"(?:' + errs + rb')"(?=[^\n]*"error")|(?!\{"type":"(?:' + skip + rb')"))'
                      rb'[^\n]*\n', re.M)


def _dsh_rows_re() -> re.Pattern[bytes]:
    skip = b"|".join(re.escape(t) for t in sorted(NO_TEXT_B | ERROR_ONLY_B))
    errs = b"|".join(re.escape(t) for t in sorted(ERROR_ONLY_B))
    # the same rows when every row is written the dsh way: the pattern starts with a literal
    # (newline, then the type key), so the regex engine jumps between row starts instead of trying
    # a match at every byte; group 1 is the row, which must end in a newline (complete)
    return re.compile(rb'\n(\{"type":"(?!(?:' + skip + rb')")[^\n]*|\{"type":"(?:' + errs
                      + rb')"(?=[^\n]*"error")[^\n]*)(?=\n)')


_CANDIDATES = _candidates_re()
_DSH_ROWS = _dsh_rows_re()
_DSH_START = b'\n{"type":"'


def candidate_rows(data: bytes, base: int = 0,
                   start: int = 0) -> tuple[list[tuple[int, bytes]], int, Optional[int]]:
    """Complete rows of ``data[start:]`` (JSONL text; ``data`` at file offset ``base``, ``start``
    0 or just after a newline) that may hold text, found by one regex pass (rows of other types
    are never looked at from Python): ([(pos, raw)], end, newlines) where ``end`` is the offset
    after the last complete row (a torn last row is left for later) and ``newlines`` those of
    ``data[start:end]`` when they were counted (else None).

    When every complete row starts the dsh way (two C-level counts say so) a regex anchored on
    that literal start finds them; otherwise (legacy or hand-written rows, blank lines) the
    general one, which looks at every line."""
    last = data.rfind(b"\n", start)
    if last < 0:
        return [], base + start, 0
    if data.startswith(b'{"type":"', start):
        nls = data.count(b"\n", start, last)
        if data.count(_DSH_START, start, last) == nls:
            # row k (k >= 1) starts after newline k-1; the first row has no newline before it
            nl = data.find(b"\n", start)
            out = [(base + start, data[start:nl])] if _CANDIDATES.match(data, start, nl + 1) is not None else []
            out += [(base + m.start(1), m.group(1)) for m in _DSH_ROWS.finditer(data, nl, last + 1)]
            return out, base + last + 1, nls + 1
    out = [(base + m.start(), m.group()[:-1]) for m in _CANDIDATES.finditer(data, start)]
    out = [(p, raw) for p, raw in out if raw and not raw.isspace()]
    return out, base + last + 1, None


def split_rows(data: bytes, base: int = 0,
               line0: Optional[int] = None) -> tuple[list[tuple[int, bytes, Optional[int]]], int, Optional[int]]:
    """Rows of ``data`` (JSONL text starting at file offset ``base``, line ``line0``) that may hold
    text: ([(pos, raw, line)], end, end_line) where ``end`` is the offset after the last complete
    row (a torn last row is left for later) and ``end_line`` the line number there."""
    out: list[tuple[int, bytes, Optional[int]]] = []
    parts = data.split(b"\n")
    last = len(parts) - 1
    at = base
    line = line0
    for i, raw in enumerate(parts):
        if i == last:
            break                                   # after the last newline: empty, or a torn row
        n = len(raw) + 1
        if raw.startswith(b'{"type":"'):
            e = raw.find(b'"', 9)
            t = raw[9:e] if e > 9 else None
            if t is not None and skips(t, raw):
                at += n
                if line is not None:
                    line += 1
                continue
        if raw and not raw.isspace():
            out.append((at, raw, line))
        at += n
        if line is not None:
            line += 1
    return out, at, line


class FileText(NamedTuple):
    """What :func:`extract_jsonl` found in one session file (plain values: crosses processes)."""
    status: str                       # "ok" | "not-session" | "fatal" | "fallback" (use the reader)
    why: Optional[str] = None
    header: Optional[tuple[Any, Optional[str], Optional[int]]] = None    # (id, cwd, createdAt)
    entries: list[Entry] = []
    title: Optional[str] = None
    turn: Optional[int] = None
    state: Optional[str] = None                           # RowText.state: where a resume goes on
    done_pos: int = 0
    done_line: Optional[int] = None
    done_crc: Optional[int] = None
    bytes_read: int = 0
    text_bytes: int = 0
    sig: Optional[tuple[int, int, int, int]] = None       # (dev, ino, size, mtime_ns) of what was read


def read_whole(path: str) -> tuple[Optional[bytes], Optional[os.stat_result], Optional[str]]:
    """(bytes, stat, None) of a regular file up to :data:`FAST_MAX_BYTES` read with one open and
    one read; (None, stat or None, why) when it cannot be read so (too big, gone, shrunk)."""
    try:
        fd = open_regular(path)
    except OSError as e:
        return None, None, f"cannot read: {e.strerror or e}"
    try:
        st = os.fstat(fd)
        if st.st_size > FAST_MAX_BYTES:
            return None, st, None
        data = os.read(fd, st.st_size) if st.st_size else b""
        while len(data) < st.st_size:               # a short read (rare): the rest
            more = os.read(fd, st.st_size - len(data))
            if not more:
                break
            data += more
    finally:
        os.close(fd)
    if len(data) != st.st_size:
        return None, st, None                       # shrunk while read: the reader copes
    return data, st, None


CANCEL_ROWS = 64            # rows fed between two looks at ``cancel`` (a session read whole is stopped within it)


class ExtractCancelled(Exception):
    """``cancel`` turned true while a session was being read (its entries so far are dropped)."""




# rows a session's later rows need whatever a search looks for: the turn, the call -> tool names, the title
CONTEXT_TYPES_B = (b'{"type":"turn/start"', b'{"type":"tool/call"', b'{"type":"session/title"')


def extract_jsonl(path: str, data: Optional[bytes] = None, st: Optional[os.stat_result] = None,
                  keep: Optional[Any] = None, cancel: Any = None) -> FileText:
    """The entries of a whole JSONL session file, read with one open and one read (or ``data``
    and ``st`` the caller read with :func:`read_whole`).

    ``fallback`` when the fast path does not apply (a file over :data:`FAST_MAX_BYTES`, a header
    line without a newline or over 1 MiB, an envelope-free snapshot): the caller reads it the
    exact way.  ``not-session``: the first line is not a session header (``why`` says so).
    ``keep(pos, raw)``: only rows it accepts are decoded, besides the context rows (turn starts,
    tool calls, titles, rows not written the dsh way) -- a search decodes only the rows holding
    its words (the entries then are those of the kept rows).  ``cancel`` (callable or Event) is looked at
    every :data:`CANCEL_ROWS` rows: :class:`ExtractCancelled` when it says stop."""
    if data is None or st is None:
        data, st, why = read_whole(path)
        if data is None or st is None:
            return FileText("fallback", why=why)
    sig = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if not data:
        return FileText("not-session", why="empty file", sig=sig)
    nl = data.find(b"\n")
    if nl < 0 or nl > (1 << 20):
        return FileText("fallback")
    head = data[:nl]
    hdr, problems = parse_header(head)
    fatal = next((p for p in problems if p.fatal), None)
    if hdr is None:                                  # not JSON, or not a session header
        msg = fatal.message if fatal is not None else ""
        return FileText("not-session", why=f"the {msg}" if msg.startswith("first line is not JSON") else None,
                        sig=sig)
    if fatal is not None:
        return FileText("fatal", why=str(fatal), header=(hdr.id, None, None), sig=sig, bytes_read=len(data))
    start = nl + 1
    eol = data.find(b"\n", start, start + 65536)
    first = data[start:eol if eol >= 0 else start + 65536].strip()
    if first and b'"seq' not in first[:160]:
        return FileText("fallback")                  # maybe an envelope-free snapshot: the reader decides
    version = hdr.version or 0
    rt = RowText(RowCodec(hdr.id, version=version))
    out: list[Entry] = []
    end, nls = _feed_file(path, data, start, rt, out, keep, cancel)
    rt.finish(out)
    end_line = 2 + nls if nls is not None else 1 + data.count(b"\n", 0, end)
    crc = zlib.crc32(data[max(0, end - CRC_WINDOW):end]) if end else None
    return FileText("ok", header=(hdr.id, hdr.cwd, hdr.createdAt), entries=out, title=rt.title, turn=rt.turn,
                    state=rt.state(), done_pos=end, done_line=end_line, done_crc=crc, bytes_read=len(data),
                    text_bytes=rt.text_bytes, sig=sig)


def _feed_file(path: str, data: bytes, start: int, rt: RowText, out: list[Entry], keep: Optional[Any],
               cancel: Any) -> tuple[int, Optional[int]]:
    """Feed the rows of ``data[start:]`` that may hold text to ``rt`` (see :func:`extract_jsonl`):
    (the offset after the last complete row, the newlines before it when counted)."""
    rows_c = text_rows_c() if keep is None and rt.fast is not None else None
    if rows_c is not None:                            # rows picked and read in C, CANCEL_ROWS at a time
        last = data.rfind(b"\n", start)
        end = last + 1 if last >= 0 else start
        at, nls = start, 0
        while at < end:
            if cancel is not None and jobctl.is_cancelled(cancel):
                raise ExtractCancelled(path)
            items, at, k = rows_c(data, at, end, CANCEL_ROWS, MAX_ROW_BYTES, rt.legacy)
            nls += k
            rt.feed_items(items, out)
        return end, nls
    rows, end, counted = candidate_rows(data, 0, start)
    if keep is not None:
        rows = [(p, raw) for p, raw in rows
                if raw.startswith(CONTEXT_TYPES_B) or not raw.startswith(b'{"type":"') or keep(p, raw)]
    feed = rt.feed
    for k in range(0, len(rows), CANCEL_ROWS):
        if cancel is not None and jobctl.is_cancelled(cancel):
            raise ExtractCancelled(path)
        for pos, raw in rows[k:k + CANCEL_ROWS]:
            feed(raw, out, pos, pos)
    return end, counted


def extract_many(paths: list[str], cancel: Any = None) -> list[FileText]:
    """:func:`extract_jsonl` of each path (a worker process's job): a session that fails is an
    ``error`` result with the reason, never the end of the others (``cancel``: :class:`ExtractCancelled`)."""
    out = []
    for p in paths:
        if cancel is not None and jobctl.is_cancelled(cancel):
            raise ExtractCancelled(p)
        try:
            out.append(extract_jsonl(p, cancel=cancel))
        except ExtractCancelled:
            raise
        except Exception as e:  # one unreadable session must not stop the others
            out.append(FileText("error", why=f"{type(e).__name__}: {e}"))
    return out


def reader_entries(reader: LogReader) -> tuple[list[Entry], RowText]:
    """Every entry of an opened reader (any source: JSONL, zstd frames, a SQLite store session)."""
    rt = RowText(reader.codec)
    out: list[Entry] = []
    for seg in reader.source.forward():
        if seg.bad:
            continue
        if seg.rows is not None:
            for p, raw in seg.rows:
                if may_hold_text(raw):
                    rt.feed(raw, out, p)
            continue
        rows, _end, _line = split_rows(seg.data, base=seg.pos, line0=seg.line0)
        for pos, raw, line in rows:
            rt.feed(raw, out, pos, -1, line)
    rt.finish(out)
    return out, rt


# --------------------------------------------------------------------------- worker processes
# A worker is the ``fts-extract`` kind of the one launcher (app.store.childproc.WORKERS):
# requests and answers are length-prefixed pickles on its stdin/stdout (lists of paths in, lists of
# FileText out), so no multiprocessing start method re-imports the caller's main module.


def worker_main(_argv: list[str]) -> int:
    """The ``fts-extract`` worker's entry."""
    serve()
    return 0


def _read_exact(f: Any, n: int) -> Optional[bytes]:
    parts = []
    while n > 0:
        b = f.read(n)
        if not b:
            return None
        parts.append(b)
        n -= len(b)
    return b"".join(parts)


def read_frame(f: Any) -> Optional[bytes]:
    """One length-prefixed message (None at the end of the stream)."""
    head = _read_exact(f, 8)
    if head is None:
        return None
    return _read_exact(f, int.from_bytes(head, "little"))


def write_frame(f: Any, data: bytes) -> None:
    f.write(len(data).to_bytes(8, "little") + data)
    f.flush()


def serve(inp: Any = None, out: Any = None) -> None:
    """The worker loop: a list of paths in, their :func:`extract_many` out, until stdin closes."""
    import pickle
    import sys
    inp = inp or sys.stdin.buffer
    out = out or sys.stdout.buffer
    while True:
        req = read_frame(inp)
        if req is None:
            return
        try:
            write_frame(out, pickle.dumps(extract_many(pickle.loads(req)), protocol=pickle.HIGHEST_PROTOCOL))
        except BrokenPipeError:                      # the indexer stopped (cancelled): nobody reads
            return

"""A seq index that keeps up with the disk: a byte-level scan at C speed, exact where it matters.

:func:`fast_index` builds the same :class:`~app.log.index.reader.SeqIndex` as the exact scan
(``LogReader.build_index_exact``) without decoding an envelope per row.  Per segment (the same
blocks of complete JSONL lines the source reads, or one zstd frame) one call of the row scanner
(:func:`app.log.index.rowscan.scan`; built at set-up in C, else interpreted: :data:`SCANNER`) walks the rows:
newlines by ``bytes.find`` (memchr), each row's head parsed by index arithmetic (its type, or a
packed chunk row's type, and ``seq``/``seq0`` in the dsh writer's key order), a packed row's
member count from its ``dt``, every seq checked to continue the one before (a gap, a duplicate,
a swap, a wrong seq anywhere fails the segment), turn boundaries, assistant messages and
end-seeds picked by type.  A row in another shape or key order, a blank line, a NUL, a seq with
a leading zero: the segment goes to the exact scan.

A big raw file is cut into ranges at the source's read grid and the ranges after the first
are scanned in forked worker processes (:func:`_parallel_feed`); the parent checks that each
range starts exactly where the one before it stopped, and that each fast segment continues
the seqs before it, so the stitched index equals the one-pass index (anything else: the
parent scans on itself).

A segment that does not pass every check (another key order, a gap, a torn or malformed
row, a corrupt frame) is scanned exactly instead, row by row, exactly as before, so the
index and its problems equal the exact scan's.  Whether a segment is read fast depends on
its own bytes and the seq expected at its start only, so every way of feeding the builder
routes every segment alike.  Not checked at byte level: that a row whose first and last
bytes and seq are right is valid JSON in between (pages decode rows exactly and show such a
row as bad; the tail state is always exact).  Applies to every format version (v0–v4 share
the envelope's key order; v2+ simply has no packed rows).

The builder's state can be saved and resumed (:class:`IndexBuilder`), which is what the
persistent index cache (:mod:`app.store.indexcache`) extends when a log grows.
"""
from __future__ import annotations

import functools
import gc
import hashlib
import importlib.machinery
import importlib.util
import marshal
import os
import re
import threading
from contextlib import contextmanager
from array import array
from io import BytesIO
from operator import itemgetter
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple, Optional, Union
from collections.abc import Callable, Iterable, Iterator

import msgspec

from ..format.limits import MAX_ROW_BYTES, SCAN_MEMBERS
from ..format.model import Problem
from .reader import MARK_CODES, SeqIndex
from .rowprobe import ProbeRow, maybe_legacy
from ..source.sources import RawJsonlSource, Segment, SourceChanged

if TYPE_CHECKING:
    from . import rowscan
    from .reader import LogReader

# (type, first seq, members) of one stored row, as LogReader.scan_segment_rows gives them
Row = tuple[Optional[str], Optional[int], int]

# the row-head pattern, the types and the not-legacy shapes below are what app.store.forking's legacy scan reads
# rows with (_HEAD, ROWS_RE, SEQ_AT, NOT_LEGACY, lines_of); the row scanner checks the same (rowscan.not_legacy)
_HEAD = 64                     # bytes of a row's head looked at (rowscan.HEAD)
# per row head (each after a NUL): its type, "0" when its key is seq0 (a packed chunk row), its (first)
# seq (no leading zero: that is not JSON, and the exact scan reads such a row as bad)
ROWS_RE = re.compile(rb'\x00\{"type":"([^"\\\n\x00]*)","seq(0?)":(0|[1-9][0-9]*)[,}]')
_CHUNK_TYPES = frozenset({b"text-chunks", b"reasoning-chunks", b"tool-call-chunks"})
# rows of a type that may be in a legacy shape, in a shape that is not (so no probe), after their seq:
# an assistant message or tool result whose data holds "message"; a whole turn/start without a trigger;
# a whole turn/end whose reason is an object with a kind only, one that is no abort, disposal or error
_INT = rb'-?(?:0|[1-9][0-9]*)'
_HAS_MESSAGE = re.compile(rb',"time":-?\d+,"data":\{"turn":-?\d+,"step":-?\d+,"message":\{')
NOT_LEGACY = {
    b"assistant/message": _HAS_MESSAGE,
    b"tool/result": _HAS_MESSAGE,
    b"turn/start": re.compile(rb',"time":' + _INT + rb',"data":\{"turn":' + _INT + rb'\}\}\n'),
    b"turn/end": re.compile(rb',"time":' + _INT + rb',"data":\{"turn":' + _INT +
                            rb',"reason":\{"kind":"(?![a-z-]*(?:aborted|disposed|error))[a-z-]+"\}\}\}\n'),
}
_MARK_CODE = {k.encode(): v for k, v in MARK_CODES.items()}
LEGACY_TYPE_BYTES = frozenset({b"steering/message", b"user/message", b"assistant/message", b"tool/result",
                           b"turn/start", b"turn/end"})
SEQ_AT = len(b'{"type":"') + len(b'","seq":')      # + len(type) + len(seq): just after a row's seq
# (app/store/forking.py's row-head scan of a flagged segment: each row's head, joined after a NUL)
ROW_HEADS = itemgetter(slice(0, _HEAD))
HEADS_LEAD = (b"",)
probe_row = msgspec.json.Decoder(ProbeRow).decode
PARALLEL_MIN = 32 << 20        # a raw file with at least this much left to scan is cut into ranges


def _stamped(here: str, source: str, stamp: str) -> Optional[bool]:
    """Whether the stamp beside ``source`` holds its SHA-256 (None: no source, as in a bundle)."""
    try:
        with open(os.path.join(here, source), "rb") as f:
            code = f.read()
    except OSError:
        return None
    try:
        with open(os.path.join(here, stamp), encoding="ascii") as f:
            return f.read().strip() == hashlib.sha256(code).hexdigest()
    except (OSError, ValueError):
        return False


def _is_extension(mod: ModuleType) -> bool:
    return (getattr(mod, "__file__", None) or "").endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def load_rowscan() -> tuple[ModuleType, str]:
    """The interpreted row scanner (``rowscan.py``, the definition of the scan) and its name ``"python"``.
    A leftover extension of the old mypyc build beside it (decision 0021; ``packaging/build_native.py``
    removes them) would shadow the source on import: the source file is then loaded by path."""
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, "rowscan.py")
    mod: Optional[ModuleType]
    try:
        from . import rowscan as mod
    except ImportError:                        # (an extension whose compiled library is missing)
        mod = None
    if mod is not None and not _is_extension(mod):
        return mod, "python"
    spec = importlib.util.spec_from_file_location("app.log._rowscan_source", src)
    if spec is None or spec.loader is None or not os.path.exists(src):
        from . import rowscan                      # (a bundle without the source: what it carries)
        return rowscan, "python"
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, "python"


@functools.cache
def _c_stamp_ok() -> Optional[bool]:
    """:func:`_stamped` of the C scanner, checked once per process (the module, once imported, cannot change;
    hashing its source took about a millisecond, and some callers ask per segment)."""
    return _stamped(os.path.dirname(os.path.abspath(__file__)), "rowscan_c.c", "rowscan_c.stamp")


def load_rowscan_c() -> Optional[ModuleType]:
    """The row scanner in C (``rowscan_c.c``, built at set-up by ``packaging/build_native.py`` or into a
    wheel by ``setup.py``) where it was built from this very source (its stamp), else None;
    ``SESSION_LENS_SCANNER=python`` asks for the interpreted one (to measure it)."""
    if os.environ.get("SESSION_LENS_SCANNER") == "python":
        return None
    try:
        from . import rowscan_c                     # type: ignore[attr-defined]
    except ImportError:                            # (not built here)
        return None
    if _c_stamp_ok() is False:
        return None                                # (built from another version of the source)
    mod: ModuleType = rowscan_c
    return mod


_rowscan, SCANNER = load_rowscan()
_rowscan_c = load_rowscan_c()
ScanRows = Callable[[Any, int, int, int, list[bytes], list[int], int, bool], Optional["rowscan.Block"]]


def scan_c(data: Any, start: int, stop: int, expected: int, types: list[bytes], kinds: list[int],
           max_members: int, legacy: bool) -> Optional[rowscan.Block]:
    """:func:`app.log.index.rowscan.scan` by the C scanner; a number past 64 bits (a seq of 19 digits or more,
    which the C scanner does not read) by the other one."""
    got: Optional[rowscan.Block] = _rowscan_c.scan(  # type: ignore[union-attr]
        data, start, stop, expected, types, kinds, max_members, legacy)
    if got is NotImplemented:
        got = _rowscan.scan(data, start, stop, expected, types, kinds, max_members, legacy)
    return got


if _rowscan_c is not None:
    SCANNER = "c"
scan_rows: ScanRows = scan_c if _rowscan_c is not None else _rowscan.scan
# the types the scanner tells apart (most frequent first), their kind bits, the shape of a may-be-legacy
# type's rows that is not legacy
_KINDS: dict[bytes, int] = {t: _rowscan.CHUNK for t in sorted(_CHUNK_TYPES)}
for _t, _c in _MARK_CODE.items():
    _KINDS[_t] = _KINDS.get(_t, 0) | (_c + 1)
for _t in sorted(LEGACY_TYPE_BYTES):
    _KINDS[_t] = _KINDS.get(_t, 0) | _rowscan.LEGACY
# the not-legacy shapes of NOT_LEGACY, as the row scanner checks them (tests/test_rowscan.py holds them equal)
for _t, _shape in ((b"assistant/message", _rowscan.HAS_MESSAGE), (b"tool/result", _rowscan.HAS_MESSAGE),
                   (b"turn/start", _rowscan.TURN_START), (b"turn/end", _rowscan.TURN_END)):
    _KINDS[_t] |= _shape
SCAN_TYPES = list(_KINDS)
SCAN_KINDS = [_KINDS[t] for t in SCAN_TYPES]


class Fed(NamedTuple):
    """One segment as fed to the builder (what the index cache needs to resume after it)."""
    pos: int
    end: int
    line0: Optional[int]
    newlines: int              # newlines in the segment's text
    text_offset: int           # of its first byte in the decoded text (-1: unknown)
    text_len: int              # length of its decoded text
    torn: bool
    bad: bool


def _fed(seg: Segment) -> Fed:
    return Fed(seg.pos, seg.end, seg.line0, seg.data.count(b"\n"), seg.text_offset, len(seg.data), seg.torn,
               bool(seg.bad))


class _Block(NamedTuple):
    """What the byte-level scan found in one segment (from a scan worker: the marks as the bytes of
    an ``array("q")`` and an ``array("b")``, see :func:`_range_worker`)."""
    first: int
    last: int
    rows: int
    marks_s: Union[list[int], bytes]
    marks_c: Union[list[int], bytes]
    legacy: Optional[bool]


def lines_of(data: bytes, n: int) -> Optional[list[bytes]]:
    """The lines of ``data[:n]`` (complete lines) cut at C level; None when a NUL is among them
    (a raw NUL is not JSON; it would also break the heads string apart)."""
    if data.find(b"\x00", 0, n) >= 0:
        return None
    lines = BytesIO(data).readlines()
    if n < len(data):
        lines.pop()                                # (the part of a row after the segment)
    return lines


def scan_buffer(data: bytes, start: int, stop: int, expected: Optional[int], legacy: bool) -> Optional[_Block]:
    """The rows of ``data[start:stop]`` (complete lines) when every row passes the row scanner's checks
    (:func:`app.log.index.rowscan.scan`) and their seqs continue ``expected`` exactly (None: from the first
    row's, which the caller checks); else None.  With ``legacy`` (v0/v1), the rows the scanner lists
    are probed in order (an exact typed decode) until one may be in a legacy shape; a row that does
    not probe sends the segment to the exact scan."""
    got = scan_rows(data, start, stop, -1 if expected is None else expected, SCAN_TYPES, SCAN_KINDS,
                     SCAN_MEMBERS, legacy)
    if got is None:
        return None
    first, last, rows, marks_s, marks_c, probes = got
    flag: Optional[bool] = None
    if legacy:
        flag = False
        try:
            for i in range(0, len(probes), 2):
                if maybe_legacy(probe_row(data[probes[i]:probes[i + 1]])):
                    flag = True
                    break
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return None                            # (RecursionError: a row nested deeper than the decoder goes)
    return _Block(first, last, rows, marks_s, marks_c, flag)


class IndexBuilder:
    """Incremental index construction: feed segments oldest first; state can be saved/resumed."""

    def __init__(self, idx: Optional[SeqIndex] = None, expected: int = 0, broken: bool = False,
                 problems: Optional[list[Problem]] = None, legacy: Optional[list[int]] = None) -> None:
        self.idx = idx if idx is not None else SeqIndex()
        self.expected = expected
        self.broken = broken
        self.problems = problems if problems is not None else []
        # v0/v1: per segment, whether it may hold a legacy-shape row (a fork stores those converted
        # and copies the other segments as stored); None: not kept
        self.legacy = legacy
        self.fast_segments = 0
        self.exact_segments = 0

    # ------------------------------------------------------------------ exact (row by row)
    def add_exact(self, reader: LogReader, seg: Segment) -> None:
        """One segment by the exact envelope scan (with its legacy flag when kept)."""
        self.add_rows(seg, reader.scan_segment_rows(seg, self.problems, self.legacy))

    def add_rows(self, seg: Segment, rows: Iterable[Row]) -> None:
        """One segment from its exact rows [(type, first_seq, members)] (None seq: unreadable)."""
        idx = self.idx
        first, last, n_ev, n_rows = -1, -1, 0, 0
        for typ, s, n in rows:
            n_rows += 1
            if s is None:
                self.broken = True
                continue
            if first < 0:
                first = s
            if s != self.expected:
                self.problems.append(Problem(code="seq-gap" if s > self.expected else "seq-order",
                                             message=f"seq {s} where {self.expected} was expected", seq=s))
                self.broken = True
            if typ in MARK_CODES:
                idx.mark_seq.append(s)
                idx.mark_code.append(MARK_CODES[typ])
            last = s + n - 1
            self.expected = last + 1
            n_ev += n
            if not self.broken:
                idx.contiguous_through = last
        idx.add(seg.pos, seg.end, first, last, seg.line0, n_rows, n_ev)
        self.exact_segments += 1

    # ------------------------------------------------------------------ fast (byte level)
    def add_block(self, pos: int, end: int, line0: Optional[int], blk: _Block) -> None:
        idx = self.idx
        if isinstance(blk.marks_s, bytes):           # (a worker's: the arrays' bytes)
            idx.mark_seq.frombytes(blk.marks_s)
            idx.mark_code.frombytes(bytes(blk.marks_c))
        elif blk.marks_s:
            idx.mark_seq.extend(blk.marks_s)
            idx.mark_code.extend(array("b", blk.marks_c))
        self.expected = blk.last + 1
        if not self.broken:
            idx.contiguous_through = blk.last
        idx.add(pos, end, blk.first, blk.last, line0, blk.rows, blk.last - blk.first + 1)
        if self.legacy is not None and blk.legacy is not None:
            self.legacy.append(blk.legacy)
        self.fast_segments += 1

    def try_fast(self, seg: Segment) -> int:
        """Index ``seg`` from its bytes: its rows; 0 (nothing changed) when it needs the exact scan."""
        if seg.bad or seg.torn or seg.rows is not None or not seg.data.endswith(b"}\n"):
            return 0
        blk = scan_buffer(seg.data, 0, len(seg.data), self.expected, self.legacy is not None)
        if blk is None:
            return 0
        self.add_block(seg.pos, seg.end, seg.line0, blk)
        return blk.rows

    # ------------------------------------------------------------------ state
    def state(self) -> dict[str, object]:
        return {"expected": self.expected, "broken": self.broken}


def fast_applicable(reader: LogReader) -> bool:
    """The byte-level scan knows the envelope of raw and zstd files (every format version)."""
    return reader.source.kind in ("jsonl", "zstd") and reader.header is not None \
        and not getattr(reader, "envelope_free", False)


class _At:
    """Where a raw file's scan stands: the next segment's start, the next read, the next line number."""

    def __init__(self, pos: int, at: int, line0: Optional[int]) -> None:
        self.pos, self.at, self.line0 = pos, at, line0


def _cuts(src: RawJsonlSource, pos: int, at: int,
          stop: Optional[int] = None) -> Iterator[tuple[int, int, int, bytes, Optional[bool]]]:
    """The segments ``src.forward()`` cuts, from segment start ``pos`` with the next read at ``at``:
    reads of ``block`` bytes, a segment ends at the last newline of a read and the rest of the read
    is carried into the next one.  Yields ``(pos, end, at, data, over)``: ``at`` the next read after
    the segment, ``data`` the file from ``pos`` (read once, one ``pread``; it may run on past
    ``end``), ``over`` whether a row over the row limit (skipped, as the source does) is torn (None:
    a normal segment).  Stops before a segment whose first read would start at or after ``stop``."""
    size = src.size
    block = src.block
    parts: list[bytes] = []                    # the reads of a row longer than a read
    while pos < size and (stop is None or at < stop):
        nxt = min(at + block, size)
        c0 = at if parts else pos              # (a carried partial row is read again: it is short)
        chunk = src.pread(nxt - c0, c0)
        if len(chunk) < nxt - c0:
            raise SourceChanged(f"{src.path}: short read at {c0}")
        at = nxt
        if nxt < size:
            nl = chunk.rfind(b"\n", nxt - block - c0 if not parts else 0)
            if nl < 0:
                parts.append(chunk)
                if at - pos > MAX_ROW_BYTES:
                    end = src.find_newline(at, size)
                    torn = end >= size and src.pread(1, size - 1) != b"\n"
                    parts = []
                    yield pos, end, end, b"", torn
                    pos = at = end
                continue
            end = c0 + nl + 1
        else:
            end = size
        data = b"".join(parts) + chunk if parts else chunk
        parts = []
        yield pos, end, at, data, None
        pos = end


def _scan_cut(pos: int, end: int, data: bytes, expected: Optional[int], legacy: bool) -> Optional[_Block]:
    return scan_buffer(data, 0, end - pos, expected, legacy)


def _exact_cut(reader: LogReader, builder: IndexBuilder, src: RawJsonlSource, pos: int, end: int,
               data: Optional[bytes], over: Optional[bool], line0: Optional[int]) -> Fed:
    """One segment by the exact scan (``data``: the file from ``pos``, None: read it)."""
    if over is not None:                       # (an over-limit row: one line, as the source counts it)
        seg = src.oversized_segment(pos, end, line0, over)
        builder.add_exact(reader, seg)
        return _fed(seg)._replace(newlines=1)
    n = end - pos
    if data is None:
        data = src.pread(n, pos)
    elif len(data) > n:
        data = data[:n]
    seg = Segment(pos=pos, end=end, data=data, text_offset=pos, line0=line0,
                  torn=end >= src.size and not data.endswith(b"\n"))
    builder.add_exact(reader, seg)
    return _fed(seg)


def _feed_cuts(reader: LogReader, builder: IndexBuilder, src: RawJsonlSource, st: _At,
               stop: Optional[int]) -> Iterator[Fed]:
    """Feed the segments from ``st`` on (until ``stop``, see :func:`_cuts`), each at byte level
    where it passes, else exactly; ``st`` follows."""
    want_legacy = builder.legacy is not None
    for pos, end, at, data, over in _cuts(src, st.pos, st.at, stop):
        blk = _scan_cut(pos, end, data, builder.expected, want_legacy) if over is None else None
        if blk is not None:
            builder.add_block(pos, end, st.line0, blk)
            fed = Fed(pos, end, st.line0, blk.rows, pos, end - pos, False, False)
        else:
            fed = _exact_cut(reader, builder, src, pos, end, data, over, st.line0)
        st.pos, st.at = end, at
        if st.line0 is not None:
            st.line0 += fed.newlines
        yield fed


# a worker's record of one segment: (pos, end, next read, kind, the _Block as a tuple | over-limit torn | None)
_Rec = tuple[int, int, int, int, Union[tuple[Any, ...], bool, None]]
_Range = tuple[int, int, list[_Rec]]


def _range_worker(src: RawJsonlSource, x: int, stop: Optional[int], legacy: bool) -> Optional[_Range]:
    """A worker's range: the segments from grid point ``x`` (a read's start) to ``stop``, each
    scanned at byte level with its seqs unchecked against the ones before (the parent checks
    that): ``(pos, x, [(pos, end, at, kind, block or over), ...])``, kind 1: fast, 0: exact,
    2: over the row limit; None when no segment starts in the read before ``x``."""
    before = src.pread(src.block, x - src.block)
    nl = before.rfind(b"\n")
    if nl < 0 or len(before) < src.block:
        return None
    pos = x - src.block + nl + 1
    recs: list[_Rec] = []
    for p, end, at, data, over in _cuts(src, pos, x, stop):
        if over is not None:
            recs.append((p, end, at, 2, over))
            continue
        blk = _scan_cut(p, end, data, None, legacy)
        if blk is None:
            recs.append((p, end, at, 0, None))
            continue
        try:                                   # (the marks as the index's arrays hold them: sent and added
            # as bytes, not an int object each; a seq past 64 bits goes as a list, as the index would fail on it)
            blk = blk._replace(marks_s=array("q", blk.marks_s).tobytes(), marks_c=array("b", blk.marks_c).tobytes())
        except OverflowError:
            pass
        recs.append((p, end, at, 1, tuple(blk)))
    return pos, x, recs


def index_workers() -> int:
    """Processes a big raw file is scanned with (``SESSION_LENS_INDEX_WORKERS``, default: the
    usable cores, at most 4); 1 in a process that runs other threads (no fork there)."""
    env = os.environ.get("SESSION_LENS_INDEX_WORKERS", "")
    try:
        n = int(env) if env else min(4, len(os.sched_getaffinity(0)))
    except (ValueError, AttributeError, OSError):
        n = 1
    return n if n > 1 and threading.active_count() == 1 and hasattr(os, "fork") else 1


def _fork_range(src: RawJsonlSource, x: int, stop: Optional[int], legacy: bool) -> tuple[int, int]:
    """(pid, read end of its pipe) of a forked worker scanning the range from ``x`` to ``stop``."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:                               # the child: scan, write the result, leave at once
        code = 1
        try:
            os.close(rfd)
            res: Any = _range_worker(src, x, stop, legacy)
            out = marshal.dumps(res)
            view = memoryview(out)
            while view:
                view = view[os.write(wfd, view):]
            code = 0
        finally:
            os._exit(code)
    os.close(wfd)
    return pid, rfd


def _collect(pid: int, rfd: int) -> Optional[_Range]:
    """A worker's result (None: it failed or found no segment start)."""
    parts = []
    try:
        while True:
            b = os.read(rfd, 1 << 20)
            if not b:
                break
            parts.append(b)
    finally:
        os.close(rfd)
        _, status = os.waitpid(pid, 0)
    if status != 0:
        return None
    try:
        res = marshal.loads(b"".join(parts))
    except (EOFError, ValueError, TypeError):
        return None
    return res if isinstance(res, tuple) else None


FIRST_SHARE = 1.0             # the first range's size against each worker's.  (1.1 while the scan was slower: a
                               # worker's fork and result were ~10 % of its range's time; with the compiled, windowed
                               # scan this process finished its larger range 15-28 ms after the worker at 1 GB, and
                               # 1.0 measured 4-5 % less wall at 1 and 4 GB: bench/profiles.md, Round 7)


def split_points(pos: int, size: int, block: int, n: int) -> list[int]:
    """Read-grid points (``pos`` + a multiple of ``block``) cutting ``[pos, size)`` into ``n`` ranges, the
    first (scanned by this process) :data:`FIRST_SHARE` times the others."""
    out: list[int] = []
    whole = FIRST_SHARE + n - 1
    for i in range(1, n):
        x = pos + int((size - pos) * (FIRST_SHARE + i - 1) / whole) // block * block
        if x > (out[-1] if out else pos) and x < size:
            out.append(x)
    return out


def _parallel_feed(reader: LogReader, builder: IndexBuilder, src: RawJsonlSource, st: _At,
                   grid: list[int]) -> Iterator[Fed]:
    """Feed a raw file from ``st``: the range up to ``grid[0]`` here, the ranges after it in forked
    workers, stitched in order.  A worker's range is taken only when it starts exactly where
    the scan stands (the same segment start and read grid), and a fast segment only when its
    first seq is the one expected; anything else is scanned here, so the index equals the
    one-pass index.  On any mismatch the scan goes on here to the end."""
    legacy = builder.legacy is not None
    kids = [(_fork_range(src, x, grid[i + 1] if i + 1 < len(grid) else None, legacy), x)
            for i, x in enumerate(grid)]
    try:
        yield from _feed_cuts(reader, builder, src, st, grid[0])
        while kids:
            (pid, rfd), x = kids.pop(0)
            res = _collect(pid, rfd)
            if res is None or (res[0], res[1]) != (st.pos, st.at):
                break
            for pos, end, at, kind, b in res[2]:
                blk = _Block(*b) if kind == 1 and isinstance(b, tuple) else None
                if blk is not None and blk.first == builder.expected:
                    builder.add_block(pos, end, st.line0, blk)
                    fed = Fed(pos, end, st.line0, blk.rows, pos, end - pos, False, False)
                else:
                    fed = _exact_cut(reader, builder, src, pos, end, None, bool(b) if kind == 2 else None, st.line0)
                st.pos, st.at = end, at
                if st.line0 is not None:
                    st.line0 += fed.newlines
                yield fed
        yield from _feed_cuts(reader, builder, src, st, None)
    finally:
        for (pid, rfd), _x in kids:            # (not taken: stopped, reaped)
            try:
                os.kill(pid, 9)
            except OSError:
                pass
            _collect(pid, rfd)


def _jsonl_feed(reader: LogReader, builder: IndexBuilder, src: RawJsonlSource, start: Optional[int],
                line0: Optional[int], workers: Optional[int] = None) -> Iterator[Fed]:
    """Feed a raw JSONL file from ``start`` (a segment start; None: the first row): exactly the
    segments ``src.forward(start, line0)`` cuts (see :func:`_cuts`); each at byte level where it
    passes, else exactly (the torn last one, a row over the row limit, one that fails a check).
    A big file is cut into ranges scanned by ``workers`` processes (None: :func:`index_workers`)."""
    pos = src.header_end if start is None else start
    st = _At(pos, pos, 2 if start is None else line0)
    n = index_workers() if workers is None else workers
    if n > 1 and src.size - pos >= PARALLEL_MIN:
        grid = split_points(pos, src.size, src.block, n)
        if grid:
            return _parallel_feed(reader, builder, src, st, grid)
    return _feed_cuts(reader, builder, src, st, None)


_steady_lock = threading.Lock()
_steady_scans = 0


def heap_steady(on: bool) -> bool:
    """glibc's malloc while a big log is scanned (True: the scan starts, False: it ended): each segment is
    read into a new ~1 MiB bytes object, which malloc would map afresh from the kernel (and unmap after)
    every time: a page fault per 4 KiB read, ~15 % of the scan.  During scans the freed buffers stay in
    the heap (no mmap for them, no trimming); when the last scan ends, big blocks are mapped again
    and the heap is trimmed, so memory stays bounded.  False when not glibc (nothing changed)."""
    global _steady_scans
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        mallopt, trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError, ImportError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3        # (malloc.h)
    with _steady_lock:
        _steady_scans += 1 if on else -1
        if on and _steady_scans == 1:
            mallopt(m_mmap_threshold, 16 << 20)
            mallopt(m_trim_threshold, 256 << 20)
        elif not on and _steady_scans == 0:
            mallopt(m_mmap_threshold, 128 << 10)    # (glibc's defaults)
            mallopt(m_trim_threshold, 128 << 10)
            trim(0)
    return True


STEADY_MIN = 32 << 20    # a log at least this big is read with the heap steady (steady_heap)


@contextmanager
def steady_heap(size: int) -> Iterator[None]:
    """glibc's malloc kept steady while a log of ``size`` bytes is read (:func:`heap_steady`,
    from :data:`STEADY_MIN`): each segment is a new ~1 MiB bytes object, which malloc maps afresh from the kernel
    and unmaps after once its thresholds are fixed (as after an index build in the same process): a page fault per
    4 KiB read (~2 s of system time per GB).  Steady, the freed segments' memory is reused."""
    steady = size >= STEADY_MIN and heap_steady(True)
    try:
        yield
    finally:
        if steady:
            heap_steady(False)



def scan(reader: LogReader, builder: IndexBuilder, segments: Optional[Iterable[Segment]] = None,
         progress: Optional[Callable[[int, int], None]] = None,
         on_segment: Optional[Callable[[Fed, IndexBuilder], None]] = None,
         start: Optional[int] = None, line0: Optional[int] = None, workers: Optional[int] = None) -> IndexBuilder:
    """Feed the log into ``builder``: fast where possible, exact otherwise.

    ``segments``: the segments to feed (None: a raw JSONL file is read from ``start``/``line0``
    by :func:`_jsonl_feed` with ``workers`` processes, any other source from ``source.forward()``).
    ``on_segment`` is told of each segment after it was fed."""
    total = max(1, reader.source.size)
    fast = fast_applicable(reader)
    src = reader.source
    fed: Iterator[Fed]
    if segments is None and fast and isinstance(src, RawJsonlSource):
        fed = _jsonl_feed(reader, builder, src, start, line0, workers)
    else:
        if segments is None:
            segments = src.forward(start, line0=line0) if isinstance(src, RawJsonlSource) else src.forward(start)
        fed = _feed_segments(reader, builder, segments, fast)
    collecting = gc.isenabled()
    gc.disable()           # (the scan makes tuples by the million and no cycles: the collector only costs time)
    steady = total >= PARALLEL_MIN and heap_steady(True)
    try:
        for f in fed:
            if on_segment is not None:
                on_segment(f, builder)
            if progress:
                progress(f.end if isinstance(f.end, int) else 0, total)
    finally:
        if collecting:
            gc.enable()
        if steady:
            heap_steady(False)
    if builder.legacy is not None and len(builder.legacy) == len(builder.idx):
        builder.idx.legacy = array("b", builder.legacy)
    return builder


def _feed_segments(reader: LogReader, builder: IndexBuilder, segments: Iterable[Segment], fast: bool) -> Iterator[Fed]:
    """Feed ``segments``, each at byte level where it passes, else exactly."""
    for seg in segments:
        rows = builder.try_fast(seg) if fast else 0
        if not rows:
            builder.add_exact(reader, seg)
            yield _fed(seg)
        else:                                  # (a fast segment's lines are its rows: no count of its newlines)
            yield Fed(seg.pos, seg.end, seg.line0, rows, seg.text_offset, len(seg.data), seg.torn, False)


def wants_legacy(reader: LogReader) -> bool:
    """v0/v1 logs keep per-segment legacy flags in their index (see :mod:`app.store.forking`)."""
    return (getattr(reader, "version", 0) or 0) < 2 and reader.source.kind in ("jsonl", "zstd")


def fast_index(reader: LogReader, progress: Optional[Callable[[int, int], None]] = None,
               problems: Optional[list[Problem]] = None) -> Optional[SeqIndex]:
    """The reader's SeqIndex by the byte-level scan (None when it does not apply)."""
    if not fast_applicable(reader):
        return None
    b = scan(reader, IndexBuilder(problems=problems, legacy=[] if wants_legacy(reader) else None), None, progress)
    return b.idx

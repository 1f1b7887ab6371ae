"""A fork trusts no cached index: the seed's segments are re-scanned before anything is copied.

A saved seq index (:mod:`app.store.indexcache`) is a hint: a file rewritten in place (inode, size and
mtime kept, the tail left alone, bytes appended) or a ``.idx`` re-signed with its (unkeyed) digest
gives marks that do not describe the file.  Before a fork plans on them, every index segment from
the header through the one holding the first seq after the seed (through the end of the log when the
fork is at the last turn) is scanned again by the C row scanner (:func:`app.log.index.fastindex.scan_buffer`:
row shape and seq contiguity) and compared with the index: segment extents, first and last seq, rows,
legacy flags and the marks (turn boundaries, messages) the plan is made of.  Anything that differs, or
that the byte-level scanner cannot confirm (a damaged row, a torn tail), makes :func:`index_agrees`
answer False: the fork then rebuilds the index from the file and plans again
(:func:`app.store.forking.checked_plan`).  zstd frames are decoded (bounded) and scanned the same way.
The source's revision (with its ctime, which no user can reset) is compared after the copy, so a
rewrite during the fork is caught there.
"""
from __future__ import annotations

import mmap
import os
from array import array
from typing import Any, Optional

from ..log.fold.fork import ForkPlan
from ..log.index.fastindex import IndexBuilder, fast_applicable, scan_buffer
from ..log.source.sources import Segment
from ..log.index.reader import LogReader, SeqIndex


class _Check:
    """The marks and the next expected seq while segments are compared."""

    def __init__(self, reader: LogReader, idx: SeqIndex) -> None:
        self.reader = reader
        self.idx = idx
        self.expected = 0
        self.mark_seq = array("q")
        self.mark_code = array("b")
        self.contig: Optional[int] = None     # where the exact scan found the seqs broken (None: not yet)

    def block(self, data: Any, start: int, stop: int, want: tuple[int, int, int], flag: Optional[int],
              seg: Segment) -> bool:
        """Whether ``data[start:stop]`` (the text of ``seg``) holds rows ``want`` = (first, last, rows)
        continuing the seqs so far (and the legacy ``flag`` when the index keeps flags); rows the
        byte-level scanner does not take (a damaged row, a seq gap, a torn tail) are read exactly."""
        blk = None
        if data[stop - 2:stop] == b"}\n":
            try:
                blk = scan_buffer(data, start, stop, self.expected, flag is not None)
            except TypeError:               # (a seq past 64 bits: the Python scanner, which wants bytes)
                blk = scan_buffer(bytes(data[start:stop]), 0, stop - start, self.expected, flag is not None)
        if blk is None:
            seg.data = bytes(data[start:stop])
            return self.exact(seg, want, flag)
        if (blk.first, blk.last, blk.rows) != want:
            return False
        if flag is not None and bool(blk.legacy) != bool(flag):
            return False
        self.expected = blk.last + 1
        ms = blk.marks_s if isinstance(blk.marks_s, list) else array("q", blk.marks_s)
        mc = blk.marks_c if isinstance(blk.marks_c, list) else array("b", blk.marks_c)
        self.mark_seq.extend(ms)
        self.mark_code.extend(array("b", mc))
        return True

    def exact(self, seg: Segment, want: tuple[int, int, int], flag: Optional[int]) -> bool:
        """:meth:`block` by the reader's exact envelope scan (as the index builder does it)."""
        before = self.expected
        b = IndexBuilder(expected=before, legacy=[] if flag is not None else None)
        b.add_exact(self.reader, seg)
        if b.broken and self.contig is None:
            self.contig = b.idx.contiguous_through if b.idx.contiguous_through >= before else before - 1
        got = b.idx
        if len(got) != 1 or (got.first_seq[0], got.last_seq[0], got.rows[0]) != want:
            return False
        if flag is not None and (b.legacy is None or bool(b.legacy[0]) != bool(flag)):
            return False
        self.expected = b.expected
        self.mark_seq.extend(got.mark_seq)
        self.mark_code.extend(got.mark_code)
        return True

    def marks_agree(self) -> bool:
        """The index's marks through the last seq compared are exactly the ones scanned, and it is
        contiguous exactly as far as the rows compared are."""
        n = len(self.mark_seq)
        idx = self.idx
        if (self.contig is None and idx.contiguous_through < self.expected - 1) or \
                (self.contig is not None and idx.contiguous_through != self.contig):
            return False
        if len(idx.mark_seq) < n or (len(idx.mark_seq) > n and idx.mark_seq[n] < self.expected):
            return False
        return list(idx.mark_seq[:n]) == list(self.mark_seq) and list(idx.mark_code[:n]) == list(self.mark_code)


def _last_segment(idx: SeqIndex, plan: ForkPlan) -> int:
    """Index of the last segment to check: the one holding the seq after the seed (the plan's next
    turn/start lies there), or the last one when the fork is at the end of the log."""
    if plan.anchor is None or plan.stored_through < 0:
        return len(idx) - 1
    i = idx.locate(plan.stored_through + 1)
    return len(idx) - 1 if i is None else i


def _jsonl_agrees(reader: LogReader, idx: SeqIndex, upto: int, flags: Optional[Any]) -> bool:
    src = reader.source
    chk = _Check(reader, idx)
    fd = os.open(src.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        if src.size <= 0:
            return False
        with mmap.mmap(fd, src.size, access=mmap.ACCESS_READ) as mm:
            at = src.header_end
            for i in range(upto + 1):
                pos, end = idx.seg_pos[i], idx.seg_end[i]
                if pos != at or not pos < end <= src.size:
                    return False
                want = (idx.first_seq[i], idx.last_seq[i], idx.rows[i])
                seg = Segment(pos=pos, end=end, data=b"", line0=idx.line0[i] if idx.line0[i] >= 0 else None,
                              torn=end == src.size and mm[end - 1:end] != b"\n")
                if not chk.block(mm, pos, end, want, flags[i] if flags is not None else None, seg):
                    return False
                at = end
            if upto == len(idx) - 1 and at != src.size:
                return False                   # (bytes after the last segment the index does not hold)
            return chk.marks_agree()
    finally:
        os.close(fd)


def _zstd_agrees(reader: LogReader, idx: SeqIndex, upto: int, flags: Optional[Any]) -> bool:
    from ..log.source.zstdframes import FrameError, decode_frame
    src = reader.source
    chk = _Check(reader, idx)
    fd = os.open(src.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        at, i = src.header_end, 0
        while i <= upto:
            pos, end = idx.seg_pos[i], idx.seg_end[i]
            j = i
            while j + 1 < len(idx) and idx.seg_pos[j + 1] == pos:
                j += 1                          # (windows of one frame: scanned as one text)
            if pos != at or not pos < end <= src.size or any(idx.seg_end[k] != end for k in range(i, j + 1)):
                return False
            try:
                text = decode_frame(os.pread(fd, end - pos, pos))
            except (FrameError, ValueError, MemoryError):
                return False
            want = (idx.first_seq[i], idx.last_seq[j], sum(idx.rows[i:j + 1]))
            flag = int(any(flags[i:j + 1])) if flags is not None else None
            if not chk.block(text, 0, len(text), want, flag, Segment(pos=pos, end=end, data=text)):
                return False
            at, i = end, j + 1
        if i >= len(idx) and at != src.size:
            return False
        return chk.marks_agree()
    finally:
        os.close(fd)


def same_for_plan(old: SeqIndex, new: SeqIndex, plan: ForkPlan) -> bool:
    """Whether a plan made from ``old`` is what ``new`` (rebuilt from the file) gives too: the same marks
    through the seq after the seed, the cut in the same segment, contiguous as far."""
    upto = plan.stored_through + 1
    if plan.stored_through < 0:
        return True
    marks_old = [(s, c) for s, c in zip(old.mark_seq, old.mark_code) if s <= upto]
    marks_new = [(s, c) for s, c in zip(new.mark_seq, new.mark_code) if s <= upto]
    i = new.locate(plan.stored_through)
    return marks_old == marks_new and i is not None and (new.seg_pos[i], new.seg_end[i]) == tuple(plan.cut_segment or ()) \
        and min(old.contiguous_through, upto) == min(new.contiguous_through, upto)


def index_agrees(reader: LogReader, plan: ForkPlan) -> bool:
    """Whether the reader's index describes the stored seed (and what the plan read after it) exactly,
    by a fresh byte-level scan of those segments.  SQLite sessions (no cached index): True."""
    idx, src = reader.index, reader.source
    if src.kind not in ("jsonl", "zstd"):
        return True
    if idx is None or not len(idx) or not fast_applicable(reader):
        return False                # (an envelope-free snapshot: only the exact scan reads it; rebuilt)
    flags = getattr(idx, "legacy", None)
    if flags is not None and len(flags) != len(idx):
        flags = None
    upto = _last_segment(idx, plan)
    if src.kind == "jsonl":
        return _jsonl_agrees(reader, idx, upto, flags)
    return _zstd_agrees(reader, idx, upto, flags)

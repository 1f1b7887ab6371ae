"""LogReader: pages, tail, index and full scans over one physical source.

* :meth:`LogReader.tail_page` reads backwards from the end only as far as the host
  paging rule needs (spec §8): count back ``max_messages`` append-origin user/assistant
  messages, then include from the oldest counted message's first cited event.
* :meth:`LogReader.page_before` continues from a page's token (or a ``before_seq``).
* :meth:`LogReader.tail_state` finds the physical tail (torn / malformed rows after the
  last ``turn/end``) and the logical closure, reading back only to the last ``turn/end``.
* :meth:`LogReader.build_index` is a forward scan that decodes only the envelope keys it
  needs (seq, type, packed member count): a sparse seq -> segment index.
* :meth:`LogReader.scan` streams every event (full decode) into consumers (folds,
  attempt tracker, repair tracker) with bounded memory.
Reading never writes.
"""
from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass, field
from typing import Any, Optional, Union
from collections.abc import Callable, Iterable, Iterator, Sequence

import msgspec

from ..format.codec import RowCodec, parse_header
from ..format.limits import MAX_PAGE_ROWS, MAX_TAIL_ROWS
from ..format.model import BadRow, Event, Header, Item, Problem, is_event
from .integrity import holds_turn_end
from .mapped import INDEX_ARRAYS, MappedArray
from ..fold.repair import TailTracker
from ..source.sources import RowPos, Segment, Source, open_source
from .rowprobe import (LEGACY_TYPES, ProbeRow, RowExtent, ScanRowFast, envelope_free_seqs, maybe_legacy, row_extent,
                       scan_lines_fast, scan_lines_probe)

MESSAGE_TYPES = ("user/message", "assistant/message")
MARK_NAMES = ("turn/start", "turn/end", "assistant/message", "session/end-seed")
MARK_CODES = {t: i for i, t in enumerate(MARK_NAMES)}
MARK_TYPES = frozenset(MARK_NAMES)
DEFAULT_MAX_MESSAGES = 50


# --------------------------------------------------------------------------- results

@dataclass
class PageToken:
    """Where the next older page continues: segments ending at ``end``, rows before ``pos``."""
    end: int                           # a segment end (file offset; SQLite: seq)
    pos: Optional[RowPos]              # None: every row of those segments


@dataclass
class Page:
    items: list[Item]                  # Events and BadRows in stored order (physical)
    has_more: bool
    token: Optional[PageToken]         # continue older pages from here (None: nothing older)
    tail: bool                         # the page ends at the end of the log
    messages: int                      # append-origin user/assistant messages counted
    closure: list[Event] = field(default_factory=list)   # synthesized closers (logical tail page)
    dropped: list[Item] = field(default_factory=list)    # stored rows a repair would truncate (tail page)
    tail_state: Optional[TailState] = None               # the TailState behind closure/dropped (tail page)

    @property
    def events(self) -> list[Event]:
        return [it for it in self.items if is_event(it)]

    @property
    def base_seq(self) -> Optional[int]:
        for it in self.items:
            if is_event(it):
                return it.seq
        return None

    @property
    def last_seq(self) -> Optional[int]:
        for it in reversed(self.items):
            if is_event(it):
                return it.seq
        return None

    def logical_items(self) -> list[Event]:
        """Events of the logical face: no bad rows, no truncated tail rows, closers appended."""
        drop = {id(x) for x in self.dropped}
        out = [it for it in self.items if is_event(it) and id(it) not in drop]
        return out + list(self.closure)


@dataclass
class TailState:
    open_turn: Optional[int]
    closure: list[Event]               # synthesized events (empty when the log ends between turns)
    cut_pos: Optional[RowPos]          # pos of the first row a repair would drop (None: none)
    dropped: list[Item]                # stored rows at/after cut_pos (torn, malformed, out-of-order…)
    last_seq: int                      # last kept event seq (-1: empty)
    last_turn_end_seq: Optional[int]
    problems: list[Problem]
    tracker: Optional[TailTracker] = None   # the TailTracker behind it (copy it before feeding more rows)

    @property
    def is_open(self) -> bool:
        return self.open_turn is not None


def tail_state_of(tt: TailTracker) -> TailState:
    """A TailState (with problems) from a fed :class:`~app.log.fold.repair.TailTracker`."""
    problems: list[Problem] = []
    if tt.defect is not None:
        it, _why = tt.defect
        if not is_event(it):                 # "bad": a stored row that is not an event
            problems.append(Problem(code="torn-tail", message=f"{it.kind} row after the last turn/end: {it.reason}",
                                    line=it.line, offset=it.offset if it.offset >= 0 else None))
        else:
            prev = tt.prev
            problems.append(Problem(code="torn-tail", message=f"seq {it.seq} after {prev} breaks contiguity "
                                    "after the last turn/end", seq=it.seq, line=it.line))
    dropped = list(tt.dropped)
    if dropped:
        n_ev = sum(1 for d in dropped if is_event(d))
        problems.append(Problem(code="repair-would-truncate",
                                message=f"a repair would truncate {len(dropped)} stored row(s) "
                                        f"({n_ev} decodable event(s)) from the tail; the physical view shows them"))
    end = tt.last_turn_end
    return TailState(open_turn=tt.open_turn, closure=tt.closure(), cut_pos=dropped[0].pos if dropped else None,
                     dropped=dropped, last_seq=tt.last_seq, problems=problems,
                     last_turn_end_seq=end.seq if end is not None else None, tracker=tt)


class _LeanTail(TailTracker):
    """A TailTracker fed a whole log that holds no region and a bounded ``dropped`` list."""

    over = 0

    def apply(self, it: Item) -> None:
        super().apply(it)
        self.region.clear()
        if len(self.dropped) > MAX_TAIL_ROWS:
            self.dropped.pop()
            self.over += 1

    def _restart(self, turn_end: Event) -> None:
        super()._restart(turn_end)
        self.over = 0


def row_key(it: Item) -> tuple[object, object]:
    """A stored row's physical identity (position, packed member): the same row read twice,
    by two readers or two reads, has the same key."""
    return (it.pos, getattr(it, "member", None))


def extend_tail_page(page: Page, tracker: TailTracker, rows: Iterable[Item]) -> Page:
    """The tail page after ``rows`` (stored rows, in order) were appended to the log.

    ``tracker`` is the page's tail tracker (``page.tail_state.tracker.copy()``, owned by the
    caller and fed here).  A torn last row of ``page`` (a write in progress when it was
    read) is forgotten: its complete row is among ``rows``.  Closure and dropped rows are
    those of the grown log, as :meth:`LogReader.tail_page` would give them."""
    items = list(page.items)
    removed = tracker.retract_trailing_bad()
    if removed:
        gone = {row_key(x) for x in removed}
        while items and not is_event(items[-1]) and row_key(items[-1]) in gone:
            items.pop()
    messages = page.messages
    for it in rows:
        tracker.apply(it)
        items.append(it)
        if is_event(it) and it.type in MESSAGE_TYPES and it.surface_op == "append":
            messages += 1
    st = tail_state_of(tracker)
    drop = {row_key(d) for d in st.dropped}
    return Page(items=items, has_more=page.has_more, token=page.token, tail=True, messages=messages,
                closure=st.closure, dropped=[it for it in items if row_key(it) in drop] if drop else [],
                tail_state=st)


def split_page(page: Page, max_messages: int) -> Optional[tuple[Page, Page]]:
    """Cut a page that grew past ``max_messages`` the way the host pages (spec §8): the newer
    part holds the last ``max_messages`` append-origin messages from the first event the
    oldest of them cites.  Returns (older, newer) or None when it needs no cut."""
    count = 0
    cut = None
    for it in reversed(page.items):
        if is_event(it) and it.type in MESSAGE_TYPES and it.surface_op == "append":
            count += 1
            if count == max_messages:
                cited = [s for s in (it.source_event_seqs or ()) if isinstance(s, int)]
                cut = min([it.seq] + cited)
                break
    if cut is None:
        return None
    j = None
    for i in range(len(page.items) - 1, -1, -1):
        it = page.items[i]
        if is_event(it) and it.seq < cut:
            j = i
            break
    if j is None:
        return None
    older_items, newer_items = page.items[:j + 1], page.items[j + 1:]
    n_old = sum(1 for it in older_items if is_event(it) and it.type in MESSAGE_TYPES and it.surface_op == "append")
    older = Page(items=older_items, has_more=page.has_more, token=page.token, tail=False, messages=n_old)
    newer = Page(items=newer_items, has_more=True, token=None,
                 tail=page.tail, messages=page.messages - n_old, closure=page.closure, tail_state=page.tail_state)
    if page.tail and page.dropped:
        keep = {row_key(it) for it in newer_items}
        newer.dropped = [d for d in page.dropped if row_key(d) in keep]
    return older, newer


class SeqIndex:
    """Sparse index: per segment its physical extent and seq range.

    Its arrays are Python lists and arrays while it is built; an index read from its cache file
    may hold them as :class:`MappedArray` views of a map of the file instead (``app.store.indexcache``:
    file-backed pages the kernel can drop, not the process's anonymous memory, issue 36).  Such
    an index reads the same; :meth:`thaw` copies them into arrays before anything is added, and a
    pickled index carries arrays."""

    def __init__(self) -> None:
        self.seg_pos: list[int] = []
        self.seg_end: list[int] = []
        self.first_seq = array("q")
        self.last_seq = array("q")
        self.line0 = array("q")
        self.rows = array("q")
        self.monotonic = True
        self.events = 0
        self.last = -1
        self.contiguous_through = -1     # seqs 0..this are all present, in order
        self.mark_seq = array("q")        # seqs of MARK_TYPES rows, in stored order
        self.mark_code = array("b")       # their MARK_CODES
        self.legacy: Optional[array[int]] = None   # v0/v1: per segment, 1 if it may hold a legacy-shape row (None: unknown)

    def marks(self, lo: int = -1, hi: Optional[int] = None) -> Iterator[tuple[int, str]]:
        """(seq, type) of turn boundaries, assistant messages and end-seeds with lo <= seq <= hi."""
        i = bisect.bisect_left(self.mark_seq, lo) if self.monotonic else 0
        n = len(self.mark_seq)
        while i < n:
            s = self.mark_seq[i]
            if hi is not None and s > hi:
                if self.monotonic:
                    return
            elif s >= lo:
                yield s, MARK_NAMES[self.mark_code[i]]
            i += 1

    def mapped(self) -> bool:
        """True when some of its arrays are read from a mapped file (:class:`MappedArray`)."""
        return any(isinstance(getattr(self, name), MappedArray) for name, _ in INDEX_ARRAYS)

    def thaw(self) -> None:
        """Its arrays as arrays of its own (copies of the mapped ones; the map is let go)."""
        for name, _ in INDEX_ARRAYS:
            a = getattr(self, name)
            if isinstance(a, MappedArray):
                setattr(self, name, a.copy())

    def add(self, pos: int, end: int, first: int, last: int, line0: Optional[int], rows: int, events: int) -> None:
        if isinstance(self.seg_pos, MappedArray):
            self.thaw()
        if first >= 0:
            if self.first_seq and first <= self.last:
                self.monotonic = False
            self.last = max(self.last, last)
        self.seg_pos.append(pos)
        self.seg_end.append(end)
        self.first_seq.append(first)
        self.last_seq.append(last)
        self.line0.append(line0 if line0 is not None else -1)
        self.rows.append(rows)
        self.events += events

    def __len__(self) -> int:
        return len(self.seg_pos)

    def locate(self, seq: int) -> Optional[int]:
        """Index of the segment holding ``seq`` (None if no segment does)."""
        if self.monotonic:
            i = bisect.bisect_right(self._firsts(), seq) - 1
            while i >= 0 and self.first_seq[i] < 0:
                i -= 1
            if i >= 0 and self.first_seq[i] <= seq <= self.last_seq[i]:
                return i
            return None
        for i in range(len(self.seg_pos)):
            if self.first_seq[i] <= seq <= self.last_seq[i]:
                return i
        return None

    _cache: array[int]                   # _firsts() of the first _cache_n segments
    _cache_n: int

    def _firsts(self) -> array[int]:
        # segments without events carry -1; replace by the previous first for bisect
        if getattr(self, "_cache_n", -1) != len(self.first_seq):
            out = array("q")
            prev = -1
            for f in self.first_seq:
                prev = f if f >= 0 else prev
                out.append(prev)
            self._cache, self._cache_n = out, len(self.first_seq)
        return self._cache

    def memory_bytes(self) -> int:
        return sum(a.itemsize * len(a) for a in (self.first_seq, self.last_seq, self.line0, self.rows,
                                                 self.mark_seq, self.mark_code)) + \
            16 * 2 * len(self.seg_pos)


# --------------------------------------------------------------------------- reader

class LogReader:
    def __init__(self, source: Source):
        self.source = source
        self.header: Optional[Header]
        self.header, hp = parse_header(source.header_raw)
        self.problems: list[Problem] = list(source.problems) + hp
        self.version: int = (self.header.version or 0) if self.header else 0
        self.codec = RowCodec(self.header.id if self.header else "", version=self.version)
        self.index: Optional[SeqIndex] = None
        self._tail: Optional[tuple[tuple[int, object], TailState]] = None   # ((size, generation), TailState)
        self.envelope_free = False
        if self.fatal is None:
            self._restore_envelopes(envelope_free_seqs(source))

    @property
    def format_version(self) -> int:
        """The stored format version (0–4) of this file's header (0 for a header without one)."""
        return self.version

    def _restore_envelopes(self, seqs: Optional[dict[object, int]]) -> None:
        """An envelope-free test snapshot (:func:`~.rowprobe.envelope_free_seqs`): its rows' seqs restored."""
        if not seqs:
            return
        self.envelope_free = True
        self.codec.envelope_seqs = seqs
        self.problems.append(Problem(code="envelopes-restored",
                                     message="an envelope-free test snapshot: seq restored as the row's logical "
                                             "index and time as 0, as dsh's test readers do"))

    @classmethod
    def open(cls, path: str) -> LogReader:
        return cls(open_source(path))

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def fatal(self) -> Optional[Problem]:
        for p in self.problems:
            if p.fatal:
                return p
        return None

    def close(self) -> None:
        self.source.close()

    # ------------------------------------------------------------------ decoding
    def decode_segment(self, seg: Segment, problems: Optional[list[Problem]] = None) -> list[Item]:
        items: list[Item] = []
        if seg.bad:
            items.append(BadRow(kind=seg.bad_kind, reason=seg.bad, raw=seg.data, pos=seg.row_pos(0),
                                offset=seg.text_offset, line=seg.line0))
            if problems is not None:
                problems.append(Problem(code=seg.bad_kind, message=seg.bad, line=seg.line0,
                                        offset=seg.pos if isinstance(seg.pos, int) else None))
            return items
        for row in seg.split_rows():
            items.extend(self.decode_split_row(row, problems))
        return items

    def decode_split_row(self, row: tuple[RowPos, int, Optional[int], bytes, bool],
                         problems: Optional[list[Problem]] = None) -> list[Item]:
        """The items of one row of ``Segment.split_rows`` (rows decode independently of each other)."""
        pos, off, line, raw, complete = row
        if not complete:
            if not raw:
                return []
            reason = "torn last row (no newline): an interrupted write"
            if problems is not None:
                problems.append(Problem(code="torn-row", message=reason, line=line, offset=off))
            return [BadRow(kind="torn", reason=reason, raw=raw, pos=pos, offset=off, line=line)]
        if not raw.strip():
            reason = "empty line"
            if problems is not None:
                problems.append(Problem(code="malformed", message=reason, line=line, offset=off))
            return [BadRow(kind="malformed", reason=reason, raw=raw, pos=pos, offset=off, line=line)]
        got, probs = self.codec.decode_row(raw, pos=pos, offset=off, line=line)
        if problems is not None:
            problems.extend(probs)
        return got

    def backward_items(self, token: Optional[PageToken] = None) -> Iterator[tuple[Item, int]]:
        """Yield (item, segment_end) newest first, starting before ``token``: each segment's rows
        are decoded newest first as they are asked for (a caller stopping early decodes only those)."""
        end = token.end if token else None
        limit: Any = token.pos if token else None      # (an int in a JSONL file, a tuple in a zstd one)
        for seg in self.source.backward(end):
            rows: Iterable[list[Item]]
            if seg.bad:
                rows = [self.decode_segment(seg)]
            else:                                   # lazily, newest first (a row's items all have its pos)
                rows = (self.decode_split_row(row) for row in reversed(list(seg.split_rows()))
                        if limit is None or row[0] < limit)
            for items in rows:
                for it in reversed(items):
                    if limit is not None and it.pos >= limit:
                        continue
                    yield it, seg.end

    def iter_items(self) -> Iterator[Item]:
        """All stored rows' items, oldest first."""
        for seg in self.source.forward():
            yield from self.iter_segment(seg)

    def iter_segment(self, seg: Segment, problems: Optional[list[Problem]] = None) -> Iterator[Item]:
        """:meth:`decode_segment`'s items one at a time, a packed row of any member count expanded in
        bounded memory (:meth:`~app.log.format.codec.RowCodec.iter_row`)."""
        if seg.bad:
            yield from self.decode_segment(seg, problems)
            return
        for row in seg.split_rows():
            pos, off, line, raw, complete = row
            if complete and raw.strip():
                yield from self.codec.iter_row(raw, pos=pos, offset=off, line=line, problems=problems)
            else:
                yield from self.decode_split_row(row, problems)

    # ------------------------------------------------------------------ tail analysis
    def tail_state(self) -> TailState:
        """Physical tail and logical closure (reads back to the last ``turn/end`` only)."""
        key = (self.source.size, getattr(self.source, "generation", 0))
        if self._tail and self._tail[0] == key:
            return self._tail[1]
        region: list[Item] = []      # newest first
        last_turn_end: Optional[Item] = None
        tt: TailTracker
        for it, _ in self.backward_items():
            if holds_turn_end(it):       # also a turn/end row with a bad envelope (dsh's scanner)
                last_turn_end = it
                break
            region.append(it)
            if len(region) > MAX_TAIL_ROWS:
                break
        if len(region) > MAX_TAIL_ROWS:
            # a tail too long to hold: one forward pass with a tracker that keeps no rows
            region = []
            tt = _LeanTail(self.version)
            for it in self.iter_items():
                tt.apply(it)
        else:
            tt = TailTracker(self.version)
            if last_turn_end is not None:
                tt.apply(last_turn_end)
            for it in reversed(region):
                tt.apply(it)
        st = tail_state_of(tt)
        if isinstance(tt, _LeanTail) and tt.over:
            st.problems.append(Problem(code="tail-over-limit",
                                       message=f"{tt.over} more row(s) after the first tail defect are not "
                                               f"listed (over the {MAX_TAIL_ROWS} row limit)"))
        self._tail = (key, st)
        return st

    # ------------------------------------------------------------------ pages
    def tail_page(self, max_messages: int = DEFAULT_MAX_MESSAGES) -> Page:
        return self._page(None, None, max_messages)

    def page_before(self, ref: Union[Page, PageToken, int], max_messages: int = DEFAULT_MAX_MESSAGES) -> Page:
        """The page older than ``ref``: a Page, a PageToken, or a seq (``beforeSeq``)."""
        if isinstance(ref, Page):
            if ref.token is None:
                return Page(items=[], has_more=False, token=None, tail=False, messages=0)
            return self._page(ref.token, None, max_messages)
        if isinstance(ref, PageToken):
            return self._page(ref, None, max_messages)
        return self._page(self.token_for_seq(int(ref)), int(ref), max_messages)

    def token_for_seq(self, seq: int) -> Optional[PageToken]:
        idx = self.index or self.build_index()
        i = idx.locate(seq)
        if i is None:
            # before_seq past the end or inside a gap: start at the first segment beyond it
            for j in range(len(idx)):
                if idx.first_seq[j] > seq:
                    return PageToken(end=idx.seg_end[j], pos=None)
            return None
        # every row of the segments ending at seg_end (pos None: a row position is a tuple in
        # a zstd file, an int in a JSONL file; the seq filter of page_before does the cut)
        return PageToken(end=idx.seg_end[i], pos=None)

    def _page(self, token: Optional[PageToken], before_seq: Optional[int], max_messages: int) -> Page:
        collected: list[Item] = []
        ends: list[int] = []
        count = 0
        cut: Optional[int] = None
        has_more = False
        for it, seg_end in self.backward_items(token):
            if len(collected) >= MAX_PAGE_ROWS and it.pos != collected[-1].pos:
                has_more = True               # a page holds a bounded number of rows (whole rows)
                break
            if is_event(it):
                if before_seq is not None and it.seq >= before_seq:
                    continue
                if cut is not None and it.seq < cut:
                    has_more = True
                    break
            collected.append(it)
            ends.append(seg_end)
            if is_event(it) and it.type in MESSAGE_TYPES and it.surface_op == "append":
                count += 1
                if count == max_messages:
                    cited = [s for s in (it.source_event_seqs or ()) if isinstance(s, int)]
                    cut = min([it.seq] + cited)
        collected.reverse()
        ends.reverse()
        tail = token is None and before_seq is None
        nxt = PageToken(end=ends[0], pos=collected[0].pos) if collected and has_more else None
        page = Page(items=collected, has_more=has_more, token=nxt, tail=tail, messages=count)
        if tail:
            st = self.tail_state()
            page.tail_state = st
            page.closure = st.closure
            if st.dropped:
                ids = {row_key(d) for d in st.dropped}
                page.dropped = [it for it in collected if row_key(it) in ids]
        return page

    # ------------------------------------------------------------------ index
    def build_index(self, progress: Optional[Callable[[int, int], None]] = None,
                    problems: Optional[list[Problem]] = None) -> SeqIndex:
        """Forward scan decoding only seq/type/packed counts; contiguity problems recorded.

        Besides the seq ranges it keeps, per segment, the seqs of turn boundaries and
        assistant messages (few), so forks and turn navigation need no further full scan.
        """
        from .fastindex import fast_index
        fast = fast_index(self, progress, problems)
        if fast is not None:
            self.index = fast
            return fast
        return self.build_index_exact(progress, problems)

    def build_index_exact(self, progress: Optional[Callable[[int, int], None]] = None,
                          problems: Optional[list[Problem]] = None) -> SeqIndex:
        """:meth:`build_index` decoding every row's envelope (the reference for the byte-level scan)."""
        idx = SeqIndex()
        probs = problems if problems is not None else []
        expected = 0
        broken = False
        total = max(1, self.physical_total())
        # v0/v1 zstd: note which frames may hold legacy-shape rows, so a fork copies the others
        # as stored without decompressing them again (costs ~15% of the scan; raw JSONL forks
        # find those rows while copying instead)
        flags: Optional[list[int]] = [] if (self.version or 0) < 2 and self.source.kind == "zstd" else None
        for seg in self.source.forward():
            first, last, n_ev, n_rows = -1, -1, 0, 0
            for typ, s, n in self.scan_segment_rows(seg, probs, flags):
                n_rows += 1
                if s is None:
                    broken = True
                    continue
                if first < 0:
                    first = s
                if s != expected:
                    probs.append(Problem(code="seq-gap" if s > expected else "seq-order",
                                         message=f"seq {s} where {expected} was expected", seq=s))
                    broken = True
                if typ in MARK_CODES:
                    idx.mark_seq.append(s)
                    idx.mark_code.append(MARK_CODES[typ])
                last = s + n - 1
                expected = last + 1
                n_ev += n
                if not broken:
                    idx.contiguous_through = last
            idx.add(seg.pos, seg.end, first, last, seg.line0, n_rows, n_ev)
            if progress:
                progress(self.progress_of(seg.end), total)
        if flags is not None and len(flags) == len(idx):
            idx.legacy = array("b", flags)
        self.index = idx
        return idx

    def physical_total(self) -> int:
        """The total a scan's progress counts up to (the source's physical size)."""
        return self.source.size

    def progress_of(self, end: object) -> int:
        """A scan's progress at a segment ending at ``end`` (out of :meth:`physical_total`)."""
        return end if isinstance(end, int) else 0

    def _scan_segment_seqs(self, seg: Segment, problems: list[Problem]) -> list[tuple[Optional[int], int]]:
        """[(first_seq, members)] per stored row, None for an unreadable row."""
        return [(s, n) for _, s, n in self.scan_segment_rows(seg, problems)]

    def scan_segment_rows(self, seg: Segment, problems: list[Problem],
                          legacy: Optional[list[int]] = None) -> list[RowExtent]:
        """[(type, first_seq, members)] per stored row, (None, None, 0) for an unreadable one.

        Decodes only ``type``/``seq``/``seq0`` and a packed row's ``dt`` length; payloads are skipped.
        ``legacy`` (v0/v1): gets one flag appended, whether the segment may hold a legacy-shape row.
        """
        if seg.bad:
            problems.append(Problem(code=seg.bad_kind, message=seg.bad, line=seg.line0,
                                    offset=seg.pos if isinstance(seg.pos, int) else None))
            if legacy is not None:
                legacy.append(True)
            return [(None, None, 0)]
        if seg.rows is None and not seg.torn and not self.envelope_free:
            try:
                rows: Sequence[Union[ScanRowFast, ProbeRow]]
                if legacy is not None:
                    probed = scan_lines_probe(seg.data)
                    legacy.append(any(maybe_legacy(r) for r in probed if r.type in LEGACY_TYPES))
                    rows = probed
                else:
                    rows = scan_lines_fast(seg.data)
                return [row_extent(r) for r in rows]
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                pass
        out: list[RowExtent] = []
        seg_legacy = False
        for it in self.decode_segment(seg, problems):
            seg_legacy = seg_legacy or not is_event(it) or bool(it.legacy)
            if is_event(it):
                if it.member:
                    t, s, n = out[-1]
                    out[-1] = (t, s, n + 1)
                else:
                    out.append((it.packed or it.type, it.seq, 1))
            else:
                out.append((None, None, 0))
        if legacy is not None:
            legacy.append(seg_legacy)
        return out

    def scan_rows(self, problems: Optional[list[Problem]] = None) -> Iterator[tuple[Segment, list[RowExtent]]]:
        """Fast forward scan: (segment, [(type, first_seq, members)]) per segment."""
        probs = problems if problems is not None else []
        for seg in self.source.forward():
            yield seg, self.scan_segment_rows(seg, probs)


    def event_at(self, seq: int) -> Optional[Event]:
        idx = self.index or self.build_index()
        i = idx.locate(seq)
        if i is None:
            return None
        end = idx.seg_end[i]
        for seg in self.source.backward(end):
            for it in self.decode_segment(seg):
                if is_event(it) and it.seq == seq:
                    return it
            break
        return None

    # ------------------------------------------------------------------ full scans
    def iter_events(self, logical: bool = False, problems: Optional[list[Problem]] = None,
                    progress: Optional[Callable[[int, int], None]] = None) -> Iterator[Event]:
        """Every event oldest first.  ``logical``: repair cut applied and closers appended."""
        cut = None
        st = None
        if logical:
            st = self.tail_state()
            cut = st.cut_pos
        total = max(1, self.physical_total())
        for seg in self.source.forward():
            for it in self.iter_segment(seg, problems):
                if cut is not None and it.pos >= cut:
                    break
                if is_event(it):
                    yield it
            else:
                if progress:
                    progress(self.progress_of(seg.end), total)
                continue
            break
        if logical and st is not None:
            yield from st.closure

    def events(self, logical: bool = False) -> list[Event]:
        return list(self.iter_events(logical=logical))

    def items(self) -> list[Item]:
        return list(self.iter_items())

"""Session titles for the session list: bounded reads per file, cached by revision (decision 0016).

The title of a session is its last ``session/title`` event (spec §2.4, last wins), found with
``bytes.find`` (C speed); only the title rows are decoded.  dsh writes a fallback title with the
first prompt, the provider's title after turn 1 and a user's rename between turns.

On a first list a title is looked for only in two bounded regions of each file (:data:`BOUNDS`): the
head region (the listing's first read, which already holds the header) and the tail region.  A title
found in the tail region is exact (nothing after it was left unread), and so is any title when the
two regions cover the whole file; a title that comes only from the head region (or no title at
all) while a middle was left unread is **provisional**: a rename in the middle may be newer.  Reads
are ``(title, exact)``; provisional titles are cached with that flag and refined by reading the
middle (``exact=True``: ``session-lens list --exact-titles``, the window's background refinement),
which upgrades the cache entry.

Raw JSONL: the rows starting in the tail region (``TAIL`` bytes), else the rows lying whole in the
head region (``WINDOW`` bytes; a title row cut by its end is completed with a read of at most
``MIDDLE_OVERLAP`` bytes).  Exact: every row, read backwards from the end in ``MIDDLE_STEP`` reads
into a reused buffer, each byte read and searched once, stopping at the first read with a title.

zstd (bounds in compressed bytes, so the libzstd work is bounded): the chain of whole frames that
ends the file in the tail region (``ZSTD_TAIL``; the last frame read whole up to ``ZSTD_FIRST_FRAME``
when it is bigger), else the first frame after the header frame (read
whole up to ``ZSTD_FIRST_FRAME``) and the whole frames of the head region (``ZSTD_WINDOW``).  Exact:
the frames between the head frame and the tail chain, read forwards in ``ZSTD_STEP`` reads (each
frame decoded once, memory bounded).  A run of frames that declare their sizes is walked and decoded
by libzstd in one call into a reused buffer and searched there; a torn, unsized or damaged frame
takes the frame-by-frame path.  Checksums are verified and plaintext bounded.  A title row counts
only when it lies in one frame (a frame ends at a record boundary: a row across two is damage, as
``inspect`` reads it); a frame in the read regions that does not decode is named among the
session's problems.

Titles are cached in ``<cache>/titles.json`` (:mod:`app.store.title_cache`) keyed by path and revision
(size and mtime, as the listing's own stat gives them), with the header facts the listing read in the
same open and whether the title is exact, so listing a home again opens no session whose file did not
change (one ``stat`` each).
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional, Union

import msgspec

from . import title_cache

if TYPE_CHECKING:
    from .discovery import SessionInfo

# The bounds of a first list (decision 0016 gives the measurements behind them), in bytes read:
WINDOW = 64 << 10                  # raw JSONL: the head region (the listing's first read, which holds the header)
TAIL = 32 << 10                    # raw JSONL: the tail region
ZSTD_WINDOW = 12 << 10             # zstd: the head region in compressed bytes (the first read)
ZSTD_TAIL = 4 << 10                # zstd: the tail region in compressed bytes (~2-4x as much text)
ZSTD_FIRST_FRAME = 256 << 10       # zstd: the first frame after the header is read whole up to this size
BOUNDS = {"WINDOW": WINDOW, "TAIL": TAIL, "ZSTD_WINDOW": ZSTD_WINDOW, "ZSTD_TAIL": ZSTD_TAIL,
          "ZSTD_FIRST_FRAME": ZSTD_FIRST_FRAME}      # (for the bench and the docs: the same values)
ZSTD_PLAIN_LIMIT = 16 << 20        # plaintext decoded from one run of frames at most (a bomb is passed over)
MIDDLE_STEP = 1 << 20              # exact titles, raw JSONL: read backwards in reads of this much
MIDDLE_OVERLAP = 64 << 10          # ... each read before the last overlapping the next by this much
ZSTD_STEP = 1 << 20                # exact titles, zstd: the middle's frames read forwards in reads of this much
ZSTD_FRAME_LIMIT = 64 << 20        # ... a frame bigger than this (compressed) ends the middle's read (named)
_NEEDLE = b"session/title"         # the type value, quoted on both sides (any spacing around the key; rows
_QUOTE = ord('"')                  # are decoded to check); unquoted: 2x the speed of a needle with quotes
def title_in(blob: Union[bytes, bytearray], whole_first: bool = False, lo: int = 0, hi: int = -1,
             check: Optional[Callable[[int, int], bool]] = None) -> Optional[str]:
    """The title of the last complete ``session/title`` row in ``blob[lo:hi]`` (None: none there): a
    row cut by ``hi`` is passed over, and so is the first row (cut by a window's start) unless
    ``whole_first`` (it starts at ``lo`` with a whole row, as a frame's text does).  ``blob`` may be
    a reused ``bytearray`` (searched in place: only title rows are copied out).  ``check(start,
    newline)``: whether a title row at those offsets counts (zstd: it lies in one frame), asked in
    increasing order.

    Searched forwards (``bytes.find`` skips ahead by the needle's length; ``rfind`` does not); a
    region of ``_MEMMEM_MIN`` bytes or more by glibc ``memmem`` (:mod:`app.log.index.cfind`: ~4x the speed
    of ``bytes.find`` for this needle, measured in decision 0016)."""
    if hi < 0:
        hi = len(blob)
    if hi - lo >= _MEMMEM_MIN and _cfind() is not None:
        pinned = _cfind().Pinned(blob)
        try:
            return _title_in(blob, whole_first, lo, hi, check, pinned.find)
        finally:
            pinned.close()
    return _title_in(blob, whole_first, lo, hi, check, blob.find)


_MEMMEM_MIN = 32 << 10                    # title_in: regions this big are searched by memmem (a pin costs ~3 µs)
_cf: list[Any] = []


def _cfind() -> Any:
    """:mod:`app.log.index.cfind` when glibc's ``memmem`` is reachable here, else None (looked up once)."""
    if not _cf:
        from ..log.index import cfind
        _cf.append(cfind if cfind.AVAILABLE else None)
    return _cf[0]


def _title_in(blob: Union[bytes, bytearray], whole_first: bool, lo: int, hi: int,
              check: Optional[Callable[[int, int], bool]], find: Callable[[bytes, int, int], int]) -> Optional[str]:
    found, i = None, find(_NEEDLE, lo, hi)
    n = len(_NEEDLE)
    while i >= 0:
        if i == lo or blob[i - 1] != _QUOTE or i + n >= hi or blob[i + n] != _QUOTE:
            i = find(_NEEDLE, i + n, hi)             # a longer type (session/title-llm-request) or text
            continue
        nl = blob.rfind(b"\n", lo, i)
        end = blob.find(b"\n", i, hi)
        if end < 0:
            break                          # a row cut by the window's end
        if nl >= 0 or whole_first:
            row = nl + 1 if nl >= 0 else lo
            try:
                obj = msgspec.json.decode(memoryview(blob)[row:end])
            except msgspec.DecodeError:
                obj = None
            if isinstance(obj, dict) and obj.get("type") == "session/title" and isinstance(obj.get("data"), dict) \
                    and isinstance(obj["data"].get("title"), str) and (check is None or check(row, end)):
                found = obj["data"]["title"]
        i = find(_NEEDLE, end, hi)
    return found


_local = threading.local()               # per thread: a reused buffer for the reads and the decoded text


_KEEP = 4 << 20                          # a thread's buffer grown past this is not kept for small reads


def _scratch(n: int) -> bytearray:
    """This thread's reused buffer, at least ``n`` bytes long (its bytes are the caller's to overwrite)."""
    buf: Optional[bytearray] = getattr(_local, "buf", None)
    if buf is None or len(buf) < n or (len(buf) > _KEEP >= n):
        buf = bytearray(max(n, min(2 * len(buf), _KEEP) if buf is not None else 1 << 16))
        _local.buf = buf
    return buf


def _read_into(fd: int, buf: bytearray, a: int, b: int, head: bytes) -> int:
    """Bytes ``[a, b)`` of the file into ``buf[:b - a]`` (what ``head``, the bytes read from offset 0,
    holds is copied, not read again); returns how many bytes were read (fewer: the file shrank)."""
    k = 0
    if a < len(head):
        k = min(len(head), b) - a
        buf[:k] = head[a:a + k]
    if a + k >= b:
        return k
    mv = memoryview(buf)[k:b - a]
    try:
        if hasattr(os, "preadv"):
            return k + os.preadv(fd, [mv], a + k)
        got = os.pread(fd, b - a - k, a + k)
        mv[:len(got)] = got
        return k + len(got)
    finally:
        mv.release()


Title = tuple[Optional[str], bool]       # (title, exact): exact False = provisional (a middle left unread)


def _backwards(fd: int, size: int, head: bytes, lo: int) -> Optional[str]:
    """The last title of the rows starting in ``[lo, size)``, read backwards from the end in
    ``MIDDLE_STEP`` reads into a reused buffer, each searched once (``bytes.find``, memory speed),
    stopping at the first read that holds a title (a read before the last also takes up to
    ``MIDDLE_OVERLAP`` bytes past its end, which completes its last row: a longer title row there is
    passed over).  ``head``: the bytes already read from offset 0 (not read again)."""
    end = size
    while end > lo:
        start = max(lo, end - MIDDLE_STEP)
        a = max(0, start - 1)          # (from the byte before: the row starting at ``start`` is whole
        b = size if end == size else min(size, end + MIDDLE_OVERLAP)     # when that byte is a newline)
        if b <= len(head):                 # (the first read holds it: searched there, no copy)
            t = title_in(head, a == 0, a, b)
        else:
            buf = _scratch(b - a)
            t = title_in(buf, a == 0, 0, _read_into(fd, buf, a, b, head))
        if t is not None:
            return t
        end = start
    return None


def _head_jsonl(fd: int, head: bytes) -> Optional[str]:
    """The last title of the rows lying whole in ``head`` (the head region, from offset 0), or of a
    title row that starts in it and is cut by its end, completed by one read of at most
    ``MIDDLE_OVERLAP`` bytes (a longer row is passed over)."""
    t = title_in(head, True)
    cut = head.rfind(b"\n") + 1
    if head.find(_NEEDLE, cut) >= 0:
        more = os.pread(fd, MIDDLE_OVERLAP, len(head))
        nl = more.find(b"\n")
        if nl >= 0:
            t = title_in(head[cut:] + more[:nl + 1], True) or t
    return t


def title_of_jsonl(fd: int, size: int, head: bytes = b"", window: int = 0, exact: bool = False) -> Title:
    """(title, exact) of an open raw JSONL session file of ``size`` bytes: the last title of the rows
    starting in the tail region (``TAIL`` bytes; the whole file when the head and tail regions
    cover it), exact; else of the rows of the head region (``window``, default ``WINDOW``),
    provisional.  ``exact``: every row is searched (backwards from the end, stopping at the last
    title).  ``head``: the bytes already read from offset 0 (the listing's first read)."""
    window = window or WINDOW
    if exact or size <= window + TAIL:
        return _backwards(fd, size, head, 0), True
    t = _backwards(fd, size, head, size - TAIL)
    if t is not None:
        return t, True
    if len(head) < window:
        head += os.pread(fd, window - len(head), len(head))
    return _head_jsonl(fd, head[:window]), False


def decode_frames(buf: bytes, start: int, stop: int, limit: int) -> bytes:
    """The plaintext of the complete frames ``buf[start:stop]`` (checksums verified), at most ``limit``
    bytes (FrameError past it).  Frames that declare their content size (dsh's do) are decoded in one
    call, the declared sizes summed first (libzstd refuses a frame that outgrows its declared size);
    others one by one, streamed and bounded."""
    dec = _sized()
    if dec is not None and type(buf) is bytes and start < stop:
        total = dec.run_size(buf, start, stop)           # (the frames walked in C: no Python step each)
        if total is not None and total <= limit:
            return bytes(dec.decode(buf, start, stop, total))
    from ..log.source.zstdlib import zstd

    from ..log.format.limits import ZSTD_WINDOW_LOG_MAX
    from ..log.source.zstdframes import FrameError, decode_bounded, sized_decoder
    mv = memoryview(buf)
    spans, total, at = [], 0, start
    while at < stop:
        n = zstd.get_frame_size(mv[at:stop])
        size = zstd.get_frame_info(mv[at:at + n]).decompressed_size
        spans.append((at, at + n))
        total = total + size if size is not None and total is not None else None
        at += n
    if total is not None and total <= limit:
        dec = sized_decoder()
        if dec is not None:
            return dec.decode(buf, start, stop, total)       # one reused context, no set-up per frame
        # libzstd sizes a frame's buffers by its declared content size (bounded above) and refuses
        # a frame that outgrows it; only bigger declarations need the window limit (its setup
        # costs as much as decoding a small frame)
        opts: Optional[dict[int, int]] = None
        if total > 1 << ZSTD_WINDOW_LOG_MAX:
            opts = {zstd.DecompressionParameter.window_log_max: ZSTD_WINDOW_LOG_MAX}
        text = zstd.decompress(mv[start:stop], options=opts) if spans else b""
        if len(text) != total:
            raise FrameError("a frame's content differs from its declared size")
        return text
    out, got = [], 0
    for a, b in spans:
        out.append(decode_bounded(mv[a:b], limit - got))
        got += len(out[-1])
    return b"".join(out)


def _frames_text(buf: bytes, start: int, limit: int, cut: bool = True, stop: int = -1) \
        -> tuple[Optional[bytes], Optional[tuple[int, str]], list[int]]:
    """(plaintext, None, frame ends) of the chain of frames from ``buf[start]`` to ``buf[stop]``
    (default: its end), ``frame ends`` the plaintext offsets where its frames end; or (None, damage,
    []): ``damage`` = (offset, why) of the first frame that scans whole but does not decode (a damaged
    frame), None when the bytes from ``start`` are not such a chain or their text runs past ``limit``.  A
    torn last frame gives its complete rows (as a reader recovers them; ``cut=False``: only when it
    is the first frame, a window's end cut it); at most ``limit`` plaintext bytes.  The frame-by-frame
    path, for what the C walk of :meth:`SizedDecoder.run_size` refuses (a torn or unsized frame)."""
    from ..log.source.zstdframes import (COMPLETE, TORN, FrameError, FrameLimitError, ZstdError, decode_bounded, decode_torn,
                                  scan_frame)
    if 0 <= stop < len(buf):
        buf = buf[:stop]
    at, n = start, len(buf)
    spans, torn = [], None
    while at < n:
        kind, end = scan_frame(buf, at)
        if kind == TORN:
            torn = at if cut or at == start else None
            break
        if kind != COMPLETE:
            return None, None, []
        spans.append((at, end))
        at = end
    mv = memoryview(buf)
    pieces: list[bytes] = []
    ends: list[int] = []
    got = 0
    for a, b in spans:
        try:
            pieces.append(decode_bounded(mv[a:b], max(1, limit - got)))
        except FrameLimitError:
            return None, None, []                       # over the plaintext bound: not damage
        except (FrameError, ZstdError) as e:
            return None, (a, str(e)), []
        got += len(pieces[-1])
        ends.append(got)
    if torn is not None:
        pieces.append(decode_torn(mv[torn:], limit=max(1, limit - got)))
        ends.append(got + len(pieces[-1]))
    return b"".join(pieces), None, ends


class _FrameEnds:
    """Whether a row of a run's plaintext lies in one frame (spec: a frame ends at a record boundary,
    so a row across two frames is damage, not a row): the run's frames are walked lazily from its
    start by their headers (libzstd, no decoding), as far as the rows asked about, in order."""

    def __init__(self, dec: Any, buf: bytes, start: int, stop: int) -> None:
        self.ends = dec.frame_ends(buf, start, stop)
        self.end = 0                                    # plaintext offset where the current frame ends

    def one_frame(self, row: int, newline: int) -> bool:
        while self.end <= row:
            nxt = next(self.ends, None)
            if nxt is None:
                return False
            self.end = nxt[1]
        return newline < self.end


def _sized_run_title(dec: Any, buf: bytes, start: int, stop: int, total: int) -> Optional[str]:
    """The title in the run of sized frames ``buf[start:stop]`` (``total`` plaintext bytes), decoded
    by one libzstd call into the scratch buffer; a row counts only when it lies in one frame.
    Raises ``FrameError`` on a damaged frame."""
    out = _scratch(total)
    dec.decode_into(buf, start, stop, total, out)
    return title_in(out, True, 0, total, _FrameEnds(dec, buf, start, stop).one_frame)


def _in_one_frame(ends: list[int]) -> Callable[[int, int], bool]:
    import bisect

    def check(row: int, newline: int) -> bool:
        k = bisect.bisect_right(ends, row)
        return k < len(ends) and newline < ends[k]
    return check


_decoder: list[Any] = []                  # the process's SizedDecoder (or None), looked up once


def _sized() -> Any:
    if not _decoder:
        from ..log.source.zstdframes import sized_decoder
        _decoder.append(sized_decoder())
    return _decoder[0]


def _chain_title(buf: bytes, lo: int, hi: int, anchored: bool, base: int,
                 problems: Optional[list[str]]) -> tuple[Optional[str], int]:
    """(last title, where the chain starts) of the chain of whole frames that ends at ``buf[hi]``
    and starts at ``lo`` (``anchored``: ``lo`` is a frame start) or else at the first frame start
    after ``lo`` whose chain reaches ``hi``; (None, hi) when there is none.  A run of whole frames
    with declared sizes is walked and decoded by libzstd in one call each, into this thread's reused
    buffer, and searched there (no copy); anything else frame by frame.  A frame that does not
    decode is named in ``problems`` (``base``: the file offset of ``buf[0]``) and the chain is looked
    for after it."""
    from ..log.source.zstdframes import MAGIC, FrameError
    dec = _sized()
    i = lo if anchored else buf.find(MAGIC, lo, hi)
    while 0 <= i < hi:
        total = dec.run_size(buf, i, hi) if dec is not None else None
        if total is not None and total > ZSTD_PLAIN_LIMIT:
            i, total = _within_limit(dec, buf, i, hi)   # the frames ending the run within the plaintext bound
        if total is not None and total <= ZSTD_PLAIN_LIMIT:
            try:
                return _sized_run_title(dec, buf, i, hi, total), i
            except FrameError:
                pass                                    # a damaged frame: named below
        text, damage, ends = _frames_text(buf, i, ZSTD_PLAIN_LIMIT, stop=hi)
        if text is not None:
            return title_in(text, True, check=_in_one_frame(ends)), i
        if damage is not None:
            at, why = damage
            line = f"the zstd frame at byte {base + at} does not decode ({why}): the list's title is looked for " \
                   "in the frames after it, then in the head window"
            if problems is not None and line not in problems:
                problems.append(line)
            i = buf.find(MAGIC, at + 1, hi)
            continue
        i = buf.find(MAGIC, i + 1, hi)
    return None, hi


def _within_limit(dec: Any, buf: bytes, start: int, stop: int) -> tuple[int, Optional[int]]:
    """(first frame, plaintext size) of the shortest suffix of the sized run ``buf[start:stop]`` that
    holds its last frames up to ``ZSTD_PLAIN_LIMIT`` of plaintext ((stop, 0) when its last frame alone
    is bigger): a very compressible tail is bounded by its text, not its bytes."""
    frames = list(dec.frame_ends(buf, start, stop))        # [(where a frame ends, where its text ends)]
    if not frames or frames[-1][0] != stop:
        return start, None
    total = frames[-1][1]
    for k in range(len(frames)):
        before = frames[k - 1][1] if k else 0
        if total - before <= ZSTD_PLAIN_LIMIT:
            return (frames[k - 1][0] if k else start), total - before
    return stop, 0


def title_of_zstd(fd: int, size: int, header_end: int, head: bytes = b"", window: int = 0,
                  problems: Optional[list[str]] = None, exact: bool = False) -> Title:
    """(title, exact) of an open ``session.jsonl.zstd`` of ``size`` bytes whose header frame ends at
    ``header_end``: a file within the head and tail regions is decoded whole (exact); a bigger one:
    the last title in the chain of whole frames that ends the file within the tail region
    (``ZSTD_TAIL`` compressed bytes; the last frame read whole up to ``ZSTD_FIRST_FRAME`` when none
    starts there), exact; else the first frame after the header frame (read whole
    up to ``ZSTD_FIRST_FRAME``) and the whole frames of the head region (``window``, default
    ``ZSTD_WINDOW``), provisional unless they reach the tail chain.  ``exact``: the frames between
    them too (read forwards in ``ZSTD_STEP`` reads).  Frames are found by their headers and decoded
    with their checksums verified, bounded; a frame that does not decode is named in ``problems``.
    ``head``: the bytes already read from offset 0."""
    window = window or ZSTD_WINDOW
    if size <= header_end:
        return None, True
    if size <= window + ZSTD_TAIL:                          # the whole file: one chain from the header frame
        buf = head if size <= len(head) else head + os.pread(fd, size - len(head), len(head))
        t, start = _chain_title(buf, header_end, size, True, 0, problems)
        if t is not None or start == header_end:
            return t, True
        if len(head) < window:
            head = buf[:window]
        t, _end = _head_title(fd, size, header_end, head, window, problems)
        return t, False
    lo = size - ZSTD_TAIL
    buf = os.pread(fd, ZSTD_TAIL, lo)
    t, start = _chain_title(buf, 0, len(buf), False, lo, problems)
    if t is None and size - header_end > ZSTD_TAIL and (start >= len(buf) or _torn_at(buf, start)):
        # no whole frame starts in the tail region (only a torn last one, if any): the last whole frame is
        # bigger than the region; read up to ZSTD_FIRST_FRAME (as the first frame after the header is)
        n = min(size - header_end, ZSTD_FIRST_FRAME)
        lo = size - n
        buf = os.pread(fd, n, lo)
        t, start = _last_frames_title(buf, lo, problems)
    if t is not None:
        return t, True
    chain = lo + start                                     # where the tail chain starts (``size``: none)
    if len(head) < window:
        head += os.pread(fd, window - len(head), len(head))
    if exact:
        t = _forwards_zstd(fd, header_end, chain, problems)
        return t, True
    t, end = _head_title(fd, size, header_end, head, window, problems)
    return t, end >= chain


def _last_frames_title(buf: bytes, base: int, problems: Optional[list[str]]) -> tuple[Optional[str], int]:
    """(last title, where they start) of the last whole frame of ``buf`` (the file's last bytes, from
    offset ``base``) and a torn frame after it: the frame starts are looked for from the end (its
    magic, a frame that scans whole to the torn one or the end), so only those frames are decoded;
    (None, len(buf)) when none is found."""
    from ..log.source.zstdframes import COMPLETE, MAGIC, scan_frame
    end, c, tries = len(buf), len(buf), 0
    while tries < 64:
        c = buf.rfind(MAGIC, 0, c)
        if c < 0:
            break
        kind, e = scan_frame(buf, c)
        if kind == COMPLETE and (e == len(buf) or _torn_at(buf, e)):
            return _chain_title(buf, c, end, True, base, problems)
        tries += 1
    return None, len(buf)


def _run_title(buf: bytes, lo: int, hi: int, base: int, problems: Optional[list[str]]) -> Optional[str]:
    """The last title in the chain of whole frames ``buf[lo:hi]`` (``base``: the file offset of ``buf[0]``);
    a frame among them that does not decode is named in ``problems`` and passed over: the titles of the
    frames before it count too (they are decoded one by one, only then)."""
    from ..log.source.zstdframes import COMPLETE, FrameError, ZstdError, decode_bounded, scan_frame
    t, start = _chain_title(buf, lo, hi, True, base, problems)
    if start == lo or start > hi:
        return t
    found, at, mv = None, lo, memoryview(buf)
    while at < min(start, hi):                 # (damage: the frames before the chain after it)
        kind, e = scan_frame(buf, at)
        if kind != COMPLETE or e > hi:
            break
        try:
            found = title_in(decode_bounded(mv[at:e], ZSTD_PLAIN_LIMIT), True) or found
        except (FrameError, ZstdError):
            pass                               # (named by the chain's pass)
        at = e
    return t if t is not None else found


def _torn_at(buf: bytes, at: int) -> bool:
    from ..log.source.zstdframes import TORN, scan_frame
    return scan_frame(buf, at)[0] == TORN


def _forwards_zstd(fd: int, start: int, stop: int, problems: Optional[list[str]]) -> Optional[str]:
    """The last title in the frames of ``[start, stop)`` of an open zstd session file (a chain of
    whole frames from ``start``), read forwards in ``ZSTD_STEP`` reads, each frame decoded once;
    memory bounded (a frame bigger than ``ZSTD_FRAME_LIMIT`` ends the read, named)."""
    from ..log.source.zstdframes import COMPLETE, MAGIC, TORN, scan_frame
    found, at, step = None, start, ZSTD_STEP
    while at < stop:
        buf = os.pread(fd, min(step, stop - at), at)
        if not buf:
            break
        end, k = 0, 0
        while end < len(buf):                               # the whole frames of this read
            kind, e = scan_frame(buf, end)
            if kind != COMPLETE:
                break
            end, k = e, k + 1
        if k == 0:
            kind, _e = scan_frame(buf, 0)
            if kind == TORN and at + len(buf) < stop and step < ZSTD_FRAME_LIMIT:
                step = min(2 * step, ZSTD_FRAME_LIMIT)      # a frame bigger than the read: a bigger read
                continue
            if kind == TORN and at + len(buf) >= stop:      # a torn last frame: its complete rows
                t, _s = _chain_title(buf, 0, len(buf), True, at, problems)
                return t if t is not None else found
            line = f"the zstd frame at byte {at} cannot be read for the list's exact title ({kind})"
            if problems is not None and line not in problems:
                problems.append(line)
            nxt = buf.find(MAGIC, 1)
            if nxt < 0:
                at += len(buf)
            else:
                at += nxt
            continue
        t = _run_title(buf, 0, end, at, problems)
        if t is not None:
            found = t
        at += end
        step = ZSTD_STEP
    return found


def _head_title(fd: int, size: int, header_end: int, head: bytes, window: int,
                problems: Optional[list[str]] = None) -> tuple[Optional[str], int]:
    """(last title, file offset where its frames end) of the first frame after the header (read whole
    when it is at most ``ZSTD_FIRST_FRAME`` compressed bytes: dsh writes the provider's title with
    turn 1's batch) and the whole frames after it in the head region; a frame there that does not
    decode is named in ``problems``."""
    from ..log.source.zstdframes import COMPLETE, MAGIC, TORN, FrameError, scan_frame
    kind, end = scan_frame(head, header_end)
    if kind == TORN:                       # the first frame is cut by the window: read it whole
        from ..log.source.zstdlib import zstd
        blob = os.pread(fd, min(size - header_end, ZSTD_FIRST_FRAME), header_end)
        try:
            n = zstd.get_frame_size(blob)
        except zstd.ZstdError:
            return None, header_end        # (bigger than ZSTD_FIRST_FRAME, or damaged)
        head, window = head[:header_end] + blob[:n], header_end + n
    elif kind != COMPLETE:
        return None, header_end
    buf = head[:max(window, header_end)]
    dec = _sized()
    if dec is not None and len(buf) > header_end:
        # the whole frames of the head region in one C walk: they end where the last frame (cut by the
        # region's end) starts, found by its magic from the end (a magic inside a frame's bytes fails the
        # walk: the one before is tried)
        at, tries = len(buf), 0
        total = dec.run_size(buf, header_end, at)          # (the region ends at a frame's end)
        if total is not None and total <= ZSTD_PLAIN_LIMIT:
            out = _scratch(total)
            try:
                dec.decode_into(buf, header_end, at, total, out)
                return title_in(out, True, 0, total, _FrameEnds(dec, buf, header_end, at).one_frame), at
            except FrameError:
                tries = 4                  # a damaged frame: named below
        while tries < 4:
            at = buf.rfind(MAGIC, header_end + 1, at)
            if at < 0:
                break
            total = dec.run_size(buf, header_end, at)
            if total is not None and total <= ZSTD_PLAIN_LIMIT:
                try:
                    return _sized_run_title(dec, buf, header_end, at, total), at
                except FrameError:
                    break                  # a damaged frame: named below
            tries += 1
    at = header_end
    while at < len(buf):                   # (frames without a declared size, the window's end, damage)
        kind, e = scan_frame(buf, at)
        if kind != COMPLETE:
            break
        at = e
    return _run_title(buf, header_end, at, 0, problems), at


def read_title(path: str, size: int, window: int = 0, exact: bool = False) -> Title:
    """(title, exact) of a raw JSONL session file: tail region first, then the head region."""
    from ..log.format.limits import open_regular
    fd = open_regular(path)
    try:
        return title_of_jsonl(fd, size, b"", window, exact)
    finally:
        os.close(fd)


def exact_title(path: str, fmt: str, size: int, mtime: float) -> Optional[tuple[Optional[str], list[str]]]:
    """(exact title, damage named) of the session file ``path`` (``fmt``: jsonl | zstd) read as it is
    at the revision ``size``/``mtime``, the middle included; None when it changed since (or cannot
    be read).  For the refinement of provisional titles (the window's worker, ``list --exact-titles``)."""
    from .discovery_headers import header_of, open_file
    try:
        fd, st = open_file(path)
    except OSError:
        return None
    try:
        if title_cache.revision(st.st_size, st.st_mtime) != title_cache.revision(size, mtime):
            return None
        damage: list[str] = []
        if fmt == "jsonl":
            t, _exact = title_of_jsonl(fd, size, b"", 0, True)
        else:
            head = os.pread(fd, ZSTD_WINDOW, 0)
            raw, _why, end = header_of(fd, head)
            if raw is None:
                return None
            t, _exact = title_of_zstd(fd, size, end, head, problems=damage, exact=True)
        return t, damage
    except OSError:
        return None
    finally:
        os.close(fd)


def session_title(info: SessionInfo) -> Optional[str]:
    """The title of a listed session (:class:`~app.store.discovery.SessionInfo`), cached by revision
    (one read of the file when the cache has no entry for its revision; SQLite: None); sets
    ``info.title_exact`` (False: provisional, a middle left unread)."""
    if info.format not in ("jsonl", "zstd"):
        return None
    if info.title_read:
        return info.title
    try:
        st = os.stat(info.path)                  # (its inode and ctime: the listing keeps only size and mtime)
    except OSError:
        return None
    size, mtime, ident = st.st_size, st.st_mtime, title_cache.ident_of(st)
    hit = title_cache.entry(info.path, size, mtime, ident)
    if hit is not None:
        info.title_exact = hit[6]
        return hit[4]
    damage: list[str] = []
    try:
        if info.format == "jsonl":
            t, exact = read_title(info.path, size)
        else:
            from .discovery_headers import zstd_title
            t, exact = zstd_title(info.path, damage)
    except OSError:
        return None
    if damage:                                   # (a new list: the window's thread may be reading the old one)
        info.problems = info.problems + [p for p in damage if p not in info.problems]
    info.title_exact = exact
    title_cache.remember(info.path, size, mtime, t, (info.header, info.id, list(info.problems)), exact, ident)
    return t


def record_full_read(path: str, before: os.stat_result, title: Optional[str]) -> bool:
    """After a full decode of the session file ``path`` (``inspect``: every row read), record its
    ``title`` over a provisional cache entry of the revision read (``before``: its ``stat`` taken before
    the read; nothing is recorded when the file changed meanwhile, or the cache holds no provisional
    entry for it: no cache file is created).  Whether an entry was upgraded."""
    f = title_cache.cache_file()
    if f is None or not f.exists():
        return False
    try:
        after = os.stat(path)
    except OSError:
        return False
    if title_cache.revision(after.st_size, after.st_mtime) != title_cache.revision(before.st_size, before.st_mtime):
        return False
    if title_cache.lookup_exact(path, after.st_size, after.st_mtime) is not False:
        return False
    upgraded = title_cache.upgrade(path, after.st_size, after.st_mtime, title)
    title_cache.save()
    return upgraded


def apply_exact(info: SessionInfo, got: Optional[tuple[Optional[str], list[str]]]) -> Optional[tuple[Optional[str], bool]]:
    """Record ``got`` (:func:`exact_title`'s answer for ``info``) on the listed session and over the
    cache's provisional entry (the header facts kept): (title, changed from the provisional one), or
    None when ``got`` is None (the file changed since it was listed, or could not be read)."""
    if got is None:
        return None
    t, damage = got
    if damage:
        info.problems = info.problems + [p for p in damage if p not in info.problems]
    hit = title_cache.entry(info.path, info.size, info.mtime)
    changed = t != (hit[4] if hit is not None else info.title)
    title_cache.upgrade(info.path, info.size, info.mtime, t, damage)
    info.title, info.title_exact = t, True
    return t, changed

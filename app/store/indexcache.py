"""The persistent seq index: kept in the user cache folder, reused and extended across runs.

A log's :class:`~app.log.index.reader.SeqIndex` is saved to ``<cache>/index/<key>.idx`` where
``<cache>`` is ``platformdirs.user_cache_dir("session-lens")`` (``$SESSION_LENS_CACHE_DIR``
overrides it; ``SESSION_LENS_INDEX_CACHE=0`` turns the cache off) and ``<key>`` hashes the
store identity (real path, device, inode; spec §1.6).  The file records the revision it was
built from (size, mtime) and how far it indexed, with a hash of the last bytes it covered.

On open (:func:`cached_index`):

* same size and mtime: the saved index is used as is (*hit*);
* the log grew (dsh logs are append-only, spec §1.5): if the header and the last indexed
  bytes are still the same, the scan resumes where the saved one stopped (*extended*);
* anything else (another file at the path, a shrunk, truncated, rewritten or repaired log,
  a corrupt, foreign or older index file): the index is built afresh (*built*).

A torn last row (or torn last zstd frame) is indexed but never saved: the saved index ends
at the last complete segment, so a write in progress is read again next time.  Files are
written atomically (temp file in the cache folder, then rename) and carry a checksum, so a
crash while saving leaves the old file or none.  Reading a log never writes to it; the
cache is only ever a copy of what a scan would give (tests compare the two).
"""
from __future__ import annotations

import hashlib
import mmap
import os
import struct
import time
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Optional, TypedDict, Union, overload
from collections.abc import Callable, Iterator

import msgspec

from ..log.index.fastindex import Fed, IndexBuilder, scan, wants_legacy
from ..log.format.model import Problem
from ..log.index.mapped import INDEX_ARRAYS, MappedArray
from ..log.index.reader import SeqIndex
from ..log.source.sources import FileSource, Segment
from .cachefiles import cache_root, digest_key, open_cache_file, read_bounded, write_atomic
from .cachewrite import write_signed

__all__ = ["cache_root", "cached_index", "cached_checkpoints", "index_summary"]

if TYPE_CHECKING:
    from ..log.fold.checkpoints import Checkpoints
    from ..log.index.reader import LogReader

MAGIC = b"SLIDX\x00\x05\n"     # 5: keyed digests (issue 28) and v3 checkpoints with tool history (issue 27)
FORMAT = 7                     # 7: v0/v1 checkpoints keep the chain's state and the tool history too (issue 27)
TAIL_CHECK = 4096
DIGEST_SIZE = 32
_ARRAYS = INDEX_ARRAYS


class Identity(TypedDict):
    """Which file a cache entry belongs to, and the revision it was made from."""
    path: str
    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int             # (a user can reset the mtime of a rewritten file, never its ctime)
    kind: str


class Resume(TypedDict):
    """Where a scan continues: position, line number, decoded text offset (-1: unknown)."""
    pos: int
    line0: Optional[int]
    text_offset: int


class SavedState(TypedDict):
    """The builder state saved with an index."""
    expected: int
    broken: bool
    resume: Resume
    problems: list[object]


def source_identity(source: FileSource) -> Optional[Identity]:
    """dev/ino/size/mtime of the source's open file (the snapshot the reader reads)."""
    fd = source.fd
    if fd is None or fd < 0 or source.kind not in ("jsonl", "zstd"):
        return None
    st = os.fstat(fd)
    return {"path": os.path.realpath(source.path), "dev": st.st_dev, "ino": st.st_ino, "size": source.size,
            "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns, "kind": source.kind}


def file_source_of(reader: LogReader) -> Optional[FileSource]:
    """The reader's source when its index can be cached (a raw or zstd file, caching on)."""
    src = reader.source
    return src if isinstance(src, FileSource) and cache_root() is not None else None


class CacheSlot(NamedTuple):
    """Where a cache file of a log goes: its file source, that file's identity and the path (``suffix``)."""
    src: FileSource
    ident: Identity
    path: Path


def cache_slot(reader: LogReader, suffix: str) -> Optional[CacheSlot]:
    """The cache file ``<key><suffix>`` of ``reader``'s log (``.folds``, ``.outline``, ``.surface``…), with its
    source and identity; None when the log's caches are not kept (not a raw or zstd file, caching off)."""
    src = file_source_of(reader)
    root = cache_root()
    ident = source_identity(src) if src is not None else None
    if src is None or ident is None or root is None:
        return None
    return CacheSlot(src, ident, cache_file(ident, root).with_suffix(suffix))


def cache_file(ident: Identity, root: Path) -> Path:
    # (os.fsencode: a path that is not UTF-8 has lone surrogates in its str)
    key = hashlib.sha256(os.fsencode(ident["path"]) + f"\0{ident['dev']}\0{ident['ino']}".encode()).hexdigest()[:40]
    return root / "index" / f"{key}.idx"


def keyed_hasher(data: Union[bytes, memoryview] = b"") -> Any:
    """BLAKE2b of a cache file, keyed with the cache folder's key (:func:`app.store.cachefiles.digest_key`)."""
    return hashlib.blake2b(data, digest_size=DIGEST_SIZE, key=digest_key())


def cache_size_limit(log_size: int) -> int:
    """Bytes a sound cache file of a log of ``log_size`` bytes holds at most (a bigger one is not read)."""
    return (64 << 20) + 4 * log_size


def tail_hash(fd: int, start: int, end: int) -> str:
    lo = max(start, end - TAIL_CHECK)
    data = os.pread(fd, end - lo, lo) if end > lo else b""
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- (de)serialization

def dump_parts(idx: SeqIndex, meta: dict[str, object]) -> list[_Part]:
    """A cache file's bytes as the parts to write one after another (the arrays as they are: a big
    index is neither copied into one body nor hashed from a copy; see :func:`dump`)."""
    meta = dict(meta)
    arrays: list[_Part] = []
    for name, code in _ARRAYS:
        a = getattr(idx, name)
        if isinstance(a, MappedArray):
            v = a.view
            arrays.append(v.cast("B") if v.c_contiguous else v.tobytes())
        else:
            arrays.append(a if isinstance(a, array) else array(code, a))
    meta["lengths"] = [len(getattr(idx, name)) for name, _ in _ARRAYS]
    meta["monotonic"], meta["events"], meta["last"] = idx.monotonic, idx.events, idx.last
    meta["contiguous_through"] = idx.contiguous_through
    leg = getattr(idx, "legacy", None)
    meta["legacy"] = list(leg) if leg is not None and len(leg) == len(idx) else None
    head = msgspec.json.encode(meta)
    head += b" " * (-(len(MAGIC) + 4 + len(head)) % 8)     # (the arrays 8-aligned: a map of the file reads them in place)
    parts: list[_Part] = [MAGIC + struct.pack("<I", len(head)) + head, *arrays]
    h = keyed_hasher()
    for part in parts:
        h.update(part)
    parts.append(h.digest())
    return parts


def dump(idx: SeqIndex, meta: dict[str, object]) -> bytes:
    """A cache file's bytes: magic, the meta's length and JSON, the arrays, a BLAKE2b digest of all before it."""
    return b"".join(dump_parts(idx, meta))


class _ResumeMeta(msgspec.Struct):
    pos: int
    line0: Optional[int]
    text_offset: int


class _IdxMeta(msgspec.Struct):
    """The head of a ``.idx`` file, every field typed (anything else: the file is a miss)."""
    format: int
    path: str
    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int
    kind: str
    header: str
    tail: str
    expected: int
    broken: bool
    resume: _ResumeMeta
    problems: list[Problem]
    lengths: list[int]
    monotonic: bool
    events: int
    last: int
    contiguous_through: int
    legacy: Optional[list[int]] = None


def _meta_of(raw: bytes) -> Optional[dict[str, Any]]:
    """The meta of a ``.idx`` file as a dict when every field has its type; else None."""
    try:
        m = msgspec.json.decode(raw, type=_IdxMeta)
    except msgspec.DecodeError:                   # (ValidationError included)
        return None
    if m.format != FORMAT or len(m.lengths) != len(_ARRAYS) or min(m.lengths) < 0 \
            or (m.legacy is not None and any(v not in (0, 1) for v in m.legacy)):
        return None
    meta: dict[str, Any] = msgspec.to_builtins(m)
    return meta


def load(blob: Union[bytes, memoryview], in_place: bool = False) -> Optional[tuple[SeqIndex, dict[str, Any]]]:
    """(SeqIndex, meta) from a cache file's bytes; None when it is not a sound index file.
    ``in_place``: its 8-aligned arrays are views of ``blob`` (a map of the file: :func:`load_mapped`), not copies."""
    view = memoryview(blob)
    if len(view) < len(MAGIC) + 4 + DIGEST_SIZE or bytes(view[:len(MAGIC)]) != MAGIC:
        return None
    # (views, not copies: the file's bytes are held once, beside the arrays built from them)
    body, digest = view[:-DIGEST_SIZE], bytes(view[-DIGEST_SIZE:])
    if keyed_hasher(body).digest() != digest:
        return None
    try:
        (n,) = struct.unpack_from("<I", body, len(MAGIC))
        at = len(MAGIC) + 4
        got = _meta_of(bytes(body[at:at + n]))
        at += n
        if got is None:
            return None
        meta = got
        idx = SeqIndex()
        for (name, code), length in zip(_ARRAYS, meta["lengths"]):
            a = array(code)
            size = a.itemsize * length
            if at + size > len(body):
                return None
            if in_place and at % a.itemsize == 0:
                setattr(idx, name, MappedArray(body[at:at + size].cast("b" if code == "b" else "q")))
            else:
                a.frombytes(body[at:at + size])
                setattr(idx, name, list(a) if name in ("seg_pos", "seg_end") else a)
            at += size
        if at != len(body):
            return None
        idx.monotonic, idx.events, idx.last = bool(meta["monotonic"]), int(meta["events"]), int(meta["last"])
        idx.contiguous_through = int(meta["contiguous_through"])
        leg = meta.get("legacy")
        idx.legacy = array("b", leg) if isinstance(leg, list) and len(leg) == len(idx) else None
        return idx, meta
    except (msgspec.DecodeError, KeyError, TypeError, ValueError, struct.error):
        return None


def load_mapped(path: Path, limit: int) -> Optional[tuple[SeqIndex, dict[str, Any]]]:
    """:func:`load` of the cache file ``path`` (of at most ``limit`` bytes) through a read-only map of it:
    the arrays stay in the file's pages (the page cache, dropped by the kernel when memory is short),
    not in the process's heap (issue 36).  The file is replaced by a rename, never rewritten in place,
    so the map keeps reading the bytes whose digest was checked."""
    fd = open_cache_file(path)
    if fd is None:
        return None
    try:
        size = os.fstat(fd).st_size
        if size > limit or size < len(MAGIC) + 4 + DIGEST_SIZE:
            return None
        whole = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    return load(memoryview(whole), in_place=True)


_Part = Union[bytes, bytearray, memoryview, "array[int]"]


def write_parts_atomic(path: Path, *parts: _Part) -> None:
    """``parts`` written one after another into a temp file in the folder, then renamed to ``path``
    (:func:`app.store.cachefiles.write_atomic`: a cache folder of this user only)."""
    write_atomic(path, parts)


# --------------------------------------------------------------------------- the cached index

class _Before(NamedTuple):
    """Where to resume and the builder's lengths and state before the last segment fed."""
    resume: Union[Resume, Fed]                # (or the segment before it, to work it out from)
    nseg: int
    nmark: int
    expected: int
    broken: bool
    contiguous_through: int
    events: int
    last: int
    monotonic: bool
    nprob: int


class _Snapshots:
    """What to save: the builder's state before the last segment fed (a torn or bad final
    segment is left out of the saved index)."""

    def __init__(self, start: Resume, b: IndexBuilder) -> None:
        self.start = start
        self.last_seg: Optional[Fed] = None
        self.before: Optional[_Before] = None            # before the last segment fed
        self._after = self._state(start, b)              # after it (before the next one)

    @staticmethod
    def _state(at: Union[Resume, Fed], b: IndexBuilder) -> _Before:
        idx = b.idx
        return _Before(at, len(idx.seg_pos), len(idx.mark_seq), b.expected, b.broken, idx.contiguous_through,
                       idx.events, idx.last, idx.monotonic, len(b.problems))

    def on_segment(self, seg: Fed, b: IndexBuilder) -> None:
        """Told after ``seg`` was fed."""
        self.before = self._after
        self.last_seg = seg
        self._after = self._state(seg, b)

    def resume_after(self) -> Resume:
        return self.start if self.last_seg is None else _resume_of(self.last_seg)


def _resume_of(seg: Fed) -> Resume:
    """Where a scan continues after ``seg`` (position, line number, decoded text offset)."""
    line0 = seg.line0 + seg.newlines if seg.line0 is not None else None
    text = seg.text_offset + seg.text_len if seg.text_offset is not None and seg.text_offset >= 0 else -1
    return {"pos": seg.end, "line0": line0, "text_offset": text}


def _saved_view(b: IndexBuilder, snaps: _Snapshots) -> tuple[SeqIndex, SavedState]:
    """(index, state) to save: everything, or everything before a torn/bad final segment."""
    seg, before = snaps.last_seg, snaps.before
    if seg is None or before is None or not (seg.torn or seg.bad):
        return b.idx, {"expected": b.expected, "broken": b.broken, "resume": snaps.resume_after(),
                       "problems": [msgspec.to_builtins(p) for p in b.problems]}
    resume, nseg, nmark, expected, broken, contig, events, last, mono, nprob = before
    if isinstance(resume, Fed):
        resume = _resume_of(resume)           # (the segment before the left-out one)
    src = b.idx
    idx = SeqIndex()
    for name, _ in _ARRAYS:
        a = getattr(src, name)
        setattr(idx, name, a[:nmark] if name.startswith("mark_") else a[:nseg])
    idx.contiguous_through, idx.events, idx.last, idx.monotonic = contig, events, last, mono
    leg = getattr(src, "legacy", None)
    idx.legacy = leg[:nseg] if leg is not None and len(leg) == len(src) else None
    return idx, {"expected": expected, "broken": broken, "resume": resume,
                 "problems": [msgspec.to_builtins(p) for p in b.problems[:nprob]]}


@overload
def cached_index(reader: LogReader, progress: Optional[Callable[[int, int], None]] = None,
                 problems: Optional[list[Problem]] = None, max_scan: None = None,
                 fresh: bool = False) -> tuple[SeqIndex, str]: ...


@overload
def cached_index(reader: LogReader, progress: Optional[Callable[[int, int], None]] = None,
                 problems: Optional[list[Problem]] = None, *, max_scan: int,
                 fresh: bool = False) -> tuple[Optional[SeqIndex], str]: ...


def cached_index(reader: LogReader, progress: Optional[Callable[[int, int], None]] = None,
                 problems: Optional[list[Problem]] = None,
                 max_scan: Optional[int] = None, fresh: bool = False) -> tuple[Optional[SeqIndex], str]:
    """``(SeqIndex, status)`` for ``reader``; also sets ``reader.index``.

    status: "hit" (saved index used as is), "extended" (saved index + the newly appended
    bytes), "built" (scanned from the start, then saved) or "uncached" (no cache: a SQLite
    session, caching turned off, or a cache folder that cannot be written).
    ``max_scan``: only a saved index needing at most that many new bytes scanned, else
    ``(None, "miss")`` (the window asks this before starting a child to scan).  ``fresh``: the
    saved index is not read (a fork found it did not match the file): built and saved again."""
    src = file_source_of(reader)
    root = cache_root()
    ident = source_identity(src) if src is not None else None
    if src is None or ident is None or root is None:
        if max_scan is not None:
            return None, "miss"
        probs = problems if problems is not None else []
        return reader.build_index(progress=progress, problems=probs), "uncached"
    path = cache_file(ident, root)
    header_hash = hashlib.sha256(src.header_raw).hexdigest()
    loaded = None if fresh else load_mapped(path, cache_size_limit(src.size))
    builder: Optional[IndexBuilder] = None
    status = "built"
    start: Optional[Resume] = None
    if loaded is not None:
        idx, meta = loaded
        end = meta.get("resume", {}).get("pos")
        same_file = all(meta.get(k) == ident[k] for k in ("path", "dev", "ino", "kind")) and \
            meta.get("header") == header_hash and isinstance(end, int) and src.header_end <= end <= src.size
        unchanged = all(meta.get(k) == ident[k] for k in ("size", "mtime_ns", "ctime_ns"))
        grew = ident["size"] > (meta.get("size") or 0)
        if same_file and (unchanged or grew) and meta.get("tail") == tail_hash(src.fd, src.header_end, end):
            probs = [Problem(**p) for p in meta.get("problems", [])]
            leg = list(idx.legacy) if idx.legacy is not None else None
            if wants_legacy(reader) and leg is None:
                loaded = None                  # saved without the flags a fork needs: build afresh
            else:
                builder = IndexBuilder(idx=idx, expected=int(meta["expected"]), broken=bool(meta["broken"]),
                                       problems=probs, legacy=leg if wants_legacy(reader) else None)
                start = {"pos": int(meta["resume"]["pos"]), "line0": meta["resume"].get("line0"),
                         "text_offset": int(meta["resume"].get("text_offset", -1))}
                status = "hit" if unchanged else "extended"
    if builder is None:
        builder = IndexBuilder(problems=[], legacy=[] if wants_legacy(reader) else None)
        start = None
    if max_scan is not None and (start is None or src.size - start["pos"] > max_scan):
        return None, "miss"
    if start is not None and start["pos"] < src.size:
        builder.idx.thaw()                 # (rows to add: the saved arrays copied out of the file's map)
    segments: Optional[Iterator[Segment]] = None        # (None: the scan reads a raw file itself)
    if start is None:
        if src.kind != "jsonl":
            segments = src.forward()
        snaps = _Snapshots({"pos": src.header_end, "line0": None, "text_offset": -1}, builder)
        scan(reader, builder, segments, progress, on_segment=snaps.on_segment)
    else:
        if src.kind == "zstd":
            from ..log.source.zstdsource import ZstdSource
            assert isinstance(src, ZstdSource)
            segments = src.forward(start["pos"], line0=start["line0"], text_offset=start["text_offset"]) \
                if start["pos"] < src.size else iter(())
        snaps = _Snapshots(Resume(pos=start["pos"], line0=start["line0"], text_offset=start["text_offset"]), builder)
        scan(reader, builder, segments, progress, on_segment=snaps.on_segment, start=start["pos"],
             line0=start["line0"])
    idx = builder.idx
    reader.index = idx
    if problems is not None:
        problems.extend(builder.problems)
    saved, state = _saved_view(builder, snaps)
    changed = status != "hit" or start is None or state["resume"]["pos"] != start["pos"]
    if changed:
        out: dict[str, object] = {"format": FORMAT, **ident, "header": header_hash, "saved_at": time.time(),
                                  "tail": tail_hash(src.fd, src.header_end, state["resume"]["pos"]), **state}
        try:
            write_parts_atomic(path, *dump_parts(saved, out))
        except (OSError, ValueError):
            pass                   # a read-only or full cache folder (or a path that is no Unicode) never stops a log from opening
    return idx, status


class IndexSummary(TypedDict):
    seconds: float
    cpuSeconds: float          # (CPU time of this process and its scan workers: the fair measure on a shared machine)
    bytes: int
    cached: bool
    status: str
    events: int
    turns: int
    segments: int
    lastSeq: int
    contiguousThrough: int
    scanner: str               # the index's row scanner: "c" (built at set-up or into the wheel) or "python" (app.log.index.fastindex.SCANNER)


def _children_cpu() -> float:
    """User + system CPU seconds of the ended children (the index scan's workers)."""
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def index_summary(reader: LogReader, progress: Optional[Callable[[int, int], None]] = None) -> IndexSummary:
    """``session-lens index``: build or reuse the index; what it cost and what it holds."""
    t, c, k = time.perf_counter(), time.process_time(), _children_cpu()
    idx, status = cached_index(reader, progress)
    secs, cpu = time.perf_counter() - t, time.process_time() - c + (_children_cpu() - k)     # (+ the scan workers)
    from ..log.index.fastindex import SCANNER
    from ..log.index.reader import MARK_CODES
    turns = sum(1 for c in idx.mark_code if c == MARK_CODES["turn/start"])
    return {"seconds": round(secs, 6), "cpuSeconds": round(cpu, 6), "bytes": reader.source.size, "cached": status in ("hit", "extended"),
            "status": status, "events": idx.events, "turns": turns, "segments": len(idx),
            "lastSeq": idx.last, "contiguousThrough": idx.contiguous_through, "scanner": SCANNER}


# --------------------------------------------------------------------------- fold checkpoints

class FoldsMeta(msgspec.Struct):
    """A ``.folds`` file (typed: anything else is a miss)."""
    format: int
    path: str
    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int
    kind: str
    every: int
    header: str
    upto: int
    tail: str
    points: list[Any]


def folds_usable(meta: FoldsMeta, src: FileSource, ident: Identity, every: int, header_hash: str) -> bool:
    """Whether a ``.folds`` file read as ``meta`` holds checkpoints of this log (``src``, ``ident``: its
    :func:`source_identity`) at this spacing: the same file and header, its bytes up to the last checkpoint
    unchanged, and the same revision or a grown one (dsh logs are append-only)."""
    return meta.format == FORMAT and meta.every == every and meta.header == header_hash \
        and all(getattr(meta, k) == ident[k] for k in ("path", "dev", "ino", "kind")) \
        and src.header_end <= meta.upto <= src.size and meta.tail == tail_hash(src.fd, src.header_end, meta.upto) \
        and ((meta.size, meta.mtime_ns, meta.ctime_ns) == (ident["size"], ident["mtime_ns"], ident["ctime_ns"])
             or ident["size"] > meta.size)


def _folds_meta(blob: bytes) -> Optional[FoldsMeta]:
    body, digest = blob[:-DIGEST_SIZE], blob[-DIGEST_SIZE:]
    if len(blob) < len(MAGIC) + DIGEST_SIZE or not body.startswith(MAGIC) \
            or keyed_hasher(body).digest() != digest:
        return None
    try:
        m = msgspec.json.decode(body[len(MAGIC):], type=FoldsMeta)
    except msgspec.DecodeError:
        return None
    return m if m.format == FORMAT else None


@overload
def cached_checkpoints(reader: LogReader, every: Optional[int] = None,
                       make: Optional[Callable[[], Checkpoints]] = None) -> tuple[Checkpoints, str]: ...


@overload
def cached_checkpoints(reader: LogReader, every: Optional[int] = None,
                       make: Optional[Callable[[], Checkpoints]] = None, *,
                       build: bool) -> tuple[Optional[Checkpoints], str]: ...


def cached_checkpoints(reader: LogReader, every: Optional[int] = None,
                       make: Optional[Callable[[], Checkpoints]] = None,
                       build: bool = True) -> tuple[Optional[Checkpoints], str]:
    """The log's fold checkpoints (:mod:`app.log.fold.checkpoints`), saved beside its index.

    Built by one full pass the first time (or when the log was replaced, truncated or
    rewritten), then reused: a grown log keeps its checkpoints (dsh logs are append-only;
    the bytes before the last checkpoint must be unchanged, checked as for the index) and
    replays from the last one.  -> (Checkpoints, status "hit" | "built" | "uncached"); with
    ``build=False``, (None, "miss") instead of building; ``make()``: how to build them (default
    :func:`~app.log.fold.checkpoints.build_checkpoints`; the one background pass shares its read)."""
    from ..log.fold.checkpoints import EVERY, Checkpoints, build_checkpoints
    every = EVERY if every is None else every
    slot = cache_slot(reader, ".folds")
    if slot is None:
        return ((make or (lambda: build_checkpoints(reader, every)))(), "uncached") if build else (None, "miss")
    src, ident, path = slot
    header_hash = hashlib.sha256(src.header_raw).hexdigest()
    blob = read_bounded(path, cache_size_limit(src.size))
    meta = _folds_meta(blob) if blob is not None else None
    if meta is not None and folds_usable(meta, src, ident, every, header_hash):
        try:
            return Checkpoints.from_builtins(meta.points), "hit"
        except (msgspec.DecodeError, TypeError, ValueError):      # (a point of another shape: a miss)
            pass
    if not build:
        return None, "miss"
    cps = make() if make is not None else build_checkpoints(reader, every)
    upto = max([p.pos for p in cps.points], default=src.header_end)
    try:
        write_signed(path, MAGIC, msgspec.json.encode({"format": FORMAT, **ident, "every": every, "header": header_hash,
                                                       "upto": upto, "tail": tail_hash(src.fd, src.header_end, upto),
                                                       "points": cps.points}))     # (no builtins copy: same JSON)
    except (OSError, ValueError):          # (ValueError: a path or log text that is no Unicode: not saved)
        pass
    return cps, "built"


# --------------------------------------------------------------------------- outline (work done ahead)

# ``<key>.outline``: OUTLINE_MAGIC, a JSON object (the file's identity, its header hash, the hash of its
# last bytes and the outline), a blake2b digest of all that.  Only an outline of the whole log is saved,
# and it is used only for the very same bytes (size, mtime and ctime, the last TAIL_CHECK bytes, the
# header): a log that grew or changed is read again (the outline is not extended).

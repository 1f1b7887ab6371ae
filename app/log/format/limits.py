"""Session Lens's own resource limits for reading untrusted logs (one place; the README quotes them).

These are **not** dsh's rules (issue 27 item 5): a row over one of them is reported as "over Session
Lens's limit (...)", never as corrupt and never as a row dsh would refuse, and it does not cut the
log's contiguity (the scanners count a packed row's members by its ``dt`` length whatever their
number, so the seq index, inspect and fork see every seq; a fork copies the row's bytes).  dsh's own
rules (a packed run holds at least 3 members and has **no** maximum in JSONL, one row per run per
batch; SQLite rows stop at 1,024 members) are checked where dsh checks them, not here.
"""
from __future__ import annotations

import os
import re
import stat
from itertools import accumulate
from typing import TYPE_CHECKING, Optional, Union
from collections.abc import Callable, Iterable

if TYPE_CHECKING:
    from .model import Problem

StrPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

MAX_ROW_BYTES = 32 << 20          # one stored row (a JSONL line, a SQLite row's JSON)
MAX_PACKED_MEMBERS = 1 << 16      # members of one packed chunk row expanded into events at once (ours: dsh's
                                  # JSONL packer has no maximum); a longer row is counted, not expanded
SCAN_MEMBERS = 32 << 20           # members the scanners count in one row (= MAX_ROW_BYTES: a row cannot hold more)
MAX_DEPTH = 256                   # JSON nesting of one row (arrays + objects)
MAX_FRAME_BYTES = 1 << 30         # plaintext read from one zstd frame (streamed); the rest is a bad row
FRAME_ROWS_FREE = 1 << 16         # rows of one zstd frame always read; past them, at most one row per
MIN_STORED_PER_ROW = 2            # ... this many stored bytes of the frame (dsh's default level stores >= ~4.6 bytes
                                  # a row even for the most repetitive rows): a frame of millions of tiny rows is
                                  # read in time proportional to its stored size, the rest is one bad segment


def frame_rows_limit(stored: int) -> int:
    """Rows read from a zstd frame of ``stored`` bytes (:data:`FRAME_ROWS_FREE`, :data:`MIN_STORED_PER_ROW`)."""
    return max(FRAME_ROWS_FREE, stored // MIN_STORED_PER_ROW)
MAX_FRAME_STORED = 64 << 20       # stored (compressed) bytes of one zstd frame held to decode it; a bigger
                                  # frame is a reported bad frame, never loaded (dsh: one batch per frame)
ZSTD_BACK_BUDGET = 64 << 20       # plaintext held when a big frame is read newest-first (re-streamed)
ZSTD_WINDOW_LOG_MAX = 24          # largest zstd window accepted (16 MiB; dsh/zstd levels 1-19 use <= 8 MiB)
ZSTD_OUT_WINDOW = 8 << 20         # plaintext decoded per step when streaming a frame
MAX_TAIL_ROWS = 100_000           # rows held while reading back to the last turn/end (else: streamed)
MAX_PAGE_ROWS = 100_000           # rows in one history page (cut at a row boundary; has_more)
MAX_PROBLEMS_PER_CODE = 1000      # problems listed per code in one answer; the rest are counted
PEAK_RSS_BOUND = 512 << 20        # what the tests hold every read face to, whatever the input


class LimitError(ValueError):
    """A row or frame goes past one of the limits above."""


def over_limit(what: str) -> str:
    """The words every face uses for a row past one of Session Lens's limits (not a dsh rule)."""
    return f"over Session Lens's limit ({what}); not a dsh rule: the row is legal and kept as stored"


# ----------------------------------------------------------------------------- nesting depth

# possessive quantifiers: a long string is one step of the scanner, not one saved state per byte
# (the backtracking form held ~20 bytes of regex stack per byte of a string)
_STRINGS = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.S)
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")      # +1 / -1 as signed bytes


def nesting_depth(raw: bytes, stop: int = MAX_DEPTH) -> int:
    """Deepest array/object nesting of JSON text ``raw`` (strings skipped); stops counting at
    ``stop + 1``.  Cheap when the row holds few brackets (the common case); else the strings are
    cut out and the running depth summed over the brackets left, all at C level."""
    if raw.count(b"[") + raw.count(b"{") <= stop:
        return 0
    steps = _STRINGS.sub(b"", raw).translate(_STEPS, _NOT_BRACKETS)
    worst = max(0, max(accumulate(memoryview(steps).cast("b")), default=0))
    return min(worst, stop + 1)


def check_row(raw: Union[bytes, bytearray, memoryview]) -> None:
    """Raise :class:`LimitError` when one row is too large or nested too deeply to decode."""
    n = len(raw)
    if n > MAX_ROW_BYTES:
        raise LimitError(over_limit(f"a row of {n} bytes; it reads rows up to {MAX_ROW_BYTES >> 20} MiB"))
    b = raw if type(raw) is bytes else bytes(raw)
    if b.count(b"[") + b.count(b"{") > MAX_DEPTH and nested_over(b, MAX_DEPTH):
        raise LimitError(over_limit(f"a row nested deeper than {MAX_DEPTH} levels"))


def nested_over(raw: bytes, limit: int) -> bool:
    """``nesting_depth(raw, limit) > limit``: in C where the row scanner is built (``rowscan_c.depth_over``, one
    pass that copies no string; tests/test_export_fast.py checks it against this definition), else by it."""
    f = _DEPTH_OVER[0]
    if f is None:
        from ..index.fastindex import load_rowscan_c      # (resolved once, when a row first needs it)
        native = load_rowscan_c()
        f = _DEPTH_OVER[0] = getattr(native, "depth_over", None) or (lambda r, k: nesting_depth(r, k) > k)
    return bool(f(raw, limit))


_DEPTH_OVER: list[Optional[Callable[[bytes, int], bool]]] = [None]


class ProblemList(list["Problem"]):
    """A list of problems that keeps at most :data:`MAX_PROBLEMS_PER_CODE` of each code
    (a log of a million bad rows must not yield a million problems); :meth:`summary`
    says how many were left out."""

    def __init__(self, items: Iterable[Problem] = ()) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}
        self.extend(items)

    def append(self, p: Problem) -> None:
        code = p.code
        n = self.counts.get(code, 0) + 1
        self.counts[code] = n
        if n <= MAX_PROBLEMS_PER_CODE:
            super().append(p)

    def extend(self, items: Iterable[Problem]) -> None:
        for p in items:
            self.append(p)

    def summary(self) -> list[Problem]:
        from .model import Problem
        return [Problem(code=code, message=f"{n - MAX_PROBLEMS_PER_CODE} more {code} problem(s) not listed")
                for code, n in self.counts.items() if n > MAX_PROBLEMS_PER_CODE]


# ----------------------------------------------------------------------------- special files

class NotRegularFile(OSError):
    """A path that is not a regular file (FIFO, device, socket, folder) where a log was expected."""


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words (for a refusal's sentence)."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: StrPath) -> int:
    """``os.open`` for reading that never blocks on a FIFO or device: refuses anything that is
    not a regular file (symlinks are followed, so a link to ``/dev/zero`` is refused)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            what = file_kind(st.st_mode)
            raise NotRegularFile(21 if stat.S_ISDIR(st.st_mode) else 22,
                                 f"{os.fsdecode(path)} is {what}, not a regular file: refused", os.fsdecode(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_head(path: StrPath, n: int) -> bytes:
    """The first ``n`` bytes of a regular file (refusing special files)."""
    fd = open_regular(path)
    try:
        return os.pread(fd, n, 0)
    finally:
        os.close(fd)

"""Reading session files' headers (and, with the listing's titles, their titles) for discovery: one open
and bounded reads per file, never blocking on a FIFO or device; :func:`read_many` shares a listing's files
between forked readers (the CLI).  :mod:`app.store.discovery` builds the listing from these facts."""
from __future__ import annotations

import os
import stat
from typing import Any, Optional, Union

import msgspec

from ..log.format.codec import parse_header
from ..log.format.limits import open_regular
from . import title_cache
from . import titles as _titles

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

HEAD_READ = 8192                      # a header line is a few hundred bytes (grown below if not)
HEADER_LIMIT = 1 << 20


def open_file(path: str) -> tuple[int, os.stat_result]:
    """An fd for reading that never blocks on a FIFO or device, and its stat (one ``fstat``)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        open_regular(path)                # raises NotRegularFile with the sentence saying what it is
    return fd, st


def _header_zstd(fd: int, data: bytes, limit: int) -> tuple[Optional[bytes], Optional[str], int]:
    from ..log.source.zstdlib import zstd
    while True:
        try:
            n = zstd.get_frame_size(data)
            break
        except zstd.ZstdError:
            more = os.pread(fd, 65536, len(data))
            if not more or len(data) > limit:
                return None, "the zstd header frame is incomplete or corrupt", 0
            data += more
    from ..log.source.zstdframes import FrameError
    try:
        text = _titles.decode_frames(data, 0, n, limit)     # a bomb in the header frame stays a bad header
    except (zstd.ZstdError, FrameError) as e:
        return None, f"the zstd header frame does not decode: {e}", 0
    if text.count(b"\n") != 1 or not text.endswith(b"\n"):
        return None, "the zstd header frame is not exactly one line", 0
    return text[:-1], None, n


def header_of(fd: int, head: bytes, limit: int = HEADER_LIMIT) -> tuple[Optional[bytes], Optional[str], int]:
    """(header line, None, bytes it takes in the file) of an open session file whose first bytes
    are ``head``; else (None, reason, 0)."""
    if head.startswith(ZSTD_MAGIC):
        return _header_zstd(fd, head, limit)
    data = head
    while b"\n" not in data:
        more = os.pread(fd, 65536, len(data))
        if not more:
            break
        data += more
        if len(data) > limit:
            return None, "the first line is longer than 1 MiB", 0
    if not data:
        return None, "empty file", 0
    line = data.split(b"\n", 1)[0]
    return line, None, len(line) + 1


def read_header_bytes(path: str, limit: int = HEADER_LIMIT) -> tuple[Optional[bytes], Optional[str]]:
    """The header line of a session file (frame 1 for zstd), or (None, reason)."""
    try:
        fd, _st = open_file(path)
        try:
            raw, why, _end = header_of(fd, os.pread(fd, HEAD_READ, 0), limit)
            return raw, why
        finally:
            os.close(fd)
    except OSError as e:
        return None, f"cannot read: {e.strerror or e}"


def zstd_title(path: str, problems: Optional[list[str]] = None) -> tuple[Optional[str], bool]:
    """(title, exact) of a ``session.jsonl.zstd`` (bounded tail and head regions, :mod:`app.store.titles`;
    ``problems`` gets a line for a frame there that does not decode)."""
    from ..log.source.zstdlib import zstd
    fd, st = open_file(path)
    try:
        head = os.pread(fd, _titles.ZSTD_WINDOW, 0)
        try:
            end = zstd.get_frame_size(head) if head.startswith(ZSTD_MAGIC) else 0   # (the header was read
        except zstd.ZstdError:                                                     # by the listing)
            end = 0
        if not end:
            raw, _why, end = header_of(fd, head)
            if raw is None:
                return None, True
        return _titles.title_of_zstd(fd, st.st_size, end, head, problems=problems)
    finally:
        os.close(fd)


def fmt_of(path: str) -> str:
    return "zstd" if path.endswith((".zstd", ".zst")) else "jsonl"


# What one read of a session file gives: (header object, id, fatal header problems, title read, title,
# title exact, size, mtime); None: not a session file; a string: why it could not be read (a line for
# ``problems``).  size and mtime: the caller's, or the open file's when the caller had none (size -1).
Facts = tuple[dict[str, Any], str, list[str], bool, Optional[str], bool, int, float, tuple[int, int]]
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def read_facts(path: str, size: int, title: bool = False, exact: bool = False) -> Union[Facts, str, None]:
    """The header facts (and with ``title`` the title) of one session file of ``size`` bytes (as the
    caller's stat gave it): one open, a first read that holds the header and the head region, and
    (``title``, a file bigger than the head region) one read of the tail region; ``exact``: the
    middle too (the title is then exact, never provisional).  ``size`` -1: the caller did not stat the
    file (a first listing: no cache to look up); its size and mtime are the open file's (``fstat``, which
    also refuses what is not a regular file)."""
    fmt = fmt_of(path)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as e:
        return f"{path}: cannot read: {e.strerror or e}"
    mtime, ident = 0.0, title_cache.NO_IDENT
    try:
        if size < 0:
            try:
                st = os.fstat(fd)
            except OSError as e:
                return f"{path}: cannot read: {e.strerror or e}"
            if not stat.S_ISREG(st.st_mode):
                from ..log.format.limits import file_kind
                return f"{path}: cannot read: {path} is {file_kind(st.st_mode)}, not a regular file: refused"
            size, mtime, ident = st.st_size, st.st_mtime, title_cache.ident_of(st)
        try:
            first = HEAD_READ if not title else _titles.WINDOW if fmt == "jsonl" else _titles.ZSTD_WINDOW
            head = os.pread(fd, first, 0)
            raw, _why, end = header_of(fd, head)
        except OSError as e:
            return f"{path}: cannot read: {e.strerror or e}"
        if raw is None:
            return None
        hdr, hprobs = parse_header(raw)
        if hdr is None:
            return None
        try:
            header = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            header = hdr.to_dict()
        probs = [str(p) for p in hprobs if p.fatal]
        t, exact_t = None, True
        if title:
            try:
                t, exact_t = _titles.title_of_jsonl(fd, size, head, exact=exact) if fmt == "jsonl" else \
                    _titles.title_of_zstd(fd, size, end, head, problems=probs, exact=exact)
            except OSError:
                t = None
        return header, hdr.id, probs, title, t, exact_t, size, mtime, ident
    finally:
        os.close(fd)


def read_chunk(jobs: list[tuple[str, int]], title: bool, exact: bool = False) -> list[Union[Facts, str, None]]:
    return [read_facts(p, n, title, exact) for p, n in jobs]


PARALLEL_MIN = 256                    # files to read before a forked worker pays off (fork + results)


def _read_cost(path: str, size: int, title: bool, exact: bool = False) -> int:
    """About how much work reading one file is, in bytes searched (a zstd byte decodes to ~4 of text;
    each file also costs a fixed ~16 KiB's worth of calls)."""
    if not title:
        return 1
    if path.endswith(".jsonl"):                        # (size -1: not known, the bounded reads' size)
        return (16 << 10) + (size if exact and size >= 0 else min(size % (1 << 62), _titles.WINDOW + _titles.TAIL))
    return (16 << 10) + 4 * (size if exact and size >= 0 else
                             min(size % (1 << 62), _titles.ZSTD_WINDOW + _titles.ZSTD_TAIL))


def _shares(jobs: list[tuple[str, int]], title: bool, k: int, exact: bool = False) -> list[list[int]]:
    """The indices of ``jobs`` split into ``k`` shares of about equal work (each job to the lightest
    share so far, in order: a home of a few big sessions is split as evenly as one of many small)."""
    shares: list[list[int]] = [[] for _ in range(k)]
    load = [0] * k
    for i, (p, n) in enumerate(jobs):
        j = load.index(min(load))
        shares[j].append(i)
        load[j] += _read_cost(p, n, title, exact)
    return shares


def read_many(jobs: list[tuple[str, int]], title: bool, workers: int = 0, exact: bool = False) \
        -> list[Union[Facts, str, None]]:
    """:func:`read_facts` of every ``(path, size)``, in order.  ``workers`` > 1: the files are shared
    (by the work they take, :func:`_shares`) between this process and ``workers - 1`` forked
    children, whose results come back pickled through a pipe (a child that fails: its share is read
    here).  Only for a caller with no other threads (the CLI): a fork copies one thread."""
    k = min(workers, len(jobs) // PARALLEL_MIN) if hasattr(os, "fork") else 0
    if k < 2:
        return read_chunk(jobs, title, exact)
    import pickle
    shares = _shares(jobs, title, k, exact)
    parts = [[jobs[j] for j in share] for share in shares]
    children: list[tuple[int, int, int]] = []
    for i in range(1, k):
        try:
            r, w = os.pipe()
            pid = os.fork()
        except OSError:
            break
        if pid == 0:                                   # the child: its share, pickled, then gone
            code = 1
            try:
                os.close(r)
                blob = pickle.dumps(read_chunk(parts[i], title, exact), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(w, "wb") as f:
                    f.write(blob)
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        children.append((pid, r, i))
    out: list[Union[Facts, str, None]] = [None] * len(jobs)

    def place(i: int, got: list[Union[Facts, str, None]]) -> None:
        for j, x in zip(shares[i], got):
            out[j] = x
    done = {0} | {i for _p, _r, i in children}
    for i in range(k):                                 # this process's share (and any share not forked)
        if i == 0 or i not in done:
            place(i, read_chunk(parts[i], title, exact))
    for pid, r, i in children:
        with os.fdopen(r, "rb") as fr:
            blob = fr.read()
        _pid, status = os.waitpid(pid, 0)
        part = pickle.loads(blob) if status == 0 and blob else None
        place(i, part if isinstance(part, list) and len(part) == len(parts[i]) else read_chunk(parts[i], title, exact))
    return out


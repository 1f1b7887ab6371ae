"""The index's row scanners for tests: the C one (when set-up built it), the source interpreted, and the
bulk scan the index used before them (the reference for what is accepted).

``SCANNERS`` maps "c"/"python" to a ``rowscan.scan`` (the C one with its fallback for wide seqs); ``use(name)`` makes
``app.log.index.fastindex`` scan with that one (forked scan workers inherit it).  ``bulk_block`` is the
previous byte-level scan (readlines, the joined heads through one regex, the dt regex, the seq column
by ``accumulate``), kept here only as the oracle: the row scanner must accept and reject exactly what
it did and give the same block.
"""
from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import re
from collections import deque
from itertools import accumulate, chain, compress, repeat
from operator import add, itemgetter, methodcaller
from pathlib import Path

import msgspec

from app.log.index import fastindex
from app.log.index.fastindex import _CHUNK_TYPES, LEGACY_TYPE_BYTES, _MARK_CODE, NOT_LEGACY, ROWS_RE, SEQ_AT, _Block
from app.log.format.limits import MAX_PACKED_MEMBERS
from app.log.index.rowprobe import maybe_legacy

SOURCE = Path(fastindex.__file__).with_name("rowscan.py")


def _interpreted():
    spec = importlib.util.spec_from_file_location("rowscan_interpreted_for_tests", SOURCE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def is_extension(path: str) -> bool:
    return path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


INTERPRETED = _interpreted()
C_SCANNER = fastindex._rowscan_c
SCANNERS = {"python": INTERPRETED.scan, **({"c": fastindex.scan_c} if C_SCANNER is not None else {})}
NAMES = ["c", "python"]     # (a test param "c" skips where set-up could not build it; the mypyc build is gone: decision 0021)


@contextlib.contextmanager
def use(name: str):
    """``app.log.index.fastindex`` scans with the scanner ``name`` inside the block."""
    old = fastindex.scan_rows
    fastindex.scan_rows = SCANNERS[name]
    try:
        yield
    finally:
        fastindex.scan_rows = old


def block(name: str, data: bytes, n: int, expected, legacy: bool):
    """``fastindex._scan_cut`` of ``data[:n]`` with the scanner ``name``."""
    with use(name):
        return fastindex.scan_buffer(data, 0, n, expected, legacy)


# --------------------------------------------------------------------------- the previous bulk scan (oracle)

_DT = re.compile(rb'\{"type":"[^"]*","seq0":[0-9]+,"time0":-?[0-9]+,"data":\{"turn":-?[0-9]+,"step":-?[0-9]+,'
                 rb'"index":-?[0-9]+,"dt":\[([^\]]*)\]')
ROW_HEADS = itemgetter(slice(0, 64))
_TAILS = itemgetter(slice(-2, None))
_GROUP1 = methodcaller("group", 1)


def bulk_block(data: bytes, n: int, expected, legacy: bool):
    """What the index's previous scan (before the row scanner) made of ``data[:n]``: a block or None."""
    if data[n - 2:n] != b"}\n":
        return None
    lines = fastindex.lines_of(data, n)
    if lines is None:
        return None
    n = len(lines)
    if not n or b"".join(map(_TAILS, lines)) != b"}\n" * n:
        return None
    found = ROWS_RE.findall(b"\x00".join(chain((b"",), map(ROW_HEADS, lines))))
    if len(found) != n:
        return None
    types, packed, seqs = zip(*found)
    ints = list(map(int, seqs))
    first = ints[0]
    if expected is not None and first != expected:
        return None
    if any(packed):
        if not set(compress(types, packed)) <= _CHUNK_TYPES:
            return None
        try:
            dts = list(map(_GROUP1, map(_DT.match, compress(lines, packed))))
        except AttributeError:
            return None
        if b"".join(dts).translate(None, b"-0123456789,"):
            return None
        extra = list(map(add, map(bytes.count, dts, repeat(b",")), map(bool, dts)))
        if max(extra) >= MAX_PACKED_MEMBERS:
            return None
        counts = [1] * n
        deque(map(counts.__setitem__, compress(range(n), packed), map(add, extra, repeat(1))), 0)
        col = list(accumulate(counts, initial=first))
    else:
        col = list(range(first, first + n + 1))
    if col[:n] != ints:
        return None
    marks = [i for i, t in enumerate(types) if t in _MARK_CODE]
    flag = None
    if legacy:
        flag = False
        try:
            for t, s, line in zip(types, seqs, lines):
                if t not in LEGACY_TYPE_BYTES:
                    continue
                shape = NOT_LEGACY.get(t)
                if shape is not None and shape.match(line, SEQ_AT + len(t) + len(s)):
                    continue
                if maybe_legacy(fastindex.probe_row(line)):
                    flag = True
                    break
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return None                    # (RecursionError: the bulk scan raised it, a crash: fixed with the row scanner)
    return _Block(col[0], col[n] - 1, n, [ints[i] for i in marks], [_MARK_CODE[types[i]] for i in marks], flag)


# --------------------------------------------------------------------------- the fork's previous legacy scan (oracle)

def old_legacy_by_heads(data: bytes, upto: int):
    """``app.store.forking._legacy_by_heads`` as it was before the row scanner named its rows (the regex over
    the joined row heads, ``NOT_LEGACY``'s patterns, a probe per remaining row of a legacy type), kept
    here only as the oracle.  Two changes, both asserted by tests of their own: only ``data[:upto]`` is
    read (before, every row of ``data`` but its last was, so a cut segment listed rows after the fork's
    boundary), and a row nested deeper than the probe's decoder goes is a maybe (before: ``RecursionError``)."""
    if upto <= 0 or data[upto - 1:upto] != b"\n":
        return None
    data = data[:upto]
    lines = fastindex.lines_of(data, upto)
    if lines is None:
        return None
    found = ROWS_RE.findall(b"\x00".join(chain((b"",), map(ROW_HEADS, lines))))
    if len(found) != len(lines):
        return None
    types = list(map(itemgetter(0), found))
    ends = list(accumulate(map(len, lines)))
    out = []
    for i in compress(range(len(lines)), map(LEGACY_TYPE_BYTES.__contains__, types)):
        line, t = lines[i], types[i]
        shape = NOT_LEGACY.get(t)
        if shape is None or not shape.match(line, SEQ_AT + len(t) + len(found[i][2])):
            try:
                maybe = maybe_legacy(fastindex.probe_row(line))
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                maybe = True
            if maybe:
                out.append((ends[i] - len(line), ends[i] - 1))
    return out


def apply_edit(data: bytearray, op: str, at: int, byte: int) -> None:
    """One Hypothesis edit of a buffer in place: ``set``/``insert``/``delete`` the byte at ``at``
    (taken modulo the buffer's length; an edit past the end does nothing)."""
    at %= len(data) + (op == "insert")
    if op == "set" and at < len(data):
        data[at] = byte
    elif op == "insert":
        data.insert(at, byte)
    elif op == "delete" and at < len(data):
        del data[at]

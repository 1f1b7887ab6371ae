"""Whole-log find's byte prefilter in one pass (pure core, no Qt): the rows of a window holding any of a
:class:`~.find_prefilter.Prefilter`'s needles (its raw needles and its ``\\uXXXX``-escaped ones alike, each seen
through the prefilter's fold table), found by rowscan_c.rows_any (the find5 section), instead of a pass of the
window per needle (and one more for the first escape of a non-ASCII character).

Each needle is looked for by two of its bytes at most 3 apart (:func:`probe_offsets`: the pair rarest in a sample
of the window, counted once per find), all probes 16 places at a time; each place where a probe is found checked
for its needles.  The rows found are those :meth:`.Prefilter.positions` finds (``rows=True``) and those
:meth:`.Prefilter.hit` keeps: a needle of a caseless prefilter is a folded image, found where the window's bytes
fold onto it; every escaped needle is found wherever it is (the prefilter looks for them from the window's first
escape of a non-ASCII character, which each of them holds).  :func:`rows_any_py` is the definition;
``tests/test_find_anyrows.py`` holds the C to it and the rows to the prefilter's.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from ..index.fastindex import load_rowscan_c

ROWS_ANY = getattr(load_rowscan_c(), "rows_any", None)
SAMPLE = 1 << 14                   # bytes of each of the window's SAMPLES stretches the probes are counted in
SAMPLES = 4
GAP = 3                            # a probe's second byte at most this far from its first (rowscan_c's loads)
NEW_PROBE = 256                    # a probe's scan of a window costs about as much as checking this many places per sample
PROBES = 16                        # probes looked for in one pass at most (rowscan_c's F5_PROBES)


def probe(n: bytes, kg: tuple[int, int]) -> tuple[int, int, int]:
    """The probe needle ``n`` is looked for by from ``kg`` = (k, g): (its byte k, its byte k + g, g)."""
    k, g = kg
    return n[k], n[k + g], g


def probe_offsets(needles: tuple[bytes, ...], table: bytes, data: Any, lim: int) -> tuple[tuple[int, int], ...]:
    """For each needle, the (k, g) of the probe it is looked for by (:func:`probe`: two of its bytes at most
    :data:`GAP` apart, or one, g 0): the one seen least often in :data:`SAMPLES` stretches of ``data[:lim]`` seen through
    ``table``, a probe not taken yet counted :data:`NEW_PROBE` places more (each probe costs a pass's share; then
    the one more needles hold, the widest, the first)."""
    step = max(lim // SAMPLES, SAMPLE)
    sample = b"\n".join(bytes(data[a:min(a + SAMPLE, lim)]).translate(table) for a in range(0, max(lim, 1), step))
    seen: dict[tuple[int, int, int], int] = {}
    taken: dict[tuple[int, int, int], None] = {}
    every = [{probe(n, (k, g)) for g in range(min(GAP, len(n) - 1) + 1) for k in range(len(n) - g)} for n in needles]
    shared: dict[tuple[int, int, int], int] = {}
    for ps in every:
        for pr in ps:
            shared[pr] = shared.get(pr, 0) + 1
    out = []
    for n in needles:
        best: Optional[tuple[int, int, int]] = None
        at = (0, 0)
        for g in range(min(GAP, len(n) - 1), -1, -1):
            for k in range(len(n) - g):
                pr = probe(n, (k, g))
                c = seen.get(pr)
                if c is None:
                    c = seen[pr] = _count(sample, pr)
                score = (c + (0 if pr in taken else NEW_PROBE), -shared[pr], -g)
                if best is None or score < best:
                    best, at = score, (k, g)
        out.append(at)
        taken[probe(n, at)] = None
    return tuple(out)


def _count(sample: bytes, pr: tuple[int, int, int]) -> int:
    """The places of probe ``pr`` in ``sample``."""
    a, b, g = pr
    if g == 0:
        return sample.count(bytes([a]))
    return len(re.findall(re.escape(bytes([a])) + b"(?=" + b"." * (g - 1) + re.escape(bytes([b])) + b")", sample,
                          re.S))


def rows_any_py(data: Any, start: int, end: int, needles: tuple[bytes, ...], ks: tuple[tuple[int, int], ...],
                table: bytes, starts: Optional[list[int]]) -> Optional[list[int]]:
    """The definition of ``rowscan_c.rows_any`` (see its comment): ``starts`` None, a place in each row of
    ``data[start:end]`` holding a needle (the first found: places taken in order, at each the probes in the order of
    their first needle, each probe's needles in order); else the starts of the rows of ``starts`` holding one.  None:
    a needle holds a newline, or more than :data:`PROBES` probes (the caller searches otherwise)."""
    probes = list(dict.fromkeys(probe(n, kg) for n, kg in zip(needles, ks)))
    if any(b"\n" in n for n in needles) or len(probes) > PROBES:
        return None
    order = sorted(range(len(needles)), key=lambda i: (probes.index(probe(needles[i], ks[i])), i))
    start, end = max(start, 0), min(end, len(data))
    hay = bytes(data).translate(table)

    def first(a: int, b: int) -> int:
        for q in range(a, b):
            for i in order:
                n, (k, g) = needles[i], ks[i]
                s = q - k
                if q + g < b and hay[q] == n[k] and hay[q + g] == n[k + g] and s >= a and s + len(n) <= b \
                        and hay.startswith(n, s):
                    return s
        return -1
    out: list[int] = []
    if starts is None:
        pos = start
        while pos < end:
            s = first(pos, end)
            if s < 0:
                break
            out.append(s)
            nl = hay.find(b"\n", s, end)
            if nl < 0:
                break
            pos = nl + 1
        return out
    for s in starts:
        if start <= s < end:
            nl = hay.find(b"\n", s, end)
            if first(s, end if nl < 0 else nl) >= 0:
                out.append(s)
    return out


class AnyRows:
    """One prefilter's needles for :func:`rows_any` (their probes chosen on the first window asked: ``ks``), or
    ``needles`` () once it says no (not asked again)."""
    __slots__ = ("needles", "table", "ks", "probes")

    def __init__(self, needles: tuple[bytes, ...], table: bytes):
        self.needles, self.table = needles, table
        self.ks: Optional[tuple[tuple[int, int], ...]] = None
        self.probes = 0

    def rows(self, data: Any, lim: int, starts: Optional[list[int]], most: int) -> Optional[list[int]]:
        """rows_any of ``data[:lim]`` (see :meth:`.Prefilter.rows_of`); None: not this way (no C, no needles, more
        than ``most`` probes, or rows_any's None)."""
        if ROWS_ANY is None or not self.needles:
            return None
        if self.ks is None:
            self.ks = probe_offsets(self.needles, self.table, data, lim)
            self.probes = len({probe(n, kg) for n, kg in zip(self.needles, self.ks)})
        if self.probes > most:
            return None
        got: Optional[list[int]] = ROWS_ANY(data, 0, lim, self.needles, self.ks, self.table, starts)
        if got is None:
            self.needles = ()
        return got

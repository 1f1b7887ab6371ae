"""rowscan_c.text_hits (the findc section: whole-log find's text hits of a window's candidate rows, read and matched
in C) gives what its definition, app/log/query/find_fast.text_hits_py, gives: the same hit tuples and rows left to
the caller, in the same order, and the same count of rows read; on every fixture, generated, hostile and edited
logs, both modes, torn or not, every row a candidate or some."""
from __future__ import annotations

import random

import pytest

from app.log.query import find_fast
from app.log.query.find_fast import READ_T, text_hits_py
from app.log.query.textrow import text_row_c
from app.log.query.textview import TOOL_CALL, TOOL_OUTPUT
from app.tools.hostile import hostile_session, jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES, session_files

C = find_fast._C_TEXT_HITS if text_row_c() is not None else None    # (text_row_c: the C's types set up, as find has)
pytestmark = pytest.mark.skipif(C is None, reason="the row scanner in C is not built")
NEEDLES = [(0, "the"), (0, "e"), (0, '"p'), (0, "summarize"), (0, "call"), (1, "\u2014"), (1, "The"), (1, "\u00e9")]
KINDS = (TOOL_CALL, TOOL_OUTPUT)


def _starts(data: bytes) -> list[int]:
    out, s = [], 0
    while s < len(data):
        out.append(s)
        e = data.find(b"\n", s)
        if e < 0:
            break
        s = e + 1
    return out


def same(data: bytes, rng: random.Random) -> int:
    starts = _starts(data)
    hits = 0
    for mode, needle in NEEDLES:
        for torn in (False, True):
            some = sorted(rng.sample(starts, len(starts) // 2)) if torn else starts
            args = (data, some, len(data), torn, 1 << 25, READ_T, needle, mode, KINDS)
            got, want = C(*args), text_hits_py(*args)
            assert got == want, (needle, mode, torn, next(((a, b) for a, b in zip(got[0], want[0]) if a != b), None))
            hits += sum(1 for it in got[0] if type(it) is not int)
    return hits


def test_text_hits_in_c_are_its_definition_on_the_fixtures():
    rng = random.Random(1)
    hits = 0
    for p in session_files(FIXTURES) + session_files(FIXTURES.parent / "dsh-next"):
        if p.suffix == ".jsonl":
            hits += same(p.read_bytes(), rng)
    assert hits > 1000, hits


def test_text_hits_in_c_are_its_definition_on_generated_hostile_and_edited_logs(tmp_path):
    rng = random.Random(2)
    g = tmp_path / "g.jsonl"
    write_jsonl(str(g), SessionSynth(seed=11, version=4), target_bytes=300_000)
    data = g.read_bytes()
    hits = same(data, rng)
    lines = [ln for ln in data.decode().split("\n") if ln.strip()]
    hits += same(hostile_session(lines, seed=3), rng)
    for _, m, _ in jsonl_mutants(data, seed=4, count=6):
        hits += same(m, rng)
    # characters some of whose case forms hold ASCII (the row is left to the caller), control characters, a torn
    # last row, an escaped type, a row over the size given
    edited = [ln.replace("the", "\u017fhe").replace("call", "ca\\u0000ll") for ln in lines[:200]] + \
        [ln.replace('"type":', '"\\u0074ype":', 1) for ln in lines[200:260]] + lines[260:-1]
    hits += same(("\n".join(edited) + "\n" + lines[-1][:50]).encode(), rng)
    big = ("\n".join(lines[:50]) + "\n").encode()
    starts = _starts(big)
    args = (big, starts, len(big), False, 200, READ_T, "the", 0, KINDS)
    assert C(*args) == text_hits_py(*args) and all(type(it) is int for it in C(*args)[0])
    assert hits > 1000, hits

"""A number the exact decoder refuses (``1e999``, ``-1e999``, ``1E400``: "Number out of range"; an integer of more
than 4300 digits) in a field a lean record does not declare (msgspec skips it without parsing it) sends the row the
exact way on every fast path: ``inspect``, the timeline (JSONL, zstd, SQLite), the surface index's lean feeder and
the exports give the exact path's answer.  The same numbers written inside strings (and long digit runs there) keep the
row on the fast path.  One screen decides (:func:`app.log.format.rowscreen.refused`, the timeline's rule)."""
from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import msgspec
import pytest

from app.log.format import fastrows, rowscreen
from app.log.index.reader import LogReader
from app.log.query import analysis, timeline_scan
from app.log.query.timeline import timeline
from app.log.source.zstdframes import encode_frame
from app.store import export_rows, export_transcript
from app.store.faces import open_reader
from app.store.sqlite_writer import jsonl_to_sqlite
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES
from tests.test_surface_fast import _both as surface_both      # (lean and exact surface index, rows taken lean)

NEXT = FIXTURES.parent / "dsh-next"
BAD = [b"1e999", b"-1e999", b"1E400", b"-2.5e+999", b"1" * 4400]        # (numbers the exact decoder refuses)
BIG = b"1" * 400                # (an integer the exact decoder reads: a row holding it is screened all the same)
# the same kind of text inside strings: never a reason to leave the fast path
STRINGS = [b'"1e999"', b'"-1E400 and 3e5"', b'"' + b"7" * 400 + b'"', b'"a\\"1e999 \\\\"', b'"x\\\\" ']
# places of an undeclared field: data, a message, a content block, a chunk, a stream record, a usage object
PLACES = [b'"data":{', b'"message":{', b'"content":[{', b'"chunk":{', b'"stream":[{', b'"usage":{']


def _inject(line: bytes, k: int, values: list[bytes]) -> bytes:
    """``line`` with an undeclared field ``"zz"`` holding ``values[k % len]`` at the deepest place it has."""
    for place in reversed(PLACES):
        at = line.find(place)
        if at >= 0:
            v = values[k % len(values)]
            if v.startswith(b'"x'):          # (a string ending in a backslash, then a key: still one string)
                v = b'"x\\\\ ok"'
            return line[:at + len(place)] + b'"zz":' + v + b"," + line[at + len(place):]
    return line


def _log(tmp_path: Path, version: int, values: list[bytes], every: int = 5, name: str = "") -> Path:
    """A generated log of ``version`` whose every ``every``-th event row gains an undeclared field."""
    src = tmp_path / f"src{version}.v{version}.jsonl"
    if not src.exists():
        write_jsonl(str(src), SessionSynth(seed=40 + version, version=version, p_retry=0.3),
                    target_bytes=200_000)
    lines = src.read_bytes().split(b"\n")
    out = [lines[0]] + [_inject(ln, k, values) if ln and k % every == 0 else ln for k, ln in enumerate(lines[1:])]
    p = tmp_path / f"{name or 'm'}{version}-{len(values)}" / ("session.jsonl" if version == 0 else
                                                              f"session.v{version}.jsonl")
    p.parent.mkdir(exist_ok=True)
    p.write_bytes(b"\n".join(out))
    return p


def _zstd(p: Path) -> Path:
    z = p.with_name(p.name + ".zstd")
    lines = p.read_bytes().split(b"\n")
    with open(z, "wb") as f:
        for at in range(0, len(lines), 40):
            f.write(encode_frame(b"".join(ln + b"\n" for ln in lines[at:at + 40] if ln)))
    return z


def _hostile_logs(tmp_path: Path) -> list[Path]:
    return [_log(tmp_path, v, [b]) for v in (0, 4) for b in BAD] + [_log(tmp_path, v, BAD) for v in (0, 4)]


def test_the_exact_decoder_refuses_these_numbers_and_reads_those_strings():
    for b in BAD:
        with pytest.raises(msgspec.DecodeError):
            msgspec.json.decode(b'{"a":' + b + b"}")
    assert msgspec.json.decode(b'{"a":' + BIG + b"}")["a"] == int(BIG)
    for s in STRINGS:
        msgspec.json.decode(b'{"a":' + s + b"}")


def test_inspect_fast_equals_exact(tmp_path):
    for p in _hostile_logs(tmp_path):
        fast = analysis.inspect(open_reader(str(p)), fast=True)
        exact = analysis.inspect(open_reader(str(p)), fast=False)
        assert json.dumps(fast) == json.dumps(exact), p
        # dsh's JSON.parse reads them as +-Infinity: the event rows are kept (issue 27, jsnumbers); a v0 packed
        # row holding one is refused (dsh checks its numbers)
        assert any("out of range" in x for x in exact["problems"]) == (".v4." not in p.name), p


@pytest.mark.parametrize("zstd", [False, True])
def test_timeline_fast_equals_exact(tmp_path, zstd):
    for p in _hostile_logs(tmp_path):
        q = _zstd(p) if zstd else p
        r = open_reader(str(q))
        assert list(timeline(r)) == list(timeline(r.iter_events(logical=True))), q


def test_surface_index_lean_equals_exact(tmp_path, monkeypatch):
    for p in _hostile_logs(tmp_path):
        lean, exact, _taken = surface_both(str(p), monkeypatch)
        assert lean.to_state() == exact.to_state(), p


def _sqlite(tmp_path: Path) -> Path:
    """A v0 SQLite store (a generated log) whose every 5th event's text ``data`` gains an undeclared number from
    :data:`BAD` (our writer refuses such data: the store is edited in place, as another writer might have left it)."""
    db = tmp_path / "s.db"
    jsonl_to_sqlite(_log(tmp_path, 0, [b"0"], every=10 ** 9, name="sql"), db)
    c = sqlite3.connect(db)
    rows = c.execute("SELECT seq, data FROM events WHERE typeof(data) = 'text' AND seq % 5 = 0").fetchall()
    for k, (seq, data) in enumerate(rows):
        c.execute("UPDATE events SET data = ? WHERE seq = ?",
                  ('{"zz":' + BAD[k % len(BAD)].decode() + ("," if data != "{}" else "") + data[1:], seq))
    c.commit()
    c.close()
    assert len(rows) > 50
    return db


def test_sqlite_store_fast_equals_exact(tmp_path):
    """A SQLite store's rows come as a list (no buffer for the timeline's C scan): inspect and the timeline screen
    them all the same."""
    db = _sqlite(tmp_path)
    fast = analysis.inspect(open_reader(str(db)), fast=True)
    exact = analysis.inspect(open_reader(str(db)), fast=False)
    assert json.dumps(fast) == json.dumps(exact)
    assert any("out of range" in x for x in exact["problems"])
    r = open_reader(str(db))
    assert list(timeline(r)) == list(timeline(r.iter_events(logical=True)))


def _exports(reader: LogReader) -> list[bytes]:
    return [b"".join(export_rows.logical_jsonl(reader))] + \
        [b"".join(export_transcript.transcript_text(reader, fmt)) for fmt in ("markdown", "html")]


def test_exports_fast_equal_exact(tmp_path, monkeypatch):
    for p in _hostile_logs(tmp_path):
        fast = _exports(LogReader.open(str(p)))
        monkeypatch.setattr(export_rows, "packed_record", lambda reader, raw: None)
        # (the transcripts' first pass reads rows from their lean records: off too, every row decoded exactly)
        monkeypatch.setattr(export_transcript, "_lean_record", lambda decs, row, legacy: None)
        monkeypatch.setattr(export_rows, "plain_envelope", lambda reader, raw: None)
        monkeypatch.setattr(export_rows, "_native", None)
        exact = _exports(LogReader.open(str(p)))
        monkeypatch.undo()
        assert fast == exact, p


def test_accepts_refuses_every_row_the_exact_decoder_refuses(tmp_path):
    """Row by row: a row holding such a number outside strings is never accepted; the injected rows were
    accepted before the field was added (the test reaches the lean records)."""
    reached = 0
    for version in (0, 4):
        lines = _log(tmp_path, version, [b"0"], every=1).read_bytes().split(b"\n")[1:]
        for k, ln in enumerate(lines):
            if not ln or fastrows.accepts(ln, version) is None:
                continue
            reached += 1
            for b in BAD + [BIG]:
                assert fastrows.accepts(_inject(ln, k, [b]), version) is None, ln[:120]
    assert reached > 300


def test_numbers_in_strings_stay_on_the_fast_path(tmp_path, monkeypatch):
    """The same text inside strings: every path gives the exact answer and the lean records take as many rows
    as on the log with a plain number there."""
    for version in (0, 4):
        plain = _log(tmp_path, version, [b"0"], name="plain")
        strs = _log(tmp_path, version, STRINGS, name="strs")
        n = []
        for p in (plain, strs):
            rows = p.read_bytes().split(b"\n")[1:]
            n.append(sum(fastrows.accepts(ln, version) is not None for ln in rows if ln))
            assert json.dumps(analysis.inspect(open_reader(str(p)), fast=True)) == \
                json.dumps(analysis.inspect(open_reader(str(p)), fast=False))
            r = open_reader(str(p))
            assert list(timeline(r)) == list(timeline(r.iter_events(logical=True)))
            data = p.read_bytes()
            assert not any(x & 1 for x in timeline_scan.scan(data, len(data), [], 0)[1:]), p
        assert n[0] == n[1] > 100
        lean, exact, taken = surface_both(str(strs), monkeypatch)
        assert lean.to_state() == exact.to_state()
        assert taken == surface_both(str(plain), monkeypatch)[2] > 50


HOSTILE_ROWS = [b'{"a":1e5}', b'{"a":"1e5"}', b'{"a":1.5E-3}', b'{"a":"\\\\"}', b'{"a":"\\"1e9"}', b'{"a":0.e1}',
                b'{"a":' + b"9" * 18 + b"}", b'{"a":' + b"9" * 19 + b"}", b'{"a":"' + b"9" * 19 + b'"}',
                b'{"a":[1,2e3]}', b'{"a":true,"b":false,"c":null}', b'{"a":"\xc3\xa9 1e9"}', b'{"a":1}e',
                b'{"1e9":2}', b'{"a":-0.5e-1}', b'{"a":"x"}1e3', b'{"a":"\\\\","b":1e3}', b'{"a":"\\\\\\"1e3"}',
                b'{"a":[' + b"1," * 30 + b'2]}']


@pytest.mark.parametrize("native", [True, False])
def test_the_screen_is_the_timelines_rule_in_c_and_python(monkeypatch, native):
    """:func:`rowscreen.refused_py` (the timeline's rule), the C screen and the interpreted one (bytes checks,
    ``hint`` and ``number_refused``) agree on hostile rows and on fixture rows, row by row and a segment at once."""
    if native and rowscreen.c_screens()[1] is None:
        pytest.skip("the row scanner in C is not built")
    if not native:
        monkeypatch.setattr(rowscreen, "c_screens", lambda: (None, None))
    rows = list(HOSTILE_ROWS)
    for p in sorted(FIXTURES.rglob("*.jsonl"))[:40] + sorted(NEXT.rglob("*.jsonl"))[:40]:
        rows += [ln for ln in p.read_bytes().split(b"\n") if ln]
    rows += [_inject(ln, k, BAD + STRINGS) for k, ln in enumerate(rows[:400])]
    want = {i for i, r in enumerate(rows) if rowscreen.refused_py(r)}
    assert want == fastrows.refused_rows(rows, False) == fastrows.refused_split(b"\n".join(rows) + b"\n", rows)
    assert want == {i for i, r in enumerate(rows) if fastrows.row_refused(r)}
    assert {0, 2, 5, 7, 9, 14, 15, 16} <= want and not {1, 3, 4, 6, 8, 10, 11, 13, 17, 18} & want
    assert timeline_scan.refused is rowscreen.refused_py
    # the rule: an exponent or a run of more than 18 digits outside strings
    for r in HOSTILE_ROWS:
        outside = b"".join(re.split(rb'"(?:[^"\\]|\\.)*"', r))
        assert rowscreen.refused_py(r) == bool(re.search(rb"[0-9.][eE]|[0-9]{19}", outside)), r

"""The index's row scanner (app/log/index/rowscan.py): the C one and the source interpreted, the same answers.

The C scanner (rowscan_c.c, at set-up) and the source interpreted must give the same block for every
buffer, and both exactly what the previous bulk scan gave (accepted or rejected alike): on every shared
fixture, on generated v0/v4 logs, on hostile mutants and under hypothesis edits; and the index built with
either equals the exact scan's.  Where set-up built the C scanner, the index must really run it (the mypyc
build is gone: decision 0021).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scanners_util import C_SCANNER, INTERPRETED, NAMES, SCANNERS, SOURCE, block, apply_edit, bulk_block, is_extension, use

from app.log.index.fastindex import _KINDS, NOT_LEGACY

from app.log.index import fastindex
from app.log.index.fastindex import IndexBuilder, scan
from app.log.index.reader import LogReader
from app.log.source.sources import RawJsonlSource, open_source
from app.store.indexcache import index_summary
from app.tools.synth import SessionSynth, write_jsonl

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "fixtures"
ARRAYS = ("seg_pos", "seg_end", "first_seq", "last_seq", "line0", "rows", "mark_seq", "mark_code")


def _same(a, b) -> bool:
    return all(list(getattr(a, n)) == list(getattr(b, n)) for n in ARRAYS) and \
        (a.monotonic, a.events, a.last, a.contiguous_through) == (b.monotonic, b.events, b.last, b.contiguous_through)


def _agree(data: bytes, n: int | None = None, expected=None) -> object:
    """The block every scanner and the bulk scan give ``data[:n]`` (asserted equal), with and
    without the legacy probe."""
    n = len(data) if n is None else n
    out = None
    for legacy in (False, True):
        want = bulk_block(data, n, expected, legacy)
        for name in SCANNERS:
            assert block(name, data, n, expected, legacy) == want, (name, legacy, expected)
        out = want if legacy else out
    return out


# --------------------------------------------------------------------------- which scanner runs

def test_the_c_scanner_runs_where_set_up_built_it():
    """With a stamp (set-up built this source), the index scans with the C extension, not the source; a
    build that is silently not used fails here.  No mypyc build is made or used any more (decision 0021).
    On CI with a compiler, set-up must have built the C scanner."""
    assert INTERPRETED.__file__ == str(SOURCE) and not is_extension(INTERPRETED.__file__)
    assert not is_extension(fastindex._rowscan.__file__), "the interpreted scanner is the C scanner's fallback"
    assert not list(SOURCE.parent.glob("rowscan__mypyc*")) and not SOURCE.with_name("rowscan.stamp").exists()
    if os.environ.get("SESSION_LENS_SCANNER") == "python":
        pytest.skip("the interpreted scanner was asked for (SESSION_LENS_SCANNER=python)")
    c_source, c_stamp = SOURCE.with_name("rowscan_c.c"), SOURCE.with_name("rowscan_c.stamp")
    if c_stamp.exists():
        assert c_stamp.read_text().strip() == hashlib.sha256(c_source.read_bytes()).hexdigest(), \
            "app/log/index/rowscan_c.c changed since set-up built it: run make (packaging/build_native.py)"
        assert fastindex.SCANNER == "c" and C_SCANNER is not None and is_extension(C_SCANNER.__file__)
        assert fastindex.scan_rows is fastindex.scan_c
    else:
        assert fastindex.SCANNER == "python" and fastindex.scan_rows is fastindex._rowscan.scan
    if os.environ.get("SESSION_LENS_CI"):
        spec = importlib.util.spec_from_file_location("build_native", REPO / "packaging" / "build_native.py")
        build = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(build)
        if not build.why_not():
            assert c_stamp.exists(), "a compiler is here, but set-up did not build the C row scanner"


def test_index_json_names_the_scanner(tmp_path):
    p = tmp_path / "s.jsonl"
    write_jsonl(str(p), SessionSynth(seed=1, version=4), target_bytes=30_000)
    obj = index_summary(LogReader(open_source(str(p))))
    assert obj["scanner"] == fastindex.SCANNER and obj["status"] == "built" and obj["events"] > 20


# --------------------------------------------------------------------------- the shared fixtures

FIXTURE_FILES = sorted(str(p.relative_to(SHARED)) for p in SHARED.rglob("*.jsonl"))


@pytest.mark.parametrize("name", NAMES)
def test_every_fixture_indexes_as_the_exact_scan_with_either_scanner(name):
    if name not in SCANNERS:
        pytest.skip("set-up did not compile the row scanner here")
    assert len(FIXTURE_FILES) > 100
    fast = 0
    with use(name):
        for rel in FIXTURE_FILES:
            r = LogReader(open_source(str(SHARED / rel)))
            if not fastindex.fast_applicable(r):
                continue
            legacy = fastindex.wants_legacy(r)
            pa: list = []
            exact = r.build_index_exact(problems=pa)
            probe: list = []
            for seg in r.source.forward():
                r.scan_segment_rows(seg, [], probe)
            for b in (scan(r, IndexBuilder(problems=[], legacy=[] if legacy else None), r.source.forward()),
                      scan(r, IndexBuilder(problems=[], legacy=[] if legacy else None), workers=1)):
                assert _same(exact, b.idx), rel
                assert [str(x) for x in pa] == [str(x) for x in b.problems], rel
                if legacy:
                    assert list(b.idx.legacy) == [bool(x) for x in probe], rel
                fast += b.fast_segments
    assert fast > 100                              # (the fixtures are read at byte level, not all exactly)


def test_every_fixture_segment_gives_the_bulk_scans_block():
    accepted = rejected = 0
    for rel in FIXTURE_FILES:
        src = open_source(str(SHARED / rel))
        if src.kind != "jsonl":
            continue
        for seg in RawJsonlSource(str(SHARED / rel), block=4096).forward():
            if seg.torn or seg.bad or seg.rows is not None or not seg.data:
                continue
            got = _agree(seg.data)
            if got is not None:
                accepted += 1
                assert _agree(seg.data, expected=got.first) == got
                assert _agree(seg.data, expected=got.first + 1) is None
            else:
                rejected += 1
    assert accepted > 100 and rejected > 0


# --------------------------------------------------------------------------- generated logs and mutants

def _body(version: int, seed: int, size: int = 60_000) -> bytes:
    import tempfile
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    os.close(fd)
    try:
        write_jsonl(path, SessionSynth(seed=seed, version=version), target_bytes=size)
        data = Path(path).read_bytes()
    finally:
        os.unlink(path)
    return data[data.index(b"\n") + 1:]


BODIES = {(v, s): _body(v, s) for v in (0, 4) for s in (0, 1)}


@pytest.mark.parametrize("key", sorted(BODIES))
def test_generated_logs_scan_alike(key):
    data = BODIES[key]
    got = _agree(data)
    assert got is not None and got.first == 0 and got.rows == data.count(b"\n")
    # every cut at a row end: the prefix (read on into a part of the next row), and the rest continuing it
    ends = [i + 1 for i, c in enumerate(data) if c == 10]
    for n in ends[:: max(1, len(ends) // 25)]:
        a = _agree(data[:n] + data[n:n + 40].split(b"\n")[0], n)
        assert a is not None
        rest = data[n:]
        if rest:
            assert _agree(rest, expected=a.last + 1) is not None
            assert _agree(rest, expected=a.last) is None


def _rows(version: int) -> list[bytes]:
    return BODIES[(version, 0)].split(b"\n")[:-1]


def _first(rows: list[bytes], prefix: bytes) -> int:
    return next(i for i, r in enumerate(rows) if r.startswith(prefix))


def _resequence(rows: list[bytes], base: int) -> list[bytes]:
    """The rows with every seq moved by ``base`` (a log whose seqs are huge, still contiguous)."""
    out = []
    for r in rows:
        obj = json.loads(r)
        key = "seq0" if "seq0" in obj else "seq"
        obj[key] += base
        out.append(json.dumps(obj, separators=(",", ":")).encode())
    return out


def _mutants(version: int) -> dict[str, bytes]:
    rows = _rows(version)
    j = lambda rs: b"".join(r + b"\n" for r in rs)        # noqa: E731
    m: dict[str, bytes] = {"clean": j(rows)}
    i = len(rows) // 2
    packed = [k for k, r in enumerate(rows) if b'"seq0"' in r[:64]]
    m["truncated row"] = j(rows[:i] + [rows[i][: len(rows[i]) // 2]] + rows[i + 1:])
    m["truncated head"] = j(rows[:i] + [rows[i][:20]] + rows[i + 1:])
    m["nul in a row"] = j(rows[:i] + [rows[i][:30] + b"\x00" + rows[i][30:]] + rows[i + 1:])
    m["nul in a head"] = j(rows[:i] + [rows[i][:5] + b"\x00" + rows[i][5:]] + rows[i + 1:])
    m["gap"] = j(rows[:i] + rows[i + 1:])
    m["duplicate"] = j(rows[:i] + [rows[i]] + rows[i:])
    m["swap"] = j(rows[:i] + [rows[i + 1], rows[i]] + rows[i + 2:])
    m["no newline at the end"] = j(rows)[:-1]
    m["blank line"] = j(rows[:i] + [b""] + rows[i:])
    m["crlf"] = j(rows[:i] + [rows[i] + b"\r"] + rows[i + 1:])
    m["space before the newline"] = j(rows[:i] + [rows[i] + b" "] + rows[i + 1:])
    m["non-utf8 in a type"] = j(rows[:i] + [rows[i].replace(b'"type":"', b'"type":"\xff\xfe', 1)] + rows[i + 1:])
    m["non-utf8 in data"] = j(rows[:i] + [rows[i][:-2] + b'\xc3\x28' + rows[i][-2:]] + rows[i + 1:])
    m["escaped quote in a type"] = j(rows[:i] + [rows[i].replace(b'"type":"', b'"type":"a\\"', 1)] + rows[i + 1:])
    m["empty type"] = j(rows[:i] + [b'{"type":"' + rows[i][rows[i].index(b'","seq'):]] + rows[i + 1:])
    long_type = b"x" * 60
    m["head past 64 bytes"] = j(rows[:i] + [rows[i].replace(b'"type":"', b'"type":"' + long_type, 1)] + rows[i + 1:])
    m["seq inside a string"] = j(rows[:i] + [b'{"type":"note","data":"\\",\\"seq\\":' + str(i + 1).encode() + b'"}']
                                 + rows[i + 1:])
    m["seq key later"] = j(rows[:i] + [b'{"type":"note","time":1,"seq":' + str(i + 1).encode() + b'}'] + rows[i + 1:])
    m["deep nesting"] = j(rows[:i] + [rows[i][:-1] + b',"deep":' + b"[" * 3000 + b"]" * 3000 + b"}"] + rows[i + 1:])
    m["leading zero"] = j(rows[:i] + [rows[i].replace(b'"seq":', b'"seq":0', 1)] + rows[i + 1:])
    m["negative seq"] = j(rows[:i] + [rows[i].replace(b'"seq":', b'"seq":-', 1)] + rows[i + 1:])
    m["float seq"] = j(rows[:i] + [rows[i].replace(b',"time"', b'.0,"time"', 1)] + rows[i + 1:])
    m["seq then brace"] = j(rows[:i] + [rows[i][:rows[i].index(b',"time"')] + b"}"] + rows[i + 1:])
    m["only a brace"] = j(rows[:i] + [b"}"] + rows[i + 1:])
    for digits in (18, 19, 20, 30, 45, 50):
        m[f"huge seqs ({digits} digits)"] = j(_resequence(rows, 10 ** (digits - 1)))
    m["huge seq once"] = j(rows[:i] + [rows[i].replace(b'"seq":', b'"seq":' + b"9" * 30, 1)] + rows[i + 1:])
    if packed:
        k = packed[len(packed) // 2]
        r = rows[k]
        m["seq0 on another type"] = j(rows[:k] + [r.replace(r[9:r.index(b'","seq0')], b"user/message", 1)] + rows[k + 1:])
        m["dt with a space"] = j(rows[:k] + [r.replace(b'"dt":[', b'"dt":[ ', 1)] + rows[k + 1:])
        m["dt with a letter"] = j(rows[:k] + [r.replace(b'"dt":[', b'"dt":[x', 1)] + rows[k + 1:])
        m["dt empty"] = j(rows[:k] + [r[:r.index(b'"dt":[') + 6] + r[r.index(b"]", r.index(b'"dt":[')):]] + rows[k + 1:])
        m["dt only commas"] = j(rows[:k] + [r.replace(b'"dt":[', b'"dt":[,,', 1)] + rows[k + 1:])
        one = json.loads(r)                        # (a packed row of one member, its seqs on: dt [] is 1 member)
        cut = len(one["data"]["dt"])
        for key, val in one["data"].items():     # (dt, and the members' lists: texts, ...)
            if isinstance(val, list) and len(val) == cut + 1:
                one["data"][key] = val[:1]
        one["data"]["dt"] = []
        m["dt empty, seqs on"] = j(rows[:k] + [json.dumps(one, separators=(",", ":")).encode()]
                                   + _resequence(rows[k + 1:], -cut))
        m["dt unclosed"] = j(rows[:k] + [r[:r.index(b'"dt":[') + 8]] + rows[k + 1:])
        m["dt too long"] = j(rows[:k] + [r.replace(b'"dt":[', b'"dt":[' + b"0," * 5000, 1)] + rows[k + 1:])
        m["time0 negative"] = j(rows[:k] + [r.replace(b'"time0":', b'"time0":-', 1)] + rows[k + 1:])
        m["time0 missing"] = j(rows[:k] + [r.replace(b'"time0":', b'"time1":', 1)] + rows[k + 1:])
        m["turn with a leading zero"] = j(rows[:k] + [r.replace(b'"turn":', b'"turn":0', 1)] + rows[k + 1:])
        m["index empty"] = j(rows[:k] + [r.replace(b'"index":', b'"index":-', 1)] + rows[k + 1:])
    for kind, edit in ((b"user/message", lambda o: o["data"].pop("id", None)),
                       (b"turn/start", lambda o: o["data"].__setitem__("trigger", "user")),
                       (b"turn/end", lambda o: o["data"].__setitem__("reason", {"kind": "error-retry"})),
                       (b"turn/end", lambda o: o["data"].__setitem__("reason", {"kind": "max-steps", "x": 1})),
                       (b"turn/end", lambda o: o["data"].__setitem__("reason", "completed")),
                       (b"assistant/message", lambda o: o["data"].pop("message", None)),
                       (b"tool/result", lambda o: o["data"].__setitem__("callId", "c")),
                       (b"turn/end", lambda o: o.__setitem__("extra", 1))):
        try:
            k = _first(rows, b'{"type":"' + kind + b'"')
        except StopIteration:
            continue
        obj = json.loads(rows[k])
        edit(obj)
        m[f"legacy edit of {kind.decode()} #{len(m)}"] = j(rows[:k] + [json.dumps(obj, separators=(",", ":")).encode()]
                                                          + rows[k + 1:])
        m[f"bad json after a {kind.decode()} head #{len(m)}"] = j(rows[:k] + [rows[k][:-1] + b',}'] + rows[k + 1:])
    return m


@pytest.mark.parametrize("version", [0, 4])
def test_hostile_mutants_scan_alike(version):
    accepted = set()
    for what, data in _mutants(version).items():
        for expected in (None, 0, 1):
            got = _agree(data, expected=expected)
            if got is not None and expected is None:
                accepted.add(what)
    assert "clean" in accepted and {"huge seqs (18 digits)", "huge seqs (20 digits)"} <= accepted and "gap" not in accepted
    assert "nul in a row" not in accepted and "blank line" not in accepted
    assert version == 4 or "dt empty, seqs on" in accepted


def _inside(what: str) -> bool:
    """A mutant row whose head, seq and last byte are right but which is bad inside (not UTF-8, not JSON, nested
    past the depth limit):
    the byte-level scan takes it, as the bulk scan did (pages decode rows exactly and show it as bad), so
    neither the exact scan's problems nor (for a row the exact scan cannot read) its index are matched."""
    return what in ("non-utf8 in a type", "non-utf8 in data", "turn with a leading zero", "deep nesting") or \
        what.startswith("bad json after")


@pytest.mark.parametrize("version", [0, 4])
@pytest.mark.parametrize("name", NAMES)
def test_hostile_mutants_index_as_the_exact_scan(tmp_path, version, name):
    if name not in SCANNERS:
        pytest.skip("set-up did not compile the row scanner here")
    p0 = tmp_path / "base.jsonl"
    write_jsonl(str(p0), SessionSynth(seed=0, version=version), target_bytes=60_000)
    header = p0.read_bytes().split(b"\n", 1)[0] + b"\n"
    with use(name):
        for k, (what, data) in enumerate(_mutants(version).items()):
            if what.startswith("huge seqs"):
                continue                           # (the exact scan's SeqIndex holds 64-bit seqs)
            p = tmp_path / f"m{k}.jsonl"
            p.write_bytes(header + data)
            for block_size in (2048, 1 << 20):
                r = LogReader(RawJsonlSource(str(p), block=block_size))
                legacy = fastindex.wants_legacy(r)
                pa: list = []
                exact = r.build_index_exact(problems=pa)
                for b in (scan(r, IndexBuilder(problems=[], legacy=[] if legacy else None), r.source.forward()),
                          scan(r, IndexBuilder(problems=[], legacy=[] if legacy else None), workers=1)):
                    if _inside(what):              # (passes at byte level: the rows' insides are not read)
                        with use("python"):
                            ref = scan(r, IndexBuilder(problems=[], legacy=[] if legacy else None), workers=1)
                        assert _same(ref.idx, b.idx), what
                        assert {str(x) for x in b.problems} <= {str(x) for x in pa}, what
                    else:
                        assert _same(exact, b.idx), what
                        assert [str(x) for x in pa] == [str(x) for x in b.problems], what


# --------------------------------------------------------------------------- hypothesis edits

_ALPHABET = b'{}[]",:-0123456789seqdt\\\n\x00 \xff'


@settings(max_examples=int(os.environ.get("ROWSCAN_EXAMPLES", "300")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(key=st.sampled_from(sorted(BODIES)), start=st.integers(0, 200), rows=st.integers(1, 30),
       edits=st.lists(st.tuples(st.sampled_from(["set", "insert", "delete"]), st.integers(0, 1 << 16),
                                st.sampled_from(list(_ALPHABET))), max_size=4),
       expected=st.sampled_from([None, "first", "next"]))
def test_edited_buffers_scan_alike(key, start, rows, edits, expected):
    body = BODIES[key]
    lines = body.split(b"\n")[:-1]
    start %= len(lines)
    data = bytearray(b"".join(x + b"\n" for x in lines[start:start + rows]))
    for op, at, byte in edits:
        apply_edit(data, op, at, byte)
    data = bytes(data)
    if not data:
        return
    exp = None
    if expected is not None:
        base = bulk_block(data, len(data), None, False)
        if base is None:
            return
        exp = base.first + (expected == "next")
    _agree(data, expected=exp)
    n = data.rfind(b"\n", 0, len(data) - 1) + 1                # a cut short of the end: the tail is past n
    if n > 0:
        _agree(data, n, exp)


# --------------------------------------------------------------------------- the not-legacy shapes

_INTS = ["0", "-0", "01", "-01", "7", "-12", "1786181244255", "", "-", "1.5", "00"]
_KINDS_OF_END = ["completed", "max-steps", "error", "user-aborted", "disposed", "x-error-y", "", "Completed",
                 "max_steps", "abortedx", "errorr", "erro", "-", "a-b-c"]


@settings(max_examples=int(os.environ.get("ROWSCAN_EXAMPLES", "300")), deadline=None)
@given(t=st.sampled_from(sorted(NOT_LEGACY)), a=st.sampled_from(_INTS), b=st.sampled_from(_INTS),
       c=st.sampled_from(_INTS), kind=st.sampled_from(_KINDS_OF_END), tail=st.sampled_from(["", "x", "}", ",\"a\":1"]),
       edits=st.lists(st.tuples(st.integers(0, 200), st.sampled_from(list(b'{}",:-0159az\n '))), max_size=2))
def test_the_compiled_shapes_are_the_patterns(t, a, b, c, kind, tail, edits):
    """rowscan.not_legacy (C and interpreted) says yes exactly where fastindex.NOT_LEGACY's pattern
    matches, from just after a row's seq to its newline."""
    if t in (b"assistant/message", b"tool/result"):
        body = f',"time":{a},"data":{{"turn":{b},"step":{c},"message":{{"x":1}}}}}}'
    elif t == b"turn/start":
        body = f',"time":{a},"data":{{"turn":{b}}}}}'
    else:
        body = f',"time":{a},"data":{{"turn":{b},"reason":{{"kind":"{kind}"}}}}}}'
    row = bytearray((body[:len(body) - 1] + tail + body[-1:] if tail and len(body) > 2 else body).encode())
    for at, byte in edits:
        row[at % len(row)] = byte
    head = b'{"type":"' + t + b'","seq":5'
    data = head + bytes(row) + b"\n" + b'{"type":"x","seq":6}\n'
    i = len(head)
    nl = data.find(b"\n", i)
    want = NOT_LEGACY[t].match(data, i, nl + 1) is not None
    shape = _KINDS[t] & INTERPRETED.SHAPE
    for mod in (INTERPRETED, C_SCANNER):
        if mod is not None:
            assert mod.not_legacy(data, data.decode("latin-1"), shape, i, nl) == want, (mod.__file__, data)


def test_the_shapes_of_real_rows():
    """The writer's rows are in the not-legacy shapes (so they are not probed), edited ones are not."""
    rows = {b"assistant/message": b',"time":5,"data":{"turn":1,"step":2,"message":{"id":"m"}}}',
            b"tool/result": b',"time":5,"data":{"turn":1,"step":2,"message":{"id":"m"}}}',
            b"turn/start": b',"time":-5,"data":{"turn":0}}',
            b"turn/end": b',"time":5,"data":{"turn":1,"reason":{"kind":"max-steps"}}}'}
    worse = {b"assistant/message": b',"time":5,"data":{"turn":1,"step":2,"content":[]}}',
             b"tool/result": b',"time":5,"data":{"turn":1,"step":2,"callId":"c"}}',
             b"turn/start": b',"time":5,"data":{"turn":01}}',
             b"turn/end": b',"time":5,"data":{"turn":1,"reason":{"kind":"user-aborted"}}}'}
    for t in rows:
        for body, want in ((rows[t], True), (worse[t], False)):
            data = b'{"type":"' + t + b'","seq":5' + body + b"\n"
            i, nl = data.index(b"5,") + 1, len(data) - 1
            assert (NOT_LEGACY[t].match(data, i, nl + 1) is not None) == want
            for mod in (INTERPRETED, C_SCANNER):
                if mod is not None:
                    assert mod.not_legacy(data, data.decode("latin-1"), _KINDS[t] & mod.SHAPE, i, nl) == want, t

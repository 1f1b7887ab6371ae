"""A number JavaScript reads but msgspec refuses (``1e999``, ``-1E400``: "Number out of range"; an integer of
more than 4300 digits) in an event's ``data``: dsh's newest reader (``JSON.parse``, then checks of the envelope
only) keeps the row with +-Infinity there (/work/notes/issue-27-numbers.md), so Session Lens reads it as an
event with +-inf (:func:`app.log.format.codec.decode_json`), never as a bad row; every path and export stays
safe with the inf.  In a field dsh checks (seq, time, sourceEventSeqs, a packed row, the header) the row is
refused as before, with the same message."""
from __future__ import annotations

import json
import math
from pathlib import Path

import msgspec
import pytest

from app.log.format.codec import DecodeError, RowCodec, decode_json
from app.log.format.model import BadRow
from app.log.index.reader import LogReader
from app.log.query import analysis
from app.log.query.timeline import timeline
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl

BIG = b"9" * 5000
NUMS = [b"1e999", b"-1E400", BIG, b"-" + BIG]
WANT = [math.inf, -math.inf, math.inf, -math.inf]


def _row(**kw: bytes) -> bytes:
    return b"{" + b",".join(b'"%s":%s' % (k.encode(), v) for k, v in kw.items()) + b"}"


def test_decode_json_reads_them_as_javascript_does():
    for num, want in zip(NUMS, WANT):
        raw = _row(type=b'"user/message"', seq=b"3", time=b"5", data=b'{"a":[1,{"b":' + num + b'}],"c":"1e999"}')
        with pytest.raises(msgspec.DecodeError):
            msgspec.json.decode(raw)
        obj, replaced = decode_json(raw)
        assert obj == {"type": "user/message", "seq": 3, "time": 5, "data": {"a": [1, {"b": want}], "c": "1e999"}}
        assert not replaced
    # everything else exactly as msgspec: a 400-digit integer, -0, floats, unicode
    rest = b'"x":' + b"7" * 400 + b',"y":-0,"z":-0.0,"w":0.1,"v":1.5e300,"u":"\\ud83d\\ude00\\u00e9"'
    obj, _ = decode_json(_row(type=b'"x"', seq=b"1", data=b'{"n":1e999,' + rest + b"}"))
    assert {k: v for k, v in obj["data"].items() if k != "n"} == msgspec.json.decode(b"{" + rest + b"}")
    assert repr(obj["data"]) == repr({"n": math.inf, **msgspec.json.decode(b"{" + rest + b"}")})
    # invalid UTF-8 elsewhere in the row: still read with U+FFFD, the number as inf
    obj, replaced = decode_json(_row(type=b'"x"', seq=b"1", data=b'{"s":"\xff","n":-1e999}'))
    assert replaced and obj["data"] == {"s": "\ufffd", "n": -math.inf}


REFUSED = [  # (row, why): msgspec refuses these for more than the number, or dsh checks the number's field
    (_row(type=b'"x"', seq=b"1e999", data=b"{}"), "seq"),
    (_row(type=b'"x"', seq=BIG, data=b"{}"), "seq"),
    (_row(type=b'"x"', seq=b"1", time=b"-1e999", data=b"{}"), "time"),
    (_row(type=b'"x"', seq=b"1", time=BIG, data=b"{}"), "time"),
    (_row(type=b'"x"', seq=b"1", data=b"{}", sourceEventSeqs=b"[1e999]"), "sourceEventSeqs"),
    (_row(type=b'"x"', seq=b"1", data=b"{}", surfaceOp=b'{"n":1e999}'), "surfaceOp"),
    (_row(type=b'"text-chunks"', seq0=b"1", time0=b"0",
          data=b'{"turn":1,"step":1,"index":0,"dt":[1e999],"texts":["a"]}'), "packed dt"),
    (_row(type=b'"session"', id=b'"s"', version=b"4", createdAt=b"1e999"), "header"),
    (_row(type=b'"x"', seq=b"1", data=b'{"n":1e999,"m":NaN}'), "NaN literal"),
    (_row(type=b'"x"', seq=b"1", data=b'{"n":1e999,"m":Infinity}'), "Infinity literal"),
    (_row(type=b'"x"', seq=b"1", data=b'{"n":1e999,"m":"\\ud800"}'), "lone surrogate"),
    (_row(type=b'"x"', seq=b"1", data=b'{"n":1e999,}'), "trailing comma"),
    (_row(type=b'"x"', seq=b"1", data=b'{"n":1e999,"m":"\x01"}'), "control character"),
    (_row(type=b'"x"', seq=b"1", data=b'{"n":1e999}') + b" x", "trailing bytes"),
    (b"[1e999]", "no event"),
]


@pytest.mark.parametrize("raw,why", REFUSED, ids=[w for _r, w in REFUSED])
def test_refused_as_before_with_the_same_message(raw, why):
    with pytest.raises(msgspec.DecodeError) as before:
        msgspec.json.decode(raw)
    with pytest.raises(DecodeError) as now:
        decode_json(raw)
    assert str(now.value) == str(before.value), why
    for version in (0, 4):
        items, problems = RowCodec("s", version).decode_row(raw, line=2)
        assert len(items) == 1 and isinstance(items[0], BadRow) and items[0].kind == "malformed"
        assert items[0].reason == f"not a JSON row: {before.value}" and problems[0].message == items[0].reason


# --------------------------------------------------------------------------- whole logs

def _inject(line: bytes, k: int, num: bytes) -> bytes:
    """A tool result's first text block gains ``"zz":num``; other event rows (not packed) gain it in data."""
    if b'"type":"tool/result"' in line[:30]:
        at = line.find(b'[{"type":"text",')
        assert at > 0
        return line[:at + 2] + b'"zz":' + num + b"," + line[at + 2:]
    if line.startswith(b'{"type":') and b'"seq":' in line[:60] and k % 3 == 0:
        at = line.index(b'"data":{') + 8
        return line[:at] + b'"zz":' + num + (b"," if line[at:at + 1] != b"}" else b"") + line[at:]
    return line


def _logs(tmp_path: Path, version: int) -> tuple[Path, Path, int]:
    """(a generated log with the numbers, the same log with 0 in their place, rows changed)."""
    src = tmp_path / f"src{version}.jsonl"
    write_jsonl(str(src), SessionSynth(seed=7 + version, version=version), target_bytes=60_000)
    lines = src.read_bytes().split(b"\n")
    out = []
    for nums, name in ((NUMS, "inf"), ([b"0"], "zero")):
        new = [lines[0]] + [_inject(ln, k, nums[k % len(nums)]) if ln else ln for k, ln in enumerate(lines[1:])]
        p = tmp_path / name / ("session.jsonl" if version == 0 else f"session.v{version}.jsonl")
        p.parent.mkdir()
        p.write_bytes(b"\n".join(new))
        out.append(p)
    changed = sum(a != b for a, b in zip(lines, out[0].read_bytes().split(b"\n")))
    assert changed > 20
    return out[0], out[1], changed


@pytest.fixture(params=[0, 4], ids=["v0", "v4"])
def logs(request, tmp_path):
    return _logs(tmp_path, request.param)


def _events(p: Path) -> list:
    return list(LogReader.open(str(p)).iter_events(logical=False))


def test_rows_decode_as_events_with_inf(logs):
    inf, zero, changed = logs
    a, b = _events(inf), _events(zero)
    assert not [x for x in a if isinstance(x, BadRow)]
    assert [(x.seq, x.type) for x in a] == [(x.seq, x.type) for x in b]
    infs = [x for x in a if "inf" in repr(x.data)]
    assert len(infs) >= changed - 2     # (every changed row: a packed row is never changed)


def test_inspect_reports_nothing_new_fast_equals_exact(logs):
    inf, zero, _changed = logs
    fast = analysis.inspect(open_reader(str(inf)), fast=True)
    exact = analysis.inspect(open_reader(str(inf)), fast=False)
    assert json.dumps(fast) == json.dumps(exact)
    base = analysis.inspect(open_reader(str(zero)), fast=False)
    assert fast["problems"] == base["problems"]
    assert not any("out of range" in p for p in fast["problems"])
    assert fast.get("dshWouldRefuse") == base.get("dshWouldRefuse")


def test_timeline_fast_equals_exact(logs):
    inf, _zero, _changed = logs
    r = open_reader(str(inf))
    assert list(timeline(r)) == list(timeline(r.iter_events(logical=True)))


def _strict(text: bytes) -> object:
    """``json.loads`` refusing the ``NaN``/``Infinity`` tokens Python writes and accepts (not JSON); a raw copy's
    5000-digit integer is JSON (read as a float here)."""
    def refuse(tok: str) -> object:
        raise ValueError(f"{tok} is not JSON")
    return json.loads(text, parse_constant=refuse, parse_int=float)


def test_surface_index_full_text_and_find_equal_the_exact_path(logs, monkeypatch):
    from app.log.query import extract
    from app.log.query.find import find_all
    from app.log.query.find_match import FindOptions
    from tests.test_surface_fast import _both
    inf, zero, _changed = logs
    lean, exact, _taken = _both(str(inf), monkeypatch)
    assert lean.to_state() == exact.to_state()
    fast = extract.extract_jsonl(str(inf))
    monkeypatch.setattr(extract, "text_row_c", lambda: None)
    assert extract.extract_jsonl(str(inf)) == fast
    monkeypatch.undo()
    hits = {w: find_all(LogReader.open(str(p)), FindOptions(text="zz"))[0] for w, p in (("inf", inf), ("0", zero))}
    assert [(h.seq, h.kind) for h in hits["inf"]] == [(h.seq, h.kind) for h in hits["0"]] != []
    assert all(" Infinity" in h.snippet or " -Infinity" in h.snippet for h in hits["inf"])   # as JavaScript shows it


def test_every_export_is_valid(logs, tmp_path):
    import zipfile
    from app.store.export import FORMATS, export
    inf, _zero, _changed = logs
    for fmt in FORMATS:
        out = tmp_path / f"out-{fmt}"
        export(LogReader.open(str(inf)), fmt, str(out))
        data = out.read_bytes()
        if fmt == "raw":
            assert data == inf.read_bytes()
        elif fmt == "logical":
            lines = [_strict(ln) for ln in data.split(b"\n") if ln]      # JSON.stringify's null for +-Infinity
            assert len(lines) > 50 and b'"zz":null' in data and b"Infinity" not in data
        elif fmt == "zip":
            with zipfile.ZipFile(out) as z:
                for name in z.namelist():
                    if name.endswith((".jsonl", ".json")):
                        for ln in z.read(name).split(b"\n"):
                            if ln.strip():
                                _strict(ln)
        else:
            assert b"Infinity" not in data and len(data) > 1000


def test_cli_json_answers_are_json(logs, capsys):
    from app.cli.main import main
    inf, _zero, _changed = logs
    for argv in (["page", "--json"], ["messages", "--json"], ["asof", "--json", "--seq", "40"],
                 ["follow", "--json", "--from-start", "--idle", "0.3", "--quiet"]):
        assert main([argv[0], str(inf), *argv[1:]]) == 0
        out = capsys.readouterr().out
        assert "Infinity" not in out and "null" in out, argv
        if argv[0] == "follow":                                         # (JSON lines)
            assert sum(bool(_strict(ln)) for ln in out.encode().split(b"\n") if ln) > 50
        else:
            _strict(out.encode())


def test_fork_copies_the_rows(logs, tmp_path):
    import shutil
    from app.store.forking import fork
    inf, _zero, _changed = logs
    (tmp_path / "store").mkdir()
    p = tmp_path / "store" / inf.name
    shutil.copy(inf, p)
    parent = LogReader.open(str(p))
    pe = parent.events()
    at = [e.seq for e in pe if e.type == "assistant/message"][-1]
    res = fork(parent, at)
    child = _events(Path(res["child"]))
    assert not [x for x in child if isinstance(x, BadRow)]
    n = res["seedLength"]
    assert sum("inf" in repr(e.data) for e in child[:n]) > 10
    if parent.version >= 2:                                       # (v0: legacy rows are stored converted)
        assert [e.raw for e in child[:n]] == [e.raw for e in pe[:n]]


def test_sqlite_store_data_cell(tmp_path):
    """A SQLite store's ``data`` cell holding such a number: read as dsh reads it (an event with inf; the cell is
    checked as one JSON value with msgspec.Raw, which does not read numbers)."""
    import sqlite3
    from app.store.sqlite_writer import jsonl_to_sqlite
    _inf, zero, _changed = _logs(tmp_path, 0)           # (dsh's SQLite stores are v0)
    db = tmp_path / "s.db"
    jsonl_to_sqlite(zero, db)
    c = sqlite3.connect(db)
    rows = c.execute("SELECT seq, data FROM events WHERE typeof(data) = 'text' AND data LIKE '{\"zz\":0%'").fetchall()
    for k, (seq, data) in enumerate(rows):
        c.execute("UPDATE events SET data = ? WHERE seq = ?", ('{"zz":' + NUMS[k % 4].decode() + data[6:], seq))
    c.commit()
    c.close()
    assert len(rows) > 5
    evs = list(open_reader(str(db)).iter_events(logical=False))
    assert not [x for x in evs if isinstance(x, BadRow)]
    got = {e.seq: e.data.get("zz") for e in evs if isinstance(e.data, dict) and "zz" in e.data}
    assert [got[s] for s, _d in rows] == [WANT[k % 4] for k in range(len(rows))]


def test_the_window_shows_the_rows(qtbot, tmp_path):
    from tests.test_ui_history import WAIT
    from app.ui.history.rows import RowKind
    from app.ui.history.view import copy_text
    from app.ui.main_window import MainWindow
    inf, _zero, _changed = _logs(tmp_path, 4)
    win = MainWindow(page_size=1000)
    qtbot.addWidget(win)
    try:
        win.show()
        with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
            win.open_store(str(inf))
        h = win.history
        qtbot.waitUntil(lambda: not h.loading, timeout=WAIT)
        assert h.rows and not [r for r in h.rows if r.kind == RowKind.BAD]
        held = [r for r in h.rows if r.event is not None and b'"zz":' in (r.event.raw or b"")]
        assert len(held) > 5
        for r in held:
            r.content().plain_text()
            assert copy_text(r, "raw") == r.event.raw.decode()
        r = held[0]
        win.select_row(h.row_index(r))
        assert win.inspector.raw.toPlainText() in (r.event.raw.decode(), )  # shown as stored (no "Infinity")
    finally:
        win.shutdown()


def _zeroed(v: object) -> object:
    """``v`` with +-inf as 0 (to compare with the log that holds 0 there)."""
    if isinstance(v, float) and math.isinf(v):
        return 0
    if isinstance(v, dict):
        return {k: _zeroed(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_zeroed(x) for x in v]
    return v


def _edited(tmp_path: Path, src: Path, name: str, edit, other: bytes = b"0") -> tuple[Path, Path]:
    """(the log with ``edit(line, num)`` applied with 1e999, the same with ``other``)."""
    out = []
    for num in (b"1e999", other):
        lines = src.read_bytes().split(b"\n")
        p = tmp_path / f"{name}-{num.decode()}" / src.name
        p.parent.mkdir()
        p.write_bytes(b"\n".join([lines[0]] + [edit(ln, num) for ln in lines[1:]]))
        out.append(p)
    return out[0], out[1]


def test_legacy_v0_messages_take_the_chain_rewrite(tmp_path):
    """v0 messages in a legacy shape (spec 1.7) holding 1e999: the messages are those of the log with 0 there."""
    from tests.fixtures_util import FIXTURES

    def edit(ln: bytes, num: bytes) -> bytes:
        legacy = b'"user/message"' in ln[:40] or b'"assistant/message"' in ln[:40] and b'"provenance"' in ln
        return ln.replace(b'"data":{', b'"data":{"zz":' + num + b",", 1) if legacy else ln
    inf, zero = _edited(tmp_path, FIXTURES / "apps/web/tests/snapshots/code-mode-round/session.jsonl", "legacy", edit)
    assert sum(e.legacy is not None for e in LogReader.open(str(inf)).events() if "inf" in repr(e.data)) == 3
    got = analysis.messages(LogReader.open(str(inf)))
    assert _zeroed(got) == analysis.messages(LogReader.open(str(zero)))
    assert "inf" in repr(got)


def test_a_turn_end_after_a_bad_row_is_seen(tmp_path):
    """dsh's verdict on a defect followed by a turn/end holding 1e999 is the one for 0 there (a turn/end)."""
    inf0, _zero, _changed = _logs(tmp_path, 4)
    lines = inf0.read_bytes().split(b"\n")
    cut = len(lines) // 2
    src = tmp_path / "defect" / inf0.name
    src.parent.mkdir()
    src.write_bytes(b"\n".join(lines[:cut] + [b'{"type":"user/message","seq":'] + lines[cut:]))

    def edit(ln: bytes, num: bytes) -> bytes:
        return ln.replace(b'"data":{', b'"data":{"zz":' + num + b",", 1) if b'"turn/end"' in ln[:30] else ln
    inf, zero = _edited(tmp_path, src, "turnend", edit, b"10000")      # (as long: the same byte offsets)
    a, b = (analysis.inspect(open_reader(str(p)), fast=False) for p in (inf, zero))
    assert a["problems"] == b["problems"] and a.get("dshWouldRefuse") == b.get("dshWouldRefuse")
    assert any("refuse" in p or "corrupt" in p for p in a["problems"])


def test_an_envelope_free_snapshot_numbers_the_row(tmp_path):
    """A test snapshot without envelopes (spec-versions 0.1): a row holding 1e999 still takes its seq."""
    import re
    inf0, _zero, _changed = _logs(tmp_path, 4)
    src = tmp_path / "snap" / inf0.name
    src.parent.mkdir()
    lines = inf0.read_bytes().split(b"\n")
    src.write_bytes(b"\n".join([lines[0]] + [re.sub(rb'^\{"type":("[^"]*"),"seq":\d+,"time":\d+,', rb'{"type":\1,', ln)
                                             for ln in lines[1:]]))

    def edit(ln: bytes, num: bytes) -> bytes:
        return ln.replace(b'"zz":1e999', b'"zz":' + num) if b'"zz":1e999' in ln else \
            re.sub(rb'"zz":-?[0-9E+-]+', b'"zz":0', ln)
    inf, zero = _edited(tmp_path, src, "snapshot", edit)
    a, b = _events(inf), _events(zero)
    assert not [x for x in a if isinstance(x, BadRow)] and b'"seq"' not in inf.read_bytes()
    assert [(x.seq, x.type, _zeroed(x.data)) for x in a] == [(x.seq, x.type, x.data) for x in b]
    assert sum("inf" in repr(x.data) for x in a) > 5


@pytest.mark.parametrize("query,regex", [("Infinity", False), ("zz Infinity", False), ("-infinity", False),
                                         ("Inf", True), ("zz", False)])
def test_find_with_its_byte_prefilter_equals_the_exact_scan(tmp_path, monkeypatch, query, regex):
    """The text shows +-inf as JavaScript does (``Infinity``), which the stored bytes (``1e999``) do not hold:
    such a needle is not used to skip rows (find_needles.shown_only)."""
    from app.log.query import find
    from app.log.query.find_match import FindOptions
    found = []
    for version in (0, 4):
        inf, _zero, _changed = _logs(tmp_path / f"v{version}", version)
        opts = FindOptions(text=query, regex=regex)
        fast = find.find_all(LogReader.open(str(inf)), opts)[0]
        monkeypatch.setattr(find, "build_prefilter", lambda o: None)
        exact = find.find_all(LogReader.open(str(inf)), opts)[0]
        monkeypatch.undo()
        assert [(h.seq, h.kind, h.snippet) for h in fast] == [(h.seq, h.kind, h.snippet) for h in exact]
        found += exact
    assert found or query == "-infinity"


def test_home_search_streamed_equals_indexed(tmp_path, monkeypatch, capsys):
    """The home search's streaming scan (a session not indexed yet) finds ``Infinity`` as the index does."""
    from app.cli.main import main
    inf, _zero, _changed = _logs(tmp_path, 4)
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    got = []
    for extra in (["--no-update"], []):                      # streamed (never indexed), then from the index
        assert main(["search", str(inf.parent), "Infinity", "--json", "--quiet", *extra]) == 0
        d = _strict(capsys.readouterr().out.encode())
        assert isinstance(d, dict)
        got.append(sorted(h["seq"] for h in d["hits"]))
    assert got[0] == got[1] != []

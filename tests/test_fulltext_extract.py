"""The index's fast extraction (app/log/query/extract.py) against the reader, the worker processes, and
the query fixes of this round: -word (NOT) in the index and the scan, after:/before: in the scan
(no FTS5)."""
from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime

import pytest

from app.log.query.extract import extract_jsonl, reader_entries
from app.log.index.reader import LogReader
from app.log.query.textview import event_turn, plain, shown_fields
from app.store import childproc, ftsio, fulltext, ftswrite
from app.store.fulltext import FullTextIndex, QueryError, parse_query
from app.tools.plant import PlantingSynth, make_home
from app.tools.synth import write_jsonl
from tests.fixtures_util import FIXTURES, ev, session_files, write_log


def _reference(path) -> list:
    """The entries the exact reader path gives: typed events (legacy shapes converted, envelopes
    restored), what the window and whole-log find show of each (``shown_fields``: generic rows'
    payloads too) with the calls tracked, the turn of the last turn/start; a tool-call block of an
    assistant message only when no tool/call row of its call comes in its turn (whole-log find
    drops such a block as the row's echo), placed at the turn's end."""
    r = LogReader.open(str(path))
    out, calls, turn, blocks = [], {}, None, []
    try:
        for e in r.iter_events():
            if e.type == "turn/start":
                t = event_turn(e)
                if t is not None:
                    turn = t
                calls.clear()
                out += [b for _, b in blocks]
                blocks = []
                continue
            et = event_turn(e)
            for f, call, block in shown_fields(e, calls):
                entry = (e.seq, et if et is not None else turn, e.time, f.kind, f.tool, plain(f.text))
                if block:
                    blocks.append((call, entry))
                    continue
                if call is not None:
                    blocks = [b for b in blocks if b[0] != call]
                out.append(entry)
    finally:
        r.close()
    return out + [b for _, b in blocks]


def _fast(path) -> list:
    res = extract_jsonl(str(path))
    if res.status == "fallback":                      # envelope-free snapshots: the reader's rows
        r = LogReader.open(str(path))
        try:
            return reader_entries(r)[0]
        finally:
            r.close()
    assert res.status == "ok", (path, res.status, res.why)
    return res.entries


def _corpus() -> list:
    return [p for base in (FIXTURES, FIXTURES.parent / "dsh-next") for p in session_files(base)]


def test_fast_extraction_gives_the_readers_entries_on_every_fixture():
    files = _corpus()
    assert len(files) > 40
    n = 0
    for p in files:
        want = _reference(p)
        assert _fast(p) == want, p
        n += len(want)
    assert n > 1000


@pytest.mark.parametrize("version", [0, 4])
def test_fast_extraction_on_synth_sessions(tmp_path, version):
    path = tmp_path / "s.jsonl"
    write_jsonl(str(path), PlantingSynth(seed=11, version=version, plants={"synthword": "tool-output-line-700"},
                                         at_turn=2), turns=5)
    want = _reference(path)
    assert want and _fast(path) == want


def test_legacy_shapes_odd_rows_and_a_torn_tail(tmp_path):
    """v0 legacy shapes (spec §1.7) go through the codec; rows not written the dsh way, bad rows
    and the torn last row are handled as the reader does.  The old index skipped steering messages
    (its byte prefilter did not know the type)."""
    rows = [
        ev(0, "turn/start", {"turn": 1, "trigger": "user"}),
        ev(1, "steering/message", {"content": [{"type": "text", "text": "steerword please"}]}),
        ev(2, "assistant/message", {"content": [{"type": "text", "text": "legacy assistant text"}],
                                    "provenance": {"model": "m"}}),
        ev(3, "tool/call", {"callId": "c1", "name": "bash", "arguments": '{"command": "ls -la"}'}),
        ev(4, "tool/result", {"callId": "c1", "content": [{"type": "text", "text": "legacyoutput"}]}),
        json.dumps({"seq": 5, "type": "user/message", "time": 7,
                    "data": {"content": [{"type": "text", "text": "reordered keys"}]}}).encode(),
        b'{"type":"user/message","seq":6, broken',
        b'{"type":"user/message","seq":7,"time":8,"data":{"content":[{"type":"text","text":"bad \xff utf8"}]}}',
        ev(8, "turn/end", {"turn": 1, "reason": "error", "error": {"message": "boom", "code": "E1"}}),
        ev(9, "turn/end", {"turn": 1, "error": "plain failure"}),
        ev(10, "user/message", {"content": [{"type": "text", "text": "tornword"}]}),
    ]
    path = write_log(tmp_path / "home" / "sessions" / "--p--" / "s1" / "session.jsonl", rows, session_id="s1")
    data = path.read_bytes()
    path.write_bytes(data[:-20])                     # the last row torn
    want = _reference(path)
    got = _fast(path)
    assert got == want
    kinds = {(e[0], e[3]) for e in got}
    assert (1, "user") in kinds and (2, "assistant") in kinds and (4, "tool-output") in kinds
    assert (5, "user") in kinds and (7, "user") in kinds and any(k == "error" for _, k in kinds)
    assert not any("tornword" in e[5] for e in got)
    res = extract_jsonl(str(path))
    assert res.done_pos == data[:-20].rindex(b"\n") + 1       # resumes at the torn row
    with FullTextIndex(str(tmp_path / "home"), db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update()
        assert [(h.seq, h.kind) for h in ix.search("steerword").hits] == [(1, "user")]
        assert [(h.seq, h.tool) for h in ix.search("legacyoutput").hits] == [(4, "bash")]
        path.write_bytes(data)                       # completed: picked up from where it stopped
        rep = ix.update()
        assert rep.grown == 1 and [h.seq for h in ix.search("tornword").hits] == [10]


# --------------------------------------------------------------------------- the index

@pytest.fixture(scope="module")
def small_home(tmp_path_factory):
    root = tmp_path_factory.mktemp("extract") / "home"
    m = make_home(str(root), str(FIXTURES), copies=1, planted=5, zstd_every=7,
                  extra=[str(FIXTURES.parent / "dsh-next")])
    return str(root), m


def _dump(ix) -> tuple:
    """Every entry and session row of the index, over all its shards (sids and rowids left out)."""
    entries = sorted(r for p in ix.parts() for r in p.conn.execute(
        "SELECT s.key, e.seq, e.turn, e.time, e.kind, coalesce(e.tool, ''), f.body FROM entries e "
        "JOIN sessions s ON s.sid = e.sid JOIN fts f ON f.rowid = e.rowid").fetchall())
    sessions = sorted((r for p in ix.parts() for r in p.conn.execute(
        "SELECT key, id, format, project, cwd, created, size, done_pos, done_crc, turn, calls, entries, title, "
        "status FROM sessions").fetchall()), key=repr)
    return entries, sessions


def test_workers_and_the_reader_path_build_the_same_index(small_home, tmp_path, monkeypatch):
    root, m = small_home
    with FullTextIndex(root, db_path=str(tmp_path / "inline.sqlite")) as ix:
        rep = ix.update(workers=0)
        assert rep.workers == 0 and not rep.problems
        inline = _dump(ix)
    with FullTextIndex(root, db_path=str(tmp_path / "workers.sqlite")) as ix:
        rep = ix.update(workers=2)                       # a first build: two shards, one process each
        assert rep.workers == 2 and rep.indexed == len(m["sessions"]) and not rep.problems
        assert len(ix.parts()) == 2
        assert _dump(ix) == inline
        for word, (sid, seq, _kind) in m["planted"].items():
            if " " not in word:
                assert [(h.session, h.seq) for h in ix.search(word).hits] == [(sid, seq)]
    with monkeypatch.context() as mp:                    # an index of one shard: workers extract for it
        mp.setattr(FullTextIndex, "_empty", lambda self: False)
        with FullTextIndex(root, db_path=str(tmp_path / "pipes.sqlite")) as ix:
            rep = ix.update(workers=2)
            assert rep.workers == 2 and len(ix.parts()) == 1 and not rep.problems
            assert _dump(ix) == inline
    monkeypatch.setattr(fulltext, "_FAST_BYTES", 0)            # every session through its reader
    with FullTextIndex(root, db_path=str(tmp_path / "reader.sqlite")) as ix:
        ix.update()
        entries, sessions = _dump(ix)
    assert entries == inline[0] and len(entries) > 1000
    # the bookkeeping agrees too (a session without any row after its header aside: the reader
    # path records no stop point for it, the whole-file read its header end)
    assert sorted(s[:7] + s[9:] for s in inline[1]) == sorted(s[:7] + s[9:] for s in sessions)
    stops = {s[0]: s[7:9] for s in inline[1]}
    checked = [s for s in sessions if s[7] is not None]
    assert len(checked) > 20 and all(stops[s[0]] == s[7:9] for s in checked)


def test_a_worker_that_dies_leaves_the_rest_inline(small_home, tmp_path, monkeypatch):
    root, m = small_home
    real = childproc.worker_argv
    monkeypatch.setattr(childproc, "worker_argv", lambda kind, *a: [sys.executable, "-c", "import sys; sys.exit(3)"]
                        if kind == "fts-extract" else real(kind, *a))
    monkeypatch.setattr(FullTextIndex, "_empty", lambda self: False)      # not a sharded first build
    with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
        rep = ix.update(workers=2)
        assert rep.indexed == len(m["sessions"]) and not rep.problems and len(ix.parts()) == 1
        sid, seq, _ = m["planted"]["plant3text"]
        assert [(h.session, h.seq) for h in ix.search("plant3text").hits] == [(sid, seq)]


def _day(i: int) -> str:
    return datetime.fromtimestamp((1_790_000_000_000 + i * 86_400_000 * 20) / 1000, UTC).strftime("%Y-%m-%d")


def _check_not(ix, m):
    p = m["planted"]
    every = {tuple(p[w]) for w in p if w.startswith("plant0")}       # (session, seq, kind)
    assert len(every) == 5
    got = {(h.session, h.seq, h.kind) for h in ix.search("plant0*", limit=100).hits}
    assert got == every
    # -word: the entry holding it is left out (it used to be searched for instead)
    got = {(h.session, h.seq, h.kind) for h in ix.search("plant0* -plant0output", limit=100).hits}
    assert got == every - {tuple(p["plant0output"])}
    got = {h.kind for h in ix.search("plant0* -kind:user -plant0reason", limit=100).hits}
    assert got == {"tool-output", "tool-call", "assistant"}
    with pytest.raises(QueryError):
        ix.search("-plant0output")
    # tool: the exact name (any case) or a prefix*
    tool = ix.search("plant0 quoted arg").hits[0].tool
    assert tool and len(tool) > 2
    want = {(h.session, h.seq) for h in ix.search("plant0*", limit=100).hits if h.tool == tool}
    assert want and {(h.session, h.seq) for h in ix.search(f"plant0* tool:{tool.upper()}").hits} == want
    assert {(h.session, h.seq) for h in ix.search(f"plant0* tool:{tool[:2]}*").hits} >= want
    assert ix.search(f"plant0* tool:{tool[:2]}").hits == []
    assert not {(h.session, h.seq) for h in ix.search(f"plant0* -tool:{tool}", limit=100).hits} & want


def _check_dates(ix, m):
    p = m["planted"]
    # after:/before: by the event's time (planted session i lives 20 days after session i-1)
    got = {h.session for h in ix.search(f"plant* after:{_day(3)}", limit=100).hits}
    assert got == {p[f"plant{i}output"][0] for i in (3, 4)}
    got = {h.session for h in ix.search(f"plant* before:{_day(1)}", limit=100).hits}
    assert got == {p["plant0output"][0]}
    got = {h.session for h in ix.search(f"plant* -before:{_day(4)}", limit=100).hits}
    assert got == {p["plant4output"][0]}


def test_not_and_dates_in_the_index(small_home, tmp_path):
    root, m = small_home
    with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update()
        assert ix.fts5
        _check_not(ix, m)
        _check_dates(ix, m)


def test_dates_in_the_scan_without_fts5(small_home, tmp_path, monkeypatch):
    root, m = small_home
    monkeypatch.setattr(fulltext, "fts5_available", lambda: False)
    with FullTextIndex(root, db_path=str(tmp_path / "nofts.sqlite")) as ix:
        _check_dates(ix, m)


def test_not_in_the_scan_without_fts5(small_home, tmp_path, monkeypatch):
    root, m = small_home
    monkeypatch.setattr(fulltext, "fts5_available", lambda: False)
    with FullTextIndex(root, db_path=str(tmp_path / "nofts.sqlite")) as ix:
        assert not ix.fts5
        _check_not(ix, m)
        res = ix.search("plant2text")
        assert res.fallback and [h.seq for h in res.hits] == [m["planted"]["plant2text"][1]]
        assert "«plant2text»" in res.hits[0].snippet


def test_parse_query_negation():
    pq = parse_query('alpha -beta -"gamma delta" -tool:bash -kind:user -session:ab -project:x')
    assert pq.terms == [("alpha", False, False)]
    assert pq.not_terms == [("beta", False, False), ("gamma delta", False, True)]
    assert pq.fts() == '("alpha") NOT ("beta" OR "gamma delta")'
    assert (pq.not_tools, pq.not_kinds, pq.not_sessions, pq.not_projects) == (["bash"], ["user"], ["ab"], ["x"])
    assert parse_query("a NOT b").fts() == '("a" NOT "b")'


def test_a_big_home_uses_workers_by_default(tmp_path, monkeypatch):
    """Auto mode: worker processes only when there is much to read (else the inline path)."""
    monkeypatch.setattr(ftsio, "POOL_MIN_FILES", 3)
    monkeypatch.setattr(ftsio, "POOL_MIN_BYTES", 1)
    root = tmp_path / "home"
    make_home(str(root), str(FIXTURES), copies=1, planted=2)
    with FullTextIndex(str(root), db_path=str(tmp_path / "ix.sqlite")) as ix:
        rep = ix.update()
        assert rep.workers == (2 if (os.cpu_count() or 1) >= 2 else 0)
        assert rep.indexed > 20 and not rep.problems


def test_the_extraction_imports_neither_qt_nor_sqlite():
    """Item 5 of the issue: the extraction can feed another engine (a shared search service)."""
    import subprocess
    import sys
    code = ("import sys, app.log.query.extract; "
            "bad = [m for m in sys.modules if m == 'sqlite3' or m.startswith(('PySide6', 'app.store', 'app.ui'))]; "
            "print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_cancel_with_workers_stops_them_and_keeps_what_was_committed(small_home, tmp_path, monkeypatch):
    import threading
    import time
    root, m = small_home
    monkeypatch.setattr(ftsio, "CHUNK_FILES", 4)             # many chunks in flight
    monkeypatch.setattr(ftswrite, "_COMMIT_SESSIONS", 10)
    ev = threading.Event()

    def progress(done, total, nbytes):
        if done >= 25:                  # the sum over the shards: a worker's progress comes in steps
            ev.set()
    with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
        t0 = time.perf_counter()
        rep = ix.update(progress=progress, cancel=ev, workers=2)
        assert rep.cancelled and rep.workers == 2
        assert time.perf_counter() - t0 < 60
        assert 20 <= ix.indexed_count() < len(m["sessions"]) - 20
        rep = ix.update(workers=2)
        assert not rep.cancelled and ix.indexed_count() == len(m["sessions"])
        sid, seq, _ = m["planted"]["plant4reason"]
        assert [(h.session, h.seq) for h in ix.search("plant4reason").hits] == [(sid, seq)]

"""SQLite backend (spec §1.6, §1.8): fixture round-trip, varints, hostile stores, read-only."""
from __future__ import annotations

from fixtures_util import fast_sample, session_files  # noqa: E402  (shared corpus discovery)

import hashlib
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.log.format.codec import RowCodec, pack_events
from app.log.format.model import BadRow, is_event
from app.store.sqlite_schema import APPLICATION_ID, SCHEMA_SQL, StoreError, decode_seqs, encode_seqs, normalize_sql
from app.store.sqlite_store import SqliteSource, SqliteStore
from app.store.sqlite_writer import append_batch, create_store, jsonl_to_sqlite, open_writer

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT.parent / "shared" / "fixtures" / "dsh"

# stores, connections, files and the lock-holder processes' pipes are all closed: a leak fails the test
pytestmark = pytest.mark.filterwarnings("error::ResourceWarning", "error::pytest.PytestUnraisableExceptionWarning")


SESSION_FILES = session_files()
REVISION_RE = re.compile(r"^file:\d+:\d+:\d+:store:[0-9a-f-]{36}:incarnation:[0-9a-f-]{36}:revision:\d+$")


def _key(ev):
    return (ev.type, ev.seq, ev.time, ev.data, ev.surface_op, ev.source_event_seqs, ev.ignorable)


def _decode_all(codec: RowCodec, raws) -> list:
    out = []
    for raw in raws:
        items, _ = codec.decode_row(raw)
        out.extend(items)
    return out


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _scalar(seq, typ="todo/write", data=None, t=None, **extra):
    row = {"type": typ, "seq": seq, "time": 1000 + seq if t is None else t,
           "data": {"todos": []} if data is None else data}
    row.update(extra)
    return row


HEADER = {"type": "session", "version": 0, "id": "s-1", "createdAt": 1783352137161, "cwd": "/w",
          "delegationDepth": 0}


def _store(tmp_path, rows=None, header=HEADER, name="s.db", journal_mode="WAL"):
    db = tmp_path / name
    create_store(db, journal_mode=journal_mode)
    append_batch(db, header, rows if rows is not None else [_scalar(i) for i in range(5)])
    return db


# =========================================================================== fixture round-trip

def test_corpus_present():
    assert len(SESSION_FILES) >= 160, f"expected the dsh fixture corpus under {FIXTURES}"


@pytest.mark.parametrize("path", fast_sample(SESSION_FILES, every=8), ids=lambda p: str(p.relative_to(FIXTURES)))
@pytest.mark.slow
def test_fixture_roundtrip(path: Path, tmp_path):
    db = tmp_path / "store.db"                       # one store per fixture: ids collide across fixtures
    info = jsonl_to_sqlite(path, db, batch_rows=7)
    text = path.read_bytes()
    lines = text.split(b"\n")
    header = json.loads(lines[0])
    orig_rows = [ln for ln in lines[1:-1] if ln.strip()]
    assert info["rows"] == len(orig_rows)
    before = _sha(db)

    with SqliteStore.open(db) as store:
        listed = store.list_sessions()
        assert len(listed) == 1
        h = listed[0]
        assert REVISION_RE.match(h["revision"]), h["revision"]
        expect_header = dict(header)
        expect_header.setdefault("version", 0)        # pre-version snapshots are stored as version 0
        assert {k: v for k, v in h.items() if k not in ("revision", "events", "lastSeq")} == expect_header

        src = store.source(header["id"], batch_rows=13)
        assert src.kind == "sqlite" and src.header_end == 0
        assert json.loads(src.header_raw) == expect_header
        codec = RowCodec(header["id"])
        want = _decode_all(codec, orig_rows)
        assert all(is_event(e) for e in want)

        segs = list(src.forward())
        got_raw = [raw for seg in segs for _, raw in seg.rows]
        got = _decode_all(codec, got_raw)
        assert [_key(e) for e in got] == [_key(e) for e in want]
        assert not src.problems
        # reconstructed rows are the stored JSONL rows (same bytes whenever the key order is dsh's)
        for a, b in zip(got_raw, orig_rows):
            assert json.loads(a) == json.loads(b)
            if list(json.loads(b)) == list(json.loads(a)):
                assert a == b
        # segments: pos = first seq, end = last covered seq + 1, contiguous batches
        for seg in segs:
            assert seg.pos == seg.rows[0][0] and len(seg.rows) <= 13
        for a, b in zip(segs, segs[1:]):
            assert a.end <= b.pos
        if want:
            assert src.size == want[-1].seq + 1 == segs[-1].end
            assert h["lastSeq"] == want[-1].seq
        else:
            assert src.size == 0 and h["lastSeq"] == -1
        # backward yields the same rows, newest batch first, each batch ascending
        back = [r for seg in src.backward() for r in seg.rows[::-1]][::-1]
        assert [raw for _, raw in back] == got_raw
        # backward(end) from the middle: rows with seq < end
        if len(want) > 3:
            mid = want[len(want) // 2].seq
            part = [raw for seg in src.backward(mid) for _, raw in seg.rows]
            part_events = _decode_all(codec, part)
            assert part_events and all(e.seq < mid or e.packed for e in part_events)
            assert {e.seq for e in part_events} >= {e.seq for e in want if e.seq < mid}
            # forward from a segment end continues without overlap
            assert [raw for seg in src.forward(segs[0].end) for _, raw in seg.rows] == got_raw[len(segs[0].rows):]
        # stored_bytes: the reconstructed JSONL text decodes to the same rows
        recon = b"".join(src.stored_bytes()).split(b"\n")
        assert recon[-1] == b"" and json.loads(recon[0]) == expect_header
        assert [json.loads(x) for x in recon[1:-1]] == [json.loads(x) for x in orig_rows]
        assert not src.refresh()
    assert _sha(db) == before


def test_packed_rows_stored_packed(tmp_path):
    path = next(p for p in SESSION_FILES if b'"text-chunks"' in p.read_bytes())
    db = tmp_path / "p.db"
    jsonl_to_sqlite(path, db)
    c = sqlite3.connect(db)
    n_packed = c.execute("SELECT count(*) FROM events WHERE ignorable = 0").fetchone()[0]
    bad = c.execute("SELECT count(*) FROM events WHERE ignorable = 0 AND (source_event_seqs IS NOT NULL "
                    "OR surface_op IS NOT NULL OR type NOT LIKE '%-chunks')").fetchone()[0]
    c.close()
    assert n_packed == path.read_bytes().count(b'"seq0"') and bad == 0


def test_multi_session_store_list_refresh_revision(tmp_path):
    db = tmp_path / "multi.db"
    by_id = {}
    for p in SESSION_FILES:
        hid = json.loads(p.read_bytes().split(b"\n", 1)[0])["id"]
        if hid not in by_id and "{{" not in hid:
            by_id[hid] = p
        if len(by_id) == 6:
            break
    for p in by_id.values():
        jsonl_to_sqlite(p, db, batch_rows=25)
    with SqliteStore.open(db) as store:
        listed = store.list_sessions()
        assert sorted(h["id"] for h in listed) == sorted(by_id)
        created = [h["createdAt"] for h in listed]
        assert created == sorted(created, reverse=True)
        for h in listed:
            n = sum(1 for ln in by_id[h["id"]].read_bytes().split(b"\n")[1:] if ln.strip())
            batches = -(-n // 25) if n else 1
            assert h["revision"].endswith(f":revision:{batches}")
        sid = listed[0]["id"]
        src = store.source(sid)
        rev0, size0 = src.revision(), src.size
        assert rev0 == src.snapshot_revision
        assert not src.refresh()
        hdr = json.loads(src.header_raw)
        append_batch(db, hdr, [_scalar(size0, "session/title",
                                       {"title": "t", "messageSeqs": [], "source": {"kind": "user"}})])
        assert src.revision() != rev0 and src.revision().endswith(":revision:" + str(int(rev0.rsplit(":", 1)[1]) + 1))
        assert src.size == size0                       # snapshot until refresh
        assert src.refresh() and src.size == size0 + 1
        last = [raw for seg in src.backward() for _, raw in seg.rows][-1]
        assert json.loads(last)["seq"] == size0
    with pytest.raises(StoreError, match="no session"):
        SqliteStore.open(db).source("nope")


def test_writer_text_and_blob_and_header_checks(tmp_path):
    big = {"text": "word " * 5000}
    rows = [_scalar(0, "turn/start", {"turn": 1}),
            _scalar(1, "user/message", {"id": "m", "role": "user", "content": [{"type": "text", "text": "hi"}],
                                        "source": {"kind": "user"}}, surfaceOp="append"),
            _scalar(2, "feedback/record", big),
            _scalar(3, "assistant/message", {"turn": 1, "step": 1, "message": {}}, sourceEventSeqs=[],
                    surfaceOp={"op": "replace", "start": 1, "end": 1}),
            _scalar(4, "x/unknown", {}, ignorable=True)]
    db = _store(tmp_path, rows)
    c = sqlite3.connect(db)
    cells = c.execute("SELECT seq, typeof(data), typeof(source_event_seqs), surface_op, ignorable FROM events "
                      "ORDER BY seq").fetchall()
    assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert c.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    c.close()
    assert cells[2][1] == "blob" and cells[0][1] == "text"
    assert cells[1][3] == '"append"' and json.loads(cells[3][3]) == {"op": "replace", "start": 1, "end": 1}
    assert cells[3][2] == "blob" and cells[4][4] == 1 and cells[0][4] is None
    with SqliteStore.open(db) as store:
        src = store.source("s-1")
        got = _decode_all(RowCodec("s-1"), [r for _, r in src.rows()])
        assert got[2].data == big and got[3].source_event_seqs == [] and got[4].ignorable is True
        assert got[3].surface_op == {"op": "replace", "start": 1, "end": 1}
    with pytest.raises(ValueError, match="header differs"):
        append_batch(db, dict(HEADER, cwd="/elsewhere"), [_scalar(5)])
    with pytest.raises(ValueError, match="cannot store"):
        append_batch(db, HEADER, [_scalar(5, extra_key=1)])
    with pytest.raises(sqlite3.IntegrityError):
        append_batch(db, HEADER, [_scalar(4)])        # duplicate seq: whole batch rolled back
    with pytest.raises(FileExistsError):
        create_store(db)


def test_pack_events_rows_roundtrip(tmp_path):
    events = [_scalar(0, "turn/start", {"turn": 1})] + [
        {"type": "assistant/chunk", "seq": i, "time": 50 + (i * 7) % 5,
         "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": f"t{i}"}}}
        for i in range(1, 9)]
    rows = pack_events(events)
    assert any("seq0" in r for r in rows)
    db = _store(tmp_path, rows)
    with SqliteStore.open(db) as store:
        src = store.source("s-1")
        assert src.size == 9
        assert store.list_sessions()[0]["lastSeq"] == 8     # last row is packed: members counted
        got = _decode_all(RowCodec("s-1"), [r for _, r in src.rows()])
    assert [(e.seq, e.time, e.data) for e in got] == [(e["seq"], e["time"], e["data"]) for e in events]


# =========================================================================== varints

SEQ = st.integers(min_value=0, max_value=2 ** 53 - 1)


@given(st.lists(SEQ, max_size=40))
def test_varint_roundtrip(seqs):
    assert decode_seqs(encode_seqs(seqs)) == seqs


@given(st.lists(st.integers(min_value=0, max_value=300), max_size=40))
@pytest.mark.slow
def test_varint_roundtrip_small(seqs):
    assert decode_seqs(encode_seqs(seqs)) == seqs


@settings(max_examples=400)
@given(st.binary(max_size=24))
def test_varint_decode_is_canonical_or_rejects(blob):
    try:
        seqs = decode_seqs(blob)
    except ValueError:
        return
    assert encode_seqs(seqs) == blob


def test_varint_known_encodings():
    assert encode_seqs([]) == b""
    assert encode_seqs([0]) == b"\x00"
    assert encode_seqs([300]) == b"\xac\x02"
    assert encode_seqs([13, 14, 15]) == b"\x0d\x02\x02"
    assert encode_seqs([19, 20, 4]) == b"\x13\x02\x1f"       # +1 -> 2, -16 -> 31
    assert decode_seqs(b"\x13\x02\x1f") == [19, 20, 4]


@pytest.mark.parametrize("blob,why", [
    (b"\x80\x00", "non-canonical"), (b"\x81\x00", "non-canonical"), (b"\x05\x80\x00", "non-canonical"),
    (b"\xff\x80\x80\x00", "non-canonical"), (b"\x80", "truncated"), (b"\x05\x81", "truncated"),
    (b"\x00\x01", "not a seq"), (b"\xff" * 10 + b"\x01", "longer"), (b"\xff\xff\xff\xff\xff\xff\xff\x7f", "not a seq"),
])
def test_varint_rejects(blob, why):
    with pytest.raises(ValueError, match=why):
        decode_seqs(blob)


@pytest.mark.parametrize("bad", [[-1], [2 ** 53], [1.0], [True], ["3"]])
def test_varint_encode_rejects(bad):
    with pytest.raises(ValueError):
        encode_seqs(bad)


# =========================================================================== schema identity

def test_schema_normalization():
    assert normalize_sql("CREATE  TABLE x (\n a INTEGER -- c\n, b TEXT /* z */ ) STRICT;") == \
        normalize_sql('create table "X"(a integer,b text)strict')
    assert normalize_sql("CHECK (a = 'A')") != normalize_sql("CHECK (a = 'a')")


def test_schema_text_mismatch_rejected(tmp_path):
    db = tmp_path / "x.db"
    c = sqlite3.connect(db)
    c.executescript(SCHEMA_SQL.replace("agent_preset TEXT,", "agent_preset TEXT, extra TEXT,"))
    c.execute(f"PRAGMA application_id={APPLICATION_ID}")
    c.execute("PRAGMA user_version=17")
    c.execute("INSERT INTO persistence_state VALUES (1, 'x')")
    c.commit()
    c.close()
    with pytest.raises(StoreError, match=r"x\.db: schema text differs.*sessions"):
        SqliteStore.open(db)


def test_extra_schema_object_rejected(tmp_path):
    db = _store(tmp_path)
    c = sqlite3.connect(db)
    c.execute("CREATE TRIGGER t AFTER INSERT ON events BEGIN SELECT 1; END")
    c.commit()
    c.close()
    with pytest.raises(StoreError, match="schema text differs"):
        SqliteStore.open(db)


def test_reformatted_canonical_schema_accepted(tmp_path):
    db = tmp_path / "y.db"
    c = sqlite3.connect(db)
    c.executescript(re.sub(r"\s+", "  ", SCHEMA_SQL).replace("CHECK (singleton = 1)", "check(singleton=1)"))
    c.execute(f"PRAGMA application_id={APPLICATION_ID}")
    c.execute("PRAGMA user_version=17")
    c.execute("INSERT INTO persistence_state VALUES (1, 'x')")
    c.commit()
    c.close()
    with SqliteStore.open(db) as store:
        assert store.list_sessions() == [] and store.store_id == "x"


@pytest.mark.parametrize("pragma,match", [
    ("application_id=42", r"not a dsh session store \(application_id 42"),
    ("user_version=16", "user_version 16 is older"),
    ("user_version=18", "user_version 18 is newer.*upgrade"),
])
def test_identity_pragmas_rejected(tmp_path, pragma, match):
    db = _store(tmp_path)
    c = sqlite3.connect(db)
    c.execute(f"PRAGMA {pragma}")
    c.commit()
    c.close()
    with pytest.raises(StoreError, match=match) as ei:
        SqliteStore.open(db)
    assert str(db) in str(ei.value) and "\n" not in str(ei.value)


def test_foreign_and_empty_sqlite(tmp_path):
    db = tmp_path / "foreign.db"
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE t(x)")
    c.commit()
    c.close()
    with pytest.raises(StoreError, match="application_id 0"):
        SqliteStore.open(db)
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).execute("PRAGMA user_version=0").close()
    with pytest.raises(StoreError, match="empty"):
        SqliteStore.open(empty)


# =========================================================================== hostile files

def test_corrupt_random_bytes(tmp_path):
    p = tmp_path / "rand.db"
    p.write_bytes(random.Random(7).randbytes(8192))
    with pytest.raises(StoreError, match="rand.db: file is not a database"):
        SqliteStore.open(p)
    q = tmp_path / "fake.db"                      # right magic, garbage after it
    q.write_bytes(b"SQLite format 3\x00" + random.Random(8).randbytes(8192))
    with pytest.raises(StoreError, match="fake.db"):
        SqliteStore.open(q)
    with pytest.raises(StoreError, match="empty file"):
        (tmp_path / "zero.db").write_bytes(b"")
        SqliteStore.open(tmp_path / "zero.db")
    with pytest.raises(StoreError, match="no such file"):
        SqliteStore.open(tmp_path / "missing.db")


def _read_everything(db):
    with SqliteStore.open(db) as store:
        for h in store.list_sessions():
            src = store.source(h["id"])
            for _ in src.forward():
                pass


@pytest.mark.parametrize("journal_mode", ["WAL", "DELETE"])
@pytest.mark.parametrize("keep", [0.3, 0.6, 0.9])
def test_truncated_db(tmp_path, journal_mode, keep):
    rows = [_scalar(i, "feedback/record", {"text": f"{i} " + os.urandom(300).hex()}) for i in range(200)]
    db = _store(tmp_path, rows, journal_mode=journal_mode)
    assert not os.path.exists(f"{db}-wal")
    data = db.read_bytes()
    db.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(StoreError, match=r"s\.db: (database file is truncated|database disk image is malformed)"):
        _read_everything(db)


def test_corrupt_zstd_blob_reported(tmp_path):
    rows = [_scalar(i, "feedback/record", {"text": "abc " * 2000}) for i in range(6)]
    db = _store(tmp_path, rows)
    c = sqlite3.connect(db)
    assert c.execute("SELECT count(*) FROM events WHERE typeof(data) = 'blob'").fetchone()[0] == 6
    frame = c.execute("SELECT data FROM events WHERE seq = 2").fetchone()[0]
    c.execute("UPDATE events SET data = ? WHERE seq = 2", (frame[:8] + b"\x00" * 20 + frame[28:],))
    c.execute("UPDATE events SET data = ? WHERE seq = 4", (frame[: len(frame) // 2],))   # torn frame
    c.commit()
    c.close()
    with SqliteStore.open(db) as store:
        src = store.source("s-1")
        raws = list(src.rows())
        assert [s for s, _ in raws] == list(range(6))
        assert {p.seq for p in src.problems} == {2, 4}
        assert all(p.code == "undecodable-row" and "s.db" in p.message for p in src.problems)
        items = _decode_all(RowCodec("s-1"), [r for _, r in raws])
        bad = [i for i, it in enumerate(items) if isinstance(it, BadRow)]
        assert bad == [2, 4]
        assert all(items[i].data == {"text": "abc " * 2000} for i in (0, 1, 3, 5))
        list(src.rows())                              # re-reading does not duplicate problems
        assert len(src.problems) == 2


@pytest.mark.parametrize("column,value,reason", [
    ("data", "CAST(X'7b2261223a22ff227d' AS TEXT)", "not valid UTF-8"),
    ("data", "'null,\"seq\":99'", "not one JSON value"),          # injection attempt
    ("data", "42", "SQLite type integer"),
    ("data", "X'00112233'", "bad magic"),
    ("source_event_seqs", "X'80'", "truncated varint"),
    ("source_event_seqs", "X'8000'", "non-canonical"),
    ("source_event_seqs", "'[1,2]'", "SQLite type text"),
    ("surface_op", "'\"append'", "surface_op is not one JSON value"),
    ("type", "CAST(X'ff' AS TEXT)", "type is not valid UTF-8"),
    ("ignorable", "0", "not a chunk tag"),
])
def test_undecodable_cells(tmp_path, column, value, reason):
    db = _store(tmp_path)
    c = sqlite3.connect(db)
    c.execute(f"UPDATE events SET {column} = {value} WHERE seq = 3")
    c.commit()
    c.close()
    with SqliteStore.open(db) as store:
        src = store.source("s-1")
        raws = [r for _, r in src.rows()]
        assert len(raws) == 5
        assert [p.seq for p in src.problems] == [3] and reason in src.problems[0].message
        items = _decode_all(RowCodec("s-1"), raws)
        assert [i for i, it in enumerate(items) if isinstance(it, BadRow)] == [3]
        assert items[3].kind in ("malformed", "bad-utf8")


# =========================================================================== locks

_HOLDER = textwrap.dedent("""
    import sqlite3, sys, time
    c = sqlite3.connect(sys.argv[1], isolation_level=None)
    c.execute(sys.argv[2])
    if len(sys.argv) > 3:
        c.execute(sys.argv[3])
    print("held", flush=True)
    time.sleep(60)
""")


def _hold(db, begin, stmt=None):
    args = [sys.executable, "-c", _HOLDER, str(db), begin] + ([stmt] if stmt else [])
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def _stop(proc):
    proc.kill()
    proc.wait(10)
    proc.stdout.close()


def test_exclusive_lock_delete_journal_times_out(tmp_path):
    db = _store(tmp_path, journal_mode="DELETE")
    opened = SqliteStore.open(db, busy_timeout=0.3)
    proc = _hold(db, "BEGIN EXCLUSIVE")
    try:
        t0 = time.monotonic()
        with pytest.raises(StoreError, match=r"s\.db: database is locked by another process") as ei:
            SqliteStore.open(db, busy_timeout=0.3)
        assert time.monotonic() - t0 < 5 and "\n" not in str(ei.value)
        t0 = time.monotonic()
        with pytest.raises(StoreError, match="locked"):
            opened.list_sessions()                   # an already open store is blocked the same way
        assert time.monotonic() - t0 < 5
    finally:
        _stop(proc)
    assert len(opened.list_sessions()) == 1          # lock gone: reads again
    opened.close()


def test_wal_reader_reads_while_writer_holds_immediate(tmp_path):
    db = _store(tmp_path)
    proc = _hold(db, "BEGIN IMMEDIATE",
                 "INSERT INTO events (session_id, seq, type, time, data) VALUES ('s-1', 5, 'todo/write', 0, '{}')")
    try:
        before = _sha(db)
        t0 = time.monotonic()
        with SqliteStore.open(db, busy_timeout=0.3) as store:
            src = store.source("s-1")
            assert [s for s, _ in src.rows()] == [0, 1, 2, 3, 4]   # uncommitted row invisible
            assert not src.refresh()
        assert time.monotonic() - t0 < 5
        assert _sha(db) == before
    finally:
        _stop(proc)


# =========================================================================== read-only

def test_read_only_never_changes_file_and_no_side_files(tmp_path):
    path = next(p for p in SESSION_FILES if b'"seq0"' in p.read_bytes())
    db = tmp_path / "ro.db"
    jsonl_to_sqlite(path, db)
    names = sorted(os.listdir(tmp_path))
    before = _sha(db)
    mtime = db.stat().st_mtime_ns
    _read_everything(db)
    with SqliteStore.open(db) as store:
        src = store.source(store.session_ids()[0])
        b"".join(src.stored_bytes())
        list(src.backward())
        src.refresh()
        src.revision()
    assert _sha(db) == before and db.stat().st_mtime_ns == mtime
    assert sorted(os.listdir(tmp_path)) == names      # cleanly closed WAL store: no -wal/-shm created


def test_immutable_reader_switches_when_writer_appears(tmp_path):
    db = _store(tmp_path)
    store = SqliteStore.open(db)
    assert store._immutable
    src = store.source("s-1")
    assert src.size == 5
    w = open_writer(db)                                # a live writer: -wal exists from now on
    append_batch(w, HEADER, [_scalar(5), _scalar(6)])
    assert os.path.exists(f"{db}-wal")
    assert src.refresh() and src.size == 7
    assert [s for s, _ in src.rows()] == list(range(7))
    assert not store._immutable
    append_batch(w, HEADER, [_scalar(7)])
    assert src.refresh() and [s for s, _ in src.rows(7)] == [7]
    w.close()
    store.close()


def test_source_changed_on_rewrite(tmp_path):
    from app.log.source.sources import SourceChanged
    db = _store(tmp_path)
    with SqliteStore.open(db) as store:
        src = store.source("s-1")
        c = open_writer(db)
        c.execute("BEGIN IMMEDIATE")
        c.execute("DELETE FROM events WHERE seq >= 3")
        c.execute("INSERT INTO events (session_id, seq, type, time, data) VALUES ('s-1', 3, 'turn/end', 9, '{}')")
        c.execute("UPDATE sessions SET revision = revision + 1")
        c.execute("COMMIT")
        c.close()
        with pytest.raises(SourceChanged, match="rewritten"):
            src.refresh()
        with pytest.raises(SourceChanged):
            list(src.forward())


def test_source_open_owns_store(tmp_path):
    db = _store(tmp_path)
    src = SqliteSource.open(db, "s-1")
    assert len(list(src.rows())) == 5
    src.close()
    hdr = msgspec.json.decode(src.header_raw)
    assert hdr == HEADER

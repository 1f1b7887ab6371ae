"""Home full-text index (app/store/fulltext.py) and `session-lens search`, on a generated home of
a few hundred sessions (copies of the fixtures with new ids, zstd copies, a SQLite store, planted
synth sessions, a corrupt and an unsupported session)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from datetime import datetime, UTC

import pytest

from app.cli.main import main as cli
from app.store import fulltext
from app.store.fulltext import FullTextIndex, QueryError, parse_query
from app.tools.plant import PlantingSynth, make_home
from app.tools.synth import write_jsonl
from tests.fixtures_util import FIXTURES

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tree_digest(root) -> dict:
    out = {}
    for d, _dirs, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


def _build_home(root):
    m = make_home(str(root), str(FIXTURES), copies=2, planted=5, zstd_every=9,
                  extra=[str(FIXTURES.parent / "dsh-next")])
    base = os.path.join(str(root), "sessions")
    # a SQLite store inside the home, holding a planted session
    from app.store.sqlite_writer import jsonl_to_sqlite
    s = PlantingSynth(seed=77, plants={"sqliteplantword": "tool-output-line-700"}, at_turn=2)
    tmp = os.path.join(str(root), "sql-src.jsonl")
    write_jsonl(tmp, s, turns=3)
    jsonl_to_sqlite(tmp, os.path.join(base, "extra.sqlite"))
    os.remove(tmp)
    seq, _, kind = s.planted["sqliteplantword"]
    m["planted"]["sqliteplantword"] = (s.session_id, seq, kind)
    # a corrupt session (the header is not JSON) and one of an unknown format version
    bad = os.path.join(base, "--home-dev-alpha--", "corrupt-one")
    os.makedirs(bad)
    with open(os.path.join(bad, "session.jsonl"), "wb") as f:
        f.write(b'{"type":"sess\x00ion", broken\n{"type":"turn/start","seq":0}\n')
    fut = os.path.join(base, "--home-dev-beta--", "future-one")
    os.makedirs(fut)
    with open(os.path.join(fut, "session.jsonl"), "wb") as f:
        f.write(b'{"type":"session","version":99,"id":"future-one","createdAt":1,"delegationDepth":0}\n')
    m["corrupt"] = os.path.join(bad, "session.jsonl")
    m["future"] = os.path.join(fut, "session.jsonl")
    return m


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    root = tmp_path_factory.mktemp("home")
    m = _build_home(root)
    m["root"] = str(root)
    m["before"] = _tree_digest(root)
    cache = tmp_path_factory.mktemp("cache")
    mp = pytest.MonkeyPatch()
    mp.setenv("SESSION_LENS_CACHE_DIR", str(cache))
    ix = FullTextIndex(str(root))
    m["first"] = ix.update()
    m["ix"] = ix
    m["cache"] = str(cache)
    yield m
    ix.close()
    mp.undo()


def test_index_lives_in_the_cache_dir_and_store_is_untouched(home):
    ix = home["ix"]
    assert ix.db_path.startswith(os.path.join(home["cache"], "fulltext"))
    assert not ix.db_path.startswith(home["root"])
    rep = home["first"]
    assert rep.sessions >= 300 and rep.indexed == ix.indexed_count()
    ix.search("plant0output")
    assert _tree_digest(home["root"]) == home["before"]


def test_planted_words_exact_hits(home):
    ix = home["ix"]
    for word, (sid, seq, kind) in home["planted"].items():
        q = f'"{word}"' if " " in word else word
        q = q.replace('"quoted"', "quoted")
        res = ix.search(q)
        assert [(h.session, h.seq, h.kind) for h in res.hits] == [(sid, seq, kind)], word
        h = res.hits[0]
        assert "«" in h.snippet and h.marks
        assert len(res.sessions) == 1 and res.sessions[0].count == 1
        p = home["sessions"].get(sid)
        if p is not None:
            assert h.path == p


def test_filters(home):
    ix = home["ix"]
    sid0, seq, _ = home["planted"]["plant0grüße"]
    assert [h.seq for h in ix.search("plant0grüße kind:user").hits] == [seq]
    assert ix.search("plant0grüße kind:tool-output").hits == []
    # prefix: every planted word of session 2, one session, per-session count
    res = ix.search("plant2*")
    assert {h.session for h in res.hits} == {home["planted"]["plant2output"][0]}
    assert res.total == 5 and len(res.sessions) == 1 and res.sessions[0].count == 5
    assert {h.kind for h in res.hits} == {"tool-output", "user", "tool-call", "reasoning", "assistant"}
    # tool: the planted argument's tool
    sid, seq, _ = home["planted"]['plant1 "quoted" arg']
    res = ix.search('"plant1 quoted arg"')
    tool = res.hits[0].tool
    assert tool and [h.seq for h in ix.search(f'plant1 tool:{tool}').hits] == [seq]
    assert ix.search('plant1 tool:no_such_tool').hits == []
    # session: (prefix of the id)
    assert {h.session for h in ix.search(f"plant* session:{sid0[:8]}").hits} == {sid0}
    # project: session i lives in project (alpha, beta, gamma)[i % 3]
    res = ix.search("plant* project:gamma", limit=100)
    assert {h.session for h in res.hits} == {home["planted"]["plant2output"][0]}
    # after/before: planted session i was created on day 1_790_000_000_000 + 20*i days
    def day(i):
        return datetime.fromtimestamp((1_790_000_000_000 + i * 86_400_000 * 20) / 1000, UTC)
    after = day(3).strftime("%Y-%m-%d")
    res = ix.search(f"plant* after:{after}", limit=100)
    want = {home["planted"][f"plant{i}output"][0] for i in (3, 4)}
    assert {h.session for h in res.hits} == want
    before = day(1).strftime("%Y-%m-%d")
    res = ix.search(f"plant* before:{before}", limit=100)
    assert {h.session for h in res.hits} == {home["planted"]["plant0output"][0]}
    # errors: the fixture copies' failed tools
    res = ix.search("kind:error FS_SANDBOX_DENIED", limit=100)
    assert res.hits and all(h.kind == "error" for h in res.hits)
    with_code = [p for p in FIXTURES.rglob("*.jsonl") if b'"code":"FS_SANDBOX_DENIED"' in p.read_bytes()]
    assert with_code and len(res.sessions) == 2 * len(with_code)     # the fixtures were copied twice
    with pytest.raises(QueryError):
        ix.search("after:yesterday plant0")
    with pytest.raises(QueryError):
        ix.search("session:abc")


def test_v2_v4_sessions_are_indexed(home):
    from app.log.index.reader import LogReader
    from app.log.query.find import FindOptions, find_all
    ix = home["ix"]
    v4 = [sid for sid, o in home["origin"].items() if "cancel-tool-calls/session.v4" in o]
    assert len(v4) == 1
    path = home["sessions"][v4[0]]
    want = [(h.seq, h.kind) for h in find_all(LogReader.open(path), FindOptions("ABORTED_BEFORE_DISPATCH"))[0]]
    res = ix.search(f"ABORTED_BEFORE_DISPATCH kind:error session:{v4[0]}")
    assert [(h.seq, h.kind) for h in res.hits] == want and want
    res = ix.search("authored image budget failure kind:error")
    assert res.hits and {home["origin"][h.session].split("dsh-next/")[1] for h in res.hits} == \
        {"0217po+deepseek-harness@f4a32dbd0a/scripts/snapshots/python-sdk-single-exe/advanced/session.v4.jsonl"}
    versions = {o.rsplit(".v", 1)[-1][:1] for o in home["origin"].values() if ".v" in os.path.basename(o)}
    assert {"2", "3", "4"} <= versions
    bad = [k for k, _ in ix.session_problems()]
    assert not [sid for sid in home["origin"] if home["sessions"][sid] in bad]   # every copy indexed


def test_ranking_prefers_more_matches(home):
    res = home["ix"].search("snapshot", limit=200)
    assert len(res.hits) > 20
    ranks = [h.rank for h in res.hits]
    assert ranks == sorted(ranks)
    counts = [g.count for g in res.sessions]
    assert counts == sorted(counts, reverse=True)
    # every session with a match, when asked for all of them
    full = home["ix"].search("snapshot", limit=200, groups=None)
    assert sum(g.count for g in full.sessions) == full.total == res.total >= len(res.hits)
    assert len(full.sessions) == full.session_total == res.session_total > 200
    # by default the 200 with the most matches, and every session holding a returned hit
    assert {h.session_key for h in res.hits} <= {g.key for g in res.sessions}
    top = sorted(full.sessions, key=lambda g: -g.count)[:200]
    assert min(g.count for g in res.sessions) <= top[-1].count
    assert {g.key for g in res.sessions} >= {g.key for g in top if g.count > top[-1].count}


def test_corrupt_and_unsupported_sessions_are_skipped_with_a_problem(home):
    rep = home["first"]
    text = "\n".join(rep.problems)
    assert home["corrupt"] in text and home["future"] in text
    assert "format-unsupported" in text
    keys = [k for k, _ in home["ix"].session_problems()]
    assert home["corrupt"] in keys and home["future"] in keys
    # reported again, without reading them, on the next update
    rep2 = home["ix"].update()
    assert home["corrupt"] in "\n".join(rep2.problems) and rep2.files_opened == 0


def test_second_update_reads_nothing_unchanged(home):
    rep = home["ix"].update()
    assert rep.files_opened == 0 and rep.bytes_read == 0 and rep.entries == 0
    assert rep.indexed == rep.grown == 0 and rep.unchanged == home["first"].sessions
    assert home["ix"].behind() == 0


def _append_turn(path, word, zstd=False):
    """Append a turn (turn/start, user/message with ``word``, turn/end) after the log's last seq."""
    from app.log.index.reader import LogReader
    r = LogReader.open(path)
    last = max(ev.seq for ev in r.iter_events())
    turns = [ev.data.get("turn") for ev in r.iter_events() if ev.type == "turn/start"]
    r.close()
    t = max(turns) + 1
    rows = [{"type": "turn/start", "seq": last + 1, "time": 1_800_000_000_000, "data": {"turn": t}},
            {"type": "user/message", "seq": last + 2, "time": 1_800_000_000_001,
             "data": {"content": [{"type": "text", "text": f"please find {word} now"}], "source": {"kind": "user"},
                      "role": "user", "id": "m-" + word}, "surfaceOp": "append"},
            {"type": "turn/end", "seq": last + 3, "time": 1_800_000_000_002,
             "data": {"turn": t, "reason": {"kind": "completed"}}}]
    data = b"".join(json.dumps(x, separators=(",", ":")).encode() + b"\n" for x in rows)
    if zstd:
        from app.log.source.zstdframes import encode_frame
        data = encode_frame(data)
    with open(path, "ab") as f:
        f.write(data)
    return last + 2, t, len(data)


def test_grown_replaced_and_removed_sessions(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "home"
    m = make_home(str(root), str(FIXTURES), copies=1, planted=2, zstd_every=4)
    with FullTextIndex(str(root)) as ix:
        first = ix.update()
        assert first.indexed == len(m["sessions"])
        # a grown JSONL log is read from where the index stopped
        sid, _, _ = m["planted"]["plant0output"]
        path = m["sessions"][sid]
        size0 = os.path.getsize(path)
        seq, turn, added = _append_turn(path, "growthword")
        assert ix.behind() == 1
        rep = ix.update()
        assert (rep.grown, rep.indexed, rep.files_opened) == (1, 0, 1)
        assert rep.bytes_read == added < size0
        res = ix.search("growthword")
        assert [(h.session, h.seq, h.turn, h.kind) for h in res.hits] == [(sid, seq, turn, "user")]
        assert [h.seq for h in ix.search("plant0output").hits] == [m["planted"]["plant0output"][1]]
        # a grown zstd log: only the new frame is read
        zpath = next(p for p in m["sessions"].values() if p.endswith(".zstd") and os.path.getsize(p) > 2000)
        zsid = next(k for k, v in m["sessions"].items() if v == zpath)
        zseq, _, zadded = _append_turn(zpath, "zstdgrowth", zstd=True)
        rep = ix.update()
        assert rep.grown == 1 and rep.indexed == 0
        assert rep.bytes_read < os.path.getsize(zpath)
        assert [(h.session, h.seq) for h in ix.search("zstdgrowth").hits] == [(zsid, zseq)]
        # a replaced log (new inode, rewritten content) is indexed again from scratch
        sid1, _, _ = m["planted"]["plant1output"]
        p1 = m["sessions"][sid1]
        data = open(p1, "rb").read().replace(b"plant1output", b"replacedword")
        tmp = p1 + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, p1)
        rep = ix.update()
        assert rep.indexed == 1 and rep.grown == 0
        assert ix.search("plant1output").hits == []
        assert [h.session for h in ix.search("replacedword").hits] == [sid1]
        # a log rewritten in place with the same size is caught by its checksum
        data = open(p1, "rb").read().replace(b"replacedword", b"inplaceword1")
        with open(p1, "r+b") as f:
            f.write(data)
        os.utime(p1, ns=(1, 1))
        rep = ix.update()
        assert rep.indexed == 1
        assert [h.session for h in ix.search("inplaceword1").hits] == [sid1]
        # a shrunk log is indexed again
        with open(path, "r+b") as f:
            f.truncate(size0)
        rep = ix.update()
        assert rep.indexed == 1 and ix.search("growthword").hits == []
        # a removed session leaves the index
        shutil.rmtree(os.path.dirname(path))
        rep = ix.update()
        assert rep.removed == 1 and ix.search("plant0output").hits == []
        assert ix.indexed_count() == len(m["sessions"]) - 1


def test_torn_tail_is_indexed_once_complete(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    d = tmp_path / "home" / "sessions" / "--p--" / "s1"
    d.mkdir(parents=True)
    p = d / "session.jsonl"
    write_jsonl(str(p), PlantingSynth(seed=5, plants={}), turns=2)
    row = json.dumps({"type": "user/message", "seq": 10_000, "time": 1,
                      "data": {"content": [{"type": "text", "text": "tornword here"}]}, "surfaceOp": "append"})
    with open(p, "ab") as f:
        f.write(row[:40].encode())
    with FullTextIndex(str(tmp_path / "home")) as ix:
        ix.update()
        assert ix.search("tornword").hits == []
        with open(p, "ab") as f:
            f.write(row[40:].encode() + b"\n")
        rep = ix.update()
        assert rep.grown == 1
        assert [h.seq for h in ix.search("tornword").hits] == [10_000]


def test_cancel_keeps_what_was_committed(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "home"
    m = make_home(str(root), str(FIXTURES), copies=1, planted=3)
    ev = threading.Event()
    with FullTextIndex(str(root)) as ix:
        seen = []

        def progress(done, total, nbytes):
            seen.append(done)
            if done == 40:
                ev.set()
        rep = ix.update(progress=progress, cancel=ev)
        assert rep.cancelled and seen[-1] == 40
        assert ix.indexed_count() <= 41
        assert ix.behind() > 0
        rep = ix.update()
        assert not rep.cancelled
        assert ix.indexed_count() == len(m["sessions"])
        for word, (sid, seq, _kind) in m["planted"].items():
            if " " not in word:
                assert [(h.session, h.seq) for h in ix.search(word).hits] == [(sid, seq)]


_CRASHER = r"""
import os, sys
sys.path.insert(0, sys.argv[3])
from app.store import ftswrite
from app.store.fulltext import FullTextIndex
ftswrite._COMMIT_SESSIONS = 200      # commits every 200 sessions: the crash comes after one
ix = FullTextIndex(sys.argv[1])
def progress(done, total, nbytes):
    if done == int(sys.argv[2]):
        os._exit(9)          # a crash: no commit, no close
ix.update(progress=progress)
"""


@pytest.mark.slow
def test_crash_mid_build_leaves_a_consistent_index(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(cache))
    root = tmp_path / "home"
    m = make_home(str(root), str(FIXTURES), copies=2, planted=3)
    env = dict(os.environ, SESSION_LENS_CACHE_DIR=str(cache))
    r = subprocess.run([sys.executable, "-c", _CRASHER, str(root), "250", REPO], env=env, timeout=300)
    assert r.returncode == 9
    with FullTextIndex(str(root)) as ix:
        assert ix.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        ix.conn.execute("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 1)")
        n0 = ix.indexed_count()
        assert 200 <= n0 < len(m["sessions"])          # commits happened, the rest did not
        # every indexed session is whole: its entries match a fresh index of it
        rep = ix.update()
        assert rep.indexed == len(m["sessions"]) - n0 and rep.unchanged == n0
        for word, (sid, seq, _kind) in m["planted"].items():
            if " " not in word:
                assert [(h.session, h.seq) for h in ix.search(word).hits] == [(sid, seq)]
        total = ix.conn.execute("SELECT count(*) FROM entries").fetchone()[0]
    with FullTextIndex(str(root), db_path=str(tmp_path / "fresh.sqlite")) as fresh:
        fresh.update()
        assert fresh.conn.execute("SELECT count(*) FROM entries").fetchone()[0] == total


def test_fts5_missing_falls_back_to_a_scan(tmp_path, monkeypatch, home):
    monkeypatch.setattr(fulltext, "fts5_available", lambda: False)
    with FullTextIndex(home["root"], db_path=str(tmp_path / "nofts.sqlite")) as ix:
        assert not ix.fts5
        rep = ix.update()
        assert rep.fallback and "FTS5" in rep.fallback
        sid, seq, kind = home["planted"]["plant3reason"]
        res = ix.search("plant3reason")
        assert res.fallback and "FTS5" in res.fallback
        assert [(h.session, h.seq, h.kind) for h in res.hits] == [(sid, seq, kind)]
        res = ix.search("plant3reason kind:user")
        assert res.hits == []


def test_query_parser():
    pq = parse_query('rm -rf "exact phrase" pref* tool:bash kind:errors session:ab12 project:"my proj" OR x')
    assert pq.tools == ["bash"] and pq.kinds == ["error"] and pq.sessions == ["ab12"]
    assert pq.projects == ["my proj"]
    # kind and tool are columns of the entries table now (SQL filters), not FTS columns; -rf leaves rf out
    assert pq.fts() == '("rm" "exact phrase" "pref"* OR "x") NOT ("rf")'
    assert pq.not_terms == [("rf", False, False)]
    with pytest.raises(QueryError):
        parse_query("kind:nonsense")


def test_cli_search(home, capsys):
    ix = home["ix"]
    sid, seq, kind = home["planted"]["plant4output"]
    assert cli(["search", home["root"], "plant4output", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["hits"] == [{"session": sid, "seq": seq, "turn": obj["hits"][0]["turn"], "kind": kind,
                            "snippet": obj["hits"][0]["snippet"], "path": home["sessions"][sid],
                            "tool": obj["hits"][0]["tool"], "time": obj["hits"][0]["time"]}]
    assert obj["sessions"] == 1 and obj["indexed"] == ix.indexed_count()
    assert obj["update"]["filesOpened"] == 0
    assert cli(["search", home["root"], "plant4output"]) == 0
    out = capsys.readouterr().out
    assert "1 match in 1 session" in out and f"seq {seq:>7}" in out and "«plant4output»" in out
    assert cli(["search", home["root"], "nosuchwordanywhere"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no match in") and home["corrupt"] in out
    assert cli(["search", home["root"], "--rebuild", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["indexed"] == ix.indexed_count() and obj["update"]["indexed"] == obj["indexed"]
    assert cli(["search", home["root"], "kind:bogus"]) == 2
    assert _tree_digest(home["root"]) == home["before"]


def test_only_the_newest_generation_of_a_session_is_indexed(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    d = tmp_path / "home" / "sessions" / "--p--" / "s1"
    d.mkdir(parents=True)
    v0 = PlantingSynth(seed=3, session_id="s1", plants={"oldgenword": "assistant"}, at_turn=1)
    write_jsonl(str(d / "session.jsonl"), v0, turns=2)
    v4 = PlantingSynth(seed=3, session_id="s1", plants={"newgenword": "assistant"}, at_turn=1, version=4)
    write_jsonl(str(d / "session.v4.jsonl"), v4, turns=2)
    with FullTextIndex(str(tmp_path / "home")) as ix:
        rep = ix.update()
        assert rep.sessions == 1 and not rep.problems
        assert ix.search("oldgenword").hits == []
        hits = ix.search("newgenword").hits
        assert [(h.session, h.seq, h.path) for h in hits] == [("s1", v4.planted["newgenword"][0],
                                                                str(d / "session.v4.jsonl"))]

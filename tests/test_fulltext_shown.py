"""The home index holds the text the window and whole-log find show (issue 27's gap, issue 32 item 4):
generic rows' payloads, and the tool-call blocks of assistant messages whose call has no tool/call
row; a block whose row comes is that row's echo (counted once, as find counts it), also when the row
comes after the index stopped (a grown log).  An index of the format before is rebuilt."""
from __future__ import annotations

import json
import sqlite3

from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, find_all
from app.store.ftslive import live_search
from app.store.fulltext import FullTextIndex
from tests.fixtures_util import ev, write_log


def _msg(seq: int, turn: int, blocks: list) -> dict:
    return ev(seq, "assistant/message", {"turn": turn, "step": 1,
                                         "message": {"role": "assistant", "content": blocks}})


def _block(cid: str, word: str) -> dict:
    return {"type": "tool-call", "id": cid, "name": "bash", "arguments": json.dumps({"command": f"echo {word}"})}


def _call(seq: int, turn: int, cid: str, word: str) -> dict:
    return ev(seq, "tool/call", {"turn": turn, "step": 1, "callId": cid, "name": "bash",
                                 "arguments": json.dumps({"command": f"echo {word}"})})


def _rows() -> list:
    return [
        ev(0, "turn/start", {"turn": 1, "trigger": "user"}),
        ev(1, "user/message", {"turn": 1, "content": [{"type": "text", "text": "hello there"}]}),
        ev(2, "hook/result", {"turn": 1, "point": "PreToolUse", "decision": "ask", "reason": "payloadword rule 7"}),
        _msg(3, 1, [{"type": "text", "text": "running it"}, _block("c1", "echoword"), _block("c2", "orphanword")]),
        _call(4, 1, "c1", "echoword"),           # c2 never started (cut by max tokens)
        ev(5, "turn/start", {"turn": 2, "trigger": "user"}),
        ev(6, "user/message", {"turn": 2, "content": [{"type": "text", "text": "again"}]}),
    ]


def _find(path, word: str) -> list:
    r = LogReader.open(str(path))
    try:
        hits, _ = find_all(r, FindOptions(text=word))
    finally:
        r.close()
    return sorted((h.seq, h.kind) for h in hits)


def _index(ix: FullTextIndex, word: str) -> list:
    return sorted((h.seq, h.kind) for h in ix.search(word, limit=100).hits)


def test_generic_payloads_and_orphan_blocks_are_found_as_find_finds_them(tmp_path):
    home = tmp_path / "home"
    path = write_log(home / "sessions" / "--p--" / "s1" / "session.jsonl", _rows(), session_id="s1")
    words = ["payloadword", "orphanword", "echoword", "running"]
    want = {w: _find(path, w) for w in words}
    assert want["payloadword"] == [(2, "event")]          # a generic row's payload
    assert want["orphanword"] == [(3, "tool-call")]       # the block of a call never started
    assert want["echoword"] == [(4, "tool-call")]         # the row, its block an echo
    with FullTextIndex(str(home), db_path=str(tmp_path / "ix.sqlite")) as ix:
        # never indexed: the streaming scan answers; then the index does, the same
        scanned = {w: sorted((h.seq, h.kind) for h in live_search(ix, w).hits) for w in words}
        assert scanned == want
        ix.update()
        assert {w: _index(ix, w) for w in words} == want
        assert _index(ix, "kind:event payloadword") == [(2, "event")]


def test_a_block_whose_row_comes_after_the_index_stopped_is_counted_once(tmp_path):
    home = tmp_path / "home"
    rows = _rows()
    path = write_log(home / "sessions" / "--p--" / "s1" / "session.jsonl", rows[:4], session_id="s1")
    with FullTextIndex(str(home), db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update()
        # the message is the last row: both blocks open, both found (find shows them so too)
        assert _index(ix, "echoword") == _find(path, "echoword") == [(3, "tool-call")]
        assert _index(ix, "orphanword") == [(3, "tool-call")]
        write_log(path, rows, session_id="s1")          # grown: c1's row came, then turn 2
        rep = ix.update()
        assert rep.grown == 1
        for w in ("echoword", "orphanword", "payloadword", "again"):
            assert _index(ix, w) == _find(path, w), w
        assert _index(ix, "echoword") == [(4, "tool-call")]
        n = ix.conn.execute("SELECT entries FROM sessions").fetchone()[0]
        assert n == ix.conn.execute("SELECT count(*) FROM entries").fetchone()[0]
    with FullTextIndex(str(home), db_path=str(tmp_path / "fresh.sqlite")) as fresh, \
            FullTextIndex(str(home), db_path=str(tmp_path / "ix.sqlite")) as grown:
        fresh.update()
        for w in ("echoword", "orphanword", "payloadword", "again", "hello"):
            assert _index(fresh, w) == _index(grown, w), w


def test_an_index_of_the_format_before_is_rebuilt_not_misread(tmp_path):
    home = tmp_path / "home"
    write_log(home / "sessions" / "--p--" / "s1" / "session.jsonl", _rows(), session_id="s1")
    db = str(tmp_path / "ix.sqlite")
    with FullTextIndex(str(home), db_path=db) as ix:
        ix.update()
    # what the build before wrote: no payload entries, its schema number
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("DELETE FROM fts WHERE rowid IN (SELECT rowid FROM entries WHERE kind = 'event')")
    c.execute("DELETE FROM entries WHERE kind = 'event'")
    c.execute("UPDATE meta SET value = '4' WHERE key = 'schema'")
    c.close()
    with FullTextIndex(str(home), db_path=db) as ix:
        assert ix.behind() == 1                         # nothing of the old index is trusted
        ix.update()
        assert _index(ix, "payloadword") == [(2, "event")]


def test_a_turn_of_many_blocks_holds_a_bounded_number(tmp_path, monkeypatch):
    """Blocks wait for their call's row at most BLOCKS_WAIT at a time (a hostile turn): the older
    ones are entries then, none is lost."""
    from app.log.query import extract
    monkeypatch.setattr(extract, "BLOCKS_WAIT", 64)
    n = 300
    rows = [ev(0, "turn/start", {"turn": 1}),
            _msg(1, 1, [_block(f"c{i}", f"blk{i}") for i in range(n)]),
            _call(2, 1, f"c{n - 1}", f"blk{n - 1}")]     # the last one's row comes
    path = write_log(tmp_path / "s.jsonl", rows, session_id="s1")
    seen = []
    real = extract.RowText._settle_oldest

    def spy(self, out):
        seen.append(len(self.blocks))
        real(self, out)
    monkeypatch.setattr(extract.RowText, "_settle_oldest", spy)
    res = extract.extract_jsonl(str(path))
    calls = sorted(e[5] for e in res.entries if e[3] == "tool-call")
    assert len(calls) == n and seen and max(seen) == 65
    words = sorted(e[5].split("echo ")[-1] for e in res.entries if e[3] == "tool-call")
    assert words == sorted(f"blk{i}" for i in range(n))                 # each once
    assert [e[0] for e in res.entries if e[5].endswith(f"echo blk{n - 1}")] == [2]   # the row, not its block

"""Whole-log find's fast way through a candidate row (app/log/query/find_fast.py: a row decoded only as far as its
fields need) gives exactly the hits of the exact way (every candidate row decoded by the codec): seq, turn, kind,
field, offsets, counts, snippets, order, stats.  On every fixture (JSONL, zstd frames, SQLite), hostile logs,
generated logs and edited rows, for rare, common, non-ASCII, quoted, caseless, case-sensitive, whole-word,
kind-limited and regular-expression queries; and the comparison catches a planted difference."""
from __future__ import annotations

import dataclasses
import json
import random

import pytest

from app.log.index.reader import LogReader
from app.log.query import find_c2, find_fast, find_light, find_match
from app.log.query.find import FindOptions, FindStats, find, find_all
from app.log.query.textview import plain, snippet
from app.tools.hostile import hostile_names_session, hostile_session, jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES, session_files

NEXT = FIXTURES.parent / "dsh-next"
QUERIES = [FindOptions("the"), FindOptions("e"), FindOptions("summarize"), FindOptions("—"), FindOptions('"p'),
           FindOptions("The", case=True), FindOptions("the", word=True), FindOptions("ERROR"),
           FindOptions(r"t\w+e", regex=True), FindOptions(r"(?i)a\s+b|\n", regex=True),
           FindOptions("é"), FindOptions("STRASSE"), FindOptions("a", kinds=["tool-call", "tool-output"]),
           FindOptions(": "), FindOptions("\n"), FindOptions("x", also=())]
FEW = [QUERIES[0], QUERIES[3], QUERIES[4], QUERIES[6], QUERIES[8]]


def _open(path: str) -> LogReader:
    from app.store.faces import open_reader
    return open_reader(path)


def _open_store(path: str, sid: str) -> LogReader:
    from app.store.faces import open_reader
    return open_reader(path, sid)


def _run(make, opts: FindOptions, fast: bool, as_they_come: bool = False) -> tuple[list[tuple], FindStats]:
    """(hits as tuples, stats); ``as_they_come``: each hit's snippet read as it is yielded (as the window's child
    and the CLI read them), else after the find (a lazy hit's snippet made from its row read again)."""
    old = find_fast.ENABLED, find_match.FAST
    find_fast.ENABLED = find_match.FAST = fast
    r = make()
    try:
        if as_they_come:
            st = FindStats()
            tuples = [dataclasses.astuple(h) for h in find(r, opts, stats=st)]
        else:
            hits, st = find_all(r, opts)
    finally:
        find_fast.ENABLED, find_match.FAST = old
        r.close()
    return (tuples if as_they_come else [dataclasses.astuple(h) for h in hits]), st


def same_both_ways(make, opts: FindOptions) -> int:
    """Assert the hits (and stats) of ``opts`` are the same both ways; -> the rows the fast way read."""
    fast, st = _run(make, opts, True)
    slow, st2 = _run(make, opts, False)
    assert fast == slow, (opts, next((a, b) for a, b in zip(fast + [None], slow + [None]) if a != b))
    assert (st.hits, st.complete, st.rows_decoded, [p.code for p in st.problems]) == \
        (st2.hits, st2.complete, st2.rows_decoded, [p.code for p in st2.problems]), opts
    assert st2.rows_fast == 0
    return st.rows_fast


def test_every_fixture_finds_the_same_both_ways():
    files = session_files(FIXTURES) + session_files(NEXT)
    assert len(files) > 40
    fast = 0
    for p in files:
        for q in (QUERIES if p.stat().st_size > 200_000 else FEW):
            fast += same_both_ways(lambda p=p: _open(str(p)), q)
    assert fast > 500, fast                   # (the v2+ fixtures' candidate rows take the fast way)


def test_zstd_and_sqlite_sessions_find_the_same_both_ways(tmp_path):
    from app.log.source.sources import open_source
    from app.log.source.zstdframes import encode_session
    from app.store.sqlite_store import SqliteStore
    from app.store.sqlite_writer import jsonl_to_sqlite
    files = [p for p in session_files(NEXT) if p.stat().st_size > 20_000][:5]
    assert files
    for seed in (1, 2):
        g = tmp_path / f"g{seed}.jsonl"
        write_jsonl(str(g), SessionSynth(seed=seed, version=4), target_bytes=200_000)
        files.append(g)
    fast = stores = 0
    for k, p in enumerate(files):
        head, _, rest = p.read_bytes().partition(b"\n")
        lines = rest.splitlines(keepends=True)
        z = tmp_path / f"s{k}.jsonl.zstd"
        z.write_bytes(encode_session(head + b"\n", [b"".join(lines[i:i + 7]) for i in range(0, len(lines), 7)]))
        makes = [lambda z=z: LogReader(open_source(str(z)))]
        db = tmp_path / f"s{k}.sqlite"
        src = tmp_path / f"s{k}.jsonl"              # (isSeeded: a header key SQLite stores no column for)
        src.write_bytes(json.dumps({a: b for a, b in json.loads(head).items() if a != "isSeeded"}).encode()
                        + b"\n" + rest)
        try:
            jsonl_to_sqlite(str(src), str(db))
        except ValueError:                     # (a header SQLite cannot store: no store of it)
            pass
        else:
            store = SqliteStore.open(str(db))
            sid = next(iter(store.list_sessions()))["id"]
            store.close()
            makes.append(lambda db=db, sid=sid: _open_store(str(db), sid))
            stores += 1
        for make in makes:
            for q in FEW:
                fast += same_both_ways(make, q)
    assert fast > 1000 and stores >= 2, (fast, stores)


def test_hostile_logs_find_the_same_both_ways(tmp_path):
    files = [p for p in session_files(NEXT) if p.stat().st_size > 5_000][:6]
    fast = 0
    for k, p in enumerate(files):
        data = p.read_bytes()
        lines = data.decode("utf-8", "replace").split("\n")
        variants = [hostile_session([ln for ln in lines if ln.strip()], seed=k), hostile_names_session(data)]
        variants += [m for _, m, _ in jsonl_mutants(data, seed=k, count=6)]
        for j, v in enumerate(variants):
            path = tmp_path / f"h{k}-{j}.jsonl"
            path.write_bytes(v)
            for q in FEW:
                fast += same_both_ways(lambda path=path: _open(str(path)), q)
    assert fast > 500, fast


def test_generated_logs_find_the_same_both_ways(tmp_path):
    fast = 0
    for seed, version in ((3, 4), (5, 4), (7, 0)):
        p = tmp_path / f"g{seed}.jsonl"
        write_jsonl(str(p), SessionSynth(seed=seed, version=version, context_window=12_000), target_bytes=400_000)
        for q in QUERIES:
            fast += same_both_ways(lambda p=p: _open(str(p)), q)
    assert fast > 2000, fast


# rows edited where the fast way decides: each is read alike both ways (or left to the exact way)
def _edited(raw: bytes) -> list[bytes]:
    obj = json.loads(raw)
    d = obj.get("data")
    out = [raw.replace(b"the", b"the\\u2028x\\tthe\\nthe\\u0085the"),    # control characters near the hits
           raw.replace(b'"data":', b'"data":{"content":"the dropped"},"data":', 1),   # a repeated key
           raw.replace(b'"seq":', b'"seq":-', 1), raw.replace(b'"seq":', b'"seq":9007199254740992,"s":', 1),
           raw.replace(b'"type":"', b'"type":"text-chunks","x":"', 1),         # a packed tag (v2+: a bad row)
           raw.replace(b'"type":', b'"\\u0074ype":', 1), raw[:-1] + b'\xff"}' if raw.endswith(b"}") else raw,
           b"[" * 300 + raw + b"]" * 300]
    if isinstance(d, dict):
        for key in ("turn", "message", "content", "name", "callId", "arguments", "error", "title", "summary"):
            for bad in (3.5, "the x", ["the"], {"the": 1}, None, 7):
                out.append(json.dumps({**obj, "data": {**d, key: bad}}).encode())
        out.append(json.dumps({**obj, "data": "the"}).encode())
    return out


def test_edited_rows_find_the_same_both_ways(tmp_path):
    p = tmp_path / "g.jsonl"
    write_jsonl(str(p), SessionSynth(seed=9, version=4), target_bytes=150_000)
    head, *rows = [r for r in p.read_bytes().split(b"\n") if r]
    rng = random.Random(29)
    picked = rng.sample(rows, 60)
    edited = [e for raw in picked for e in _edited(raw)]
    q = tmp_path / "e.jsonl"
    q.write_bytes(b"\n".join([head] + edited) + b"\n")
    fast = 0
    for opts in QUERIES:
        fast += same_both_ways(lambda: _open(str(q)), opts)
    assert fast > 1000, fast


def test_the_comparison_catches_a_planted_difference(tmp_path, monkeypatch):
    p = tmp_path / "g.jsonl"
    write_jsonl(str(p), SessionSynth(seed=4, version=4), target_bytes=300_000)
    make = lambda: _open(str(p))                                  # noqa: E731
    assert same_both_ways(make, FindOptions("the")) > 20
    # a snippet cut one character short, or a wrong turn, on the fast way only: caught
    real_hit = find_fast.shown_hit

    def short_snippet(*a, **kw):
        h = real_hit(*a, **kw)
        h.snippet = h.snippet[:-1]
        return h
    monkeypatch.setattr(find_fast, "shown_hit", short_snippet)
    with pytest.raises(AssertionError):
        same_both_ways(make, FindOptions("the"))
    monkeypatch.undo()
    monkeypatch.setattr(find_fast, "event_turn", lambda ev: -1)
    with pytest.raises(AssertionError):
        same_both_ways(make, FindOptions("the"))
    monkeypatch.undo()
    # the C gate made to drop a row's last field: its hits are lost, caught
    monkeypatch.setattr(find_fast, "gate_fields", lambda r, g=find_fast.gate_fields: g(r)[:-1])
    with pytest.raises(AssertionError):
        same_both_ways(make, FindOptions("the "))
    monkeypatch.undo()
    # the text hits (the C's plained fields, matched in C; or in Python for whole words) made to drop a row's
    # last hit or field, or to take the tracker's turn for the one the row names: caught (find_c2 off: the hits
    # made in C take their place where it is on, tests/test_find_c2.py plants its own)
    monkeypatch.setattr(find_c2, "ENABLED", False)
    assert same_both_ways(make, FindOptions("the")) > 20

    def drop_last(self, *a, g=find_fast.FastRows.text_hits_of):
        items, read = g(self, *a)
        return items[:-1], read
    monkeypatch.setattr(find_fast.FastRows, "text_hits_of", drop_last)
    monkeypatch.setattr(find_c2, "ENABLED", False)
    with pytest.raises(AssertionError):
        same_both_ways(make, FindOptions("the"))
    monkeypatch.undo()

    def no_turn(self, *a, g=find_fast.FastRows.text_hits_of):
        items, read = g(self, *a)
        return [it if type(it) is int else it[:3] + (None,) + it[4:] for it in items], read
    monkeypatch.setattr(find_fast.FastRows, "text_hits_of", no_turn)
    monkeypatch.setattr(find_c2, "ENABLED", False)
    with pytest.raises(AssertionError):
        same_both_ways(make, FindOptions("the"))
    monkeypatch.undo()
    monkeypatch.setattr(find_fast, "text_shown", lambda r, g=find_fast.text_shown: g(r)[:-1])
    with pytest.raises(AssertionError):
        same_both_ways(make, FindOptions("the", word=True))
    monkeypatch.undo()
    monkeypatch.setattr(find_fast, "text_shown", lambda r, g=find_fast.text_shown: g(r[:3] + (-1,) + r[4:]))
    monkeypatch.setattr(find_fast.FastRows, "_text_hits", lambda self, r, *a, g=find_fast.FastRows._text_hits:
                        g(self, r[:3] + (None,) + r[4:], *a))
    with pytest.raises(AssertionError):
        same_both_ways(make, FindOptions("the", word=True))
    monkeypatch.undo()
    real_init = find_fast.LazyHit.__init__

    def next_hit(self, *, source, **kw):
        real_init(self, source=source[:4] + (source[4] + 1,), **kw)
    monkeypatch.setattr(find_fast.LazyHit, "__init__", next_hit)
    monkeypatch.setattr(find_c2, "ENABLED", False)
    with pytest.raises(AssertionError):
        same_both_ways(make, FindOptions("the"))
    monkeypatch.undo()
    # the payload keys read cut to a few: the fields differ, caught
    monkeypatch.setattr(find_light, "_KEYS", ("message", "content"))
    with pytest.raises(AssertionError):
        same_both_ways(make, FindOptions("a"))


def _snippet_three_plains(text: str, start: int, end: int, width: int = 160) -> tuple[str, int, int]:
    """textview.snippet as it was (three ``plain`` calls): the one-pass version must give the same."""
    ctx = max(10, (width - (end - start)) // 2)
    a = max(0, start - ctx)
    b = min(len(text), end + ctx)
    if a > 0:
        sp = text.rfind("\n", a, start)
        if sp < 0:
            sp = text.rfind(" ", a, max(a, start - ctx // 2))
        if sp >= 0:
            a = sp + 1
    pre = "…" if a > 0 else ""
    post = "…" if b < len(text) else ""
    s = pre + plain(text[a:start])
    m = plain(text[start:end])
    return s + m + plain(text[end:b]) + post, len(s), len(s) + len(m)


def test_snippet_plains_once_and_gives_what_three_plains_gave():
    rng = random.Random(5)
    alphabet = "ab \n\t\r\x00\x1f\x7f\x85\x9f\u2028\u2029é—ßx"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 400)))
        a = rng.randrange(0, len(text) + 1)
        b = rng.randrange(a, min(len(text), a + 30) + 1)
        assert snippet(text, a, b) == _snippet_three_plains(text, a, b)


def test_light_event_leaves_to_the_exact_way_what_the_codec_reads_otherwise():
    from app.log.format.limits import MAX_DEPTH, MAX_ROW_BYTES
    ok = b'{"type":"user/message","seq":1,"data":{"turn":2,"content":"the x"}}'
    seq, ev = find_fast.light_event(ok)
    assert (seq, ev.type, ev.data) == (1, "user/message", {"turn": 2, "content": "the x"})
    assert find_fast.light_event(ok[:-1] + b" " * (MAX_ROW_BYTES - len(ok) + 2) + b"}") is None  # over the row limit
    assert find_fast.light_event(ok[:-2] + b',"n":' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}}") is None
    for bad in (ok.replace(b'"seq":1', b'"seq":-1'), ok.replace(b'"seq":1', b'"seq":9007199254740992'),
                ok.replace(b'"seq":1', b'"seq":"1"'), ok.replace(b"user/message", b"text-chunks"),
                ok.replace(b"user/message", b"turn/end"), ok.replace(b"the x", b"the \xff"),
                ok.replace(b'"content":"the x"', b'"content":5'), ok.replace(b'{"turn"', b'"x"').replace(b"}}", b"}"),
                ok.replace(b'"seq":1,', b"")):
        assert find_fast.light_event(bad) is None, bad
    # an envelope-free snapshot: the seq the codec restores, not for a row with a seq0
    no_seq = ok.replace(b'"seq":1,', b"")
    assert find_fast.light_event(no_seq, {7: 41}, 7)[0] == 41
    assert find_fast.light_event(no_seq.replace(b'"data"', b'"seq0":3,"data"'), {7: 41}, 7) is None


def test_the_c_gate_skips_rows_of_a_rare_word_and_the_text_hits_read_a_common_one(tmp_path):
    from app.log.query.find_match import compile_matcher
    p = tmp_path / "g.jsonl"
    write_jsonl(str(p), SessionSynth(seed=6, version=4), target_bytes=600_000)
    make = lambda: _open(str(p))                                  # noqa: E731
    seen = {}
    orig = find_fast.FastRows.__init__

    def spy(self, *a):
        orig(self, *a)
        seen[self.opts.text] = self
    find_fast.FastRows.__init__ = spy
    try:
        for q in ("step by step", "the", '"tests', "the "):
            assert same_both_ways(make, FindOptions(q)) > 0
    finally:
        find_fast.FastRows.__init__ = orig
    rare, common, spaced = seen["step by step"], seen["the"], seen["the "]
    assert rare.text_row is not None and rare.tried > 2 * rare.passed > 0       # most candidates skipped unread
    assert not rare.text_hits and seen['"tests'].text_hits
    assert common.text_hits and common.tried == 0                               # read by the text hits, no gate
    assert spaced.text_row is None and spaced.tried >= find_fast.GATE_TRIAL     # most hit: the gate stepped aside
    r = make()
    try:
        for opts in (FindOptions("a", regex=True), FindOptions("a\nb"), FindOptions("x", also=(compile_matcher(
                FindOptions("y", regex=True)),))):
            assert find_fast.FastRows(r.codec, opts, compile_matcher(opts)).text_row is None, opts   # no gate
    finally:
        r.close()


def test_a_row_the_c_text_reads_is_within_the_codecs_nesting_limit():
    """The text hits take no bracket count of a row the C ``text_row`` reads: it reads rows nested at most 64
    deep (FT_DEPTH), within the codec's limit; a deeper row is left to the exact way."""
    from app.log.format.limits import MAX_DEPTH
    from app.log.query.textrow import text_row_c
    assert MAX_DEPTH >= 64
    row = b'{"type":"user/message","seq":1,"data":{"turn":2,"content":"the x","n":%s}}'
    assert text_row_c()(row % (b"[" * 60 + b"]" * 60), False) is not None
    assert text_row_c()(row % (b"[" * 70 + b"]" * 70), False) is None


def test_a_reader_of_every_snippet_gets_the_same_hits_and_the_rows_decoded_as_they_come(tmp_path):
    """The text hits step aside (FastRows.eager_reader) once most snippets are read as they come: each would cost
    its row's decode again; the hits are the same whichever way each window took."""
    p = tmp_path / "g.jsonl"
    write_jsonl(str(p), SessionSynth(seed=12, version=4), target_bytes=3_000_000)
    make = lambda: _open(str(p))                                  # noqa: E731
    seen = []
    orig = find_fast.FastRows.__init__

    def spy(self, *a):
        orig(self, *a)
        seen.append(self)
    find_fast.FastRows.__init__ = spy
    try:
        for opts in (FindOptions("the"), FindOptions("\u2014"), FindOptions("the", word=True)):
            seen.clear()
            eager, st = _run(make, opts, True, as_they_come=True)
            lazy, st2 = _run(make, opts, True)
            slow, st3 = _run(make, opts, False, as_they_come=True)
            assert eager == lazy == slow and st.hits == st2.hits == st3.hits > 0, opts
            first, second = seen[0], seen[1]
            if st.hits > 4 * find_fast.EAGER_AFTER:
                assert not first.text_hits and first.made < st.hits / 2, (opts, first.made, st.hits)
            assert second.text_hits and second.made >= st.hits     # (made: echoes too)
    finally:
        find_fast.FastRows.__init__ = orig


def test_a_lazy_hit_pickles_unmade_with_its_row_and_made_as_a_plain_hit(tmp_path):
    import pickle
    p = tmp_path / "g.jsonl"
    write_jsonl(str(p), SessionSynth(seed=13, version=4), target_bytes=300_000)
    r = _open(str(p))
    try:
        hits = find_all(r, FindOptions("the"))[0]
        lazy = [h for h in hits if isinstance(h, find_fast.LazyHit)]
        assert len(lazy) > 50
        a, b = lazy[0], lazy[1]
        ua = pickle.loads(pickle.dumps(a))                         # (unmade: no snippet, the row to make it from)
        assert type(ua) is find_match.Hit and ua.snippet == "" and ua.row == a.pending() and ua.row[1] > 0
        made_b = b.snippet
        ub = pickle.loads(pickle.dumps(b))
        assert type(ub) is find_match.Hit and ub.row is None and ub.snippet == made_b and b.pending() is None
        assert ub == b and b == ub and ua != a                     # (equal as hits; the unmade one has no snippet)
        assert dataclasses.replace(ua, snippet=a.snippet, span=a.span, row=None) == a
    finally:
        r.close()


def test_a_lazy_hit_whose_row_is_gone_has_an_empty_snippet(tmp_path):
    """The file cut short after the find (a repair): the snippet of a hit past the cut is empty, not an error; one
    before it is made as ever; the reader closed, the file is read on its own."""
    p = tmp_path / "g.jsonl"
    write_jsonl(str(p), SessionSynth(seed=14, version=4), target_bytes=300_000)
    exact = _run(lambda: _open(str(p)), FindOptions("the"), False)[0]
    r = _open(str(p))
    hits = find_all(r, FindOptions("the"))[0]
    r.close()
    lazy = [i for i, h in enumerate(hits) if isinstance(h, find_fast.LazyHit)]
    assert len(lazy) > 50
    first, last = hits[lazy[0]], hits[lazy[-1]]
    data = p.read_bytes()
    p.write_bytes(data[:last.pending()[0]])
    assert (last.snippet, last.span) == ("", (0, 0))
    assert dataclasses.astuple(first) == exact[lazy[0]]

"""Whole-log find (app/log/query/find.py and its parts), the text it matches (app/log/query/textview.py), the outline
and problems pass (app/log/query/outline.py) and `session-lens find`, on generated logs with planted
words and on the shared fixtures."""
from __future__ import annotations

import json
import re
import threading

import pytest

from app.cli.main import main as cli
from app.log.query.analysis import inspect
from app.log.query.outline import build_outline
from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, FindStats, build_prefilter, find, find_all
from app.log.source.sources import RawJsonlSource
from app.log.query.textview import event_fields, plain
from app.tools.plant import PLANTS, PlantingSynth
from app.tools.synth import write_jsonl
from tests.fixtures_util import FIXTURES, fast_sample, rel, session_files

CORDIS = "apps/web/tests/snapshots/cordis-tool-round/session.jsonl"


# --------------------------------------------------------------------------- planted logs

@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    d = tmp_path_factory.mktemp("planted")
    s = PlantingSynth(seed=11, at_turn=3)
    path = d / "session.jsonl"
    stats = write_jsonl(str(path), s, turns=9)
    assert set(s.planted) == set(PLANTS), "every word planted"
    # the same log as zstd frames and as a SQLite store
    from app.log.source.zstdframes import encode_frame
    data = path.read_bytes()
    lines = data.split(b"\n")
    frames = [encode_frame(lines[0] + b"\n")]
    rows = [ln + b"\n" for ln in lines[1:] if ln]
    for i in range(0, len(rows), 5):
        frames.append(encode_frame(b"".join(rows[i:i + 5])))
    zpath = d / "session.jsonl.zstd"
    zpath.write_bytes(b"".join(frames))
    from app.store.sqlite_writer import jsonl_to_sqlite
    db = d / "store.sqlite"
    jsonl_to_sqlite(str(path), str(db))
    return {"jsonl": str(path), "zstd": str(zpath), "sqlite": str(db), "planted": dict(s.planted),
            "stats": stats, "id": s.session_id}


def _open(planted, fmt):
    from app.store.faces import open_reader
    return open_reader(planted[fmt])


@pytest.mark.parametrize("fmt", ["jsonl", "zstd", "sqlite"])
def test_planted_words_found_with_exact_seq(planted, fmt):
    r = _open(planted, fmt)
    for word, (seq, turn, kind) in planted["planted"].items():
        for case in (True, False):
            hits, st = find_all(r, FindOptions(word, case=case))
            assert st.complete and not st.cancelled
            assert [(h.seq, h.turn, h.kind) for h in hits] == [(seq, turn, kind)], (word, case, fmt)
            h = hits[0]
            assert word.lower() in h.snippet.lower()
            assert h.snippet[h.span[0]:h.span[1]].lower() == word.lower()
    # the tool-output word sits in line 700 of the whole (unclipped) output
    seq, _, _ = planted["planted"]["zebraquokka"]
    hits, _ = find_all(r, FindOptions("zebraquokka"))
    ev = r.event_at(seq)
    text = next(f.text for f in event_fields(ev) if f.kind == "tool-output")
    assert text.count("\n") == 899
    assert text[:hits[0].start].count("\n") == 699


def test_missing_word_counts_zero_after_reading_everything(planted):
    r = LogReader.open(planted["jsonl"])
    hits, st = find_all(r, FindOptions("wordthatisnowhere"))
    assert hits == [] and st.complete
    size = len(open(planted["jsonl"], "rb").read())
    header = len(open(planted["jsonl"], "rb").readline())
    assert st.bytes_scanned == size - header


def test_decoded_text_is_matched_not_the_json_escapes(planted):
    r = LogReader.open(planted["jsonl"])
    seq = planted["planted"]["zebraquokka"][0]
    # a real newline inside the query matches across the output's lines
    hits, _ = find_all(r, FindOptions("sits in line 700\n0701 output", case=True))
    assert [h.seq for h in hits] == [seq]
    # the escape itself (backslash, n) is not text anyone sees
    hits, _ = find_all(r, FindOptions("line 700\\n0701"))
    assert hits == []
    # quotes inside a tool argument (stored doubly escaped)
    qseq = planted["planted"]['say "hello-quoted" now'][0]
    for text in ('"hello-quoted"', 'say "hello', 'HELLO-QUOTED" NOW'):
        hits, _ = find_all(r, FindOptions(text))
        assert [h.seq for h in hits] == [qseq], text


def test_options_regex_word_case_kind(planted):
    r = LogReader.open(planted["jsonl"])
    seq = planted["planted"]["zebraquokka"][0]
    assert [h.seq for h in find_all(r, FindOptions(r"zebra\w+ sits", regex=True))[0]] == [seq]
    assert [h.seq for h in find_all(r, FindOptions(r"ZEBRA\w+ SITS", regex=True))[0]] == [seq]
    assert find_all(r, FindOptions(r"ZEBRA\w+ SITS", regex=True, case=True))[0] == []
    assert find_all(r, FindOptions("ZebraQuokka", case=True))[0] == []
    assert find_all(r, FindOptions("zebraquok", word=True))[0] == []
    assert len(find_all(r, FindOptions("zebraquok"))[0]) == 1
    assert find_all(r, FindOptions("zebraquokka", kinds=["user", "reasoning"]))[0] == []
    assert len(find_all(r, FindOptions("zebraquokka", kinds=["output"]))[0]) == 1
    rseq = planted["planted"]["pangolinreason"][0]
    assert [(h.seq, h.kind) for h in find_all(r, FindOptions("pangolinreason", kinds=["reasoning"]))[0]] == \
        [(rseq, "reasoning")]
    with pytest.raises(ValueError):
        FindOptions("x", kinds=["nonsense"])
    with pytest.raises(ValueError):
        list(find(r, FindOptions("(", regex=True)))


def test_prefilter_skips_segments_and_decodes_only_candidates(planted):
    r = LogReader(RawJsonlSource(planted["jsonl"], block=16384))
    st = FindStats()
    hits = list(find(r, FindOptions("zebraquokka", case=True), stats=st))
    assert len(hits) == 1
    assert st.segments > 5 and st.segments_skipped >= st.segments - 2
    assert st.rows_decoded <= 12          # the hit row and a few turn/start rows, not the log
    assert build_prefilter(FindOptions("x.*y", regex=True)) is None          # nothing literal: no prefilter
    assert build_prefilter(FindOptions(r"foo\d+bar", regex=True)).needles == [b"foo"]


def test_cancel_and_progress(planted):
    r = LogReader(RawJsonlSource(planted["jsonl"], block=8192))
    seen = []
    ev = threading.Event()

    def progress(done, total):
        seen.append((done, total))
        if len(seen) == 3:
            ev.set()
    st = FindStats()
    list(find(r, FindOptions("output"), cancel=ev, progress=progress, stats=st))
    assert st.cancelled and not st.complete
    assert len(seen) == 3 and seen[0][0] < seen[2][0] < seen[0][1]
    # uncancelled: progress reaches the end
    seen.clear()
    st = FindStats()
    list(find(LogReader(RawJsonlSource(planted["jsonl"], block=8192)), FindOptions("zz-none"),
              progress=lambda d, t: seen.append((d, t)), stats=st))
    assert st.complete and seen[-1][0] == seen[-1][1]


def test_limit_stops_early(planted):
    r = LogReader.open(planted["jsonl"])
    all_hits, _ = find_all(r, FindOptions("the"))
    assert len(all_hits) > 10
    st = FindStats()
    got = list(find(r, FindOptions("the"), limit=3, stats=st))
    assert [h.seq for h in got] == [h.seq for h in all_hits[:3]] and not st.complete


# --------------------------------------------------------------------------- fixtures: prefilter is conservative

def _naive(reader, opts):
    """Every (seq, kind) whose decoded field the window shows matches: no prefilter, every event
    decoded (a tool-call block of an assistant message only when no matching tool/call row of
    its call follows)."""
    from app.log.query.find import compile_matcher
    from app.log.query.textview import shown_fields
    m = compile_matcher(opts)
    out = []
    row_calls = set()
    for ev in reader.iter_events():
        for f, call, block in shown_fields(ev):
            if (opts.kinds is None or f.kind in opts.kinds) and m.search(f.text):
                out.append((ev.seq, f.kind, call, block))
                if call is not None and not block:
                    row_calls.add(call)
    return [(s, k) for s, k, call, block in out if not (block and call in row_calls)]


QUERIES = [FindOptions("snapshot"), FindOptions("Snapshot", case=True), FindOptions('"new"', case=True),
           FindOptions("kind \"new\""), FindOptions(r"cordis_\w+", regex=True), FindOptions("tool", word=True),
           FindOptions("é"), FindOptions("\n"), FindOptions("error", kinds=["error"]),
           FindOptions(r"^use\b", regex=True), FindOptions("{", case=True), FindOptions("\\", case=True)]


@pytest.mark.slow
def test_find_equals_a_full_decode_on_every_fixture():
    files = session_files()
    assert len(files) > 100
    for p in files:
        r = LogReader.open(str(p))
        if r.fatal:
            continue
        for q in QUERIES:
            got = [(h.seq, h.kind) for h in find(r, q)]
            assert got == _naive(r, q), (rel(p), q)


# --------------------------------------------------------------------------- outline and problems

def _raw_turns(path):
    """[(turn, prompt first line)] from the raw JSON rows, computed without the reader."""
    out = []
    cur = None
    with open(path, "rb") as f:
        f.readline()
        for line in f:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            t = row.get("type")
            d = row.get("data") if isinstance(row.get("data"), dict) else {}
            if t == "turn/start":
                cur = [d.get("turn"), None, False]
                out.append(cur)
            elif t in ("user/message", "steering/message") and cur is not None:
                src = (d.get("source") or {}).get("kind")
                text = "\n".join(b.get("text", "") for b in d.get("content") or [] if isinstance(b, dict)
                                 and b.get("type") == "text")
                first = next((" ".join(ln.split()) for ln in text.splitlines() if ln.strip()), "")
                if not first:
                    continue
                strong = src in (None, "user")
                if cur[1] is None or (strong and not cur[2]):
                    cur[1], cur[2] = first, strong
            elif t == "turn/end" and cur is not None:
                cur = None
    return [(t, p or "") for t, p, _ in out]


@pytest.mark.parametrize("relpath", [
    "apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl",
    "examples/acp-agent/tests/snapshots/cancel-tool-calls/session.jsonl",
    CORDIS,
])
def test_outline_lists_every_turn_with_its_prompt(relpath):
    p = FIXTURES / relpath
    o = build_outline(LogReader.open(str(p)))
    want = _raw_turns(p)
    assert len(want) >= 1
    got = [(t.turn, t.prompt) for t in o.turns]
    assert [g[0] for g in got] == [w[0] for w in want]
    for (_gt, gp), (_wt, wp) in zip(got, want):
        assert gp == (wp if len(wp) <= 200 else wp[:199] + "…")


@pytest.mark.slow
def test_outline_of_a_generated_log(planted):
    o = build_outline(LogReader.open(planted["jsonl"]))
    assert [t.turn for t in o.turns] == list(range(1, 10))
    assert all(t.prompt for t in o.turns)
    want = _raw_turns(planted["jsonl"])
    assert [t.prompt for t in o.turns] == [p if len(p) <= 200 else p[:199] + "…" for _, p in want]
    # tools and steps agree with the rows
    rows = [json.loads(ln) for ln in open(planted["jsonl"], "rb").read().split(b"\n")[1:] if ln]
    for t in o.turns:
        calls = [r["data"]["name"] for r in rows if r["type"] == "tool/call" and r["data"]["turn"] == t.turn]
        assert sum(t.tools.values()) == len(calls) and set(t.tools) == set(calls)
        steps = [r for r in rows if r["type"] == "step/start" and r["data"]["turn"] == t.turn]
        assert t.steps == len(steps)
        assert not t.open and t.end


def test_every_problem_of_cordis_tool_round():
    p = FIXTURES / CORDIS
    o = build_outline(LogReader.open(str(p)))
    # the seq gaps computed straight from the bytes: line, byte offset, seq
    gaps = []
    expected = 0
    off = 0
    with open(p, "rb") as f:
        for lineno, line in enumerate(f, 1):
            if lineno > 1:
                seq = json.loads(line)["seq"]
                if seq != expected:
                    gaps.append((seq, lineno, off))
                expected = seq + 1
            off += len(line)
    assert len(gaps) == 8
    got = [(x.seq, x.line, x.offset) for x in o.problems if x.code == "seq-gap"]
    assert got == gaps
    # everything inspect reports is there too (header problems included)
    ins = inspect(LogReader.open(str(p)))
    assert set(ins["problems"]) <= {str(x) for x in o.problems}
    assert any(x.code == "no-delegation-depth" for x in o.problems)


def test_problems_of_a_hostile_log(tmp_path, planted):
    data = open(planted["jsonl"], "rb").read().split(b"\n")
    lines = data[:10] + [b'{"type":"user/message","seq":', b'   '] + data[10:-1]
    body = b"\n".join(lines) + b"\n" + b'{"type":"turn/start","seq":99999'
    p = tmp_path / "session.jsonl"
    p.write_bytes(body)
    o = build_outline(LogReader.open(str(p)))
    codes = {(x.code, x.line) for x in o.problems}
    assert ("malformed", 11) in codes and ("malformed", 12) in codes
    off11 = sum(len(x) + 1 for x in lines[:10])
    assert any(x.code == "malformed" and x.line == 11 and x.offset == off11 for x in o.problems)
    assert any(x.code == "torn-row" for x in o.problems)
    assert any(x.code == "torn-tail" for x in o.problems)


# --------------------------------------------------------------------------- CLI

_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def test_cli_find_json_and_plain(planted, capsys):
    for word, (seq, turn, kind) in planted["planted"].items():
        assert cli(["find", planted["jsonl"], word, "--json"]) == 0
        obj = json.loads(capsys.readouterr().out)
        assert obj["count"] == 1 and obj["hits"] == [{"seq": seq, "turn": turn, "kind": kind,
                                                      "snippet": obj["hits"][0]["snippet"]}]
        assert obj["bytesScanned"] > 0
        assert cli(["find", planted["jsonl"], word]) == 0
        out = capsys.readouterr().out
        assert out.startswith("1 match in the whole log") and f"seq {seq:>7}" in out
        assert not _CONTROL.search(out)
    assert cli(["find", planted["zstd"], "zebraquokka", "--kind", "tool-output", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == 1
    assert cli(["find", planted["sqlite"], "ZEBRA", "--case", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == 0
    assert cli(["find", planted["jsonl"], "zebra\\w+", "--regex", "--limit", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == 1


def test_cli_find_no_match_says_so(planted, capsys):
    assert cli(["find", planted["jsonl"], "absentword"]) == 0
    assert capsys.readouterr().out.startswith("no match in the whole log")
    assert cli(["find", planted["jsonl"], "absentword", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["count"] == 0 and obj["hits"] == [] and obj["bytesScanned"] > 0
    assert cli(["find", planted["jsonl"], "x", "--kind", "bogus"]) == 2


def test_plain_strips_control_characters():
    s = plain("a\x1b[31mred\x1b[0m\tb\nc\u2028d\x85e")
    assert not _CONTROL.search(s) and "red" in s and "\u2028" not in s


# --------------------------------------------------------------------------- formats v1-v4 (dsh-next)

NEXT = FIXTURES.parent / "dsh-next"


def _next_logs():
    return sorted(p for p in NEXT.rglob("*.jsonl"))


def test_find_equals_a_full_decode_on_every_v2_v4_fixture():
    files = _next_logs()
    assert len(files) >= 25
    versions = set()
    for p in files:
        r = LogReader.open(str(p))
        assert r.fatal is None, (p, r.fatal)
        versions.add(r.version)
        for q in QUERIES + [FindOptions("aborted"), FindOptions("{{system}}", case=True),
                            FindOptions("IMAGE_OFFLOAD", kinds=["error"])]:
            got = [(h.seq, h.kind) for h in find(r, q)]
            assert got == _naive(r, q), (p, q)
    assert {2, 3, 4} <= versions


def test_v4_errors_attempts_and_system_messages_are_found():
    cancel = next(p for p in _next_logs() if "cancel-tool-calls" in str(p))
    r = LogReader.open(str(cancel))
    hits, _ = find_all(r, FindOptions("ABORTED_BEFORE_DISPATCH", case=True))
    assert [h.kind for h in hits] == ["error"]
    ev = r.event_at(hits[0].seq)
    assert ev.type == "tool/result" and ev.data["message"]["role"] == "tool"
    adv = next(p for p in _next_logs() if p.name == "session.v4.jsonl" and "python-sdk-single-exe" in str(p))
    r = LogReader.open(str(adv))
    hits, _ = find_all(r, FindOptions("authored image budget failure"))
    assert [(r.event_at(h.seq).type, h.kind) for h in hits] == [("assistant/attempt", "error")]
    o = build_outline(r)
    assert any(t.errors for t in o.turns)
    dyn = next(p for p in _next_logs() if "dynamic-tool-prompt-updates" in str(p))
    r = LogReader.open(str(dyn))
    sys_hits = find_all(r, FindOptions("snapshot_ping", kinds=["system"]))[0]
    assert sys_hits and {r.event_at(h.seq).type for h in sys_hits} <= {"system/message", "developer/message"}


@pytest.mark.parametrize("p", fast_sample(_next_logs(), spread=3), ids=lambda p: p.parent.name + "/" + p.name)
def test_outline_of_every_v2_v4_fixture(p):
    o = build_outline(LogReader.open(str(p)))
    want = _raw_turns(p)
    assert [t.turn for t in o.turns] == [w[0] for w in want]
    assert [t.prompt for t in o.turns] == [w if len(w) <= 200 else w[:199] + "…" for _, w in want]


def test_a_log_written_with_ascii_escapes_and_spaces(tmp_path, planted):
    """Another writer (Python's json.dumps defaults: \\uXXXX for non-ASCII, ", " and ": ")."""
    lines = open(planted["jsonl"], "rb").read().split(b"\n")
    p = tmp_path / "session.jsonl"
    p.write_bytes(b"\n".join(json.dumps(json.loads(ln)).encode() for ln in lines if ln) + b"\n")
    assert b"\\u00fc" in p.read_bytes() and "ü".encode() not in p.read_bytes()
    r = LogReader.open(str(p))
    for word, (seq, turn, kind) in planted["planted"].items():
        for case in (True, False):
            hits, _ = find_all(r, FindOptions(word, case=case))
            assert [(h.seq, h.turn, h.kind) for h in hits] == [(seq, turn, kind)], (word, case)


@pytest.mark.parametrize("p", fast_sample(session_files()[::7] + _next_logs(), spread=3), ids=lambda p: p.name)
def test_outline_problems_include_everything_inspect_reports(p):
    r = LogReader.open(str(p))
    if r.fatal:
        return
    assert set(inspect(LogReader.open(str(p)))["problems"]) <= {str(x) for x in build_outline(r).problems}

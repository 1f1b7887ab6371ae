"""Hostile inputs made from real fixtures: every defect ends in a clear report, no readable event lost."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from app.log.query import analysis
from app.log.format.model import is_event
from app.log.index.reader import LogReader
from app.log.source.sources import RawJsonlSource, SourceChanged
from fixtures_util import REPO, fixture

BASE = "examples/acp-agent/tests/snapshots/packed-chunks/session.jsonl"


def lines_of(rel):
    data = fixture(rel).read_bytes()
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


def write(tmp_path, lines, name="session.jsonl", trailing=True):
    p = tmp_path / name
    p.write_bytes(b"\n".join(lines) + (b"\n" if trailing else b""))
    return p


def all_events(path):
    return [e for e in LogReader.open(str(path)).items() if is_event(e)]


def test_truncated_last_line_is_torn_and_closed_logically(tmp_path):
    lines = lines_of(BASE)
    good = all_events(fixture(BASE))
    last = lines[-1]                       # the turn/end row
    p = write(tmp_path, lines[:-1] + [last[: len(last) // 2]], trailing=False)
    r = LogReader.open(str(p))
    items = r.items()
    bad = [i for i in items if not is_event(i)]
    assert [b.kind for b in bad] == ["torn"] and bad[0].raw == last[: len(last) // 2]
    assert bad[0].offset == sum(len(l) + 1 for l in lines[:-1])
    assert [e.seq for e in items if is_event(e)] == [e.seq for e in good[:-1]]     # nothing else lost
    st = r.tail_state()
    assert st.is_open and [e.type for e in st.closure] == ["turn/end"]
    assert st.closure[0].seq == good[-1].seq                                         # takes the torn seq
    tail = r.tail_page()
    assert tail.items[-1] is not None and not is_event(tail.items[-1])             # physical: torn row shown
    logical = tail.logical_items()
    assert all(is_event(e) for e in logical) and logical[-1].synthesized
    info = analysis.inspect(r)
    assert info["openTail"] is True and info["closure"] == ["turn/end"]
    assert any(p.startswith("torn") for p in info["problems"])


def test_garbage_line_mid_file_is_kept_and_located(tmp_path):
    lines = lines_of(BASE)
    garbage = b'{"type":"assistant/chunk","seq":'          # a cut-off row, then more rows
    p = write(tmp_path, lines[:10] + [garbage] + lines[10:])
    r = LogReader.open(str(p))
    items = r.items()
    bad = [i for i in items if not is_event(i)]
    assert len(bad) == 1 and bad[0].kind == "malformed" and bad[0].line == 11
    assert bad[0].offset == sum(len(l) + 1 for l in lines[:10])
    assert [e.seq for e in items if is_event(e)] == [e.seq for e in all_events(fixture(BASE))]
    info = analysis.inspect(r)
    assert any("malformed" in p and "line 11" in p for p in info["problems"])
    assert info["openTail"] is False      # a later turn/end: corruption, not a torn tail


def test_garbage_after_last_turn_end_is_a_torn_tail(tmp_path):
    lines = lines_of(BASE)
    extra = [b'{"type":"turn/start","seq":124,"time":1,"data":{"turn":2}}', b"\x00\x01garbage",
             b'{"type":"step/start","seq":125,"time":1,"data":{"turn":2,"step":1}}']
    p = write(tmp_path, lines + extra)
    r = LogReader.open(str(p))
    st = r.tail_state()
    # a repair keeps the prefix before the bad row: turn 2 open, closed in memory
    assert [type(d).__name__ for d in st.dropped] == ["BadRow", "Event"]
    assert [e.type for e in st.closure] == ["turn/end"] and st.closure[0].seq == 125
    assert st.closure[0].data == {"turn": 2, "reason": {"kind": "interrupted"}}
    seqs = [e.seq for e in r.iter_events(logical=True)]
    assert seqs == list(range(126))
    assert len([i for i in r.items() if is_event(i)]) == 126          # physical still has seq 125


def test_invalid_utf8_is_read_with_replacement(tmp_path):
    lines = lines_of(BASE)
    i = next(k for k, l in enumerate(lines) if b"echo HELLO" in l and b'"tool/call"' in l)
    lines[i] = lines[i].replace(b"echo HELLO", b"echo HE\xff\xfeLLO")
    p = write(tmp_path, lines)
    r = LogReader.open(str(p))
    info = analysis.inspect(r)
    assert info["events"] == 124
    assert any(p.startswith("bad-utf8") and f"line {i + 1}" in p for p in info["problems"])
    ev = next(e for e in r.events() if e.type == "tool/call")
    assert "HE\ufffd\ufffdLLO" in ev.data["arguments"] and b"\xff\xfe" in ev.raw


def test_unknown_type_is_kept_raw(tmp_path):
    lines = lines_of(BASE)
    # shift: insert an unknown event as seq 5 and renumber after it
    out = [lines[0]]
    seq_shift = 0
    for k, l in enumerate(lines[1:]):
        obj = json.loads(l)
        if k == 5:
            out.append(json.dumps({"type": "vendor/thing", "seq": 5, "time": 0, "data": {"x": "<b>hi</b>"}}).encode())
            seq_shift = 1
        if seq_shift:
            if "seq0" in obj:
                obj["seq0"] += 1
            else:
                obj["seq"] += 1
        out.append(json.dumps(obj, separators=(",", ":")).encode())
    p = write(tmp_path, out)
    r = LogReader.open(str(p))
    info = analysis.inspect(r)
    ev = next(e for e in r.events() if e.type == "vendor/thing")
    assert ev.known is False and ev.data == {"x": "<b>hi</b>"}
    assert info["events"] == 125 and not [x for x in info["problems"] if x.startswith("seq-")]
    assert any(x.startswith("unknown-type") and "vendor/thing" in x for x in info["problems"])


def test_bad_packed_row_is_reported_with_its_seq(tmp_path):
    lines = lines_of(BASE)
    i = next(k for k, l in enumerate(lines) if l.startswith(b'{"type":"reasoning-chunks"'))
    obj = json.loads(lines[i])
    obj["data"]["dt"] = obj["data"]["dt"][:-1]
    lines[i] = json.dumps(obj, separators=(",", ":")).encode()
    p = write(tmp_path, lines)
    r = LogReader.open(str(p))
    bad = [x for x in r.items() if not is_event(x)]
    assert [b.kind for b in bad] == ["bad-packed"] and "dt" in bad[0].reason
    info = analysis.inspect(r)
    assert any(x.startswith("bad-packed") and f"seq {obj['seq0']}" in x for x in info["problems"])
    assert any(x.startswith("seq-gap") for x in info["problems"])     # the members are missing, said so


def test_seq_gap_generated(tmp_path):
    lines = lines_of("examples/acp-agent/tests/snapshots/parallel-tool-calls/session.jsonl")
    p = write(tmp_path, lines[:8] + lines[9:])
    info = analysis.inspect(LogReader.open(str(p)))
    assert info["events"] == 31
    assert any("seq 8 where 7 was expected" in x for x in info["problems"])


def test_store_that_grows_while_read(tmp_path):
    lines = lines_of(BASE)
    p = write(tmp_path, lines[:20])
    src = RawJsonlSource(str(p), block=256)
    r = LogReader(src)
    it = r.iter_items()
    first = [next(it) for _ in range(3)]
    with open(p, "ab") as f:                       # a writer appends meanwhile
        f.write(b"\n".join(lines[20:]) + b"\n")
    rest = list(it)
    # the snapshot is what was there at open, exactly
    assert len([x for x in first + rest if is_event(x)]) == len(all_events(write(tmp_path, lines[:20], "a.jsonl")))
    assert src.refresh() is True
    assert len([x for x in r.items() if is_event(x)]) == 124


def test_store_that_shrinks_while_read_is_a_clear_error(tmp_path):
    lines = lines_of(BASE)
    p = write(tmp_path, lines)
    src = RawJsonlSource(str(p), block=256)
    r = LogReader(src)
    it = r.iter_items()
    next(it)
    with open(p, "r+b") as f:
        f.truncate(400)
    with pytest.raises(SourceChanged, match="shrank"):
        list(it)


def test_opening_never_changes_the_store(tmp_path):
    tree = tmp_path / "fixtures"
    shutil.copytree(fixture("examples/acp-agent/tests/snapshots"), tree)
    def snapshot():
        out = {}
        for root, _, files in os.walk(tree):
            for f in files:
                p = os.path.join(root, f)
                st = os.stat(p)
                out[p] = (hashlib.sha256(open(p, "rb").read()).hexdigest(), st.st_mtime_ns, st.st_size)
        return out
    before = snapshot()
    from app.store.discovery import discover
    listing = discover(str(tree))
    assert len(listing.sessions) > 50
    for s in listing.sessions:
        r = LogReader.open(s.path)
        analysis.inspect(r)
        r.tail_page()
        r.build_index()
    assert snapshot() == before


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})


@pytest.mark.slow
def test_cli_errors_are_one_line_and_nonzero(tmp_path):
    res = run_cli("inspect", str(tmp_path / "missing.jsonl"), "--json")
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "no such file" in res.stderr
    notlog = tmp_path / "x.jsonl"
    notlog.write_text("hello\n")
    res = run_cli("inspect", str(notlog), "--json")
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "header" in res.stderr
    # v1–v4 are read (issue 12); a version newer than this reader is still refused
    v = tmp_path / "v.jsonl"
    v.write_text('{"type":"session","version":5,"id":"x","createdAt":0,"delegationDepth":0}\n')
    res = run_cli("inspect", str(v))
    assert res.returncode == 2 and "upgrade" in res.stderr


@pytest.mark.slow
def test_cli_inspect_every_fixture_in_one_process():
    # the documented JSON keys, through the real entry point, on every corpus file
    code = ("import json,sys; sys.path.insert(0,'tests'); from fixtures_util import session_files;"
            "from app.cli.main import main\n"
            "import io,contextlib\n"
            "for p in session_files():\n"
            "    buf=io.StringIO()\n"
            "    with contextlib.redirect_stdout(buf): rc=main(['inspect',str(p),'--json'])\n"
            "    assert rc==0,(p,rc)\n"
            "    d=json.loads(buf.getvalue()); assert d['events']>=0 and 'closure' in d\n"
            "print('ok')")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"


@pytest.mark.slow
def test_cli_page_messages_request_export(tmp_path):
    f = str(fixture("examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"))
    page = json.loads(run_cli("page", f, "--json").stdout)
    seqs = [e["event"]["seq"] for e in page["events"]]
    assert 9 not in seqs and 10 not in seqs and page["hiddenAttempts"][0]["firstSeq"] == 9
    page = json.loads(run_cli("page", f, "--attempts", "--json").stdout)
    hidden = [e["event"]["seq"] for e in page["events"] if e.get("hidden")]
    assert hidden == [9, 10]
    msgs = json.loads(run_cli("messages", f, "--json").stdout)["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "user", "assistant"]    # (today's dsh: the prompt first)
    req = json.loads(run_cli("request", f, "--at", "18", "--json").stdout)
    assert req["boundary"] == 13 and len(req["request"]["messages"]) == 3
    msgs = json.loads(run_cli("messages", f, "--json", "--as-written").stdout)["messages"]
    assert [m["role"] for m in msgs] == ["user", "user", "assistant"]
    out = tmp_path / "raw.jsonl"
    exp = json.loads(run_cli("export", f, "--raw", str(out), "--logical", str(tmp_path / "l.jsonl"), "--json").stdout)
    assert out.read_bytes() == open(f, "rb").read()
    assert exp["raw"]["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert exp["logical"]["events"] == 21
    res = run_cli("export", f, "--raw", str(out))
    assert res.returncode == 2 and "exists" in res.stderr          # never clobbers


def test_corrupt_zstd_frame_mid_file_is_reported_and_the_rest_read(tmp_path):
    from app.store.writer import write_session
    lines = lines_of("examples/acp-agent/tests/snapshots/multi-turn/session.jsonl")
    p = tmp_path / "session.jsonl.zstd"
    write_session(str(p), json.loads(lines[0]), [lines[1:][i:i + 5] for i in range(0, len(lines) - 1, 5)], fmt="zstd")
    b = bytearray(p.read_bytes())
    mid = len(b) // 2
    b[mid] ^= 0xFF
    b[mid + 1] ^= 0xFF
    p.write_bytes(bytes(b))
    r = LogReader.open(str(p))
    info = analysis.inspect(r)
    assert any(x.startswith("corrupt-frame") for x in info["problems"])
    assert any(x.startswith("seq-gap") for x in info["problems"])
    assert 60 <= info["events"] < 71                    # only that frame's rows are missing
    assert [i.kind for i in r.items() if not is_event(i)] == ["corrupt-frame"]
    # paging across the corrupt frame works in both directions
    pages = [r.tail_page(3)]
    while pages[-1].has_more:
        pages.append(r.page_before(pages[-1], 3))
    assert sum(len(pg.events) for pg in pages) == info["events"]


@pytest.mark.slow
def test_cli_path_without_subcommand_means_gui():
    from app.cli.main import build_parser, COMMANDS
    build_parser()
    assert "gui" in COMMANDS
    res = run_cli("--version")
    assert res.returncode == 0 and "session-lens" in res.stdout
    res = run_cli(str(REPO / "no-such-file.jsonl"), "--screenshot", "/dev/null")
    assert "invalid choice" not in res.stderr

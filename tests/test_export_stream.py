"""Streamed exports: the same text as the whole-log way, written chunk by chunk with progress, cancelled
without a trace; ZIP entry names safe on every filesystem; depth safe on every path (issue 28 items 5, 7)."""
from __future__ import annotations

import json
import os
import random
import shutil
import zipfile
from pathlib import Path

import msgspec
import pytest

from app.log.fold.attempts import AttemptTracker
from app.log.index.reader import LogReader
from app.store import export_rows, export_transcript as et
from app.store.export import export
from app.store.export_zip import MAX_COMPONENT, EntryNames, bundle_file_name
from app.store.faces import open_reader
from app.store.redact import Redactor
from app.tools.hostile import deep_row, hostile_session, jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl

fixtures = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "dsh"
SNAP = fixtures / "examples/acp-agent/tests/snapshots"
MULTI = SNAP / "subagent-multi"
_enc = msgspec.json.Encoder()
SECRET_TEXT = ("key sk-proj-abcdefghijklmnopqrstuvwx1234 token=s3cr3tT0kenValue99 mail alice@example.com "
               "file /home/alice/x Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload")


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> list[Path]:
    """Generated logs (plain, crashed mid-turn, hostile text with secrets, mutants) and a few fixtures."""
    d = tmp_path_factory.mktemp("stream-logs")
    out = []
    for seed, crash in ((3, False), (4, True)):
        p = d / f"syn{seed}.jsonl"
        write_jsonl(str(p), SessionSynth(seed), target_bytes=400_000, crash=crash)
        out.append(p)
    lines = out[0].read_bytes().splitlines(True)
    h = d / "hostile.jsonl"
    h.write_bytes(hostile_session(lines, 1).replace(b"HOSTILE", SECRET_TEXT.encode()))
    out.append(h)
    data = out[0].read_bytes()[:120_000]
    for name, b, _kept in jsonl_mutants(data[:data.rfind(b"\n") + 1], 7, 10):
        p = d / f"mut-{name.replace('/', '_')}.jsonl"
        p.write_bytes(b)
        out.append(p)
    out += [SNAP / "empty-response-retry/session.jsonl", MULTI / "session.jsonl"]
    return out


def _reference_logical(r: LogReader, red: Redactor | None) -> bytes:
    hdr = r.source.header_raw
    lines = [red.row(hdr) if red else hdr]
    for ev in r.iter_events(logical=True):
        env = ev.envelope()
        lines.append(_enc.encode(red.obj(env) if red else env))
    return b"\n".join(lines) + b"\n"


def _reference_transcript(r: LogReader, fmt: str, red: Redactor | None) -> bytes:
    """The whole-log way: every event decoded and redacted, entries sorted at the end."""
    header = json.loads(r.source.header_raw) if r.source.header_raw else {}
    if red:
        header = red.obj(header)
    entries, title, at = [], None, AttemptTracker(keep_text=False)
    for ev in r.iter_events(logical=True):
        at.apply(ev)
        d = ev.data if isinstance(ev.data, dict) else {}
        if red:
            d = red.obj(d)
        if ev.type == "session/title":
            title = d.get("title", title)
        e = et._event_entry(ev, d)
        if e is not None:
            entries.append(e)
    entries += [et._failure_entry(a, red) for a in at.attempts if a.failed]
    entries.sort(key=lambda e: (e.seq, 0 if e.kind == "turn" else 1))
    text = et.render_markdown(header, title, entries) if fmt == "markdown" else et.render_html(header, title, entries)
    return text.encode()


@pytest.mark.parametrize("redact", [False, True])
def test_streamed_text_is_the_whole_log_text(logs, monkeypatch, redact):
    monkeypatch.setattr(et, "CHUNK_CHARS", 2000)           # many chunks: the seams are exercised
    monkeypatch.setattr(export_rows, "CHUNK_BYTES", 3000)
    for p in logs:
        r = open_reader(str(p))
        got = b"".join(export_rows.logical_jsonl(r, Redactor() if redact else None))
        assert got == _reference_logical(r, Redactor() if redact else None), p.name
        for fmt in ("markdown", "html"):
            got = b"".join(et.transcript_text(r, fmt, Redactor() if redact else None))
            assert got == _reference_transcript(r, fmt, Redactor() if redact else None), (p.name, fmt)
        r.close()


def test_transcript_streams_before_the_log_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(et, "CHUNK_CHARS", 4096)
    p = tmp_path / "s.jsonl"
    write_jsonl(str(p), SessionSynth(11), target_bytes=3 << 20)
    r = open_reader(str(p))
    seen: list[int] = []
    gen = et.transcript_text(r, "html", Redactor(), lambda d, t: seen.append(d))
    next(gen)
    next(gen)
    total = r.source.size
    assert seen and seen[-1] < total                 # text handed on while the second pass is still reading
    for _ in gen:
        pass
    assert seen[-1] == total


@pytest.mark.parametrize("fmt", ["raw", "logical", "markdown", "html", "zip"])
@pytest.mark.parametrize("redact", [False, True])
def test_progress_is_monotonic_and_reaches_total(logs, tmp_path, fmt, redact):
    r = open_reader(str(logs[0]))
    seen: list[tuple[int, int]] = []
    export(r, fmt, str(tmp_path / f"out.{fmt}"), redact=redact, progress=lambda d, t: seen.append((d, t)))
    assert seen
    done = [d for d, _ in seen]
    assert done == sorted(done) and all(t == seen[-1][1] for _, t in seen)
    assert done[-1] == seen[-1][1]


class Stop(Exception):
    pass


@pytest.mark.parametrize("fmt", ["raw", "logical", "markdown", "html", "zip"])
def test_cancel_leaves_nothing(logs, tmp_path, fmt):
    r = open_reader(str(logs[0]))
    out = tmp_path / "o" / f"out.{fmt}"
    out.parent.mkdir()
    calls = []

    def progress(d: int, t: int) -> None:
        calls.append(d)
        if len(calls) >= 2:
            raise Stop
    with pytest.raises(Stop):
        export(r, fmt, str(out), redact=True, progress=progress)
    assert not out.exists() and os.listdir(out.parent) == []     # no output, no temporary, no report


def test_zip_names_unique_short_never_empty():
    names = EntryNames()
    got = [names.folder(i) for i in ("Child", "cHILD", "child", "x" * 300, "", "", "a/b", "a_b")]
    low = [g.lower() for g in got]
    assert len(set(low)) == len(low)
    assert all(g and len(g.encode()) <= MAX_COMPONENT for g in got)
    assert got[0] == "Child"                       # an ordinary id keeps its name
    assert len(bundle_file_name("y" * 400).encode()) <= MAX_COMPONENT and bundle_file_name("") != "dsh-session-.zip"


def test_zip_bundle_with_colliding_and_long_ids(tmp_path):
    d = tmp_path / "multi"
    shutil.copytree(MULTI, d)
    ids = {"session.1.jsonl": "Kid-" + "z" * 296, "session.2.jsonl": None}
    first = json.loads((d / "session.1.jsonl").read_text().splitlines()[0])["id"]
    ids["session.2.jsonl"] = first.upper()          # differs from the first child's id only in case
    ids["session.1.jsonl"] = first
    for f, new in ids.items():
        lines = (d / f).read_text().splitlines()
        h = json.loads(lines[0])
        h["id"] = new
        (d / f).write_text("\n".join([json.dumps(h, separators=(",", ":"))] + lines[1:]) + "\n")
    res = export(open_reader(str(d / "session.jsonl")), "zip", str(tmp_path / "b.zip"))
    with zipfile.ZipFile(res["out"]) as z:
        names = z.namelist()
    assert len(names) == 3
    assert len({n.lower() for n in names}) == 3
    for n in names:
        assert all(c and len(c.encode()) <= MAX_COMPONENT for c in n.split("/"))


def test_redacted_zip_of_a_deep_row(tmp_path):
    """Issue 28 item 5: a 100k-deep row in a redacting ZIP export (and every other format) is read on."""
    p = tmp_path / "s" / "session.jsonl"
    p.parent.mkdir()
    write_jsonl(str(p), SessionSynth(2), target_bytes=60_000)
    rows = p.read_bytes()
    last = json.loads(rows.splitlines()[-1])
    seq = last.get("seq", last.get("seq0", 0)) + len(last.get("data", {}).get("dt", [])) + 1
    p.write_bytes(rows + deep_row(seq, 100_000) + b"\n")
    for fmt in ("zip", "raw", "logical", "markdown", "html"):
        res = export(open_reader(str(p)), fmt, str(tmp_path / f"o.{fmt}"), redact=True)
        assert Path(res["out"]).exists()
    deep = json.loads("[" * 50 + '"/home/bob/x"' + "]" * 50)
    red = Redactor()
    assert json.dumps(red.obj(deep)).count("/home/[user]/x") == 1   # the explicit-stack walk below the recursion
    very: object = "/home/bob/y"
    for _ in range(100_000):
        very = [very]
    red = Redactor()
    got = red.obj(very)
    for _ in range(100_000):
        assert isinstance(got, list) and len(got) == 1
        got = got[0]
    assert got == "/home/[user]/y" and red.counts == {"home-path": 1}


def test_redactor_gates_change_nothing():
    """The gated rules and the keyword-anchored assignment rule give what every rule run everywhere gives."""
    ref = Redactor()
    fast = Redactor()
    rng = random.Random(5)
    parts = list("aKkTt_.-=: \"'\\&,;}]@/é\n\u0130\u0131\u017f\u212a") + [
        "token", "api_key", "Secret", "PASSWORD", "Auth", "=", ": ", "/home/", "C:\\Users\\", "Bearer ", "baſic ",
        "sk-", "ghp_", "AKIA", "xoxb-", "a@b.co", "ABCDEFGHIJKLMNOP0123456789abcdefgh", "[REDACTED:x]"]
    for _ in range(20000):
        s = "".join(rng.choice(parts) for _ in range(rng.randint(1, 25)))
        want = s
        for rx, sub, _gate in ref._subs:
            want = rx.sub(sub, want)
        assert fast.text(s) == want, repr(s)
    assert fast.counts == ref.counts and fast.examples == ref.examples

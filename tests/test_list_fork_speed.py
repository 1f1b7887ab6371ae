"""Issue 15, list and fork: the session list opens each session once (header and title together)
and not at all when its revision is cached; list titles agree with ``inspect`` on every fixture and
demo session (zstd included); a v0 fork copies the unchanged bytes of segments holding legacy-shape
rows as byte ranges (kernel copy), only the converted rows as text; ``fork --at`` past the end is
refused."""
from __future__ import annotations

import contextlib
import io
import json
import os
import shutil

import pytest

from app.cli.main import main
from app.log.index.reader import LogReader
from app.log.source.zstdframes import encode_session
from app.store import discovery_headers, forking, title_cache, titles
from app.store.discovery import discover, quick_title
from app.store.indexcache import cached_index
from app.tools.synth import SessionSynth, write_jsonl

from fixtures_util import FIXTURES, REPO

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
DEMO = REPO / "resources" / "demo"
ALL_LOGS = sorted(p for root in (FIXTURES, NEXT, DEMO) for p in root.rglob("session*.jsonl*"))


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(title_cache, "_cache", None)
    monkeypatch.setattr(title_cache, "_dirty", False)


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def _inspect_title(path) -> object:
    """The title ``session-lens inspect`` gives (None when it cannot open the file)."""
    rc, out, _err = run("inspect", path, "--json")
    return json.loads(out).get("title") if rc == 0 and out.startswith("{") else None


# --------------------------------------------------------------------------- titles

def _titles_of(text: bytes) -> list:
    out = []
    for line in text.split(b"\n"):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("type") == "session/title":
            out.append(obj["data"]["title"])
    return out


def _bounded_rule(path) -> tuple:
    """(title, exact) by the documented rule of a first list (decision 0016), restated over whole rows /
    frames.  Raw JSONL bigger than ``WINDOW + TAIL``: the last title of a row starting in the last ``TAIL``
    bytes (exact), else of a row lying whole in the head region or starting there with its type and
    ending within ``MIDDLE_OVERLAP`` bytes after it (provisional).  zstd bigger than ``ZSTD_WINDOW +
    ZSTD_TAIL``: the last title in the frames starting in the last ``ZSTD_TAIL`` bytes (when none does:
    in the last frame, when it starts in the last ``ZSTD_FIRST_FRAME`` bytes) (exact), else in
    the first frame after the header and the frames lying whole in the head region (provisional unless
    those frames reach the tail's first frame).  A smaller file: its last title (exact)."""
    from app.log.source.zstdlib import zstd
    data = path.read_bytes()
    if not path.name.endswith(".zstd"):
        w, at, rows = titles.WINDOW, 0, []
        for line in data.splitlines(keepends=True):
            rows.append((at, at + len(line), _titles_of(line) if line.endswith(b"\n") else []))
            at += len(line)
        if len(data) <= w + titles.TAIL:
            return ([t for _a, _b, ts in rows for t in ts] or [None])[-1], True
        tail = [t for a, _b, ts in rows if a >= len(data) - titles.TAIL for t in ts]
        if tail:
            return tail[-1], True
        head = [t for a, b, ts in rows if b <= w or (a < w and b <= w + titles.MIDDLE_OVERLAP and
                                                    b"session/title" in data[a:w]) for t in ts]
        return (head or [None])[-1], False
    w, at, frames = titles.ZSTD_WINDOW, 0, []
    while at < len(data):
        n = zstd.get_frame_size(data[at:])
        frames.append((at, at + n, _titles_of(zstd.decompress(data[at:at + n]))))
        at += n
    if len(data) <= w + titles.ZSTD_TAIL:
        return ([t for _a, _b, ts in frames[1:] for t in ts] or [None])[-1], True
    tail = [(a, ts) for a, _b, ts in frames[1:] if a >= len(data) - titles.ZSTD_TAIL] or \
        [(a, ts) for a, _b, ts in frames[-1:] if a >= len(data) - titles.ZSTD_FIRST_FRAME]   # (a big last frame)
    if [t for _a, ts in tail for t in ts]:
        return [t for _a, ts in tail for t in ts][-1], True
    head = [(b, ts) for k, (_a, b, ts) in enumerate(frames[1:]) if (k == 0 and b - _a <= titles.ZSTD_FIRST_FRAME)
            or b <= w]
    exact = bool(head and tail and head[-1][0] >= tail[0][0])
    return ([t for _b, ts in head for t in ts] or [None])[-1], exact


def test_list_titles_agree_with_inspect_on_every_fixture_and_demo_session():
    """Every dsh, dsh-next and demo session (raw JSONL and zstd): the list's title is inspect's and
    exact for every file within the head and tail regions (nearly all fixtures); a bigger one follows
    the bounded rule (exact or provisional as it says), and ``--exact-titles`` gives inspect's."""
    checked, titled, zst, big = 0, 0, 0, 0
    for p in ALL_LOGS:
        infos = [s for s in discover(str(p), titles=True).sessions if s.format != "sqlite"]
        if not infos:
            continue
        info, = infos
        want = _inspect_title(p)
        w = titles.ZSTD_WINDOW + titles.ZSTD_TAIL if info.format == "zstd" else titles.WINDOW + titles.TAIL
        rule = _bounded_rule(p)
        if info.size > w:
            big += 1
        else:
            assert rule == (want, True), p
        assert (info.title, info.title_exact) == rule and info.title == quick_title(info), p
        if info.title_exact:
            assert info.title == want, p
        title_cache._cache = None
        exact = [s for s in discover(str(p), titles=True, exact=True).sessions if s.format != "sqlite"][0]
        assert exact.title == want and exact.title_exact, p
        checked += 1
        titled += want is not None
        zst += info.format == "zstd" and want is not None
    assert checked >= 60 and titled >= 25 and zst >= 8, (checked, titled, zst, big)


def _title_row(text: str) -> bytes:
    return json.dumps({"type": "session/title", "seq": 10 ** 7, "time": 1, "data": {
        "title": text, "messageSeqs": [], "source": {"kind": "user"}}}, separators=(",", ":")).encode()


def test_zstd_titles_of_a_big_log_tail_head_and_middle(tmp_path):
    """zstd bigger than the head and tail regions: a title in the last frames wins, exact; else the
    first frame's after the header (read whole though bigger than the head region), provisional: a
    rename in the middle is not read by a first list (decision 0016) but by ``--exact-titles``,
    which gives inspect's title."""
    src = tmp_path / "src.jsonl"
    write_jsonl(str(src), SessionSynth(seed=5), target_bytes=3 << 20)
    head, rest = src.read_bytes().split(b"\n", 1)
    rows = [r for r in rest.split(b"\n")[:-1] if b'"type":"session/title"' not in r]
    rows.insert(5, _title_row("Head title"))
    p = tmp_path / "s" / "session.jsonl.zstd"
    p.parent.mkdir()

    def write(rows, first=64):
        batches = [b"\n".join(rows[:first]) + b"\n"] + \
            [b"\n".join(rows[i:i + 64]) + b"\n" for i in range(first, len(rows), 64)]
        p.write_bytes(encode_session(head, batches))

    def listed(exact=False):
        title_cache._cache = None
        s = discover(str(p), titles=True, exact=exact).sessions[0]
        return s.title, s.title_exact
    write(rows, first=400)
    assert p.stat().st_size > 4 * (titles.ZSTD_WINDOW + titles.ZSTD_TAIL)
    from app.log.source.zstdlib import zstd
    first = zstd.get_frame_size(p.read_bytes()[zstd.get_frame_size(p.read_bytes()):])
    assert titles.ZSTD_WINDOW < first < titles.ZSTD_FIRST_FRAME         # the first frame is cut by the window
    assert listed() == ("Head title", False) == (_inspect_title(p), False) == (_bounded_rule(p)[0], False)
    assert listed(exact=True) == ("Head title", True)
    write(rows[:len(rows) // 2] + [_title_row("Middle")] + rows[len(rows) // 2:])
    assert listed() == ("Head title", False) == _bounded_rule(p)
    assert listed(exact=True) == ("Middle", True) == (_inspect_title(p), True)
    write(rows + [_title_row("Renamed at the end")])
    assert listed() == ("Renamed at the end", True) == (_inspect_title(p), True)
    # a torn last frame: its complete rows count (as a reader recovers them), the cut row does not
    from app.log.source.zstdframes import encode_frame
    with open(p, "ab") as f:
        f.write(encode_frame(_title_row("torn") + b"\n")[:-9])
    assert listed() == ("Renamed at the end", True) == listed(exact=True)
    # a small file (within the two regions) is decoded whole: a title in its middle is seen, exact
    write(rows[:40] + [_title_row("Small middle")] + rows[40:80], first=20)
    assert p.stat().st_size <= titles.ZSTD_WINDOW + titles.ZSTD_TAIL
    assert listed() == ("Small middle", True) == (_inspect_title(p), True)


# --------------------------------------------------------------------------- one open per session

def _home(tmp_path, n=24):
    home = tmp_path / "home"
    for i in range(n):
        src = tmp_path / f"proto{i % 4}.jsonl"
        if not src.exists():
            write_jsonl(str(src), SessionSynth(seed=50 + i % 4, version=4 if i % 2 else 0), turns=2)
        head, rest = src.read_bytes().split(b"\n", 1)
        hdr = json.loads(head)
        hdr["id"] = f"s{i:03d}"
        d = home / "sessions" / "--home-dev-p--" / hdr["id"]
        d.mkdir(parents=True)
        name = "session.v4.jsonl" if hdr["version"] == 4 else "session.jsonl"
        line = json.dumps(hdr).encode()
        if i % 3 == 0:
            body = rest.split(b"\n")[:-1]
            (d / (name + ".zstd")).write_bytes(encode_session(line, [b"\n".join(body) + b"\n"]))
        else:
            (d / name).write_bytes(line + b"\n" + rest)
    return home


def test_list_opens_each_session_once_and_none_when_cached(tmp_path, monkeypatch):
    home = _home(tmp_path)
    opened: list = []
    real_open = os.open

    def counting_open(path, *a, **k):
        if "sessions" in str(path):
            opened.append(str(path))
        return real_open(path, *a, **k)
    monkeypatch.setattr(os, "open", counting_open)
    first = discover(str(home), titles=True)
    assert len(first.sessions) == 24 and all(s.title for s in first.sessions)
    assert sorted(opened) == sorted(s.path for s in first.sessions)          # one open each, header + title
    title_cache.save()
    monkeypatch.setattr(title_cache, "_cache", None)                             # a new process: the saved cache
    opened.clear()
    again = discover(str(home), titles=True)
    assert opened == []
    assert [(s.id, s.title, s.header, s.problems) for s in again.sessions] == \
        [(s.id, s.title, s.header, s.problems) for s in first.sessions]
    # a changed file is read again (its revision changed), the others are not
    k = next(i for i, s in enumerate(first.sessions) if s.path.endswith(".jsonl"))
    p = first.sessions[k].path
    with open(p, "ab") as f:
        f.write(json.dumps({"type": "session/title", "seq": 10 ** 6, "time": 1,
                            "data": {"title": "New", "messageSeqs": [], "source": {"kind": "user"}}}).encode() + b"\n")
    opened.clear()
    third = discover(str(home), titles=True)
    assert opened == [p] and third.sessions[k].title == "New"


def test_window_listing_headers_first_then_titles_and_nothing_opened_once_cached(tmp_path, monkeypatch):
    """The window's path (discover without titles, then session_title per session in a worker):
    headers first; once the cache holds the revisions, neither step opens a session."""
    home = _home(tmp_path, 8)
    opened: list = []
    real_open = os.open

    def counting_open(path, *a, **k):
        if "sessions" in str(path):
            opened.append(str(path))
        return real_open(path, *a, **k)
    monkeypatch.setattr(os, "open", counting_open)
    heads = discover(str(home))
    assert len(opened) == 8 and all(not s.title_read for s in heads.sessions)
    got = {s.path: titles.session_title(s) for s in heads.sessions}
    assert all(got.values())
    title_cache.save()
    monkeypatch.setattr(title_cache, "_cache", None)
    opened.clear()
    again = discover(str(home))
    assert {s.path: titles.session_title(s) for s in again.sessions} == got and opened == []
    assert {s.path: s.title for s in discover(str(home), titles=True).sessions} == got and opened == []


def test_list_cli_first_and_cached_give_the_same_rows(tmp_path):
    home = _home(tmp_path, 12)
    rc, out1, _ = run("list", home, "--json")
    title_cache._cache = None
    rc2, out2, _ = run("list", home, "--json")
    assert rc == rc2 == 0
    rows1, rows2 = json.loads(out1)["sessions"], json.loads(out2)["sessions"]
    assert rows1 == rows2 and len(rows1) == 12 and all(r["title"] for r in rows1)
    assert {r["format"] for r in rows1} == {"jsonl", "zstd"} and {r["formatVersion"] for r in rows1} == {0, 4}


def test_a_cache_entry_of_another_shape_is_ignored(tmp_path):
    home = _home(tmp_path, 3)
    want = [(s.id, s.title) for s in discover(str(home), titles=True).sessions]
    title_cache.save()
    f = tmp_path / "cache" / "titles.json"
    obj = json.loads(f.read_bytes())
    for k in obj["titles"]:
        obj["titles"][k][5] = ["not", "a", "head"]
    f.write_text(json.dumps(obj))
    title_cache._cache = None
    assert [(s.id, s.title) for s in discover(str(home), titles=True).sessions] == want


# --------------------------------------------------------------------------- fork

def _legacy_log(tmp_path, size=6 << 20):
    """A v0 synth log with a legacy-shape turn/end (reason "aborted", spec §1.7) every ~1 MB."""
    src = tmp_path / "src.jsonl"
    write_jsonl(str(src), SessionSynth(seed=21), target_bytes=size)
    p = tmp_path / "store" / "session.jsonl"
    p.parent.mkdir()
    at, done, n = 0, set(), 0
    with open(src, "rb") as f, open(p, "wb") as o:
        for line in f:
            k = at // (1 << 20)
            if k not in done and line.startswith(b'{"type":"turn/end"'):
                obj = json.loads(line)
                obj["data"]["reason"] = "aborted"
                line = json.dumps(obj, separators=(",", ":")).encode() + b"\n"
                done.add(k)
                n += 1
            o.write(line)
            at += len(line)
    return p, n


def test_v0_fork_copies_the_bytes_around_legacy_rows_as_ranges(tmp_path, monkeypatch):
    p, n = _legacy_log(tmp_path)
    assert n >= 4
    r = LogReader.open(str(p))
    cached_index(r)
    assert sum(r.index.legacy) >= n                       # those segments are flagged
    copied = []
    real = forking.FileRange

    class Spy(real):
        def copy_into(self, out_fd):
            copied.append(len(self))
            return super().copy_into(out_fd)
    monkeypatch.setattr(forking, "FileRange", Spy)
    res = forking.fork(r, None, child_id="child-ranges")
    written = os.path.getsize(res["child"])
    # everything but the converted rows (and the header and end-seed) went through the kernel copy
    assert sum(copied) > written - 64 * 1024 and len(copied) >= n
    assert "places" in res["verified"] and "converted row" in res["verified"]
    # the child equals the one built row by row (the index's flags removed: every row read and written)
    r2 = LogReader.open(str(p))
    cached_index(r2)
    r2.index.legacy = None
    res2 = forking.fork(r2, None, out_store=str(tmp_path / "other"), child_id="child-ranges", verify="full")
    a = open(res["child"], "rb").read().split(b"\n", 1)[1]
    b = open(res2["child"], "rb").read().split(b"\n", 1)[1]
    end_a, end_b = a.rsplit(b"\n", 2)[0], b.rsplit(b"\n", 2)[0]          # (the end-seed row has a time)
    assert end_a == end_b and end_a.count(b'"reason":{"kind":"aborted","reason":{"kind":"legacy"}}') >= n
    child = LogReader.open(res["child"])
    parent = LogReader.open(str(p))
    pe = {e.seq: e for e in parent.events()}
    ce = child.events()[:res["seedLength"]]
    assert [(e.seq, e.type, e.data) for e in ce] == [(s, pe[s].type, pe[s].data) for s in range(res["seedLength"])]


def test_fork_at_past_the_last_seq_is_refused(tmp_path):
    src = NEXT / "0217po+deepseek-harness@f4a32dbd0a" / "snapshots" / "session" / "tool-call-turn"
    p = tmp_path / "s" / "session.v4.jsonl"
    p.parent.mkdir()
    shutil.copy(src / "session.v4.jsonl", p)
    last = LogReader.open(str(p)).build_index().last
    for extra in ([], ["--preview"]):
        rc, out, err = run("fork", p, "--at", last + 1, "--out", tmp_path / "out", *extra)
        assert rc == 2 and "past the last event" in err and f"(seq {last})" in err, (rc, out, err)
    assert not (tmp_path / "out").exists()
    rc, out, err = run("fork", p, "--at", last, "--out", tmp_path / "out", "--json")
    assert rc == 0 and json.loads(out)["seedLength"] >= 1


def test_discovery_reads_a_header_bigger_than_the_first_read(tmp_path):
    p = tmp_path / "s" / "session.jsonl"
    p.parent.mkdir()
    hdr = {"type": "session", "version": 0, "id": "big", "cwd": "/x" * (discovery_headers.HEAD_READ), "delegationDepth": 0}
    p.write_bytes(json.dumps(hdr).encode() + b"\n")
    info = discover(str(p), titles=True).sessions[0]
    assert info.id == "big" and info.cwd == hdr["cwd"] and info.title is None


# --------------------------------------------------------------------------- round 4: workers, decoder, copy steps

def test_reads_shared_with_a_forked_worker_equal_the_reads_here(tmp_path, monkeypatch):
    """The CLI's forked share of the reads gives exactly the inline results, in order (headers,
    titles, unreadable files and non-session files alike)."""
    home = _home(tmp_path, 24)
    files = sorted(str(p) for p in (home / "sessions").rglob("session*"))
    (home / "sessions" / "junk.jsonl").write_bytes(b"not a header\n")
    files.append(str(home / "sessions" / "junk.jsonl"))
    files.append(str(home / "sessions" / "gone.jsonl"))                 # vanished after the walk
    jobs = [(f, os.path.getsize(f) if os.path.exists(f) else 0) for f in files]
    monkeypatch.setattr(discovery_headers, "PARALLEL_MIN", 4)
    here = discovery_headers.read_many(jobs, True, 0)
    shared = discovery_headers.read_many(jobs, True, 3)
    assert shared == here
    assert here[-2] is None and isinstance(here[-1], str) and "cannot read" in here[-1]
    assert all(isinstance(r, tuple) and r[3] and r[4] for r in here[:-2])
    # the listing through the workers equals the one read here
    inline = discover(str(home), titles=True)
    title_cache._cache = None
    forked = discover(str(home), titles=True, workers=2)
    assert [(s.path, s.id, s.title, s.header, s.problems) for s in forked.sessions] == \
        [(s.path, s.id, s.title, s.header, s.problems) for s in inline.sessions]


def test_sized_decoder_decodes_runs_and_refuses_what_libzstd_refuses():
    """One reused context: a run of frames decodes to their concatenation; a frame whose content
    outgrows its declared size, a corrupt checksum and a wrong total are errors, and the context
    still decodes the next run."""
    from app.log.source.zstdlib import zstd

    from app.log.source.zstdframes import FrameError, encode_frame, sized_decoder
    dec = sized_decoder()
    assert dec is not None
    texts = [b'{"type":"x","seq":%d}\n' % i * (i + 1) for i in range(40)]
    run = b"".join(encode_frame(t) for t in texts)
    buf = b"junk" + run + b"tail"
    assert dec.decode(buf, 4, 4 + len(run), sum(map(len, texts))) == b"".join(texts) == zstd.decompress(run)
    with pytest.raises(FrameError):
        dec.decode(buf, 4, 4 + len(run), sum(map(len, texts)) - 1)
    bad = bytearray(run)
    bad[len(bad) - 1] ^= 0xFF                      # the last frame's checksum
    with pytest.raises(FrameError):
        dec.decode(bytes(bad), 0, len(bad), sum(map(len, texts)))
    big = b"y" * 300_000
    assert dec.decode(encode_frame(big), 0, len(encode_frame(big)), len(big)) == big
    assert dec.decode(run, 0, len(run), sum(map(len, texts))) == b"".join(texts)
    with pytest.raises(ValueError):
        dec.decode(run, 0, len(run) + 1, 10)


def test_file_range_copies_in_steps_at_the_output_offset(tmp_path, monkeypatch):
    """The kernel copy in small steps (writeback started after each) lands every byte of the range
    after what the output already holds."""
    from app.store import publish
    monkeypatch.setattr(publish, "COPY_STEP", 4096)
    src = tmp_path / "src"
    data = os.urandom(50_000)
    src.write_bytes(data)
    out = tmp_path / "out"
    fd = os.open(src, os.O_RDONLY)
    try:
        with open(out, "wb") as f:
            f.write(b"head\n")
            f.flush()
            publish.FileRange(fd, 123, 45_678).copy_into(f.fileno())
            f.write(b"tail\n")
    finally:
        os.close(fd)
    assert out.read_bytes() == b"head\n" + data[123:45_678] + b"tail\n"


def test_legacy_rows_by_the_row_heads_equal_the_full_probe(tmp_path):
    """The fork's legacy candidates from the index's row-head scan are exactly the rows the probe of
    every row finds, in every segment of a log with legacy rows; a segment with a row in another key
    order (or not ending a row) is left to the full probe."""
    p, n = _legacy_log(tmp_path, size=3 << 20)
    data = p.read_bytes()
    body = data[data.index(b"\n") + 1:]
    segs, at = [], 0
    while at < len(body):                              # ~256 KB pieces cut at row ends
        cut = body.find(b"\n", at + (256 << 10))
        cut = len(body) if cut < 0 else cut + 1
        segs.append(body[at:cut])
        at = cut
    found = 0
    for seg in segs:
        fast = forking._legacy_by_heads(seg, len(seg))
        assert fast is not None and fast == forking._legacy_by_probe(seg, len(seg))
        found += len(fast)
    assert found >= n
    row = next(r for r in body.split(b"\n") if b'"reason":"aborted"' in r)
    obj = json.loads(row)
    moved = json.dumps({"seq": obj["seq"], **obj}, separators=(",", ":")).encode()    # seq before type
    seg = body[:4096].rsplit(b"\n", 1)[0] + b"\n" + moved + b"\n"
    assert forking._legacy_by_heads(seg, len(seg)) is None
    assert forking._legacy_by_heads(seg, len(seg) - 1) is None
    assert len(forking._legacy_by_probe(seg, len(seg))) >= 1

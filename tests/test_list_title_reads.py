"""Issue 15, the session list's titles: what is read and decoded for a title, and hostile frames.

zstd: the chain of frames in the tail window is decoded first and the frames before it only when it
holds no title, each frame once; a title row counts only when it lies in one frame (as ``inspect``
reads it); a frame that does not decode is named among the session's problems and the other
sessions are listed as before.  Raw JSONL: read backwards from the end, each byte once (plus the
rows completing a read), stopping at the first read holding a title.  The reads are shared between
processes by the work they take."""
from __future__ import annotations

import contextlib
import io
import json
import random

import pytest
from app.log.source.zstdlib import zstd

from app.cli.main import main
from app.log.source import zstdframes
from app.log.source.zstdframes import encode_frame
from app.store import discovery_headers, title_cache, titles
from app.store.discovery import discover
from app.tools.synth import SessionSynth, write_jsonl
from test_list_fork_speed import _bounded_rule  # (the documented rule of a first list, restated)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(title_cache, "_cache", None)
    monkeypatch.setattr(title_cache, "_dirty", False)


def run(*argv) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue()


def _inspect_title(path) -> object:
    rc, out = run("inspect", path, "--json")
    assert rc == 0
    return json.loads(out).get("title")


def _title_row(text: str) -> bytes:
    return json.dumps({"type": "session/title", "seq": 10 ** 7, "time": 1, "data": {
        "title": text, "messageSeqs": [], "source": {"kind": "user"}}}, separators=(",", ":")).encode()


def untitled_rows(tmp_path_factory, seed: int, size: int) -> tuple[bytes, list]:
    """(header line, body rows without their titles) of a generated v0 log of about ``size`` bytes."""
    src = tmp_path_factory.mktemp("src") / "src.jsonl"
    write_jsonl(str(src), SessionSynth(seed=seed), target_bytes=size)
    head, rest = src.read_bytes().split(b"\n", 1)
    return head, [r for r in rest.split(b"\n")[:-1] if b'"type":"session/title"' not in r]


@pytest.fixture(scope="module")
def synth_rows(tmp_path_factory):
    """(header line, body rows without their titles) of a ~1.5 MB generated v0 log."""
    return untitled_rows(tmp_path_factory, 11, 1_500_000)


def _write_zstd(path, head: bytes, rows: list, sizes) -> list:
    """A zstd session of ``rows`` in frames of ``sizes(k)`` rows; returns [(start, end, plaintext)]
    of the frames after the header frame."""
    frames, at, k = [], 0, 0
    while at < len(rows):
        n = sizes(k)
        frames.append(b"\n".join(rows[at:at + n]) + b"\n")
        at, k = at + n, k + 1
    path.parent.mkdir(parents=True, exist_ok=True)
    blob, spans = [encode_frame(head + b"\n")], []
    pos = len(blob[0])
    for text in frames:
        f = encode_frame(text)
        spans.append((pos, pos + len(f), text))
        blob.append(f)
        pos += len(f)
    path.write_bytes(b"".join(blob))
    return spans


class _Decoded:
    """Records every run the reused libzstd context decodes for a title (as (start, stop) of the
    buffer it was given and the plaintext size)."""

    def __init__(self, monkeypatch):
        self.runs: list = []
        real = zstdframes.SizedDecoder.decode_into

        def decode_into(dec, src, start, stop, total, out):
            self.runs.append((len(src), start, stop, total))
            return real(dec, src, start, stop, total, out)
        monkeypatch.setattr(zstdframes.SizedDecoder, "decode_into", decode_into)

    @property
    def plaintext(self) -> int:
        return sum(r[3] for r in self.runs)


def test_zstd_title_in_the_tail_decodes_only_the_tail_frames(tmp_path, monkeypatch, synth_rows):
    """A rename in the tail region: exact, and nothing before the tail's frames is decoded."""
    head, rows = synth_rows
    p = tmp_path / "s" / "session.jsonl.zstd"
    body = rows[:600]
    spans = _write_zstd(p, head, body[:5] + [_title_row("First")] + body[5:] + [_title_row("Renamed")],
                        lambda k: 16)
    size = p.stat().st_size
    assert size > 2 * (titles.ZSTD_WINDOW + titles.ZSTD_TAIL)
    dec = _Decoded(monkeypatch)
    info = discover(str(p), titles=True).sessions[0]
    assert (info.title, info.title_exact) == ("Renamed", True) and info.title == _inspect_title(p)
    tail = [s for s in spans if s[0] >= size - titles.ZSTD_TAIL]
    assert 1 <= len(tail) < len(spans)
    assert len(dec.runs) == 1 and dec.plaintext == sum(len(t) for _a, _b, t in tail)      # nothing before them


def test_zstd_title_in_the_head_decodes_the_head_and_tail_frames_only(tmp_path, monkeypatch, synth_rows):
    """No title in the tail region: the head region's frames are decoded in one more run, and
    nothing of the middle (the title is provisional); the exact read decodes the middle's frames in
    one more run, each frame once."""
    head, rows = synth_rows
    p = tmp_path / "s" / "session.jsonl.zstd"
    body = rows[:600]
    rng = random.Random(3)
    for sizes in (lambda k: 16, lambda k: rng.randint(1, 3)):
        spans = _write_zstd(p, head, body[:5] + [_title_row("First")] + body[5:], sizes)
        size = p.stat().st_size
        dec = _Decoded(monkeypatch)
        title_cache._cache = None
        info = discover(str(p), titles=True).sessions[0]
        assert (info.title, info.title_exact) == ("First", False) and info.title == _inspect_title(p)
        tail = [t for a, _b, t in spans if a >= size - titles.ZSTD_TAIL]
        first = [t for a, b, t in spans if b <= titles.ZSTD_WINDOW]
        assert len(dec.runs) == 2 and dec.plaintext == sum(map(len, tail + first)) < sum(len(t) for *_x, t in spans)
        dec.runs.clear()
        title_cache._cache = None
        info = discover(str(p), titles=True, exact=True).sessions[0]
        assert (info.title, info.title_exact) == ("First", True)
        assert len(dec.runs) == 2 and dec.plaintext == sum(len(t) for _a, _b, t in spans)        # each frame once


def _frames_of(path) -> list:
    data, at, out = path.read_bytes(), 0, []
    while at < len(data):
        n = zstd.get_frame_size(data[at:])
        out.append((at, at + n, zstd.decompress(data[at:at + n])))
        at += n
    return out


@pytest.mark.parametrize("where", [0.0, 0.3, 0.6, 0.995])
def test_zstd_titles_in_dsh_layout_follow_the_rule(tmp_path, monkeypatch, synth_rows, where):
    """Frames of 1-3 rows (dsh writes one per write batch): the provider's title in the head region, a
    rename at ``where``: a first list shows the rename, exact, when it lies in the tail region, else
    the provider's title, provisional (the bounded rule); the exact read shows inspect's title."""
    head, rows = synth_rows
    p = tmp_path / "s" / "session.jsonl.zstd"
    k = int(len(rows) * where)
    rng = random.Random(int(where * 100))
    body = rows[:4] + [_title_row("Provider")] + rows[4:k] + [_title_row(f"Rename at {where}")] + rows[k:]
    _write_zstd(p, head, body, lambda _k: rng.randint(1, 3))
    info = discover(str(p), titles=True).sessions[0]
    assert (info.title, info.title_exact) == _bounded_rule(p)
    assert (info.title, info.title_exact) == ((f"Rename at {where}", True) if where > 0.99 else
                                              (f"Rename at {where}", False) if where == 0.0 else ("Provider", False))
    title_cache._cache = None
    info = discover(str(p), titles=True, exact=True).sessions[0]
    assert (info.title, info.title_exact) == (_inspect_title(p), True) == (f"Rename at {where}", True)


def test_a_title_row_across_two_frames_is_not_a_title(tmp_path, synth_rows):
    """Spec: a frame ends at a record boundary; a row cut by a frame's end is damage, not a row
    (inspect reads it so).  The list takes the last title lying in one frame."""
    head, rows = synth_rows
    p = tmp_path / "s" / "session.jsonl.zstd"
    p.parent.mkdir()
    for before in ([], [_title_row("Whole")]):
        body = b"".join(r + b"\n" for r in rows[:10] + before + rows[10:30])
        split = _title_row("Split")
        cut = len(body) + split.index(b"Split")
        body += split + b"\n" + b"".join(r + b"\n" for r in rows[30:60])
        p.write_bytes(encode_frame(head + b"\n") + encode_frame(body[:cut]) + encode_frame(body[cut:]))
        title_cache._cache = None
        want = "Whole" if before else None
        assert discover(str(p), titles=True).sessions[0].title == want == _inspect_title(p)
        # the frame-by-frame path (a torn last frame after them) says the same
        with open(p, "ab") as f:
            f.write(encode_frame(_title_row("torn") + b"\n")[:-9])
        title_cache._cache = None
        assert discover(str(p), titles=True).sessions[0].title == want


def _home(tmp_path, synth_rows, n=6):
    head, rows = synth_rows
    home = tmp_path / "home"
    paths = []
    for i in range(n):
        hdr = json.loads(head)
        hdr["id"] = f"s{i:02d}"
        d = home / "sessions" / "--home-dev-p--" / hdr["id"]
        body = rows[:5] + [_title_row(f"Title {i}")] + rows[5:200 + 10 * i]
        line = json.dumps(hdr, separators=(",", ":")).encode()
        if i % 2:
            p = d / "session.jsonl.zstd"
            _write_zstd(p, line, body, lambda _k: 8)
        else:
            p = d / "session.jsonl"
            d.mkdir(parents=True)
            p.write_bytes(line + b"\n" + b"".join(r + b"\n" for r in body))
        paths.append(p)
    return home, paths


def test_a_damaged_frame_in_the_tail_window_is_named_and_the_others_listed(tmp_path, monkeypatch, synth_rows):
    home, paths = _home(tmp_path, synth_rows)
    bad = paths[1]
    frames = _frames_of(bad)
    a, b, _text = frames[-2]                        # a frame in the tail window: its checksum broken
    data = bytearray(bad.read_bytes())
    data[b - 1] ^= 0xFF
    bad.write_bytes(bytes(data))
    assert a >= len(data) - titles.ZSTD_WINDOW
    rc, out = run("list", home, "--json")
    assert rc == 0
    rows = {r["id"]: r for r in json.loads(out)["sessions"]}
    assert sorted(rows) == [f"s{i:02d}" for i in range(6)]
    assert all(rows[f"s{i:02d}"]["title"] == f"Title {i}" and not rows[f"s{i:02d}"]["problems"]
               for i in range(6) if i != 1)
    probs = rows["s01"]["problems"]
    assert len(probs) == 1 and f"zstd frame at byte {a} does not decode" in probs[0]
    assert rows["s01"]["title"] == "Title 1"        # (the frames before the damaged one hold it)
    # the window's path (headers first, then the title in a worker) names it too
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "another-cache"))
    title_cache._cache = None
    info = next(s for s in discover(str(home)).sessions if s.id == "s01")
    assert not info.title_read and info.problems == []
    assert titles.session_title(info) == "Title 1" and info.problems == probs
    # and the cache keeps it: a listing from the cache says the same
    title_cache.save()
    title_cache._cache = None
    again = next(s for s in discover(str(home), titles=True).sessions if s.id == "s01")
    assert again.title == "Title 1" and again.problems == probs


def test_raw_title_reads_the_tail_region_then_backwards_each_byte_once_when_exact(tmp_path, monkeypatch, synth_rows):
    """A first list reads the tail region only (the head came with the header): a title there is
    exact, else the head's is provisional; the exact read goes backwards from the end, each byte
    once, stopping at the last title."""
    head, rows = synth_rows
    p = tmp_path / "s" / "session.jsonl"
    p.parent.mkdir()
    monkeypatch.setattr(titles, "MIDDLE_STEP", 256 << 10)
    reads: list = []
    real = titles._read_into

    def read_into(fd, buf, a, b, head_bytes):
        reads.append((a, b))
        return real(fd, buf, a, b, head_bytes)
    monkeypatch.setattr(titles, "_read_into", read_into)
    body = rows[:5] + [_title_row("First")] + rows[5:]
    p.write_bytes(head + b"\n" + b"".join(r + b"\n" for r in body + [_title_row("Last")]))
    size = p.stat().st_size
    assert size > 4 * titles.MIDDLE_STEP
    info = discover(str(p), titles=True).sessions[0]
    assert (info.title, info.title_exact) == ("Last", True) and info.title == _inspect_title(p)
    assert reads == [(size - titles.TAIL - 1, size)]                   # the tail region only
    reads.clear()
    assert titles.read_title(str(p), size, exact=True) == ("Last", True)
    assert reads == [(size - titles.MIDDLE_STEP - 1, size)]            # the last read only
    p.write_bytes(head + b"\n" + b"".join(r + b"\n" for r in body))
    size = p.stat().st_size
    reads.clear()
    title_cache._cache = None
    info = discover(str(p), titles=True).sessions[0]
    assert (info.title, info.title_exact) == ("First", False) and info.title == _inspect_title(p)
    assert reads == [(size - titles.TAIL - 1, size)]                   # the middle is not read
    reads.clear()
    assert titles.read_title(str(p), size, exact=True) == ("First", True)
    assert reads[0][1] == size and reads[-1][0] == 0                     # back to the start, once each
    assert all(b1 - a0 <= titles.MIDDLE_OVERLAP + 1 for (a0, _b0), (_a1, b1) in zip(reads, reads[1:]))
    assert sum(b - a for a, b in reads) <= size + len(reads) * (titles.MIDDLE_OVERLAP + 1)


def test_a_raw_title_row_across_the_head_window_end_is_seen(tmp_path, synth_rows):
    """A title row that starts in the head region and ends after it is completed by a bounded read
    (the head region's title, provisional: the middle was not read)."""
    head, rows = synth_rows
    p = tmp_path / "s" / "session.jsonl"
    p.parent.mkdir()
    out, at = [head + b"\n"], len(head) + 1
    for r in rows:
        if at + len(r) + 1 > titles.WINDOW - 40:
            break
        out.append(r + b"\n")
        at += len(r) + 1
    name = "Across the window end " + "x" * (titles.WINDOW - at)
    t = _title_row(name)
    out += [t + b"\n"] + [r + b"\n" for r in rows[len(out):]]
    p.write_bytes(b"".join(out))
    assert at < titles.WINDOW < at + len(t) and p.stat().st_size > titles.WINDOW + titles.TAIL
    info = discover(str(p), titles=True).sessions[0]
    assert (info.title, info.title_exact) == (name, False) == (_inspect_title(p), False)


def test_reads_are_shared_by_work_not_by_count():
    """One big session and many small ones: each share gets about half the work, whatever the order."""
    jobs = [("/h/big/session.jsonl", 40 << 20)] + [(f"/h/s{i}/session.jsonl.zstd", 20_000) for i in range(300)] + \
        [(f"/h/r{i}/session.jsonl", 90_000) for i in range(300)]
    shares = discovery_headers._shares(jobs, True, 2)
    assert sorted(shares[0] + shares[1]) == list(range(len(jobs)))
    assert all(s == sorted(s) for s in shares)
    load = [sum(discovery_headers._read_cost(*jobs[i], True) for i in s) for s in shares]
    biggest = max(discovery_headers._read_cost(p, n, True) for p, n in jobs)
    assert abs(load[0] - load[1]) <= biggest
    interleaved = [sum(discovery_headers._read_cost(*jobs[i], True) for i in range(k, len(jobs), 2)) for k in (0, 1)]
    assert abs(load[0] - load[1]) < abs(interleaved[0] - interleaved[1])


def test_a_tail_whose_text_passes_the_bound_is_bounded_not_damage(tmp_path, monkeypatch, synth_rows):
    """A very compressible tail: the frames ending the file are decoded up to ``ZSTD_PLAIN_LIMIT`` of
    text (a later title there is found, exact), the rest is passed over (the head's title then,
    provisional), and none of it is called damage."""
    head, rows = synth_rows
    p = tmp_path / "s" / "session.jsonl.zstd"
    body = rows[:600]
    for where, want in ((0.97, ("Late", True)), (0.3, ("Head", False))):
        k = int(len(body) * where)
        spans = _write_zstd(p, head, body[:5] + [_title_row("Head")] + body[5:k] + [_title_row("Late")] + body[k:],
                            lambda _k: 16)
        text = sum(len(t) for _a, _b, t in spans)
        monkeypatch.setattr(titles, "ZSTD_TAIL", p.stat().st_size // 2)      # (a tail region of half the file)
        monkeypatch.setattr(titles, "ZSTD_PLAIN_LIMIT", text // 4)
        dec = _Decoded(monkeypatch)
        title_cache._cache = None
        info = discover(str(p), titles=True).sessions[0]
        assert (info.title, info.title_exact) == want and info.problems == []
        assert dec.plaintext <= 2 * titles.ZSTD_PLAIN_LIMIT
        monkeypatch.undo()
        monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
        title_cache._cache = None
        assert discover(str(p), titles=True, exact=True).sessions[0].title == "Late" == _inspect_title(p)


def test_list_leaves_the_collector_as_it_found_it(tmp_path, synth_rows):
    import gc
    home, _paths = _home(tmp_path, synth_rows, 2)
    assert gc.isenabled()
    assert run("list", home, "--json")[0] == 0 and gc.isenabled()

"""The byte-level index equals the exact one; the persistent index is reused, extended and invalidated."""
from __future__ import annotations

import json
import os
import random
import shutil

import pytest

from app.log.index.fastindex import IndexBuilder, scan
from app.log.index.reader import LogReader
from app.log.source.sources import RawJsonlSource
from app.log.source.zstdframes import encode_frame
from app.store import indexcache
from app.store.indexcache import cached_index
from app.tools.synth import SessionSynth, batches, write_jsonl
from fixtures_util import fast_sample, rel, session_files

ARRAYS = ("seg_pos", "seg_end", "first_seq", "last_seq", "line0", "rows", "mark_seq", "mark_code")


def same_index(a, b) -> bool:
    return all(list(getattr(a, n)) == list(getattr(b, n)) for n in ARRAYS) and \
        (a.monotonic, a.events, a.last, a.contiguous_through) == (b.monotonic, b.events, b.last, b.contiguous_through)


def same_meaning(a, b) -> bool:
    """Equal as an index (segments may be cut differently after an extension)."""
    return (a.monotonic, a.events, a.last, a.contiguous_through) == (b.monotonic, b.events, b.last,
                                                                      b.contiguous_through) \
        and list(a.mark_seq) == list(b.mark_seq) and list(a.mark_code) == list(b.mark_code) \
        and sum(a.rows) == sum(b.rows) and a.seg_end[-1] == b.seg_end[-1]


def fast_and_exact(r):
    """(exact index, its problems, builder fed the source's segments, its problems); a raw JSONL
    file is also read by the scan itself (its own window, the same segments) and must agree."""
    pa, pb = [], []
    exact = r.build_index_exact(problems=pa)
    b = scan(r, IndexBuilder(problems=pb), r.source.forward())
    if r.source.kind == "jsonl":
        pc: list = []
        c = scan(r, IndexBuilder(problems=pc))
        assert same_index(exact, c.idx) and [str(p) for p in pa] == [str(p) for p in pc]
        assert (c.fast_segments, c.exact_segments) == (b.fast_segments, b.exact_segments)
    return exact, pa, b, pb


def check_locates(r, idx, seqs):
    for s in seqs:
        i = idx.locate(s)
        assert i is not None, s
        got = []
        for seg in r.source.forward(idx.seg_pos[i]):          # the segment's rows, decoded exactly
            got += [it.seq for it in r.decode_segment(seg) if type(it).__name__ == "Event"
                    and (it.pos if isinstance(it.pos, int) else it.pos[0]) < idx.seg_end[i]]
            if seg.end >= idx.seg_end[i]:
                break
        assert s in got and got[0] == idx.first_seq[i] and got[-1] == idx.last_seq[i]


def synth_log(path, size=300_000, seed=3, **kw):
    write_jsonl(str(path), SessionSynth(seed=seed), target_bytes=size, **kw)
    return path


def synth_zstd(path, size=300_000, seed=5, torn=False):
    synth = SessionSynth(seed=seed)
    frames = []                                   # (the first batch is the header line)
    for lines in batches(synth, target_bytes=size, crash="torn" if torn else False):
        plain = b"".join(lines)
        f = encode_frame(plain)
        if not plain.endswith(b"\n"):
            f = f[:max(4, len(f) // 2)]
        frames.append(f)
    path.write_bytes(b"".join(frames))
    return path


# --------------------------------------------------------------------------- fast == exact

@pytest.mark.parametrize("path", fast_sample(session_files(), spread=3), ids=rel)
def test_byte_level_index_equals_exact_scan_on_every_fixture(path):
    r = LogReader(RawJsonlSource(str(path), block=2048))       # several segments even for small logs
    exact, pa, b, pb = fast_and_exact(r)
    assert same_index(exact, b.idx)
    assert [str(p) for p in pa] == [str(p) for p in pb]


def test_byte_level_index_is_used_and_exact_on_synthetic_logs(tmp_path):
    p = synth_log(tmp_path / "s.jsonl", 2_000_000)
    r = LogReader(RawJsonlSource(str(p), block=1 << 16))
    exact, pa, b, pb = fast_and_exact(r)
    assert same_index(exact, b.idx) and pa == pb == []
    assert b.exact_segments == 0 and b.fast_segments == len(exact) > 20      # every segment at byte level
    assert r.build_index() is r.index and same_index(r.index, exact)          # build_index takes this path
    check_locates(r, exact, random.Random(1).sample(range(exact.events), 30))


def _hostile_variants(lines: list) -> dict:
    """Defects a byte-level scan must not paper over (lines: the stored rows after the header)."""
    mid = len(lines) // 2
    scalar = next(i for i in range(mid, len(lines)) if b'"seq":' in lines[i][:60])
    out = {}
    out["gap"] = lines[:scalar] + lines[scalar + 1:]
    out["dup"] = lines[:scalar + 1] + [lines[scalar]] + lines[scalar + 1:]
    sw = lines[:]
    sw[scalar], sw[scalar + 1] = sw[scalar + 1], sw[scalar]
    out["swapped"] = sw
    wrong = lines[:]
    obj = json.loads(wrong[scalar])
    obj["seq"] += 7
    wrong[scalar] = json.dumps(obj, separators=(",", ":")).encode()
    out["one-wrong-seq"] = wrong
    torn = lines[:]
    torn[scalar] = torn[scalar][:len(torn[scalar]) // 2]
    out["torn-row-mid-log"] = torn
    reorder = lines[:]
    obj = json.loads(reorder[scalar])
    reorder[scalar] = json.dumps({"seq": obj.pop("seq"), **obj}, separators=(",", ":")).encode()
    out["other-key-order"] = reorder
    out["blank-line"] = lines[:scalar] + [b""] + lines[scalar:]
    return out


@pytest.mark.parametrize("kind", ["gap", "dup", "swapped", "one-wrong-seq", "torn-row-mid-log", "other-key-order",
                                  "blank-line"])
def test_byte_level_index_falls_back_exactly_on_defects(tmp_path, kind):
    p = synth_log(tmp_path / "s.jsonl", 400_000)
    head, *rest = p.read_bytes().split(b"\n")
    lines = [l for l in rest if l]
    bad = _hostile_variants(lines)[kind]
    q = tmp_path / "h.jsonl"
    q.write_bytes(head + b"\n" + b"\n".join(bad) + b"\n")
    r = LogReader(RawJsonlSource(str(q), block=1 << 15))
    exact, pa, b, pb = fast_and_exact(r)
    assert same_index(exact, b.idx)
    assert [str(x) for x in pa] == [str(x) for x in pb]
    assert b.exact_segments >= 1 and b.fast_segments >= 1
    if kind not in ("other-key-order", "blank-line"):      # (msgspec skips blank lines, as before)
        assert exact.contiguous_through < exact.last        # the defect is in the index as it should be


@pytest.mark.parametrize("torn", [False, True])
def test_byte_level_index_on_zstd_frames(tmp_path, torn):
    p = synth_zstd(tmp_path / "session.jsonl.zstd", 600_000, torn=torn)
    r = LogReader.open(str(p))
    exact, pa, b, pb = fast_and_exact(r)
    assert same_index(exact, b.idx) and [str(x) for x in pa] == [str(x) for x in pb]
    assert b.fast_segments > 10 and b.exact_segments == (1 if torn else 0)


# --------------------------------------------------------------------------- persistent cache

def fresh(p):
    r = LogReader.open(str(p))
    return r, r.build_index_exact()


def test_cached_index_equals_a_fresh_one(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    p = synth_log(tmp_path / "s.jsonl", 1_500_000)
    r1 = LogReader.open(str(p))
    idx1, st1 = cached_index(r1)
    assert st1 == "built" and r1.index is idx1
    files = list((tmp_path / "cache" / "index").glob("*.idx"))
    assert len(files) == 1
    r2 = LogReader.open(str(p))
    idx2, st2 = cached_index(r2)
    assert st2 == "hit" and idx2 is not idx1
    _, ref = fresh(p)
    assert same_index(idx2, ref) and same_index(idx1, ref)
    check_locates(r2, idx2, [0, ref.events // 2, ref.last])
    # the log is never written; nothing but the one cache file was written
    assert os.listdir(tmp_path / "cache" / "index") == [files[0].name]


def _grow(p, more: bytes):
    with open(p, "ab") as f:
        f.write(more)


@pytest.mark.parametrize("torn_first", [False, True])
@pytest.mark.slow
def test_a_grown_log_extends_the_cached_index(tmp_path, monkeypatch, torn_first):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    full = synth_log(tmp_path / "full.jsonl", 1_200_000).read_bytes()
    cut = full.index(b"\n", len(full) // 2) + 1
    if torn_first:
        cut += 25                                   # a write in progress: half a row
    p = tmp_path / "s.jsonl"
    p.write_bytes(full[:cut])
    r1 = LogReader.open(str(p))
    idx1, st1 = cached_index(r1)
    assert st1 == "built"
    _grow(p, full[cut:])
    r2 = LogReader.open(str(p))
    idx2, st2 = cached_index(r2)
    assert st2 == "extended"
    _, ref = fresh(p)
    assert same_meaning(idx2, ref)
    check_locates(r2, idx2, random.Random(2).sample(range(ref.events), 40))
    # and once more: now a plain hit, still equal
    idx3, st3 = cached_index(LogReader.open(str(p)))
    assert st3 == "hit" and same_index(idx3, idx2)


def test_a_grown_zstd_log_extends_the_cached_index(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    whole = synth_zstd(tmp_path / "w.jsonl.zstd", 500_000)
    r = LogReader.open(str(whole))
    frames_end = r.build_index_exact().seg_end
    cut = frames_end[len(frames_end) // 2]
    p = tmp_path / "session.jsonl.zstd"
    data = whole.read_bytes()
    p.write_bytes(data[:cut] + data[cut:cut + 9])         # and a torn start of the next frame
    assert cached_index(LogReader.open(str(p)))[1] == "built"
    p.write_bytes(data)
    r2 = LogReader.open(str(p))
    idx2, st2 = cached_index(r2)
    assert st2 == "extended"
    assert same_index(idx2, fresh(p)[1])                  # frames are segments: the very same index
    check_locates(r2, idx2, [0, idx2.events // 3, idx2.last])


def test_truncated_replaced_or_rewritten_logs_invalidate_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    full = synth_log(tmp_path / "full.jsonl", 800_000).read_bytes()
    p = tmp_path / "s.jsonl"
    p.write_bytes(full)
    assert cached_index(LogReader.open(str(p)))[1] == "built"
    # truncated (a repair cut the tail): rebuilt, and equal to a fresh scan
    cut = full.index(b"\n", len(full) // 3) + 1
    with open(p, "r+b") as f:
        f.truncate(cut)
    idx, st = cached_index(LogReader.open(str(p)))
    assert st == "built" and same_index(idx, fresh(p)[1])
    # truncated and then grown past the old size with other bytes: the tail check refuses it
    other = synth_log(tmp_path / "other.jsonl", 900_000, seed=11).read_bytes()
    with open(p, "r+b") as f:
        f.truncate(cut - 300)
        f.seek(cut - 300)
        f.write(b"\n".join(other.split(b"\n")[1:]))
    assert os.path.getsize(p) > cut
    idx, st = cached_index(LogReader.open(str(p)))
    assert st == "built" and same_index(idx, fresh(p)[1])
    # replaced by another file at the same path (new inode)
    q = tmp_path / "new.jsonl"
    q.write_bytes(other)
    os.replace(q, p)
    idx, st = cached_index(LogReader.open(str(p)))
    assert st == "built" and same_index(idx, fresh(p)[1])
    assert cached_index(LogReader.open(str(p)))[1] == "hit"
    # rewritten in place, same size, other content (mtime moves): rebuilt
    b = bytearray(p.read_bytes())
    i = b.index(b'"seq":5,')
    b[i:i + 8] = b'"seq":6,'
    p.write_bytes(bytes(b))
    st_ = os.stat(p)
    os.utime(p, ns=(st_.st_atime_ns, st_.st_mtime_ns + 1_000_000))
    idx, st = cached_index(LogReader.open(str(p)))
    assert st == "built" and same_index(idx, fresh(p)[1]) and idx.contiguous_through < idx.last


@pytest.mark.parametrize("damage", ["flipped-byte", "truncated", "foreign", "empty", "older-format"])
def test_corrupt_or_foreign_cache_files_are_ignored_and_rebuilt(tmp_path, monkeypatch, damage):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    p = synth_log(tmp_path / "s.jsonl", 600_000)
    cached_index(LogReader.open(str(p)))
    (f,) = (tmp_path / "cache" / "index").glob("*.idx")
    blob = bytearray(f.read_bytes())
    if damage == "flipped-byte":
        blob[len(blob) // 2] ^= 0x40
    elif damage == "truncated":
        blob = blob[:len(blob) // 2]
    elif damage == "foreign":
        blob = bytearray(json.dumps({"hello": "world"}).encode())
    elif damage == "empty":
        blob = bytearray()
    else:
        blob[len(indexcache.MAGIC) - 2] = 1
    f.write_bytes(bytes(blob))
    assert indexcache.load(bytes(blob)) is None
    idx, st = cached_index(LogReader.open(str(p)))
    assert st == "built" and same_index(idx, fresh(p)[1])
    assert indexcache.load(f.read_bytes()) is not None       # rewritten, sound again


def test_cache_folder_that_cannot_be_written_still_indexes(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(blocker))
    p = synth_log(tmp_path / "s.jsonl", 300_000)
    idx, st = cached_index(LogReader.open(str(p)))
    assert st == "uncached" and same_index(idx, fresh(p)[1])     # (a cache "folder" that is a file: caching off)


def test_index_command_reports_and_reuses(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    from app.cli.main import main
    p = synth_log(tmp_path / "s.jsonl", 700_000)
    assert main(["index", str(p), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["index", str(p), "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    ref = fresh(p)[1]
    turns = sum(1 for e in LogReader.open(str(p)).iter_events() if e.type == "turn/start")
    for obj in (first, second):
        assert set(obj) >= {"seconds", "bytes", "cached", "events", "turns"}
        assert (obj["bytes"], obj["events"], obj["turns"]) == (os.path.getsize(p), ref.events, turns)
    assert (first["cached"], second["cached"]) == (False, True)


NEXT = sorted((REPO_ROOT := __import__("pathlib").Path(__file__).resolve().parents[1]).parent.joinpath(
    "shared", "fixtures", "dsh-next").rglob("*.jsonl"))


@pytest.mark.parametrize("path", fast_sample(NEXT, spread=3), ids=lambda p: "/".join(p.parts[-3:]))
def test_saved_index_of_v1_to_v4_logs_equals_the_exact_scan(tmp_path, monkeypatch, path):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / path.name
    shutil.copy(path, p)
    ref = LogReader.open(str(p)).build_index_exact()
    first = cached_index(LogReader.open(str(p)))
    again = cached_index(LogReader.open(str(p)))
    assert (first[1], again[1]) == ("built", "hit")
    assert same_index(first[0], ref) and same_index(again[0], ref)


@pytest.mark.parametrize("path", fast_sample(session_files(), spread=3), ids=rel)
def test_legacy_flags_of_the_byte_level_scan_equal_the_probe(path):
    """Segments that may hold a legacy-shape row (a fork stores those rows converted, copies the rest)."""
    r = LogReader(RawJsonlSource(str(path), block=2048))
    fast = scan(r, IndexBuilder(legacy=[]), r.source.forward())
    probe: list = []
    for seg in r.source.forward():
        r.scan_segment_rows(seg, [], probe)
    assert list(fast.idx.legacy) == [bool(x) for x in probe]

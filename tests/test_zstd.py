"""zstd session files (spec §1.3, §5): frame scan, source forward/backward, hostile files."""
from __future__ import annotations

import base64
import json
import os
import random
import zlib
from pathlib import Path

import pytest
from app.log.source.zstdlib import zstd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.log.source.sources import SourceChanged, open_source
from app.log.source.zstdframes import (COMPLETE, CORRUPT, MAGIC, TORN, FrameError, decode_frame, decode_torn,
                                encode_frame, encode_session, header_size, iter_frames, scan_frame)
from app.log.source.zstdsource import FrameSegment, ZstdSource

from fixtures_util import fast_sample

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT.parent / "shared" / "fixtures" / "dsh"


def _session_fixtures():
    if not FIXTURES.is_dir():
        return []
    out = []
    for p in sorted(FIXTURES.rglob("*.jsonl")):
        with open(p, "rb") as f:
            first = f.readline()
        try:
            obj = json.loads(first)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("type") == "session":
            out.append(p)
    return out


SESSION_FIXTURES = _session_fixtures()
HEADER = b'{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0}\n'


# --------------------------------------------------------------------------- helpers

def batches_of(lines: list, rng: random.Random, max_batch: int = 12) -> list:
    out, i = [], 0
    while i < len(lines):
        k = rng.randint(1, max_batch)
        out.append(b"".join(lines[i:i + k]))
        i += k
    return out


def convert(raw: bytes, rng: random.Random):
    """raw JSONL -> (zstd bytes, header line, batches)."""
    lines = raw.splitlines(keepends=True)
    batches = batches_of(lines[1:], rng)
    return encode_session(lines[0], batches), lines[0], batches


def frame_starts(blob: bytes) -> list:
    """[(start, end)] of every frame of a well-formed blob."""
    out = []
    for kind, s, e in iter_frames(blob):
        assert kind == COMPLETE
        out.append((s, e))
    return out


def write(tmp_path, blob: bytes, name: str = "session.jsonl.zstd") -> str:
    p = tmp_path / name
    p.write_bytes(blob)
    return str(p)


def key(seg):
    return (seg.pos, seg.end, seg.data, seg.torn, seg.bad)


def assert_consistent(src):
    """backward() from the end is forward() reversed; returns the forward segments."""
    fwd = list(src.forward())
    bwd = list(src.backward())
    assert [key(s) for s in bwd] == [key(s) for s in reversed(fwd)]
    # segments tile the file after the header frame
    at = src.header_end
    for s in fwd:
        if s.pos == 0 and s.end == src.header_end:     # extra lines of the header frame
            continue
        assert s.pos == at
        at = s.end
    assert at == src.size
    return fwd


def random_text_lines(rng: random.Random, n: int, width: int = 200) -> list:
    """Incompressible JSON lines (so frames span several zstd blocks)."""
    return [b'{"type":"x","seq":%d,"data":"%s"}\n' % (i, base64.b64encode(rng.randbytes(width)))
            for i in range(n)]


# --------------------------------------------------------------------------- frames

def test_encode_frame_has_checksum_and_content_size():
    text = b'{"a":1}\n' * 100
    f = encode_frame(text)
    assert f[:4] == MAGIC
    assert f[4] & 4, "content checksum flag"
    assert zstd.get_frame_info(f).decompressed_size == len(text)
    assert decode_frame(f) == text
    assert scan_frame(f, 0) == (COMPLETE, len(f))


def test_scan_frame_every_prefix_is_torn():
    rng = random.Random(5)
    text = b"".join(random_text_lines(rng, 1600))
    f = encode_frame(text)
    assert len(f) > 3 * (1 << 17) // 2        # several blocks
    blob = b"junk" + f
    for cut in list(range(4, 40)) + list(range(40, len(blob), 997)) + [len(blob) - 1]:
        assert scan_frame(blob[:cut], 4) == (TORN, cut), cut
    assert scan_frame(blob, 4) == (COMPLETE, len(blob))


def test_scan_frame_corrupt_cases():
    f = encode_frame(b"hello\n")
    assert scan_frame(b"\x00" + f[1:], 0)[0] == CORRUPT                   # bad magic
    skippable = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"abcd"
    assert scan_frame(skippable, 0)[0] == CORRUPT                         # skippable frames rejected
    for bit in (0x08, 0x10):                                              # reserved descriptor bits
        bad = bytearray(f)
        bad[4] |= bit
        assert scan_frame(bytes(bad), 0)[0] == CORRUPT
    hs = header_size(f[4])
    bad = bytearray(f)
    bad[hs] |= 0x06                                                       # block type 3
    assert scan_frame(bytes(bad), 0) == (CORRUPT, hs)
    assert scan_frame(b"\x28\xb5", 0) == (TORN, 2)                        # < 4 bytes


def test_decode_frame_rejects_bad_checksum_and_trailing_bytes():
    f = encode_frame(b'{"a":1}\n')
    bad = bytearray(f)
    bad[-1] ^= 0xFF
    with pytest.raises(FrameError):
        decode_frame(bytes(bad))
    with pytest.raises(FrameError):
        decode_frame(f + b"x")
    with pytest.raises(FrameError):
        decode_frame(f + f)


def test_decode_torn_keeps_complete_records_only():
    rng = random.Random(7)
    lines = random_text_lines(rng, 3000)
    text = b"".join(lines)
    f = encode_frame(text)
    seen_nonempty = False
    for cut in range(8, len(f), len(f) // 17):
        got = decode_torn(f[:cut])
        assert text.startswith(got)
        assert got == b"" or got.endswith(b"\n")
        seen_nonempty |= bool(got)
    assert seen_nonempty
    assert decode_torn(f) == text


def test_encode_session_rejects_incomplete_batches():
    with pytest.raises(ValueError):
        encode_session(HEADER, [b'{"a":1}'])
    with pytest.raises(ValueError):
        encode_session(HEADER, [b""])
    with pytest.raises(ValueError):
        encode_session(HEADER + b"{}\n", [])


# --------------------------------------------------------------------------- fixtures

def test_fixtures_found():
    if not FIXTURES.is_dir():
        pytest.skip(f"no fixture corpus at {FIXTURES}")
    assert len(SESSION_FIXTURES) > 100


@pytest.mark.parametrize("path", fast_sample(SESSION_FIXTURES, spread=3), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_roundtrip(path, tmp_path):
    raw = path.read_bytes()
    rng = random.Random(zlib.crc32(str(path.relative_to(FIXTURES)).encode()))
    blob, header, batches = convert(raw, rng)
    src = open_source(write(tmp_path, blob))
    try:
        assert isinstance(src, ZstdSource) and src.kind == "zstd"
        assert src.header_raw == header[:-1]
        assert src.header_end == frame_starts(blob)[0][1]
        assert src.problems == []
        fwd = assert_consistent(src)
        assert b"".join(s.data for s in fwd) == raw[len(header):]
        assert [s.data for s in fwd] == batches
        assert not any(s.torn or s.bad for s in fwd)
        # plaintext offsets and line numbers of forward scans
        line = 2
        for s in fwd:
            assert raw[s.text_offset:s.text_offset + len(s.data)] == s.data
            assert s.line0 == line
            line += s.data.count(b"\n")
        # rows: sortable (frame_offset, offset_in_frame) positions in file order
        rows = [r for s in fwd for r in s.split_rows()]
        assert all(r[4] for r in rows)
        poss = [r[0] for r in rows]
        assert poss == sorted(poss) and len(set(poss)) == len(poss)
        assert all(isinstance(p, tuple) and len(p) == 2 for p in poss)
        assert b"".join(r[3] + b"\n" for r in rows) == raw[len(header):]
        assert b"".join(src.stored_bytes()) == blob
    finally:
        src.close()


# --------------------------------------------------------------------------- synthetic sessions

def make_session(tmp_path, n_batches=10, seed=1, big_last=False, name="session.jsonl.zstd"):
    rng = random.Random(seed)
    batches = []
    seq = 0
    for _ in range(n_batches):
        k = rng.randint(1, 6)
        batches.append(b"".join(b'{"type":"x","seq":%d,"time":0,"data":{"t":"%s"}}\n'
                                % (seq + j, rng.randbytes(20).hex().encode()) for j in range(k)))
        seq += k
    if big_last:
        batches.append(b"".join(random_text_lines(rng, 2500)))
    blob = encode_session(HEADER, batches)
    return write(tmp_path, blob, name), blob, batches


def test_backward_from_middle_and_row_pos(tmp_path):
    path, blob, batches = make_session(tmp_path, 20)
    src = ZstdSource(path)
    fwd = list(src.forward())
    mid = fwd[7]
    got = list(src.backward(mid.end))
    assert [key(s) for s in got] == [key(s) for s in reversed(fwd[:8])]
    assert all(s.text_offset == -1 for s in got[:-1])
    assert got[-1].text_offset == len(HEADER) and got[-1].line0 == 2   # the first frame is known
    # forward from a frame start
    again = list(src.forward(mid.pos))
    assert [s.data for s in again] == batches[7:]
    assert isinstance(mid, FrameSegment)
    assert mid.row_pos(5) == (mid.pos, 5)


def test_backward_does_not_scan_whole_file(tmp_path):
    rng = random.Random(3)
    lines = random_text_lines(rng, 20000, width=60)
    batches = batches_of(lines, rng, max_batch=40)
    path = write(tmp_path, encode_session(HEADER, batches))
    src = ZstdSource(path)
    read = []
    orig = src.pread
    src.pread = lambda n, at: (read.append(n), orig(n, at))[1]
    it = src.backward()
    segs = [next(it) for _ in range(3)]
    assert [s.data for s in segs] == batches[::-1][:3]
    assert sum(read) < src.size // 4, (sum(read), src.size)


def test_big_frames_backward(tmp_path):
    rng = random.Random(11)
    batches = [b"".join(random_text_lines(rng, n)) for n in (1500, 10, 3000, 2, 2200)]
    path = write(tmp_path, encode_session(HEADER, batches))
    src = ZstdSource(path)
    fwd = assert_consistent(src)
    assert [s.data for s in fwd] == batches
    assert max(e - s for s, e in frame_starts(Path(path).read_bytes())) > 4 * (1 << 16)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" ") + b"\n"),
                         min_size=1, max_size=8), max_size=12))
def test_property_encode_decode(tmp_path, batch_lines):
    batches = [b"".join(ls) for ls in batch_lines]
    blob = encode_session(HEADER, batches)
    path = write(tmp_path, blob, "prop.jsonl.zstd")
    src = ZstdSource(path)
    try:
        fwd = assert_consistent(src)
        assert b"".join(s.data for s in fwd) == b"".join(batches)
        assert [s.data for s in fwd] == batches
        assert src.problems == []
    finally:
        src.close()


# --------------------------------------------------------------------------- hostile files

def test_torn_final_frame(tmp_path):
    path, blob, batches = make_session(tmp_path, 8, big_last=True)
    frames = frame_starts(blob)
    last_s, last_e = frames[-1]
    last = batches[-1]
    recovered_some = False
    cuts = sorted({last_s + 1, last_s + 3, last_s + 4, last_s + 5, last_s + 9, last_e - 1, last_e - 4}
                  | set(range(last_s + 10, last_e, (last_e - last_s) // 9)))
    for cut in cuts:
        p = write(tmp_path, blob[:cut], f"torn{cut}.jsonl.zstd")
        src = ZstdSource(p)
        fwd = assert_consistent(src)
        assert [s.data for s in fwd[:-1]] == batches[:-1], cut       # nothing else lost
        t = fwd[-1]
        assert t.torn and t.bad is None and (t.pos, t.end) == (last_s, cut)
        assert last.startswith(t.data) and (t.data == b"" or t.data.endswith(b"\n"))
        assert not any(s.torn for s in fwd[:-1])
        assert not any(p.fatal for p in src.problems)
        recovered_some |= bool(t.data)
        if cut - last_s < 4:
            assert t.data == b""
        src.close()
    assert recovered_some


def test_truncated_header_only_and_empty(tmp_path):
    path, blob, _ = make_session(tmp_path, 3)
    hdr_end = frame_starts(blob)[0][1]
    src = ZstdSource(write(tmp_path, blob[:hdr_end], "h.jsonl.zstd"))
    assert src.header_raw == HEADER[:-1] and list(src.forward()) == [] and list(src.backward()) == []
    src = ZstdSource(write(tmp_path, b"", "e.jsonl.zstd"))
    assert src.header_raw == b"" and list(src.forward()) == [] and list(src.backward()) == []
    src = ZstdSource(write(tmp_path, blob[:hdr_end - 2], "th.jsonl.zstd"))
    assert any(p.fatal for p in src.problems)


def test_truncated_under_4_bytes_of_last_frame(tmp_path):
    path, blob, batches = make_session(tmp_path, 6)
    last_s, _ = frame_starts(blob)[-1]
    for k in (1, 2, 3):
        src = ZstdSource(write(tmp_path, blob[:last_s + k], f"t{k}.jsonl.zstd"))
        fwd = assert_consistent(src)
        assert [s.data for s in fwd[:-1]] == batches[:-1]
        assert fwd[-1].torn and fwd[-1].data == b"" and fwd[-1].pos == last_s


@pytest.mark.parametrize("which", [1, 4, 8])
def test_corrupt_middle_frame_payload(tmp_path, which):
    path, blob, batches = make_session(tmp_path, 10, seed=which)
    frames = frame_starts(blob)
    s, e = frames[which + 1]                  # frames[0] is the header
    bad = bytearray(blob)
    hs = header_size(bad[s + 4])
    mid = s + hs + 3 + (e - s - hs - 3) // 2  # inside the first block's payload
    bad[mid] ^= 0x55
    bad[e - 2] ^= 0x01                        # and the checksum
    src = ZstdSource(write(tmp_path, bytes(bad), "c.jsonl.zstd"))
    fwd = assert_consistent(src)
    assert [x.data for x in fwd if not x.bad] == batches[:which] + batches[which + 1:]
    b = [x for x in fwd if x.bad]
    assert len(b) == 1 and (b[0].pos, b[0].end, b[0].data) == (s, e, b"")
    probs = [p for p in src.problems if p.code == "corrupt-frame"]
    assert len(probs) == 1 and probs[0].offset == s and str(s) in probs[0].message and not probs[0].fatal
    # scanning again does not duplicate problems
    list(src.forward())
    assert len([p for p in src.problems if p.code == "corrupt-frame"]) == 1


@pytest.mark.parametrize("how", ["magic", "block-type", "block-size-up", "descriptor"])
def test_corrupt_frame_structure_resyncs(tmp_path, how):
    path, blob, batches = make_session(tmp_path, 10, seed=42)
    frames = frame_starts(blob)
    which = 5
    s, e = frames[which + 1]
    bad = bytearray(blob)
    hs = header_size(bad[s + 4])
    if how == "magic":
        bad[s:s + 4] = b"XXXX"
    elif how == "block-type":
        bad[s + hs] |= 0x06
    elif how == "block-size-up":
        h = int.from_bytes(bad[s + hs:s + hs + 3], "little")
        h += 200 << 3                          # claims 200 more payload bytes: overlaps the next frame
        bad[s + hs:s + hs + 3] = h.to_bytes(3, "little")
    else:
        bad[s + 4] |= 0x08
    src = ZstdSource(write(tmp_path, bytes(bad), "c.jsonl.zstd"))
    fwd = assert_consistent(src)
    assert [x.data for x in fwd if not x.bad] == batches[:which] + batches[which + 1:]
    b = [x for x in fwd if x.bad]
    assert len(b) == 1 and (b[0].pos, b[0].end) == (s, e)
    assert [p.offset for p in src.problems if p.code == "corrupt-frame"] == [s]
    # text offsets are unknown after a corrupt frame, known before it
    assert all(x.text_offset >= 0 for x in fwd[:which]) and all(x.text_offset == -1 for x in fwd[which:])


def test_two_adjacent_corrupt_frames(tmp_path):
    path, blob, batches = make_session(tmp_path, 10, seed=9)
    frames = frame_starts(blob)
    bad = bytearray(blob)
    for i in (4, 5):
        s, e = frames[i]
        bad[e - 1] ^= 0xFF                    # checksum mismatch, structure intact
    src = ZstdSource(write(tmp_path, bytes(bad), "c2.jsonl.zstd"))
    fwd = assert_consistent(src)
    assert [(x.pos, x.end) for x in fwd if x.bad] == [frames[4], frames[5]]
    assert [x.data for x in fwd if not x.bad] == batches[:3] + batches[5:]


def test_garbage_tail_and_no_record_boundary(tmp_path):
    path, blob, batches = make_session(tmp_path, 5)
    src = ZstdSource(write(tmp_path, blob + b"garbage!", "g.jsonl.zstd"))
    fwd = assert_consistent(src)
    assert [x.data for x in fwd[:-1]] == batches
    assert fwd[-1].bad and fwd[-1].pos == len(blob) and fwd[-1].end == len(blob) + 8
    # a frame whose plaintext does not end with "\n" is corrupt (spec §1.3 step 4)
    odd = blob + encode_frame(b'{"partial":') + encode_frame(b'{"b":2}\n')
    src = ZstdSource(write(tmp_path, odd, "o.jsonl.zstd"))
    fwd = assert_consistent(src)
    assert fwd[-2].bad and fwd[-1].data == b'{"b":2}\n'
    assert [x.data for x in fwd[:-2]] == batches


def test_header_frame_corrupt_is_fatal(tmp_path):
    path, blob, batches = make_session(tmp_path, 4)
    hs, he = frame_starts(blob)[0]
    bad = bytearray(blob)
    bad[he - 1] ^= 0xFF                       # checksum of the header frame
    src = ZstdSource(write(tmp_path, bytes(bad), "hc.jsonl.zstd"))
    fatal = [p for p in src.problems if p.fatal]
    assert fatal and fatal[0].code == "bad-header-frame" and fatal[0].offset == 0
    assert src.header_raw == b"" and src.header_end == he
    # the later frames stay readable
    assert [x.data for x in assert_consistent(src)] == batches
    # a file that is not zstd at all
    src = ZstdSource(write(tmp_path, b"not zstd at all\n", "nz.jsonl.zstd"))
    assert any(p.fatal for p in src.problems)


def test_header_frame_with_extra_lines(tmp_path):
    extra = b'{"type":"x","seq":0}\n'
    blob = encode_frame(HEADER + extra) + encode_frame(b'{"type":"x","seq":1}\n')
    src = ZstdSource(write(tmp_path, blob, "x.jsonl.zstd"))
    assert src.header_raw == HEADER[:-1]
    assert [p.code for p in src.problems] == ["header-frame-extra"]
    fwd = assert_consistent(src)
    assert b"".join(s.data for s in fwd) == extra + b'{"type":"x","seq":1}\n'
    assert next(fwd[0].split_rows())[0] == (0, len(HEADER))
    assert fwd[1].text_offset == len(HEADER) + len(extra) and fwd[1].line0 == 3


def test_refresh_growth_shrink_replace(tmp_path):
    path, blob, batches = make_session(tmp_path, 4)
    src = ZstdSource(path)
    assert src.refresh() is False
    rev = src.revision()
    more = encode_frame(b'{"type":"x","seq":99}\n')
    with open(path, "ab") as f:
        f.write(more[:5])                     # a torn append in progress
    assert src.refresh() is True
    assert list(src.backward())[0].torn
    with open(path, "ab") as f:
        f.write(more[5:])
    assert src.refresh() is True
    fwd = list(src.forward())
    assert fwd[-1].data == b'{"type":"x","seq":99}\n' and not fwd[-1].torn
    assert src.revision() != rev
    os.truncate(path, len(blob))
    with pytest.raises(SourceChanged):
        src.refresh()
    src.close()
    src = ZstdSource(path)
    os.replace(write(tmp_path, blob, "other.jsonl.zstd"), path)
    with pytest.raises(SourceChanged):
        src.refresh()


def test_open_source_by_magic(tmp_path):
    path, blob, _ = make_session(tmp_path, 2, name="session.bin")
    assert isinstance(open_source(path), ZstdSource)


def test_no_valid_frame_after_header_falls_back(tmp_path):
    blob = encode_frame(HEADER) + b"garbage without any frame magic"
    src = ZstdSource(write(tmp_path, blob, "g.jsonl.zstd"))
    fwd = assert_consistent(src)
    assert len(fwd) == 1 and fwd[0].bad and (fwd[0].pos, fwd[0].end) == (len(blob) - 31, len(blob))
    assert src.header_raw == HEADER[:-1]


def test_torn_final_frame_after_structurally_corrupt_frame(tmp_path):
    path, blob, batches = make_session(tmp_path, 8, seed=4, big_last=True)
    frames = frame_starts(blob)
    s, e = frames[-2]
    bad = bytearray(blob)
    bad[s + header_size(bad[s + 4])] |= 0x06   # block type 3 in the frame before the last
    last_s, last_e = frames[-1]
    cut = (last_s + last_e) // 2
    src = ZstdSource(write(tmp_path, bytes(bad[:cut]), "ct.jsonl.zstd"))
    fwd = assert_consistent(src)
    assert [x.data for x in fwd[:-2]] == batches[:-2]
    assert fwd[-2].bad and (fwd[-2].pos, fwd[-2].end) == (s, e)
    assert fwd[-1].torn and fwd[-1].pos == last_s and batches[-1].startswith(fwd[-1].data) and fwd[-1].data

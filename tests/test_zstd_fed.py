"""The seq index of a ``.zstd`` log (issue 29: ≤ 2× ``zstd -dc``): a small whole frame is decoded in one call by the
process's one libzstd context (``zstdframes.iter_plain_fed``) instead of a streaming decompressor set up per frame.
Every segment, the seq index, its problems and the events are those of the streaming path, on generated logs with
frames of every size (a frame over 64 KiB stored, an empty one, a torn last one) and on the hostile zstd mutants
(flipped bytes, truncation, garbage, a lost magic, bombs, a block size running past the end)."""
from __future__ import annotations

import pytest

from app.log.index.reader import LogReader
from app.log.source import zstdframes
from app.log.source.zstdframes import encode_frame
from app.tools.hostile import zstd_mutants
from app.tools.synth import SessionSynth, batches

pytestmark = pytest.mark.skipif(zstdframes.sized_decoder() is None, reason="libzstd's symbols are not reachable")


def _picture(path: str) -> tuple:
    r = LogReader.open(str(path))
    probs: list = []
    idx = r.build_index(problems=probs)
    segs = [(s.pos, s.end, getattr(s, "base", 0), s.line0, s.bad, s.torn, bytes(s.data)) for s in r.source.forward()]
    arrays = (list(idx.seg_pos), list(idx.seg_end), list(idx.first_seq), list(idx.last_seq), list(idx.line0),
              list(idx.rows), idx.events, list(idx.mark_seq), list(idx.mark_code))
    evs = [(e.seq, e.type, e.line) for e in LogReader.open(str(path)).iter_events()]
    return segs, arrays, [str(p) for p in probs], evs


def _both(path, monkeypatch) -> int:
    calls = [0]
    real = zstdframes.SizedDecoder.decode

    def counting(self, *a):
        calls[0] += 1
        return real(self, *a)
    monkeypatch.setattr(zstdframes.SizedDecoder, "decode", counting)
    fast = _picture(path)
    monkeypatch.setattr(zstdframes, "sized_decoder", lambda: None)
    slow = _picture(path)
    monkeypatch.undo()
    assert fast == slow, path
    return calls[0]


def _log(path, version: int, big: bool, torn: bool) -> None:
    plain = [b"".join(lines) for lines in batches(SessionSynth(seed=7, version=version, context_window=20_000),
                                                  turns=60 if big else 12)]
    if big:                                                    # (the middle third in one frame, an empty frame)
        k = len(plain) // 3
        plain = plain[:k] + [b"".join(plain[k:2 * k]), b""] + plain[2 * k:]
    out = [encode_frame(x) for x in plain]
    if torn:
        out[-1] = out[-1][:len(out[-1]) // 2]
    with open(path, "wb") as f:
        f.write(b"".join(out))


@pytest.mark.parametrize("version", [0, 4])
@pytest.mark.parametrize("big,torn", [(False, False), (True, False), (False, True)])
def test_generated_zstd_logs_the_same_both_ways(tmp_path, monkeypatch, version, big, torn):
    p = tmp_path / "s.jsonl.zstd"
    _log(p, version, big, torn)
    assert _both(p, monkeypatch) > 10                          # (most frames in one call)
    if big:
        assert max(len(f) for f in _frames(p)) > zstdframes.FEED


def _frames(path) -> list[bytes]:
    data = path.read_bytes()
    return [data[a:b] for _kind, a, b in zstdframes.iter_frames(data)]


def test_hostile_zstd_mutants_the_same_both_ways(tmp_path, monkeypatch):
    rows = []
    for lines in batches(SessionSynth(seed=3, version=4), turns=6):
        rows.extend(b"".join(lines).split(b"\n")[:-1])
    header, rows = rows[0], rows[1:]
    for k, (_name, data, _kept) in enumerate(zstd_mutants(header, rows, seed=5, count=14)):
        p = tmp_path / f"m{k}.jsonl.zstd"
        p.write_bytes(data)
        _both(p, monkeypatch)

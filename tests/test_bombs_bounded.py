"""Bounded time, not only bounded memory (issue 28): a SQLite row is checked against the row limit while it
is decompressed (a BLOB bomb stops at the limit) and a TEXT row before it is fetched; a zstd frame of
many tiny rows is read up to the frame row limit, the rest of it a reported bad segment."""
from __future__ import annotations

import json
import time

import pytest

from app.log.format import limits
from app.store.faces import open_reader
from app.tools import hostile
from conftest import fixture
from test_hardening import GOAL, _header, probe


def _goal_rows():
    lines = [ln for ln in fixture(GOAL).read_bytes().split(b"\n") if ln]
    return dict(json.loads(lines[0]), id="s-1"), [json.loads(x) for x in lines[1:]]


@pytest.fixture(scope="module")
def sqlite_bomb(tmp_path_factory):
    p = tmp_path_factory.mktemp("bomb") / "store.sqlite"
    hdr, rows = _goal_rows()
    seqs = hostile.sqlite_bomb(str(p), hdr, rows, blob_plain=256 << 20, text_bytes=100 << 20)
    return p, seqs


def test_sqlite_bombs_are_reported_without_being_read_whole(sqlite_bomb):
    p, (blob_seq, text_seq) = sqlite_bomb
    src = open_reader(str(p)).source
    list(src.forward())
    why = {pr.seq: pr.message for pr in src.problems if pr.code == "undecodable-row"}
    assert "decompresses to more than the 32 MiB row limit (decompression stopped there)" in why[blob_seq]
    assert "TEXT is over the 32 MiB row limit (stored bigger: not read)" in why[text_seq]
    # every other row is read, the bad ones are bad rows (one bad row never hides others)
    evs = {e.seq for e in open_reader(str(p)).iter_events()}
    _hdr, rows = _goal_rows()
    stored = {r["seq"] for r in rows if "seq" in r}
    assert stored - evs == {blob_seq, text_seq}


@pytest.mark.slow
@pytest.mark.parametrize("face", ["inspect", "page"])
def test_sqlite_bomb_memory_and_time_are_bounded(sqlite_bomb, face):
    p, _seqs = sqlite_bomb
    t = time.monotonic()
    res = probe(face, p, timeout=120)
    took = time.monotonic() - t
    assert res["rc"] == 0, res
    # (before: a 256 MiB BLOB decompressed whole and a 100 MB TEXT fetched: 666 MB / 1.04 GB peak)
    assert res["peak_mb"] < 300, res
    print(f"sqlite bomb {face}: peak RSS {res['peak_mb']} MB, {took:.1f} s")


@pytest.mark.slow
@pytest.mark.parametrize("face", ["inspect", "page"])
def test_zstd_frame_of_tiny_rows_is_read_to_the_frame_row_limit(tmp_path, face):
    p = tmp_path / "rows.jsonl.zstd"
    p.write_bytes(hostile.zstd_bomb(_header(), 64 << 20, "rows"))        # ~1.4 million rows, 0.8 MB stored
    res = probe(face, p, timeout=120)
    assert res["rc"] == 0, res
    if face == "inspect":
        assert limits.MAX_FRAME_ROWS <= res["events"] <= limits.MAX_FRAME_ROWS + 2
    got = probe("events", p, timeout=120)
    assert got["seqs"][-1] > 1_000_000                  # the frame after the bomb is read
    assert len(got["seqs"]) == limits.MAX_FRAME_ROWS + 1


def test_frame_row_limit_names_the_frame_and_reads_the_rows_before(tmp_path):
    p = tmp_path / "rows.jsonl.zstd"
    p.write_bytes(hostile.zstd_bomb(_header(), 8 << 20, "rows"))           # ~180,000 rows
    r = open_reader(str(p))
    seqs = [e.seq for e in r.iter_events()]
    assert seqs[:limits.MAX_FRAME_ROWS] == list(range(limits.MAX_FRAME_ROWS))
    assert len(seqs) == limits.MAX_FRAME_ROWS + 1
    assert any(pr.code == "frame-over-limit" and "rows" in pr.message for pr in r.source.problems)

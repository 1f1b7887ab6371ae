"""*Errors only* reads the error rows in one ordered pass of small reads (issue 29: <= 300 ms on the whole log),
and builds the errors' page rows once: the rows read, the events and the rows shown are exactly those of a
row-by-row read (``RowReader.raw_at``) and of the page built the way it was before."""
from __future__ import annotations

import pytest

from app.log.format.lazyrows import RowReader
from app.log.query.outline import build_outline
from app.log.source.sources import RawJsonlSource
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history import pages as pages_mod
from app.ui.history import sparse as sparse_mod
from app.ui.history.row_kind import RowKind


@pytest.fixture(scope="module")
def v4_log(tmp_path_factory):
    """A generated v4 log with compactions and many errors, some close together (failed attempts)."""
    p = tmp_path_factory.mktemp("errorsfast") / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=29, version=4, context_window=24_000, p_tool_error=0.05,
                                     p_turn_error=0.02), target_bytes=2_000_000)
    r = open_reader(str(p))
    r.build_index()
    ol = build_outline(r)
    seqs = sorted(s for t in ol.turns for s in t.error_seqs)
    where = {s: w for t in ol.turns for s, w in zip(t.error_seqs, t.error_rows)}
    assert len(seqs) >= 30 and len(where) == len(seqs)
    return str(p), seqs, where


def _counting(monkeypatch):
    reads = {"calls": 0, "bytes": 0}
    pread = RawJsonlSource.pread

    def counted(self, n, at):
        out = pread(self, n, at)
        reads["calls"] += 1
        reads["bytes"] += len(out)
        return out
    monkeypatch.setattr(RawJsonlSource, "pread", counted)
    return reads


def test_error_rows_read_in_one_ordered_pass(v4_log, monkeypatch):
    """Rows close together come from one read, each read is a few KiB (before: one 64 KiB read per error),
    and the events are those of a row-by-row read."""
    path, seqs, where = v4_log
    r = open_reader(path)
    r.build_index()
    rr = RowReader(r)
    ref = {}
    for s in seqs:
        pos, off, line = where[s]
        ref[s] = [e for e in r.codec.decode_row(rr.raw_at(pos), pos=pos, offset=off, line=line)[0]
                  if getattr(e, "seq", None) == s][0]
    reads = _counting(monkeypatch)
    page = sparse_mod.sparse_page(r, list(reversed(seqs)), where=where)
    assert [e.seq for e in page.items] == seqs
    assert all((e.type, e.data, e.raw, e.pos, e.offset, e.line) ==
               (ref[e.seq].type, ref[e.seq].data, ref[e.seq].raw, ref[e.seq].pos, ref[e.seq].offset, ref[e.seq].line)
               for e in page.items)
    assert reads["calls"] < len(seqs)                           # (errors close together share a read)
    assert reads["bytes"] <= reads["calls"] * sparse_mod.FIRST_READ


def _lines(tmp_path, rows: list[bytes], torn: bytes) -> tuple[str, list[int]]:
    p = tmp_path / "rows.jsonl"
    data = b"".join(x + b"\n" for x in rows) + torn
    p.write_bytes(data)
    offs, at = [], 0
    for x in rows:
        offs.append(at)
        at += len(x) + 1
    return str(p), offs + ([at] if torn else [])


@pytest.mark.parametrize("first", [1, 7, 64, 4096])
def test_rows_at_equals_raw_at(tmp_path, first):
    """Every row as ``raw_at`` reads it: short and long rows (a read grows to the row's end), empty rows,
    adjacent and repeated offsets, offsets inside a row, a last row without its newline and the file's end."""
    rows = [b'{"a":1}', b"", b"x" * 10_000, b'{"b":"' + "é".encode() * 3000 + b'"}', b"y" * 70_000, b"z"]
    path, offs = _lines(tmp_path, rows, torn=b'{"torn":tr')
    src = RawJsonlSource(path)

    class R:                                  # (the reader RowReader needs: its source)
        source = src
    rr = RowReader(R())                       # type: ignore[arg-type]
    size = src.size
    want = sorted(offs + [offs[2] + 5, offs[4] + 69_999, size, offs[0], 3])
    got = sparse_mod.rows_at(src, want, {}, first)
    assert got == {o: rr.raw_at(o) for o in want}


def test_sparse_job_builds_the_rows_once_and_the_same(v4_log, monkeypatch):
    """The errors' page is built once (before: built with gap rows, thrown away and built again), and its rows
    in both faces are those of the page built the old way."""
    path, seqs, where = v4_log
    r = open_reader(path)
    r.build_index()

    class Job:
        @staticmethod
        def check():
            return None
    built = []
    build = pages_mod.build_page_rows
    monkeypatch.setattr(pages_mod, "build_page_rows", lambda lp, *a: built.append(a) or build(lp, *a))
    lp = sparse_mod.sparse_job(Job(), r, seqs, where, False, False)
    assert built == [(False, False)]
    old = pages_mod.loaded_page(sparse_mod.sparse_page(r, seqs, where=where),
                                pages_mod.compute_views(lp.page.items), 0, False, False)
    old.sparse = True
    old.faces.clear()

    def shape(rows):
        return [(x.key, x.kind, x.seq, x.first_seq, x.last_seq, x.surface) for x in rows]
    for face in ((False, False), (True, False), (False, True), (True, True)):
        assert shape(lp.rows_for(*face).rows) == shape(old.rows_for(*face).rows)
    assert lp.sparse and not any(x.kind == RowKind.GAP for x in lp.rows_for(False, False).rows)


@pytest.mark.parametrize("newest", [3, 8, 15])
def test_the_newest_errors_first_are_rows_of_the_whole_page(v4_log, monkeypatch, newest):
    """With many errors the job hands the newest over first (``job.partial``): their rows, in every face, and
    their views are exactly the whole page's for the same seqs; the whole page is the same as without it."""
    path, seqs, where = v4_log
    r = open_reader(path)
    r.build_index()
    monkeypatch.setattr(sparse_mod, "NEWEST", newest)
    got = []

    class Job:
        class partial:                       # (the Qt job's signal: emit)
            emit = got.append

        @staticmethod
        def check():
            return None

    class Plain:
        @staticmethod
        def check():
            return None
    whole = sparse_mod.sparse_job(Job(), r, seqs, where, False, False)
    alone = sparse_mod.sparse_job(Plain(), r, seqs, where, False, False)
    assert len(got) == 1
    part = got[0]
    first = min(part.events)
    assert 0 < len(part.events) <= newest and sorted(part.events) == [s for s in seqs if s >= first]
    assert part.views == {s: v for s, v in whole.views.items() if s >= first}

    def shape(rows):
        return [(x.key, x.kind, x.seq, x.first_seq, x.last_seq, x.surface) for x in rows]
    for face in ((False, False), (True, False), (False, True), (True, True)):
        rows = shape(whole.rows_for(*face).rows)
        assert shape(part.rows_for(*face).rows) == [x for x in rows if (x[3] if x[3] is not None else x[2]) >= first]
        assert rows == shape(alone.rows_for(*face).rows)

"""*Errors only*'s page reads its rows through their lean records and decodes a row's payload only when it is read
(issue 29: <= 300 ms on the whole log): :class:`~app.log.format.lazyevent.LazyEvent`.  The page is the same as the
one the exact path builds (``sparse.LEAN`` off): every row in every face (what it shows, its attempt, its card's
view), the attempts, the summary's counts, every event (envelope and payload), on generated logs, every dsh-next
fixture and hostile mutants of real logs; and no payload is decoded before something reads it."""
from __future__ import annotations

import pytest

from app.log.format.lazyevent import LazyEvent
from app.log.format.model import is_event
from app.log.query.outline import build_outline
from app.store.faces import open_reader
from app.store.surface_cache import cached_surface
from app.tools import hostile
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history import sparse as sparse_mod
from app.ui.history.lazyviews import shown_view
from app.ui.history.navigation import row_is_error
from app.ui.history.pages import hidden_attempts
from app.ui.summary import page_tally

from fixtures_util import REPO, session_files

DSH_NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
FIELDS = ("seq", "type", "time", "surface_op", "source_event_seqs", "ignorable", "raw", "pos", "offset", "line",
          "member", "packed", "legacy", "known", "synthesized", "data")


class Job:
    partial = None

    @staticmethod
    def check() -> None:
        return None


def _page(r, seqs, where, lean: bool, monkeypatch, sindex=None):
    monkeypatch.setattr(sparse_mod, "LEAN", lean)
    return sparse_mod.sparse_job(Job(), r, seqs, where, False, False, sindex=sindex)


def _shown(rows: list) -> list:
    return [(r.key, r.kind, r.marks, r.seq, r.first_seq, r.last_seq, r.attempt.to_dict() if r.attempt else None,
             [(c.seq, c.member, c.data) for c in r.chunks], r.turn, r.call.seq if r.call is not None else None,
             r.surface, r.group, _shown(r.children), r.content().plain_text(), r.search_text(), r.copy_text(),
             shown_view(r)) for r in rows]


def assert_same_page(r, seqs, where, monkeypatch, unread: bool = False) -> int:
    """The lean page of ``seqs`` is the exact one (``unread``: and, built and counted, it has read no payload of
    its lazy events); -> how many of its events are lazy."""
    sindex = cached_surface(r)[0]                          # (the rows' surface statuses, compactions folded)
    exact = _page(r, seqs, where, False, monkeypatch, sindex)
    lean = _page(r, seqs, where, True, monkeypatch, sindex)
    assert lean.surface == exact.surface and lean.compactions == exact.compactions
    lazy = [ev for ev in lean.page.items if type(ev) is LazyEvent]
    assert page_tally(lean) == page_tally(exact)
    # (built, the page keeps the records its filter reads, those of tool results and turn ends, and no other)
    assert all(ev.lean is None for ev in lazy if ev.type not in ("tool/result", "turn/end"))
    # (built: the payloads read are those of the tool results whose records cannot tell the filter)
    assert not unread or all(ev.type == "tool/result" and ev.data.get("error") is None for ev in lazy if ev.decoded)
    faces = [(physical, show) for physical in (False, True) for show in (False, True)]
    for f in faces:
        lean.rows_for(*f), exact.rows_for(*f)
    read = [ev.decoded for ev in lazy]
    for f in faces:                                        # (what Errors only's filter keeps, from the records)
        assert [row_is_error(r) for r in lean.rows_for(*f).rows] == [row_is_error(r) for r in exact.rows_for(*f).rows]
    assert [ev.decoded for ev in lazy] == read             # (the filter, on the UI thread, decodes nothing)
    assert hidden_attempts(lean.trackers[False]) == hidden_attempts(exact.trackers[False])
    assert [a.to_dict() for a in lean.trackers[False].attempts] == [a.to_dict() for a in exact.trackers[False].attempts]
    assert len(lean.page.items) == len(exact.page.items)
    for a, b in zip(lean.page.items, exact.page.items):
        assert is_event(a) == is_event(b)
        if is_event(b):
            assert {f: getattr(a, f) for f in FIELDS} == {f: getattr(b, f) for f in FIELDS}
            assert a.envelope() == b.envelope()
    for physical in (False, True):
        for show in (False, True):
            assert _shown(lean.rows_for(physical, show).rows) == _shown(exact.rows_for(physical, show).rows)
    return len(lazy)


def _all_rows(r):
    """Every stored event's seq and where its row is (as the outline keeps an error's)."""
    evs = [it for it in r.tail_page(10 ** 6).items if is_event(it) and not it.synthesized]
    return sorted({ev.seq for ev in evs}), {ev.seq: (ev.pos, ev.offset, ev.line) for ev in evs}


def _errors(r):
    ol = build_outline(r)
    seqs = sorted(s for t in ol.turns for s in t.error_seqs)
    return seqs, {s: w for t in ol.turns for s, w in zip(t.error_seqs, t.error_rows)}


@pytest.mark.parametrize("version,seed", [(4, 29), (4, 30), (0, 31)])
def test_the_lean_page_of_a_generated_log_is_the_exact_one(tmp_path, monkeypatch, version, seed):
    p = str(tmp_path / "session.jsonl")
    write_jsonl(p, SessionSynth(seed=seed, version=version, context_window=24_000, p_tool_error=0.08,
                                p_turn_error=0.03), target_bytes=1_000_000)
    r = open_reader(p)
    r.build_index()
    seqs, where = _errors(r)
    assert len(seqs) > 8
    n = assert_same_page(r, seqs, where, monkeypatch, unread=True)
    assert n == (len(seqs) if version >= 2 else 0)         # (every error row of a v2+ generated log is read lean)
    seqs, where = _all_rows(r)                             # (and every kind of row, not only errors)
    n = assert_same_page(r, seqs, where, monkeypatch)
    assert n > 0.9 * len(seqs) if version >= 2 else n == 0


@pytest.mark.parametrize("path", session_files(DSH_NEXT), ids=str)
def test_the_lean_page_of_a_fixture_is_the_exact_one(path, monkeypatch):
    r = open_reader(str(path))
    seqs, where = _all_rows(r)
    if not seqs:
        pytest.skip("no events")
    assert_same_page(r, seqs, where, monkeypatch)


def _mutants():
    srcs = sorted(session_files(DSH_NEXT), key=lambda p: -p.stat().st_size)[:2]     # (the two longest fixtures)
    for i, src in enumerate(srcs):
        for name, blob, _kept in hostile.jsonl_mutants(src.read_bytes(), 700 + i, 20):
            yield f"{src.parent.name}-{name}", blob


@pytest.mark.parametrize("name,blob", list(_mutants()), ids=lambda x: x if isinstance(x, str) else "")
def test_the_lean_page_of_a_hostile_mutant_is_the_exact_one(tmp_path, monkeypatch, name, blob):
    p = tmp_path / "session.jsonl"
    p.write_bytes(blob)
    r = open_reader(str(p))
    seqs, where = _all_rows(r)
    if not seqs:
        pytest.skip(f"{name}: no events")
    assert_same_page(r, seqs, where, monkeypatch)


def test_a_payload_is_decoded_once_when_read(tmp_path, monkeypatch):
    p = str(tmp_path / "session.jsonl")
    write_jsonl(p, SessionSynth(seed=7, version=4, p_tool_error=0.1), target_bytes=400_000)
    r = open_reader(p)
    r.build_index()
    lp = _page(r, *_errors(r), True, monkeypatch)
    rows = lp.rows_for(False, False).rows
    lazy = [row.event for row in rows if type(row.event) is LazyEvent]
    assert len(lazy) >= 5 and not any(ev.decoded for ev in lazy)
    rows[0].content()                                      # (the row shown)
    assert lazy[0].decoded and lazy[0].lean is None and not any(ev.decoded for ev in lazy[1:])
    d = lazy[0].data
    assert d is lazy[0].data and isinstance(d, dict)       # (decoded once, kept)


def test_lean_events_read_each_row_as_lean_event_does(tmp_path):
    """The batch (one row screen for all) reads each row as the one-row reader does, on a generated log's rows and
    hostile mutants of a fixture's (refused rows: None both ways)."""
    from app.log.format.lazyevent import lean_decoders, lean_event, lean_events
    p = str(tmp_path / "session.jsonl")
    write_jsonl(p, SessionSynth(seed=3, version=4, p_tool_error=0.1), target_bytes=200_000)
    blobs = [open(p, "rb").read()]
    src = sorted(session_files(DSH_NEXT), key=lambda q: -q.stat().st_size)[0]
    blobs += [blob for _name, blob, _kept in hostile.jsonl_mutants(src.read_bytes(), 91, 20)]
    for blob in blobs:
        q = tmp_path / "m.jsonl"
        q.write_bytes(blob)
        r = open_reader(str(q))
        decs = lean_decoders(r.codec)
        rows = [(ln, i, i, None) for i, ln in enumerate(blob.split(b"\n")[1:]) if ln]
        got = lean_events(r.codec, decs, rows)
        want = [lean_event(r.codec, decs, *row) for row in rows]
        assert [(type(a), a and a.seq, a and a.lean) for a in got] == [(type(b), b and b.seq, b and b.lean) for b in want]
        assert any(a is not None for a in got)

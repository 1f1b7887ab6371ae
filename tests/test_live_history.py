"""The history view model follows a log while it is written: rows arrive in place, the
result equals a fresh read of the final file (both faces), the view follows only a reader
at the bottom, and the session list shows the writer's state."""
from __future__ import annotations

import random

import pytest

import app.ui  # noqa: F401  (PySide6 work-around first)
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history.model import HistoryModel
from app.ui.workers import Jobs

from test_live import first_mid_turn_seq, simulate
from fixtures_util import fast_sample

WAIT = 120_000  # a limit on waiting for a condition, not on speed
FAST = {"poll_interval": 0.05, "idle_after": 0.3, "crash_after": 1.0}


def _synth_lines(tmp_path, seed: int, size: int, crash: bool) -> list[bytes]:
    src = tmp_path / f"src-{seed}.jsonl"
    write_jsonl(str(src), SessionSynth(seed), target_bytes=size, crash=crash, batch_events=(1, 8))
    return src.read_bytes().splitlines(keepends=True)


def _load_everything(qtbot, m: HistoryModel):
    """Every older page read (the rows need not be exposed: ``_all_rows`` holds them)."""
    while m.pages and m.pages[0].page.has_more:
        state = (len(m.pages), m.hidden_rows)
        qtbot.waitUntil(lambda: not m.loading, timeout=WAIT)
        m.request_older()
        qtbot.waitUntil(lambda: not m.loading and ((len(m.pages), m.hidden_rows) != state
                                                   or not m.pages[0].page.has_more), timeout=WAIT)


def _shape(m: HistoryModel) -> list:
    return [(r.key, r.kind, tuple(sorted(r.marks))) for r in m._all_rows]


def _fresh(qtbot, path, page_size) -> HistoryModel:
    m = HistoryModel(Jobs(), page_size=page_size, follow_live=False)
    with qtbot.waitSignal(m.tailInstalled, timeout=WAIT):
        m.open(str(path))
    _load_everything(qtbot, m)
    return m


def _settled(m: HistoryModel, last_seq: int) -> bool:
    p = m.pages[-1].page if m.pages else None
    return (p is not None and p.last_seq == last_seq and m._live_job is None and not m._live_queue)


@pytest.mark.parametrize("seed,crash,fmt", fast_sample([(21, False, "jsonl"), (22, True, "jsonl"), (23, False, "jsonl"),
                                                         (24, True, "zstd")]))
@pytest.mark.slow
def test_model_grown_by_live_rows_equals_a_fresh_read(qtbot, tmp_path, monkeypatch, seed, crash, fmt):
    import app.ui.history.pages as hm
    monkeypatch.setattr(hm, "LIVE_SPLIT", 6)          # small live pages: many cuts in a short log
    monkeypatch.setattr(hm, "LIVE_KEEP", 3)
    lines = _synth_lines(tmp_path, seed, 220_000, crash)
    zstd = fmt == "zstd"
    path = tmp_path / "p" / ("session.jsonl.zstd" if zstd else "session.jsonl")
    path.parent.mkdir()
    first = max(2, len(lines) // 4)
    if zstd:       # one frame for the header, one per write batch (as the write-behind writer does)
        from app.log.source.zstdframes import encode_frame
        path.write_bytes(encode_frame(lines[0]) + encode_frame(b"".join(lines[1:first])))
    else:
        path.write_bytes(b"".join(lines[:first]))
    m = HistoryModel(Jobs(), page_size=4, live_options=FAST)
    with qtbot.waitSignal(m.tailInstalled, timeout=WAIT):
        m.open(str(path))
    qtbot.waitUntil(lambda: m.live_state is not None, timeout=WAIT)
    rnd = random.Random(seed)
    i = first
    with open(path, "ab", buffering=0) as f:
        while i < len(lines):
            k = rnd.randint(1, 25)
            chunk = b"".join(lines[i:i + k])
            if zstd:
                chunk = encode_frame(chunk)
            i += k
            if rnd.random() < 0.3 and len(chunk) > 4:        # a write caught half-way
                cut = rnd.randrange(1, len(chunk) - 1)
                f.write(chunk[:cut])
                qtbot.wait(rnd.randint(5, 40))
                f.write(chunk[cut:])
            else:
                f.write(chunk)
            qtbot.wait(rnd.randint(0, 30))
    fresh = _fresh(qtbot, path, 4)
    last = fresh.pages[-1].page.last_seq
    qtbot.waitUntil(lambda: _settled(m, last), timeout=WAIT)
    # while the writer appends, the open turn is drawn in flight (no closure); the fresh read's
    # crash closure is what the live model shows once the writer is gone (quiet past crash_after)
    qtbot.waitUntil(lambda: m.live_state in ("crashed", "complete"), timeout=WAIT)
    assert m.window.live is False
    fresh.set_live_face(False)          # the fresh read has no follower: it is told the writer is gone too
    assert m.live_stats["batches"] > 3 and m.live_stats["splits"] > 0
    _load_everything(qtbot, m)
    for physical in (False, True):
        m.set_physical(physical)
        fresh.set_physical(physical)
        qtbot.waitUntil(lambda: not m.loading and not fresh.loading, timeout=WAIT)
        assert _shape(m) == _shape(fresh)
        # the exposed window is a slice of the loaded rows and every lookup agrees
        assert m.rows == m._all_rows[m._hidden:len(m._all_rows) - m._bottom]
        for r in m._all_rows[-50:]:
            if r.seq is not None and not r.synthesized:
                assert m.event_for_seq(r.seq) is not None
        synth = [r for r in m._all_rows if r.synthesized]
        assert bool(synth) == (crash and not physical)
    qtbot.waitUntil(lambda: m.live_state in ("complete", "crashed", "idle"), timeout=WAIT)
    m.close()
    fresh.close()


def _window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))
    from app.ui.main_window import MainWindow
    w = MainWindow(page_size=10, theme_mode="light", live_options=FAST)
    qtbot.addWidget(w)
    w.resize(1100, 700)
    w.show()
    return w


@pytest.mark.slow
def test_window_follows_at_bottom_and_keeps_a_readers_place(qtbot, tmp_path, monkeypatch):
    seed = 5
    path = tmp_path / "home" / "sessions" / "--proj--" / "live-1" / "session.jsonl"
    crash = first_mid_turn_seq(seed, 4200)
    proc = simulate(path, "--events", 5000, "--rate", 500, "--max-burst", 8, "--batch-delay-ms", 20,
                    "--seed", seed, "--crash-at", crash)
    try:
        qtbot.waitUntil(lambda: path.exists() and path.stat().st_size > 20_000, timeout=WAIT)
        w = _window(qtbot, tmp_path, monkeypatch)
        with qtbot.waitSignal(w.sessionLoaded, timeout=WAIT):
            w.open_store(str(tmp_path / "home"))
        h, v = w.history, w.view
        qtbot.waitUntil(lambda: h.live_state == "live", timeout=WAIT)
        # at the bottom: it follows
        qtbot.waitUntil(lambda: h.live_stats["batches"] >= 3, timeout=WAIT)
        qtbot.waitUntil(v.settled, timeout=WAIT)
        assert v.at_bottom()
        assert "live" in w.status_face.text() or "live" in w.status_counts.text()
        label = w.sessions.model.label(w.session)
        assert "live" in label
        # scrolled up: the row at the top stays at the same place while rows arrive
        sb = v.verticalScrollBar()
        sb.setValue(max(0, sb.maximum() // 2))
        qtbot.wait(50)
        qtbot.waitUntil(v.settled, timeout=WAIT)         # (an older page the scroll asked for is in)
        qtbot.wait(50)
        top = v.indexAt(v.viewport().rect().topLeft() + v.viewport().rect().center() * 0)
        key, y = top.data(0x0101).key, v.visualRect(top).top()
        n0 = h.live_stats["batches"]
        qtbot.waitUntil(lambda: h.live_stats["batches"] >= n0 + 3, timeout=WAIT)
        r = h.row_for_key(key)
        assert r is not None and abs(v.visualRect(h.index(r, 0)).top() - y) <= 2
        assert not v.at_bottom()
        qtbot.waitUntil(lambda: proc.poll() is not None, timeout=60_000)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    # the writer died mid-turn: the state becomes crashed, the closure is shown
    qtbot.waitUntil(lambda: h.live_state == "crashed", timeout=WAIT)
    from app.log.index.reader import LogReader
    rd = LogReader.open(str(path))
    last = rd.tail_page(10).last_seq
    rd.close()
    qtbot.waitUntil(lambda: _settled(h, last), timeout=WAIT)
    assert h.pages[-1].page.closure, "a crashed turn is closed in the logical face"
    assert "crashed" in w.sessions.model.label(w.session)
    w.shutdown()


def test_session_list_states_from_the_poll(qtbot, tmp_path):
    """live_states_job: recent files get a writer state, old ones are skipped, and a
    session that was not complete keeps being checked."""
    import os
    import time

    from app.store.discovery import discover
    from app.ui.session_model import LIVE_BADGES, RECENT_S, SessionTreeModel, live_states_job
    from test_live import _header_and_rows
    from app.log.format.codec import encode_row

    hdr, evs = _header_and_rows(3000)
    end = [e["seq"] for e in evs if e["type"] == "turn/end"][0]
    body = [encode_row(e) + b"\n" for e in evs]
    home = tmp_path / "home" / "sessions" / "--proj--"
    now = time.time()

    def put(name, n, age):
        p = home / name / "session.jsonl"
        p.parent.mkdir(parents=True)
        h = dict(hdr, id=name)
        p.write_bytes(encode_row(h) + b"\n" + b"".join(body[:n]))
        os.utime(p, (now - age, now - age))
        return p
    writing = put("writing", end + 5, 1)    # open turn, modified a second ago
    put("died", end + 5, 300)               # open turn, quiet for 5 minutes
    put("done", end + 1, 60)                # closed turn
    put("ancient", end + 5, RECENT_S * 3)   # open turn but long ago: not polled
    listing = discover(str(tmp_path / "home"))
    infos = listing.sessions

    class Job:
        def check(self):
            pass
    states = live_states_job(Job(), infos, {})
    by_id = {i.id: states.get(i.key) for i in infos}
    # growth is judged between two polls, never by the file's age (issue 35 item 17): not seen growing yet
    assert by_id == {"writing": "crashed", "died": "crashed", "done": "complete", "ancient": None}
    with open(writing, "ab") as fh:         # the writer appends before the next poll
        fh.write(body[end + 5])
    states = live_states_job(Job(), infos, states)
    by_id = {i.id: states.get(i.key) for i in infos}
    assert by_id == {"writing": "live", "died": "crashed", "done": "complete", "ancient": None}
    # a previously non-complete session is re-checked even when old
    ancient = next(i for i in infos if i.id == "ancient")
    assert live_states_job(Job(), infos, {ancient.key: "idle"})[ancient.key] == "crashed"
    # the list shows the badges
    m = SessionTreeModel()
    m.set_listing(listing, listing.tree())
    m.set_states(states)
    labels = {i.id: m.label(i) for i in infos}
    assert LIVE_BADGES["live"] in labels["writing"] and LIVE_BADGES["crashed"] in labels["died"]
    assert not any(b in labels["done"] for b in LIVE_BADGES.values())

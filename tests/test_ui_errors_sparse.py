"""*Errors only* on a long log reads only the pages that hold errors (issue 29): with the outline's error
list, each index segment holding an error older than the pages ending the log is read once, and no page in
between (pytest-qt, offscreen, a generated log with errors far apart)."""
from __future__ import annotations

import pytest

import app.ui  # noqa: F401  (PySide6 refcount work-around before any Qt code)

pytest.importorskip("PySide6")

from app.log.index.reader import LogReader  # noqa: E402
from app.log.query.outline import build_outline  # noqa: E402
from app.tools.synth import SessionSynth, write_jsonl  # noqa: E402

WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))


def _open_ready(qtbot, p):
    """A window on ``p`` once its tail, its outline and its seq index (far jumps) are ready."""
    from app.ui.main_window import MainWindow
    w = MainWindow(page_size=50, theme_mode="light")
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.sessionLoaded, timeout=WAIT):
        w.open_store(str(p))
    h, go = w.history, w.go_actions
    qtbot.waitUntil(lambda: not h.loading and go.outline is not None and h.jumps.can_jump(), timeout=WAIT)
    return w, h, go


def test_errors_only_reads_only_the_error_pages(qtbot, tmp_path, monkeypatch):
    import app.ui.history.model as model_mod
    import app.ui.history.sparse as sparse_mod
    from app.ui.history.navigation import row_is_error
    p = tmp_path / "store" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(43, p_tool_error=0.004, p_retry=0.0, p_turn_error=0.004, p_abort=0.0),
                target_bytes=5_000_000)
    ol = build_outline(LogReader.open(str(p)))
    want = sorted(s for t in ol.turns for s in t.error_seqs)
    assert len(want) >= 3 and want[-1] - want[0] > 20_000          # few errors, far apart
    reads = {"older": 0, "ranges": [], "rows": 0}
    older, rows_at, read_range = model_mod.older_job, sparse_mod.rows_at, sparse_mod.read_range

    def counting_rows(src, offsets, out, *a):
        reads["rows"] += len(offsets)
        return rows_at(src, offsets, out, *a)
    monkeypatch.setattr(sparse_mod, "rows_at", counting_rows)

    def counting_older(*a, **kw):
        reads["older"] += 1
        return older(*a, **kw)

    def counting_range(reader, lo, hi):
        reads["ranges"].append((lo, hi))
        return read_range(reader, lo, hi)
    monkeypatch.setattr(model_mod, "older_job", counting_older)
    monkeypatch.setattr(sparse_mod, "read_range", counting_range)
    w, h, go = _open_ready(qtbot, p)
    first, _last = h.window.loaded_range()
    older_errors = [s for s in want if s < first]
    assert len(older_errors) >= 3                           # on pages never loaded
    tail_first = first
    reads["older"] = 0
    import time
    t = time.perf_counter()
    go.act_errors_only.trigger()
    qtbot.waitUntil(lambda: not h.loading and h.jumps.paging_done(), timeout=WAIT)
    print(f"Errors only: every error on screen {(time.perf_counter() - t) * 1000:.0f} ms after the click "
          f"({len(older_errors)} errors on pages never loaded)")
    # the outline says where each error is stored: one row read per error, no page, none in between
    assert reads["older"] == 0 and not reads["ranges"] and reads["rows"] == len(older_errors)
    assert set(want) <= set(h.window.events)                # every error's row is read ...
    ev = h.window.events
    rows = {s for s in want if ev[s].type in ("tool/result", "turn/end")}   # (a failed attempt is hidden by default)
    assert len(rows) >= 2 and rows <= {r.seq for r in h.rows}                # ... and the filter shows it
    assert h.rows and all(row_is_error(r) for r in h.rows)  # (no gap rows between the scattered segments)
    go.act_errors_only.trigger()                            # off: the window is on the log's end again
    qtbot.waitUntil(lambda: not h.loading, timeout=WAIT)
    back = h.window.loaded_range()[0]
    assert back >= tail_first and not h.window.has_newer and h.has_more
    assert all(lp.page.base_seq >= tail_first and not lp.sparse for lp in h.window.pages)
    assert not all(row_is_error(r) for r in h.rows)
    h.request_older()                                      # and older pages are read as before, contiguous
    qtbot.waitUntil(lambda: not h.loading and h.window.loaded_range()[0] < back, timeout=WAIT)
    pages = [lp.page for lp in h.window.pages]
    assert all(a.last_seq + 1 == b.base_seq for a, b in zip(pages, pages[1:]))
    w.shutdown()


@pytest.mark.parametrize("kind", ["jsonl", "zstd"])
def test_the_error_rows_alone_or_their_segments(tmp_path, monkeypatch, kind):
    """Without the rows' places (an outline saved before them), one read per index segment holding errors;
    with them (from the saved outline: zstd positions come back as JSON lists), one row each.  Both equal
    the events read from the whole log."""
    import app.ui.history.sparse as sparse_mod
    from app.log.source.zstdframes import encode_frame
    from app.store.faces import open_reader
    from app.store.outline_cache import cached_outline
    from app.tools.synth import batches
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    synth = SessionSynth(43, p_tool_error=0.004, p_retry=0.0, p_turn_error=0.004, p_abort=0.0)
    if kind == "zstd":
        p = tmp_path / "session.jsonl.zstd"
        p.write_bytes(b"".join(encode_frame(b"".join(lines)) for lines in batches(synth, target_bytes=3_000_000)))
    else:
        p = tmp_path / "session.jsonl"
        write_jsonl(str(p), synth, target_bytes=3_000_000)
    r = open_reader(str(p))
    r.build_index()
    cached_outline(r)
    ol, status = cached_outline(open_reader(str(p)))
    assert status == "hit"
    want = sorted(s for t in ol.turns for s in t.error_seqs)
    where = {s: w for t in ol.turns for s, w in zip(t.error_seqs, t.error_rows)}
    assert len(want) >= 3 and len(where) == len(want)
    whole = {e.seq: e for e in open_reader(str(p)).iter_events() if e.seq in set(want)}
    ranges = []
    read_range = sparse_mod.read_range
    monkeypatch.setattr(sparse_mod, "read_range", lambda rd, lo, hi: ranges.append((lo, hi)) or read_range(rd, lo, hi))
    for w, n_ranges in ((None, len(sparse_mod.error_groups(r.index, want))), (where, 0)):
        ranges.clear()
        page = sparse_mod.sparse_page(r, want, where=w)
        assert [e.seq for e in page.items] == want and len(ranges) == n_ranges
        assert all((e.type, e.data, e.pos) == (whole[e.seq].type, whole[e.seq].data, whole[e.seq].pos)
                   for e in page.items)
        if w is not None:               # (a zstd page read through the index has no line numbers; a row has its own)
            assert all((e.line, e.offset) == (whole[e.seq].line, whole[e.seq].offset) for e in page.items)
    assert len(sparse_mod.error_groups(r.index, want)) < len(want) or kind == "zstd"


def test_errors_only_shows_the_newest_errors_first(qtbot, tmp_path, monkeypatch):
    """Many errors: the newest are on screen first, as a page of their own (the view sits on the log's end);
    then the whole errors' page replaces it, and the window ends as with one page read at once."""
    import app.ui.history.sparse as sparse_mod
    from app.ui.history.jumps import PageJumps
    p = tmp_path / "store" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=29, version=4, context_window=24_000, p_tool_error=0.05, p_turn_error=0.02),
                target_bytes=2_000_000)
    monkeypatch.setattr(sparse_mod, "NEWEST", 6)
    installs = []
    install = PageJumps._install_sparse

    def recording(self, lp, done=True):
        install(self, lp, done)
        installs.append((done, sorted(lp.events), [r.key for r in self.model.rows]))
    monkeypatch.setattr(PageJumps, "_install_sparse", recording)
    w, h, go = _open_ready(qtbot, p)
    first = h.window.loaded_range()[0]
    older = [s for s in go.error_seqs if s < first]
    assert len(older) > 2 * sparse_mod.NEWEST
    go.act_errors_only.trigger()
    qtbot.waitUntil(lambda: not h.loading and len(installs) == 2, timeout=WAIT)
    (d1, part, rows1), (d2, whole, rows2) = installs
    assert (d1, d2) == (False, True)
    assert part and part == whole[-len(part):] and len(part) <= sparse_mod.NEWEST and set(older) <= set(whole)
    assert set(whole) <= set(go.error_seqs)
    assert set(rows1) <= set(rows2) and len(rows1) < len(rows2)           # (the newest first, then all)
    class Job:                                 # the window's rows: those of the errors' page read at once
        @staticmethod
        def check():
            return None
    once = sparse_mod.sparse_job(Job(), h.reader, whole, h.jumps.wanted_where, h.physical, h.show_attempts,
                                 h.window.expanded, h.window.sindex)
    keys = [r.key for r in once.rows_for(h.physical, h.show_attempts).rows]
    assert rows2[:len(keys)] == keys
    w.shutdown()

"""Issue 15 / decision 0016: a first list reads each log's title in a bounded head and tail region.

A title in the tail region, or in regions that cover the whole file, is exact; a title found only in
the head (or none) while a middle was left unread is provisional (``titleExact`` false), cached so,
and refined: by ``list --exact-titles`` and by the window's background refinement, both of which
upgrade the cache entry to exact.  Hostile input stays bounded; damage in the regions is named."""
from __future__ import annotations

import json
import os
import random

import pytest

from app.log.source.zstdframes import encode_frame
from app.store import title_cache, titles
from app.store.discovery import discover
from fixtures_util import FIXTURES
from test_list_fork_speed import ALL_LOGS, _bounded_rule
from test_list_title_reads import _own_cache, _title_row, run, untitled_rows  # noqa: F401  (the autouse fixture: a cache of its own)

WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower


def _inspect_title(path) -> object:
    rc, out = run("inspect", path, "--json")
    return json.loads(out).get("title") if rc == 0 and out.startswith("{") else None


@pytest.fixture(scope="module")
def synth_rows(tmp_path_factory):
    """(header line, body rows without their titles) of a ~1 MB generated v0 log."""
    return untitled_rows(tmp_path_factory, 23, 1_000_000)


def _write(path, head: bytes, rows: list, zstd: bool, seed: int = 1) -> None:
    """A raw log, or a zstd log in dsh's layout (a frame per write batch of 1-3 rows)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not zstd:
        path.write_bytes(head + b"\n" + b"".join(r + b"\n" for r in rows))
        return
    rng, out, at = random.Random(seed), [encode_frame(head + b"\n")], 0
    while at < len(rows):
        n = rng.randint(1, 3)
        out.append(encode_frame(b"".join(r + b"\n" for r in rows[at:at + n])))
        at += n
    path.write_bytes(b"".join(out))


def _session(root, i: int, zstd: bool) -> str:
    return str(root / "sessions" / "--home-dev-p--" / f"s{i:02d}" / ("session.jsonl" + (".zstd" if zstd else "")))


def _with_titles(rows: list, first: str, middle=None, tail=None) -> list:
    out = rows[:6] + [_title_row(first)] + rows[6:]
    if middle is not None:
        k = len(out) // 2
        out = out[:k] + [_title_row(middle)] + out[k:]
    if tail is not None:
        out = out[:-2] + [_title_row(tail)] + out[-2:]
    return out


class _Reads:
    """Every byte range read from a file through ``os.pread``/``os.preadv`` (the title reads use no other)."""

    def __init__(self, monkeypatch):
        self.ranges: list = []
        pread, preadv = os.pread, os.preadv

        def counting_pread(fd, n, at):
            got = pread(fd, n, at)
            self.ranges.append((at, at + len(got)))
            return got

        def counting_preadv(fd, bufs, at):
            got = preadv(fd, bufs, at)
            self.ranges.append((at, at + got))
            return got
        monkeypatch.setattr(os, "pread", counting_pread)
        monkeypatch.setattr(os, "preadv", counting_preadv)

    def touched(self, lo: int, hi: int) -> bool:
        return any(a < hi and b > lo for a, b in self.ranges)

    @property
    def total(self) -> int:
        return sum(b - a for a, b in self.ranges)


# --------------------------------------------------------------------------- fixtures: small, exact

def test_every_fixture_title_is_exact_and_inspects_title_with_exact_titles():
    """The CLI list of every fixture and demo session: a title the list calls exact is inspect's; the
    few bigger than the regions follow the rule; with ``--exact-titles`` every title is exact and
    inspect's."""
    checked = 0
    for p in ALL_LOGS:
        rc, out = run("list", p, "--json")
        if rc != 0:
            continue
        rows = [r for r in json.loads(out)["sessions"] if r["format"] != "sqlite"]
        if len(rows) != 1:
            continue
        r, want = rows[0], _inspect_title(p)
        assert (r["title"], r["titleExact"]) == _bounded_rule(p), p
        assert r["title"] == want or not r["titleExact"], p
        title_cache._cache = None
        rc, out = run("list", p, "--json", "--exact-titles")
        (e,) = [x for x in json.loads(out)["sessions"] if x["format"] != "sqlite"]
        assert (e["title"], e["titleExact"]) == (want, True), p
        checked += 1
    assert checked >= 60
    rc, out = run("list", FIXTURES, "--json")
    assert rc == 0 and all(type(r["titleExact"]) is bool for r in json.loads(out)["sessions"])


# --------------------------------------------------------------------------- the rule on generated logs

@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd-dsh"])
def test_a_rename_in_the_middle_is_provisional_then_refined_by_exact_titles(tmp_path, synth_rows, zstd):
    head, rows = synth_rows
    home = tmp_path / "home"
    p = _session(home, 0, zstd)
    _write(__import__("pathlib").Path(p), head, _with_titles(rows, "Provider title", middle="Renamed in the middle"),
           zstd)
    assert _inspect_title(p) == "Renamed in the middle"
    rc, out = run("list", home, "--json")
    (r,) = json.loads(out)["sessions"]
    assert rc == 0 and (r["title"], r["titleExact"]) == ("Provider title", False)
    rc, text = run("list", home)
    assert "title provisional" in text
    # cached as provisional: a second plain list says the same without reading the file
    title_cache._cache = None
    assert title_cache.lookup_exact(p, r["size"], r["mtime"]) is False
    # --exact-titles reads the middle and upgrades the cache entry
    rc, out = run("list", home, "--json", "--exact-titles")
    (r,) = json.loads(out)["sessions"]
    assert (r["title"], r["titleExact"]) == ("Renamed in the middle", True)
    title_cache._cache = None
    assert title_cache.lookup(p, r["size"], r["mtime"]) == (True, "Renamed in the middle")
    assert title_cache.lookup_exact(p, r["size"], r["mtime"]) is True
    rc, out = run("list", home, "--json")                     # from the cache now: exact
    (r,) = json.loads(out)["sessions"]
    assert (r["title"], r["titleExact"]) == ("Renamed in the middle", True)


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd-dsh"])
def test_a_rename_in_the_tail_is_exact_without_reading_the_middle(tmp_path, monkeypatch, synth_rows, zstd):
    head, rows = synth_rows
    p = tmp_path / "s" / ("session.jsonl" + (".zstd" if zstd else ""))
    _write(p, head, _with_titles(rows, "Provider title", middle="Renamed in the middle", tail="Renamed late"), zstd)
    size = p.stat().st_size
    w, tail = (titles.ZSTD_WINDOW, titles.ZSTD_TAIL) if zstd else (titles.WINDOW, titles.TAIL)
    assert size > 10 * (w + tail)
    reads = _Reads(monkeypatch)
    info = discover(str(p), titles=True).sessions[0]
    assert (info.title, info.title_exact) == ("Renamed late", True)
    assert not reads.touched(w + titles.MIDDLE_OVERLAP, size - tail - 1)      # the middle: not a byte
    assert reads.total <= w + tail + 1 + 16                     # (+ the 16 bytes of the SQLite sniff)
    monkeypatch.undo()
    assert _inspect_title(p) == "Renamed late"


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd-dsh"])
def test_a_title_only_in_the_head_of_a_big_log_is_provisional(tmp_path, monkeypatch, synth_rows, zstd):
    head, rows = synth_rows
    p = tmp_path / "s" / ("session.jsonl" + (".zstd" if zstd else ""))
    _write(p, head, _with_titles(rows, "Provider title"), zstd)
    size = p.stat().st_size
    w, tail = (titles.ZSTD_WINDOW, titles.ZSTD_TAIL) if zstd else (titles.WINDOW, titles.TAIL)
    reads = _Reads(monkeypatch)
    info = discover(str(p), titles=True).sessions[0]
    assert (info.title, info.title_exact) == ("Provider title", False)      # the same title, but not known
    assert not reads.touched(w + titles.MIDDLE_OVERLAP, size - tail - 1)
    monkeypatch.undo()
    assert _inspect_title(p) == "Provider title"
    # no title at all in a big log: none, provisional too (a middle may hold one)
    _write(p, head, rows, zstd)
    title_cache._cache = None
    info = discover(str(p), titles=True).sessions[0]
    assert (info.title, info.title_exact) == (None, False)
    # a log within the two regions: read whole, exact
    _write(p, head, _with_titles(rows[:30], "Small", middle="Small renamed"), zstd)
    assert p.stat().st_size <= w + tail
    title_cache._cache = None
    info = discover(str(p), titles=True).sessions[0]
    assert (info.title, info.title_exact) == ("Small renamed", True) == (_inspect_title(p), True)


# --------------------------------------------------------------------------- hostile input

def test_a_huge_title_row_across_the_head_regions_end_stays_bounded(tmp_path, monkeypatch, synth_rows):
    """A 6 MB title row starting in the head region: its completion reads at most ``MIDDLE_OVERLAP``
    bytes, so it is passed over (the head's earlier title, provisional); the exact read goes through
    it in bounded reads and passes it over too (a row longer than ``MIDDLE_STEP + MIDDLE_OVERLAP`` is
    never assembled: the documented bound of the exact read)."""
    head, rows = synth_rows
    p = tmp_path / "s" / "session.jsonl"
    out, at = [head + b"\n"], len(head) + 1
    body = _with_titles(rows, "Provider title")
    k = 0
    while at + len(body[k]) + 1 < titles.WINDOW - 200:
        out.append(body[k] + b"\n")
        at += len(body[k]) + 1
        k += 1
    assert b"Provider title" in b"".join(out)
    huge = _title_row("H" * (6 << 20))
    out += [huge + b"\n"] + [r + b"\n" for r in body[k:]]
    p.parent.mkdir()
    p.write_bytes(b"".join(out))
    reads = _Reads(monkeypatch)
    info = discover(str(p), titles=True).sessions[0]
    assert (info.title, info.title_exact) == ("Provider title", False)
    assert reads.total <= titles.WINDOW + titles.TAIL + titles.MIDDLE_OVERLAP + 1 + 16
    reads.ranges.clear()
    assert titles.read_title(str(p), p.stat().st_size, exact=True) == ("Provider title", True)
    assert max(b - a for a, b in reads.ranges) <= titles.MIDDLE_STEP + titles.MIDDLE_OVERLAP + 1


def test_a_huge_zstd_frame_across_the_head_regions_end_stays_bounded(tmp_path, monkeypatch, synth_rows):
    """The first frame after the header bigger than ``ZSTD_FIRST_FRAME`` (incompressible text): not read
    whole, no title from it; the reads stay within the regions and that bound."""
    head, rows = synth_rows
    rng = random.Random(5)
    noise = _title_row("".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(600_000)))
    p = tmp_path / "s" / "session.jsonl.zstd"
    p.parent.mkdir()
    frames = [encode_frame(head + b"\n"), encode_frame(noise + b"\n")]
    frames += [encode_frame(b"".join(r + b"\n" for r in rows[i:i + 2])) for i in range(0, len(rows), 2)]
    p.write_bytes(b"".join(frames))
    assert len(frames[1]) > titles.ZSTD_FIRST_FRAME
    reads = _Reads(monkeypatch)
    info = discover(str(p), titles=True).sessions[0]
    assert (info.title, info.title_exact) == (None, False) and info.problems == []
    assert reads.total <= titles.ZSTD_WINDOW + titles.ZSTD_TAIL + titles.ZSTD_FIRST_FRAME + 1 + 16


@pytest.mark.parametrize("where", ["head", "head-after-title", "tail"])
def test_a_damaged_frame_in_a_region_is_named(tmp_path, synth_rows, where):
    """A frame whose checksum is broken in the head region (before or after the title) or in the tail
    region is named among the session's problems (list, cache); the title comes from the other frames."""
    from app.log.source.zstdlib import zstd as z
    head, rows = synth_rows
    home = tmp_path / "home"
    p = __import__("pathlib").Path(_session(home, 0, True))
    _write(p, head, _with_titles(rows, "Provider title"), True)
    data = bytearray(p.read_bytes())
    spans, at = [], 0
    while at < len(data):
        n = z.get_frame_size(bytes(data[at:]))
        spans.append((at, at + n))
        at += n
    if where == "head-after-title":
        k = next(i for i, (a, b) in enumerate(spans) if b"Provider title" in z.decompress(bytes(data[a:b])))
        a, b = spans[k + 1]
    else:
        a, b = spans[1] if where == "head" else spans[-1]
    assert (b <= titles.ZSTD_WINDOW) if where != "tail" else (a >= len(data) - titles.ZSTD_TAIL)
    data[b - 1] ^= 0xFF                                       # the content checksum
    p.write_bytes(bytes(data))
    rc, out = run("list", home, "--json")
    (r,) = json.loads(out)["sessions"]
    assert rc == 0 and len(r["problems"]) == 1 and f"zstd frame at byte {a} does not decode" in r["problems"][0]
    assert (r["title"], r["titleExact"]) == ("Provider title", False)
    title_cache._cache = None
    rc, again = run("list", home, "--json")                  # from the cache: the same problem
    assert json.loads(again)["sessions"][0]["problems"] == r["problems"]


def test_a_title_row_across_two_frames_in_the_head_region_is_not_a_title(tmp_path, synth_rows):
    head, rows = synth_rows
    p = tmp_path / "s" / "session.jsonl.zstd"
    p.parent.mkdir()
    body = b"".join(r + b"\n" for r in rows[:6]) + _title_row("Whole") + b"\n"
    split = _title_row("Split")
    cut = len(body) + split.index(b"Split")
    body += split + b"\n" + b"".join(r + b"\n" for r in rows[6:12])
    rest = [encode_frame(b"".join(r + b"\n" for r in rows[i:i + 2])) for i in range(12, len(rows), 2)]
    p.write_bytes(encode_frame(head + b"\n") + encode_frame(body[:cut]) + encode_frame(body[cut:]) + b"".join(rest))
    info = discover(str(p), titles=True).sessions[0]
    assert (info.title, info.title_exact) == ("Whole", False) and _inspect_title(p) == "Whole"


# --------------------------------------------------------------------------- the window

def _home(tmp_path, synth_rows):
    """Four sessions: raw and zstd (dsh layout), each with a rename in the middle or none."""
    head, rows = synth_rows
    home = tmp_path / "home"
    want = {}
    for i, (zstd, middle) in enumerate([(False, "Raw renamed"), (True, "Zstd renamed"), (False, None), (True, None)]):
        p = _session(home, i, zstd)
        hdr = json.loads(head)
        hdr["id"] = f"s{i:02d}"
        _write(__import__("pathlib").Path(p), json.dumps(hdr).encode(),
               _with_titles(rows, f"Provider {i}", middle=middle), zstd, seed=i)
        want[p] = middle or f"Provider {i}"
    return home, want


@pytest.mark.slow
def test_the_window_refines_provisional_titles_in_place_and_upgrades_the_cache(qtbot, win, tmp_path, synth_rows):
    home, want = _home(tmp_path, synth_rows)
    m = win.sessions.model
    with qtbot.waitSignal(m.titlesRefined, timeout=WAIT) as refined:
        win.open_store(str(home))
    assert refined.args == [2]                             # two titles changed, two were right already
    by_path = {i.path: i for i in m.sessions()}
    assert {p: m.titles.get(i.key) for p, i in by_path.items()} == want
    assert all(i.title_exact for i in by_path.values())
    from PySide6.QtCore import Qt
    ix = m.index_for_key(by_path[next(iter(want))].key)
    from app.ui.session_model import PROVISIONAL_ROLE
    assert m.data(ix, PROVISIONAL_ROLE) is False           # exact: not in italics any more
    pix = win.sessions.proxy.mapFromSource(ix)
    assert not _drawn_italic(win.sessions.tree, pix)
    assert "provisional" not in m.data(ix, Qt.ItemDataRole.ToolTipRole)
    # the cache holds the exact titles: a new process's first list shows them, exact, reading nothing
    title_cache._cache = None
    rc, out = run("list", home, "--json")
    assert {r["path"]: (r["title"], r["titleExact"]) for r in json.loads(out)["sessions"]} == \
        {p: (t, True) for p, t in want.items()}


@pytest.mark.slow
def test_reopening_the_list_cancels_the_refinement(qtbot, win, tmp_path, synth_rows, monkeypatch):
    """The refinement is a job of the list's group: listing another store cancels it (its child is
    killed, its rows never delivered), and the new list is refined on its own."""
    from app.store import titles_child
    home, want = _home(tmp_path, synth_rows)
    started = []
    real = titles_child.refine

    def refine(jobs, on_title, cancelled):
        started.append(len(jobs))
        if len(started) == 1:                              # the first list: wait until it is cancelled
            qtbot_wait = cancelled
            while not qtbot_wait():
                os.sched_yield()
            raise InterruptedError("cancelled")
        return real(jobs, on_title, cancelled)
    monkeypatch.setattr(titles_child, "refine", refine)
    m = win.sessions.model
    with qtbot.waitSignal(win.storeLoaded, timeout=WAIT):
        win.open_store(str(home))
    qtbot.waitUntil(lambda: started == [4], timeout=WAIT)          # (all four provisional)
    with qtbot.waitSignal(m.titlesRefined, timeout=WAIT) as refined:
        win.open_store(str(home))
    assert started == [4, 4] and refined.args == [2]
    assert {i.path: m.titles.get(i.key) for i in m.sessions()} == want


def test_a_last_zstd_frame_bigger_than_the_tail_region_is_read_whole(tmp_path, monkeypatch, synth_rows):
    """No whole frame starts in the tail region (the last write batch is bigger, a torn frame after
    it): the last frame is read whole up to ``ZSTD_FIRST_FRAME``, so a rename in it is exact."""
    head, rows = synth_rows
    p = tmp_path / "s" / "session.jsonl.zstd"
    p.parent.mkdir()
    body = _with_titles(rows, "Provider title")
    last = b"".join(r + b"\n" for r in body[-60:-2]) + _title_row("Renamed last") + b"\n" + \
        b"".join(r + b"\n" for r in body[-2:])
    frames = [encode_frame(head + b"\n")] + [encode_frame(b"".join(r + b"\n" for r in body[i:i + 2]))
                                            for i in range(0, len(body) - 60, 2)]
    frames += [encode_frame(last), encode_frame(_title_row("torn") + b"\n")[:-9]]
    p.write_bytes(b"".join(frames))
    assert titles.ZSTD_TAIL < len(frames[-2]) < titles.ZSTD_FIRST_FRAME
    reads = _Reads(monkeypatch)
    info = discover(str(p), titles=True).sessions[0]
    assert (info.title, info.title_exact) == ("Renamed last", True) and info.problems == []
    assert reads.total <= titles.ZSTD_WINDOW + titles.ZSTD_TAIL + titles.ZSTD_FIRST_FRAME + 1 + 16
    monkeypatch.undo()
    assert _inspect_title(p) == "Renamed last"


@pytest.mark.parametrize("zstd", [False, True], ids=["raw", "zstd-dsh"])
def test_inspect_records_the_exact_title_over_a_provisional_entry(tmp_path, synth_rows, zstd):
    """``inspect`` reads every row: the list's cache entry for that revision becomes exact (its title), so
    the next list shows the rename; without a cache file, inspect creates none."""
    head, rows = synth_rows
    home = tmp_path / "home"
    p = _session(home, 0, zstd)
    _write(__import__("pathlib").Path(p), head, _with_titles(rows, "Provider title", middle="Renamed in the middle"),
           zstd)
    cache = tmp_path / "cache" / "titles.json"
    assert _inspect_title(p) == "Renamed in the middle" and not cache.exists()
    title_cache._cache = None
    rc, out = run("list", home, "--json")
    assert [(r["title"], r["titleExact"]) for r in json.loads(out)["sessions"]] == [("Provider title", False)]
    assert cache.exists()
    title_cache._cache = None
    assert _inspect_title(p) == "Renamed in the middle"
    title_cache._cache = None                                      # a new process: the saved cache
    rc, out = run("list", home, "--json")
    assert [(r["title"], r["titleExact"]) for r in json.loads(out)["sessions"]] == [("Renamed in the middle", True)]


def test_refined_rows_keep_an_unchanged_label_and_take_a_changed_title(qtbot, tmp_path, synth_rows):
    """The model's refinement update: an unchanged title keeps the row's label (a fork child's "X (1)"
    from the lineage pass) and is repainted upright; a changed one replaces it."""
    from PySide6.QtCore import Qt
    from app.ui.session_model import SessionTreeModel
    home, _want = _home(tmp_path, synth_rows)
    listing = discover(str(home), titles=True)
    a, b = listing.sessions[:2]
    assert not a.title_exact and not b.title_exact
    m = SessionTreeModel()
    m.set_listing(listing, listing.tree())
    m.set_titles({a.key: "Provider (1)"})
    ia, ib = m.index_for_key(a.key), m.index_for_key(b.key)
    from app.ui.session_model import PROVISIONAL_ROLE
    assert m.data(ia, PROVISIONAL_ROLE) is True
    a.title_exact = b.title_exact = True                  # (as the worker's apply_exact leaves them)
    with qtbot.waitSignal(m.dataChanged, timeout=WAIT):
        m.set_refined({a.key: ("Provider", False), b.key: ("Renamed", True)})
    assert "Provider (1)" in m.data(ia, Qt.ItemDataRole.DisplayRole) and m.data(ia, PROVISIONAL_ROLE) is False
    assert "Renamed" in m.data(ib, Qt.ItemDataRole.DisplayRole) and m.titles[b.key] == "Renamed"


def test_the_exact_zstd_read_is_bounded_names_damage_and_reads_a_frame_bigger_than_its_step(tmp_path, monkeypatch,
                                                                                           synth_rows):
    """The middle's frames are read forwards in ``ZSTD_STEP`` reads: a frame bigger than a read takes a
    bigger read (its title is seen), a frame whose checksum is broken is named and the title comes from
    the frames after it; no read is bigger than ``ZSTD_FRAME_LIMIT``."""
    from app.log.source.zstdlib import zstd as z
    head, rows = synth_rows
    monkeypatch.setattr(titles, "ZSTD_STEP", 16 << 10)
    p = tmp_path / "s" / "session.jsonl.zstd"
    p.parent.mkdir()
    k = len(rows) // 2
    big = encode_frame(b"".join(r + b"\n" for r in rows[k:k + 200]) + _title_row("In a big frame") + b"\n")
    assert len(big) > titles.ZSTD_STEP
    small = [encode_frame(b"".join(r + b"\n" for r in rows[i:i + 2])) for i in range(0, k, 2)]
    after = [encode_frame(b"".join(r + b"\n" for r in rows[i:i + 2])) for i in range(k + 200, len(rows), 2)]
    p.write_bytes(encode_frame(head + b"\n") + b"".join(small) + big + b"".join(after))
    reads = _Reads(monkeypatch)
    assert titles.read_title is not None
    info = discover(str(p), titles=True, exact=True).sessions[0]
    assert (info.title, info.title_exact) == ("In a big frame", True) and info.problems == []
    assert max(b - a for a, b in reads.ranges) <= max(2 * len(big), titles.ZSTD_FIRST_FRAME)
    monkeypatch.undo()
    assert _inspect_title(p) == "In a big frame"
    # a damaged frame after the big one: named, the big frame's title still found (it lies before it)
    data = bytearray(p.read_bytes())
    at = len(data) - sum(map(len, after)) + len(after[0])          # the second frame after the big one
    n = z.get_frame_size(bytes(data[at:]))
    data[at + n - 1] ^= 0xFF
    p.write_bytes(bytes(data))
    title_cache._cache = None
    info = discover(str(p), titles=True, exact=True).sessions[0]
    assert info.title == "In a big frame" and any(f"zstd frame at byte {at} does not decode" in x for x in info.problems)


def _drawn_italic(tree, index) -> bool:
    """Whether the session list's delegate draws the item at ``index`` in italics."""
    from PySide6.QtWidgets import QStyleOptionViewItem
    opt = QStyleOptionViewItem()
    tree.itemDelegateForIndex(index).initStyleOption(opt, index)     # (column 0: the title delegate)
    return opt.font.italic()


def test_the_list_draws_provisional_titles_in_italics(qtbot, win, tmp_path, synth_rows):
    """The model says which title is provisional (PROVISIONAL_ROLE, QtCore only); the list's delegate
    draws it in italics, an exact one upright."""
    from app.ui.session_model import PROVISIONAL_ROLE
    home, _want = _home(tmp_path, synth_rows)
    listing = discover(str(home), titles=True)
    a, b = listing.sessions[:2]
    b.title_exact = True
    m = win.sessions.model
    m.set_listing(listing, listing.tree())
    proxy, tree = win.sessions.proxy, win.sessions.tree
    ia, ib = (proxy.mapFromSource(m.index_for_key(s.key)) for s in (a, b))
    assert ia.data(PROVISIONAL_ROLE) is True and ib.data(PROVISIONAL_ROLE) is False
    assert _drawn_italic(tree, ia) and not _drawn_italic(tree, ib)


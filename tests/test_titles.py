"""Session list titles: one bounded read per file (the same titles as before), cached by revision."""
from __future__ import annotations

import json

import pytest

from app.log.index.reader import LogReader
from app.store import title_cache, titles
from app.store.discovery import discover, quick_title
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import FIXTURES
from test_list_fork_speed import _bounded_rule  # (the documented rule of a first list, restated)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(title_cache, "_cache", None)
    monkeypatch.setattr(title_cache, "_dirty", False)


def _last_title(path) -> object:
    """The last session/title event's title, from a full decode (the reference)."""
    t = None
    for ev in LogReader.open(str(path)).events():
        if ev.type == "session/title" and isinstance(ev.data, dict):
            t = ev.data.get("title", t)
    return t


def test_titles_equal_a_full_decode_on_every_fixture():
    listing = discover(str(FIXTURES))
    got = {s.path: titles.session_title(s) for s in listing.sessions}
    want = {s.path: _last_title(s.path) for s in listing.sessions}
    assert got == want == {s.path: quick_title(s) for s in listing.sessions}
    assert sum(1 for t in want.values() if t) >= 5


def _title_row(seq, text):
    return json.dumps({"type": "session/title", "seq": seq, "time": 1, "data": {
        "title": text, "messageSeqs": [], "source": {"kind": "user"}}}, separators=(",", ":")).encode()


@pytest.mark.parametrize("size", [60_000, 700_000, 2_500_000])
def test_titles_of_generated_logs_where_head_tail_and_middle(tmp_path, monkeypatch, size):
    """A first list follows the bounded rule (decision 0016): exact when the regions cover the file or
    the tail region holds a title, then the full decode's title; provisional otherwise.  The exact
    read (``--exact-titles``, the window's refinement) is the full decode's title whatever the size."""
    p = tmp_path / "s" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=size % 97), target_bytes=size)
    info = discover(str(p)).sessions[0]
    got = titles.session_title(info)
    assert (got, info.title_exact) == _bounded_rule(p) and got is not None
    if size <= titles.WINDOW + titles.TAIL:
        assert info.title_exact                     # (the whole file read)
    if info.title_exact:
        assert got == _last_title(p)
    assert titles.read_title(str(p), info.size, exact=True) == (_last_title(p), True)
    # a user rename appended at the end wins, exact; the file changed, so the cache does not answer
    last = info.size
    with open(p, "ab") as f:
        f.write(_title_row(10 ** 7, "Renamed “at the end”") + b"\n")
    info = discover(str(p)).sessions[0]
    assert info.size > last and titles.session_title(info) == "Renamed “at the end”" == _last_title(p)
    assert info.title_exact


def test_titles_are_cached_by_revision_and_saved(tmp_path, monkeypatch):
    p = tmp_path / "s" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=4), target_bytes=200_000)
    with open(p, "ab") as f:
        f.write(_title_row(10 ** 6, "First") + b"\n")
    info = discover(str(p)).sessions[0]
    assert titles.session_title(info) == "First" and info.title_exact          # (in the tail region)
    title_cache.save()
    saved = tmp_path / "cache" / "titles.json"
    assert saved.exists()
    # a new process (cache reloaded from disk) does not read an unchanged session again
    monkeypatch.setattr(title_cache, "_cache", None)

    def no_read(*a, **k):
        raise AssertionError("read an unchanged session")
    monkeypatch.setattr(titles, "read_title", no_read)
    assert titles.session_title(info) == "First"
    monkeypatch.undo()
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    # a changed file is read again
    with open(p, "ab") as f:
        f.write(_title_row(10 ** 6 + 1, "Second") + b"\n")
    assert titles.session_title(discover(str(p)).sessions[0]) == "Second"
    # a corrupt cache file is ignored
    saved.write_bytes(b"\x00not json")
    title_cache._cache = None
    assert titles.session_title(discover(str(p)).sessions[0]) == "Second"


def test_title_in_skips_cut_and_foreign_rows():
    blob = (b'x","type":"session/title","data":{"title":"cut"}}\n' + _title_row(3, "good") + b"\n" +
            b'{"type":"user/message","seq":4,"data":{"text":"\\"type\\":\\"session/title\\""}}\n' +
            b'{"type":"session/title","seq":5,"data":{"title":"torn')
    assert titles.title_in(b"\n" + blob) == "good"
    assert titles.title_in(b"nothing here") is None

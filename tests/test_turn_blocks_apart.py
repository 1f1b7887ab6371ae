"""Issue 36: the background pass sends the outline's turn blocks ahead of the outline, a bounded number a message
(``("turn-blocks", data, ends)``), not the whole outline pickled at once (~9 MB at 4.3 GB: the pass child's peak and
a scattered heap in the window); the window appends them to a file of its own and gives them back to the turns.
The turns read back equal those of the outline built alone, in the child and in the window."""
from __future__ import annotations

import os
import pickle

import pytest

from app.log.blockfile import BlockFile
from app.log.index.reader import LogReader
from app.log.query.outline import build_outline
from app.tools.synth import SessionSynth, write_jsonl

from test_ui_history import WAIT, make_window, open_and_wait  # noqa: F401 (fixtures)


@pytest.fixture
def log(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=17, version=0), turns=700)
    return path


def _blocks() -> list:
    return [b"", os.urandom(9_000), b"x", b"", bytes(range(256)) * 9] + [b"t%d" % i for i in range(40)]


def test_blocks_go_joined_and_come_back_the_same(monkeypatch):
    want = _blocks()
    f = BlockFile(want)
    for k0, k1 in ((0, len(want)), (0, 1), (3, 4), (2, 30), (40, 99), (7, 7)):
        data, ends = f.joined(k0, k1)
        g = BlockFile()
        g.add_joined(data, ends)
        assert list(g) == want[k0:k1]
    g = BlockFile()
    for k in range(0, len(want), 7):          # (in messages of 7)
        g.add_joined(*f.joined(k, k + 7))
    assert list(g) == want and g.nbytes() == f.nbytes()
    assert list(pickle.loads(pickle.dumps(g))) == want
    with pytest.raises(ValueError):
        g.add_joined(b"abc", [1, 4])            # (past the data)
    with pytest.raises(ValueError):
        g.add_joined(b"abc", [2, 1, 3])         # (not in order)
    real, calls = os.pwrite, []

    def full(fd, data, at):                     # the file fills up: the rest in memory, still in order
        calls.append(at)
        if len(calls) > 3:
            raise OSError(28, "No space left on device")
        return real(fd, data, at)
    monkeypatch.setattr(os, "pwrite", full)
    h = BlockFile()
    for k in range(0, len(want), 5):
        h.add_joined(*f.joined(k, k + 5))
    monkeypatch.undo()
    assert list(h) == want and h.joined(0, len(want))[0] == b"".join(want)


def test_the_pass_sends_its_turn_blocks_ahead_in_bounded_messages(log, monkeypatch):
    from app.store import scan_child
    monkeypatch.setattr(scan_child, "BLOCKS_PER_MESSAGE", 3)
    want = build_outline(LogReader.open(str(log))).turns
    for cached in (False, True):            # (built by the pass, then read from its cache file)
        msgs: list = []
        ol = scan_child.scan("outline", str(log), None, {"blocks_apart": True}, msgs.append)
        sent = [m for m in msgs if m[0] == "turn-blocks"]
        assert ol.turns.blocks is None and len(sent) > 3 and all(len(m[2]) <= 3 for m in sent)
        back = pickle.loads(pickle.dumps(ol, pickle.HIGHEST_PROTOCOL))      # (as the child sends it)
        blocks = BlockFile()
        for m in sent:
            blocks.add_joined(m[1], m[2])
        scan_child.take_blocks(back.turns, blocks)
        assert back.turns == want and [t.error_rows for t in back.turns] == [t.error_rows for t in want], cached
    # without the option: the outline as before, its blocks with it
    ol = scan_child.scan("outline", str(log), None, {}, lambda m: None)
    assert pickle.loads(pickle.dumps(ol)).turns == want
    short = pickle.loads(pickle.dumps(scan_child.scan("outline", str(log), None, {"blocks_apart": True},
                                                      lambda m: None)))
    with pytest.raises(scan_child.ScanFailed):
        scan_child.take_blocks(short.turns, BlockFile())       # (blocks missing: an error, not wrong turns)


@pytest.mark.parametrize("inproc", ["1", "0"])
def test_the_window_puts_the_blocks_back(qtbot, make_window, log, monkeypatch, inproc):  # noqa: F811
    monkeypatch.setenv("SESSION_LENS_SCAN_INPROC", inproc)
    want = build_outline(LogReader.open(str(log))).turns
    win = make_window(page_size=20)
    with qtbot.waitSignal(win.go_actions.outlineReady, timeout=WAIT * 4):
        open_and_wait(qtbot, win, log)
    turns = win.go_actions.outline.turns
    assert isinstance(turns.blocks, BlockFile) and turns == want
    assert list(turns.error_seqs) == sorted(s for t in want for s in t.error_seqs)


def test_the_errors_seqs_are_kept_once_and_narrow(log):
    """The whole log's error seqs and the seq -> row map share one sorted 32-bit column when no seq is there twice;
    the answers are those of the turns themselves."""
    from app.log.query.outline_packed import CompactTurns
    want = build_outline(LogReader.open(str(log))).turns
    rows = {s: w for t in want for s, w in zip(t.error_seqs, t.error_rows)}
    assert len(rows) > 10
    turns = CompactTurns(want).narrow()
    assert turns.error_seqs.typecode == "i" and turns.error_where.seqs is turns.error_seqs
    assert list(turns.error_seqs) == sorted(s for t in want for s in t.error_seqs)
    assert {s: turns.error_where[s] for s in turns.error_where} == rows and turns == want
    dup = next(t for t in want if t.error_seqs)
    t2 = CompactTurns([*want, dup]).narrow()     # (a seq twice: the map keeps each once, the list both)
    assert t2.error_where.seqs is not t2.error_seqs and len(t2.error_seqs) == len(rows) + len(dup.error_seqs)
    assert {s: t2.error_where[s] for s in t2.error_where} == rows

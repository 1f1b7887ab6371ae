"""Issue 27 item 7: the whole-log find covers what the window shows.

The tool-call blocks of an assistant message that no ``tool/call`` row follows (calls cut by
max-tokens, or never started) are found by their arguments; the payloads of generic events
(``feedback/record`` …) are found by what their row shows; a call that has its ``tool/call`` row
is found once (its card), not twice.  On minimal logs of our own and on every real fixture."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, find_all
from app.log.query.textview import (EVENT, NO_PAYLOAD_TYPES, TEXT_TYPES, TOOL_CALL, fold_case, payload_pairs,
                                   shown_fields)
from app.log.source.sources import RawJsonlSource
from app.ui.history.event_summary import data_summary
from tests.fixtures_util import FIXTURES, session_files

NEXT = FIXTURES.parent / "dsh-next"


def _write(path: Path, events: list[tuple[str, dict]]) -> str:
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"type": "session/header", "seq": 0, "time": 1, "data": {"version": 4}}) + "\n")
        for i, (t, d) in enumerate(events, 1):
            f.write(json.dumps({"type": t, "seq": i, "time": 1000 + i, "data": d}, ensure_ascii=False,
                               separators=(",", ":")) + "\n")
    return str(path)


def _assistant(calls: list[tuple[str, str, dict]], text: str = "") -> dict:
    content: list[dict] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool-call", "id": cid, "name": name, "arguments": json.dumps(args)}
                for cid, name, args in calls]
    return {"turn": 1, "step": 1, "message": {"id": "m1", "role": "assistant", "content": content,
                                              "source": {"kind": "model", "provider": "p", "model": "m"}}}


@pytest.fixture
def small_log(tmp_path):
    ev = [("turn/start", {"turn": 1}),
          ("user/message", {"turn": 1, "id": "u1", "role": "user", "content": [{"type": "text", "text": "go"}],
                            "source": {"kind": "user"}}),
          ("step/start", {"turn": 1, "step": 1}),
          # cut by max-tokens: its calls never got a tool/call row
          ("assistant/message", _assistant([("c1", "read_file", {"path": "/srv/quokkaplan.md"}),
                                            ("c2", "grep", {"pattern": 'say "wombatline"'})])),
          ("step/end", {"turn": 1, "step": 1}),
          ("step/start", {"turn": 1, "step": 2}),
          # a call that did start: its card holds the same text
          ("assistant/message", _assistant([("c3", "bash", {"command": "echo numbatcall"})])),
          ("tool/call", {"turn": 1, "step": 2, "callId": "c3", "name": "bash",
                         "arguments": json.dumps({"command": "echo numbatcall"})}),
          ("feedback/record", {"text": "The session needs a bilbyfeedback fix", "category": "other"}),
          ("command/done", {"commandId": "k1", "kind": "ok", "text": {"detail": "potoroo out"}}),
          ("step/end", {"turn": 1, "step": 2}),
          ("turn/end", {"turn": 1, "reason": {"kind": "max-tokens"}})]
    return _write(tmp_path / "s.jsonl", ev)


@pytest.mark.parametrize("block", [None, 256])
def test_orphan_tool_call_blocks_and_generic_payloads_are_found(small_log, block):
    r = LogReader(RawJsonlSource(small_log, block=block)) if block else LogReader.open(small_log)

    for word, seq, kind in [("quokkaplan", 4, TOOL_CALL), ("wombatline", 4, TOOL_CALL),
                            ('say "wombatline"', 4, TOOL_CALL), ("bilbyfeedback", 9, EVENT),
                            ("category other", 9, EVENT), ("detail potoroo out", 10, EVENT)]:
        hits, st = find_all(r, FindOptions(word))
        assert [(h.seq, h.kind) for h in hits] == [(seq, kind)], word
        assert st.complete
    # the call with a tool/call row: found once, on its card (not also on the message's block)
    hits, _ = find_all(r, FindOptions("numbatcall"))
    assert [(h.seq, h.kind, h.block) for h in hits] == [(8, TOOL_CALL, False)]
    hits, _ = find_all(r, FindOptions("read_file", kinds=["tool"]))
    assert [(h.seq, h.tool, h.block) for h in hits] == [(4, "read_file", True)]


def test_generic_row_summary_and_find_read_the_same_pairs():
    d = {"text": "x" * 100 + " dunnartword", "nested": {"inner": "kowari"}, "items": ["phascogale"], "n": 3}
    ev = type("E", (), {"type": "feedback/record", "data": d})()
    [(f, _c, _b)] = shown_fields(ev)
    summary = data_summary(d)
    assert "nested.inner “kowari”" in summary and "items [1 item]" in summary
    # every word the summary shows (clipped string, nested key) is in the find text, and more
    for w in ("inner kowari", "dunnartword", "n 3"):
        assert w in f.text
    assert "phascogale" not in f.text         # (a list the row shows by its size only)


def _displayed_generic(ev) -> list[str]:
    """Words (4+ letters) of the string values a generic event's row shows (its summary's pairs)."""
    words: list[str] = []
    for _k, v in payload_pairs(ev.data):
        if isinstance(v, str):
            words.extend(re.findall(r"[A-Za-z]{4,}", v)[:3])
    return words


def _fixture_files() -> list[Path]:
    return session_files() + (session_files(NEXT) if NEXT.exists() else [])


def test_fixtures_every_generic_payload_word_is_found():
    """Every fixture event shown as a generic row (outside the text types, with a payload): a
    word of a string it holds is found by the whole-log find at that event's seq."""
    checked = 0
    for path in _fixture_files():
        try:
            r = LogReader.open(str(path))
            evs = list(r.iter_events())
        except Exception:            # (a fixture the reader refuses: the corpus tests cover it)
            continue
        want: dict[str, set[int]] = {}
        for ev in evs:
            if ev.type in TEXT_TYPES or ev.type in NO_PAYLOAD_TYPES or not isinstance(ev.data, dict):
                continue
            for w in _displayed_generic(ev)[:1]:
                want.setdefault(w, set()).add(ev.seq)
        for w, seqs in list(want.items())[:12]:
            hits, st = find_all(r, FindOptions(w))
            assert st.complete
            got = {h.seq for h in hits if h.kind == EVENT}
            assert seqs <= got, (path, w, seqs - got)
            checked += 1
    assert checked >= 50, checked


def test_fixtures_orphan_blocks_rule_holds():
    """On the fixtures every tool-call block has its tool/call row: a word of its arguments is
    found on the card only (never twice); the same block with its tool/call rows removed is
    found on the message."""
    checked = 0
    for path in _fixture_files():
        if path.suffix != ".jsonl":
            continue
        try:
            evs = list(LogReader.open(str(path)).iter_events())
        except Exception:
            continue
        for ev in evs:
            if ev.type != "assistant/message" or not isinstance(ev.data, dict):
                continue
            for f, call, block in shown_fields(ev):
                if not block:
                    continue
                ws = re.findall(r"[A-Za-z]{6,}", f.text.split("\n", 1)[-1])
                if not ws or checked >= 25:
                    continue
                w = ws[-1]
                r = LogReader.open(str(path))
                hits, _ = find_all(r, FindOptions(w, case=True))
                assert not any(h.block and h.call == call for h in hits), (path, w)
                assert any(h.kind == TOOL_CALL and h.call == call and not h.block for h in hits), (path, w)
                checked += 1
    assert checked >= 10, checked


def test_fixture_block_without_its_call_row_is_found(tmp_path):
    """A real fixture with its tool/call rows cut (as a max-tokens step leaves them): each
    call's argument words are found on the assistant message that holds the block."""
    checked = 0
    for path in _fixture_files():
        if checked >= 30:
            break
        if path.suffix != ".jsonl":
            continue
        lines = Path(path).read_bytes().splitlines()
        if not any(b'"type":"tool/call"' in ln for ln in lines):
            continue
        cut = tmp_path / "cut.jsonl"
        cut.write_bytes(b"\n".join(ln for ln in lines if b'"type":"tool/call"' not in ln) + b"\n")
        try:
            evs = list(LogReader.open(str(cut)).iter_events())
        except Exception:
            continue
        blocks = [(ev.seq, f) for ev in evs if ev.type == "assistant/message" for f, _c, b in shown_fields(ev) if b]
        if not blocks:
            continue
        r = LogReader.open(str(cut))
        for seq, f in blocks[:10]:
            ws = re.findall(r"[A-Za-z]{6,}", f.text)
            if not ws:
                continue
            hits, _ = find_all(r, FindOptions(ws[-1]))
            assert any(h.seq == seq and h.block and fold_case(ws[-1]) in fold_case(f.text) for h in hits), (path, ws)
            checked += 1
    assert checked >= 10, checked

"""Message content -> display text in one place (issue 13 item 3): :func:`app.log.format.payloads.content_text`
on the real messages of the shared fixtures (v0 ``dsh`` and the v2–v4 ``dsh-next`` logs), through
each caller that shows content (search fields, presenters, export, ``message_text``).

Expected texts are taken from the stored rows themselves (the blocks' ``text`` and attachment
fields as written by dsh), never from the function under test."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.log.format.model import Event, event_message, message_text
from app.log.format.payloads import blocks, content_text
from app.log.index.reader import LogReader
from app.log.query.textview import ASSISTANT, REASONING, SYSTEM, TOOL_OUTPUT, USER, event_fields
from app.presenters.registry import result_text, tool_result_of
from app.store.export import message_blocks

from fixtures_util import REPO, fixture, session_files

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
V0_READ_IMAGE = "examples/acp-agent/tests/snapshots/read-image/session.jsonl"
V0_INLINE_IMAGE = "examples/acp-agent/tests/snapshots/inline-image-prompt/session.jsonl"
V4_IMAGES = NEXT / "0217po+deepseek-harness@321a6fa740/snapshots/acp/image-compaction/session.v4.jsonl"
V4_REASONING = NEXT / "0217po+deepseek-harness@f4a32dbd0a/snapshots/session/tool-call-turn/session.v4.jsonl"


def _events(path) -> list[Event]:
    r = LogReader.open(str(path))
    try:
        assert r.fatal is None, r.fatal
        return list(r.iter_events())
    finally:
        r.close()


def _stored(path, seq: int) -> dict:
    """The stored row of ``seq`` as plain JSON (read without the app's reader)."""
    for line in Path(path).read_text(encoding="utf-8").splitlines()[1:]:
        row = json.loads(line)
        if row.get("seq") == seq:
            return row
    raise AssertionError(f"no row with seq {seq} in {path}")


def _all_logs() -> list:
    return list(session_files()) + sorted(p for p in NEXT.rglob("*.jsonl") if ".v" in p.name)


def _messages():
    """(path, event, message) for every message-carrying event of every readable fixture log."""
    for p in _all_logs():
        r = LogReader.open(str(p))
        try:
            if r.fatal is not None:
                continue
            for ev in r.iter_events():
                m = event_message(ev)
                if m is not None:
                    yield p, ev, m
        finally:
            r.close()


# --------------------------------------------------------------------------- single real messages

def test_v0_tool_result_with_an_image_reads_the_same_in_search_and_presenters_with_their_own_image_labels():
    path = fixture(V0_READ_IMAGE)
    ev = next(e for e in _events(path) if e.type == "tool/result")
    stored = _stored(path, ev.seq)["data"]["message"]["content"][0]        # the tool-result block
    inner_text = stored["content"][0]["text"]
    att = stored["content"][1]["attachment"]
    m = event_message(ev)
    # the display text (search index, outline): the nested result's text, the image by its name
    assert content_text(m["content"]) == f"{inner_text}\n[image {att['name']}]"
    assert [f for f in event_fields(ev) if f.kind == TOOL_OUTPUT][0].text == content_text(m["content"])
    # the presenters describe the image fully (name, media type, size, bytes)
    assert result_text(tool_result_of(ev)) == (
        f"{inner_text}\n[image {att['name']} {att['mediaType']} {att['width']}x{att['height']} {att['bytes']} bytes]")
    # the export names the attachment id, so a reader can find the file
    kind, text = message_blocks(m)[0]
    assert (kind, text) == ("code", f"{inner_text}\n[image {att['name']} {att['mediaType']} {att['attachmentId']}]")
    # message_text keeps only the asked kinds of the message's own blocks (a tool-result block is none)
    assert message_text(m) == ""


def test_v0_user_prompt_with_an_inline_image_keeps_the_text_around_it():
    path = fixture(V0_INLINE_IMAGE)
    ev = next(e for e in _events(path) if e.type == "user/message")
    parts = _stored(path, ev.seq)["data"]["content"]
    assert [b["type"] for b in parts] == ["text", "image", "text"]
    m = event_message(ev)
    # no name on this attachment: the media type names it
    assert content_text(m["content"]) == f"{parts[0]['text']}\n[image {parts[1]['attachment']['mediaType']}]\n{parts[2]['text']}"
    assert event_fields(ev)[0] == (USER, content_text(m["content"]), None)
    # the text alone, concatenated as written (the CLI's and the fork preview's view)
    assert message_text(m) == parts[0]["text"] + parts[2]["text"]


def test_v4_user_message_with_six_images_gives_one_label_per_image_in_order():
    ev = next(e for e in _events(V4_IMAGES) if e.type == "user/message"
              and sum(1 for b in blocks(e.data) if b.get("type") == "image") == 6)
    lines = content_text(ev.data["content"]).split("\n")
    stored = [b for b in ev.data["content"] if isinstance(b, dict)]
    expect = [b["text"] if b["type"] == "text" else f"[image {b['attachment'].get('name') or b['attachment']['mediaType']}]"
              for b in stored if b["type"] != "text" or b["text"]]
    assert lines == expect
    assert sum(1 for x in lines if x.startswith("[image ")) == 6


def test_v4_assistant_reasoning_and_text_are_separate_fields_built_from_the_same_blocks():
    evs = [e for e in _events(V4_REASONING) if e.type == "assistant/message"]
    both = next(e for e in evs if {b.get("type") for b in blocks(e.data["message"])} >= {"reasoning", "text"})
    m = both.data["message"]
    reasoning = [b["text"] for b in m["content"] if b["type"] == "reasoning"]
    texts = [b["text"] for b in m["content"] if b["type"] == "text"]
    fields = {f.kind: f.text for f in event_fields(both)}
    assert fields[REASONING] == "\n".join(reasoning)
    assert fields[ASSISTANT] == "\n".join(texts)
    assert message_text(m, ("reasoning",)) == "".join(reasoning)
    assert message_text(m) == "".join(texts)
    # a tool-call-only step has no assistant text field and no reasoning leak into it
    call_only = next(e for e in evs if "text" not in {b.get("type") for b in blocks(e.data["message"])})
    assert ASSISTANT not in {f.kind for f in event_fields(call_only)}


# --------------------------------------------------------------------------- the whole corpus

def test_every_fixture_message_shows_each_text_block_verbatim_and_in_order():
    seen = {"messages": 0, "image": 0, "reasoning": 0, "tool-result": 0, "v4-tool": 0, "system": 0}
    for p, ev, m in _messages():
        seen["messages"] += 1
        shown = content_text(m.get("content"))
        at = 0
        for b in blocks(m):
            t = b.get("type")
            if t in seen:
                seen[t] += 1
            inner = blocks({"content": b.get("content")}) if t == "tool-result" else [b]
            for x in inner:
                if x.get("type") in ("text", "reasoning") and x.get("text"):
                    i = shown.find(x["text"], at)
                    assert i >= 0, (str(p), ev.seq, x["text"][:80])
                    at = i + len(x["text"])
                elif x.get("type") == "image":
                    i = shown.find("[image", at)
                    assert i >= 0, (str(p), ev.seq)
                    at = i + 1
        if m.get("role") == "tool":
            seen["v4-tool"] += 1
            # a v4 tool message is the result itself: search and presenters agree on text-only content
            if all(b.get("type") == "text" for b in blocks(m)):
                assert result_text(tool_result_of(ev)) == shown
        if ev.type in ("system/message", "developer/message") and shown:
            seen["system"] += 1
            assert (SYSTEM, shown, None) in event_fields(ev)
    # the corpus really holds what the checks above are about (so they can fail)
    assert seen["messages"] > 500 and all(seen[k] > 0 for k in seen), seen


def test_text_only_content_reads_the_same_through_every_caller():
    n = 0
    for _p, ev, m in _messages():
        bs = blocks(m)
        if ev.type != "tool/result" or m.get("role") == "tool" or len(bs) != 1 or bs[0].get("type") != "tool-result":
            continue
        inner = bs[0].get("content")
        if not inner or not all(isinstance(x, dict) and x.get("type") == "text" for x in inner):
            continue
        n += 1
        plain = "\n".join(x["text"] for x in inner)
        assert result_text(tool_result_of(ev)) == plain                  # presenters
        assert message_blocks(m)[0][1] == plain                              # export
        assert content_text(m["content"]) == "\n".join(x["text"] for x in inner if x["text"])   # search/outline
    assert n > 50, n


@pytest.mark.parametrize("caller", ["display", "presenter", "export", "message_text"])
def test_a_null_text_in_a_real_message_shows_as_nothing_in_every_caller(caller):
    """A hostile edit of a real v0 result (a text block's text set to null) reads as an empty
    text everywhere (the copies before the merge printed Python's ``None`` in three of them)."""
    path = fixture(V0_READ_IMAGE)
    ev = next(e for e in _events(path) if e.type == "tool/result")
    m = json.loads(json.dumps(event_message(ev)))
    m["content"][0]["content"][0]["text"] = None
    att = m["content"][0]["content"][1]["attachment"]
    if caller == "display":          # empty parts are left out of the display text
        out, expect = content_text(m["content"]), f"[image {att['name']}]"
    elif caller == "presenter":      # one line per block, an empty one included
        out = result_text({"content": m["content"][0]["content"]})
        expect = f"\n[image {att['name']} {att['mediaType']} {att['width']}x{att['height']} {att['bytes']} bytes]"
    elif caller == "export":
        out, expect = message_blocks(m)[0][1], f"\n[image {att['name']} {att['mediaType']} {att['attachmentId']}]"
    else:
        out, expect = message_text({"content": m["content"][0]["content"]}), ""
    assert out == expect

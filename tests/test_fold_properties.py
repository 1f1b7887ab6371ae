"""Properties of the folds and the packed-row codec (hypothesis)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from app.log.format.codec import RowCodec, encode_row, expand_packed, pack_events
from app.log.fold.folds import HeaderFold, SurfaceFold, fold_request_header, fold_surface
from app.log.format.model import Event, PACKED_TAGS


@st.composite
def surface_logs(draw):
    """Random valid logs of surface appends and replaces, with log-only events between."""
    n = draw(st.integers(1, 40))
    events, nodes = [], []
    for seq in range(n):
        kind = draw(st.sampled_from(["append", "append", "replace", "other", "header"]))
        if kind == "replace" and nodes:
            i = draw(st.integers(0, len(nodes) - 1))
            j = draw(st.integers(i, min(len(nodes) - 1, i + 3)))
            sl = nodes[i:j + 1]
            extra = draw(st.lists(st.sampled_from(list(range(seq)) or [0]), max_size=2))
            ev = Event(seq=seq, type="user/message", time=0,
                       data={"id": f"m{seq}", "role": "user", "content": [{"type": "text", "text": f"r{seq}"}]},
                       surface_op={"op": "replace", "start": sl[0], "end": sl[-1]},
                       source_event_seqs=sorted(set(sl + extra)))
            nodes[i:j + 1] = [seq]
        elif kind in ("append", "replace"):
            typ = draw(st.sampled_from(["user/message", "assistant/message", "tool/result"]))
            empty = typ == "assistant/message" and draw(st.booleans())
            msg = {"id": f"m{seq}", "role": "assistant" if typ == "assistant/message" else "user",
                   "content": [] if empty else [{"type": "text", "text": f"t{seq}"}]}
            data = msg if typ == "user/message" else {"turn": 1, "step": 1, "message": msg}
            ev = Event(seq=seq, type=typ, time=0, data=data, surface_op="append")
            nodes.append(seq)
        elif kind == "header":
            ev = Event(seq=seq, type="request/header", time=0,
                       data={"header": {"config": {"model": f"m{seq}"}, "system": draw(st.sampled_from(["", "s"])),
                                        "tools": draw(st.sampled_from([[], ["t"]]))}, "reason": "change"})
        else:
            ev = Event(seq=seq, type="session/title", time=0, data={"title": "x", "messageSeqs": []})
        events.append(ev)
    return events, nodes


def reference_messages(events):
    """Naive oracle: recompute the node list from scratch by replaying splices on a list."""
    nodes = []
    by_seq = {}
    for ev in events:
        if ev.type not in ("user/message", "assistant/message", "tool/result"):
            continue
        by_seq[ev.seq] = ev
        if ev.surface_op == "append":
            nodes = nodes + [ev.seq]
        else:
            i, j = nodes.index(ev.surface_op["start"]), nodes.index(ev.surface_op["end"])
            nodes = nodes[:i] + [ev.seq] + nodes[j + 1:]
    out = []
    for s in nodes:
        ev = by_seq[s]
        m = ev.data if ev.type == "user/message" else ev.data["message"]
        if ev.type == "assistant/message" and not m["content"]:
            continue
        out.append(m)
    return nodes, out


@settings(max_examples=300, deadline=None)
@given(surface_logs())
@pytest.mark.slow
def test_fold_of_prefix_equals_prefix_of_incremental_fold(log):
    events, final_nodes = log
    inc = SurfaceFold()
    hinc = HeaderFold()
    for k, ev in enumerate(events):
        inc.apply(ev)
        hinc.apply(ev)
        prefix = events[:k + 1]
        whole = fold_surface(prefix)
        ref_nodes, ref_msgs = reference_messages(prefix)
        assert inc.nodes == whole.nodes == ref_nodes
        assert inc.messages() == whole.messages() == ref_msgs
        assert hinc.header == fold_request_header(prefix)
        assert not inc.violations
    assert inc.nodes == final_nodes


@st.composite
def delta_runs(draw):
    events, seq, t = [], draw(st.integers(0, 1000)), draw(st.integers(0, 2 ** 40))
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["text-delta", "reasoning-delta", "tool-call-delta", "other"]))
        turn, step, index = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(0, 2))
        for _ in range(draw(st.integers(1, 6))):
            t += draw(st.integers(-50, 100))
            if kind == "tool-call-delta":
                chunk = {"type": kind, "index": index, "id": "call_1"}
                if draw(st.booleans()):
                    chunk["name"] = "bash"
                chunk["argumentsDelta"] = draw(st.text(max_size=5))
            elif kind == "other":
                chunk = {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 2}}
            else:
                chunk = {"type": kind, "index": index, "text": draw(st.text(max_size=5))}
            events.append({"type": "assistant/chunk", "seq": seq, "time": t,
                           "data": {"turn": turn, "step": step, "chunk": chunk}})
            seq += 1
    return events


@settings(max_examples=300, deadline=None)
@given(delta_runs())
def test_packed_rows_round_trip(events):
    rows = pack_events(events)
    codec = RowCodec("s")
    back = []
    for row in rows:
        items, problems = codec.decode_row(encode_row(row))
        assert not problems
        back.extend(e.envelope() for e in items)
        if row["type"] in PACKED_TAGS:
            assert len(row["data"]["dt"]) == len(expand_packed(row)) - 1 >= 2
    assert back == events
    # idempotent: packing the expansion again gives the same rows
    assert pack_events(back) == rows

"""A big log's timeline read in more than two parts at once (issue 31: one process per free core): the parts, cut
at turn starts, join into exactly the spans of one pass, or say they cannot (``timeline_split.merge_all``)."""
from __future__ import annotations

import itertools
import json
from pathlib import Path

from app.log.query.timeline import timeline

from app.log.query.timeline_summary import in_log_order
from app.log.query.timeline_split import merge_all, part, split_points
from app.store.faces import open_reader
from app.tools.hostile import jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES


def _turn_starts(p: Path) -> list[int]:
    data = p.read_bytes()
    out, at = [], 0
    while (i := data.find(b'\n{"type":"turn/start",', at)) >= 0:
        out.append(i + 1)
        at = i + 1
    return out


def _parts(r, cuts: list[int]) -> list:
    bounds = [None, *cuts, None]
    return [part(r, a, z) for a, z in zip(bounds, bounds[1:])]


def test_three_and_four_parts_join_into_the_one_pass(tmp_path: Path):
    logs = []
    for version in (0, 4):
        p = tmp_path / f"g{version}" / "session.jsonl"
        write_jsonl(str(p), SessionSynth(71 + version, version=version, p_retry=0.3), target_bytes=500_000)
        logs.append(p)
    lines = logs[0].read_bytes().split(b"\n")          # a turn without its end in the middle part: never joined
    ends = [i for i, ln in enumerate(lines) if ln.startswith(b'{"type":"turn/end",')]
    p = tmp_path / "open" / "session.jsonl"
    p.parent.mkdir()
    drop = ends[len(ends) // 2]
    p.write_bytes(b"\n".join(lines[:drop] + lines[drop + 1:]))
    logs.append(p)
    src = FIXTURES / "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
    for k, (_n, blob, _kept) in enumerate(jsonl_mutants(src.read_bytes(), seed=9, count=8)):
        m = tmp_path / f"m{k}" / "session.jsonl"
        m.parent.mkdir()
        m.write_bytes(blob)
        logs.append(m)
    joined = refused = 0
    for p in logs:
        r = open_reader(str(p))
        if r.fatal or r.envelope_free:
            continue
        whole = json.dumps(list(timeline(r)))
        cuts = _turn_starts(p)
        step = max(1, len(cuts) // 5)
        for n in (2, 3):
            for chosen in itertools.islice(itertools.combinations(cuts[1::step], n), 12):
                got = merge_all(_parts(r, list(chosen)))
                if got is None:
                    refused += 1
                else:
                    assert json.dumps(got) == whole, (p, chosen)
                    joined += 1
        pts = split_points(r, 4)
        assert pts == sorted(set(pts)) and set(pts) <= set(cuts)
    assert joined >= 40 and refused >= 3, (joined, refused)


def test_a_big_log_is_read_in_three_processes(tmp_path: Path, monkeypatch):
    """Three parts (two ``timeline-part`` children from a start to a stop, and to the end): the spans (and the
    saved ones) are those of one pass."""
    from app.store import timeline_child
    from app.store.timeline_cache import cached_spans
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(timeline_child, "PARTS", 3)
    p = tmp_path / "s" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(62, version=4, p_retry=0.2), target_bytes=600_000)
    r = open_reader(str(p))
    whole = list(timeline(r))
    assert len(split_points(r, 3)) == 2
    assert json.dumps(timeline_child.split_spans(r)) == json.dumps(whole)
    spans, how = cached_spans(open_reader(str(p)))
    assert how == "built" and json.dumps(spans.dicts()) == json.dumps(in_log_order(whole))
    monkeypatch.setattr(timeline_child, "PARTS", None)
    monkeypatch.setattr(timeline_child, "SPLIT_MIN", 0)
    monkeypatch.setattr(timeline_child, "PART_MIN", 200_000)        # (parts of at least 200 KB: 3 at most)
    monkeypatch.setattr(timeline_child, "SPLIT_WHEN_BUSY", True)
    assert timeline_child.parts_for(600_000) == min(3, __import__("os").cpu_count() or 1)


def test_later_parts_take_whole_turns_and_join_into_the_one_pass(tmp_path: Path, monkeypatch):
    """The parts after the first read their turns whole in C too (``Builder.turn_c`` with the part's probes): on every
    fixture (dsh, dsh-next) and on generated v4 logs with retries, compactions and request rows within turns, cut at
    several turn starts, the parts join into exactly the spans (and turns and totals) of one pass row by row, and
    join whenever the parts read row by row join; most turns of the later parts are taken whole."""
    import pickle

    import pytest
    from app.log.query import timeline_rows as tr
    from app.log.query.timeline_split import packed_part, unpacked_part
    from app.log.query import timeline_scan
    from app.log.query.timeline import Builder
    from app.log.query.timeline_summary import summarize
    if timeline_scan._c_scan is None:
        pytest.skip("the row scanner in C is not built")
    prices = {"deepseek-*": {"input": 0.28, "cacheRead": 0.028, "output": 0.42}}
    taken = {"later": 0}
    real = Builder.turn_c

    def turn_c(b: Builder, x, data: bytes) -> bool:
        ok = real(b, x, data)
        if ok and b.at.misses is not None:
            taken["later"] += 1
        return ok
    monkeypatch.setattr(Builder, "turn_c", turn_c)
    logs = sorted(FIXTURES.rglob("*.jsonl")) + sorted((FIXTURES.parent / "dsh-next").rglob("*.jsonl"))
    for k, mix in enumerate(({"p_retry": 0.3}, {"p_retry": 0.2, "context_window": 24_000, "p_header_change": 0.3},
                             {"p_retry": 0.0, "context_window": 16_000})):
        g = tmp_path / f"g{k}" / "session.jsonl"
        write_jsonl(str(g), SessionSynth(80 + k, version=4, **mix), target_bytes=500_000)
        logs.append(g)
    for k, (_n, blob, _kept) in enumerate(jsonl_mutants(logs[-2].read_bytes(), seed=17, count=6)):
        m = tmp_path / f"m{k}" / "session.jsonl"          # (hostile rows in a v4 log with compactions and retries)
        m.parent.mkdir()
        m.write_bytes(blob)
        logs.append(m)
    joined = compared = marks = 0

    def whole(r) -> tuple[str, str, str]:
        out = summarize(in_log_order(list(timeline(r))), prices, ordered=True)
        return json.dumps(out["spans"]), json.dumps(out["turns"]), json.dumps(out["totals"])

    for p in logs:
        r = open_reader(str(p))
        if r.fatal or r.envelope_free or (r.version or 0) < 2:
            continue
        cuts = _turn_starts(p)
        if not cuts:
            continue
        monkeypatch.setattr(tr, "TURN_C", False)
        want = whole(r)
        step = max(1, len(cuts) // 4)
        choices = [[c] for c in cuts[::step]] + list(itertools.islice(itertools.combinations(cuts[1::step], 2), 4))
        for chosen in choices:
            monkeypatch.setattr(tr, "TURN_C", False)
            rows = merge_all(_parts(r, list(chosen)))
            monkeypatch.setattr(tr, "TURN_C", True)
            parts = _parts(r, list(chosen))
            sent = [parts[0]] + [unpacked_part(pickle.loads(pickle.dumps(packed_part(x)))) for x in parts[1:]]
            got = merge_all(parts)
            assert json.dumps(merge_all(sent)) == json.dumps(got)         # (as the parts' processes send them)
            marks += sum(x[1]["marks"] for x in sent[1:])
            compared += 1
            if rows is not None:
                assert got is not None, (p, chosen)       # (whole turns refuse no join the rows make)
            if got is not None:
                joined += 1
                out = summarize(in_log_order(got), prices, ordered=True)
                assert (json.dumps(out["spans"]), json.dumps(out["turns"]), json.dumps(out["totals"])) == want, \
                    (p, chosen)
    assert compared >= 40 and joined >= 30, (compared, joined)
    assert taken["later"] >= 50, taken
    assert marks >= 10, marks


def test_a_part_crosses_processes_as_it_is(tmp_path: Path):
    """A later part's spans sent as MessagePack (``packed_part``) read back (``unpacked_part``) equal to the part, its
    marks the same objects; spans MessagePack cannot hold (an integer of more than 64 bits, a lone surrogate) go as
    they are."""
    import pickle
    from app.log.query.timeline_split import MARKS, packed_part, unpacked_part
    p = tmp_path / "s" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(63, version=4, p_retry=0.3, context_window=24_000), target_bytes=400_000)
    r = open_reader(str(p))
    cut = _turn_starts(p)[5]
    for got in (part(r, cut, None), part(r, None, cut)):
        sent = pickle.loads(pickle.dumps(packed_part(got)))
        assert isinstance(sent[0], bytes)
        back = unpacked_part(sent)
        marks = [(i, k) for i, s in enumerate(got[0]) for k, m in MARKS.items() if s.get(k) is m]
        assert back[0] == got[0] and back[1] == {**got[1], "marks": len(marks)}
        assert [(i, k) for i, s in enumerate(back[0]) for k, m in MARKS.items() if s.get(k) is m] == marks
    marked = [{"kind": "attempt", "seq": 3, "model": MARKS["model"], "contextWindow": MARKS["contextWindow"]},
              {"kind": "compaction", "seq": 4, "tokensBefore": MARKS["tokensBefore"], "tokensAfter": None}]
    back = unpacked_part(pickle.loads(pickle.dumps(packed_part((marked, {"model": MARKS["model"]})))))
    assert back == (marked, {"model": MARKS["model"], "marks": 3}) and back[0][0]["model"] is MARKS["model"] \
        and back[0][1]["tokensBefore"] is MARKS["tokensBefore"] and back[1]["model"] is MARKS["model"]
    for odd in (1 << 70, "\ud800"):
        spans = [{"kind": "tool", "seq": 1, "error": odd}]
        sent = packed_part((spans, {}))
        assert sent[0] is spans and unpacked_part(sent)[0] is spans


def test_parts_for_splits_only_with_an_idle_core_and_never_past_the_cores(monkeypatch):
    from app.store import timeline_child
    monkeypatch.setattr(timeline_child, "PARTS", None)
    monkeypatch.setattr(timeline_child.os, "cpu_count", lambda: 2)
    for load, want in ((0.0, 2), (0.4, 2), (0.6, 1), (1.0, 1), (1.2, 1), (4.0, 1)):
        monkeypatch.setattr(timeline_child.os, "getloadavg", lambda load=load: (load, load, load))
        assert timeline_child.parts_for(1 << 30) == want, load
    assert timeline_child.parts_for(timeline_child.SPLIT_MIN - 1) == 1


def test_a_part_sent_in_batches_is_the_part(tmp_path: Path, monkeypatch):
    """A part's spans given out in batches while it reads on (``part``'s sink; a compaction waiting for its
    ``tokensAfter`` held back until final) are its spans; a big log read in three processes whose parts send their
    spans in batches of 5 gives the spans of one pass."""
    from app.log.query.timeline_split import MARKS
    from app.store import timeline_child
    logs = []
    for k, mix in enumerate(({"p_retry": 0.3, "context_window": 16_000}, {"p_retry": 0.2, "context_window": 24_000,
                                                                            "p_header_change": 0.3})):
        g = tmp_path / f"g{k}" / "session.jsonl"
        write_jsonl(str(g), SessionSynth(110 + k, version=4, **mix), target_bytes=400_000)
        logs.append(g)
    logs += [p for p in sorted((FIXTURES.parent / "dsh-next").rglob("*.jsonl")) if _turn_starts(p)][:20]
    logs += sorted(FIXTURES.rglob("compaction-recovery/session.jsonl"))     # (a compaction waits across a turn end)
    held = 0
    for p in logs:
        r = open_reader(str(p))
        if r.fatal or r.envelope_free:
            continue
        cuts = _turn_starts(p)
        for a, z in ((None, None), (None, cuts[len(cuts) // 2]), (cuts[len(cuts) // 3], None), (cuts[0], None)):
            want = part(open_reader(str(p)), a, z)
            for batch in (1, 3, 50):
                got: list = []
                rest, state = part(open_reader(str(p)), a, z, got.append, batch)
                held += sum(len(x) > batch for x in got)        # (a span held back went with a later batch)
                assert json.dumps([s for x in got for s in x] + rest, default=repr) == json.dumps(want[0], default=repr)
                assert state == want[1]
                if a is not None:                 # (the marks are the same objects)
                    assert [k for x in got for s in x for k, m in MARKS.items() if s.get(k) is m] + \
                        [k for s in rest for k, m in MARKS.items() if s.get(k) is m] == \
                        [k for s in want[0] for k, m in MARKS.items() if s.get(k) is m]
    assert held >= 1
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(timeline_child, "PARTS", 3)
    monkeypatch.setattr(timeline_child, "SEND_BATCH", 5)
    r = open_reader(str(logs[0]))
    assert json.dumps(timeline_child.split_spans(r)) == json.dumps(list(timeline(r)))

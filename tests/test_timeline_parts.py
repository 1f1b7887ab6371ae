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

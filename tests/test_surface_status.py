"""Surface status per row (current / shadowed / log-only) with the page, and compaction groups."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli.main import main as cli
from app.log.fold.folds import fold_surface
from app.log.format.model import SURFACE_TYPES
from app.log.index.reader import LogReader
from app.log.fold.surface import (SurfaceIndex, compaction_group, compaction_line, index_for, page_surface, row_surface,
                             summary_text)
from app.log.query.trace import trace_event
from app.tools.synth import SessionSynth, write_jsonl

repo_root = Path(__file__).resolve().parents[1]
fixtures = repo_root.parent / "shared" / "fixtures" / "dsh"
COMPACTION = fixtures / "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"
PLUGIN_REPLACE = fixtures / "examples/acp-agent/tests/snapshots/agent-instructions/session.jsonl"
NEXT = repo_root.parent / "shared" / "fixtures" / "dsh-next"


def _page(capsys, path, *extra) -> dict:
    assert cli(["page", str(path), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_page_json_compaction_recovery(capsys):
    obj = _page(capsys, COMPACTION, "--limit", "200")
    assert obj["truth"]["name"] == "Logical history (crash closed in memory)"
    by = {e["event"]["seq"]: e for e in obj["events"]}
    # seq 4 (the original prompt) is no longer in the model's view since seq 21 (the compaction checkpoint)
    assert by[4]["surface"] == "shadowed"
    d = by[4]["surfaceDetail"]
    assert d["since"] == 21 and d["replacedBy"] == 21 and d["chain"] == [21]
    assert d["compaction"]["startSeq"] == 19 and d["compaction"]["summarySeq"] == 20 and d["compaction"]["endSeq"] == 22
    assert by[21]["surface"] == "current" and by[21]["surfaceDetail"]["replaces"] == [4]
    for s in (13, 15, 28):
        assert by[s]["surface"] == "current" and "surfaceDetail" not in by[s]
    for s in (0, 1, 5, 6, 14, 19, 20, 22, 30):
        assert by[s]["surface"] == "log-only"
    # every event carries a surface status
    assert all("surface" in e for e in obj["events"] if "event" in e)
    # the collapsed compaction row
    (g,) = obj["compactions"]
    assert g["replacedCount"] == 1 and g["shadowedSeqs"] == [4] and g["replacementSeqs"] == [21]
    assert g["rows"] == [19, 20, 21, 22] and g["complete"]
    assert g["summary"] == "The request established a durable compaction premise."
    assert g["tokensBefore"] > g["tokensAfter"] > 0


def test_statuses_agree_with_trace_and_model_view():
    r = LogReader.open(str(COMPACTION))
    idx = index_for(r)
    evs = list(r.iter_events(logical=True))
    model_view = set(fold_surface(evs).message_seqs())
    for ev in evs:
        st = row_surface(idx, ev)
        tr = trace_event(evs, ev.seq)
        assert st["surface"] == tr["surface"], ev.seq
        if st["surface"] == "shadowed":
            assert st["since"] == tr["replacedBy"] and st["chain"] == tr["replacementChain"]
        if ev.type in SURFACE_TYPES and ev.seq in model_view:
            assert st["surface"] == "current"


def test_plugin_replace_without_compaction(capsys):
    obj = _page(capsys, PLUGIN_REPLACE, "--limit", "200")
    by = {e["event"]["seq"]: e for e in obj["events"]}
    assert by[5]["surface"] == "shadowed" and by[5]["surfaceDetail"]["since"] == 17
    assert "compaction" not in by[5]["surfaceDetail"]
    assert by[17]["surfaceDetail"]["replaces"] == [5]
    assert obj["compactions"] == []


@pytest.fixture(scope="module")
def synth_log(tmp_path_factory):
    p = tmp_path_factory.mktemp("surf") / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=3, context_window=20000), turns=40)
    return p


@pytest.mark.slow
def test_synthetic_compactions_pages_and_chains(synth_log, capsys):
    r = LogReader.open(str(synth_log))
    idx = index_for(r)
    assert index_for(r) is idx                      # cached per reader and source state
    evs = list(r.iter_events(logical=True))
    f = fold_surface(evs, keep_events=False)
    assert len(idx.compactions) >= 2
    chains = {s: idx.replacement_chain(s) for s in f.replaced_by}
    assert max(len(c) for c in chains.values()) >= 2     # a compaction that replaced an earlier checkpoint
    current = set(f.nodes)
    # page by page (the CLI, newest first, then --before), each row's status is the whole fold's
    seen = 0
    before = None
    while True:
        extra = ["--limit", "40"] + (["--before", str(before)] if before is not None else [])
        obj = _page(capsys, synth_log, *extra)
        for e in obj["events"]:
            if "event" not in e:
                continue
            s, t = e["event"]["seq"], e["event"]["type"]
            seen += 1
            if s in f.replaced_by:
                assert e["surface"] == "shadowed"
                assert e["surfaceDetail"]["since"] == f.replaced_by[s]
                assert e["surfaceDetail"]["chain"] == chains[s]
                assert e["surfaceDetail"]["compaction"]["startSeq"] < f.replaced_by[s]
            elif t in SURFACE_TYPES:
                assert e["surface"] == "current" and s in current
            else:
                assert e["surface"] == "log-only"
        if not obj["hasMore"]:
            break
        before = obj["baseSeq"]
    assert seen > 0
    # each group: the shadowed items, summary as text, context estimate shrinks
    for rec in idx.compactions:
        g = compaction_group(idx, rec["compactionId"])
        assert g["replacedCount"] == len(g["shadowedSeqs"]) > 0
        assert all(f.replaced_by[s] in g["replacementSeqs"] for s in g["shadowedSeqs"])
        assert g["summary"] and not g["summary"].startswith("[")
        assert g["tokensAfter"] < g["tokensBefore"]
        assert compaction_group(idx, g["startSeq"] + 1)["compactionId"] == g["compactionId"]
        line = compaction_line(g)
        assert f"{g['replacedCount']} items replaced" in line and "[{" not in line


@pytest.mark.slow
def test_index_fed_incrementally_equals_built(synth_log):
    r = LogReader.open(str(synth_log))
    evs = list(r.iter_events(logical=False))
    whole = index_for(r)
    inc = SurfaceIndex()
    for i in range(0, len(evs), 997):                 # rows arriving in batches (a live log)
        inc.feed(evs[i:i + 997])
    assert inc.fold.replaced_by == whole.fold.replaced_by
    assert [inc.shadowed_of(c) for c in inc.compactions] == [whole.shadowed_of(c) for c in whole.compactions]
    assert page_surface(inc, evs[-500:]) == page_surface(whole, evs[-500:])


def test_summary_text_never_a_list_repr():
    blocks = [{"type": "text", "text": "first part"}, {"type": "text", "text": "second part"}]
    assert summary_text(blocks) == "first part\n\nsecond part"
    assert summary_text("plain") == "plain"
    assert summary_text(None) == ""
    assert summary_text([{"type": "image", "attachment": {}}]) == "[image]"


def test_markdown_export_prints_summary_as_text(tmp_path):
    from app.store.export import export_transcript
    from app.store.faces import open_reader
    out = tmp_path / "t.md"
    export_transcript(open_reader(str(COMPACTION)), str(out), "markdown")
    md = out.read_text()
    assert "The request established a durable compaction premise." in md
    assert "[{'type'" not in md and '[{"type"' not in md


def test_v4_compaction_two_rows_replaced():
    p = NEXT / "0217po+deepseek-harness@321a6fa740/snapshots/session/compaction-output-reserve/session.v4.jsonl"
    r = LogReader.open(str(p))
    assert not r.fatal
    idx = index_for(r)
    st8, st9 = (row_surface(idx, r.event_at(s)) for s in (8, 9))
    assert st8["surface"] == st9["surface"] == "shadowed" and st8["since"] == st9["since"]
    g = compaction_group(idx, st8["since"])
    assert g["replacedCount"] == 2 and g["shadowedSeqs"] == [8, 9] and g["replacementSeqs"] == [st8["since"]]
    assert g["summary"] and "[{" not in g["summary"]


def test_v4_image_compaction_page(capsys):
    p = NEXT / "0217po+deepseek-harness@321a6fa740/snapshots/acp/image-compaction/session.v4.jsonl"
    obj = _page(capsys, p, "--limit", "200")
    by = {e["event"]["seq"]: e for e in obj["events"]}
    assert by[8]["surface"] == "shadowed" and by[8]["surfaceDetail"]["since"] == 22
    assert by[8]["surfaceDetail"]["compaction"]["startSeq"] == 19
    assert by[7]["surface"] == "current" and by[7]["event"]["type"] == "system/message"   # a v3+ surface type
    assert by[22]["surfaceDetail"]["replaces"] == [8]
    (g,) = obj["compactions"]
    assert g["replacedCount"] == 1 and g["tokensBefore"] > g["tokensAfter"]


def test_v3_system_head_replacement():
    p = NEXT / ("zsagi1368+deepseek-harness-zDSH@30f71de5f3/packages/test-support/session-snapshot/tests/fixtures/"
                "suite/pin-turn/session.v3.jsonl")
    r = LogReader.open(str(p))
    idx = index_for(r)
    assert row_surface(idx, r.event_at(2)) == {"surface": "shadowed", "since": 6, "replacedBy": 6, "chain": [6]}
    assert row_surface(idx, r.event_at(6)) == {"surface": "current", "replaces": [2]}
    assert idx.compactions == []


def test_page_text_names_shadowed_rows_and_compaction(capsys):
    assert cli(["page", str(COMPACTION), "--limit", "200"]) == 0
    out = capsys.readouterr().out
    assert "      4 user/message [not in the model's view since seq 21]" in out
    assert "     21 user/message [replaces seqs 4]" in out
    assert "seq 19–22: Compaction: 1 item replaced · ~" in out
    assert "The request established a durable compaction premise." in out and "[{" not in out


def test_describe_surface_words():
    from app.log.fold.surface import describe_surface
    r = LogReader.open(str(COMPACTION))
    idx = index_for(r)
    assert describe_surface(row_surface(idx, r.event_at(4))) == \
        "Not in the model's view since seq 21 (replaced by seq 21, compaction at seqs 19–22)"
    assert describe_surface(row_surface(idx, r.event_at(21))) == "In the model's view; replaces seq 4 by compaction"
    assert describe_surface(row_surface(idx, r.event_at(13))) == "In the model's view"
    assert describe_surface(row_surface(idx, r.event_at(19))) == "Log only: not a model message"
    p = LogReader.open(str(PLUGIN_REPLACE))
    assert describe_surface(row_surface(index_for(p), p.event_at(5))) == \
        "Not in the model's view since seq 17 (replaced by seq 17)"


@pytest.mark.slow
def test_describe_chain(synth_log):
    from app.log.fold.surface import describe_surface
    r = LogReader.open(str(synth_log))
    idx = index_for(r)
    s = next(s for s in idx.fold.replaced_by if len(idx.replacement_chain(s)) >= 2)
    ev = next(e for e in r.iter_events() if e.seq == s)
    text = describe_surface(row_surface(idx, ev))
    chain = idx.replacement_chain(s)
    assert text.startswith(f"Not in the model's view since seq {chain[0]} (replaced by seq {chain[0]}, compaction at")
    assert "replaced in turn by seq" in text and str(chain[-1]) in text


def _all_logs():
    import glob
    out = sorted(glob.glob(str(fixtures / "**/*.jsonl"), recursive=True))
    out += sorted(glob.glob(str(NEXT / "**/*.jsonl"), recursive=True))
    out += sorted(glob.glob(str(repo_root / "resources/demo/sessions/*/*/session.jsonl*")))
    return out


@pytest.mark.slow
def test_row_skipping_index_equals_the_full_decode(tmp_path):
    """The index decodes only rows that can matter; on every fixture, the demo store and synthetic v0
    and v4 logs with compactions it equals the index built from every decoded event."""
    paths = _all_logs()
    for v in (0, 4):
        p = tmp_path / f"s{v}.jsonl"
        write_jsonl(str(p), SessionSynth(seed=3, context_window=20000, **({"version": v} if v else {})), turns=30)
        paths.append(str(p))
    compared = 0
    for p in paths:
        fast, full = LogReader.open(p), LogReader.open(p)
        if fast.fatal:
            continue
        a, b = index_for(fast), index_for(full, exact=True)
        evs = list(full.iter_events(logical=True))
        assert a.fold.replaced_by == b.fold.replaced_by and a.fold.nodes == b.fold.nodes, p
        assert a.rejected == b.rejected and a.compactions == b.compactions, p
        assert page_surface(a, evs) == page_surface(b, evs), p
        compared += 1
    assert compared > 150


def test_history_row_prints_the_summary_as_text():
    from app.ui.history.rows import _generic_event
    r = LogReader.open(str(COMPACTION))
    ev = r.event_at(20)
    assert ev.type == "compaction/summary"
    c = _generic_event(ev, ev.data)
    assert c.badge == "COMPACTION"
    assert [b.text for b in c.blocks] == ["The request established a durable compaction premise."]

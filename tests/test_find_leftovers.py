"""Leftovers of issue 17: a case-insensitive search for a non-ASCII word keeps the byte prefilter
(raw UTF-8 and ``\\uXXXX``-escaped logs, every case variant ``re`` folds), a reasoning filter in the
view, and problems without a seq (a malformed row) that still jump to the nearest row."""
from __future__ import annotations

import json

import pytest

from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, FindStats, build_prefilter, find, find_all
from app.log.source.sources import RawJsonlSource
from app.log.query.textview import fold_case
from app.tools.plant import PlantingSynth
from app.tools.synth import write_jsonl

WORD = "GRÜẞEÑANDÚ"          # capital sharp s: re folds it with ß, str.lower() does not reach it


@pytest.fixture(scope="module")
def nonascii_logs(tmp_path_factory):
    """One generated log with a non-ASCII word planted, stored raw (UTF-8, as dsh writes) and
    re-encoded by an ASCII-only writer (``\\u00dc``…)."""
    d = tmp_path_factory.mktemp("nonascii")
    s = PlantingSynth(seed=3, at_turn=4, plants={WORD: "user-nonascii", "pangolinreason": "reasoning"})
    raw = d / "raw.jsonl"
    write_jsonl(str(raw), s, turns=12)
    assert WORD.encode() in raw.read_bytes()
    esc = d / "escaped.jsonl"
    with open(raw, "rb") as f, open(esc, "wb") as out:
        for line in f:
            out.write(json.dumps(json.loads(line), ensure_ascii=True).encode() + b"\n")
    assert esc.read_bytes().isascii()
    return {"raw": str(raw), "escaped": str(esc), "seq": s.planted[WORD][0]}


@pytest.mark.parametrize("form", ["raw", "escaped"])
@pytest.mark.parametrize("query", ["grüßeñandú", "GRÜSSEÑANDÚ", "Grüßeñandú", "eÑanDú", "grüẞe", "grüsse", "Grüsze"])
def test_caseless_nonascii_search_finds_every_case_variant_and_skips_segments(nonascii_logs, form, query):
    path, seq = nonascii_logs[form], nonascii_logs["seq"]
    want = fold_case(query) in fold_case(WORD)          # full case folding: "GRÜSSE" finds "GRÜẞE"
    r = LogReader(RawJsonlSource(path, block=16384))
    st = FindStats()
    hits = list(find(r, FindOptions(query), stats=st))
    assert [h.seq for h in hits] == ([seq] if want else []), (query, form)
    assert st.complete
    # the prefilter held: almost every segment skipped unparsed, few rows decoded
    assert st.segments > 5 and st.segments_skipped >= st.segments - 3, (st.segments, st.segments_skipped)
    assert st.rows_decoded <= 20
    # the same answer as a search that decodes every row (no prefilter)
    ref = [(e.seq) for e in LogReader.open(path).iter_events()
           if e.type == "user/message" and fold_case(query) in fold_case(json.dumps(e.data, ensure_ascii=False))]
    assert [h.seq for h in hits] == ref


def test_caseless_prefilter_needles_cover_the_folds():
    from app.log.query.find_prefilter import FOLD
    pre = build_prefilter(FindOptions("grüßeñandú"))
    assert pre is not None and pre.lower
    # one folded needle stands for every raw UTF-8 case variant of its stretch (one pass), and the
    # \u-escaped variants are needles of their own (looked for only where such escapes are)
    for variant in ("eñandú", "EÑANDÚ", "eÑandÚ"):
        assert variant.encode().translate(FOLD) in pre.needles
    assert len(pre.needles) == 1
    assert {b"e\\u00f1and\\u00fa", b"e\\u00d1and\\u00da"} <= set(pre.esc)
    # full case folding: ß, its capital ẞ (U+1E9E), "ss", "ſs": a needle for each (ß and ẞ: two lengths)
    sharp = build_prefilter(FindOptions("Maßkrug"))
    assert sharp is not None
    for variant in ("maßkrug", "MASSKRUG", "MAẞKRUG", "maſskrug", "Maßkrug"):
        assert sharp.hit(json.dumps({"text": f"ein {variant}!"}).encode()), variant
        assert sharp.hit(json.dumps({"text": f"ein {variant}!"}, ensure_ascii=False).encode()), variant
    cjk = build_prefilter(FindOptions("日本語"))          # no ASCII run at all: still a prefilter
    assert cjk is not None and "日本語".encode().translate(FOLD) in cjk.needles
    # ASCII: the stretch without letters that fold with non-ASCII ones (k: the Kelvin sign)
    assert build_prefilter(FindOptions("zebraquokka")).needles == [b"zebraquo"]
    kelvin = build_prefilter(FindOptions("kiwi"))         # i: also İ and ı; k: also K
    assert kelvin is not None and "KİW".encode().translate(FOLD) in kelvin.needles


def test_caseless_nonascii_cli_matches_core(nonascii_logs, capsys):
    from app.cli.main import main as cli
    assert cli(["find", nonascii_logs["escaped"], "grüßeñandú", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [h["seq"] for h in out["hits"]] == [nonascii_logs["seq"]]
    hits, _ = find_all(LogReader.open(nonascii_logs["raw"]), FindOptions("grüßeñandú", case=False))
    assert [h.seq for h in hits] == [nonascii_logs["seq"]]


# --------------------------------------------------------------------------- in the window


from app.tools.synth import SessionSynth  # noqa: E402
from test_ui_history import WAIT, idle, make_window, open_and_wait  # noqa: E402,F401 (fixtures)


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))


def _covers(r, seq):
    if r is None or r.seq is None:
        return False
    lo = r.first_seq if r.first_seq is not None else r.seq
    return lo <= seq <= max(r.seq, r.last_seq if r.last_seq is not None else r.seq)


def test_window_finds_a_nonascii_word_in_any_case(qtbot, make_window, nonascii_logs):  # noqa: F811
    for form in ("raw", "escaped"):
        win = make_window(page_size=3)
        h = open_and_wait(qtbot, win, nonascii_logs[form])
        qtbot.waitUntil(lambda: h.index_state == "ready", timeout=WAIT * 2)
        fa = win.find_actions
        assert not fa.opt_case.isChecked()            # the default: case-insensitive
        win.open_search()
        with qtbot.waitSignal(fa.searchFinished, timeout=WAIT * 2) as b:
            win.find_edit.setText("grüßeñandú")
        seq = nonascii_logs["seq"]
        assert [x.seq for x in fa.results.hits] == [seq], (form, b.args)
        assert b.args[0].startswith("1 match in ")
        qtbot.waitUntil(lambda: _covers(win.view.current_row(), seq), timeout=WAIT)
        assert WORD.casefold() in win.view.current_row().search_text()
        win.close()


@pytest.fixture(scope="module")
def long_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("long-leftovers") / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=5), turns=40)
    return str(path)


def _reasoning_rows(h):
    return [r for r in h.window.all_rows if r.kind == "assistant" and r.event is not None
            and any(isinstance(b, dict) and b.get("type") == "reasoning" and str(b.get("text", "")).strip()
                    for b in (r.event.data.get("message") or {}).get("content") or [])]


def test_reasoning_filter_hides_reasoning_blocks_and_shows_them_again(qtbot, make_window, long_log):  # noqa: F811
    win = make_window()
    h = open_and_wait(qtbot, win, long_log)
    ga = win.go_actions
    assert "reasoning" in ga.filter_actions
    labels = [a.text() for a in ga.filter_actions.values()]
    assert any("Reasoning" in t for t in labels)
    rows = _reasoning_rows(h)
    assert rows, "the synth log has assistant rows with reasoning"
    n_rows = len(h.window.all_rows)
    view = win.view
    r = rows[-1]
    i = h.row_index(r)
    assert i is not None
    doc = view.delegate.document(r, h.index(i, 0))
    assert "Reasoning" in doc.toPlainText()
    ga.filter_actions["reasoning"].setChecked(False)
    idle(qtbot, h)
    # the same rows (nothing else hidden), none of them with a reasoning block; painted without it
    assert len(h.window.all_rows) == n_rows
    for x in _reasoning_rows(h):
        assert not any(b.style == "reasoning" for b in x.content().blocks)
    i = h.row_index(r)
    assert i is not None and "Reasoning" not in view.delegate.document(r, h.index(i, 0)).toPlainText()
    # other filters still work with it, and the newest page keeps it after an older page arrives
    ga.filter_actions["tools"].setChecked(False)
    assert all(x.kind not in ("tool-call", "tool-result") for x in h.window.all_rows)
    ga.filter_actions["tools"].setChecked(True)
    ga.filter_actions["reasoning"].setChecked(True)
    idle(qtbot, h)
    assert all(any(b.style == "reasoning" for b in x.content().blocks) for x in _reasoning_rows(h))
    shown = [(i, x) for i, x in enumerate(h.rows) if x in set(_reasoning_rows(h))]
    assert shown
    i, x = shown[-1]
    assert "Reasoning" in view.delegate.document(x, h.index(i, 0)).toPlainText()


@pytest.fixture(scope="module")
def malformed_log(tmp_path_factory):
    """A generated log with one malformed row (bad JSON) in the middle: a problem with a line and a
    byte offset and no seq."""
    path = tmp_path_factory.mktemp("malformed") / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=9), turns=30)
    lines = path.read_bytes().split(b"\n")
    k = len(lines) // 2
    lines.insert(k, b'{"type": "user/message", "seq": 12, "data": {broken')
    path.write_bytes(b"\n".join(lines))
    before = [e for e in LogReader.open(str(path)).iter_events() if e.line is not None and e.line < k + 1]
    return str(path), k + 1, before[-1].seq


def test_a_problem_without_seq_jumps_to_the_nearest_row(qtbot, make_window, malformed_log):  # noqa: F811
    path, line, near = malformed_log
    win = make_window(page_size=4)
    ga = win.go_actions
    with qtbot.waitSignal(ga.outlineReady, timeout=WAIT * 2):
        h = open_and_wait(qtbot, win, path)
    qtbot.waitUntil(lambda: h.index_state == "ready", timeout=WAIT * 2)
    m = ga.problems_model
    i = next(i for i, p in enumerate(m.problems) if p.seq is None and p.line == line)
    p = m.problems[i]
    assert p.offset is not None and p.offset > 0
    assert not h.is_loaded(near), "far from the tail: the jump reads its page"
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT * 2) as b:
        ga.goto_problem(i)
    assert b.args[0] == near
    idle(qtbot, h)
    assert _covers(win.view.current_row(), near)
    assert "nearest row" in win.statusBar().currentMessage()
    # in the physical face the stored bad row itself is selected
    win.act_physical.setChecked(True)
    idle(qtbot, h)
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT * 2):
        ga.goto_problem(i)
    idle(qtbot, h)
    cur = win.view.current_row()
    assert cur is not None and cur.kind == "bad" and cur.bad.offset == p.offset

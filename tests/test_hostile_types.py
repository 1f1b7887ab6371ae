"""Hostile field types (issue 14, class 3): one row whose fields have JSON types dsh never writes
there (an array or object where a string or number is expected, a number or null where an object
is, and so on) is a problem of that row, never an exception of a face, and never hides the other
rows.  Driven by mutants of the real v2-v4 logs of ../shared/fixtures/dsh-next (hypothesis)."""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from app.log.query import analysis
from app.log.fold.attempts import find_attempts
from app.log.query.diff import DiffError, attempt_diff, request_diff
from app.log.format.lazyrows import iter_messages
from app.log.index.integrity import EventChecks
from app.log.format.model import Event, is_event
from app.log.query.find import FindOptions, find_all
from app.log.query.stats import compute_stats
from app.log.fold.surface import index_for, page_surface
from app.log.query.textview import event_fields
from app.log.query.trace import TraceError, trace_event
from app.log.format.versions import _ANY_TYPE, _TREE, _drop_bad, _type_ok, decode_row, field_problems, stream_chunks, stream_summary
from app.store.export import export
from app.store.faces import open_reader

from fixtures_util import REPO

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
LOGS = sorted(p for p in NEXT.rglob("*.jsonl") if re.search(r"\.v[234]\.jsonl$", p.name))
LINES = {p: p.read_text(encoding="utf-8").splitlines() for p in LOGS}


def test_the_corpus_has_v2_to_v4_logs():
    assert len(LOGS) == 27 and {int(p.name.rsplit(".v", 1)[1][0]) for p in LOGS} == {2, 3, 4}


# --------------------------------------------------------------------------- the reported defect

def test_a_stream_record_of_an_unhashable_type_is_a_problem_of_its_row():
    """versions.stream_chunks raised TypeError (unhashable) on a list or object as a record type."""
    stream = [{"type": ["text-chunks"], "texts": ["x"]}, {"type": {"a": 1}},
              {"type": "text-chunks", "index": 0, "dt": [], "texts": ["kept"], "time0": [1]},
              {"type": "chunk", "time": {"t": 1}, "chunk": {"type": "finish", "reason": {"kind": "completed"}}}]
    assert list(stream_chunks(stream)) == [(0, {"type": "text-delta", "index": 0, "text": "kept"}),
                                           (0, {"type": "finish", "reason": {"kind": "completed"}})]
    assert stream_summary(stream)["text"] == ["kept"]
    row = {"type": "assistant/message", "seq": 4, "time": 0,
           "data": {"turn": 1, "step": 1, "message": {"role": "assistant", "content": [], "id": "m"},
                    "stream": stream}, "surfaceOp": "append"}
    (ev,), probs = decode_row(json.dumps(row).encode(), 4, line=6)
    assert ev.seq == 4 and [(p.code, p.seq, p.line) for p in probs] == [("bad-field", 4, 6)] * 4
    assert [p.message.split(",")[0] for p in probs] == [
        "data.stream[0].type is an array", "data.stream[1].type is an object", "data.stream[2].time0 is an array",
        "data.stream[3].time is an object"]
    assert list(stream_chunks(ev.data["stream"])) == list(stream_chunks(stream))    # the same chunks read
    assert b'"type":["text-chunks"]' in ev.raw.replace(b" ", b"")                    # the stored bytes kept


# --------------------------------------------------------------------------- every face

def _faces(path: str) -> dict[str, Any]:
    """Every read face over ``path`` (surface, user, audit, request, messages, inspect); an
    expected error of a face (a trace or a request the log cannot answer) is an answer too."""
    out: dict[str, Any] = {}
    r = open_reader(path)
    out["inspect"] = analysis.inspect(r)
    out["messages"] = analysis.messages(r)
    assert list(iter_messages(r, None, logical=True, checks=EventChecks())) is not None
    evs = r.events()
    # request: the exact request at dispatch boundaries (every one of a short log, a sample of a long one)
    bounds = [b for b, _a in analysis.dispatches(evs)]
    out["request"] = []
    for b in bounds[::max(1, len(bounds) // 4)] + bounds[-1:]:
        try:
            out["request"].append(analysis.request_at(r, b)["request"])
        except analysis.RequestError as e:       # (no request/header left before it: dsh built none, issue 27)
            out["request"].append(str(e))
    # surface: the index (streamed and exact) and the status of every row, page by page
    si, exact = index_for(r), index_for(r, exact=True)
    assert si.rejected.keys() == exact.rejected.keys()
    out["surface"] = page_surface(exact, evs)
    # user: the history pages in both faces (what the window shows), the text a user sees, search
    for physical in (False, True):
        page = r.tail_page(max_messages=3)
        while True:
            page_surface(si, page.events)
            items = page.events if physical else page.logical_items()
            for it in items:
                if is_event(it):
                    event_fields(it)
            if not page.has_more:
                break
            page = r.page_before(page, max_messages=3)
    find_all(r, FindOptions("the"))
    from app.presenters import views_for_page
    views_for_page(evs)
    # audit: trace, stats, attempts and request diffs, exports
    for e in evs[::max(1, len(evs) // 4)]:
        try:
            trace_event(r, e.seq)
        except TraceError:
            pass
    compute_stats(r)
    find_attempts(evs)
    attempt_diff(r)
    if len(bounds) >= 2:
        try:    # the logical view that diff reads may hold no dispatch (a repair would cut every row after a bad
            request_diff(r, bounds[0], bounds[1])   # one before the first turn/end): a clean DiffError is an answer
        except DiffError:
            pass
    with tempfile.TemporaryDirectory() as d:
        for fmt in ("logical", "markdown", "html"):
            export(r, fmt, str(Path(d) / fmt))
    # the command line's page (surface and truth annotations) never ends in an internal error
    from app.cli.main import main
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        rc = main(["page", path, "--json", "--limit", "1000"])
    assert rc != 3, err.getvalue()
    out["seqs"] = [e.seq for e in r.iter_events(logical=False)]
    return out


def _paths(o: Any, pre: tuple = ()) -> list[tuple]:
    out = [pre] if pre else []
    if isinstance(o, dict):
        for k, v in o.items():
            out += _paths(v, pre + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o[:3]):
            out += _paths(v, pre + (i,))
    return out


def _kind(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "bool", int: "number", float: "number",
            type(None): "null"}[type(v)]


VALUES = {"object": st.dictionaries(st.sampled_from(["type", "id", "a"]), st.integers(0, 3) | st.text(max_size=3),
                                    min_size=1, max_size=2),
          "array": st.lists(st.integers(0, 3) | st.text(max_size=2), max_size=3),
          "string": st.text(max_size=4), "bool": st.booleans(), "number": st.integers(-3, 10 ** 20) | st.floats(
              allow_nan=False, allow_infinity=False), "null": st.none()}


def _hostile(path: tuple, value: Any) -> bool:
    """``value`` at ``path`` has a type dsh never writes in a field the faces read with a fixed
    type (versions._ANY_TYPE), or is not a string/integer where the envelope has ``type``/``seq``."""
    if len(path) == 1 and path[0] in ("type", "seq"):
        return not isinstance(value, str if path[0] == "type" else int) or isinstance(value, bool)
    if len(path) < 2 or path[0] != "data":
        return False
    p = tuple("*" if isinstance(k, int) else k for k in path[1:])
    return any(p == t and not _type_ok(value, kinds) for t, kinds in _ANY_TYPE)


@st.composite
def mutants(draw):
    """(log, lines, {row index: (path, value)}): 1-3 rows of one real log with one field each set to a
    value of another JSON type."""
    log = draw(st.sampled_from(LOGS))
    lines = list(LINES[log])
    touched: dict[int, tuple] = {}
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(1, len(lines) - 1))
        row = json.loads(lines[i])
        path = draw(st.sampled_from(_paths(row)))
        node = row
        for k in path[:-1]:
            node = node[k]
        kind = draw(st.sampled_from(sorted(set(VALUES) - {_kind(node[path[-1]])})))
        node[path[-1]] = value = draw(VALUES[kind])
        lines[i] = json.dumps(row, separators=(",", ":"))
        touched[i] = (path, value)
    return log, lines, touched


# HOSTILE_TYPES_EXAMPLES=2000 for a longer local run (CI: 45 mutants, about half a minute)
@settings(max_examples=int(os.environ.get("HOSTILE_TYPES_EXAMPLES", "45")), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutants())
def test_hostile_field_types_are_problems_of_their_rows(m):
    log, lines, touched = m
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / log.name
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
        got = _faces(str(p))                  # no face raises
    clean = LINES[log]
    envelope_free = '"seq"' not in clean[1]
    # one bad row never hides the others: every untouched row is still read, with its seq
    want = [i - 1 if envelope_free else json.loads(clean[i])["seq"] for i in range(1, len(clean)) if i not in touched]
    assert set(want) <= set(got["seqs"]), (sorted(set(want) - set(got["seqs"])), touched)
    # the fast check (msgspec) and the rule tree agree on every mutated row: a row the fast check
    # passes has nothing for the tree to drop
    for i in touched:
        row = json.loads(lines[i])
        if isinstance(row.get("data"), dict):
            slow: list[str] = []
            _drop_bad(row["data"], _TREE, "data", slow)
            ev = Event(seq=i - 1, type=str(row.get("type")), time=0, data=row["data"])
            assert [x for x in field_problems(ev) if x.startswith("data")] == slow
    # a field the faces read with a fixed type, or an envelope field, is reported on its row
    probs = got["inspect"]["problems"]
    for i, (path, value) in touched.items():
        if _hostile(path, value):
            assert any(f"line {i + 1}" in x for x in probs), (path, value, probs)

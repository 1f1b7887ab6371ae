"""``inspect``'s fast path (rows read as lean msgspec records, app/log/format/fastrows.py) gives exactly the answer of
the exact path (every row decoded into dicts, checked and converted by the codec) on every fixture, on
generated logs, on the hostile-input generators' mutants and on hypothesis mutants of real rows; and a row
the fast path takes is one the exact path reads with no problem at all."""
from __future__ import annotations

import json
import os
import random
import re
import tempfile
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from app.log.query import analysis

from app.log.format import fastrows
from app.log.fold.folds import SurfaceFold
from app.log.index.integrity import EventChecks
from app.log.format.model import typed
from app.log.index.reader import LogReader
from app.log.format.versions import codec_for, file_version
from app.store.faces import open_reader
from app.tools import hostile
from app.tools.synth import SessionSynth, write_jsonl

from fixtures_util import FIXTURES, REPO, fixture, session_files
from test_fast_paths_properties import depth_by_tokens

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
ALL = session_files(FIXTURES) + session_files(NEXT)


def both(path) -> tuple[dict, dict]:
    """inspect of ``path`` with the fast path and with the exact one (fresh readers)."""
    return (analysis.inspect(open_reader(str(path)), fast=True),
            analysis.inspect(open_reader(str(path)), fast=False))


def assert_same(path) -> dict:
    fast, exact = both(path)
    assert json.dumps(fast) == json.dumps(exact), path
    return fast


def test_the_corpus_is_there():
    assert len(ALL) > 150


@pytest.mark.parametrize("path", ALL, ids=lambda p: str(p.relative_to(REPO.parent / "shared" / "fixtures")))
def test_fast_inspect_equals_the_exact_one_on_every_fixture(path):
    assert_same(path)


@pytest.mark.parametrize("version", [0, 4])
def test_fast_inspect_equals_the_exact_one_on_generated_logs(tmp_path, version):
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=77, version=version), target_bytes=1_500_000)
    info = assert_same(p)
    assert info["events"] > 500 and info["hiddenAttempts"] > 0
    # the fast path really reads the rows (nearly every row of a generated log is a fast row)
    lines = p.read_bytes().split(b"\n")[1:-1]
    taken = sum(1 for ln in lines if fastrows.accepts(ln, version) is not None)
    assert taken / len(lines) > 0.97


def _mutant_logs():
    srcs = ["apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl",
            "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl",
            "examples/acp-agent/tests/snapshots/packed-chunks/session.jsonl"]
    for i, rel in enumerate(srcs):
        data = fixture(rel).read_bytes()
        for name, blob, _kept in hostile.jsonl_mutants(data, 500 + i, 20):
            yield f"{Path(rel).parent.name}-{name}", ".jsonl", blob
        lines = [ln for ln in data.split(b"\n") if ln]
        for name, blob, _kept in hostile.zstd_mutants(lines[0], lines[1:], 500 + i, 7):
            if not name.startswith("bomb"):
                yield f"{Path(rel).parent.name}-{name}", ".jsonl.zstd", blob


@pytest.mark.parametrize("name,ext,blob", list(_mutant_logs()), ids=lambda x: x if isinstance(x, str) and
                         not x.startswith(".") else "")
def test_fast_inspect_equals_the_exact_one_on_hostile_mutants(tmp_path, name, ext, blob):
    p = tmp_path / ("session" + ext)
    p.write_bytes(blob)
    assert_same(p)


# --------------------------------------------------------------------------- rows mutated at the fast path's edge

def _rows(paths, version):
    out = []
    for p in paths:
        lines = p.read_bytes().split(b"\n")
        out += [ln for ln in lines[1:] if fastrows.accepts(ln, version) is not None]
    return out


def _synth(version: int) -> Path:
    """A small generated log of ``version`` (the fixtures hold no v4 log with seqs)."""
    p = Path(tempfile.mkdtemp(prefix="fastrows-")) / f"session.v{version}.jsonl"
    write_jsonl(str(p), SessionSynth(seed=3, version=version), target_bytes=300_000)
    return p


LOGS = {0: [p for p in session_files(FIXTURES) if file_version(str(p)) == 0][::3] + [_synth(0)],
        # v2/v3 fixtures with seqs (the others are envelope-free snapshots: the exact path only)
        3: [p for p in session_files(NEXT) if file_version(str(p)) in (2, 3)
            and b'"seq"' in p.read_bytes().split(b"\n")[1]],
        4: [_synth(4)]}
ROWS = {v: _rows(paths, v) for v, paths in LOGS.items()}
EDITABLE = {v: [p for p in paths if _rows([p], file_version(str(p)))] for v, paths in LOGS.items()}
VERSIONS = sorted(LOGS)


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 2 ** 64), st.floats(allow_nan=False, allow_infinity=False),
                     st.text(max_size=8))
_JSON = st.recursive(_SCALARS, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=6), c,
                                                                                             max_size=3)), max_leaves=6)
_KEYS = st.sampled_from(["type", "seq", "time", "data", "ignorable", "surfaceOp", "sourceEventSeqs", "turn", "step",
                         "message", "content", "role", "id", "source", "chunk", "reason", "usage", "stream", "trigger",
                         "interrupted", "callId", "name", "arguments", "error", "meta", "todos", "retry", "texts",
                         "dt", "seq0", "time0", "index", "args", "kind", "inputTokens", "text", "x"])


def _paths(node, at=()):
    yield at
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, at + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:4]):
            yield from _paths(v, at + (i,))


@st.composite
def edited_row(draw, version):
    """A row the fast path takes, edited at one place (a value of another type or shape, a key added or
    removed, a legacy shape, deep nesting, invalid UTF-8 or a duplicate key in the bytes)."""
    op = draw(st.sampled_from(["set", "set", "drop", "add", "deep", "utf8", "dup", "legacy", "seq", "cites", "op",
                               "usage"]))
    choice = draw(st.sampled_from(["no-id", "trigger", "no-message", "reason-str", "aborted", "disposed", "error-str",
                                   "steering", "ranges"]))
    # the rows an edit is about: those that have what it changes
    about = {"cites": b'"sourceEventSeqs":[', "usage": b'"type":"assistant/message"'}.get(op) or (
        {"no-id": b'"type":"user/message"', "trigger": b'"type":"turn/start"', "steering": b'"type":"user/message"',
         "no-message": b'"type":"assistant/message"', "ranges": b'"sourceEventSeqs":['}.get(choice, b'"type":"turn/end"')
        if op == "legacy" else b"")
    rows = [r for r in ROWS[version] if about in r] or ROWS[version]
    raw = draw(st.sampled_from(rows))
    row = json.loads(raw)
    paths = [p for p in _paths(row) if p]
    path = draw(st.sampled_from(paths))
    parent = row
    for k in path[:-1]:
        parent = parent[k]
    last = path[-1]
    if op == "set":
        parent[last] = draw(_JSON)
    elif op == "drop":
        del parent[last]
    elif op == "add":
        target = parent[last] if isinstance(parent[last], dict) else parent
        if isinstance(target, dict):
            target[draw(_KEYS)] = draw(_JSON)
    elif op == "deep":
        d = draw(st.sampled_from([250, 255, 256, 257, 300]))
        parent[last] = json.loads("[" * d + "]" * d) if draw(st.booleans()) else \
            json.loads('{"a":' * d + "1" + "}" * d)
    elif op == "usage":
        data = row.get("data") if isinstance(row.get("data"), dict) else {}
        usage = data.setdefault("usage", {}) if isinstance(data.get("usage"), dict) or draw(st.booleans()) else data
        if usage is data:
            data["usage"] = draw(_JSON)
        else:
            usage[draw(st.sampled_from(["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens",
                                        "reasoningTokens", "other"]))] = draw(_JSON)
    elif op == "legacy":
        data = row.get("data") if isinstance(row.get("data"), dict) else {}
        if choice == "no-id":
            data.pop("id", None)
        elif choice == "trigger":
            data["trigger"] = "user"
        elif choice == "no-message":
            m = data.pop("message", None)
            if isinstance(m, dict):
                data["content"] = m.get("content")
                data["callId"] = "c1"
        elif choice == "reason-str":
            data["reason"] = "completed"
        elif choice in ("aborted", "disposed"):
            data["reason"] = {"kind": choice}
        elif choice == "error-str":
            data["reason"] = {"kind": "error", "error": "boom"}
        elif choice == "steering":
            row["type"] = "steering/message"
        else:
            row["sourceEventSeqs"] = [[0, 1], 3]
    elif op == "cites":                  # what EventChecks and the attempt tracker read of the citations
        ses = row.get("sourceEventSeqs") if isinstance(row.get("sourceEventSeqs"), list) else []
        seq = row.get("seq", 0)
        choice = draw(st.sampled_from(["repeat", "ahead", "self", "range", "empty", "null", "absent"]))
        if choice == "repeat" and ses:
            ses.insert(draw(st.integers(0, len(ses))), draw(st.sampled_from(ses)))
        elif choice in ("ahead", "self"):
            ses.append(seq + (1 if choice == "ahead" else 0))
        elif choice == "range":
            ses.append([max(0, seq - 3), max(0, seq - 1)])
        elif choice == "null":
            ses.append(None)
        row["sourceEventSeqs"] = [] if choice == "empty" else ses
        if choice == "absent":
            del row["sourceEventSeqs"]
    elif op == "op":
        row["surfaceOp"] = draw(st.sampled_from(["append", "prepend", None, {"op": "replace", "start": 0, "end": 0},
                                                 {"op": "replace", "startSeq": 0, "endSeq": 1}, 1, []]))
    elif op == "seq":
        row["seq" if "seq" in row else "seq0"] = draw(st.sampled_from([-1, 2 ** 53, 2 ** 53 - 1, 1.0, "1", None, True]))
    out = json.dumps(row, separators=(",", ":"), ensure_ascii=False).encode()
    if op == "utf8":
        i = draw(st.integers(0, max(0, out.count(b'"') // 2 - 1)))
        q = [m.start() for m in re.finditer(rb'"', out)]
        at = q[min(2 * i + 1, len(q) - 1)]
        out = out[:at] + draw(st.sampled_from([b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xe2\x82"])) + out[at:]
    elif op == "dup":
        key = draw(st.sampled_from([b'"type":"turn/end"', b'"seq":3', b'"seq":-1', b'"data":null', b'"time":1.5',
                                    b'"surfaceOp":"append"', b'"x":1']))
        out = out[:-1] + b"," + key + b"}"
    return out


def _clean_exact(raw: bytes, version: int) -> bool:
    """The exact path reads ``raw`` as one well-formed event (or a packed row) with no problem at all."""
    if raw.startswith((b'{"type":"text-chunks"', b'{"type":"reasoning-chunks"', b'{"type":"tool-call-chunks"')):
        from app.log.format.codec import DecodeError, decode_json, packed_extent
        try:
            obj, replaced = decode_json(raw)
            packed_extent(obj)
        except (DecodeError, KeyError, TypeError):
            return False
        return not replaced
    items, probs = codec_for(version, "s").decode_row(raw)
    if probs or len(items) != 1 or type(items[0]).__name__ != "Event":
        return False
    if items[0].legacy is not None or items[0].data != msgspec.json.decode(raw)["data"]:
        return False                      # converted (a legacy shape) or a field dropped
    try:
        typed(items[0])
    except msgspec.ValidationError:
        return False
    checks, fold = EventChecks(), SurfaceFold(keep_events=False, version=version)
    checks.apply(items[0])
    fold.apply(items[0])                  # (a fresh fold: an append is fine, anything else is a violation)
    return not checks.problems and not fold.violations


@settings(max_examples=int(os.environ.get("FASTROWS_EXAMPLES", "300")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.sampled_from(VERSIONS).flatmap(lambda v: st.tuples(st.just(v), edited_row(v))))
def test_a_row_the_fast_path_takes_is_one_the_exact_path_reads_cleanly(vr):
    version, raw = vr
    rec = fastrows.accepts(raw, version)
    if rec is not None:
        assert _clean_exact(raw, version), raw[:300]


@settings(max_examples=int(os.environ.get("FASTROWS_LOG_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fast_inspect_equals_the_exact_one_with_edited_rows(tmp_path, data):
    """1-3 rows of a real log edited as above, in place: the whole answer (problems and their order, seq
    checks, attempts, messages) is the same both ways."""
    version = data.draw(st.sampled_from(VERSIONS))
    log = data.draw(st.sampled_from(EDITABLE[version]))
    lines = log.read_bytes().split(b"\n")
    v = file_version(str(log))
    idx = [i for i in range(1, len(lines)) if fastrows.accepts(lines[i], v) is not None]
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.sampled_from(idx))
        row = data.draw(edited_row(version))
        lines[i] = row if data.draw(st.booleans()) else _keep_seq(lines[i], row)
    p = tmp_path / f"edited-{random.random()}.jsonl"
    p.write_bytes(b"\n".join(lines))
    assert_same(p)


def _keep_seq(orig: bytes, row: bytes) -> bytes:
    """``row`` with the seq of the row it replaces (so the edit is the only defect), when both have one."""
    m, n = re.search(rb'"seq0?":(\d+)', orig), re.search(rb'"seq0?":(\d+)', row)
    if not (m and n):
        return row
    return row[:n.start(1)] + m.group(1) + row[n.end(1):]


# --------------------------------------------------------------------------- the checks msgspec cannot make

def test_what_msgspec_skips_is_still_checked(tmp_path):
    """Invalid UTF-8 and nesting past the limit inside fields the records skip are seen, as the exact path
    sees them: the row is a problem of its own, the others are read."""
    base = [b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}',
            b'{"type":"tool/call","seq":1,"time":1,"data":{"turn":1,"step":1,"callId":"c","name":"n","arguments":"{}",'
            b'"extra":"\xff\xfe"}}',
            b'{"type":"tool/call","seq":2,"time":1,"data":{"turn":1,"step":1,"callId":"c","name":"n","arguments":"{}",'
            b'"extra":' + b"[" * 300 + b"]" * 300 + b'}}',
            b'{"type":"tool/call","seq":3,"time":1,"data":{"turn":1,"step":1,"callId":"c","name":"n","arguments":"{}",'
            b'"extra":' + b"[" * 250 + b'"]]]}}}\\""' + b"]" * 250 + b'}}',
            b'{"type":"turn/end","seq":4,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}']
    p = tmp_path / "session.jsonl"
    p.write_bytes(b'{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}\n' + b"\n".join(base)
                  + b"\n")
    info = assert_same(p)
    assert [x.split(":")[0] for x in info["problems"]] == ["bad-utf8", "over-limit", "seq-gap"]   # (row 2 is bad)
    assert info["events"] == 4
    assert fastrows.accepts(base[3], 0) is not None               # 250 deep, brackets in a string: taken


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.one_of(st.none(), st.integers(), st.text(alphabet='[]{}"\\ab\n/u', max_size=6)),
                    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(alphabet='[]{}"\\a', max_size=4),
                                                                                   c, max_size=3)), max_leaves=30))
def test_json_depth_equals_the_token_scan_on_json(value):
    raw = json.dumps(value).encode()
    assert fastrows.json_depth(raw) == depth_by_tokens(raw, stop=10 ** 6)
    assert fastrows.json_depth(json.dumps([value] * 3, ensure_ascii=False).encode()) == depth_by_tokens(raw, 10 ** 6) + 1


def test_fast_inspect_of_a_big_generated_log_reads_fast_rows_only(tmp_path):
    """On a generated log the exact way is taken only by the rare types it does not cover."""
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=5), target_bytes=800_000)
    r = LogReader.open(str(p))
    lines = p.read_bytes().split(b"\n")[1:-1]
    exact = {ln[9:ln.find(b'"', 9)] for ln in lines if fastrows.accepts(ln, r.version) is None}
    assert exact <= {b"request/header", b"request/context", b"compaction/start", b"compaction/summary",
                     b"compaction/end", b"session/title", b"user/message", b"system/message"}, exact


def test_a_failed_attempt_committed_later_is_pruned_like_the_full_recheck(tmp_path):
    """prune() re-checks only attempts that can have changed; a message that commits an attempt already
    kept as failed (its stable prefix) must make it re-check them (inspect's hidden count, both paths)."""
    from app.log.fold.attempts import AttemptTracker
    from app.log.format.model import Event
    from test_fast_paths_properties import _FullPrune

    def chunk(seq, turn, c):
        return {"type": "assistant/chunk", "seq": seq, "time": seq, "data": {"turn": turn, "step": 1, "chunk": c}}
    rows = [{"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
            chunk(1, 1, {"type": "text-delta", "index": 0, "text": "a"}),
            chunk(2, 1, {"type": "finish", "reason": {"kind": "error", "failure": {"code": "X"}}}),
            {"type": "turn/end", "seq": 3, "time": 3, "data": {"turn": 1, "reason": {"kind": "completed"}}},
            {"type": "turn/start", "seq": 4, "time": 4, "data": {"turn": 2}},
            {"type": "assistant/message", "seq": 5, "time": 5, "sourceEventSeqs": [1, 2], "surfaceOp": "append",
             "data": {"turn": 1, "step": 1, "message": {"role": "assistant", "content": [], "id": "m"}}},
            chunk(6, 2, {"type": "finish", "reason": {"kind": "error", "failure": {"code": "Y"}}}),
            {"type": "turn/end", "seq": 7, "time": 7, "data": {"turn": 2, "reason": {"kind": "completed"}}}]
    fast, ref = AttemptTracker(keep_text=False), _FullPrune(keep_text=False)
    for r in rows:
        ev = Event(seq=r["seq"], type=r["type"], time=r["time"], data=r["data"],
                   source_event_seqs=r.get("sourceEventSeqs"), surface_op=r.get("surfaceOp"))
        for tr in (fast, ref):
            tr.apply(ev)
            if ev.type == "turn/end":
                tr.prune()
        assert [a.to_dict() for a in fast.attempts] == [a.to_dict() for a in ref.attempts]
    assert [a.first_seq for a in fast.attempts] == [6]           # the first one was committed, then dropped
    p = tmp_path / "session.jsonl"
    p.write_bytes(b"\n".join(json.dumps(r, separators=(",", ":")).encode() for r in
                             [{"type": "session", "version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}]
                             + rows) + b"\n")
    assert assert_same(p)["hiddenAttempts"] == 1


@pytest.mark.parametrize("rel", ["apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl",
                                 "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"])
def test_fast_inspect_equals_the_exact_one_on_a_sqlite_store(tmp_path, rel):
    """A SQLite store hands over rows, not text: positions are row ids (no offsets, no lines)."""
    from app.store.sqlite_writer import jsonl_to_sqlite
    src = fixture(rel)
    db = tmp_path / "store.db"
    jsonl_to_sqlite(src, db, batch_rows=7)
    sid = json.loads(src.read_bytes().split(b"\n")[0])["id"]
    fast = analysis.inspect(open_reader(str(db), sid), fast=True)
    exact = analysis.inspect(open_reader(str(db), sid), fast=False)
    assert json.dumps(fast) == json.dumps(exact) and fast["events"] > 10

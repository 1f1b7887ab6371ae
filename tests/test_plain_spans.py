"""rowscan_c's ``plain_spans`` (the logical export's plain rows read in one pass) held to its definition
(:func:`app.store.export_rows.plain_spans_exact`: ``redact_spans`` of a row :func:`~app.store.export_rows.plain_row`
accepts) on every row of the fixtures (v0 to v4), of generated logs with secrets planted, of hostile and mutated
logs, on rows mutated at random, on hand-made edge rows and on envelope rows varied key by key; and the logical
export the same, plain and redacted, with the C way switched off."""
from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec
import pytest

from app.log.format.limits import MAX_DEPTH
from app.store import export_rows
from app.store.export import export
from app.store.faces import open_reader
from fixtures_util import session_files
from test_redact_quiet import EDGE, _mutated, logs  # noqa: F401  (the module's fixture of logs)

native = export_rows._native
pytestmark = pytest.mark.skipif(native is None or not hasattr(native, "plain_spans"),
                                reason="the C scanner module is not built")
_enc = msgspec.json.Encoder()

# envelopes varied key by key: each part of plain_row's verdict met both ways
_DATA = [{}, {"text": "x"}, {"id": "u1", "content": []}, {"content": [], "role": "user"}, {"message": {}, "content": 1},
         {"content": "a", "callId": "c"}, {"message": "m", "callId": "c"}, {"trigger": "user", "turn": 1}, {"turn": 1},
         [], "s", 5, None, {"text": 5}, {"turn": "x"}, {"a": {"id": 1}, "b": [{"trigger": 1}]}, {"x": "/home/bob/y"}]
_TYPES = ["user/message", "assistant/message", "tool/result", "turn/start", "turn/end", "steering/message",
          "text-chunks", "reasoning-chunks", "tool-call-chunks", "step/start", "", "a\"b", "user/messages"]
_EXTRA = [{}, {"sourceEventSeqs": [1, 2]}, {"sourceEventSeqs": [[1, 3]]}, {"sourceEventSeqs": []},
          {"sourceEventSeqs": "x"}, {"sourceEventSeqs": [1], "surfaceOp": "append"}, {"surfaceOp": {"op": "x"}},
          {"surfaceOp": "append", "ignorable": True}, {"ignorable": False}, {"ignorable": 1}, {"ignorable": True},
          {"sourceEventSeqs": [1], "ignorable": True}, {"surfaceOp": "a", "sourceEventSeqs": [1]}, {"other": 1},
          {"sourceEventSeqs": [1], "surfaceOp": "a", "ignorable": True, "x": 1}]


def _envelopes() -> list[bytes]:
    out = []
    for t in _TYPES:
        for d in _DATA:
            for ex in _EXTRA:
                out.append(_enc.encode({"type": t, "seq": 7, "time": 100, "data": d, **ex}))
    for seq in (-1, 0, 2 ** 53 - 1, 2 ** 53, 10 ** 17, 10 ** 18, 1.5, "1", None):
        for time in (-5, 0, 1.5, "t", 10 ** 18):
            out.append(_enc.encode({"type": "x", "seq": seq, "time": time, "data": {"a": 1}}))
    base = {"type": "x", "seq": 1, "time": 2, "data": {"a": "/home/bob/x"}}
    keys = list(base)
    for k in range(4):                       # (a key left out, moved, doubled, renamed)
        out.append(_enc.encode({x: base[x] for x in keys if x != keys[k]}))
        out.append(_enc.encode({x: base[x] for x in keys[k + 1:] + keys[:k + 1]}))
        out.append(_enc.encode(base)[:-1] + b',"%s":1}' % keys[k].encode())
    out.append(b"[" + _enc.encode(base) + b"]")
    out.append(b'[[{"type":"x"}]]')
    out.append(_enc.encode({**base, **{f"k{i}": i for i in range(10)}}))
    return out


def test_plain_spans_is_its_definition(logs):  # noqa: F811
    seen = {"plain": 0, "not": 0, "spans": 0, "check": 0}
    paths = logs + session_files()[::3]
    for k, p in enumerate(paths):
        r = open_reader(str(p))
        rows = p.read_bytes().split(b"\n")[1:]
        if k < 3:
            rows += _mutated([x for x in rows if x], 17 + k, 3000) + EDGE + _envelopes()
        for raw in rows:
            if len(raw) > 1 << 20:
                continue
            want = export_rows.plain_spans_exact(r, raw)
            assert export_rows.plain_spans(r, raw) == want, (p, raw)
            got = native.plain_spans(raw, MAX_DEPTH, r.codec.version)
            assert (got is None) == (_unchecked(r, raw) is None), (p, raw)
            assert want is None or got[0] == want, (p, raw)
            if got is not None:
                d = msgspec.json.decode(raw)["data"]
                assert got[1] == (type(d) is dict and bool(d)), raw
                seen["check"] += got[1]
            seen["plain" if want is not None else "not"] += 1
            seen["spans"] += bool(want)
    print(seen)
    assert min(seen.values()) > 100, seen


def _unchecked(r, raw: bytes):
    """plain_spans_exact with plain_row's data check left out (``plain_spans`` leaves that check to its caller)."""
    saved = export_rows._data_check
    export_rows._data_check = lambda raw: None
    try:
        return export_rows.plain_spans_exact(r, raw)
    finally:
        export_rows._data_check = saved


def test_logical_export_without_plain_spans(logs, tmp_path, monkeypatch):  # noqa: F811
    """The logical export, plain and redacted, and its report: the same bytes with the C plain_spans switched off."""
    def digests() -> dict[str, str]:
        got = {}
        for p in logs + session_files()[::7]:
            for redact in (False, True):
                dst = tmp_path / f"{p.stem}-{redact}.jsonl"
                export(open_reader(str(p)), "logical", str(dst), redact=redact)
                for f in (dst, Path(str(dst) + ".redaction.json")):
                    if f.exists():
                        got[f"{p}|{f.name}"] = hashlib.sha256(f.read_bytes()).hexdigest()
                        f.unlink()
        return got
    fast = digests()
    monkeypatch.setattr(export_rows, "plain_spans", lambda reader, raw: None)
    assert digests() == fast

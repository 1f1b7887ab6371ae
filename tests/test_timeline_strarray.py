"""The C scan's arrays of strings read 64 bytes a step (``tl_strarray_fast`` in the timelinec section: a packed
record's ``texts`` / ``args`` in the writer's layout) count what the definition counts: a settlement's stream summed
by ``tl_stream`` equals the summary of its records (``timeline_lean.settlement`` with ``tl_stream`` off), for long
arrays of short strings (tokens, as dsh writes them) with hostile bytes at every place of a 64-byte step: escapes,
quotes, control and non-ASCII bytes, blanks, ``]`` and ``,`` inside and outside strings, missing and doubled
commas, a bad escape, a torn array; and whole logs give the same spans with the C scan as row by row."""
from __future__ import annotations

import json
import random
from typing import Any

import pytest

from app.log.index.fastindex import load_rowscan_c
from app.log.query import timeline_lean as tl
from app.log.query.timeline import Settlement

C = load_rowscan_c()
needs_c = pytest.mark.skipif(getattr(C, "tl_stream", None) is None, reason="the row scanner in C is not built")
_ODD = ['"', "\\", "\\n", "\\\"", "\\u00e9", "\\ud800", "\\x", "\x01", "\t", "é", "—", "]", ",", " ", "[", "\\\\"]


def _texts(rng: random.Random, n: int, odd: float) -> str:
    """A JSON-ish array of ``n`` short strings, each byte possibly odd (then the array may not be JSON at all)."""
    parts = []
    for _ in range(n):
        s = "".join(rng.choice("abcdefgh xyz_.") for _ in range(rng.choice([0, 1, 2, 3, 5, 9, 17, 40])))
        if rng.random() < odd:
            k = rng.randrange(len(s) + 1)
            s = s[:k] + rng.choice(_ODD) + s[k:]
        parts.append('"' + s + '"')
    seps = []
    for _ in parts[1:]:
        r = rng.random()
        seps.append("," if r > odd else rng.choice([",,", "", " ,", ", ", ",\t", ";"]))
    body = parts[0] if parts else ""
    for sep, p in zip(seps, parts[1:]):
        body += sep + p
    tail = "]" if rng.random() > odd else rng.choice(["", " ]", ",]", '"]'])
    return "[" + body + tail


def _attempt(texts: str, n: int, k: int) -> bytes:
    stream = ('[{"type":"chunk","time":5,"chunk":{"type":"block-start","index":0}},{"type":"text-chunks","time0":10,'
              '"index":0,"dt":' + json.dumps([1] * max(0, n - 1)) + ',"texts":' + texts + '},'
              '{"type":"tool-call-chunks","time0":20,"index":1,"dt":[2],"id":"c","name":"n","args":' + texts + '}]')
    return ('{"type":"assistant/attempt","seq":' + str(5 + k) + ',"time":9,"data":{"turn":1,"step":1,"stream":'
            + stream + "}}").encode()


def _view(x: Any) -> Any:
    if x is None:
        return None
    ev, summ = (x.ev, x.summ) if isinstance(x, Settlement) else (x, None)
    return type(x), ev.seq, ev.type, ev.time, ev.data, summ


@needs_c
@pytest.mark.parametrize("seed", range(6))
def test_string_arrays_counted_as_the_records_count(monkeypatch, seed):
    rng = random.Random(seed)
    rows = []
    for k in range(250):
        n = rng.choice([1, 2, 5, 12, 30, 80, 200])
        rows.append(_attempt(_texts(rng, n, rng.choice([0.0, 0.0, 0.01, 0.05, 0.3])), n, k))
    fast = [tl.settlement(raw) for raw in rows]
    with monkeypatch.context() as mp:
        mp.setattr(tl, "_stream_c", None)
        slow = [tl.settlement(raw) for raw in rows]
    summed = 0
    for raw, a, b in zip(rows, fast, slow):
        assert _view(a) == _view(b), raw[:400]
        summed += a is not None and isinstance(a, Settlement) and a.summ["chunks"] > 0
    assert summed >= 100


@needs_c
def test_string_arrays_at_every_offset(monkeypatch):
    """One odd byte at each place of a long valid array (every offset of the 64-byte steps, either side of them)."""
    base = _texts(random.Random(9), 60, 0.0)
    assert json.loads(base)
    rows = [_attempt(base, 60, 0)]
    for at in range(1, len(base) - 1, 3):
        for odd in ('"', "\\", "\x01", "é", ",", "]", " "):
            rows.append(_attempt(base[:at] + odd + base[at:], 60, len(rows)))
    fast = [tl.settlement(raw) for raw in rows]
    with monkeypatch.context() as mp:
        mp.setattr(tl, "_stream_c", None)
        slow = [tl.settlement(raw) for raw in rows]
    for raw, a, b in zip(rows, fast, slow):
        assert _view(a) == _view(b), raw[:400]
    assert fast[0] is not None and fast[0].summ["chunks"] == 60 + 60 + 1     # (texts, args, the block start)


@needs_c
@pytest.mark.parametrize("seed", range(4))
def test_scan_takes_only_valid_rows_and_reads_them_as_the_records(monkeypatch, seed):
    """Through the row scan (where the C alone decides that a row is valid): a settlement row it takes is JSON and
    its record is what ``timeline_lean.settlement`` reads of it with ``tl_stream`` off; valid rows are taken."""
    from app.log.query.timeline_rows import _SKIP_LIST
    from app.log.query.timeline_scan import SETTLE, scan
    rng = random.Random(50 + seed)
    rows = []
    for k in range(300):
        n = rng.choice([2, 12, 30, 80, 200])
        rows.append(_attempt(_texts(rng, n, rng.choice([0.0, 0.01, 0.05, 0.3])), n, k))
    data = b"\n".join(rows) + b"\n"
    got = scan(data, len(data), _SKIP_LIST, SETTLE)
    assert len(got) == len(rows)
    monkeypatch.setattr(tl, "_stream_c", None)
    taken = valid = 0
    for raw, x in zip(rows, got):
        try:
            json.loads(raw)
            valid += 1
        except ValueError:
            assert not isinstance(x, tuple), raw[:400]          # (an invalid row is never taken)
            continue
        if isinstance(x, tuple):
            taken += 1
            assert _view(tl.settled(x, data)) == _view(tl.settlement(raw)), raw[:400]
    assert taken >= valid - 5 and valid >= 60, (taken, valid)

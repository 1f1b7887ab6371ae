"""A row's searchable text from its bytes (issue 32 item 3): the C ``text_row`` (rowscan_c.c, ftsc
section) against its Python definition (app/log/query/textrow.py), and the extraction with it against
the exact one (every row decoded, ``shown_fields``), on every fixture (JSONL, zstd frames, a SQLite
store), hostile logs and rows edited where the C decides."""
from __future__ import annotations

import json
import random

import pytest

from app.log.format.codec import RowCodec
from app.log.index.reader import LogReader
from app.log.query import extract
from app.log.query.extract import RowText, extract_jsonl, reader_entries
from app.log.query.textrow import READ_TYPES, text_row_c, text_row_py, text_rows_c
from app.tools.hostile import hostile_names_session, hostile_session, jsonl_mutants
from tests.fixtures_util import FIXTURES, session_files

C = text_row_c()
pytestmark = pytest.mark.skipif(C is None, reason="the row scanner in C is not built here")


def _corpus() -> list:
    return [p for base in (FIXTURES, FIXTURES.parent / "dsh-next") for p in session_files(base)]


def _rows(data: bytes) -> list[bytes]:
    return [r for r in data.split(b"\n")[1:] if r.strip()]


@pytest.fixture
def exact(monkeypatch):
    """Run the extraction the exact way (every row decoded) inside the block."""
    class Exact:
        def __enter__(self):
            monkeypatch.setattr(extract, "text_row_c", lambda: None)

        def __exit__(self, *a):
            monkeypatch.undo()
    return Exact()


def _check_rows(rows: list[bytes]) -> int:
    """C == the Python definition wherever the C answers, for a v2+ and a v0/v1 session; the number of
    rows the C read."""
    read = 0
    for raw in rows:
        for legacy in (False, True):
            got = C(raw, legacy)
            if got is not None:
                read += not legacy
                assert got == text_row_py(raw, legacy), (legacy, raw[:300])
    return read


def _feed(rows: list[bytes], version: int = 2, fast: bool = True) -> tuple:
    rt = RowText(RowCodec("s", version=version), fast=fast)
    out: list = []
    for k, raw in enumerate(rows):
        rt.feed(raw, out, k, k)
    rt.finish(out)
    return out, rt.title, rt.turn, rt.state(), rt.text_bytes


def test_c_gives_what_its_python_definition_gives_on_every_fixture_row():
    files = _corpus()
    assert len(files) > 40
    read = total = 0
    for p in files:
        rows = _rows(p.read_bytes())
        total += sum(1 for r in rows if extract.row_type(r) in {t.encode() for t in READ_TYPES})
        read += _check_rows(rows)
    # the C reads most text rows of the corpus (so the equality above is about something)
    assert total > 1000 and read > 0.8 * total, (read, total)


def _picked(data: bytes, most: int, max_row: int = 1 << 30) -> tuple:
    """text_rows over the rows of ``data`` after its header, ``most`` rows a call."""
    rows = text_rows_c()
    start = data.find(b"\n") + 1
    end = data.rfind(b"\n") + 1
    items, at, nls = [], start, 0
    while at < end:
        got, at, k = rows(data, at, end, most, max_row)
        assert got or at == end
        items += got
        nls += k
    return items, at, nls


def _want(data: bytes, max_row: int = 1 << 30) -> tuple:
    """What text_rows gives, from the rows extract.candidate_rows picks and text_row."""
    start = data.find(b"\n") + 1
    rows, end, _ = extract.candidate_rows(data, 0, start)
    items = [(C(raw) if len(raw) <= max_row else None) or (-1, p, raw) for p, raw in rows]
    return items, end, data.count(b"\n", start, end)


def test_text_rows_picks_the_rows_candidate_rows_picks():
    variants = []
    for p in _corpus():
        data = p.read_bytes()
        variants += [data, data.replace(b"\n", b"\r\n"), data + b'{"type":"user/message","seq":1',
                     data.replace(b"\n", b"\n \t\n\n", 5), data.replace(b'{"type":"', b' {"type":"', 3)]
    for v in variants:
        want = _want(v)
        assert _picked(v, 64) == want
        assert _picked(v, 1) == want
    # rows over the byte limit are left to the exact decoder
    data = _corpus()[0].read_bytes()
    assert _picked(data, 64, max_row=100) == _want(data, max_row=100)


def test_fast_extraction_equals_the_exact_one_on_every_fixture(exact):
    for p in _corpus():
        fast = extract_jsonl(str(p))
        with exact:
            slow = extract_jsonl(str(p))
        assert fast == slow, p
        for version in (0, 2, 4):                      # legacy shapes (v0/v1) go the exact way
            rows = _rows(p.read_bytes())
            assert _feed(rows, version) == _feed(rows, version, fast=False), (p, version)


def test_fast_extraction_equals_the_exact_one_in_zstd_and_sqlite_sessions(tmp_path, exact):
    from app.log.source.sources import open_source
    from app.log.source.zstdframes import encode_session
    from app.store.faces import open_reader
    from app.store.sqlite_writer import jsonl_to_sqlite
    from app.store.sqlite_store import SqliteStore
    files = [p for p in _corpus() if p.stat().st_size > 20_000][:6]
    assert files
    readers = []
    for k, p in enumerate(files):
        data = p.read_bytes()
        head, _, rest = data.partition(b"\n")
        z = tmp_path / f"s{k}.jsonl.zstd"
        lines = rest.splitlines(keepends=True)
        z.write_bytes(encode_session(head + b"\n", [b"".join(lines[i:i + 7]) for i in range(0, len(lines), 7)]))
        readers.append(lambda z=z: LogReader(open_source(str(z))))
        db = tmp_path / f"s{k}.sqlite"
        jsonl_to_sqlite(str(p), str(db))
        store = SqliteStore.open(str(db))
        sid = next(iter(store.list_sessions()))["id"]
        store.close()
        readers.append(lambda db=db, sid=sid: open_reader(str(db), sid))
    n = 0
    for make in readers:
        r = make()
        try:
            fast, rt = reader_entries(r)
        finally:
            r.close()
        with exact:
            r = make()
            try:
                slow, rt2 = reader_entries(r)
            finally:
                r.close()
        assert fast == slow and rt.title == rt2.title and rt.state() == rt2.state()
        n += len(fast)
    assert n > 100


def test_hostile_logs_read_the_same_both_ways(tmp_path, exact):
    files = [p for p in _corpus() if p.stat().st_size > 5_000][:12]
    for k, p in enumerate(files):
        data = p.read_bytes()
        lines = data.decode("utf-8", "replace").split("\n")
        variants = [hostile_session([ln for ln in lines if ln.strip()], seed=k), hostile_names_session(data)]
        variants += [m for _, m, _ in jsonl_mutants(data, seed=k, count=10)]
        for j, v in enumerate(variants):
            path = tmp_path / f"h{k}-{j}.jsonl"
            path.write_bytes(v)
            _check_rows(_rows(v))
            fast = extract_jsonl(str(path))
            with exact:
                slow = extract_jsonl(str(path))
            assert fast == slow, (p, j)


# rows edited where the C decides: each is read by the C and its definition alike, or left to the exact
# decoder; the extraction is the same either way
EDGE_ROWS = [
    b'{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"a\\u2028b\\u0085c\\u007fd\\te"},'
    b'{"type":"reasoning","text":""},"bare",null,{"type":"other","text":"x\xc2\x85y\xe2\x80\xa9z\x7f"}]}}',
    b'{"type":"user/message","seq":1,"time":2,"data":{"content":"just a string \\ud83d\\ude00 \xf0\x9f\x98\x80"}}',
    b'{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"image","attachment":{"name":"x"}}]}}',
    b'{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"a","text":"b"}]}}',
    b'{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","\\u0074ext":"b"}]}}',
    b'{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"\\ud800"}]}}',
    b'{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"\xff"}]}}',
    b'{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"\xed\xa0\x80"}]}}',
    b'{"type":"user/message","seq":1,"time":2.5,"data":{"turn":3,"content":[]}}',
    b'{"type":"user/message","seq":1,"time":"x","data":{"turn":3.0,"content":[{"type":"text","text":"t"}]}}',
    b'{"type":"user/message","seq":1,"time":-0,"data":{"turn":-0,"content":[{"type":"text","text":"t"}]}}',
    b'{"type":"user/message","seq":1,"time":123456789012345678901,"data":{"content":[{"type":"text","text":"t"}]}}',
    b'{"type":"user/message","seq":9007199254740992,"time":1,"data":{"content":[{"type":"text","text":"t"}]}}',
    b'{"type":"user/message","seq":-1,"time":1,"data":{"content":[{"type":"text","text":"t"}]}}',
    b' { "type" : "user/message" , "seq" : 1 , "data" : { "content" : [ { "type" : "text" , "text" : "ws" } ] } } \r',
    b'{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"x"}]},"type":"tool/call"}',
    b'{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"x"}]}} trailing',
    b'{"type":"user/message","seq":1,"data":{"content":[{"type":"text","text":"x"}]}',
    b'{"type":"user/message","seq":01,"data":{"content":[{"type":"text","text":"x"}]}}',
    b'{"type":"user/message","seq":1,"data":{"content":[{"type":"tool-result","content":[{"type":"text","text":"in"},'
    b'{"type":"tool-result","content":"deeper"}]},{"type":"text","text":null},{"type":"text"}]}}',
    b'{"type":"assistant/message","seq":4,"time":5,"data":{"turn":2,"message":{"content":[{"type":"reasoning","text":""},'
    b'{"type":"reasoning","text":"think"},{"type":"text","text":"say"},{"type":"image"},7,"s",{"type":5},'
    b'{"type":"tool-call","id":"c1","name":"read","arguments":"{\\"path\\": \\"a\\\\nb\\", \\"n\\": 3, \\"f\\": true,'
    b' \\"z\\": null, \\"e\\": \\"\\"}"},{"type":"tool-call","id":7,"name":"","arguments":""},'
    b'{"type":"tool-call","name":null,"arguments":{"k":"v"}}]}}}',
    b'{"type":"assistant/message","seq":4,"data":{"message":{"content":[{"type":"tool-call","id":"c","name":"n",'
    b'"arguments":"{\\"a\\": {\\"b\\": 1}}"}]}}}',
    b'{"type":"assistant/message","seq":4,"data":{"message":{"content":[{"type":"tool-call","id":"c","name":"n",'
    b'"arguments":"{\\"a\\": 1.5}"}]}}}',
    b'{"type":"tool/call","seq":5,"data":{"callId":"c2","name":"edit","arguments":"{\\"edits\\": [{\\"old\\": \\"a\\\\n\\\\t\\\\\\"q\\\\\\\\\\", '
    b'\\"new\\": \\"\\\\u0001\\\\u007f\\\\u2028\\u00e9\\"}, [], {}, null, true, 2.50, -7, 12345678901234567890123], '
    b'\\"o\\": {\\"k\\": {\\"deep\\": [1, [2, [3]]]}}, \\"f\\": 0.30000000000000004}"}}',
    b'{"type":"tool/call","seq":5,"data":{"callId":"c2","name":"edit","arguments":{"edits":[{"old":"x\\ny","n":1.0}],'
    b'"z":{"\\u0061":1}}}}',
    b'{"type":"tool/call","seq":5,"data":{"callId":"c2","name":"edit","arguments":{"edits":[{"old":"x\\ny","n":1.0}]}}}',
    b'{"type":"tool/call","seq":5,"data":{"callId":"c2","name":"x","arguments":"{\\"a\\": [1e400]}"}}',
    b'{"type":"assistant/message","seq":4,"data":{"message":{"content":[{"type":"tool-call","id":"c","name":"n",'
    b'"arguments":"not json"}]}}}',
    b'{"type":"assistant/message","seq":4,"data":{"message":{"content":[{"type":"tool-call","id":"c","name":"n",'
    b'"arguments":"{\\"a\\": \\"\\\\ud800\\"}"}]}}}',
    b'{"type":"assistant/message","seq":4,"data":{"message":{"content":[{"type":"tool-call","id":"c","name":"n",'
    b'"arguments":"{\\"a\\": 1, \\"a\\": 2}"}]}}}',
    b'{"type":"assistant/message","seq":4,"data":{"message":{"content":"a string"}}}',
    b'{"type":"assistant/message","seq":4,"data":{"content":[{"type":"text","text":"legacy"}]}}',
    b'{"type":"assistant/message","seq":4,"data":{"message":{"content":[{"type":"te\\u0078t","text":"esc"}]}}}',
    # the v0/v1 shapes of spec §1.7 (read as the codec converts them in a legacy session)
    b'{"type":"assistant/message","seq":4,"time":9,"data":{"turn":3,"content":[{"type":"reasoning","text":"r"},'
    b'{"type":"text","text":"legacy text"},{"type":"tool-call","id":"c9","name":"read","arguments":"{\\"p\\": 1}"}],'
    b'"provenance":{"provider":"x"}}}',
    b'{"type":"assistant/message","seq":4,"time":9,"data":{"content":null}}',
    b'{"type":"assistant/message","seq":4,"time":9.5,"data":{"content":[{"type":"text","text":"t"}]}}',
    b'{"type":"tool/result","seq":6,"time":9,"data":{"turn":3,"callId":"c9","content":[{"type":"text","text":"legacy out"}],'
    b'"isError":false}}',
    b'{"type":"tool/result","seq":6,"time":9,"data":{"callId":null,"content":[{"type":"text","text":"x"}]}}',
    b'{"type":"tool/result","seq":6,"time":9,"data":{"callId":"c9"}}',
    b'{"type":"tool/result","seq":6,"time":9,"data":{"callId":7,"content":[]}}',
    b'{"type":"tool/result","seq":6,"time":9,"data":{"callId":"c9","content":[],"error":{"message":"m"}}}',
    b'{"type":"tool/call","seq":5,"data":{"callId":"c1","name":"read\\u001b[31m","arguments":"{\\"p\\": \\"x\\"}"}}',
    b'{"type":"tool/call","seq":5,"data":{"callId":["c1"],"name":"read"}}',
    b'{"type":"tool/call","seq":5,"data":{"name":7}}',
    b'{"type":"tool/call","seq":5,"data":{"callId":null}}',
    b'{"type":"tool/result","seq":6,"data":{"message":{"source":{"callId":"c1"},"content":[{"type":"text","text":"out"}]}}}',
    b'{"type":"tool/result","seq":6,"data":{"message":{"toolCallId":"c1","content":"out"}}}',
    b'{"type":"tool/result","seq":6,"data":{"message":{"source":"x","content":[{"type":"tool-result","toolCallId":"c1",'
    b'"content":[{"type":"text","text":"nested"}]}]}}}',
    b'{"type":"tool/result","seq":6,"data":{"error":{"code":"E","message":"bad"},"message":{"content":"x"}}}',
    b'{"type":"tool/result","seq":6,"data":{"error":null,"message":{"source":{"callId":3},"content":"x"}}}',
    b'{"type":"tool/result","seq":6,"data":{"callId":"c1","content":"legacy"}}',
    b'{"type":"session/title","seq":7,"data":{"title":"T\\nitle\\u2029"}}',
    b'{"type":"session/title","seq":7,"data":{"title":""}}',
    b'{"type":"session/title","seq":7,"data":{"title":{"x":1}}}',
    b'{"type":"turn/start","seq":8,"data":{"turn":99999999999999999999}}',
    b'{"type":"turn/start","seq":8,"data":{"turn":"2"}}',
    b'{"type":"turn/start","seq":8,"data":{"turn":4}}',
    b'{"type":"hook/result","seq":9,"time":1,"data":{"name":"h","ok":true,"n":-0,"none":null,"e":"","l":[1],'
    b'"o":{},"in":{"deep":{"x":1},"k":"v\\u0007","b":false},"s":"\\u00e9\\u2028"}}',
    b'{"type":"hook/result","seq":9,"data":{"f":1.5}}',
    b'{"type":"hook/result","seq":9,"data":{"f":1E-7,"g":-0.0,"h":2.5e-320,"i":1e22,"j":123456789012345678901234567890,'
    b'"k":0.1,"m":5e-324,"n":1.5e299}}',
    b'{"type":"hook/result","seq":9,"data":{"l":1.7976931348623157e308}}',
    b'{"type":"hook/result","seq":9,"data":{"a.b":"dot"}}',
    b'{"type":"hook/result","seq":9,"data":{"a":{"b.c":"dot"}}}',
    b'{"type":"hook/result","seq":9,"data":{}}',
    b'{"type":"hook/result","seq":9,"data":{"a":{"b":1,"b":2}}}',
    b'{"type":"hook/result","seq":9,"data":"a string"}',
    b'{"type":"todo/write","seq":9,"data":{"todos":[{"content":"item"}]}}',
    b'{"type":"turn/end","seq":9,"data":{"reason":{"kind":"error","error":{"message":"m"}}}}',
    b'{"type":"step/start","seq":9,"data":{"turn":1}}',
    # numbers msgspec refuses (a float past a double, a very long integer): the row holds no text for it
    b'{"type":"user/message","seq":1,"time":1e309,"data":{"content":"x"}}',
    b'{"type":"user/message","seq":1,"time":1,"data":{"content":"x","n":-1.8e308}}',
    b'{"type":"user/message","seq":1,"time":1,"data":{"content":"x","n":' + b"1" * 5000 + b'}}',
    b'{"type":"user/message","seq":1,"time":1,"data":{"content":"x","n":' + b"1" * 301 + b'}}',
    b'{"type":"user/message","seq":1,"time":1,"data":{"content":"x","n":' + b"1" * 400 + b'.5}}',
    b'{"type":"user/message","seq":1,"time":1e-400,"data":{"content":"x","n":0e99999999999,"m":1e5}}',
    b'{"type":"user/message","seq":1,"time":1,"data":{"content":"x","n":0.000000000000000000001e-400}}',
    b'[1,2]',
    b'"x"',
    b'{"type":"user/message","seq":1,"data":{"content":' + b'[' * 70 + b']' * 70 + b'}}',
]


LEGACY_ROW = next(r for r in EDGE_ROWS if b'"provenance"' in r)


def test_edited_rows_read_the_same_both_ways():
    read = _check_rows(EDGE_ROWS)
    assert read >= 18
    assert C(EDGE_ROWS[EDGE_ROWS.index(LEGACY_ROW)], True) is not None        # a legacy shape read in C
    assert all(C(r) is not None for r in EDGE_ROWS                               # JSON in arguments, floats
               if (b'"edits' in r[:120] or b'1E-7' in r) and b"u0061" not in r)
    for raw in EDGE_ROWS:
        for version in (0, 2):
            assert _feed([raw], version) == _feed([raw], version, fast=False), raw
    # in sequence: the turn, the call names, the blocks and their echo rows carry across rows
    for version in (0, 2):
        assert _feed(EDGE_ROWS, version) == _feed(EDGE_ROWS, version, fast=False)


def _edits(raw: bytes, rng: random.Random) -> list[bytes]:
    """Variants of one real row: a character escaped, a control or line-break character put in a
    string, whitespace between tokens, a key repeated, a byte cut or flipped."""
    out = []
    q = [i for i, c in enumerate(raw) if c == ord('"')]
    if len(q) > 8:
        i = q[rng.randrange(4, len(q) - 1)]
        out.append(raw[:i + 1] + rng.choice([b"\\u0041", b"\\u2028", b"\\n", b"\x7f", b"\xc2\x85", b"\\ud83d\\ude00",
                                              b"\xe2\x80\xa8", b"\\\\", b"\\/", b"\\u0000"]) + raw[i + 1:])
    out.append(raw.replace(b'":', b'" : ', 3).replace(b",", b" ,\t", 3))
    try:
        obj = json.loads(raw)
    except ValueError:
        return out
    if isinstance(obj, dict) and isinstance(obj.get("data"), dict) and obj["data"]:
        k = next(iter(obj["data"]))
        out.append(raw[:-2] + b',"' + k.encode() + b'":null}}')
    cut = rng.randrange(1, len(raw))
    out.append(raw[:cut])
    b = bytearray(raw)
    b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    out.append(bytes(b))
    return out


def test_edited_fixture_rows_read_the_same_both_ways():
    rng = random.Random(32)
    rows = [r for p in _corpus() for r in _rows(p.read_bytes())
            if extract.row_type(r) not in (None, b"assistant/chunk", b"step/start", b"step/end")]
    sample = rng.sample(rows, min(len(rows), 1500))
    edited = [e for r in sample for e in _edits(r, rng)]
    assert _check_rows(edited) > 1000
    for raw in edited:
        assert _feed([raw]) == _feed([raw], fast=False), raw[:300]


def _value(rng: random.Random, depth: int = 0):
    """A random JSON value: strings with escapes, control, line-break and non-ASCII characters, integers
    short and long, floats, nested lists and objects."""
    k = rng.randrange(9 if depth < 3 else 6)
    if k == 0:
        return "".join(rng.choice(['a', ' ', '"', '\\', '\n', '\t', '\x01', '\x7f', '\x85', '\u2028', 'é', '\U0001F600',
                                   '/', '\b', '\f', '\r']) for _ in range(rng.randint(0, 12)))
    if k == 1:
        return rng.choice([0, -1, 7, 2 ** 40, -(2 ** 70), 10 ** 25])
    if k == 2:
        return rng.choice([0.1, -0.0, 1.5, 1e-7, 2.5e-320, 1e22, 123.456, 1 / 3, 1e299])
    if k in (3, 4, 5):
        return rng.choice([True, False, None, "plain words"])
    if k in (6, 7):
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {f"k{i}{rng.choice(['', ' ', 'é', '.x'])}": _value(rng, depth + 1) for i in range(rng.randint(0, 4))}


def test_tool_arguments_of_any_json_read_the_same_both_ways():
    """Tool calls whose arguments hold random JSON (as a string, as dsh writes them, and as an object):
    the C gives what json.dumps and the text function give, for nearly all of them."""
    rng = random.Random(32)
    rows = []
    for i in range(1500):
        args = {f"a{j}": _value(rng) for j in range(rng.randint(1, 4))}
        text = json.dumps(args, ensure_ascii=rng.random() < 0.3, separators=rng.choice([(",", ":"), (", ", ": ")]))
        for a in (text, args):
            row = {"type": "tool/call", "seq": i, "time": 1, "data": {"turn": 1, "callId": f"c{i}", "name": "t", "arguments": a}}
            rows.append(json.dumps(row, ensure_ascii=False).encode())
    assert _check_rows(rows) > 0.9 * len(rows)
    for raw in rows[:300]:
        assert _feed([raw]) == _feed([raw], fast=False), raw[:300]

"""The transcripts' fast paths in C (rowscan_c's exp6 section) held to their definitions: ``ex6_row_type`` is
``export_rows.row_type``'s own way, ``ex6_escape`` is ``html.escape`` / ``_md_text``'s patterns, ``ex6_redact_walk``
is ``redact_walk`` and the Python walk (same answer, same containers kept, same calls of text in the same order,
so the same counts and examples); and the Markdown and HTML exports, plain and redacted, are byte for byte the
ones the definitions write, on generated logs with secrets planted, hostile transcripts (HTML/script injection,
control characters, bidi and non-ASCII text), secrets split across a row's stream tokens and rows at every
chunk seam: the HTML stays inert and no planted secret is left in a redacted export."""
from __future__ import annotations

import hashlib
import html
import json
import random
import re
from pathlib import Path

import msgspec
import pytest

from app.store import export_rows, export_transcript as et, redact
from app.store.export import export
from app.store.faces import open_reader
from app.store.redact import Redactor
from app.tools.hostile import HOSTILE_TEXTS, deep_row, hostile_session, jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import session_files

native = redact._native
pytestmark = pytest.mark.skipif(native is None or not hasattr(native, "ex6_escape"),
                                reason="the C scanner module (exp6 section) is not built")
NEXT = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "dsh-next"

# secrets planted in place of common words (escapes written as in JSON); each leaves a marker that a redacted
# export must never hold
SECRETS = [(b"config", b"api_key=sk-abcdefghijklmnop1234"), (b" file", b" mail bob.smith@example.com file"),
           (b"src/", b"/home/alice/src/"), (b"Let ", b"Authorization: Bearer abcdefgh12345678 Let "),
           (b"lazily", b"ghp_abcdefghijklmnopqrstuvwxyz0123 AKIAABCDEFGHIJKLMNOP xoxb-1234567890-abc"),
           (b"module", b"-----BEGIN RSA PRIVATE KEY-----\\nMIIEabc\\n-----END RSA PRIVATE KEY-----"),
           (b"sorted", b"AIzaSyA1234567890abcdefghijklmnopqrstuv secret\\u003dabcdef1234 /Users/dave/x \\u0131"),
           (b"then", "token=ab\u212acdef /home/\u00e9l\u00e8ve/x".encode())]
LEAKS = [b"sk-abcdefghijklmnop1234", b"bob.smith@example.com", b"/home/alice", b"abcdefgh12345678",
         b"ghp_abcdefghijklmnopqrstuvwxyz0123", b"MIIEabc", b"AIzaSyA1234567890", b"abcdef1234"]
INJECT = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "\"><svg onload=alert(1)>",
          "[x](javascript:alert(1))", "![i](http://evil/x.png)", "</div></body><script>x()</script>",
          "&lt;already&gt; &amp; ' \" ` ``` ~~~", "\x00\x01\x07\x1b[31mred\x1b[0m\x7f\u0085\u2028\u2029",
          "\u202eevil\u202c \u200b\ufeff", "caf\u00e9 \u4e2d\u6587 \U0001f600 \ud7ff"]


def _planted(data: bytes, seed: int) -> bytes:
    hdr, rest = data.split(b"\n", 1)
    rng = random.Random(seed)
    for word, secret in SECRETS:
        parts = rest.split(word)
        rest = b"".join(p + (secret if rng.random() < 0.3 else word) for p in parts[:-1]) + parts[-1]
    return hdr + b"\n" + rest


def _injected(data: bytes, seed: int) -> bytes:
    """Every text of a generated log's messages with hostile text put in (each row re-encoded as JSON)."""
    rng = random.Random(seed)
    out = []
    for line in data.splitlines(True):
        try:
            row = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        data = row.get("data") if isinstance(row, dict) else None
        if row.get("type") not in ("user/message", "assistant/message") or not isinstance(data, dict):
            out.append(line)
            continue
        msg = data.get("message", data)           # (tool results are shown fenced: only messages' text here)
        for b in (msg or {}).get("content") or [] if isinstance(msg, dict) else []:
            if isinstance(b, dict) and isinstance(b.get("text"), str) and rng.random() < 0.5:
                b["text"] = rng.choice(INJECT) + b["text"] + rng.choice(INJECT)
        out.append(json.dumps(row, ensure_ascii=rng.random() < 0.3).encode() + b"\n")
    return b"".join(out)


def _split_secret(data: bytes) -> bytes:
    """v0 packed text rows whose members split a secret in two (``token=`` in one, its value in the next)."""
    return data.replace(b'"texts":["', b'"texts":["tok","en=abcdef1234 /ho","me/alice/x ', 1 << 30)


def _odd_rows(data: bytes, seed: int) -> bytes:
    """A v4 log's message and tool result rows changed in the ways a row read from its bytes must notice: no time,
    ignorable, keys twice (in data, in a stream record), an escaped key, a float, whitespace, a replacement, a
    secret in a key of data the entry does not read, in a stream's token, in a tool result's meta, a deep value."""
    rng = random.Random(seed)
    out = []
    for line in data.splitlines(True):
        if not line.startswith((b'{"type":"assistant/message"', b'{"type":"tool/result"')) or rng.random() < 0.3:
            out.append(line)
            continue
        k = rng.randrange(13)
        row = line.rstrip(b"\n")
        if k == 0:
            row = re.sub(rb',"time":-?\d+', b"", row, count=1)
        elif k == 1:
            row = row[:-1] + b',"ignorable":true}'
        elif k == 2:
            row = row.replace(b'"data":{', b'"data":{"turn":99,', 1)
        elif k == 3:
            row = row.replace(b'{"type":"chunk",', b'{"type":"chunk","type":"chunk","x":"token=abcdef1234",', 1)
        elif k == 4:
            row = row.replace(b'"data":{', b'"data":{"n\\u0065te":"/home/alice/x",', 1)
        elif k == 5:
            row = row.replace(b'"data":{', b'"data":{"f":1.5,"g":"a@b.io",', 1)
        elif k == 6:
            row = row.replace(b'","', b'", "', 1)
        elif k == 7:
            row = row.replace(b'"surfaceOp":"append"', b'"surfaceOp":{"op":"replace","start":0,"end":1}', 1)
        elif k == 8:
            row = row.replace(b'"texts":["', b'"texts":["token=abcdef1234","/home/alice/y ', 1)
        elif k == 9:
            row = row.replace(b'"meta":{', b'"meta":{"k":"Bearer abcdefgh12345678 bob@example.com",', 1)
        elif k == 10:
            row = row.replace(b'"data":{', b'"data":{"deep":' + b"[" * 300 + b'"x"' + b"]" * 300 + b",", 1)
        elif k == 11:
            row = row.replace(b'"data":{', b'"data":{"meta2":{"u":"\\u00e9 /Users/dave/x","v":[1,"ghp_abcdefghijklmnopqrstuvwxyz0123"]},', 1)
        else:
            row = row.replace(b'"turn":', b'"turn":"x","turn":', 1)
        out.append(row + b"\n")
    return b"".join(out)


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> list[Path]:
    d = tmp_path_factory.mktemp("exp6")
    out = []
    for version, seed in ((0, 3), (4, 29)):
        p = d / f"plain-v{version}.jsonl"
        write_jsonl(str(p), SessionSynth(seed, version=version), target_bytes=250_000)
        q = d / f"secrets-v{version}.jsonl"
        q.write_bytes(_planted(p.read_bytes(), seed))
        out.append(q)
        h = d / f"inject-v{version}.jsonl"
        h.write_bytes(_injected(q.read_bytes(), seed))
        out.append(h)
    o = d / "odd-v4.jsonl"
    o.write_bytes(_odd_rows((d / "plain-v4.jsonl").read_bytes(), 8))
    out.append(o)
    s = d / "split-v0.jsonl"
    s.write_bytes(_split_secret((d / "plain-v0.jsonl").read_bytes()))
    out.append(s)
    h = d / "hostile.jsonl"
    h.write_bytes(hostile_session(out[0].read_bytes().splitlines(True), 2) + deep_row(10 ** 6, 100) + b"\n")
    out.append(h)
    data = out[2].read_bytes()[:80_000]
    for name, b, _kept in jsonl_mutants(data[:data.rfind(b"\n") + 1], 11, 8):
        p = d / f"mut-{name.replace('/', '_')}.jsonl"
        p.write_bytes(b)
        out.append(p)
    return out + session_files(NEXT)


def _rows(paths: list[Path]) -> list[bytes]:
    return [line for p in paths for line in p.read_bytes().splitlines()]


# --------------------------------------------------------------------------- row_type

def _row_type_exact(raw: bytes) -> object:
    """export_rows.row_type with the C read off (its own way)."""
    try:
        return export_rows._type_of(raw).type
    except (msgspec.DecodeError, RecursionError):
        return None


def _readable(raw: bytes) -> bool:
    """Whether the exact decode may read ``raw`` as a row at all (JSON within the nesting limit)."""
    try:
        msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return False                    # (msgspec's own limit is far past limits.MAX_DEPTH: a bad row either way)
    return True


ODD_ROWS = [b'{"type":"a","data":{"type":"b"}}', b'{"type":"a","type":"b"}', b'{"type":"a", "type" :"b"}',
            b'{"type":"a","typ\\u0065":"b"}', b'{"type":"a","t\\"":"b"}', b'{"type":"a\\u0062"}',
            b'{"type":"a","x":["type",{"type":1}],"y":"\\"type\\""}', b'{"type":"\xff\xfe"}', b'{"type":"',
            b'{"type":"a"', b'{"type":"a",', b'{"type":"a","b":"\\', b'{"type":"a"}  ', b'{"type":"a"}x',
            b'{"type":"a","b":[}', b'{"type":"\xc3\xa9t\xc3\xa9"}', b'{"type":"a","x":"}","type":"b"}',
            b'{"type":"a","x":{"y":"}"},"type":"b"}', b'{"type":"tool/result","data":{"content":[{"type":"text"}]}}',
            b'{"type" :"a"}', b'{ "type":"a"}', b'["type","a"]', b'', b'{"type":"a","d":1e5,"type2":"x"}']


def test_row_type_from_bytes_is_the_exact_one(logs):
    rows = _rows(logs + session_files()[::3]) + ODD_ROWS
    told = 0
    for raw in rows:
        got = native.ex6_row_type(raw)
        if got is None:
            continue
        told += 1
        want = _row_type_exact(raw)
        if not _readable(raw):
            continue                    # (a bad row, no event either way: its first bytes are read)
        assert got == want, raw[:200]
    assert told > len(rows) // 2
    for raw in rows:                    # row_type itself: the C read or its own way, never another answer
        want = _row_type_exact(raw)
        got = export_rows.row_type(raw)
        if got != want:
            assert not _readable(raw), raw[:200]


def test_row_type_leaves_the_unclear_rows():
    for raw in (b'{"type":"a","type":"b"}', b'{"type":"a","typ\\u0065":"b"}', b'{"type":"a\\u0062"}',
                b'{"type":"\xff"}', b'{"typ":"a"}', b'{"type":"a","x":"}","type":"b"}'):
        assert native.ex6_row_type(raw) is None, raw
    assert native.ex6_row_type(b'{"type":"a","data":{"type":"b","t":["type"]}}') == "a"
    assert native.ex6_row_type(b'{"type":"\xc3\xa9"}') == "\u00e9"


# --------------------------------------------------------------------------- escapes

PARTS = list("ab&<>\"'[]\\`*_~#\n\r\t \x00\x1b\x7f\u0085\u00e9\u00ff\u0100\u2028\u202e\u4e2d\ud800\U0001f600") + \
    ["&amp;", "&lt;", "<script>", "](", "![", "javascript:"]


def test_escape_is_html_escape_and_md_text():
    rng = random.Random(5)
    strings = ["".join(rng.choice(PARTS) for _ in range(rng.randint(0, 40))) for _ in range(30000)]
    strings += HOSTILE_TEXTS + INJECT + ["", "plain", "x" * 100000 + "<"]
    for s in strings:
        assert native.ex6_escape(s, 0) == html.escape(s), repr(s)
        assert native.ex6_escape(s, 1) == et._md_text_exact(s), repr(s)
        assert et._md_text(s) == et._md_text_exact(s)
    class S(str):
        pass
    got = native.ex6_escape(S("a<b"), 0)
    assert got == "a&lt;b" and type(got) is str
    got = native.ex6_escape(S("ab"), 1)
    assert got == "ab" and type(got) is str


# --------------------------------------------------------------------------- the walk

def _objects(paths: list[Path]) -> list[object]:
    out: list[object] = []
    for raw in _rows(paths):
        try:
            out.append(msgspec.json.decode(raw))
        except (msgspec.DecodeError, RecursionError):
            pass
    return out


def _recorder(red: Redactor, calls: list) -> object:
    def text(s: str, bits: int) -> str:
        calls.append((s, bits))
        return red._text(s, bits)
    return text


def test_walk_is_redact_walk_and_the_python_walk(logs):
    rng = random.Random(6)
    objs = _objects(logs + session_files()[::3])
    objs += [[rng.choice(["x", "token=abcdef12", "/home/bob/y", 3, None, {"k": "a@b.co"}]) for _ in range(40)]
             for _ in range(50)]
    objs += [{}, [], "", "plain", "/home/a/b", [[["/home/alice/x"]]], {"a": {"b": {"c": ["x", "y@z.io"]}}}]
    new, old, py = Redactor(), Redactor(), Redactor()
    new_calls: list = []
    old_calls: list = []
    kept = changed = 0
    for o in objs:
        got = native.ex6_redact_walk(o, _recorder(new, new_calls), redact._DEEP)
        want = native.redact_walk(o, _recorder(old, old_calls), redact._DEEP)
        if want is NotImplemented:      # (too deep: both leave it to the Python walk)
            assert got is NotImplemented
            continue
        assert got == want == py._walk(o, 0)
        assert type(got) is type(want)
        assert (got is o) == (want is o)
        kept += got is o
        changed += got is not o
        if isinstance(o, dict) and got is not o:        # the containers nothing changed in: the same objects
            for k, v in o.items():
                assert (got[k] is v) == (want[k] is v), k
    assert new_calls == old_calls
    assert new.counts == old.counts == py.counts and new.examples == old.examples == py.examples
    assert kept > 0 and changed > 0


class _Str(str):
    pass


def test_walk_leaves_deep_and_odd_values_to_python():
    deep: object = "/home/alice/x"
    for _ in range(redact._DEEP + 5):
        deep = [deep]
    calls: list = []
    assert native.ex6_redact_walk(deep, _recorder(Redactor(), calls), redact._DEEP) is NotImplemented
    assert native.ex6_redact_walk({"a": "/home/b/c", "x": [_Str("/home/a/b")]}, _recorder(Redactor(), calls),
                                  redact._DEEP) is NotImplemented
    assert calls == []                  # (before any text is redacted: the Python walk counts it all)
    for o in (deep, {"x": [_Str("/home/a/b")]}):
        c, py = Redactor(), Redactor()
        assert c.obj(o) == py._walk(o, 0) and c.counts == py.counts == {"home-path": 1}
    big = {"s": ["tok"] * 5000 + ["token=abcdefgh"] + [{"t": "x"}] * 3000}
    got = native.ex6_redact_walk(big, Redactor()._text, redact._DEEP)
    assert got["s"][5000] == "token=[REDACTED:secret]" and got["s"][5001] is big["s"][5001]
    assert big["s"][5000] == "token=abcdefgh"             # (never changed in place)


def test_walk_passes_errors_on():
    def boom(s: str, bits: int) -> str:
        raise ValueError("x")
    with pytest.raises(ValueError):
        native.ex6_redact_walk({"a": ["x", {"b": "/home/a/b"}]}, boom, redact._DEEP)


# --------------------------------------------------------------------------- exports

def _definitions(monkeypatch) -> None:
    """Every fast path of this section off: the Python definitions (and the export section's walk)."""
    monkeypatch.setattr(redact, "_walk_c", native.redact_walk)
    monkeypatch.setattr(export_rows, "_row_type_c", None)
    monkeypatch.setattr(et, "_escape_c", None)
    monkeypatch.setattr(et, "_fmt_time", et._fmt_time_exact)


def _digests(paths: list[Path], out: Path, redacted: bool) -> dict[str, str]:
    got = {}
    for p in paths:
        for fmt in ("markdown", "html"):
            dst = out / f"{p.stem}.{fmt}"
            export(open_reader(str(p)), fmt, str(dst), redact=redacted)
            for f in (dst, Path(str(dst) + ".redaction.json")):
                if f.exists():
                    got[f"{p}|{f.name}"] = hashlib.sha256(f.read_bytes()).hexdigest()
                    f.unlink()
    return got


@pytest.mark.parametrize("redacted", [False, True])
def test_transcripts_are_the_definitions_ones(logs, tmp_path, monkeypatch, redacted):
    monkeypatch.setattr(et, "CHUNK_CHARS", 1500)            # many chunks: the seams are exercised
    paths = logs + session_files()[::7]
    fast = _digests(paths, tmp_path, redacted)
    _definitions(monkeypatch)
    assert _digests(paths, tmp_path, redacted) == fast


def test_redacted_transcripts_hold_no_secret_and_stay_inert(logs, tmp_path, monkeypatch):
    monkeypatch.setattr(et, "CHUNK_CHARS", 1000)
    tags = re.compile(rb"<(/?)([a-zA-Z0-9]+)")
    allowed = {b"html", b"head", b"meta", b"title", b"style", b"body", b"h1", b"h2", b"table", b"tr", b"td",
               b"div", b"span", b"b", b"pre"}
    seen = 0
    for p in logs[:5]:
        for fmt in ("markdown", "html"):
            dst = tmp_path / f"{p.stem}.{fmt}"
            res = export(open_reader(str(p)), fmt, str(dst), redact=True)
            text = dst.read_bytes()
            for leak in LEAKS:
                assert leak not in text, (p.name, fmt, leak)
            assert b"en=abcdef1234" not in text
            assert res["redaction"]["total"] > 0
            if fmt == "html":
                assert {m.group(2).lower() for m in tags.finditer(text)} <= allowed
                assert b"<script" not in text.lower() and b"<img" not in text.lower()
            else:
                assert b"<script" not in text and b"<img" not in text
                assert not re.search(rb"(?<!\\)\]\(javascript:", text)
                seen += b"\\[x\\](javascript:" in text
    assert seen                         # (the injected links were there, made inert)


def test_time_text_is_the_definitions():
    rng = random.Random(9)
    values: list[object] = [0, 1, -1, 999, 1000, 1001, True, False, None, "1", 1.5, 1e300, float("nan"), -5.5,
                            2 ** 53, 2 ** 53 + 1, 253402300799999, 253402300800000, 10 ** 20, 1786239520999]
    values += [rng.randrange(1, 1 << 48) for _ in range(20000)] + [rng.randrange(1000) + 1786239520000 for _ in range(2000)]
    values += [rng.random() * 2e12 for _ in range(2000)]
    et._TIMES.clear()
    for _ in range(2):                  # (the second time from the cache)
        for v in values:
            assert et._fmt_time(v) == et._fmt_time_exact(v), v

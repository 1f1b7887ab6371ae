"""Redaction read from a row's bytes (rowscan_c's export section: ``redact_spans``, ``redact_quiet``), held to
their definitions on every row of the fixtures, of generated logs with secrets planted, of hostile logs, on
rows mutated at random and on hand-made edge rows:

- ``redact_spans(raw)`` is not None only for a row in the very form msgspec's encoder writes (decoded and
  encoded again: its bytes), and then ``Redactor.canonical_row(raw)`` (the row with the listed strings
  redacted in place) is ``Redactor.row_exact(raw)`` (decode, walk, encode), with the same counts and examples;
- ``redact_quiet(raw, True)`` is ``redact_spans(raw) == []``: the row is its own redaction and counts nothing;
- ``redact_quiet(raw, False)``: no string value of the row, if it decodes, passes a gate (``gate_bits``);
- every redacted export, and its report, is the same with this byte way switched off (the C gates and walk
  still on: ``tests/test_redact_c.py`` holds those to the Python ones).
"""
from __future__ import annotations

import hashlib
import random
from pathlib import Path

import msgspec
import pytest

from app.log.format.limits import MAX_DEPTH
from app.store import export_rows, redact
from app.store.export import export
from app.store.faces import open_reader
from app.store.redact import Redactor, gate_bits
from app.tools.hostile import deep_row, hostile_session, jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import session_files

native = redact._native
pytestmark = pytest.mark.skipif(native is None, reason="the C scanner module is not built")
NEXT = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "dsh-next"
_enc = msgspec.json.Encoder()

SECRETS = [(b"config", b"api_key=sk-abcdefghijklmnop1234"), (b" file", b" mail bob.smith@example.com file"),
           (b"src/", b"/home/alice/src/"), (b"Let ", b"Authorization: Bearer abcdefgh12345678 Let "),
           (b"cache", b"KEY: \\u0130token=\\u017fecret123 PASSWORD : hunter22 c:\\\\Users\\\\carol\\\\x"),
           (b"lazily", b"ghp_abcdefghijklmnopqrstuvwxyz0123 AKIAABCDEFGHIJKLMNOP xoxb-1234567890-abc"),
           (b"index", b"basic QWxhZGRpbjpvcGVuIHNlc2FtZQ== \\u212aey=abcdef glpat-abcdefghijklmnopqrstu"),
           (b"module", b"-----BEGIN RSA PRIVATE KEY-----\\nMIIEabc\\n-----END RSA PRIVATE KEY----- token=[REDACTED:x]"),
           (b"sorted", b"AIzaSyA1234567890abcdefghijklmnopqrstuv secret\\u003dabcdef1234 /Users/dave/x \\u0131"),
           (b"with", b"\\u001b[1mtok\\u001ben=abcdef \\u001bpassword=hunter2222 \\/home\\/eve\\/x ke\\ny: abcdef"),
           (b"then", "token=ab\u212acdef /home/\u00e9l\u00e8ve/x".encode())]

# rows at the edges of the form msgspec writes: each is held to the definitions like any other row
EDGE = [b"", b"{}", b"[]", b'""', b"null", b"true", b"0", b"-1", b"-0", b"1.5", b"1e5", b"01", b"123456789012345678",
        b"1234567890123456789", b"-123456789012345678", b'{"a":[]}', b'{"a":{}}', b'{"a":"x","a":"y"}',
        b'{"a":"x","b":{"a":"/home/bob/x"},"a":"z"}', b'{"a":{"b":1},"c":{"b":2}}', b'{ "a":"x"}', b'{"a" :"x"}',
        b'{"a":"x"} ', b' {"a":"x"}', b'{"a":"x"}\n', b'{"a":"x"\r}', b'{"a":"x"', b'{"a":"x"}}', b'{"a":"x",}',
        b'{"a":"\\/home\\/bob"}', b'{"a":"\\u002fhome/bob/x"}', b'{"a":"\\u001b[31m /home/bob/x"}',
        b'{"a":"\\u001B"}', b'{"a":"\\u0008"}', b'{"a":"\\u000a"}', b'{"a":"\\u001f token=abcdef"}',
        b'{"a":"\\b\\f\\n\\r\\t\\"\\\\"}', b'{"a":"\\x"}', b'{"a":"\\', b'{"a":"\xed\xa0\x80 /home/bob/x"}',
        b'{"a":"\xc0\xaf"}', b'{"a":"\xf4\x90\x80\x80"}', b'{"a":"\xf0\x9f\x98\x80 token=abcdef"}',
        b'{"a":"\xe2\x84\xaaey=abcdef"}', b'{"a":"\xc4\xb0d x"}', b'{"a":"\xc4\xb1"}', b'{"a":"\xc5\xbf"}',
        b'{"a":"x\x00"}', b'{"a":"x\x7f /home/bob/y"}', b'{"a":"\xe2\x80\xa8"}', b'{"a":"\xff"}',
        b'{"token=abcdefgh":"x"}', b'{"/home/bob/x":"/home/bob/y"}', b'{"a":"tok\\"en=abcdefg"}',
        b'{"a":"ke\\ny=abcdef"}', b'{"a":"x\\\\/home/bob"}', b'{"a":["/home/a/b",1,"key: sekrit99",[["a@b.co"]]]}',
        b'{"a":"Bearer abcdefgh12345678 and /Users/carol/x"}', b'{"a":"[REDACTED:x] token=abcdefgh"}',
        b'{"a":true,"b":false,"c":null,"d":-5}', b'{"a":tru}', b'{"a":nul}', b'{"a":-}', b'{"a":1.}', b'{"a":1e}',
        b'"/home/bob/x"', b'["sk-abcdefghijklmnop1234"]',
        b'{' + b",".join(b'"k%d":%d' % (i, i) for i in range(600)) + b'}',
        b'{' + b",".join(b'"k%d":"/home/u%d/x"' % (i, i) for i in range(40)) + b'}']
for _d in (MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1):
    EDGE += [b"[" * _d + b'"/home/bob/x"' + b"]" * _d, b'{"a":' * _d + b'"x"' + b"}" * _d]


def _planted(data: bytes, seed: int) -> bytes:
    hdr, rest = data.split(b"\n", 1)
    rng = random.Random(seed)
    for word, secret in SECRETS:
        parts = rest.split(word)
        rest = b"".join(p + (secret if rng.random() < 0.3 else word) for p in parts[:-1]) + parts[-1]
    return hdr + b"\n" + rest


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> list[Path]:
    """Generated v0 and v4 logs with secrets planted, hostile and mutated ones, and every v1-v4 fixture."""
    d = tmp_path_factory.mktemp("redact-quiet")
    out = []
    for version, seed in ((0, 5), (4, 31)):
        p = d / f"plain-v{version}.jsonl"
        write_jsonl(str(p), SessionSynth(seed, version=version), target_bytes=300_000)
        q = d / f"secrets-v{version}.jsonl"
        q.write_bytes(_planted(p.read_bytes(), seed))
        out.append(q)
    h = d / "hostile.jsonl"
    h.write_bytes(hostile_session(out[0].read_bytes().splitlines(True), 3) + deep_row(10 ** 6, 100) + b"\n")
    out.append(h)
    for k, (_name, data, _kept) in enumerate(jsonl_mutants(out[0].read_bytes()[:120_000], 7, 10)):
        m = d / f"mutant-{k}.jsonl"
        m.write_bytes(data)
        out.append(m)
    return out + session_files(NEXT)


def _mutated(rows: list[bytes], seed: int, n: int) -> list[bytes]:
    """``n`` rows with one to three bytes changed, put in or taken out, from bytes that matter to the scan."""
    rng = random.Random(seed)
    bits = [b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":", b" ", b"u", b"0", b"1", b"b", b"-", b".", b"e", b"/",
            b"\x80", b"\xc4", b"\xe2", b"\xed", b"\x1b", b"@", b"=", b"token", b"/home/", b"Users"]
    out = []
    for _ in range(n):
        r = bytearray(rng.choice(rows))
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(r) + 1)
            op = rng.randrange(3)
            if op == 0 and i < len(r):
                del r[i]
            elif op == 1 and i < len(r):
                r[i:i + 1] = rng.choice(bits)
            else:
                r[i:i] = rng.choice(bits)
        out.append(bytes(r))
    return out


def _rows(paths: list[Path]) -> list[bytes]:
    rows = [r for p in paths for r in p.read_bytes().split(b"\n") if len(r) < 1 << 20]
    return rows + _mutated([r for r in rows if r], 11, 4000) + EDGE


def _value_strings(o: object) -> list[str]:
    out, todo = [], [o]
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            todo += v.values()
        elif isinstance(v, list):
            todo += v
    return out


def test_spans_and_quiet_hold_to_their_definitions(logs):
    kinds = {"none": 0, "quiet": 0, "spans": 0, "masked": 0, "loose": 0}
    for raw in _rows(logs + session_files()[::3]):
        sp = native.redact_spans(raw, MAX_DEPTH)
        exact, fast = Redactor(), Redactor()
        want = exact.row_exact(raw)
        quiet, loose = native.redact_quiet(raw, True, MAX_DEPTH), native.redact_quiet(raw, False, MAX_DEPTH)
        assert quiet == (sp == []), raw
        if sp is None:
            kinds["none"] += 1
        else:
            assert _enc.encode(msgspec.json.decode(raw)) == raw, raw       # (its form: msgspec's own)
            got = fast.canonical_row(raw)
            assert got == want, raw
            assert (fast.counts, fast.examples) == (exact.counts, exact.examples), raw
            kinds["quiet" if not sp else "spans"] += 1
            kinds["masked"] += got != raw
        if quiet:
            assert want == raw and not exact.counts, raw
            assert loose, raw
        try:
            o = msgspec.json.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):    # (e.g. 1e999: JSON, out of msgspec's range)
            assert not quiet, raw
            continue
        if loose:
            assert all(gate_bits(s) == 0 for s in _value_strings(o)), raw
            assert Redactor().obj(o) == o
            kinds["loose"] += 1
    assert min(kinds.values()) > 100, kinds             # (every case met, often)


def test_canonical_row_finds_every_string_a_gate_passes():
    """A row's listed strings are exactly its string values whose bytes pass a gate, with (at least) their gates."""
    raw = _enc.encode({"a": ["x", "/home/bob/y", {"b": "key: abcdef12", "token=q": "plain"}], "c": "a@b.co",
                       "d": "\u001basic x", "e": 5})
    sp = native.redact_spans(raw, MAX_DEPTH)
    got = [(msgspec.json.decode(raw[sp[k]:sp[k + 1]]), sp[k + 2]) for k in range(0, len(sp), 3)]
    assert got == [("/home/bob/y", gate_bits("/home/bob/y")), ("key: abcdef12", gate_bits("key: abcdef12")),
                   ("a@b.co", gate_bits("a@b.co")), ("\u001basic x", 2)]
    assert gate_bits("\u001basic x") == 0          # (its bytes spell 'basic' with the escape's b: a gate more)


def _digests(paths: list[Path], out: Path) -> dict[str, str]:
    got = {}
    for p in paths:
        for fmt in ("raw", "logical", "markdown", "html"):
            dst = out / f"{p.stem}.{fmt}"
            export(open_reader(str(p)), fmt, str(dst), redact=True)
            for f in (dst, Path(str(dst) + ".redaction.json")):
                got[f"{p}|{f.name}"] = hashlib.sha256(f.read_bytes()).hexdigest()
                f.unlink()
            Path(str(dst) + ".sha256").unlink(missing_ok=True)
    return got


def test_redacted_exports_without_the_byte_way(logs, tmp_path, monkeypatch):
    """Every redacted export and report: the same bytes with rows read from their bytes as with every row decoded."""
    paths = logs + session_files()[::7]
    fast = _digests(paths, tmp_path)
    monkeypatch.setattr(Redactor, "canonical_spans", lambda self, raw: None)
    monkeypatch.setattr(export_rows, "quiet_values", lambda raw: False)
    assert _digests(paths, tmp_path) == fast


def test_plain_row_is_plain_envelope(logs):
    """plain_row (a row's top level read with its values left as bytes) says what plain_envelope says, on every
    row Redactor.canonical_row reads (the rows the logical export asks it of), of v0 to v4 logs."""
    seen = {True: 0, False: 0}
    for k, p in enumerate(logs + session_files()[::3]):
        r = open_reader(str(p))
        rows = p.read_bytes().split(b"\n")[1:]
        if k < 2:                            # (v0 and v4 rows with bytes changed, and the edge rows)
            rows += _mutated([x for x in rows if x], 13, 3000) + EDGE
        for raw in rows:
            if native.redact_spans(raw, MAX_DEPTH) is None:
                continue
            got = export_rows.plain_row(r, raw)
            assert got == (export_rows.plain_envelope(r, raw) is not None), (p, raw)
            seen[got] += 1
    assert min(seen.values()) > 100, seen

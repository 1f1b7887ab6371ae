"""Redaction in C (rowscan_c's export section): ``redact_gate`` is ``redact.gate_bits`` and ``redact_walk`` is
the Python walk of ``Redactor.obj`` (the same answer, counts and examples) on every string and payload of the
fixtures, generated logs with secrets planted, hostile and random strings; every redacted export is byte for
byte the one the Python path writes; the rules tried only where they can match give what each rule's ``sub``
over the whole string gives."""
from __future__ import annotations

import hashlib
import random
from pathlib import Path

import msgspec
import pytest

from app.store import redact
from app.store.export import export
from app.store.faces import open_reader
from app.store.redact import ALL_GATES, Redactor, gate_bits
from app.tools.hostile import HOSTILE_TEXTS, deep_row, hostile_session
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import session_files

native = redact._native
pytestmark = pytest.mark.skipif(native is None, reason="the C scanner module is not built")
NEXT = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "dsh-next"

# pieces of strings: every gate's words in several cases, near misses, the letters IGNORECASE folds, non-ASCII
# of each width (so str of 1, 2 and 4 bytes a character), the places a home-path match starts
PARTS = list("aKkTtUsSgAx_.-=: \"'\\&,;}]@/é\n\x1c\x0b\u00a0\u2028\u0130\u0131\u017f\u212a\u00ff\u0100\u4e2d\U0001f600") + [
    "token", "TOKEN", "api_key", "Secret", "PASSWORD", "passwd", "Auth", "=", ": ", "/home/", "/home", "/Users/",
    "Users", "C:\\Users\\", "c:\\\\Users\\\\", "D:Users", "[user]", "Bearer ", "BASIC ", "baſic ", "bearer\t",
    "sk-", "sk-ant-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "gh_", "github_pat_", "glpat-", "AKIA", "ASIA",
    "AIza", "AKI", "xoxb-", "xox", "a@b.co", "x@y", "-----BEGIN", "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----", "ABCDEFGHIJKLMNOP0123456789abcdefgh", "[REDACTED:x]", "\u212aey", "\u0130d"]
SECRETS = [(b"config", b"api_key=sk-abcdefghijklmnop1234"), (b" file", b" mail bob.smith@example.com file"),
           (b"src/", b"/home/alice/src/"), (b"Let ", b"Authorization: Bearer abcdefgh12345678 Let "),
           (b"cache", b"KEY: \\u0130token=\\u017fecret123 PASSWORD : hunter22 c:\\\\Users\\\\carol\\\\x"),
           (b"lazily", b"ghp_abcdefghijklmnopqrstuvwxyz0123 AKIAABCDEFGHIJKLMNOP xoxb-1234567890-abc"),
           (b"index", b"basic QWxhZGRpbjpvcGVuIHNlc2FtZQ== \\u212aey=abcdef glpat-abcdefghijklmnopqrstu"),
           (b"module", b"-----BEGIN RSA PRIVATE KEY-----\\nMIIEabc\\n-----END RSA PRIVATE KEY----- token=[REDACTED:x]"),
           (b"sorted", b"AIzaSyA1234567890abcdefghijklmnopqrstuv secret\\u003dabcdef1234 /Users/dave/x \\u0131")]


def _random_strings(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PARTS) for _ in range(rng.randint(0, 30))) for _ in range(n)]


def _planted(data: bytes, seed: int) -> bytes:
    """A log with secrets of every kind planted in about a third of the places each word was."""
    hdr, rest = data.split(b"\n", 1)
    rng = random.Random(seed)
    for word, secret in SECRETS:
        parts = rest.split(word)
        rest = b"".join(p + (secret if rng.random() < 0.3 else word) for p in parts[:-1]) + parts[-1]
    return hdr + b"\n" + rest


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> list[Path]:
    """Generated v0 and v4 logs with secrets planted, a hostile one, and every v1-v4 fixture."""
    d = tmp_path_factory.mktemp("redact-c")
    out = []
    for version, seed in ((0, 3), (4, 29)):
        p = d / f"plain-v{version}.jsonl"
        write_jsonl(str(p), SessionSynth(seed, version=version), target_bytes=300_000)
        q = d / f"secrets-v{version}.jsonl"
        q.write_bytes(_planted(p.read_bytes(), seed))
        out.append(q)
    h = d / "hostile.jsonl"
    h.write_bytes(hostile_session(out[0].read_bytes().splitlines(True), 2) + deep_row(10 ** 6, 100) + b"\n")
    return out + [h] + session_files(NEXT)


def _objects(paths: list[Path]) -> list[object]:
    """Every row of ``paths`` that decodes, decoded (the payloads an export redacts)."""
    out: list[object] = []
    for p in paths:
        for line in p.read_bytes().splitlines():
            try:
                out.append(msgspec.json.decode(line))
            except msgspec.DecodeError:
                pass
    return out


def _strings(objs: list[object]) -> list[str]:
    out, todo = [], list(objs)
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            todo += v.values()
        elif isinstance(v, list):
            todo += v
    return out


def test_gate_bits_agree(logs):
    strings = _strings(_objects(logs + session_files()[::4])) + _random_strings(1, 20000) + HOSTILE_TEXTS
    seen = 0
    for s in strings:
        got = native.redact_gate(s)
        assert got == gate_bits(s), repr(s)
        seen |= got
    assert seen == ALL_GATES                        # (every gate passed on some string)
    assert sum(native.redact_gate(s) == 0 for s in strings) > len(strings) // 4


def test_a_string_no_gate_passes_is_left_alone():
    """0 gates: text() is the string and counts nothing (each rule's sub over the whole string, as reference)."""
    ref = Redactor()
    for s in _random_strings(2, 20000):
        want = s
        for rx, sub, _gate in ref._subs:
            want = rx.sub(sub, want)
        if gate_bits(s) == 0:
            assert want == s, repr(s)
    assert ref.counts


def test_rules_tried_where_they_can_match():
    """text() (the C gate's bits, then each rule where it can match) equals each rule's sub over the string."""
    ref, fast = Redactor(), Redactor()
    for s in _random_strings(3, 30000):
        want = s
        for rx, sub, _gate in ref._subs:
            want = rx.sub(sub, want)
        assert fast.text(s) == want, repr(s)
    assert fast.counts == ref.counts and fast.examples == ref.examples
    assert set(fast.counts) == {"private-key", "bearer-token", "api-key", "secret-assignment", "email", "home-path"}


def _python_obj(red: Redactor, o: object) -> object:
    return red._walk(o, 0)


def test_walk_in_c_is_the_python_walk(logs):
    objs = _objects(logs + session_files()[::3]) + [_random_strings(4, 50), {"a": _random_strings(5, 50)}]
    objs += [[1, 2.5, None, True, ("t", "/home/x/y")], {"k": {"m": [{"n": "token=abcdef /home/bob/z"}]}}]
    c, py = Redactor(), Redactor()
    changed = 0
    for o in objs:
        got, want = c.obj(o), _python_obj(py, o)
        assert got == want
        assert type(got) is type(want)
        changed += got is not o
    assert c.counts == py.counts and c.examples == py.examples
    assert 0 < changed < len(objs)
    # nothing masked: the object itself; a container that holds no masked string: as it is
    plain = {"a": ["x", 1], "b": {"c": "y"}}
    assert c.obj(plain) is plain
    mixed = {"a": ["x", 1], "b": "token=abcdef12"}
    got = c.obj(mixed)
    assert got is not mixed and got["a"] is mixed["a"] and got["b"] == "token=[REDACTED:secret]"
    assert mixed["b"] == "token=abcdef12"                   # (never changed in place)


class _Str(str):
    pass


def test_walk_leaves_deep_and_odd_values_to_python():
    deep: object = "/home/alice/x"
    for _ in range(redact._DEEP + 5):
        deep = [deep]
    assert native.redact_walk(deep, Redactor()._text, redact._DEEP) is NotImplemented
    assert native.redact_walk({"x": [_Str("/home/a/b")]}, Redactor()._text, redact._DEEP) is NotImplemented
    for o in (deep, {"x": [_Str("/home/a/b")]}):
        c, py = Redactor(), Redactor()
        assert c.obj(o) == _python_obj(py, o) and c.counts == py.counts == {"home-path": 1}
    shallow = [[["/home/alice/x"]]]
    assert native.redact_walk(shallow, Redactor()._text, redact._DEEP) == [[["/home/[user]/x"]]]


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


def test_redacted_exports_are_the_python_ones(logs, tmp_path, monkeypatch):
    """Every redacted export (raw, logical, Markdown, HTML) and its report: the same bytes with the walk and
    the gates in C as with the Python definitions."""
    paths = logs + session_files()[::6]
    c = _digests(paths, tmp_path)
    monkeypatch.setattr(redact, "_native", None)
    monkeypatch.setattr(redact, "_common", None)
    assert _digests(paths, tmp_path) == c


def _reference_logical(r, red: Redactor) -> tuple[bytes, dict]:
    """The whole-log way: every event's envelope redacted (``Redactor.obj``), one line each."""
    lines = [red.row(r.source.header_raw)]
    lines += [msgspec.json.encode(red.obj(ev.envelope())) for ev in r.iter_events(logical=True)]
    return b"\n".join(lines) + b"\n", red.report()


def test_packed_tool_calls_with_secrets_in_id_or_name(tmp_path):
    """A packed tool-call row whose id or name holds a secret is redacted member by member (each member's
    secrets counted); one whose id and name mask nothing has its arguments redacted in one walk: both are the
    whole-log way's bytes and report."""
    src = tmp_path / "plain.jsonl"
    write_jsonl(str(src), SessionSynth(8), target_bytes=250_000)
    data = src.read_bytes()
    n = data.count(b'"id":"call_0')
    assert n > 20
    rng = random.Random(3)
    parts = data.split(b'"id":"call_0')
    swaps = [b'"id":"token=abcdef12/home/bob/x call_0', b'"id":"user@example.com call_0', b'"id":"call_0']
    data = b"".join(p + rng.choice(swaps) for p in parts[:-1]) + parts[-1]
    data = data.replace(b'"name":"bash"', b'"name":"ghp_abcdefghijklmnopqrstuvwxyz0123"')
    p = tmp_path / "secrets.jsonl"
    p.write_bytes(_planted(data, 4))
    out = tmp_path / "out.jsonl"
    res = export(open_reader(str(p)), "logical", str(out), redact=True)
    want, report = _reference_logical(open_reader(str(p)), Redactor())
    assert out.read_bytes() == want
    assert res["redaction"] == report and report["counts"]["api-key"] > 10 and report["counts"]["email"] > 10

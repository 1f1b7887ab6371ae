"""rowscan_c's ``redact_common`` (``Redactor._text``'s two common rules, secret-assignment and home-path, in C)
held to its definition: on every string of the fixtures, of generated logs with secrets planted, of hostile logs,
and on random strings made of the rules' words, separators, quotes, backslashes, Unicode spaces and word
characters, ``Redactor._text`` gives the text, counts and examples of ``Redactor._text_exact`` (the patterns
where their gates pass) and of every rule's ``sub`` over the whole string (no gate at all)."""
from __future__ import annotations

import random

import pytest

from app.store import redact
from app.store.redact import Redactor
from app.tools.hostile import HOSTILE_TEXTS
from fixtures_util import session_files
from test_redact_c import PARTS, _objects, _strings, logs  # noqa: F401  (the module's fixture of logs)

native = redact._native
pytestmark = pytest.mark.skipif(redact._common is None, reason="the C scanner module is not built")

# what the two rules turn on: keywords in any case and their near misses, name and word characters on each side,
# separators, the value's stop characters, Unicode spaces, the drive and home forms, the marks redaction leaves
MORE = ["key", "KEY", "apikey", "API-KEY", "api__key", "access_key", "Access-Key", "accesskey", "client_secret",
        "clientsecret", "passw", "PassWord", "Passwd", "tok", "toKen", "auth", "AUTHOR", "oauth", "x.token", "é token",
        "_token", "9token", "-token", "token-", "token.x", "tokené", "\\\"", "\\", "\\'", "'", "\"", " = ", ":", "=",
        "\t", "\u2003", "\u3000", "\x1c", "\x85", "\xa0", "\u202f", "abcd", "ab", "abcdefgh", "x/y", "&", ",", ";",
        "}", "]", "[", "<", ">", "*", "?", "|", "/home/", "/home//", "/Users/", "C:\\Users\\", "C:\\\\Users\\\\",
        "c:\\Users\\\\", "Z:\\Users", "1:\\Users\\", "/home/[user]", "/home/[user]x", "[REDACTED:secret]",
        "[REDACTED:", "[user]", "bob", "é", "ß", "\u4e2d", "\U0001f600", "٣", "²", "_", ".", "-", " "]


def _random(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    parts = PARTS + MORE * 3
    return ["".join(rng.choice(parts) for _ in range(rng.randint(1, 24))) for _ in range(n)]


def _ungated(red: Redactor, s: str) -> str:
    for rx, sub, _gate in red._subs:
        s = rx.sub(sub, s)
    return s


def _held(strings: list[str], ungated: bool) -> tuple[int, int, dict[str, int]]:
    """Each string's _text (C where it can) against _text_exact, and (``ungated``) every rule's sub over it:
    (strings redacted in C, strings changed, counts)."""
    fast, exact, whole = Redactor(max_examples=10 ** 9), Redactor(max_examples=10 ** 9), Redactor(max_examples=10 ** 9)
    in_c = changed = 0
    for s in strings:
        bits = native.redact_gate(s) if s else 0
        want = _ungated(whole, s) if ungated else None
        if not bits:
            assert want in (None, s), repr(s)          # (no gate: no rule changes it)
            continue
        got = fast._text(s, bits)
        assert got == exact._text_exact(s, bits) and want in (None, got), repr(s)
        assert fast.counts == exact.counts and (not ungated or whole.counts == fast.counts), repr(s)
        in_c += redact._common(s, bits) is not None
        changed += got != s
    assert fast.examples == exact.examples and (not ungated or whole.examples == fast.examples)  # (every one, in order)
    return in_c, changed, fast.counts


def test_common_rules_are_the_patterns(logs):  # noqa: F811
    """The logs' strings held to _text_exact; random ones (short: the patterns over a whole string stay cheap) to
    the ungated patterns as well."""
    in_c, changed, counts = _held(_strings(_objects(logs + session_files()[::4])), False)
    assert in_c > 50 and changed > 200 and counts["home-path"] > 100, (in_c, changed, counts)
    in_c, changed, counts = _held(_random(7, 60000) + HOSTILE_TEXTS, True)
    assert in_c > 10000 and changed > 5000, (in_c, changed)
    assert counts["secret-assignment"] > 1000 and counts["home-path"] > 1000, counts


def test_common_leaves_other_rules_and_folded_letters_to_the_patterns():
    for s, bits in (("token=abcdef \u212a", 8), ("/home/bob/x \u0130", 32), ("a@b.co token=abcdef", 24),
                    ("Bearer abcdefgh12345678 /home/bob", 34), ("sk-abcdefghijklmnop1234 token=abcd", 12)):
        assert redact._common(s, bits) is None, s
    assert redact._common("token=abcdef /home/bob/x", 40) == ("token=[REDACTED:secret] /home/[user]/x",
                                                              [3, "abcdef", 5, "bob"])
    assert redact._common("token=/home/bob/x", 40) == ("token=[REDACTED:secret]", [3, "/home/bob/x"])
    s = "plain key: abc"
    assert redact._common(s, 8) == (s, [])

"""``verdict.row_types`` (no prepended-newline copy) equals the regex over ``b"\\n" + data`` it replaces."""
import pathlib
import random

import pytest

from app.log.index.verdict import _TYPE_AT_ROW, row_types

_FIX = pathlib.Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures"


def _exact(data: bytes) -> set[bytes]:
    return set(_TYPE_AT_ROW.findall(b"\n" + data))


def _logs() -> list[pathlib.Path]:
    return sorted(p for p in _FIX.rglob("*.jsonl") if p.is_file())


def test_fixture_logs_found():
    assert _logs(), "the shared fixtures hold JSONL logs"


@pytest.mark.parametrize("path", _logs(), ids=lambda p: str(p.relative_to(_FIX)))
def test_equal_on_fixture_logs_and_every_segment_cut(path):
    data = path.read_bytes()
    assert row_types(data) == _exact(data)
    rng = random.Random(len(data))
    for _ in range(20):                                # segments start at any byte, also mid-row
        a = rng.randrange(len(data) + 1)
        b = rng.randrange(a, len(data) + 1)
        assert row_types(data[a:b]) == _exact(data[a:b])


HOSTILE = [
    b"",
    b"\n",
    b'{"type":"user"}',
    b'{"type": "a\n{"type": "b"}\n',                  # a first type spanning a newline hides the next row's
    b'{"type": "a\n{"type": "b"\n{"type": "c"}',
    b'\n{"type":"x"}\r\n{"type":"y"}\r\n',            # CRLF
    b'{"type":"\x00"}\n\x00{"type":"z"}\n',          # NUL bytes
    b'{"type":"u"}\n{"type":"v',                      # torn last row
    b'{"type":"' + b"q" * 100000 + b'"}\n{"type":"r"}',  # a huge row
    b' {"type":"s"}\n{"type":"t"}',
    b'{"type": "", "x": 1}\n{"type":""}',
]


@pytest.mark.parametrize("data", HOSTILE)
def test_equal_on_hostile_bytes(data):
    assert row_types(data) == _exact(data)

"""The logical export a segment at a time (rowscan_c's ``logical_block``, export_rows._segment_chunks) held to the
row-by-row way (:meth:`export_rows._Lines.row`, every row) and to the Python definitions (no C at all, and every
rule's pattern tried on every string: no gate), plain and redacted, text, event count and report, on generated v0
and v4 logs of several segments with secrets planted, rows whose data does not check (in msgspec's form: the data
check after the block fails and its rows go the Python way), a log cut by a crash (the repair cut inside a
segment), a torn last row, hostile logs, mutants, a zstd log and the fixtures."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from app.log.format.model import PACKED_TAGS
from app.store import export_rows, redact
from app.store.faces import open_reader
from app.store.redact import ALL_GATES, Redactor
from app.tools.hostile import hostile_session, jsonl_mutants
from app.tools.synth import SessionSynth, batches, write_jsonl
from fixtures_util import session_files
from test_redact_quiet import NEXT, _planted

pytestmark = pytest.mark.skipif(getattr(export_rows._native, "logical_block", None) is None,
                                reason="the C scanner module is not built")


def _bad_data(data: bytes, seed: int) -> bytes:
    """Some rows' "turn" written as a string (still in msgspec's form: only the data check refuses them)."""
    rng = random.Random(seed)
    return re.sub(rb'"data":\{"turn":(\d+)', lambda m: b'"data":{"turn":"%s"' % m.group(1)
                  if rng.random() < 0.05 else m.group(0), data)


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> list[Path]:
    from app.log.source.zstdframes import encode_frame
    d = tmp_path_factory.mktemp("logical-block")
    out = []
    for version, seed, crash in ((0, 41, False), (4, 42, False), (0, 43, True)):
        p = d / f"plain-v{version}-{seed}.jsonl"
        write_jsonl(str(p), SessionSynth(seed, version=version), target_bytes=2_600_000, crash=crash)
        q = d / f"secrets-v{version}-{seed}.jsonl"
        q.write_bytes(_bad_data(_planted(p.read_bytes(), seed), seed))
        out += [p, q]
    torn = d / "torn.jsonl"
    torn.write_bytes(out[1].read_bytes()[:-40])
    h = d / "hostile.jsonl"
    h.write_bytes(hostile_session(out[1].read_bytes().splitlines(True)[:3000], 5))
    out += [torn, h]
    data = out[1].read_bytes()[:200_000]
    for k, (_name, b, _kept) in enumerate(jsonl_mutants(data[:data.rfind(b"\n") + 1], 9, 8)):
        m = d / f"mutant-{k}.jsonl"
        m.write_bytes(b)
        out.append(m)
    z = d / "session.jsonl.zstd"
    z.write_bytes(b"".join(encode_frame(b"".join(lines)) for lines in batches(SessionSynth(seed=44),
                                                                             target_bytes=400_000)))
    return out + [z] + session_files(NEXT) + session_files()[::5]


def _logical(p: Path, redacting: bool) -> tuple[bytes, int, object]:
    red = Redactor() if redacting else None
    n = [0]
    text = b"".join(export_rows.logical_jsonl(open_reader(str(p)), red, None, n))
    return text, n[0], red.report() if red else None


def _all(paths: list[Path]) -> dict[str, tuple[bytes, int, object]]:
    return {f"{p}|{red}": _logical(p, red) for p in paths for red in (False, True)}


def test_segments_are_the_rows(logs, monkeypatch):
    """The same text, events and report with logical_block as with every row the Python way (:meth:`_Lines.row`)."""
    failed = []
    check = export_rows._data_check

    def counted(raw):
        try:
            return check(raw)
        except Exception:
            failed.append(1)
            raise
    monkeypatch.setattr(export_rows, "_data_check", counted)
    fast = _all(logs)
    assert len(failed) > 20                      # (blocks whose data check failed: their rows the Python way)
    monkeypatch.setattr(export_rows._Lines, "block", lambda self, data, at, stop, nrows: (at, 0))
    assert _all(logs) == fast


def test_packed_tags_pass_no_gate():
    """logical_block's quiet check of a packed row reads its data's strings only: its type's value, one of these
    tags, passes no gate."""
    assert PACKED_TAGS and all(export_rows._native.redact_gate(tag) == 0 for tag in PACKED_TAGS)


def test_segments_are_the_python_definitions(logs, monkeypatch):
    """The same with no C at all and every rule tried on every string (gate_bits: every bit), so no gate, C
    or Python, ever left out a string a rule changes."""
    paths = logs[:2] + logs[6:9] + logs[-4:]
    fast = _all(paths)
    assert any(rep and rep["total"] > 100 for _text, _n, rep in fast.values())
    monkeypatch.setattr(export_rows, "_native", None)
    monkeypatch.setattr(redact, "_native", None)
    monkeypatch.setattr(redact, "_common", None)
    monkeypatch.setattr(redact, "gate_bits", lambda s: ALL_GATES)
    assert _all(paths) == fast

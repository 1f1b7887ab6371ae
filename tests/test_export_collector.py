"""Exports hold the cyclic collector off while they stream (issue 29: exports at disk speed; rows decoded by the
million, no cycles), and give it back however they end: written, or cancelled by their progress callback."""
from __future__ import annotations

import gc
import os

import pytest

from app.store.export import FORMATS, export
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl


class Cancelled(Exception):
    pass


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    p = tmp_path_factory.mktemp("export-gc") / "session.jsonl"
    write_jsonl(str(p), SessionSynth(5, version=4), target_bytes=300_000)
    return str(p)


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "raw"])
def test_collector_off_while_exporting_and_back_after(log, tmp_path, fmt):
    seen: list[bool] = []
    export(open_reader(log), fmt, str(tmp_path / f"out.{fmt}"), redact=True,
           progress=lambda done, total: seen.append(gc.isenabled()))
    assert seen and not any(seen) and gc.isenabled()

    def cancel(done, total):
        raise Cancelled
    out = tmp_path / f"cancelled.{fmt}"
    with pytest.raises(Cancelled):
        export(open_reader(log), fmt, str(out), progress=cancel)
    assert gc.isenabled() and not os.path.exists(out)

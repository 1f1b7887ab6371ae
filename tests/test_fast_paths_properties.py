"""The C-level fast paths of a full decode equal their plain forms (hypothesis).

* :func:`app.log.format.limits.nesting_depth` (strings cut out by one regex, the running depth summed
  with ``accumulate``) equals the token-by-token scan it replaced, on any bytes;
* :func:`app.log.format.versions.stream_summary` (a run's members counted, not built) equals the
  summary folded from :func:`app.log.format.versions.stream_chunks`, member by member;
* :meth:`app.log.fold.attempts.AttemptTracker.prune` (re-checks only what can have changed) keeps
  exactly what the full re-check keeps, on generated v0 and v4 logs with failed attempts.
"""
from __future__ import annotations

import functools
import re

from hypothesis import given, settings, strategies as st

from app.log.fold.attempts import AttemptTracker
from app.log.format.limits import nesting_depth
from app.log.index.reader import LogReader
from app.tools.synth import SessionSynth, write_jsonl
from app.log.format.versions import stream_chunks, stream_summary

_TOKENS = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]', re.S)


def depth_by_tokens(raw: bytes, stop: int) -> int:
    """The reference: walk every string and bracket token in order."""
    depth = worst = 0
    for m in _TOKENS.finditer(raw):
        c = raw[m.start()]
        if c in b"[{":
            depth += 1
            if depth > worst:
                worst = depth
                if worst > stop:
                    return worst
        elif c in b"]}":
            depth -= 1
    return worst


@settings(max_examples=400, deadline=None)
@given(raw=st.binary(max_size=40) | st.lists(st.sampled_from([b"[", b"]", b"{", b"}", b'"', b"\\", b"a", b",", b":",
                                                              b'"x[{"', b'\\"', b"\\\\"]), max_size=300).map(b"".join),
       stop=st.integers(0, 12))
def test_nesting_depth_equals_the_token_scan(raw, stop):
    want = depth_by_tokens(raw, stop)
    # (the cheap exit: few brackets in all, strings included, cannot nest deeper than stop)
    assert nesting_depth(raw, stop) == (0 if raw.count(b"[") + raw.count(b"{") <= stop else want)


def test_nesting_depth_of_real_shapes():
    deep = b"[" * 300 + b"]" * 300
    assert nesting_depth(deep) == 257                        # stops counting at stop + 1
    assert nesting_depth(b'{"a":"' + b"[" * 400 + b'"}') == 1    # brackets in a string do not count
    wide = b"[" + b",".join([b'{"k":[1,2]}'] * 200) + b"]"
    assert nesting_depth(wide) == 3


def summary_by_chunks(stream) -> dict:
    """The reference: fold every (time, chunk) the stream expands to."""
    chunks, finish, usage, text, t0, t1 = 0, None, None, [], None, None
    for t, c in stream_chunks(stream):
        chunks += 1
        t0 = t if t0 is None else t0
        t1 = t
        if c.get("type") == "finish":
            r = c.get("reason")
            finish = r if isinstance(r, dict) else {"kind": str(r)}
        elif c.get("type") == "usage":
            usage = c.get("usage")
        elif c.get("type") in ("text-delta", "reasoning-delta"):
            text.append(str(c.get("text", "")))
    return {"chunks": chunks, "finish": finish, "usage": usage, "text": text, "time0": t0, "time1": t1}


_num = st.one_of(st.integers(-5, 50), st.booleans(), st.none(), st.text(max_size=2))
_run = st.fixed_dictionaries(
    {"type": st.sampled_from(["text-chunks", "reasoning-chunks", "tool-call-chunks", "other-chunks"])},
    optional={"time0": _num, "index": st.integers(0, 3), "dt": st.one_of(st.lists(_num, max_size=6), _num),
              "texts": st.one_of(st.lists(st.text(max_size=3) | st.integers(), max_size=6), _num),
              "args": st.one_of(st.lists(st.text(max_size=3), max_size=6), _num),
              "id": st.text(max_size=3), "name": st.text(max_size=3)})
_chunk = st.fixed_dictionaries(
    {"type": st.just("chunk")},
    optional={"time": _num, "chunk": st.one_of(_num, st.fixed_dictionaries(
        {"type": st.sampled_from(["finish", "usage", "text-delta", "reasoning-delta", "block-start"])},
        optional={"reason": st.one_of(_num, st.fixed_dictionaries({"kind": st.text(max_size=3)})),
                  "usage": _num, "text": st.text(max_size=3)}))})


@settings(max_examples=400, deadline=None)
@given(stream=st.one_of(_num, st.lists(st.one_of(_run, _chunk, _num), max_size=8)))
def test_stream_summary_equals_the_member_by_member_fold(stream):
    assert stream_summary(stream) == summary_by_chunks(stream)


class _FullPrune(AttemptTracker):
    """The reference: every kept attempt and ``_last`` entry re-checked at every prune."""

    def prune(self) -> None:
        keep = [a for a in self.attempts if a.failed or (a.turn, a.step) in self.open_attempts]
        self.pruned += len(self.attempts) - len(keep)
        self.attempts = keep
        self._last = {k: a for k, a in self._last.items() if k in self.open_attempts or a.failed}


@functools.cache
def _events(version: int, seed: int) -> tuple:
    import os
    import tempfile
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    os.close(fd)
    try:
        write_jsonl(path, SessionSynth(seed=seed, version=version), target_bytes=400_000)
        return tuple(LogReader.open(path).iter_events())
    finally:
        os.unlink(path)


@settings(max_examples=30, deadline=None)
@given(version=st.sampled_from([0, 4]), seed=st.integers(0, 2), extra=st.sets(st.integers(0, 5000), max_size=40))
def test_incremental_prune_equals_the_full_one(version, seed, extra):
    """At every turn end (as inspect prunes) and at arbitrary events (attempts still open)."""
    fast, ref = AttemptTracker(keep_text=False), _FullPrune(keep_text=False)
    failed = 0
    for i, ev in enumerate(_events(version, seed)):
        for tr in (fast, ref):
            tr.apply(ev)
            if ev.type == "turn/end" or i in extra:
                tr.prune()
        assert fast.count == ref.count
        if ev.type == "turn/end":
            assert [a.to_dict() for a in fast.attempts] == [a.to_dict() for a in ref.attempts]
            assert {k: a.to_dict() for k, a in fast._last.items()} == {k: a.to_dict() for k, a in ref._last.items()}
            failed = len(ref.failed)
    assert failed > 0                                    # (the generated logs hold failed attempts)

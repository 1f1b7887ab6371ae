"""Deterministic generator of realistic dsh session logs (spec §1.4, §2, §4, §5, §6).

Pure Python, no Qt.  Used by benchmarks, tests, the demo store and the live simulator.

    synth = SessionSynth(seed=7)
    synth.header()                 # the {"type":"session",…} header line object
    for turn in synth.turns(3):    # lists of logical SessionEvent dicts, seq contiguous from 0
        ...
    write_jsonl("bench/data/s.jsonl", SessionSynth(7), target_bytes=100 << 20)
    for lines in batches(SessionSynth(7), turns=5):   # write-behind batches of row bytes
        f.write(b"".join(lines))

Event shapes mirror the dsh fixtures (``fixtures/dsh/examples/*/tests/snapshots``): inbox
splices around ``turn/start``, the prompt + runtime-context ``user/message``s, a fallback
``session/title``, ``request/header`` (initial / change / resume) + ``request/context``,
deepseek-style streams (``block-start`` per block, many small deltas, all ``block-end``s, a
``usage`` chunk, a ``finish`` chunk), ``assistant/message`` citing exactly its attempt's chunk
seqs, ``tool/call``s then ``tool/result``s citing their call seq, ``todo/write`` between a
``todo_write`` call and its result, failed attempts (``finish`` error) followed by
``llm/retry`` + ``llm/retry-started`` and a winning attempt in the same step, cancelled turns
(``interrupted:true`` message, ``turn/end`` aborted/user), context-overflow recovery by
compaction (``CONTEXT_WINDOW_EXCEEDED`` finish, ``compaction/*``, a replacing ``user/message``),
unretried provider errors, max-tokens stops.

Speed: the stream is built from precomputed text pools, and delta runs are kept as compact
:class:`DeltaRun` items; the writer packs them straight into packed rows, byte-identical to
``app.log.format.codec.pack_events`` over the expanded events of each batch (the test suite checks
this), so generation runs at tens of MB/s.
"""
from __future__ import annotations

import bisect
import os
import random
from itertools import accumulate
from typing import Any, Optional
from collections.abc import Iterator

import msgspec

from .synth_base import MIX_FIELDS, RETRYABLE, Mix
from .synth_calls import SynthCalls
from .synth_items import DeltaRun, Item, expand_items, pack_items, cut_items, item_len
from .synth_text import TextPools, new_uuid
from .synth_v4 import V4Writer

_enc = msgspec.json.Encoder()
_encode = _enc.encode


# =========================================================================== generator

class SessionSynth(SynthCalls):
    """A deterministic dsh session: same seed and options -> the same events, byte for byte."""

    def __init__(self, seed: int = 0, session_id: Optional[str] = None, cwd: Optional[str] = "/home/dev/project",
                 created_at: Optional[int] = None, *, parent_session: Optional[str] = None,
                 seed_length: Optional[int] = None, origin: Optional[str] = None, delegation_depth: int = 0,
                 agent_preset: Optional[str] = None, provider: str = "deepseek-official",
                 model: str = "deepseek-v4-flash", mix: Optional[Mix] = None, version: int = 0, **kw):
        bad = set(kw) - MIX_FIELDS
        if bad:
            raise TypeError(f"unknown SessionSynth options: {sorted(bad)}")
        self.mix = Mix(**{**(mix.__dict__ if mix else {}), **kw})
        self.seed = seed
        self._rng = rng = random.Random(seed)
        self._p = TextPools.get()
        self.session_id = session_id or new_uuid(rng)
        self.cwd = cwd
        self.created_at = created_at if created_at is not None else 1_785_000_000_000 + rng.randrange(86_400_000 * 30)
        self.parent_session = parent_session
        self.seed_length = seed_length
        self.origin = origin
        self.delegation_depth = delegation_depth
        self.agent_preset = agent_preset
        self.provider = provider
        self.model = model
        self.reasoning_effort: Optional[str] = None
        self._seq = 0
        self._t = self.created_at + rng.randint(5, 900)
        self._turn = 0
        self._nodes: list[int] = []         # model-surface nodes (seqs)
        self._turn_node0 = 0                # index in _nodes of the current turn's first node
        self._ctx = 0                       # tokens of the surface
        self._turn_ctx = 0                  # tokens added by the current turn
        self._last_prompt = 0
        self._header_sent = False
        self._prompt_seq: Optional[int] = None
        self._first_msg_seq: Optional[int] = None
        self._todos: list[dict] = []
        self._dt = self._p.dt_skew if self.mix.time_skew else self._p.dt
        tw = self.mix.tool_weights
        self._tool_names = [k for k, v in tw.items() if v > 0]
        self._tool_cum = list(accumulate(tw[k] for k in self._tool_names))
        self._system = self._mk_system()
        self._tools = self._mk_tools()
        if version not in (0, 4):
            raise ValueError(f"SessionSynth writes format v0 or v4, not v{version}")
        self.version = version
        self._v4 = V4Writer(self) if version == 4 else None

    # ------------------------------------------------------------------ public API
    def header(self) -> dict:
        if self.version == 4:
            h = {"type": "session", "version": 4, "id": self.session_id, "createdAt": self.created_at}
            if self.cwd is not None:
                h["cwd"] = self.cwd
            if self.parent_session is not None:
                h["parentSession"] = self.parent_session
            h["isSeeded"] = False
            if self.origin is not None:
                h["origin"] = self.origin
            h["delegationDepth"] = self.delegation_depth
            if self.agent_preset is not None:
                h["agentPreset"] = self.agent_preset
            return h
        h = {"type": "session", "version": 0, "id": self.session_id, "createdAt": self.created_at}
        if self.cwd is not None:
            h["cwd"] = self.cwd
        if self.parent_session is not None:
            h["parentSession"] = self.parent_session
        if self.seed_length is not None:
            h["seedLength"] = self.seed_length
        if self.origin is not None:
            h["origin"] = self.origin
        h["delegationDepth"] = self.delegation_depth
        if self.agent_preset is not None:
            h["agentPreset"] = self.agent_preset
        return h

    def header_line(self) -> bytes:
        return _encode(self.header()) + b"\n"

    @property
    def next_seq(self) -> int:
        return self._v4.seq if self._v4 is not None else self._seq

    @property
    def turn(self) -> int:
        """Turns generated so far."""
        return self._turn

    @property
    def system_prompt(self) -> str:
        return self._system

    def turn_items(self) -> list:
        """The next turn as items (event dicts and :class:`DeltaRun`s), continuing the log
        (format v4: event dicts only, chunks embedded in their settlements)."""
        if self._v4 is not None:
            return self._v4.convert(expand_items(self._gen_turn()))
        return self._gen_turn()

    def turns(self, n: Optional[int] = None) -> Iterator[list[dict]]:
        """The next n turns (None: without end), each a list of logical event dicts.

        A turn's list starts with the inbox splice that queues its prompt and ends with its
        ``turn/end`` (turn 1 may end with a provider ``session/title``, others with a user
        rename): concatenated, the lists are the log, seq contiguous from the current seq."""
        i = 0
        while n is None or i < n:
            yield expand_items(self.turn_items())
            i += 1

    def events(self, turns: Optional[int] = None) -> Iterator[dict]:
        for t in self.turns(turns):
            yield from t


    # ------------------------------------------------------------------ a turn
    def _gen_turn(self) -> list:
        items: list = []
        turn, prompt = self._open_turn(items)
        nsteps, end_kind, special_step, header_reason = self._plan_turn()
        turn_reason: dict[str, Any] = {"kind": "completed"}
        for step in range(1, nsteps + 1):
            self._open_step(items, turn, step, prompt, header_reason)
            reason, stop = self._step(items, turn, step, step == nsteps, step == special_step, end_kind)
            if reason is not None:
                turn_reason = reason
            if stop:
                break
        items.append(self._ev("turn/end", {"turn": turn, "reason": turn_reason}))
        self._between_turns(items, turn)
        return items

    def _open_turn(self, items: list) -> tuple[int, dict[str, Any]]:
        """The user's time to think, the prompt's inbox splices and ``turn/start``: -> (turn, prompt)."""
        rng = self._rng
        m = self.mix
        self._turn += 1
        turn = self._turn
        if turn > 1:
            lo, hi = m.think_ms
            self._t += int(lo * (hi / lo) ** rng.random()) if lo > 0 else rng.randint(0, hi)
        prompt: dict[str, Any] = {"content": [{"type": "text", "text": self._prompt_text()}],
                                  "source": {"kind": "user"}, "role": "user", "id": new_uuid(rng)}
        items.append(self._ev("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [prompt]}))
        self._t += rng.randint(1, 40)
        items.append(self._ev("turn/start", {"turn": turn}))
        items.append(self._ev("agent/inbox/spliced", {"target": "next-turn", "start": 0, "removedCount": 1,
                                                      "inserted": []}))
        self._turn_node0 = len(self._nodes)
        self._turn_ctx = 0
        return turn, prompt

    def _plan_turn(self) -> tuple[int, str, Optional[int], Optional[str]]:
        """-> (steps, how the turn ends, the step where it ends specially, the request header's reason)."""
        rng = self._rng
        m = self.mix
        n_tool_steps = 0
        if rng.random() >= m.p_no_tools:
            n_tool_steps = 1
            while n_tool_steps < m.max_steps - 1 and rng.random() < m.p_more_steps:
                n_tool_steps += 1
        nsteps = n_tool_steps + 1
        end_kind = "completed"
        special_step = None
        r = rng.random()
        if r < m.p_abort:
            end_kind, special_step = "aborted", rng.randint(1, nsteps)
        elif r < m.p_abort + m.p_turn_error:
            end_kind, special_step = "error", rng.randint(1, nsteps)
        elif r < m.p_abort + m.p_turn_error + m.p_max_tokens:
            end_kind, special_step = "max-tokens", nsteps
        if special_step is not None:
            nsteps = special_step
        header_reason = None
        if not self._header_sent:
            header_reason = "initial"
        elif rng.random() < m.p_header_change:
            header_reason = "change"
            if rng.random() < 0.5:
                self.model = "deepseek-v4-pro" if self.model != "deepseek-v4-pro" else "deepseek-v4-flash"
            else:
                self.reasoning_effort = rng.choice([None, "low", "medium", "high"])
        elif rng.random() < m.p_resume:
            header_reason = "resume"
        return nsteps, end_kind, special_step, header_reason

    def _open_step(self, items: list, turn: int, step: int, prompt: dict, header_reason: Optional[str]) -> None:
        """``step/start``; on step 1 the prompt (turn 1: runtime context, fallback title) and the request header."""
        rng = self._rng
        self._t += rng.randint(2, 12)
        if self.mix.time_skew and rng.random() < 0.01:
            self._t -= rng.randint(1, 200)          # clock stepped back (times are not monotonic)
        items.append(self._ev("step/start", {"turn": turn, "step": step}))
        if step != 1:
            return
        self._prompt_seq = self._seq
        items.append(self._surface("user/message", prompt))
        self._add_ctx(len(prompt["content"][0]["text"]) // 4 + 4)
        if turn == 1:
            items.append(self._surface("user/message", self._runtime_context()))
            self._add_ctx(120)
            title = " ".join(prompt["content"][0]["text"].split()[:5])
            items.append(self._ev("session/title", {"title": title, "messageSeqs": [self._prompt_seq],
                                                    "source": {"kind": "fallback"}}))
        if header_reason:
            self._t += 1
            self._header_events(items, header_reason)
            self._header_sent = True
            self._last_prompt = 0

    def _step(self, items: list, turn: int, step: int, last: bool, special: bool,
              end_kind: str) -> tuple[Optional[dict[str, Any]], bool]:
        """One step after its ``step/start``: -> (the turn's end reason if this step sets it, the turn stops)."""
        rng = self._rng
        m = self.mix
        # overflow -> compaction recovery (same step, no llm/retry)
        if m.compaction and self._prompt_tokens() > m.context_window:
            self._compaction(items, turn, step)

        # unretried provider error ends the turn
        if special and end_kind == "error":
            failure = self._turn_error(items, turn, step)
            items.append(self._ev("step/end", {"turn": turn, "step": step}))
            return {"kind": "error", "error": failure}, True

        # failed attempts, each followed by llm/retry + llm/retry-started
        if rng.random() < m.p_retry:
            retry = 1
            while True:
                failure = self._failed_attempt(items, turn, step, rng.choice(RETRYABLE))
                self._retry_events(items, turn, step, retry, failure)
                if retry >= 4 or rng.random() >= m.p_retry_again:
                    break
                retry += 1

        # the winning (or cancelled) attempt
        self._t += rng.randint(250, 2500)             # time to first token
        blocks, calls = self._plan_blocks(last)
        first = self._seq
        att, content, out_tokens = self._stream(turn, step, blocks)
        reasoning_tokens = len(blocks[0][1]) if blocks[0][0] == "reasoning" else 0

        if special and end_kind == "aborted":
            self._abort(items, att, first, turn, step, content)
            items.append(self._ev("step/end", {"turn": turn, "step": step}))
            return {"kind": "aborted", "reason": {"kind": "user"}}, True

        items.extend(att)
        fin = "tool-calls" if calls else ("max-tokens" if special and end_kind == "max-tokens" else "stop")
        self._settle(items, turn, step, first, content, out_tokens, reasoning_tokens, fin)
        if calls:
            self._tool_results(items, turn, step, calls)
        items.append(self._ev("step/end", {"turn": turn, "step": step}))
        return ({"kind": "max-tokens"} if fin == "max-tokens" else None), False

    def _turn_error(self, items: list, turn: int, step: int) -> dict:
        """The failed attempts of an unretried provider error (or of retries exhausted): -> the last failure."""
        rng = self._rng
        if rng.random() < 0.6:                  # not retryable
            return self._failed_attempt(items, turn, step, "AUTH")
        code = rng.choice(["SERVER", "RATE_LIMIT"])   # retryable, but maxRetries (5) exhausted
        for retry in range(1, 6):
            self._retry_events(items, turn, step, retry, self._failed_attempt(items, turn, step, code))
        return self._failed_attempt(items, turn, step, code)

    def _plan_blocks(self, last: bool) -> tuple[list[tuple[str, Any]], list[dict]]:
        """The blocks of a step's winning attempt and its planned tool calls (none on the last step)."""
        rng = self._rng
        m = self.mix
        blocks: list[tuple[str, Any]] = []
        if rng.random() < m.p_reasoning:
            blocks.append(("reasoning", self._tokens(self._lognorm(m.reasoning_tokens))))
        calls = []
        if not last:
            if rng.random() < m.p_text_with_tools:
                blocks.append(("text", self._tokens(self._lognorm(m.text_tokens / 3))))
            k = rng.randint(2, m.max_parallel) if rng.random() < m.p_parallel else 1
            calls = [self._plan_call(i) for i in range(k)]
            blocks.extend(("tool-call", c) for c in calls)
        else:
            blocks.append(("text", self._plan_text(m.text_tokens, rng.random() < m.p_code_block)))
        return blocks, calls

    def _settle(self, items: list, turn: int, step: int, first: int, content: list, out_tokens: int,
                reasoning_tokens: int, fin: str) -> None:
        """The attempt's ``usage`` and ``finish`` chunks and the ``assistant/message`` citing its chunks."""
        rng = self._rng
        self._t += rng.randint(0, 40)
        usage = self._usage(out_tokens, reasoning_tokens)
        items.append(self._chunk(turn, step, {"type": "usage", "usage": usage}))
        self._t += rng.randint(0, 5)
        items.append(self._chunk(turn, step, {"type": "finish", "reason": {"kind": fin}}))
        msg_seq = self._seq
        items.append(self._surface("assistant/message", {
            "turn": turn, "step": step,
            "message": {"role": "assistant", "content": content,
                        "source": {"kind": "model", "provider": self.provider, "model": self.model},
                        "id": new_uuid(rng)},
            "usage": usage}, list(range(first, msg_seq))))
        if self._first_msg_seq is None:
            self._first_msg_seq = msg_seq
        self._add_ctx(out_tokens)

    def _between_turns(self, items: list, turn: int) -> None:
        """Between-turn records: the provider's title after turn 1, now and then a user rename."""
        rng = self._rng
        m = self.mix
        if turn == 1 and rng.random() < m.p_provider_title and self._first_msg_seq is not None:
            self._t += rng.randint(300, 3000)
            items.append(self._ev("session/title", {
                "title": self._words(rng.randint(2, 6)).title(),
                "messageSeqs": [self._prompt_seq, self._first_msg_seq],
                "source": {"kind": "provider", "provider": self.provider, "model": self.model}}))
        elif turn > 1 and rng.random() < m.p_user_title:
            self._t += rng.randint(1000, 20000)
            items.append(self._ev("session/title", {"title": self._words(rng.randint(2, 5)).capitalize(),
                                                    "messageSeqs": [], "source": {"kind": "user"}}))


# =========================================================================== crash tails

def open_turn(events: list) -> Optional[int]:
    """The number of the turn left open at the end of ``events`` (None if balanced)."""
    open_ = None
    for e in events:
        t = e["type"]
        if t == "turn/start":
            open_ = e["data"]["turn"]
        elif t == "turn/end":
            open_ = None
    return open_


def crash_after(events: list, k: int) -> list:
    """The log a crash after the first k events leaves: ``events[:k]``, moved so that it ends inside a turn.

    If ``events[:k]`` ends with no turn open (at or after a ``turn/end``), the cut moves back to just
    before the last ``turn/end``; if no turn has started by k, it moves forward to just after the first
    ``turn/start``.  The result always has an open turn (ValueError if ``events`` holds no turn)."""
    k = max(0, min(k, len(events)))
    prefix = events[:k]
    if open_turn(prefix) is not None:
        return prefix
    for i in range(k - 1, -1, -1):
        if events[i]["type"] == "turn/end":
            return events[:i]
        if events[i]["type"] == "turn/start":      # pragma: no cover - open_turn would be set
            return events[:i + 1]
    for i in range(k, len(events)):
        if events[i]["type"] == "turn/start":
            return events[:i + 1]
    raise ValueError("no turn to leave open")


# =========================================================================== batches / writer

def parse_size(s) -> Optional[int]:
    """'10MB' / '1GB' / '512KB' / 123 -> bytes."""
    if s is None or isinstance(s, int):
        return s
    s = str(s).strip().upper().replace("IB", "B")
    for u, mul in (("KB", 1 << 10), ("MB", 1 << 20), ("GB", 1 << 30), ("B", 1)):
        if s.endswith(u):
            return int(float(s[:-len(u)]) * mul)
    return int(s)


class _Budget:
    def __init__(self, target_bytes, turns):
        self.target = parse_size(target_bytes)
        self.turns = turns if (turns is not None or self.target is not None) else 20
        self.bytes = 0
        self.events = 0
        self.rows = 0
        self.turns_done = 0
        self.last_seq = -1

    def more(self, crash=False) -> bool:
        if self.turns is not None and self.turns_done >= self.turns - (1 if crash else 0):
            return False
        return self.target is None or self.bytes < self.target


def _item_stream(synth: SessionSynth, budget: _Budget, crash, crash_rng: random.Random) -> Iterator[Item]:
    while budget.more(bool(crash)):
        items = synth.turn_items()
        budget.turns_done += 1
        yield from items
    if crash:
        items = synth.turn_items()
        n = sum(item_len(it) for it in items)
        k = crash_rng.randint(3, max(3, n - 2))       # >= turn/start, < turn/end
        budget.turns_done += 1
        yield from cut_items(items, k)


def _batch_items(stream: Iterator[Item], rng: random.Random, batch_events, batch_ms) -> Iterator[list]:
    """Group the item stream into write batches (by event count, or by a write-behind time window)."""
    if batch_ms is not None:
        batch: list = []
        deadline = None
        for it in stream:
            if type(it) is DeltaRun:
                while True:
                    if deadline is None:
                        deadline = it.ts[0] + batch_ms
                    j = bisect.bisect_right(it.ts, deadline) if it.ts[-1] > deadline else len(it.ts)
                    if j >= len(it.ts):
                        batch.append(it)
                        break
                    if j:
                        head, it = it.split(j)
                        batch.append(head)
                    yield batch
                    batch, deadline = [], None
            else:
                if deadline is not None and it["time"] > deadline and batch:
                    yield batch
                    batch, deadline = [], None
                if deadline is None:
                    deadline = it["time"] + batch_ms
                batch.append(it)
        if batch:
            yield batch
        return
    if batch_events is None:
        lo = hi = 1 << 62
    elif isinstance(batch_events, int):
        lo = hi = batch_events
    else:
        lo, hi = batch_events
    lo = max(1, lo)
    rem = rng.randint(lo, hi)
    batch = []
    for it in stream:
        while True:
            ln = item_len(it)
            if ln <= rem:
                batch.append(it)
                rem -= ln
                if rem == 0:
                    yield batch
                    batch, rem = [], rng.randint(lo, hi)
                break
            assert type(it) is DeltaRun       # a single event always fits (rem >= 1)
            head, it = it.split(rem)
            batch.append(head)
            yield batch
            batch, rem = [], rng.randint(lo, hi)
    if batch:
        yield batch


def _gen_batches(synth: SessionSynth, budget: _Budget, batch_events, pack: bool, crash, batch_ms):
    rng = random.Random(f"batches:{synth.seed}")
    for batch in _batch_items(_item_stream(synth, budget, crash, rng), rng, batch_events, batch_ms):
        rows = pack_items(batch) if pack else expand_items(batch)
        lines = [_encode(r) + b"\n" for r in rows]
        budget.rows += len(lines)
        budget.bytes += sum(map(len, lines))
        budget.events += sum(item_len(it) for it in batch)
        last = batch[-1]
        budget.last_seq = last.seq0 + len(last.texts) - 1 if type(last) is DeltaRun else last["seq"]
        yield lines
    if crash == "torn":
        # a torn final row: the start of the next row, without its newline
        more = synth.turn_items()
        first = pack_items(more[:1])[0]
        raw = _encode(first)
        torn = raw[:max(1, len(raw) // 2)]
        budget.bytes += len(torn)
        yield [torn]


def batches(synth: SessionSynth, target_bytes=None, turns: Optional[int] = None, batch_events=(1, 64),
            pack: bool = True, crash=False, header: bool = True, batch_ms: Optional[int] = None,
            stats: Optional[dict] = None) -> Iterator[list]:
    """Write batches for a live writer: lists of storage-row lines (bytes, each ending ``\\n``).

    The first batch is the header line alone (a zstd writer makes it frame 1).  Each later batch is
    one write-behind batch: ``batch_events`` = (lo, hi) events per batch drawn uniformly (an int:
    fixed; None: one single batch), or ``batch_ms`` = a write-behind window over event times (a batch
    holds the events within ``batch_ms`` of its first one, like dsh's 200 ms timer).
    Delta runs are packed per batch (``pack``).  Stops after the turn that reaches ``target_bytes``
    or after ``turns`` turns (neither: 20 turns).  ``crash=True`` then appends a cut-off turn
    (open tail); ``crash="torn"`` also a half-written row without newline.  ``stats`` (a dict)
    is updated with bytes/events/rows/turns/lastSeq when the generator finishes."""
    budget = _Budget(target_bytes, turns)
    if header:
        h = synth.header_line()
        budget.bytes += len(h)
        yield [h]
    yield from _gen_batches(synth, budget, batch_events, pack, crash, batch_ms)
    if stats is not None:
        stats.update(_stats(budget))


def _stats(b: _Budget) -> dict:
    return {"bytes": b.bytes, "events": b.events, "rows": b.rows, "turns": b.turns_done, "lastSeq": b.last_seq}


def write_jsonl(path: str, synth: SessionSynth, target_bytes=None, turns: Optional[int] = None,
                batch_events=(1, 64), pack: bool = True, crash=False, batch_ms: Optional[int] = None) -> dict:
    """Write a raw ``session.jsonl`` (header + rows), streaming with bounded memory.

    -> {"bytes", "events", "rows" (storage rows after the header), "turns", "lastSeq"}."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    budget = _Budget(target_bytes, turns)
    with open(path, "wb", buffering=0) as f:
        h = synth.header_line()
        f.write(h)
        budget.bytes += len(h)
        buf: list = []
        size = 0
        for lines in _gen_batches(synth, budget, batch_events, pack, crash, batch_ms):
            buf.extend(lines)
            size += sum(map(len, lines))
            if len(buf) > 4096 or size >= 1 << 22:
                f.write(b"".join(buf))
                buf, size = [], 0
        if buf:
            f.write(b"".join(buf))
    return _stats(budget)

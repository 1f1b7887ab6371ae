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
import json
import os
import random
from dataclasses import dataclass, field, fields
from itertools import accumulate
from typing import Any, Optional, Union, final
from collections.abc import Iterable, Iterator

import msgspec

_enc = msgspec.json.Encoder()
_encode = _enc.encode

MAX_RUN = 1024          # pack_events max_run (dsh: 3..1024 members per packed row)
MIN_RUN = 3

_TAG_OF = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks",
           "tool-call-delta": "tool-call-chunks"}
RETRYABLE = ("EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT")
POLICY_KEY = '["normal",5,["EMPTY_RESPONSE","RATE_LIMIT","SERVER","TIMEOUT","TRANSPORT"],500,10000,0.1]'
PLUGIN_SYSTEM_PROMPT = "@deepseek-ai/dsh-system-prompt"


# =========================================================================== delta runs

@final                                # (so `type(it) is DeltaRun` narrows an Item both ways)
class DeltaRun:
    """A run of consecutive exactly-shaped delta chunks of one block (one packable run).

    Member k is ``{"type":"assistant/chunk","seq":seq0+k,"time":ts[k],"data":{"turn","step",
    "chunk":{"type":kind,"index",("id","name")?,"text"|"argumentsDelta"}}}``.
    """
    __slots__ = ("kind", "turn", "step", "index", "cid", "name", "seq0", "ts", "texts")

    def __init__(self, kind, turn, step, index, seq0, ts, texts, cid=None, name=None):
        self.kind = kind
        self.turn = turn
        self.step = step
        self.index = index
        self.cid = cid
        self.name = name
        self.seq0 = seq0
        self.ts = ts
        self.texts = texts

    def __len__(self):
        return len(self.texts)

    def _with(self, seq0, ts, texts) -> DeltaRun:
        return DeltaRun(self.kind, self.turn, self.step, self.index, seq0, ts, texts, self.cid, self.name)

    def split(self, k: int) -> tuple[DeltaRun, DeltaRun]:
        return (self._with(self.seq0, self.ts[:k], self.texts[:k]),
                self._with(self.seq0 + k, self.ts[k:], self.texts[k:]))

    def events(self) -> list[dict]:
        turn, step, index, kind = self.turn, self.step, self.index, self.kind
        seq = self.seq0
        out = []
        if kind == "tool-call-delta":
            cid, name = self.cid, self.name
            for t, x in zip(self.ts, self.texts):
                if name is None:
                    chunk = {"type": kind, "index": index, "id": cid, "argumentsDelta": x}
                else:
                    chunk = {"type": kind, "index": index, "id": cid, "name": name, "argumentsDelta": x}
                out.append({"type": "assistant/chunk", "seq": seq, "time": t,
                            "data": {"turn": turn, "step": step, "chunk": chunk}})
                seq += 1
        else:
            for t, x in zip(self.ts, self.texts):
                out.append({"type": "assistant/chunk", "seq": seq, "time": t,
                            "data": {"turn": turn, "step": step,
                                     "chunk": {"type": kind, "index": index, "text": x}}})
                seq += 1
        return out

    def packed_rows(self) -> list[dict]:
        """Storage rows of this run within one batch, exactly as ``pack_events`` writes them."""
        n = len(self.texts)
        if n < MIN_RUN:
            return self.events()
        out = []
        for i in range(0, n, MAX_RUN):
            ts = self.ts[i:i + MAX_RUN]
            texts = self.texts[i:i + MAX_RUN]
            if len(texts) < MIN_RUN:
                out.extend(self._with(self.seq0 + i, ts, texts).events())
                continue
            t0 = ts[0]
            dt = [b - a for a, b in zip(ts, ts[1:])]
            data = {"turn": self.turn, "step": self.step, "index": self.index, "dt": dt}
            if self.kind == "tool-call-delta":
                data["id"] = self.cid
                if self.name is not None:
                    data["name"] = self.name
                data["args"] = texts
            else:
                data["texts"] = texts
            out.append({"type": _TAG_OF[self.kind], "seq0": self.seq0 + i, "time0": t0, "data": data})
        return out


Item = Union[dict, DeltaRun]


def item_len(it: Item) -> int:
    return len(it.texts) if type(it) is DeltaRun else 1


def expand_items(items: Iterable[Item]) -> list[dict]:
    """Logical events of an item list (DeltaRuns expanded)."""
    out: list[dict] = []
    for it in items:
        if type(it) is DeltaRun:
            out.extend(it.events())
        else:
            out.append(it)
    return out


def pack_items(items: Iterable[Item]) -> list[dict]:
    """Storage rows of one write batch: the fast equivalent of ``pack_events(expand_items(items))``.

    Valid because the generator never places two same-key delta runs next to each other (every
    block opens with a ``block-start``), so runs never merge across items.
    """
    out: list[dict] = []
    for it in items:
        if type(it) is DeltaRun:
            out.extend(it.packed_rows())
        else:
            out.append(it)
    return out


def cut_items(items: list, k: int) -> list:
    """The first k logical events of an item list (a DeltaRun is split if needed)."""
    out, n = [], 0
    for it in items:
        if n >= k:
            break
        ln = item_len(it)
        if n + ln <= k:
            out.append(it)
            n += ln
        else:
            out.append(it.split(k - n)[0])
            n = k
    return out


# =========================================================================== text pools

_WORDS = """the a to of and in is that it for this file function test we need I should let me check
run code error value return import module class method call line output update fix change config path
read write edit look first then now also here so but not with from by on at as be are was can will if
when which because after before into only each all any user tool result bash command see seems like
looks failing passes passed failure exception stack trace variable parameter argument default option
flag setting data list dict string number index key type schema field struct parse decode encode row
event session log store reader writer cache buffer page query filter sort order seq time turn step
message chunk packed stream batch frame header version format legacy repair closure fork seed title
handle case edge empty missing invalid unknown expected actual assert mock fixture helper util common
base core main app src tests docs build install package dependency version release branch commit diff
patch merge rebase review comment todo done pending progress plan approach simple minimal correct
safe fast slow memory disk bytes size limit offset window range start end begin finish stop cancel
retry attempt timeout server response request provider model context token usage reasoning prompt
system workspace directory project repository script shell process exit status signal job background
""".split()
_SUBWORDS = ["verb", "atim", "ize", "able", "ing", "ed", "er", "tion", "ally", "ment", "ness", "s", "'s",
             "n't", "'ll", "'re", "un", "re", "pre", "de"]
_PUNCT = [".", ".", ".", ",", ",", ",", ":", ";", "?", " (", ")", " —", " `", "`", "\n\n", "\n", "\n- ",
          "\n1. ", " **", "**", " \"", "\"", " é", " ✓", " →"]
_NAMES = ["parse_row", "decode_line", "fold_surface", "pack_events", "open_reader", "tail_page",
          "SeqIndex", "RowCodec", "write_batch", "load_config", "resolve_path", "run_tests", "main",
          "handle_request", "SessionStore", "index_of", "read_range", "flush", "repair_tail", "fork_at",
          "build_index", "scan_frame", "LogReader", "render_row", "HistoryModel", "apply_patch"]
_ERRS = ["KeyError", "ValueError", "TypeError", "IndexError", "AssertionError", "TimeoutError",
         "FileNotFoundError", "UnicodeDecodeError", "RuntimeError", "OSError"]
_DIRS = ["src/app", "src/app/log", "src/app/store", "src/app/ui", "tests", "lib", "pkg/core", "scripts",
         "docs", "src/server", "src/client", "tools"]
_MODS = ["reader", "writer", "codec", "index", "model", "config", "cli", "main", "utils", "store",
         "cache", "paging", "fold", "repair", "fork", "server", "client", "api", "schema", "views"]
_EXTS = [".py", ".py", ".py", ".ts", ".ts", ".rs", ".md", ".toml", ".json", ".go"]
_PROMPTS = [
    "Fix the failing test in {path}.",
    "Why does {name} raise {err} when the input is empty?",
    "Add a --{word} option to the CLI and document it in the README.",
    "Refactor {path} so that {name} no longer reads the whole file into memory.",
    "The {word} {word2} is slow on large inputs; profile it and make it faster.",
    "Review the changes in {path} and tell me if anything looks wrong.",
    "Write tests for {name} covering the edge cases.",
    "Search the web for how other projects handle {word} {word2}, then summarize.",
    "Run the test suite and fix whatever fails.",
    "Rename {name} to {name2} everywhere and update the call sites.",
    "Explain how {name} works, step by step.",
    "Implement {word} support in {path}; keep the public API unchanged.",
    "Can you continue where we left off?",
    "Update the todo list and start on the next item.",
    "Delegate a code review of {path} to a subagent and report back.",
]
_SENTENCES = [
    "The user wants me to {verb} {thing}.",
    "Let me check {path} first.",
    "I need to look at how `{name}` handles {thing}.",
    "The test fails because `{name}` returns {val} instead of {val2}.",
    "Now I'll run the test suite to verify the fix.",
    "That looks right.",
    "Wait, {thing} may be empty here, so I should guard against it.",
    "So the problem is in `{name}`: it tries to {verb} {thing} before {thing2} is ready.",
    "I'll read {path} to see where `{name}` is defined.",
    "The output shows {n} failures, all in `{name}`.",
    "Let me search for other call sites of `{name}`.",
    "This is a {adj} change, so I'll keep the public API unchanged.",
    "Hmm, {thing} is never flushed when {thing2} fails.",
    "Actually, a simpler approach is to {verb} {thing} once and reuse it.",
    "I should also add a test for the {adj} case.",
    "The {err} comes from line {n} of {path}.",
    "Good — the build passes now.",
    "First, I'll {verb} {thing}; then I'll update {path}.",
    "It seems `{name}` assumes {thing} is sorted by seq, which is not always true.",
    "I'm going to edit {path} to {verb} {thing} lazily.",
    "All {n} tests pass.",
    "There is one more place that needs the same fix: `{name}`.",
    "A payload of {n} bytes is well within the limit.",
    "Let me double-check the {adj} path before I finish.",
]
_VERBS = ["parse", "decode", "validate", "cache", "flush", "index", "load", "sort", "rename", "split", "merge",
          "encode", "repair", "refactor", "stream", "fix", "check", "update"]
_THINGS = ["the header", "the tail page", "the row index", "the config file", "the packed rows", "the buffer",
           "the session list", "the retry logic", "the seq index", "the request header", "the tool results",
           "the torn tail", "the time field", "the cache key", "the file handle", "the error message"]
_ADJS = ["small", "safe", "minimal", "backwards-compatible", "empty", "edge", "slow", "legacy", "common", "rare"]
_VALS = ["None", "an empty list", "-1", "0", "the old value", "a string", "`False`", "a stale page"]
_TEST_STATUS = ["PASSED", "PASSED", "PASSED", "PASSED", "PASSED", "PASSED", "FAILED", "SKIPPED"]


def _mk_code_lines(rng: random.Random, n: int) -> list[str]:
    lines = []
    indent = ""
    w = _WORDS
    for _ in range(n):
        r = rng.random()
        nm = rng.choice(_NAMES)
        a, b, c = rng.choice(w), rng.choice(w), rng.choice(w)
        if r < 0.06:
            lines.append(f"def {nm.lower()}_{a}({b}, {c}=None):")
            indent = "    "
        elif r < 0.09:
            lines.append(f"class {nm}{a.capitalize()}:")
            indent = "    "
        elif r < 0.16:
            lines.append("")
            indent = "" if rng.random() < 0.3 else indent
        elif r < 0.24:
            lines.append(f"{indent}# {a} {b} {c} {rng.choice(w)} {rng.choice(w)}")
        elif r < 0.30:
            lines.append(f"{indent}if {a} is None or not {b}:")
        elif r < 0.36:
            lines.append(f"{indent}    return {nm.lower()}({a}, {b})")
        elif r < 0.42:
            lines.append(f"{indent}for {a} in {b}.{c}():")
        elif r < 0.46:
            lines.append(f"from .{rng.choice(_MODS)} import {nm}, {rng.choice(_NAMES)}")
        elif r < 0.50:
            lines.append(f"{indent}raise {rng.choice(_ERRS)}(f\"{a} {b}: {{{c}!r}}\")")
        elif r < 0.53:
            lines.append(f"{indent}\"\"\"{a.capitalize()} the {b} of a {c} — {rng.choice(w)} only.\"\"\"")
        else:
            lines.append(f"{indent}{a}_{b} = {nm.lower()}({c}, {rng.randint(0, 4096)}, "
                         f"{rng.choice(w)}={rng.choice(['True', 'False', 'None', repr(c)])})")
    return lines


def _mk_output_lines(rng: random.Random, code: list[str], n: int) -> list[str]:
    out = []
    for _ in range(n):
        r = rng.random()
        mod = rng.choice(_MODS)
        d = rng.choice(_DIRS)
        if r < 0.3:
            out.append(f"tests/test_{mod}.py::test_{rng.choice(_WORDS)}_{rng.choice(_WORDS)} "
                       f"{rng.choice(_TEST_STATUS)} [{rng.randint(1, 100):3d}%]")
        elif r < 0.55:
            out.append(f"{d}/{mod}.py:{rng.randint(1, 2000)}:{rng.choice(code)}")
        elif r < 0.7:
            out.append(f"-rw-r--r--  1 dev dev {rng.randint(10, 900000):7d} Aug {rng.randint(1, 28):2d} "
                       f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {mod}{rng.choice(_EXTS)}")
        elif r < 0.8:
            out.append(f"  File \"{d}/{mod}.py\", line {rng.randint(1, 900)}, in {rng.choice(_NAMES)}")
        elif r < 0.9:
            out.append(f"[{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}] "
                       f"INFO {mod}: {rng.choice(_WORDS)} {rng.choice(_WORDS)} {rng.randint(0, 99999)} "
                       f"{rng.choice(_WORDS)}")
        else:
            out.append(f"{rng.choice(_ERRS)}: {rng.choice(_WORDS)} {rng.choice(_WORDS)} "
                       f"'{rng.choice(_WORDS)}'")
    return out


_TOKEN_RE = None


def _tokenize(text: str) -> list[str]:
    """Provider-like stream tokens: words with their leading space, punctuation apart, and
    some longer words split in two (" verb", "atim")."""
    import re
    global _TOKEN_RE
    if _TOKEN_RE is None:
        _TOKEN_RE = re.compile(r" ?[A-Za-z_]+| ?[0-9]+| ?`|[^\sA-Za-z0-9_`]+| +")
    out = []
    for i, tok in enumerate(_TOKEN_RE.findall(text)):
        if len(tok) > 8 and (i * 7 + len(tok)) % 3 == 0:
            cut = len(tok) // 2 + 1
            out.append(tok[:cut])
            out.append(tok[cut:])
        else:
            out.append(tok)
    return out


class _Pools:
    """Precomputed, seed-independent text pools (built once per process)."""
    _inst: Optional[_Pools] = None

    def __init__(self):
        rng = random.Random(0x5E55)
        self.paths = [f"{d}/{m}{e}" for d in _DIRS for m in _MODS for e in _EXTS[:4]]
        toks = [" " + w for w in _WORDS] * 3 + [" " + w.capitalize() for w in _WORDS[:80]]
        toks += _SUBWORDS + _PUNCT * 4
        toks += [" `" + n + "`" for n in _NAMES] + [" " + n for n in _NAMES]
        self.tokens = toks
        # each sentence twice: after a space/newline (no leading space) and inline (leading space)
        plain = [_tokenize(self._fill(rng, rng.choice(_SENTENCES))) for _ in range(3000)]
        sents = [(t, [" " + t[0]] + t[1:]) for t in plain]
        brk = [(["\n\n"], ["\n\n"])] * 300 + [(["\n- "], ["\n- "])] * 120 + \
            [(["\n\n**", "Summary", "**\n\n"], ["\n\n**", "Summary", "**\n\n"])] * 20
        self.sentences = sents + brk
        self.code = _mk_code_lines(rng, 8192)
        self.code2 = self.code + self.code           # wrap-around slices
        self.code_len = [len(x) + 1 for x in self.code]
        self.avg_code = sum(self.code_len) / len(self.code_len)
        self.out = _mk_output_lines(rng, self.code, 4096)
        self.out2 = self.out + self.out
        self.avg_out = sum(len(x) + 1 for x in self.out) / len(self.out)
        # time between deltas (ms): mostly 0/1 with ~30 ms gaps; one backwards step (clock skew)
        self.dt = [0] * 40 + [1] * 18 + list(range(24, 33)) * 3 + [58, 59, 61, 90, 140]
        self.dt_skew = self.dt + [-1]
        # argument piece lengths (like provider tool-call deltas)
        self.piece = [1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8, 10, 12]

    def _fill(self, rng, tpl: str) -> str:
        return tpl.format(verb=rng.choice(_VERBS), thing=rng.choice(_THINGS), thing2=rng.choice(_THINGS),
                          name=rng.choice(_NAMES), path=rng.choice(self.paths) if hasattr(self, "paths") else
                          f"{rng.choice(_DIRS)}/{rng.choice(_MODS)}.py", val=rng.choice(_VALS),
                          val2=rng.choice(_VALS), adj=rng.choice(_ADJS), err=rng.choice(_ERRS),
                          n=rng.choice([2, 3, 4, 7, 12, 31, 118, 402, 1024, 4096]))

    @classmethod
    def get(cls) -> _Pools:
        if cls._inst is None:
            cls._inst = _Pools()
        return cls._inst


# =========================================================================== configuration

@dataclass
class Mix:
    """Content mix.  Every field can be given to :class:`SessionSynth` as a keyword argument."""
    max_steps: int = 10              # steps per turn (hard cap)
    p_more_steps: float = 0.6        # after a tool step, another tool step follows
    p_no_tools: float = 0.2          # a turn answers without tools
    p_reasoning: float = 0.9         # a step streams a reasoning block
    reasoning_tokens: float = 70.0   # median deltas of a reasoning block (log-normal)
    text_tokens: float = 60.0        # median deltas of a final text block
    p_text_with_tools: float = 0.3   # a tool step also streams some text
    p_code_block: float = 0.25       # a final text holds a fenced code block
    p_parallel: float = 0.15         # a tool step issues 2..max_parallel calls
    max_parallel: int = 4
    tool_weights: dict = field(default_factory=lambda: {
        "bash": 30, "read": 28, "edit": 12, "write": 6, "web_search": 5, "todo_write": 5, "subagent": 3})
    p_tool_error: float = 0.05
    p_exit_nonzero: float = 0.12
    result_scale: float = 1.0        # multiplies the (Pareto) tool result sizes
    max_result_bytes: int = 200_000
    p_retry: float = 0.04            # a step's first attempt fails with a retryable code
    p_retry_again: float = 0.3       # ... and the retry fails again
    p_abort: float = 0.03            # a turn is cancelled mid-stream by the user
    p_turn_error: float = 0.006      # an unretried provider error ends the turn
    p_max_tokens: float = 0.006      # the final step stops at max-tokens
    p_header_change: float = 0.03    # a turn starts with a changed request header
    p_resume: float = 0.02           # a turn starts a new loop instance (header reason resume)
    p_provider_title: float = 0.8    # a provider title follows turn 1
    p_user_title: float = 0.01       # the user renames the session between turns
    compaction: bool = True          # context overflow -> compaction recovery
    context_window: int = 128_000
    p_long_prompt: float = 0.05      # a prompt with a pasted log
    think_ms: tuple = (3_000, 300_000)   # user time between turns
    time_skew: bool = True           # rare negative dt / backwards clock steps
    block_ends: str = "deferred"     # "deferred" (deepseek: all block-ends after the stream) | "inline"


_MIX_FIELDS = {f.name for f in fields(Mix)}


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


# =========================================================================== generator

class SessionSynth:
    """A deterministic dsh session: same seed and options -> the same events, byte for byte."""

    def __init__(self, seed: int = 0, session_id: Optional[str] = None, cwd: Optional[str] = "/home/dev/project",
                 created_at: Optional[int] = None, *, parent_session: Optional[str] = None,
                 seed_length: Optional[int] = None, origin: Optional[str] = None, delegation_depth: int = 0,
                 agent_preset: Optional[str] = None, provider: str = "deepseek-official",
                 model: str = "deepseek-v4-flash", mix: Optional[Mix] = None, version: int = 0, **kw):
        bad = set(kw) - _MIX_FIELDS
        if bad:
            raise TypeError(f"unknown SessionSynth options: {sorted(bad)}")
        self.mix = Mix(**{**(mix.__dict__ if mix else {}), **kw})
        self.seed = seed
        self._rng = rng = random.Random(seed)
        self._p = _Pools.get()
        self.session_id = session_id or _uuid(rng)
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
        self._v4 = _V4Writer(self) if version == 4 else None

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

    # ------------------------------------------------------------------ envelope helpers
    def _ev(self, typ: str, data) -> dict:
        e = {"type": typ, "seq": self._seq, "time": self._t, "data": data}
        self._seq += 1
        return e

    def _surface(self, typ: str, data, source=None, op="append") -> dict:
        e = {"type": typ, "seq": self._seq, "time": self._t, "data": data}
        if source is not None:
            e["sourceEventSeqs"] = source
        e["surfaceOp"] = op
        if op == "append":
            self._nodes.append(self._seq)
        self._seq += 1
        return e

    def _chunk(self, turn, step, chunk) -> dict:
        e = {"type": "assistant/chunk", "seq": self._seq, "time": self._t,
             "data": {"turn": turn, "step": step, "chunk": chunk}}
        self._seq += 1
        return e

    def _run(self, kind, turn, step, index, texts, cid=None, name=None, dt=None) -> DeltaRun:
        n = len(texts)
        dts = self._rng.choices(dt or self._dt, k=n)
        ts = list(accumulate(dts, initial=self._t))[1:]
        r = DeltaRun(kind, turn, step, index, self._seq, ts, texts, cid, name)
        self._seq += n
        self._t = ts[-1]
        return r

    # ------------------------------------------------------------------ text
    def _lognorm(self, median: float, sigma: float = 0.8, lo: int = 1, hi: int = 4000) -> int:
        import math
        return max(lo, min(hi, int(self._rng.lognormvariate(math.log(median), sigma))))

    def _tokens(self, n: int) -> list[str]:
        """About n stream tokens of prose (pre-tokenized sentences; the first without its space)."""
        sents = self._p.sentences
        k = n // 9 + 1
        out: list[str] = []
        for bare, spaced in self._rng.choices(sents, k=k):
            if not out:
                if bare[0][0] != "\n":
                    out += bare
            elif out[-1][-1] in " \n":
                out += bare
            else:
                out += spaced
        return out or ["Done."]

    def _pieces(self, s: str, scale: int = 1) -> list[str]:
        """Split s into provider-like pieces (tool-call argument deltas / code tokens)."""
        if not s:
            return [""]
        lens = self._rng.choices(self._p.piece, k=len(s) // (4 * scale) + 8)
        out = []
        i, n = 0, len(s)
        j = 0
        while i < n:
            if j >= len(lens):
                lens += self._rng.choices(self._p.piece, k=64)
            step = lens[j] * scale
            j += 1
            out.append(s[i:i + step])
            i += step
        return out

    def _code(self, nbytes: int, start: Optional[int] = None) -> tuple[int, list[str]]:
        p = self._p
        nl = max(1, int(nbytes / p.avg_code))
        nl = min(nl, len(p.code))
        s = self._rng.randrange(len(p.code)) if start is None else start
        return s, p.code2[s:s + nl]

    def _size(self, base: float, alpha: float = 0.95) -> int:
        m = self.mix
        v = int(base * self._rng.paretovariate(alpha) * m.result_scale)
        return max(1, min(m.max_result_bytes, v))

    def _path(self) -> str:
        return self._rng.choice(self._p.paths)

    def _words(self, n: int) -> str:
        return " ".join(self._rng.choices(_WORDS, k=n))

    def _prompt_text(self) -> str:
        rng = self._rng
        t = rng.choice(_PROMPTS).format(path=self._path(), name=rng.choice(_NAMES), name2=rng.choice(_NAMES),
                                        err=rng.choice(_ERRS), word=rng.choice(_WORDS), word2=rng.choice(_WORDS))
        if rng.random() < 0.3:
            t += " " + self._words(rng.randint(5, 40)).capitalize() + "."
        if rng.random() < self.mix.p_long_prompt:
            k = rng.randint(20, 400)
            s = rng.randrange(len(self._p.out))
            t += "\n\n```\n" + "\n".join(self._p.out2[s:s + k]) + "\n```"
        return t

    def _mk_system(self) -> str:
        rng = random.Random(0xC0DE)
        paras = [("You are an AI agent powered by DeepSeek Harness.\n\nYou are a coding assistant powered "
                  f"by the {self.model} model.\n\nVerify your work by running the code or tests. Keep answers "
                  "brief and factual.")]
        for _ in range(8):
            paras.append(" ".join(rng.choices(_WORDS, k=rng.randint(30, 70))).capitalize() + ".")
        return "\n\n".join(paras)

    def _mk_tools(self) -> list:
        desc = {
            "bash": ("Execute a bash command (`bash -c`) and return its stdout/stderr. Non-zero exits are "
                     "reported as `[exit code: N]`.", {"command": "The bash command to execute.",
                                                       "description": "What this command does, 5-10 words."}),
            "read": ("Read a text file. Results include line numbers. Use offset and limit for large files.",
                     {"file_path": "Path of the file.", "offset": "First line (1-based).",
                      "limit": "Number of lines."}),
            "write": ("Create a file or completely replace its contents.",
                      {"file_path": "Path of the file.", "content": "The full new contents."}),
            "edit": ("Replace an exact string in a file; read the file first.",
                     {"file_path": "Path of the file.", "old_string": "Text to replace.",
                      "new_string": "Replacement text."}),
            "web_search": ("Search the web and return ranked results with snippets.",
                           {"query": "The search query."}),
            "todo_write": ("Replace the session todo list.", {"todos": "The full list."}),
            "subagent": ("Delegate a task to a subagent and return its final reply.",
                         {"description": "Short task title.", "prompt": "The task.",
                          "run_in_background": "Return immediately with a job id."}),
        }
        out = []
        for name in self._tool_names:
            d, props = desc.get(name, (f"The {name} tool.", {"input": "Input."}))
            out.append({"name": name, "description": d,
                        "parameters": {"type": "object",
                                       "properties": {k: {"type": "string", "description": v}
                                                      for k, v in props.items()},
                                       "required": [next(iter(props))]}})
        return out

    # ------------------------------------------------------------------ header / usage
    def _config(self) -> dict:
        c = {"provider": self.provider, "model": self.model}
        if self.reasoning_effort:
            c["reasoningEffort"] = self.reasoning_effort
        return c

    def _header_events(self, items: list, reason: str) -> None:
        items.append(self._ev("request/header", {"header": {"config": self._config(), "system": self._system,
                                                            "tools": self._tools}, "reason": reason}))
        self._t += 1
        items.append(self._ev("request/context", {"provider": self.provider, "model": self.model,
                                                  "contextWindow": self.mix.context_window}))

    def _prompt_tokens(self) -> int:
        return 2900 + self._ctx

    def _usage(self, out_tokens: int, reasoning_tokens: int) -> dict:
        prompt = self._prompt_tokens()
        rng = self._rng
        cached = 0
        if self._last_prompt and rng.random() < 0.9:
            cached = min(prompt, self._last_prompt) // 128 * 128
        self._last_prompt = prompt
        return {"inputTokens": prompt - cached, "outputTokens": out_tokens, "cacheReadTokens": cached,
                "reasoningTokens": reasoning_tokens}

    def _add_ctx(self, tokens: int) -> None:
        self._ctx += tokens
        self._turn_ctx += tokens

    # ------------------------------------------------------------------ tool calls
    def _call_id(self, i: int) -> str:
        rng = self._rng
        return f"call_{i:02d}_" + "".join(rng.choices(_ALNUM, k=20)) + f"{rng.randrange(10000):04d}"

    def _pick_tool(self) -> str:
        return self._tool_names[bisect.bisect_right(self._tool_cum, self._rng.random() * self._tool_cum[-1])]

    def _plan_call(self, i: int) -> dict:
        """A tool call: name, arguments (JSON text) and what its result will be."""
        rng = self._rng
        name = self._pick_tool()
        cid = self._call_id(i)
        args: dict[str, Any]
        res: dict[str, Any]
        err = rng.random() < self.mix.p_tool_error
        p = self._p
        cwd = self.cwd or "/workspace"
        if name == "bash":
            cmd = rng.choice([
                "pytest -q tests/", "git status --short", "git diff --stat", f"ls -la {rng.choice(_DIRS)}",
                f"rg -n '{rng.choice(_NAMES)}' {rng.choice(_DIRS)}", "npm test", "make build",
                f"python -m {rng.choice(_MODS)} --help", f"wc -l {self._path()}", "cargo test -q",
                f"grep -rn \"{rng.choice(_WORDS)}\" src | head -50", "python -c \"import sys; print(sys.version)\""])
            args = {"command": cmd, "description": f"{rng.choice(['Run', 'Check', 'List', 'Search'])} "
                                                   f"{self._words(rng.randint(2, 6))}"}
            size = self._size(90)
            nl = max(1, int(size / p.avg_out))
            s = rng.randrange(len(p.out))
            text = "\n".join(p.out2[s:s + min(nl, len(p.out))]) + "\n"
            if len(text) > 50_000:
                omitted = len(text) - 30_000
                text = (text[-30_000:] + f"\n\n(Omitted {omitted} bytes. Full formatted result stored at: "
                        f"/tmp/dsh-{rng.getrandbits(40):010x}/{rng.getrandbits(48):012x}-bash.txt. Use read with "
                        "offset/limit, or grep this path to search within it.)")
            if rng.random() < self.mix.p_exit_nonzero:
                text += f"\n[exit code: {rng.choice([1, 1, 1, 2, 127, 130])}]"
            res = {"text": text}
            if err:
                res = {"text": "Error: command timed out after 120000 ms", "error": {"name": "BashError",
                                                                                     "code": "TIMEOUT"}}
        elif name == "read":
            path = self._path()
            if err:
                args = {"file_path": path}
                res = {"text": f"Error: cannot read \"{cwd}/{path}\": not found",
                       "error": {"name": "FsError", "code": "FS_NOT_FOUND"}}
            else:
                size = self._size(700)
                s, lines = self._code(int(size * p.avg_code / (p.avg_code + 7)) - 200)
                offset = 1 if rng.random() < 0.8 else rng.randint(2, 400)
                total = offset - 1 + len(lines) + (0 if rng.random() < 0.7 else rng.randint(1, 3000))
                args = {"file_path": path} if offset == 1 else {"file_path": path, "offset": offset,
                                                                "limit": len(lines)}
                body = "\n".join([f"{offset + k}: {ln}" for k, ln in enumerate(lines)])
                last = offset + len(lines) - 1
                tail = (f"(End of file - total {total} lines)" if last >= total else
                        f"(Showing lines {offset}-{last} of {total}. Use offset={last + 1} to continue.)")
                res = {"text": f"<path>{cwd}/{path}</path>\n<type>file</type>\n<content>\n{body}\n\n{tail}\n</content>",
                       "meta": {"path": f"{cwd}/{path}", "offset": offset,
                                "lines": [{"number": offset + k, "text": ln} for k, ln in enumerate(lines)],
                                "totalLines": total}}
        elif name == "write":
            path = self._path()
            s, lines = self._code(self._size(500))
            args = {"file_path": path, "content": "\n".join(lines) + "\n"}
            res = {"text": f"<path>{cwd}/{path}</path>\n<type>file</type>\n<content>\n"
                           f"{rng.choice(['Created file', 'Overwrote file'])}\n</content>", "meta": {"diffs": []}}
            if err:
                res = {"text": f"Error: write outside the workspace is denied: {path}",
                       "error": {"name": "FsError", "code": "FS_DENIED"}}
        elif name == "edit":
            path = self._path()
            s, lines = self._code(rng.randint(40, 400))
            old = "\n".join(lines)
            new_lines = list(lines)
            k = rng.randrange(len(new_lines))
            new_lines[k] = new_lines[k] + f"  # {self._words(3)}"
            if rng.random() < 0.4:
                new_lines.insert(k, f"    {rng.choice(_WORDS)} = {rng.choice(_NAMES).lower()}()")
            new = "\n".join(new_lines)
            args = {"file_path": path, "old_string": old, "new_string": new}
            ctx_b = "\n".join(self._p.code2[s + len(lines):s + len(lines) + 3])
            res = {"text": f"The file {cwd}/{path} has been updated successfully.",
                   "meta": {"diffs": [{"path": path, "oldText": old + "\n" + ctx_b, "newText": new + "\n" + ctx_b}]}}
            if err:
                res = {"text": f"Error: edit requires reading \"{cwd}/{path}\" first — read the file, then retry",
                       "error": {"name": "FsError", "code": "FS_NOT_OBSERVED"}}
        elif name == "web_search":
            q = self._words(rng.randint(2, 7))
            args = {"query": q}
            results = []
            for _j in range(rng.randint(3, 10)):
                w = rng.choice(_WORDS)
                results.append({"title": self._words(rng.randint(3, 9)).title(),
                                 "url": f"https://{w}.example.org/{rng.choice(_WORDS)}/{rng.getrandbits(24):06x}",
                                 "snippet": self._words(self._size(40, 1.5) // 6 + 8) + "."})
            text = f"Search results for \"{q}\":\n\n" + "\n\n".join(
                f"{j + 1}. {r['title']}\n   {r['url']}\n   {r['snippet']}" for j, r in enumerate(results))
            res = {"text": text, "meta": {"query": q, "results": results}}
            if err:
                res = {"text": "Error: search provider unavailable (HTTP 503)",
                       "error": {"name": "WebSearchError", "code": "UPSTREAM"}}
        elif name == "todo_write":
            todos = self._next_todos()
            args = {"todos": todos}
            cnt = {s: sum(1 for t in todos if t["status"] == s) for s in ("pending", "in_progress", "completed")}
            res = {"text": f"Updated todo list: {cnt['pending']} pending, {cnt['in_progress']} in progress, "
                           f"{cnt['completed']} completed.", "todos": todos}
        elif name == "subagent":
            task = self._words(rng.randint(3, 8))
            args = {"description": task.capitalize(), "prompt": self._prompt_text(), "run_in_background": False}
            n = self._size(300) // 6 + 2
            text = " ".join(rng.choices(_WORDS, k=n)).capitalize() + "."
            res = {"text": text}
            if err:
                res = {"text": "Error: subagent failed: provider error (HTTP 500)",
                       "error": {"name": "SubagentError", "code": "FAILED"}}
        else:
            args = {"input": self._words(4)}
            res = {"text": self._words(self._size(50) // 6 + 1)}
        if err and "error" not in res:
            res["error"] = {"name": "ToolError", "code": "FAILED"}
        return {"id": cid, "name": name, "arguments": json.dumps(args, ensure_ascii=False), "result": res}

    def _next_todos(self) -> list:
        rng = self._rng
        todos = [dict(t) for t in self._todos]
        for t in todos:
            if t["status"] == "in_progress" and rng.random() < 0.6:
                t["status"] = "completed"
        if not todos or all(t["status"] == "completed" for t in todos) or rng.random() < 0.3:
            todos = [t for t in todos if t["status"] != "completed" or rng.random() < 0.5]
            for _ in range(rng.randint(1, 4)):
                todos.append({"content": f"{rng.choice(['Fix', 'Add', 'Test', 'Refactor', 'Document'])} "
                                         f"{self._words(rng.randint(2, 5))}", "status": "pending"})
        if not any(t["status"] == "in_progress" for t in todos):
            for t in todos:
                if t["status"] == "pending":
                    t["status"] = "in_progress"
                    break
        self._todos = todos[:12]
        return self._todos

    # ------------------------------------------------------------------ streams
    def _plan_text(self, median: float, code: bool) -> list[str]:
        toks = self._tokens(self._lognorm(median))
        if code:
            s, lines = self._code(self._rng.randint(60, 900))
            toks = toks + ["\n\n```python\n"] + self._pieces("\n".join(lines)) + ["\n```\n\n"] + \
                self._tokens(self._lognorm(median / 3))
        return toks

    def _stream(self, turn: int, step: int, blocks: list) -> tuple[list, list, int]:
        """Emit one attempt's block stream (no usage/finish).  blocks: [(kind, payload)], payload
        = tokens for reasoning/text, a planned call for tool-call.  -> (items, content, out_tokens)."""
        items: list = []
        content = []
        inline = self.mix.block_ends == "inline"
        ends = []
        out_tokens = 0
        for index, (kind, payload) in enumerate(blocks):
            self._t += self._rng.randint(0, 30)
            items.append(self._chunk(turn, step, {"type": "block-start", "index": index, "blockType": kind}))
            if kind == "tool-call":
                args = payload["arguments"]
                scale = 1 if len(args) < 4000 else len(args) // 2000
                pieces = [""] + self._pieces(args, scale)
                items.append(self._run("tool-call-delta", turn, step, index, pieces, payload["id"], payload["name"]))
                block = {"type": "tool-call", "id": payload["id"], "name": payload["name"], "arguments": args}
                out_tokens += len(args) // 4 + 8
            else:
                items.append(self._run(f"{kind}-delta", turn, step, index, payload))
                block = {"type": kind, "text": "".join(payload)}
                out_tokens += len(payload)
            content.append(block)
            if inline:
                items.append(self._chunk(turn, step, {"type": "block-end", "index": index, "block": block}))
            else:
                ends.append((index, block))
        for index, block in ends:
            items.append(self._chunk(turn, step, {"type": "block-end", "index": index, "block": block}))
        return items, content, out_tokens

    def _failure(self, code: str) -> dict:
        rng = self._rng
        if code == "EMPTY_RESPONSE":
            return {"message": "model returned a completed response with no content", "code": code}
        if code == "RATE_LIMIT":
            return {"message": "rate limit reached for requests (HTTP 429)", "code": code, "status": 429,
                    "providerRetryAfterMs": rng.choice([1000, 2000, 5000])}
        if code == "SERVER":
            st = rng.choice([500, 502, 503])
            return {"message": f"upstream server error (HTTP {st})", "code": code, "status": st,
                    "requestId": "req_" + "".join(rng.choices(_ALNUM, k=24))}
        if code == "TIMEOUT":
            return {"message": "stream stalled: no data for 60000 ms", "code": code}
        if code == "AUTH":
            return {"message": "provider rejected the credential (HTTP 401)", "code": code, "status": 401}
        return {"message": f"provider error ({code})", "code": code}

    def _failed_attempt(self, items: list, turn: int, step: int, code: str) -> dict:
        rng = self._rng
        self._t += rng.randint(200, 3000) if code != "TIMEOUT" else 60_000
        failure = self._failure(code)
        if code == "EMPTY_RESPONSE":
            items.append(self._chunk(turn, step, {"type": "usage", "usage": {"inputTokens": 0, "outputTokens": 0}}))
        elif code in ("SERVER", "TIMEOUT") and rng.random() < 0.7:
            kind = "reasoning" if rng.random() < 0.7 else "text"
            items.append(self._chunk(turn, step, {"type": "block-start", "index": 0, "blockType": kind}))
            items.append(self._run(f"{kind}-delta", turn, step, 0, self._tokens(rng.randint(1, 80))))
            if rng.random() < 0.5:
                items.append(self._chunk(turn, step, {"type": "usage", "usage": self._usage(rng.randint(1, 80), 0)}))
        items.append(self._chunk(turn, step, {"type": "finish", "reason": {"kind": "error", "failure": failure}}))
        return failure

    def _retry_events(self, items: list, turn: int, step: int, retry: int, failure: dict) -> None:
        rng = self._rng
        rid = _uuid(rng)
        delay = int(min(10_000, 500 * 2 ** (retry - 1)) * rng.uniform(0.9, 1.1))
        items.append(self._ev("llm/retry", {"retryId": rid, "turn": turn, "step": step, "provider": self.provider,
                                            "mode": "normal", "policyKey": POLICY_KEY, "retry": retry,
                                            "maxRetries": 5, "delayMs": delay, "failure": failure}))
        self._t += delay
        items.append(self._ev("llm/retry-started", {"retryId": rid, "turn": turn, "step": step, "retry": retry}))

    def _compaction(self, items: list, turn: int, step: int) -> bool:
        """Context overflow recovery (compaction-recovery fixture); False if nothing to shadow."""
        shadow = self._nodes[:self._turn_node0]
        if len(shadow) < 2:
            return False
        rng = self._rng
        self._t += rng.randint(100, 900)
        items.append(self._chunk(turn, step, {"type": "finish", "reason": {"kind": "error", "failure": {
            "message": f"request exceeds the model context window ({self._prompt_tokens()} > "
                       f"{self.mix.context_window} tokens)", "code": "CONTEXT_WINDOW_EXCEEDED"}}}))
        cid = _uuid(rng)
        self._t += rng.randint(1, 20)
        start = self._ev("compaction/start", {"compactionId": cid, "turn": turn})
        items.append(start)
        summary = [{"type": "text", "text": self._words(rng.randint(60, 400)).capitalize() + "."}]
        tokens = self._ctx - self._turn_ctx
        self._t += rng.randint(2000, 20000)
        summ = self._ev("compaction/summary", {
            "compactionId": cid, "summary": summary, "rawOutput": summary, "llmStreamCall": True,
            "shadowedRange": {"start": shadow[0], "end": shadow[-1]}, "shadowedSeqs": shadow,
            "shadowedTokenCount": tokens, "provider": self.provider, "model": self.model, "maxTokens": 4096,
            "usage": {"inputTokens": tokens, "outputTokens": len(summary[0]["text"]) // 5}})
        items.append(summ)
        msg = {"content": [{"type": "text", "text": (
            "This is an automatically generated checkpoint condensing an earlier span of the conversation to "
            "free up context. Treat the captured context as established background and build on it without "
            "restating it. Continue the task directly from the messages that follow, without acknowledging "
            "this checkpoint.\n\n<compacted-summary>")}, summary[0], {"type": "text", "text": "</compacted-summary>"}],
            "source": {"kind": "plugin", "plugin": "compact", "compactionId": cid}, "role": "user", "id": _uuid(rng)}
        seq = self._seq
        items.append(self._surface("user/message", msg, [start["seq"], summ["seq"]] + shadow,
                                   {"op": "replace", "start": shadow[0], "end": shadow[-1]}))
        self._nodes[:self._turn_node0] = [seq]
        self._turn_node0 = 1
        self._ctx = len(summary[0]["text"]) // 4 + self._turn_ctx
        self._last_prompt = 0
        items.append(self._ev("compaction/end", {"compactionId": cid, "turn": turn}))
        return True

    # ------------------------------------------------------------------ a turn
    def _gen_turn(self) -> list:
        rng = self._rng
        m = self.mix
        items: list = []
        self._turn += 1
        turn = self._turn
        if turn > 1:
            lo, hi = m.think_ms
            self._t += int(lo * (hi / lo) ** rng.random()) if lo > 0 else rng.randint(0, hi)
        prompt: dict[str, Any] = {"content": [{"type": "text", "text": self._prompt_text()}],
                                  "source": {"kind": "user"}, "role": "user", "id": _uuid(rng)}
        items.append(self._ev("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [prompt]}))
        self._t += rng.randint(1, 40)
        items.append(self._ev("turn/start", {"turn": turn}))
        items.append(self._ev("agent/inbox/spliced", {"target": "next-turn", "start": 0, "removedCount": 1,
                                                      "inserted": []}))
        self._turn_node0 = len(self._nodes)
        self._turn_ctx = 0

        # plan the turn
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

        turn_reason: dict[str, Any] = {"kind": "completed"}
        for step in range(1, nsteps + 1):
            self._t += rng.randint(2, 12)
            if m.time_skew and rng.random() < 0.01:
                self._t -= rng.randint(1, 200)          # clock stepped back (times are not monotonic)
            items.append(self._ev("step/start", {"turn": turn, "step": step}))
            if step == 1:
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
            last = step == nsteps
            special = step == special_step

            # overflow -> compaction recovery (same step, no llm/retry)
            if m.compaction and self._prompt_tokens() > m.context_window:
                self._compaction(items, turn, step)

            # unretried provider error ends the turn
            if special and end_kind == "error":
                if rng.random() < 0.6:                  # not retryable
                    failure = self._failed_attempt(items, turn, step, "AUTH")
                else:                                    # retryable, but maxRetries (5) exhausted
                    code = rng.choice(["SERVER", "RATE_LIMIT"])
                    for retry in range(1, 6):
                        self._retry_events(items, turn, step, retry, self._failed_attempt(items, turn, step, code))
                    failure = self._failed_attempt(items, turn, step, code)
                items.append(self._ev("step/end", {"turn": turn, "step": step}))
                turn_reason = {"kind": "error", "error": failure}
                break

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
            blocks: list[tuple[str, Any]] = []
            reasoning = rng.random() < m.p_reasoning
            if reasoning:
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
            first = self._seq
            att, content, out_tokens = self._stream(turn, step, blocks)
            reasoning_tokens = len(blocks[0][1]) if reasoning else 0

            if special and end_kind == "aborted":
                self._abort(items, att, first, turn, step, content)
                items.append(self._ev("step/end", {"turn": turn, "step": step}))
                turn_reason = {"kind": "aborted", "reason": {"kind": "user"}}
                break

            items.extend(att)
            self._t += rng.randint(0, 40)
            usage = self._usage(out_tokens, reasoning_tokens)
            items.append(self._chunk(turn, step, {"type": "usage", "usage": usage}))
            fin = "tool-calls" if calls else ("max-tokens" if special and end_kind == "max-tokens" else "stop")
            self._t += rng.randint(0, 5)
            items.append(self._chunk(turn, step, {"type": "finish", "reason": {"kind": fin}}))
            msg_seq = self._seq
            items.append(self._surface("assistant/message", {
                "turn": turn, "step": step,
                "message": {"role": "assistant", "content": content,
                            "source": {"kind": "model", "provider": self.provider, "model": self.model},
                            "id": _uuid(rng)},
                "usage": usage}, list(range(first, msg_seq))))
            if self._first_msg_seq is None:
                self._first_msg_seq = msg_seq
            self._add_ctx(out_tokens)
            if calls:
                self._tool_results(items, turn, step, calls)
            items.append(self._ev("step/end", {"turn": turn, "step": step}))
            if fin == "max-tokens":
                turn_reason = {"kind": "max-tokens"}
        items.append(self._ev("turn/end", {"turn": turn, "reason": turn_reason}))

        # between-turn records
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
        return items

    def _runtime_context(self) -> dict:
        a = ("Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict file "
             "modifications by available operations.")
        b = ("Approval prompts are disabled in this session: actions that require approval are rejected "
             "automatically — do not request sandbox escalation (do not set `sandbox_permissions`).")
        return {"content": [{"type": "text", "text": "Current runtime context. This snapshot supersedes earlier "
                                                     f"runtime-context snapshots.\n\n{a}\n\n{b}"}],
                "source": {"kind": "plugin", "plugin": PLUGIN_SYSTEM_PROMPT, "form": "snapshot",
                           "sections": [{"name": "sandbox:policy", "text": a}, {"name": "approval:policy", "text": b}]},
                "role": "user", "id": _uuid(self._rng)}

    def _abort(self, items, att, first, turn, step, content) -> None:
        """Cancel mid-stream: keep a prefix of the stream (inside the text/reasoning deltas), then an
        ``interrupted`` message citing the delivered chunks (cancel fixture)."""
        rng = self._rng
        # cut inside the first delta run (block-start at att[0], run at att[1])
        run = att[1]
        k = rng.randint(1, len(run))
        head = run.split(k)[0]
        kept = [att[0], head]
        self._seq = first + 1 + k
        self._t = head.ts[-1]
        items.extend(kept)
        kind = content[0]["type"]
        self._t += rng.randint(100, 5000)
        items.append(self._surface("assistant/message", {
            "turn": turn, "step": step,
            "message": {"role": "assistant", "content": [{"type": kind, "text": "".join(head.texts)}],
                        "source": {"kind": "model", "provider": self.provider, "model": self.model},
                        "id": _uuid(rng)},
            "interrupted": True}, list(range(first, self._seq))))

    def _tool_results(self, items, turn, step, calls) -> None:
        rng = self._rng
        call_seqs = []
        for c in calls:
            call_seqs.append(self._seq)
            items.append(self._ev("tool/call", {"turn": turn, "step": step, "callId": c["id"], "name": c["name"],
                                                "arguments": c["arguments"]}))
            if len(calls) > 1:
                self._t += rng.randint(0, 1)
        for c, cseq in zip(calls, call_seqs):
            res = c["result"]
            if c["name"] == "bash":
                self._t += int(rng.lognormvariate(5.5, 1.6)) + 5
            elif c["name"] == "subagent":
                self._t += rng.randint(5_000, 300_000)
            elif c["name"] == "web_search":
                self._t += rng.randint(400, 4000)
            else:
                self._t += rng.randint(3, 40)
            if "todos" in res:
                items.append(self._ev("todo/write", {"todos": res["todos"]}))
                self._t += 1
            is_err = "error" in res
            data = {"turn": turn, "step": step, "message": {
                "source": {"kind": "tool", "callId": c["id"]},
                "content": [{"type": "tool-result", "toolCallId": c["id"],
                             "content": [{"type": "text", "text": res["text"]}], "isError": is_err}],
                "role": "user", "id": _uuid(rng)}}
            if is_err:
                data["error"] = res["error"]
            elif "meta" in res:
                data["meta"] = res["meta"]
            items.append(self._surface("tool/result", data, [cseq]))
            self._add_ctx(len(res["text"]) // 4 + 10)


# =========================================================================== format v4

def encode_seq_ranges(seqs: list) -> list:
    """dsh's stored ``sourceEventSeqs``: in a strictly increasing list, runs of >= 3
    consecutive seqs become ``[start, end]`` (spec-versions §3.3); other lists stay verbatim."""
    if any(b <= a for a, b in zip(seqs, seqs[1:])):
        return list(seqs)
    out, i = [], 0
    while i < len(seqs):
        j = i
        while j + 1 < len(seqs) and seqs[j + 1] == seqs[j] + 1:
            j += 1
        if j - i >= 2:
            out.append([seqs[i], seqs[j]])
        else:
            out.extend(seqs[i:j + 1])
        i = j + 1
    return out


def stream_records(chunks: list) -> list:
    """Embedded stream records (spec-versions §3.4) of ``[(time, chunk)]``: consecutive deltas
    of one block become a run, anything else a ``chunk`` record."""
    out: list = []
    run = None
    for t, c in chunks:
        ct = c.get("type")
        tag = _TAG_OF.get(ct)
        key = (ct, c.get("index"), c.get("id"), c.get("name")) if tag else None
        if tag and run is not None and run[0] == key:
            rec = run[1]
            rec["dt"].append(t - run[2])
            rec["args" if ct == "tool-call-delta" else "texts"].append(
                c["argumentsDelta"] if ct == "tool-call-delta" else c["text"])
            run[2] = t
            continue
        if tag:
            rec = {"type": tag, "time0": t, "index": c.get("index"), "dt": []}
            if ct == "tool-call-delta":
                rec["id"] = c.get("id")
                if "name" in c:
                    rec["name"] = c["name"]
                rec["args"] = [c["argumentsDelta"]]
            else:
                rec["texts"] = [c["text"]]
            out.append(rec)
            run = [key, rec, t]
        else:
            out.append({"type": "chunk", "time": t, "chunk": c})
            run = None
    return out


# v4 direct source kinds of first-party plugin sources (spec-versions §4.4; the later v4 line)
_V4_PLUGIN_KINDS = {"compact": "compact-checkpoint", "tools-code-mode": "ptc-mode", "tools-ptc": "ptc-mode",
                    "dsh-compaction-basic": "compact-basic"}


def _v4_source(src: dict, role: Optional[str]) -> dict:
    """A v0 ``{kind:"plugin", plugin:P, …}`` message source as current dsh writes it in v4."""
    if src.get("kind") != "plugin" or not isinstance(src.get("plugin"), str):
        return src
    p = src["plugin"]
    if p == "@deepseek-ai/dsh-system-prompt":
        kind = "system-prompt" if role == "system" else "runtime-context"
    else:
        kind = _V4_PLUGIN_KINDS.get(p, f"plugin:{p}")
    return {"kind": kind, **{k: v for k, v in src.items() if k not in ("kind", "plugin")}}


class _V4Writer:
    """Turns the generator's v0 events into the v4 shape as dsh writes it: one event per row,
    chunks embedded in ``assistant/message.data.stream`` (failed runs: ``assistant/attempt``),
    the system prompt as a ``system/message`` surface head, ``role:"tool"`` results,
    ``{op, startSeq, endSeq}`` replacements, range-encoded ``sourceEventSeqs``; seqs dense."""

    def __init__(self, synth: SessionSynth):
        self.synth = synth
        self.seq = 0
        self.map: dict = {}                # v0 seq -> v4 seq (chunks -> their settlement)
        self.buf: dict = {}                # (turn, step) -> [(v0 seq, time, chunk)]
        self.system: Optional[str] = None  # prompt text of the head
        self.head: Optional[int] = None    # v4 seq of the system head
        self.n_sys = 0
        self.header: Optional[dict] = None  # the last request header (v4 shape, for a series header)

    def _emit(self, out, typ, time, data, src=None, op=None) -> dict:
        e = {"type": typ, "seq": self.seq, "time": time, "data": data}
        if src:
            e["sourceEventSeqs"] = encode_seq_ranges(src)
        if op is not None:
            e["surfaceOp"] = op
        out.append(e)
        self.seq += 1
        return e

    def _refs(self, seqs) -> list:
        got = []
        for s in seqs or []:
            n = self.map.get(s)
            if n is not None and n not in got:
                got.append(n)
        return got

    def convert(self, events: list) -> list:
        out: list = []
        sid = self.synth.session_id
        for e in events:
            typ, d, t = e["type"], e["data"], e["time"]
            key = (d.get("turn"), d.get("step")) if isinstance(d, dict) else (None, None)
            if typ == "assistant/chunk":
                self.buf.setdefault(key, []).append((e["seq"], t, d["chunk"]))
                c = d["chunk"]
                if c.get("type") == "finish" and (c.get("reason") or {}).get("kind") in ("error", "aborted"):
                    run = self.buf.pop(key)
                    a = self._emit(out, "assistant/attempt", t, {"turn": key[0], "step": key[1],
                                   "stream": stream_records([(x[1], x[2]) for x in run])})
                    for x in run:
                        self.map[x[0]] = a["seq"]
                continue
            if typ in ("step/end", "turn/end", "turn/start"):
                for k in [k for k in self.buf if typ == "turn/start" or k == key or k[0] == key[0]]:
                    self.buf.pop(k)                  # v2+: an unsettled attempt leaves no trace
            if typ == "request/header":
                hdr = dict(d["header"])
                self.header = hdr
                text = hdr.pop("system", None)
                if text and text != self.system:
                    self.n_sys += 1
                    msg = {"id": f"system-{sid}-{self.n_sys}", "role": "system",
                           "content": [{"type": "text", "text": text}], "source": {"kind": "system-prompt"}}
                    data = {"turn": self.synth._turn, "step": 1, "message": msg}
                    if self.head is None:
                        h = self._emit(out, "system/message", t, data, op="append")
                    else:
                        h = self._emit(out, "system/message", t, data, src=[self.head],
                                       op={"op": "replace", "startSeq": self.head, "endSeq": self.head})
                    self.head, self.system = h["seq"], text
                if not hdr.get("tools"):
                    hdr.pop("tools", None)
                d = dict(d, header=hdr)
            elif typ == "assistant/message":
                run = self.buf.pop(key, [])
                d = dict(d)
                d["stream"] = stream_records([(x[1], x[2]) for x in run])
                order = ("turn", "step", "message", "stream", "usage", "interrupted")
                d = {k: d[k] for k in order if k in d}
                n = self._emit(out, typ, t, d, op=e.get("surfaceOp"))
                self.map[e["seq"]] = n["seq"]
                for x in run:
                    self.map[x[0]] = n["seq"]
                continue
            elif typ == "tool/result":
                m = d["message"]
                blk = next((b for b in m.get("content") or [] if b.get("type") == "tool-result"), None)
                if blk is not None:
                    cid = blk.get("toolCallId")
                    nm = {"role": "tool", "source": m.get("source") or {"kind": "tool", "callId": cid},
                          "toolCallId": cid, "content": blk.get("content") or [],
                          "isError": bool(blk.get("isError"))}
                    if "id" in m:
                        nm["id"] = m["id"]
                    d = dict(d, message=nm)
            elif typ == "compaction/summary" or typ == "compaction/prune":
                d = dict(d)
                if isinstance(d.get("shadowedRange"), dict):
                    r = d["shadowedRange"]
                    d["shadowedRange"] = {"start": self.map.get(r.get("start")), "end": self.map.get(r.get("end"))}
                if isinstance(d.get("shadowedSeqs"), list):
                    d["shadowedSeqs"] = self._refs(d["shadowedSeqs"])
            elif typ == "user/message" and isinstance(d.get("source"), dict):
                d = dict(d, source=_v4_source(d["source"], d.get("role")))
            elif typ in ("session/title", "session/title-llm-request") and isinstance(d.get("messageSeqs"), list):
                d = dict(d, messageSeqs=self._refs(d["messageSeqs"]))
            elif typ == "command/done" and d.get("sourceEventSeq") is not None:
                d = dict(d, sourceEventSeq=self.map.get(d["sourceEventSeq"]))
            op = e.get("surfaceOp")
            if isinstance(op, dict):
                op = {"op": "replace", "startSeq": self.map.get(op.get("start")),
                      "endSeq": self.map.get(op.get("end"))}
            n = self._emit(out, typ, t, d, src=self._refs(e.get("sourceEventSeqs")), op=op)
            self.map[e["seq"]] = n["seq"]
            if typ == "step/start" and self.head is None:
                # dsh: the system prompt is surface node 0, appended right after the first step/start
                # (before the step's user message), so a compaction range never spans it (spec §4.3)
                self._head(out, t, d, self.synth._system)
            elif typ == "compaction/end" and self.header is not None:
                # the replacement changed the surface: the next request starts a series (spec §6)
                self._emit(out, "request/header", t, {"header": dict(self.header), "reason": "series"})
        return out

    def _head(self, out: list, t: int, step: dict, text: str) -> None:
        self.n_sys += 1
        msg = {"id": f"system-{self.synth.session_id}-{self.n_sys}", "role": "system",
               "content": [{"type": "text", "text": text}] if text else [], "source": {"kind": "system-prompt"}}
        self.head = self._emit(out, "system/message", t, {"turn": step.get("turn"), "step": step.get("step"),
                                                          "message": msg}, op="append")["seq"]
        self.system = text


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

"""The generator's configuration (:class:`Mix`) and its lower half (:class:`SynthBase`): event
envelopes, text, request headers and usage, attempt streams, failures, retries, compaction, cancellation."""
from __future__ import annotations

import random
from dataclasses import dataclass, field, fields
from itertools import accumulate
from typing import Optional


from .synth_items import DeltaRun
from .synth_text import ALNUM, ERRS, NAMES, PROMPTS, WORDS, TextPools, new_uuid

_TAG_OF = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks",
           "tool-call-delta": "tool-call-chunks"}
RETRYABLE = ("EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT")
POLICY_KEY = '["normal",5,["EMPTY_RESPONSE","RATE_LIMIT","SERVER","TIMEOUT","TRANSPORT"],500,10000,0.1]'
PLUGIN_SYSTEM_PROMPT = "@deepseek-ai/dsh-system-prompt"


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


MIX_FIELDS = {f.name for f in fields(Mix)}


class SynthBase:
    """State and building blocks of :class:`app.tools.synth.SessionSynth` (set up by its ``__init__``)."""

    mix: Mix
    _rng: random.Random
    _p: TextPools
    _seq: int
    _t: int
    _nodes: list[int]
    _turn_node0: int
    _ctx: int
    _turn_ctx: int
    _last_prompt: int
    _system: str
    _tools: list
    _tool_names: list[str]
    _dt: list[int]
    provider: str
    model: str
    reasoning_effort: Optional[str]
    cwd: Optional[str]

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
        return " ".join(self._rng.choices(WORDS, k=n))

    def _prompt_text(self) -> str:
        rng = self._rng
        t = rng.choice(PROMPTS).format(path=self._path(), name=rng.choice(NAMES), name2=rng.choice(NAMES),
                                        err=rng.choice(ERRS), word=rng.choice(WORDS), word2=rng.choice(WORDS))
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
            paras.append(" ".join(rng.choices(WORDS, k=rng.randint(30, 70))).capitalize() + ".")
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
                    "requestId": "req_" + "".join(rng.choices(ALNUM, k=24))}
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
        rid = new_uuid(rng)
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
        cid = new_uuid(rng)
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
            "source": {"kind": "plugin", "plugin": "compact", "compactionId": cid}, "role": "user", "id": new_uuid(rng)}
        seq = self._seq
        items.append(self._surface("user/message", msg, [start["seq"], summ["seq"]] + shadow,
                                   {"op": "replace", "start": shadow[0], "end": shadow[-1]}))
        self._nodes[:self._turn_node0] = [seq]
        self._turn_node0 = 1
        self._ctx = len(summary[0]["text"]) // 4 + self._turn_ctx
        self._last_prompt = 0
        items.append(self._ev("compaction/end", {"compactionId": cid, "turn": turn}))
        return True


    def _runtime_context(self) -> dict:
        a = ("Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict file "
             "modifications by available operations.")
        b = ("Approval prompts are disabled in this session: actions that require approval are rejected "
             "automatically — do not request sandbox escalation (do not set `sandbox_permissions`).")
        return {"content": [{"type": "text", "text": "Current runtime context. This snapshot supersedes earlier "
                                                     f"runtime-context snapshots.\n\n{a}\n\n{b}"}],
                "source": {"kind": "plugin", "plugin": PLUGIN_SYSTEM_PROMPT, "form": "snapshot",
                           "sections": [{"name": "sandbox:policy", "text": a}, {"name": "approval:policy", "text": b}]},
                "role": "user", "id": new_uuid(self._rng)}

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
                        "id": new_uuid(rng)},
            "interrupted": True}, list(range(first, self._seq))))


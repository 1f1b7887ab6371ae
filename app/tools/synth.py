"""Deterministic generator of realistic dsh sessions (benchmarks, tests, live simulator).

Event shapes mirror the fixtures: streamed reasoning/text/tool-call deltas between
block-start/block-end, usage and finish chunks, an assistant/message citing exactly its
attempt's chunks, tool/call then tool/result citing the call, failed attempts followed by
llm/retry + llm/retry-started in the same step, occasional aborted turns, titles, todos.
"""
from __future__ import annotations

import json
import os
import random
import uuid
from typing import Iterator, Optional

from ..log.codec import encode_row, pack_events

_WORDS = ("the a to of and in is it that for on with as this be by file test run error value function "
          "return config session model tool result output check build path read write change line code "
          "agent step turn request user data index page event log seq stream chunk retry commit").split()
TOOLS = ("bash", "read", "write", "edit", "web_search", "todo_write", "spawn_agent")


class SessionSynth:
    def __init__(self, seed: int = 0, session_id: Optional[str] = None, cwd: str = "/home/dev/project",
                 created_at: int = 1796000000000, fail_rate: float = 0.08, abort_rate: float = 0.03,
                 max_steps: int = 4, parent: Optional[str] = None):
        self.rng = random.Random(seed)
        self.id = session_id or str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        self.cwd = cwd
        self.created_at = created_at
        self.fail_rate = fail_rate
        self.abort_rate = abort_rate
        self.max_steps = max_steps
        self.parent = parent
        self.seq = 0
        self.time = created_at + 50
        self.turn = 0
        self._pool = " ".join(self.rng.choice(_WORDS) for _ in range(60000))
        self.open_turn = False

    def header(self) -> dict:
        h = {"type": "session", "version": 0, "id": self.id, "createdAt": self.created_at, "cwd": self.cwd}
        if self.parent:
            h["parentSession"] = self.parent
        h["delegationDepth"] = 0
        return h

    # ------------------------------------------------------------------ helpers
    def _ev(self, typ: str, data, **extra) -> dict:
        self.time += self.rng.randint(0, 40)
        ev = {"type": typ, "seq": self.seq, "time": self.time, "data": data}
        ev.update(extra)
        self.seq += 1
        return ev

    def _text(self, n_words: int) -> str:
        start = self.rng.randrange(0, len(self._pool) - 8 * n_words - 1)
        s = self._pool[start:start + 6 * n_words]
        return s[s.find(" ") + 1:] or "ok"

    def _pieces(self, text: str) -> list:
        out, i = [], 0
        while i < len(text):
            k = self.rng.randint(2, 9)
            out.append(text[i:i + k])
            i += k
        return out or [""]

    def _chunk(self, turn, step, chunk) -> dict:
        return self._ev("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk})

    def _tool_args(self, name: str) -> dict:
        r = self.rng
        if name == "bash":
            return {"command": r.choice(["ls -la", "pytest -q", "git status", "make build", "cat README.md"]),
                    "description": self._text(5)}
        if name == "read":
            return {"path": f"{self.cwd}/src/{r.choice(_WORDS)}.py"}
        if name == "write":
            return {"path": f"{self.cwd}/notes/{r.choice(_WORDS)}.md", "content": self._text(40)}
        if name == "edit":
            return {"path": f"{self.cwd}/src/{r.choice(_WORDS)}.py", "old_string": self._text(6),
                    "new_string": self._text(7)}
        if name == "web_search":
            return {"query": self._text(4)}
        if name == "todo_write":
            return {"todos": [{"content": self._text(4), "status": r.choice(["pending", "in_progress", "completed"])}
                              for _ in range(r.randint(1, 4))]}
        return {"agent": "explorer", "prompt": self._text(12)}

    def _result_text(self, name: str) -> str:
        size = int(min(200_000, 40 * self.rng.paretovariate(1.1)))
        body = self._text(max(1, size // 6))
        if name == "bash":
            return f"exit code: {self.rng.choice([0, 0, 0, 1])}\n{body}"
        return body

    # ------------------------------------------------------------------ one turn
    def turn_events(self) -> list:
        out: list = []
        self.turn += 1
        t = self.turn
        out.append(self._ev("turn/start", {"turn": t}))
        self.open_turn = True
        prompt = {"content": [{"type": "text", "text": self._text(self.rng.randint(5, 60))}],
                  "source": {"kind": "user"}, "role": "user", "id": str(uuid.UUID(int=self.rng.getrandbits(128), version=4))}
        out.append(self._ev("user/message", prompt, surfaceOp="append"))
        if t == 1:
            out.append(self._ev("session/title", {"title": prompt["content"][0]["text"][:40],
                                                  "messageSeqs": [out[-1]["seq"]], "source": {"kind": "fallback"}}))
        steps = self.rng.randint(1, self.max_steps)
        aborted = self.rng.random() < self.abort_rate
        for s in range(1, steps + 1):
            out.append(self._ev("step/start", {"turn": t, "step": s}))
            if t == 1 and s == 1:
                out.append(self._ev("request/header", {"header": {"config": {"provider": "deepseek-official",
                                                                             "model": "deepseek-v4-flash"},
                                                                  "system": "You are a coding agent.",
                                                                  "tools": [{"name": n} for n in TOOLS]},
                                                       "reason": "initial"}))
                out.append(self._ev("request/context", {"provider": "deepseek-official", "model": "deepseek-v4-flash",
                                                        "contextWindow": 128000}))
            retry = 0
            while self.rng.random() < self.fail_rate and retry < 3:
                retry += 1
                code = self.rng.choice(["EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT"])
                out.append(self._chunk(t, s, {"type": "usage", "usage": {"inputTokens": 0, "outputTokens": 0}}))
                out.append(self._chunk(t, s, {"type": "finish", "reason": {"kind": "error", "failure": {
                    "message": f"provider failed: {code.lower()}", "code": code}}}))
                rid = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
                out.append(self._ev("llm/retry", {"retryId": rid, "turn": t, "step": s, "provider": "deepseek-official",
                                                  "mode": "normal", "policyKey": "normal", "retry": retry,
                                                  "maxRetries": 5, "delayMs": 500 * retry,
                                                  "failure": {"message": f"provider failed: {code.lower()}",
                                                              "code": code}}))
                out.append(self._ev("llm/retry-started", {"retryId": rid, "turn": t, "step": s, "retry": retry}))
            first = self.seq
            content = []
            reasoning = self._text(self.rng.randint(5, 80))
            out.append(self._chunk(t, s, {"type": "block-start", "index": 0, "blockType": "reasoning"}))
            for p in self._pieces(reasoning):
                out.append(self._chunk(t, s, {"type": "reasoning-delta", "index": 0, "text": p}))
            content.append({"type": "reasoning", "text": reasoning})
            last_step = s == steps
            if aborted and last_step:
                text = self._text(10)
                out.append(self._chunk(t, s, {"type": "block-start", "index": 1, "blockType": "text"}))
                for p in self._pieces(text)[:5]:
                    out.append(self._chunk(t, s, {"type": "text-delta", "index": 1, "text": p}))
                cited = list(range(first, self.seq))
                partial = "".join(c["data"]["chunk"]["text"] for c in out if c["seq"] in cited and
                                  c["data"]["chunk"]["type"] == "text-delta")
                msg = {"role": "assistant", "content": [content[0], {"type": "text", "text": partial}],
                       "source": {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"},
                       "id": str(uuid.UUID(int=self.rng.getrandbits(128), version=4))}
                out.append(self._ev("assistant/message", {"turn": t, "step": s, "message": msg, "interrupted": True},
                                    sourceEventSeqs=cited, surfaceOp="append"))
                out.append(self._ev("step/end", {"turn": t, "step": s}))
                out.append(self._ev("turn/end", {"turn": t, "reason": {"kind": "aborted", "reason": {"kind": "user"}}}))
                self.open_turn = False
                return out
            calls = []
            if not last_step:
                for i in range(1 if self.rng.random() < 0.8 else 2):
                    name = self.rng.choice(TOOLS)
                    args = json.dumps(self._tool_args(name))
                    cid = f"call_{self.seq:08d}"
                    idx = 1 + i
                    out.append(self._chunk(t, s, {"type": "block-start", "index": idx, "blockType": "tool-call"}))
                    for k, p in enumerate(self._pieces(args)):
                        ch = {"type": "tool-call-delta", "index": idx, "id": cid, "name": name, "argumentsDelta": p}
                        out.append(self._chunk(t, s, ch))
                    blk = {"type": "tool-call", "id": cid, "name": name, "arguments": args}
                    out.append(self._chunk(t, s, {"type": "block-end", "index": idx, "block": blk}))
                    content.append(blk)
                    calls.append(blk)
            else:
                text = self._text(self.rng.randint(5, 120))
                out.append(self._chunk(t, s, {"type": "block-start", "index": 1, "blockType": "text"}))
                for p in self._pieces(text):
                    out.append(self._chunk(t, s, {"type": "text-delta", "index": 1, "text": p}))
                out.append(self._chunk(t, s, {"type": "block-end", "index": 1, "block": {"type": "text", "text": text}}))
                content.append({"type": "text", "text": text})
            usage = {"inputTokens": self.rng.randint(500, 60000), "outputTokens": self.rng.randint(10, 2000),
                     "cacheReadTokens": self.rng.randint(0, 50000), "reasoningTokens": self.rng.randint(0, 800)}
            out.append(self._chunk(t, s, {"type": "usage", "usage": usage}))
            out.append(self._chunk(t, s, {"type": "finish", "reason": {"kind": "tool-calls" if calls else "stop"}}))
            cited = list(range(first, self.seq))
            msg = {"role": "assistant", "content": content,
                   "source": {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"},
                   "id": str(uuid.UUID(int=self.rng.getrandbits(128), version=4))}
            out.append(self._ev("assistant/message", {"turn": t, "step": s, "message": msg, "usage": usage},
                                sourceEventSeqs=cited, surfaceOp="append"))
            call_seqs = []
            for blk in calls:
                out.append(self._ev("tool/call", {"turn": t, "step": s, "callId": blk["id"], "name": blk["name"],
                                                  "arguments": blk["arguments"]}))
                call_seqs.append(out[-1]["seq"])
            for blk, cs in zip(calls, call_seqs):
                is_err = self.rng.random() < 0.1
                res = {"source": {"kind": "tool", "callId": blk["id"]},
                       "content": [{"type": "tool-result", "toolCallId": blk["id"],
                                    "content": [{"type": "text", "text": self._result_text(blk["name"])}],
                                    "isError": is_err}],
                       "role": "user", "id": str(uuid.UUID(int=self.rng.getrandbits(128), version=4))}
                data = {"turn": t, "step": s, "message": res}
                if is_err:
                    data["error"] = {"name": "ToolError", "code": "TOOL_FAILED"}
                out.append(self._ev("tool/result", data, sourceEventSeqs=[cs], surfaceOp="append"))
            if blk_todo := [b for b in calls if b["name"] == "todo_write"]:
                out.append(self._ev("todo/write", {"todos": json.loads(blk_todo[0]["arguments"])["todos"]}))
            out.append(self._ev("step/end", {"turn": t, "step": s}))
        out.append(self._ev("turn/end", {"turn": t, "reason": {"kind": "completed"}}))
        self.open_turn = False
        return out

    def turns(self, n: Optional[int] = None) -> Iterator[list]:
        k = 0
        while n is None or k < n:
            yield self.turn_events()
            k += 1

    def events(self, n_turns: int) -> Iterator[dict]:
        for t in self.turns(n_turns):
            yield from t


def crash_after(events: list, k: int) -> list:
    """The first ``k`` events: a session that died there (an open tail when k is mid-turn)."""
    return events[:k]


def batches(synth: SessionSynth, turns: Optional[int] = None, batch_events=(1, 64), seed: int = 0,
            pack: bool = True) -> Iterator[tuple]:
    """(event dicts, encoded row lines) per write batch, like the write-behind writer produces."""
    rng = random.Random(seed)
    pending: list = []
    for t in synth.turns(turns):
        pending.extend(t)
        while len(pending) >= batch_events[1]:
            n = rng.randint(*batch_events)
            b, pending = pending[:n], pending[n:]
            rows = pack_events(b) if pack else b
            yield b, [encode_row(r) for r in rows]
    while pending:
        n = rng.randint(*batch_events)
        b, pending = pending[:n], pending[n:]
        rows = pack_events(b) if pack else b
        yield b, [encode_row(r) for r in rows]


def write_jsonl(path: str, synth: SessionSynth, target_bytes: Optional[int] = None, turns: Optional[int] = None,
                batch_events=(1, 64), pack: bool = True, crash: bool = False) -> dict:
    """Write a raw session.jsonl (streaming, bounded memory); stop at ``target_bytes`` or ``turns``."""
    if target_bytes is None and turns is None:
        turns = 10
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    stats = {"bytes": 0, "events": 0, "rows": 0, "turns": 0, "lastSeq": -1}
    rng = random.Random(1)
    with open(path, "wb") as f:
        head = encode_row(synth.header()) + b"\n"
        f.write(head)
        stats["bytes"] += len(head)
        k = 0
        while (turns is None or k < turns) and (target_bytes is None or stats["bytes"] < target_bytes):
            evs = synth.turn_events()
            k += 1
            if crash and (turns is not None and k == turns or target_bytes is not None and
                          stats["bytes"] > target_bytes * 0.95):
                evs = evs[:max(3, len(evs) // 2)]
            i = 0
            buf = []
            while i < len(evs):
                n = rng.randint(*batch_events)
                rows = pack_events(evs[i:i + n]) if pack else evs[i:i + n]
                buf.extend(encode_row(r) for r in rows)
                stats["rows"] += len(rows)
                i += n
            blob = b"\n".join(buf) + b"\n"
            f.write(blob)
            stats["bytes"] += len(blob)
            stats["events"] += len(evs)
            stats["turns"] = k
            stats["lastSeq"] = evs[-1]["seq"]
            if crash and len(evs) and evs[-1]["type"] != "turn/end":
                break
    return stats

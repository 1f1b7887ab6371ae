"""Format v4 output of the session generator: the v0 events it makes, rewritten as dsh writes v4."""
from __future__ import annotations

from typing import Optional, Protocol


from .synth_items import TAG_OF


class Synth(Protocol):
    """What the writer reads of its generator (:class:`app.tools.synth.SessionSynth`)."""
    session_id: str

    @property
    def turn(self) -> int: ...

    @property
    def system_prompt(self) -> str: ...


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
        tag = TAG_OF.get(ct)
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


class V4Writer:
    """Turns the generator's v0 events into the v4 shape as dsh writes it: one event per row,
    chunks embedded in ``assistant/message.data.stream`` (failed runs: ``assistant/attempt``),
    the system prompt as a ``system/message`` surface head, ``role:"tool"`` results,
    ``{op, startSeq, endSeq}`` replacements, range-encoded ``sourceEventSeqs``; seqs dense."""

    def __init__(self, synth: Synth):
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
                d = self._request_header(out, t, d)
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
                self._head(out, t, d, self.synth.system_prompt)
            elif typ == "compaction/end" and self.header is not None:
                # the replacement changed the surface: the next request starts a series (spec §6)
                self._emit(out, "request/header", t, {"header": dict(self.header), "reason": "series"})
        return out

    def _request_header(self, out: list, t: int, d: dict) -> dict:
        """A v4 request header: its system prompt moved to a ``system/message`` head (replacing the old head
        when the prompt changed), no empty tool list."""
        hdr = dict(d["header"])
        self.header = hdr
        text = hdr.pop("system", None)
        if text and text != self.system:
            self.n_sys += 1
            msg = {"id": f"system-{self.synth.session_id}-{self.n_sys}", "role": "system",
                   "content": [{"type": "text", "text": text}], "source": {"kind": "system-prompt"}}
            data = {"turn": self.synth.turn, "step": 1, "message": msg}
            if self.head is None:
                h = self._emit(out, "system/message", t, data, op="append")
            else:
                h = self._emit(out, "system/message", t, data, src=[self.head],
                               op={"op": "replace", "startSeq": self.head, "endSeq": self.head})
            self.head, self.system = h["seq"], text
        if not hdr.get("tools"):
            hdr.pop("tools", None)
        return dict(d, header=hdr)

    def _head(self, out: list, t: int, step: dict, text: str) -> None:
        self.n_sys += 1
        msg = {"id": f"system-{self.synth.session_id}-{self.n_sys}", "role": "system",
               "content": [{"type": "text", "text": text}] if text else [], "source": {"kind": "system-prompt"}}
        self.head = self._emit(out, "system/message", t, {"turn": step.get("turn"), "step": step.get("step"),
                                                          "message": msg}, op="append")["seq"]
        self.system = text



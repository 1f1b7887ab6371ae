"""Audit diffs (pure, no Qt).

* :func:`attempt_diff` — each failed attempt's streamed content beside the committed
  ``assistant/message`` of the same step (spec §4).
* :func:`request_diff` — the exact requests (spec §3) at two dispatch boundaries: what
  changed in system prompt, tools, config and messages; the requests as today's dsh derives them (a v0-v3
  log read from a :class:`~app.log.index.reader.LogReader`: migrated to v4 where dsh accepts it, the prompt
  the first message: :func:`app.log.fold.v2heads.derive_as`), the writer-era ones with ``as_written``.
* :func:`fork_diff` — a fork child beside its parent (spec §7): common logical prefix,
  divergence seq, the ``seedLength`` check and the ``session/end-seed`` position.
"""
from __future__ import annotations

import difflib
import json
from typing import Any, Optional, Union
from collections.abc import Iterable

from ..fold.attempts import Attempt, AttemptTracker, embedded_chunks
from ..fold.folds import HeaderFold, SurfaceFold, build_request, request_from, tool_history_of
from ..format.model import Event, Header, message_text
from ..format.payloads import JsonObj, as_obj, blocks
from .trace import EventSource
from ..format.versions import inherited_count

# a LogReader (its ``header`` and ``version`` are read when present) or the logical events themselves
Source = Union[EventSource, Iterable[Event]]


class DiffError(Exception):
    pass


def _events(src: Source) -> list[Event]:
    if hasattr(src, "iter_events"):
        return list(src.iter_events(logical=True))
    return list(src)


def _sid(src: Source) -> str:
    h: Optional[Header] = getattr(src, "header", None)
    return h.id if h is not None else ""


def _version(src: Source) -> int:
    v: Optional[int] = getattr(src, "version", 0)
    return v or 0


# --------------------------------------------------------------------------- attempt content

def streamed_content(chunks: Iterable[Event]) -> JsonObj:
    """What an attempt streamed: text, reasoning, tool calls, usage, finish."""
    text: list[str] = []
    reasoning: list[str] = []
    calls: dict[Any, JsonObj] = {}       # call id (else chunk index) -> {id, name, arguments}
    usage: Any = None
    finish: Any = None
    for ev in chunks:
        c = as_obj((ev.data or {}).get("chunk") if isinstance(ev.data, dict) else None)
        if c is None:
            continue
        ct = c.get("type")
        if ct == "text-delta":
            text.append(str(c.get("text", "")))
        elif ct == "reasoning-delta":
            reasoning.append(str(c.get("text", "")))
        elif ct == "tool-call-delta":
            k = c.get("id") or c.get("index")
            tc = calls.setdefault(k, {"id": c.get("id"), "name": c.get("name"), "arguments": ""})
            if c.get("name"):
                tc["name"] = c.get("name")
            tc["arguments"] += str(c.get("argumentsDelta", ""))
        elif ct == "block-end" and (b := as_obj(c.get("block"))) is not None:
            if b.get("type") == "tool-call":
                k = b.get("id") or c.get("index")
                calls[k] = {"id": b.get("id"), "name": b.get("name"), "arguments": b.get("arguments", "")}
        elif ct == "usage":
            usage = c.get("usage")
        elif ct == "finish":
            finish = c.get("reason")
    return {"text": "".join(text), "reasoning": "".join(reasoning), "toolCalls": list(calls.values()),
            "usage": usage, "finish": finish}


def message_content(message: Optional[JsonObj]) -> JsonObj:
    m = message or {}
    calls = [{"id": b.get("id"), "name": b.get("name"), "arguments": b.get("arguments", "")}
             for b in blocks(m) if b.get("type") == "tool-call"]
    return {"text": message_text(m), "reasoning": message_text(m, ("reasoning",)), "toolCalls": calls}


def _line_diff(a: str, b: str, a_name: str, b_name: str) -> list[str]:
    return list(difflib.unified_diff(a.splitlines(), b.splitlines(), a_name, b_name, lineterm=""))


def attempt_diff(src: Source, turn: Optional[int] = None, step: Optional[int] = None) -> list[JsonObj]:
    """For every step with a failed attempt (or the named step): failed attempts beside the committed one."""
    events = _events(src)
    at = AttemptTracker(keep_text=False)
    by_seq: dict[int, Event] = {}
    for ev in events:
        at.apply(ev)
        by_seq[ev.seq] = ev
    steps: dict[tuple[Optional[int], Optional[int]], list[Attempt]] = {}
    for a in at.attempts:
        steps.setdefault((a.turn, a.step), []).append(a)
    out: list[JsonObj] = []
    for (t, s), atts in steps.items():
        if turn is not None and (t != turn or (step is not None and s != step)):
            continue
        failed = [a for a in atts if a.failed]
        if not failed and turn is None:
            continue
        committed = next((a for a in atts if a.message_seq is not None), None)

        def chunks_of(a: Attempt) -> list[Event]:
            if a.first_seq == a.last_seq and by_seq.get(a.first_seq) is not None and \
                    by_seq[a.first_seq].type in ("assistant/message", "assistant/attempt"):
                return embedded_chunks(by_seq[a.first_seq])        # v2+: the settlement holds its stream
            return [by_seq[q] for q in range(a.first_seq, a.last_seq + 1)
                    if q in by_seq and by_seq[q].type == "assistant/chunk" and by_seq[q].turn_step() == (t, s)]
        com: Optional[JsonObj] = None
        if committed is not None:
            mev = by_seq.get(committed.message_seq) if committed.message_seq is not None else None
            msg = (mev.data or {}).get("message") if mev is not None and isinstance(mev.data, dict) else None
            com = {"attemptFirstSeq": committed.first_seq, "attemptLastSeq": committed.last_seq,
                   "messageSeq": committed.message_seq, "status": committed.status,
                   "usage": (mev.data or {}).get("usage") if mev is not None else None,
                   **message_content(msg)}
            com["streamed"] = streamed_content(chunks_of(committed))
        fl: list[JsonObj] = []
        for a in failed:
            sc = streamed_content(chunks_of(a))
            fl.append({"firstSeq": a.first_seq, "lastSeq": a.last_seq, "failure": a.failure,
                       "finishKind": a.finish_kind, "retrySeq": a.retry_seq, "retryStartedSeq": a.retry_started_seq,
                       **sc,
                       "textDiff": _line_diff(sc["text"], (com or {}).get("text", ""),
                                              f"failed@{a.first_seq}",
                                              f"committed@{com['messageSeq']}" if com else "none")})
        out.append({"turn": t, "step": s, "failed": fl, "committed": com})
    return out


# --------------------------------------------------------------------------- request diff

def _boundaries(events: list[Event]) -> list[Attempt]:
    at = AttemptTracker(keep_text=False)
    for ev in events:
        at.apply(ev)
    return at.attempts


def resolve_boundary(events: list[Event], ref: Union[str, int]) -> tuple[int, Attempt]:
    """``"turn.step"`` -> the first chunk seq of the step's committed (else last) attempt;
    a seq -> the boundary of the attempt it is in / the message citing it / itself if a boundary."""
    atts = _boundaries(events)
    if isinstance(ref, str) and "." in ref:
        t, s = (int(x) for x in ref.split(".", 1))
        cands = [a for a in atts if a.turn == t and a.step == s]
        if not cands:
            raise DiffError(f"step {ref} has no model dispatch")
        a = next((a for a in reversed(cands) if a.message_seq is not None), cands[-1])
        return a.first_seq, a
    q = int(ref)
    for a in atts:
        if a.first_seq == q or a.covers(q) or a.message_seq == q:
            return a.first_seq, a
    raise DiffError(f"seq {q} is not a dispatch boundary (no attempt starts at, covers or is cited by it)")


def _requests_at(events: list[Event], bounds: list[int], sid: str, version: int = 0, reader: Any = None,
                 as_written: bool = False) -> dict[int, tuple[JsonObj, list[int], Optional[int]]]:
    """boundary -> (the exact request, its message seqs, the seq of the header in force); ``reader``: the
    log's reader (the requests are derived as the request face derives them: today's dsh's shape unless
    ``as_written``); None: a list of events, derived as written."""
    want = sorted(set(bounds))
    out: dict[int, tuple[JsonObj, list[int], Optional[int]]] = {}
    sf, hf = SurfaceFold(version=version), HeaderFold()
    if reader is not None:
        from ..fold.v2heads import derive_as
        derive_as(sf, reader, as_written)

    def req() -> tuple[JsonObj, list[int], Optional[int]]:
        if reader is None:
            return build_request(hf.header, sf.messages(), sid, tool_history_of(hf, version)), \
                list(sf.message_seqs()), hf.seq
        seqs = [s for s, _m in sf.linked()]          # (a system head: the stored row it is anchored at)
        th = hf.tool_history.snapshot() if sf.normalized() else None
        return request_from(sf, hf.header, sid, th), seqs, hf.seq
    i = 0
    for ev in events:
        while i < len(want) and ev.seq >= want[i]:
            out[want[i]] = req()
            i += 1
        if i >= len(want):
            break
        sf.apply(ev)
        hf.apply(ev)
    while i < len(want):
        out[want[i]] = req()
        i += 1
    return out


def _prompt(req: JsonObj) -> Any:
    """The request's system prompt: its ``system``, or (today's dsh's shape) the text of its first message
    where that is the system-prompt head."""
    if "system" in req:
        return req["system"]
    msgs = req.get("messages") or []
    m = msgs[0] if msgs and isinstance(msgs[0], dict) else {}
    src = m.get("source")
    if m.get("role") == "system" and isinstance(src, dict) and src.get("kind") == "system-prompt":
        return "".join(b.get("text", "") for b in m.get("content") or [] if isinstance(b, dict))
    return None


def _tool_names(tools: object) -> list[Any]:
    if isinstance(tools, list):
        return [t.get("name") if isinstance(t, dict) else str(t) for t in tools]
    return []


def request_diff(src: Source, a: Union[str, int], b: Union[str, int], as_written: bool = False) -> JsonObj:
    """The requests at boundaries ``a`` and ``b`` compared (see the module doc; ``as_written``: the
    writer-era requests of a v0-v3 log)."""
    events = _events(src)
    ba, atta = resolve_boundary(events, a)
    bb, attb = resolve_boundary(events, b)
    reader = src if hasattr(src, "iter_events") and hasattr(src, "source") else None
    reqs = _requests_at(events, [ba, bb], _sid(src), _version(src), reader, as_written)
    (ra, sa, ha), (rb, sb, hb) = reqs[ba], reqs[bb]
    skip = {"messages", "system", "tools", "sessionId"}
    ca = {k: v for k, v in ra.items() if k not in skip}
    cb = {k: v for k, v in rb.items() if k not in skip}
    config = {"added": {k: cb[k] for k in cb if k not in ca},
              "removed": {k: ca[k] for k in ca if k not in cb},
              "changed": {k: {"from": ca[k], "to": cb[k]} for k in ca if k in cb and ca[k] != cb[k]}}
    sys_a, sys_b = _prompt(ra), _prompt(rb)
    system: JsonObj = {"changed": sys_a != sys_b}
    if sys_a != sys_b:
        txt_a = sys_a if isinstance(sys_a, str) else json.dumps(sys_a, ensure_ascii=False, indent=1)
        txt_b = sys_b if isinstance(sys_b, str) else json.dumps(sys_b, ensure_ascii=False, indent=1)
        system["diff"] = _line_diff(txt_a or "", txt_b or "", "system@A", "system@B")
    ta, tb = ra.get("tools"), rb.get("tools")
    na, nb = _tool_names(ta), _tool_names(tb)
    tools: JsonObj = {"changed": ta != tb, "added": [n for n in nb if n not in na], "removed": [n for n in na if n not in nb]}
    if isinstance(ta, list) and isinstance(tb, list):
        da = {(t.get("name") if isinstance(t, dict) else str(t)): t for t in ta}
        db = {(t.get("name") if isinstance(t, dict) else str(t)): t for t in tb}
        tools["modified"] = [n for n in da if n in db and da[n] != db[n]]
        tools["reordered"] = [n for n in na if n in nb] != [n for n in nb if n in na]
    ma, mb = ra.get("messages", []), rb.get("messages", [])
    common = 0
    while common < min(len(ma), len(mb)) and ma[common] == mb[common]:
        common += 1
    changed = [i for i in range(min(len(ma), len(mb))) if ma[i] != mb[i]]
    messages = {"countA": len(ma), "countB": len(mb), "commonPrefix": common,
                "added": list(range(len(ma), len(mb))), "removed": list(range(len(mb), len(ma))),
                "changed": changed,
                "addedSeqs": [sb[i] for i in range(len(ma), len(mb)) if i < len(sb)],
                "removedSeqs": [sa[i] for i in range(len(mb), len(ma)) if i < len(sa)],
                "changedSeqs": [{"index": i, "from": sa[i] if i < len(sa) else None, "to": sb[i] if i < len(sb) else None}
                                for i in changed]}
    return {"a": {"ref": str(a), "boundary": ba, "turn": atta.turn, "step": atta.step, "headerSeq": ha,
                  "messageSeqs": sa},
            "b": {"ref": str(b), "boundary": bb, "turn": attb.turn, "step": attb.step, "headerSeq": hb,
                  "messageSeqs": sb},
            "identical": ra == rb or (dict(ra, sessionId=None) == dict(rb, sessionId=None)),
            "system": system, "tools": tools, "config": config, "messages": messages,
            "requests": {"a": ra, "b": rb}}


# --------------------------------------------------------------------------- fork diff

def _key(ev: Event) -> bytes:
    import msgspec
    return msgspec.json.encode(ev.envelope())


def fork_diff(child: Source, parent: Source) -> JsonObj:
    """Compare a fork child's logical events with its parent's (readers or event lists)."""
    ce, pe = _events(child), _events(parent)
    ch: Optional[Header] = getattr(child, "header", None)
    ph: Optional[Header] = getattr(parent, "header", None)
    n = 0
    while n < min(len(ce), len(pe)) and ce[n].seq == pe[n].seq and _key(ce[n]) == _key(pe[n]):
        n += 1
    seed_length = ch.seedLength if ch is not None else None
    divergence = ce[n].seq if n < len(ce) else (pe[n].seq if n < len(pe) else None)
    end_seed = next((e.seq for e in ce if e.type == "session/end-seed"), None)
    if _version(child) >= 2 and ch is not None:
        # v2+: no seedLength; the inherited count is the seq of the last tagged end-seed
        seed_length = inherited_count(ce, ch) if ch.isSeeded else None
        end_seed = seed_length if ch.isSeeded else end_seed
    problems: list[str] = []
    if end_seed is not None and ch is not None and ch.seedLength is not None:
        # the last end-seed is this lifecycle's: a fork of a fork inherits its parent's (spec §7)
        end_seed = next(e.seq for e in reversed(ce) if e.type == "session/end-seed")
    if ch is not None and ph is not None and ch.parentSession and ch.parentSession != ph.id:
        problems.append(f"child parentSession {ch.parentSession} is not the parent id {ph.id}")
    # the child's marker at seedLength may equal the parent's own event there: a fork of a fork cut after the
    # same turn/end (the newest host's cut, decision 0018) writes the same session/end-seed {} with B's time
    seed_ok = seed_length is None or seed_length == n or (
        n == seed_length + 1 and seed_length < len(ce) and ce[seed_length].type == "session/end-seed")
    if not seed_ok:
        problems.append(f"seedLength {seed_length} but the common prefix is {n} events")
    # at seedLength, or the seed's own last event when the seed already ended with one (spec §7)
    end_ok = end_seed is None or seed_length is None or end_seed == seed_length or \
        (end_seed == seed_length - 1 and n >= seed_length)
    if not end_ok:
        problems.append(f"session/end-seed at {end_seed}, expected at seedLength {seed_length}")
    return {"child": {"id": ch.id if ch else None, "parentSession": ch.parentSession if ch else None,
                      "events": len(ce), "afterPrefix": len(ce) - n},
            "parent": {"id": ph.id if ph else None, "events": len(pe), "afterPrefix": len(pe) - n},
            "commonPrefix": n, "divergenceSeq": divergence,
            "childAtDivergence": ce[n].type if n < len(ce) else None,
            "parentAtDivergence": pe[n].type if n < len(pe) else None,
            "seedLength": seed_length, "seedLengthOk": seed_ok,
            "endSeedSeq": end_seed, "endSeedOk": end_ok,
            "problems": problems}

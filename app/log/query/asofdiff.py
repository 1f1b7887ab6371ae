"""What changed between two positions of a log (issue 30): two :func:`app.log.fold.asof.as_of` answers
compared.  Pure (no Qt, no store).

The model's view is compared node by node (surface seqs): a node of the later position that the
earlier one lacks was *added* (an append) or is a *replacement* (it shadowed nodes, named by the
surface index); a node of the earlier position that the later one lacks was *shadowed*; a node of
both whose message differs *changed* in place (a v4 image offload, unanswered tool calls dropped).  The rest
is last-wins state: title, todos, modes, the request header's provider/model/tools, the open
turn/step, pending tool calls and children started.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from ..format.payloads import content_text

if TYPE_CHECKING:
    from ..fold.surface import SurfaceIndex


def _block(b: object) -> str:
    """A block that is not text, in a message line: a tool call as ``→ name arguments``."""
    if isinstance(b, dict) and b.get("type") == "tool-call":
        return f"→ {b.get('name')} {b.get('arguments') if isinstance(b.get('arguments'), str) else ''}".rstrip()
    if isinstance(b, dict):
        return f"[{b.get('type')}]"
    return str(b)


def message_line(m: Any, width: int = 120) -> str:
    """One line of a message (plain text): its text, tool calls as ``→ name arguments``."""
    if not isinstance(m, dict):
        return ""
    text = " ".join(content_text(m.get("content"), other=_block).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _changed(a: Any, b: Any) -> Optional[dict[str, Any]]:
    return None if a == b else {"before": a, "after": b}


def diff_states(a: dict[str, Any], b: dict[str, Any], index: Optional[SurfaceIndex] = None) -> dict[str, Any]:
    """From state ``a`` to state ``b`` (both :func:`as_of` answers; ``b`` usually the later one).
    ``index``: the whole-log surface index, naming what each replacement shadowed."""
    msg_of = {s: m for s, m in zip(b["messageSeqs"], b["messages"])}
    msg_of_a = {s: m for s, m in zip(a["messageSeqs"], a["messages"])}
    na, nb = set(a["nodes"]), set(b["nodes"])
    added, replaced, shadowed = [], [], []
    for s in b["nodes"]:
        if s in na:
            continue
        m = msg_of.get(s)
        item: dict[str, Any] = {"seq": s, "role": m.get("role") if m else None, "text": message_line(m),
                                "message": m}
        olds = list(index.fold.replaced.get(s, [])) if index is not None else []
        if olds:
            item["replaces"] = olds
            replaced.append(item)
        else:
            added.append(item)
    for s in a["nodes"]:
        if s in nb:
            continue
        m = msg_of_a.get(s)
        by = index.fold.replaced_by.get(s) if index is not None else None
        shadowed.append({"seq": s, "role": m.get("role") if m else None, "text": message_line(m), "replacedBy": by})
    changed = [{"seq": s, "role": msg_of[s].get("role"), "text": message_line(msg_of[s]),
                "before": msg_of_a[s], "after": msg_of[s]}
               for s in b["messageSeqs"] if s in msg_of_a and msg_of_a[s] != msg_of[s]]   # (image offloads…)
    ha, hb = a["header"], b["header"]
    ta, tb = [str(t) for t in ha.get("tools") or []], [str(t) for t in hb.get("tools") or []]
    pa, pb = set(a["pendingToolCalls"]), set(b["pendingToolCalls"])
    kids_a = {(c.get("seq"), c.get("callId"), c.get("childId")) for c in a["children"]}
    out: dict[str, Any] = {
        "from": a["seq"], "to": b["seq"],
        "messagesAdded": added, "messagesReplaced": replaced, "messagesShadowed": shadowed,
        "messagesChanged": changed,
        "messageCount": {"before": len(a["messages"]), "after": len(b["messages"])},
        "title": _changed(a["title"], b["title"]),
        "todos": _changed(a["todos"], b["todos"]),
        "modes": {k: {"before": a["modes"].get(k), "after": b["modes"].get(k)}
                  for k in sorted(set(a["modes"]) | set(b["modes"])) if a["modes"].get(k) != b["modes"].get(k)},
        "tools": {"added": [t for t in tb if t not in ta], "removed": [t for t in ta if t not in tb]},
        "model": _changed((ha.get("provider"), ha.get("model")), (hb.get("provider"), hb.get("model"))),
        "requestHeader": _changed(ha.get("seq"), hb.get("seq")),
        "turn": _changed((a["turn"], a["step"]), (b["turn"], b["step"])),
        "toolCallsStarted": [c for c in b["pendingToolCalls"] if c not in pa],
        "toolCallsFinished": [c for c in a["pendingToolCalls"] if c not in pb],
        "childrenStarted": [c for c in b["children"] if (c.get("seq"), c.get("callId"), c.get("childId")) not in kids_a],
    }
    if out["model"] is not None:
        m = out["model"]
        out["model"] = {"before": list(m["before"]), "after": list(m["after"])}
    if out["turn"] is not None:
        t = out["turn"]
        out["turn"] = {"before": {"turn": t["before"][0], "step": t["before"][1]},
                       "after": {"turn": t["after"][0], "step": t["after"][1]}}
    return out


def diff_lines(d: dict[str, Any]) -> list[str]:
    """The diff in plain lines (the CLI's summary and the window's What changed view)."""
    lines = [f"What changed from seq {d['from']} to seq {d['to']}",
             f"messages the model sees: {d['messageCount']['before']} -> {d['messageCount']['after']}"]
    for it in d["messagesAdded"]:
        lines.append(f"  + seq {it['seq']} [{it['role']}] {it['text']}")
    for it in d["messagesReplaced"]:
        olds = ", ".join(map(str, it["replaces"]))
        lines.append(f"  ~ seq {it['seq']} [{it['role']}] replaces seq {olds}: {it['text']}")
    for it in d["messagesShadowed"]:
        by = f" (replaced by seq {it['replacedBy']})" if it["replacedBy"] is not None else ""
        lines.append(f"  - seq {it['seq']} [{it['role']}] no longer in the model's view{by}: {it['text']}")
    for it in d["messagesChanged"]:
        lines.append(f"  * seq {it['seq']} [{it['role']}] changed in place (e.g. images offloaded): {it['text']}")
    if d["title"] is not None:
        lines.append(f"title: {d['title']['before']!r} -> {d['title']['after']!r}")
    if d["todos"] is not None:
        lines.append(f"todos: {_todo_line(d['todos']['before'])} -> {_todo_line(d['todos']['after'])}")
    for k, v in d["modes"].items():
        lines.append(f"{k} mode: {v['before']!r} -> {v['after']!r}")
    if d["tools"]["added"] or d["tools"]["removed"]:
        lines.append(f"tools: +{d['tools']['added']} -{d['tools']['removed']}")
    if d["model"] is not None:
        lines.append(f"model: {'/'.join(map(str, d['model']['before']))} -> {'/'.join(map(str, d['model']['after']))}")
    if d["requestHeader"] is not None:
        lines.append(f"request header: seq {d['requestHeader']['before']} -> seq {d['requestHeader']['after']}")
    if d["turn"] is not None:
        b, a = d["turn"]["before"], d["turn"]["after"]
        lines.append(f"turn/step: {b['turn']}/{b['step']} -> {a['turn']}/{a['step']}")
    if d["toolCallsStarted"]:
        lines.append(f"tool calls now pending: {', '.join(map(str, d['toolCallsStarted']))}")
    if d["toolCallsFinished"]:
        lines.append(f"tool calls answered: {', '.join(map(str, d['toolCallsFinished']))}")
    for c in d["childrenStarted"]:
        lines.append(f"child started at seq {c.get('seq')}: {c.get('tool') or c.get('childId')}")
    return lines


def _todo_line(todos: Any) -> str:
    if not isinstance(todos, list) or not todos:
        return "(none)"
    done = sum(1 for t in todos if isinstance(t, dict) and t.get("status") == "completed")
    return f"{len(todos)} items ({done} completed)"


def state_lines(s: dict[str, Any]) -> list[str]:
    """An :func:`as_of` answer in plain lines (the CLI's summary)."""
    h = s["header"]
    lines = [f"As of seq {s['seq']}" + (f" · turn {s['turn']}" if s["turn"] is not None else "")
             + (f" · step {s['step']}" if s["step"] is not None else "")
             + (" (turn open)" if s["openTurn"] else ""),
             f"title: {s['title'] if s['title'] is not None else '(none)'}",
             f"model: {h.get('provider')}/{h.get('model')} (request/header seq {h.get('seq')}), "
             f"{len(h.get('tools') or [])} tools",
             f"modes: {', '.join(f'{k}={v}' for k, v in s['modes'].items()) or '(none logged)'}",
             f"todos: {_todo_line(s['todos'])}"]
    for t in s["todos"] if isinstance(s["todos"], list) else []:
        if isinstance(t, dict):
            lines.append(f"  [{t.get('status')}] {t.get('content')}")
    lines.append(f"messages the model sees: {len(s['messages'])}")
    for seq, m in zip(s["messageSeqs"], s["messages"]):
        lines.append(f"  seq {seq} [{m.get('role')}] {message_line(m)}")
    lines.append(f"pending tool calls: {', '.join(map(str, s['pendingToolCalls'])) or '(none)'}")
    if s["children"]:
        lines.append(f"children started: {len(s['children'])}")
    if s["requestBoundary"] is not None:
        lines.append(f"last dispatch of the open step: boundary seq {s['requestBoundary']} "
                     f"({len(s['request']['messages']) if s['request'] else 0} messages sent)")
        if s.get("requestNote"):                  # (dsh built no request there: the request face's line)
            lines.append(f"request: none ({s['requestNote']})")
    else:
        lines.append("no dispatch in an open step at this seq (request: none)")
    return lines

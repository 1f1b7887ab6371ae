"""Tool call / result cards of a history row: a presenter view laid out as blocks, or the
generic card (arguments or content as JSON / text).  Pure Python, no Qt; called by
``Row.content()`` (:mod:`app.ui.history.rows`).  Every string is transcript text.
"""
from __future__ import annotations

import json

from ...log.format.payloads import obj
from ...textutil import clip, compact_json, pretty_json
from .rows import MAX_LINES, MAX_MONO_LINES, TODO_MARKS, Block, Content, Row, block_plain
from .row_kind import RowKind
from .lazyviews import shown_view


def _tool_name(row: Row, d: dict) -> str:
    if row.kind == RowKind.TOOL_CALL:
        return str(d.get("name", "?"))
    v = shown_view(row) or {}
    if v.get("tool"):
        return str(v["tool"])
    if row.call is not None and isinstance(row.call.data, dict) and row.call.data.get("name"):
        return str(row.call.data["name"])
    msg = obj(d.get("message"))
    for b in msg.get("content") or []:
        if isinstance(b, dict) and b.get("toolName"):
            return str(b["toolName"])
    return "tool"


def _result_content(d: dict) -> tuple[str, bool]:
    msg = obj(d.get("message"))
    texts, err = [], False
    for b in msg.get("content") or []:
        if isinstance(b, dict) and b.get("type") == "tool-result":
            err = err or bool(b.get("isError"))
            texts.append("\n".join(block_plain(x) for x in b.get("content") or []))
        else:
            texts.append(block_plain(b))
    return "\n".join(texts), err


def card(row: Row, d: dict, call: bool) -> Content:
    v = shown_view(row)
    v = v if isinstance(v, dict) else None
    name = _tool_name(row, d)
    badge = "TOOL CALL" if call else "RESULT"
    status = None
    err = d.get("error") if isinstance(d.get("error"), dict) else None
    if not call:
        _, is_err = _result_content(d)
        status = "error" if (is_err or err) else "ok"
    if v is None or v.get("fallback") or v.get("card") in (None, "generic") and not v.get("sections"):
        return _generic_card(row, d, call, name, badge, status, err, v)
    blocks: list = []
    card = v.get("card")
    title = str(v.get("title") or name)
    if v.get("status"):
        s = str(v.get("status")).lower()
        status = "error" if s in ("error", "failed", "failure", "denied") else ("running" if s in ("running", "pending") else "ok")
    command = str(v.get("command") or "")
    # the view title is a heading line under the header (header: badge, tool, pills, meta);
    # a terminal title that is just "$ command" is shown by the command block instead
    if title != name and not (command and title.startswith("$ ") and command.startswith(title[2:].rstrip("…").rstrip())):
        blocks.append(Block("heading", clip(title, 3, 400)))
    if v.get("summary"):
        blocks.append(Block("dim", clip(str(v["summary"]), 4, 400)))
    if command:
        blocks.append(Block("mono", clip("$ " + command, 6, 800)))
    if v.get("path") and str(v.get("path")) not in title:
        blocks.append(Block("dim", str(v["path"])))
    if v.get("query") and str(v.get("query")) not in title:
        blocks.append(Block("dim", f"query: {v['query']}"))
    if v.get("agent"):
        blocks.append(Block("dim", f"agent: {v['agent']}"))
    items = v.get("items")
    if isinstance(items, list) and items:
        lines = []
        for x in items[:MAX_LINES]:
            if isinstance(x, dict):
                if card == "todo" and "content" in x:
                    mark = TODO_MARKS.get(str(x.get("status")), "·")
                    lines.append(f"{mark} {x.get('content')}")
                else:
                    label = x.get("title") or x.get("path") or x.get("url") or x.get("name") or x.get("text")
                    lines.append(f"• {label}" if label else f"• {compact_json(x, 160)}")
            else:
                lines.append(f"• {x}")
        if len(items) > MAX_LINES:
            lines.append(f"… {len(items) - MAX_LINES} more")
        blocks.append(Block("text", "\n".join(lines)))
    for s in v.get("sections") or []:
        if not isinstance(s, dict):
            continue
        text = str(s.get("text", ""))
        lang = s.get("lang")
        style = "diff" if (lang == "diff" or (card == "diff" and s.get("mono"))) else ("mono" if s.get("mono") else "text")
        blocks.append(Block(style, clip(text, MAX_MONO_LINES if style != "text" else MAX_LINES),
                            label=str(s.get("label")) if s.get("label") else None, lang=lang))
    if v.get("exitCode") is not None:
        ec = v.get("exitCode")
        blocks.append(Block("error" if ec not in (0, "0") else "dim", f"exit code {ec}"))
        if ec not in (0, "0"):
            status = "error"
    if err:
        blocks.append(Block("error", f"{err.get('code', '?')} ({err.get('name', '')})"))
    if not call:
        blocks = _without_call_echo(row, blocks)
    return Content(badge=badge, title=name, blocks=_dedupe(blocks), status=status,
                   pills=[(card, "card")] if card else [])


def _squash(text: str) -> str:
    t = "".join(str(text).split())
    return t[:-1] if t.endswith("…") else t


def _dedupe(blocks: list) -> list:
    """Each text once: a summary, error line or section whose text another block already
    holds (a one-line summary of the result, the error repeated as a section) is left out;
    of two equal texts the labelled section stays, then the earlier one."""
    sq = [_squash(b.text) for b in blocks]

    def rank(b):
        return 0 if b.style == "dim" else (1 if b.style == "error" and not b.label else 2)

    def dominated(i):
        s = sq[i]
        if len(s) <= 2 or blocks[i].style == "heading":
            return False
        for j, o in enumerate(sq):
            if j == i or blocks[j].style == "heading" or s not in o:
                continue
            if len(o) > len(s) or rank(blocks[j]) > rank(blocks[i]) or (rank(blocks[j]) == rank(blocks[i]) and j < i):
                return True
        return False
    return [b for i, b in enumerate(blocks) if not dominated(i)]


def _without_call_echo(row: Row, blocks: list) -> list:
    """A result section that only repeats an argument of its call (the written content of a
    write shown again under the result) is replaced by a pointer to the call row."""
    call = row.call
    if call is None or not isinstance(call.data, dict):
        return blocks
    args = call.data.get("arguments")
    try:
        args = json.loads(args) if isinstance(args, str) else args
    except ValueError:
        return blocks
    if not isinstance(args, dict):
        return blocks
    said = {_squash(v) for v in args.values() if isinstance(v, str) and len(v.strip()) > 2}
    out = []
    for b in blocks:
        if b.label and _squash(b.text) in said:
            out.append(Block("dim", f"{b.label}: as in the call (seq {call.seq})"))
        else:
            out.append(b)
    return out


def _generic_card(row, d, call, name, badge, status, err, v) -> Content:
    blocks = []
    if call:
        args = d.get("arguments")
        try:
            parsed = json.loads(args) if isinstance(args, str) else args
            text = pretty_json(parsed)
        except ValueError:
            text = str(args)
        blocks.append(Block("mono", clip(text, MAX_MONO_LINES), label="arguments"))
    else:
        text, _ = _result_content(d)
        blocks.append(Block("error" if status == "error" else "mono", clip(text or "(empty)", MAX_MONO_LINES),
                            label="content"))
        if err:
            blocks.append(Block("error", f"{err.get('code', '?')} ({err.get('name', '')})"))
    summ = str(v.get("summary") or "").strip() if v else ""
    if summ and len(summ) > 2 and _squash(summ) not in _squash(blocks[0].text):
        blocks.insert(0, Block("dim", clip(summ, 3, 300)))
    blocks = _dedupe(blocks)
    why = v.get("fallback") if v else None
    pill = f"generic · {why}" if isinstance(why, str) and why else "generic"
    return Content(badge=badge, title=name, blocks=blocks, status=status, pills=[(pill, "card")])

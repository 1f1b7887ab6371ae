"""Display rows of a history: pure Python (no Qt), built from core pages.

Data flow: core pages (Event / BadRow items) -> :func:`build_rows` -> ``Row`` objects ->
``Row.content()`` (badge, title, meta, text blocks).  The Qt model serves rows, the
delegate turns a row's content into a plain-text document.  Nothing here interprets
markup: every string is transcript text, rendered as text.

Collapsing (spec §4): all ``assistant/chunk`` events of an attempt become one row.  A
committed attempt is represented by its ``assistant/message`` row; a failed attempt is
hidden unless "show hidden attempts" is on (then one marked row at its first chunk, with
its failure reason); an attempt still streaming on the tail is a "streaming" row.
"""
from __future__ import annotations

import time as _time
from dataclasses import dataclass, field
from typing import Any, Optional
from collections.abc import Callable, Iterable

from ...log.fold.attempts import embedded_chunks
from ...log.format.model import BadRow, Event, is_event
from ...log.format.payloads import obj
from ...log.fold.surface import compaction_line, describe_surface, summary_text
from ...log.query.textview import fold_case
from .row_kind import ATTEMPT_KINDS, BOUNDARY_KINDS, CARD_KINDS, EVENT_ROW_KINDS, RowKind
from ...textutil import CLIP_HINT, clip, compact_json, fold, thousands, unclipped, usage_text

# limits for the list (the inspector shows everything)
MAX_LINES = 18
MAX_MONO_LINES = 14
TODO_MARKS = {"completed": "☑", "in_progress": "◐", "pending": "☐"}   # a todo item's status


@dataclass
class Block:
    style: str                    # text | heading | reasoning | mono | diff | dim | error | usage | note
    text: str
    label: Optional[str] = None
    lang: Optional[str] = None


@dataclass
class Content:
    badge: str
    title: str
    meta: str = ""
    blocks: list = field(default_factory=list)
    status: Optional[str] = None  # ok | error | running | None
    pills: list = field(default_factory=list)   # [(text, kind)] kind: synth | hidden | bad | dropped | legacy | warn
                                                # | shadow (a link to ``link``) | surface
    link: Optional[int] = None    # the seq a "shadow" pill jumps to (the replacement)

    def plain_text(self) -> str:
        parts = [f"{self.badge} {self.title}".strip()]
        for b in self.blocks:
            parts.append(f"{b.label}:\n{b.text}" if b.label else b.text)
        return "\n".join(p for p in parts if p)


@dataclass(eq=False)
class Row:
    key: tuple
    kind: RowKind                 # what the row stands for (app.ui.history.row_kind)
    seq: Optional[int]            # the event the row stands for (None: bad row)
    first_seq: Optional[int] = None
    last_seq: Optional[int] = None
    event: Optional[Event] = None
    bad: Optional[BadRow] = None
    attempt: Any = None
    view: Optional[dict] = None
    marks: frozenset = frozenset()
    chunks: list = field(default_factory=list)     # chunk events collapsed into this row
    call: Optional[Event] = None                    # a tool/result's tool/call (same loaded range)
    surface: Optional[dict] = None                  # app.log.fold.surface.row_surface status (page worker)
    group: Optional[dict] = None                    # kind "compaction": its compaction_group
    children: list = field(default_factory=list)    # kind "compaction": the rows it folds
    version: int = 0
    expanded: bool = False         # clipped blocks shown whole (textutil.EXPANDED_LINES at most)
    hide_reasoning: bool = False   # the view's reasoning filter: reasoning blocks left out
    _content: Optional[Content] = None
    _search: Optional[str] = None

    def touch(self) -> None:
        """Forget derived content after a change (the delegate keys documents by version)."""
        self.version += 1
        self._content = None
        self._search = None

    @property
    def synthesized(self) -> bool:
        return "synthesized" in self.marks

    @property
    def is_boundary(self) -> bool:
        return self.kind in BOUNDARY_KINDS

    @property
    def is_card(self) -> bool:
        return self.kind in CARD_KINDS

    @property
    def turn(self) -> Optional[int]:
        ev = self.event
        if ev is not None and isinstance(ev.data, dict):
            t = ev.data.get("turn")
            return t if isinstance(t, int) else None
        return getattr(self.attempt, "turn", None)

    def content(self) -> Content:
        if self._content is None:
            if self.expanded:
                with unclipped():
                    self._content = _content_of(self)
            else:
                self._content = _content_of(self)
            if self.hide_reasoning:
                self._content.blocks = [b for b in self._content.blocks if b.style != "reasoning"]
        return self._content

    @property
    def clipped(self) -> bool:
        """Some block of the row is shortened ("… N more lines")."""
        return any(b.text.endswith(CLIP_HINT) for b in self.content().blocks)

    def set_expanded(self, on: bool) -> bool:
        """Show clipped blocks whole (or clip them again); False when nothing changes."""
        on = bool(on)
        if on == self.expanded or (on and not self.clipped):
            return False
        self.expanded = on
        self.touch()
        return True

    def search_text(self) -> str:
        if self._search is None:
            c = self.content()
            full = [c.badge, c.title]
            full += [b.text for b in c.blocks]
            full += [b.label or "" for b in c.blocks]
            self._search = fold_case("\n".join(full))    # (as the whole-log search folds: İ to "i")
        return self._search

    def copy_text(self) -> str:
        """What Ctrl+C copies: the message text (untruncated) or the row's plain text."""
        ev = self.event
        if self.bad is not None:
            return self.bad.raw.decode("utf-8", errors="replace")
        if ev is not None and self.kind in (RowKind.USER, RowKind.ASSISTANT, RowKind.TOOL_RESULT):
            msg = message_of(ev)
            if msg is not None:
                texts = [block_plain(b, full=True) for b in msg.get("content") or []]
                out = "\n\n".join(t for t in texts if t)
                if out:
                    return out
        if self.kind in ATTEMPT_KINDS:
            text, reasoning = _chunk_texts(self.chunks)
            return text or reasoning
        if ev is not None and self.kind == RowKind.TOOL_CALL and isinstance(ev.data, dict):
            return f"{ev.data.get('name', '')} {ev.data.get('arguments', '')}".strip()
        return self.content().plain_text()


# --------------------------------------------------------------------------- building

def build_rows(items: Iterable, tracker, views: dict, show_attempts: bool, dropped: set,
               cache: Optional[dict] = None) -> list:
    """Rows for ``items`` (events and bad rows, oldest first).

    ``tracker``: an AttemptTracker over the events of ``items``; ``views``: seq -> presenter
    view; ``dropped``: keys ``(pos, member)`` of stored rows a repair would truncate (only
    passed for the physical face); ``cache``: rows reused across rebuilds.
    """
    items = list(items)
    loaded = {it.seq: it for it in items if is_event(it) and not it.synthesized}
    out: list = []
    chunks_of: dict = {}
    calls: dict = {}
    for it in items:
        if is_event(it) and it.type == "tool/call" and isinstance(it.data, dict):
            calls[it.data.get("callId")] = it
        if is_event(it) and it.type == "assistant/chunk":
            a = tracker.attempt_of(it.seq)
            if a is not None:
                chunks_of.setdefault(a.first_seq, []).append(it)
    key: tuple
    for it in items:
        if not is_event(it):
            out.append(_cached(cache, ("bad", it.pos, it.offset), lambda it=it: Row(
                key=("bad", it.pos, it.offset), kind=RowKind.BAD, seq=None, bad=it, marks=frozenset({"bad"}))))
            continue
        ev: Event = it
        if not show_attempts and ev.type == "assistant/attempt" and getattr(tracker.attempt_of(ev.seq), "failed", False):
            continue                                  # (a hidden attempt: no row, whatever its marks)
        marks = set()
        if ev.synthesized:
            marks.add("synthesized")
        if dropped and (ev.pos, ev.member) in dropped:
            marks.add("dropped")
        if ev.legacy:
            marks.add("legacy")
        if not ev.known:
            marks.add("unknown")
        t = ev.type
        if t == "assistant/chunk":
            a = tracker.attempt_of(ev.seq)
            if a is None:
                row_kind = RowKind.EVENT
            else:
                if ev.seq != a.first_seq:
                    continue
                if a.message_seq is not None and a.message_seq in loaded:
                    continue                      # the assistant/message row represents it
                if a.failed:
                    if not show_attempts:
                        continue
                    marks.add("hidden")
                    row_kind = RowKind.ATTEMPT_FAILED
                elif a.status in ("in-flight", "finished"):
                    marks.add("streaming")
                    row_kind = RowKind.STREAMING
                else:
                    row_kind = RowKind.ATTEMPT_OPEN
                out.append(_attempt_row(cache, ev, a, row_kind, marks, lambda: chunks_of.get(a.first_seq, [])))
                continue
        elif t == "assistant/attempt":
            # v2+: a log-only attempt (its chunks embedded); hidden by default like a failed v0 run
            a = tracker.attempt_of(ev.seq)
            if a is not None and a.failed:
                if not show_attempts:
                    continue
                marks.add("hidden")
                out.append(_attempt_row(cache, ev, a, RowKind.ATTEMPT_FAILED, marks, lambda: embedded_chunks(ev)))
                continue
            row_kind = RowKind.EVENT
        else:
            row_kind = EVENT_ROW_KINDS.get(t, RowKind.EVENT)
            if row_kind == RowKind.ASSISTANT and isinstance(ev.data, dict) and ev.data.get("interrupted"):
                marks.add("interrupted")
        attempt = None
        chunks: list = []
        first = last = ev.seq
        if row_kind == RowKind.ASSISTANT:
            cited = [s for s in (ev.source_event_seqs or []) if isinstance(s, int)]
            if cited:
                attempt = tracker.attempt_of(min(cited))
            if attempt is None:
                for a in reversed(tracker.attempts):
                    if a.message_seq == ev.seq:
                        attempt = a
                        break
            if attempt is not None:
                chunks = chunks_of.get(attempt.first_seq, []) or embedded_chunks(ev)
                first = min(first, attempt.first_seq)
        view = views.get(ev.seq) if row_kind in CARD_KINDS else None
        call = calls.get(result_call_id(ev)) if calls and row_kind == RowKind.TOOL_RESULT else None  # (payload unread)
        key = ("s" if ev.synthesized else "e", ev.seq)
        out.append(_cached(cache, key + (row_kind, frozenset(marks), id(view), id(call)), lambda: Row(
            key=key, kind=row_kind, seq=ev.seq, first_seq=first, last_seq=last, event=ev, attempt=attempt,
            view=view, marks=frozenset(marks), chunks=chunks, call=call)))
    return out


def result_call_id(ev: Event) -> Optional[str]:
    d = obj(ev.data)
    if d.get("callId"):
        return d.get("callId")
    msg = obj(d.get("message"))
    src = obj(msg.get("source"))
    if src.get("callId"):
        return src.get("callId")
    for b in msg.get("content") or []:
        if isinstance(b, dict) and b.get("toolCallId"):
            return b.get("toolCallId")
    return None


def _attempt_row(cache, ev: Event, a, kind: RowKind, marks: set, chunks: Callable[[], list]) -> Row:
    """The one row standing for an attempt's chunks (streaming, failed or open), keyed by the attempt."""
    key = ("a", a.first_seq, a.status)
    fm = frozenset(marks)
    return _cached(cache, key + (fm,), lambda: Row(
        key=key, kind=kind, seq=a.first_seq, first_seq=a.first_seq, last_seq=a.last_seq,
        event=ev, attempt=a, marks=fm, chunks=chunks()))


def _cached(cache, ckey, make):
    if cache is None:
        return make()
    r = cache.get(ckey)
    if r is None:
        r = cache[ckey] = make()
    return r


# --------------------------------------------------------------------------- content

PLAUSIBLE_MS = 946_684_800_000      # 2000-01-01: earlier values are placeholders (fixtures hold 0, 7 …)


def _fmt_ms(ms, fmt: str) -> str:
    """Epoch milliseconds as local time (``""`` for a placeholder or an impossible value)."""
    if not isinstance(ms, (int, float)) or ms < PLAUSIBLE_MS:
        return ""
    try:
        return _time.strftime(fmt, _time.localtime(ms / 1000))
    except (OverflowError, OSError, ValueError):
        return ""


def fmt_time(ms) -> str:
    return _fmt_ms(ms, "%H:%M:%S")


def fmt_datetime(ms) -> str:
    return _fmt_ms(ms, "%Y-%m-%d %H:%M")


def message_of(ev: Event) -> Optional[dict]:
    d = ev.data
    if not isinstance(d, dict):
        return None
    if ev.type == "user/message":
        return d
    m = d.get("message")
    return m if isinstance(m, dict) else None


def block_plain(b, full: bool = False) -> str:
    if not isinstance(b, dict):
        return str(b)
    t = b.get("type")
    if t in ("text", "reasoning"):
        return str(b.get("text", ""))
    if t == "tool-call":
        return f"{b.get('name', '')}({b.get('arguments', '')})"
    if t == "tool-result":
        return "\n".join(block_plain(x, full) for x in b.get("content") or [])
    if t == "image":
        return _image_text(b)
    return compact_json(b, 10**9 if full else 400)


def _image_text(b: dict) -> str:
    a = obj(b.get("attachment"))
    dims = f" {a.get('width')}×{a.get('height')}" if a.get("width") and a.get("height") else ""
    size = f", {thousands(a.get('bytes'))} bytes" if a.get("bytes") else ""
    return f"[image {a.get('mediaType', '?')}{dims}{size}]"


def _message_blocks(msg: dict, out: list) -> None:
    for b in msg.get("content") or []:
        if not isinstance(b, dict):
            out.append(Block("mono", clip(compact_json(b, 2000), MAX_MONO_LINES)))
            continue
        t = b.get("type")
        if t == "text":
            txt = str(b.get("text", ""))
            if txt.strip():
                out.append(Block("text", clip(txt)))
        elif t == "reasoning":
            txt = str(b.get("text", ""))
            if txt.strip():
                out.append(Block("reasoning", fold(txt, "reasoning"), label="Reasoning"))
        elif t == "tool-call":
            out.append(_calls_block(b.get("name", "?"), str(b.get("arguments", ""))))
        elif t == "tool-result":
            inner = "\n".join(block_plain(x) for x in b.get("content") or [])
            style = "error" if b.get("isError") else "mono"
            out.append(Block(style, clip(inner, MAX_MONO_LINES)))
        elif t == "image":
            out.append(Block("dim", _image_text(b)))
        else:
            out.append(Block("mono", clip(compact_json(b, 2000), MAX_MONO_LINES), label=f"{t} block"))


def _calls_block(name, args: str) -> Block:
    """One line for a tool call a model message (or its stream) makes: name and the start of its arguments."""
    return Block("dim", f"→ calls {name}  {args[:160]}{'…' if len(args) > 160 else ''}")


def _chunk_bodies(chunks: list) -> Iterable[dict]:
    """The ``chunk`` object of each assistant/chunk event (empty for a malformed one)."""
    return (obj(obj(c.data).get("chunk")) for c in chunks)


def _chunk_texts(chunks: list) -> tuple[str, str]:
    text, reasoning = [], []
    for ch in _chunk_bodies(chunks):
        if ch.get("type") == "text-delta":
            text.append(str(ch.get("text", "")))
        elif ch.get("type") == "reasoning-delta":
            reasoning.append(str(ch.get("text", "")))
    return "".join(text), "".join(reasoning)


def _chunk_calls(chunks: list) -> list:
    calls: dict = {}
    for ch in _chunk_bodies(chunks):
        if ch.get("type") == "tool-call-delta":
            k = ch.get("id") or ch.get("index")
            ent = calls.setdefault(k, {"name": ch.get("name"), "args": []})
            if ch.get("name"):
                ent["name"] = ch.get("name")
            ent["args"].append(str(ch.get("argumentsDelta", "")))
    return [(v["name"] or "?", "".join(v["args"])) for v in calls.values()]


def _meta(row: Row) -> str:
    ev = row.event
    parts = []
    if row.kind in ATTEMPT_KINDS or (row.kind == RowKind.ASSISTANT and row.chunks):
        lo = row.first_seq
        hi = row.last_seq if row.kind != RowKind.ASSISTANT else row.seq
        parts.append(f"seq {lo}–{hi}" if lo != hi else f"seq {lo}")
    elif row.seq is not None:
        parts.append(f"seq {row.seq}")
    if ev is not None and isinstance(ev.data, dict) and row.kind not in (RowKind.TURN_START, RowKind.TURN_END):
        t, s = ev.data.get("turn"), ev.data.get("step")
        if isinstance(t, int):
            parts.append(f"turn {t}" + (f" · step {s}" if isinstance(s, int) else ""))
    if ev is not None:
        tm = fmt_time(ev.time)
        if tm:
            parts.append(tm)
    if row.bad is not None:
        b = row.bad
        if b.line:
            parts.append(f"line {b.line}")
        if b.offset is not None and b.offset >= 0:
            parts.append(f"byte {b.offset}")
    return " · ".join(parts)


# row mark -> (pill text, pill kind), in the order the pills are shown
MARK_PILLS = {
    "synthesized": ("synthesized · not on disk", "synth"),
    "dropped": ("a repair would drop this row", "dropped"),
    "hidden": ("hidden attempt", "hidden"),
    "interrupted": ("interrupted", "warn"),
    "streaming": ("streaming", "warn"),
    "stopped": ("writer gone · never finished", "warn"),
    "running": ("running · no result yet", "warn"),
    "legacy": ("legacy shape", "legacy"),
    "unknown": ("unknown type", "warn"),
}


def _pills(row: Row) -> list:
    m = row.marks
    return [pill for mark, pill in MARK_PILLS.items() if mark in m]


def _content_of(row: Row) -> Content:
    c = _content_body(row)
    if row.expanded:
        c.blocks.append(Block("dim", "▲ expanded — Space or a click here collapses it"))
    c.meta = c.meta or _meta(row)
    c.pills = _pills(row) + c.pills
    if "running" in row.marks and c.status is None:
        c.status = "running"
    _surface_marks(row, c)
    return c


def _surface_marks(row: Row, c: Content) -> None:
    """A shadowed row says since when the model no longer sees it (a link to the replacement);
    a replacement says what it replaced."""
    st = row.surface
    if not st or row.kind == RowKind.COMPACTION:
        return
    if st.get("surface") == "shadowed":
        c.pills.insert(0, (f"not in the model's view since seq {st['since']} · go to replacement ›", "shadow"))
        c.link = st.get("replacedBy")
        c.blocks.insert(0, Block("note", describe_surface(st)))
    elif st.get("surface") == "current" and st.get("replaces"):
        c.pills.insert(0, (describe_surface(st), "surface"))


def _compaction_row(row: Row) -> Content:
    g = row.group or {}
    open_ = "expanded" in row.marks
    blocks = [Block("text", clip(g.get("summary") or "(no summary)"), label="Summary")]
    shadowed = g.get("shadowedSeqs") or []
    if shadowed:
        blocks.append(Block("dim", "replaced seq " + ", ".join(map(str, shadowed[:12]))
                            + (f" … (+{len(shadowed) - 12})" if len(shadowed) > 12 else "")
                            + f" by seq {', '.join(map(str, g.get('replacementSeqs') or []))}"))
    blocks.append(Block("dim", (f"▾ the {len(row.children)} underlying rows follow (click to collapse)" if open_
                                else f"▸ {len(row.children)} rows folded (click to expand)")
                        + f" · token estimates: {g.get('tokenEstimate', '')}"))
    line = compaction_line(g) if g else "Compaction"
    title = line.split(" — ", 1)[0].replace("Compaction: ", "", 1)
    lo, hi = g.get("startSeq"), g.get("endSeq")
    meta = f"seq {lo}–{hi if hi is not None else '…'}"
    if isinstance(g.get("turn"), int):
        meta += f" · turn {g['turn']}"
    return Content(badge="COMPACTION", title=title, meta=meta, blocks=blocks,
                   status=None if g.get("complete") else "running")


def _content_body(row: Row) -> Content:
    k = row.kind
    ev = row.event
    d = ev.data if ev is not None and isinstance(ev.data, dict) else {}
    if k == RowKind.GAP and row.first_seq is not None and row.last_seq is not None:
        lo, hi = row.first_seq, row.last_seq
        n = hi - lo + 1
        return Content(badge="GAP", title=f"{n:,} seq{'s' if n != 1 else ''} missing: "
                                          + (f"{lo}" if n == 1 else f"{lo}–{hi}"), status="error",
                       pills=[("seq gap", "bad")],
                       blocks=[Block("note", "The log skips these seqs here: events were lost, or the file was "
                                             "cut and joined. View › Problems lists every gap.")])
    if k == RowKind.BAD and row.bad is not None:
        b = row.bad
        raw = b.raw.decode("utf-8", errors="replace")
        return Content(badge=b.kind.upper(), title=b.reason, status="error",
                       pills=[(f"{b.kind} row", "bad")],
                       blocks=[Block("mono", clip(raw, MAX_MONO_LINES, 4000), label="stored text")])
    if k == RowKind.USER:
        src = obj(d.get("source"))
        kind = src.get("kind")
        who = "User" if kind in (None, "user") else (f"Plugin · {src.get('plugin')}" if kind == "plugin"
                                                    else str(kind).capitalize())
        blocks: list = []
        _message_blocks(d, blocks)
        if kind not in (None, "user"):          # context injected by the runtime or a plugin: folded
            for b in blocks:
                if b.style == "text":
                    b.text = fold(b.text, "injected context")
        if ev is not None and ev.is_replace:
            from ...log.format.versions import replace_bounds
            lo, hi = replace_bounds(ev.surface_op)            # v0–v2 start/end, v3+ startSeq/endSeq
            blocks.insert(0, Block("note", f"replaces surface nodes {lo}–{hi} (model-only copy)"))
        return Content(badge="USER", title=who, blocks=blocks or [Block("dim", "(empty message)")])
    if k == RowKind.ASSISTANT:
        msg = obj(d.get("message"))
        src = obj(msg.get("source"))
        model = _model_name(src)
        blocks = []
        _message_blocks(msg, blocks)
        if not msg.get("content"):
            blocks.append(Block("dim", "(no content — max-tokens step, excluded from the model messages)"))
        u = usage_text(d.get("usage"))
        if u:
            blocks.append(Block("usage", u))
        a = row.attempt
        if a is not None and getattr(a, "retry_number", None):
            pass
        return Content(badge="ASSISTANT", title=model or "assistant", blocks=blocks)
    if k in ATTEMPT_KINDS:
        a = row.attempt
        text, reasoning = _chunk_texts(row.chunks)
        blocks = []
        if reasoning.strip():
            blocks.append(Block("reasoning", fold(reasoning, "reasoning"), label="Reasoning"))
        if text.strip():
            blocks.append(Block("text", clip(text)))
        for name, args in _chunk_calls(row.chunks):
            blocks.append(_calls_block(name, args))
        u = usage_text(getattr(a, "usage", None))
        n = getattr(a, "chunks", len(row.chunks))
        if k == RowKind.ATTEMPT_FAILED:
            blocks.insert(0, Block("error", f"failed: {a.failure_reason()}"))
            if getattr(a, "retry_seq", None) is not None:
                blocks.append(Block("dim", f"retried (llm/retry at seq {a.retry_seq})"))
            if not text.strip() and not reasoning.strip():
                blocks.append(Block("dim", f"({n} chunk{'s' if n != 1 else ''}, no text)"))
            if u:
                blocks.append(Block("usage", u))
            return Content(badge="ATTEMPT", title="failed model call", status="error", blocks=blocks)
        if k == RowKind.STREAMING:
            if not blocks:
                blocks.append(Block("dim", f"({n} chunk{'s' if n != 1 else ''} so far)"))
            if "stopped" in row.marks:
                return Content(badge="STREAMING", title="model call cut off: its writer is gone", blocks=blocks)
            return Content(badge="STREAMING", title="model call in flight", status="running", blocks=blocks)
        blocks.append(Block("dim", f"attempt ended without a message ({a.status}, {n} chunks)"))
        return Content(badge="ATTEMPT", title="incomplete model call", blocks=blocks)
    if k == RowKind.COMPACTION:
        return _compaction_row(row)
    if k == RowKind.TOOL_CALL:
        return card(row, d, call=True)
    if k == RowKind.TOOL_RESULT:
        return card(row, d, call=False)
    if k == RowKind.TURN_START:
        return Content(badge="TURN", title=f"Turn {d.get('turn', '?')}")
    if k == RowKind.TURN_END:
        return _turn_end(d)
    if k == RowKind.STEP_START:
        return Content(badge="STEP", title=f"Step {d.get('step', '?')} started")
    if k == RowKind.STEP_END:
        return Content(badge="STEP", title=f"Step {d.get('step', '?')} ended")
    if ev is None:
        return Content(badge=str(k).upper(), title=str(k))
    if k == RowKind.NOTICE:
        return _notice(ev, d)
    return _generic_event(ev, d)


def _model_name(d: dict) -> str:
    """``provider/model`` of a message source or a request configuration (either part may be missing)."""
    return "/".join(str(x) for x in (d.get("provider"), d.get("model")) if x)


def _turn_end(d: dict) -> Content:
    r = d.get("reason")
    rd = obj(r)
    kind = rd.get("kind") if isinstance(r, dict) else (r if isinstance(r, str) else None)
    t = d.get("turn", "?")
    if kind == "completed":
        return Content(badge="TURN", title=f"Turn {t} completed", status="ok")
    if kind == "error":
        err = obj(rd.get("error"))
        return Content(badge="TURN", title=f"Turn {t} ended with an error", status="error",
                       blocks=[Block("error", f"{err.get('code', '?')}: {err.get('message', '')}")])
    if kind == "aborted":
        why = rd.get("reason")
        why = why.get("kind") if isinstance(why, dict) else why
        return Content(badge="TURN", title=f"Turn {t} aborted ({why or '?'})", status="error")
    if kind == "interrupted":
        return Content(badge="TURN", title=f"Turn {t} interrupted (crash repair closes it)", status="error")
    if kind is None:
        return Content(badge="TURN", title=f"Turn {t} ended (no reason recorded)")
    return Content(badge="TURN", title=f"Turn {t} ended: {kind}")


def _notice(ev: Event, d: dict) -> Content:
    if ev.type == "llm/retry":
        f = obj(d.get("failure"))
        of = f"/{d.get('maxRetries')}" if d.get("maxRetries") is not None else ""
        return Content(badge="RETRY", title=f"retry {d.get('retry', '?')}{of} scheduled in {d.get('delayMs', '?')} ms",
                       blocks=[Block("dim", f"after {f.get('code', '?')}: {f.get('message', '')}".rstrip(": "))],
                       status="running")
    return Content(badge="RETRY", title=f"retry {d.get('retry', '?')} started")


def _generic_event(ev: Event, d: dict) -> Content:
    t = ev.type
    data = ev.data
    if t == "request/header":
        h = obj(d.get("header"))
        cfg = obj(h.get("config"))
        model = _model_name(cfg)
        tools = h.get("tools")
        extra = []
        if isinstance(tools, list):
            extra.append(f"{len(tools)} tools")
        elif isinstance(tools, str):
            extra.append(f"tools {tools}")
        if h.get("system"):
            extra.append("system prompt")
        return Content(badge="REQUEST", title=f"request header ({d.get('reason', '?')}) {model}".rstrip(),
                       blocks=[Block("dim", " · ".join(extra))] if extra else [])
    if t == "request/context":
        model = _model_name(d)
        win = f" · context window {thousands(d.get('contextWindow'))}" if d.get("contextWindow") else ""
        return Content(badge="CONTEXT", title=f"{model}{win}")
    if t == "session/title":
        return Content(badge="TITLE", title=str(d.get("title", "")))
    if t == "todo/write":
        lines = [f"{TODO_MARKS.get(str(x.get('status')), '·')} {x.get('content', '')}" for x in d.get("todos") or []
                 if isinstance(x, dict)]
        return Content(badge="TODO", title=f"{len(lines)} item{'s' if len(lines) != 1 else ''}",
                       blocks=[Block("text", clip("\n".join(lines)))] if lines else [])
    if t == "session/end-seed":
        return Content(badge="SEED", title="end of the fork seed: this lifecycle starts here")
    if t == "compaction/summary":
        return Content(badge="COMPACTION", title="summary",
                       blocks=[Block("text", clip(summary_text(d.get("summary"))))])   # text, not a list repr
    if t == "approval/asked":
        return Content(badge="APPROVAL", title=f"asked: {d.get('toolName', '?')}",
                       blocks=[Block("dim", str(d.get("reason")))] if d.get("reason") else [])
    if t == "approval/decided":
        return Content(badge="APPROVAL", title=f"decided: {compact_json(d.get('outcome'), 120)}")
    if t == "command/run":
        return Content(badge="COMMAND", title=f"/{d.get('name', '?')} {compact_json(d.get('args'), 100) if d.get('args') else ''}".rstrip())
    if t == "assistant/chunk":
        return Content(badge="CHUNK", title=compact_json(d.get("chunk"), 160))
    return Content(badge=type_badge(t), title=t, blocks=[Block("dim", data_summary(data))] if data not in ({}, None) else [])


BADGE_CHARS = 16


def type_badge(t: str) -> str:
    """The badge of an event type without a card of its own: its namespace in capitals, whole
    when short, else cut at a hyphen (``session-log-deepseek/…`` -> ``SESSION-LOG``), never in
    mid-word with a dangling hyphen."""
    head = t.split("/")[0].upper()
    if len(head) <= BADGE_CHARS:
        return head or "EVENT"
    cut = head.rfind("-", 0, BADGE_CHARS + 1)
    return head[:cut] if cut >= 4 else head[:BADGE_CHARS - 1] + "…"


# the cards module builds on the helpers above (imported last: it imports this module)
from .cards import card  # noqa: E402
from .event_summary import data_summary  # noqa: E402

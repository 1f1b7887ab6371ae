"""Markdown and HTML transcripts of one session (no Qt), streamed in bounded memory.

Two passes over the logical face, neither building the events of packed chunk rows nor decoding the
rows no transcript shows (:func:`app.store.export_rows.row_type`): the first groups the attempts
(:class:`~app.log.fold.attempts.AttemptTracker`) and finds the title (the last ``session/title``,
shown at the top); the second turns events into :class:`Entry` items, merges in the failed-attempt
notes by seq, and renders each entry as it comes (:func:`markdown_lines`, :func:`html_lines`).  Nothing
holds more than one entry and the failed attempts.  Entries come out in the log's order, which is seq
order in any log whose seqs ascend (a log with seqs out of order is shown in stored order).

HTML is self-contained: inline CSS in one ``<style>`` element, no scripts, a Content-Security-Policy
that forbids them anyway, every piece of transcript text passed through :func:`html.escape`, images
shown as text placeholders only.  Markdown neutralises inline HTML and makes links inert.
"""
from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, UTC
from typing import Any, Literal, Optional
from collections.abc import Callable, Iterator

from ..log.fold.attempts import Attempt, AttemptTracker
from ..log.format import fastrows as fr
from ..log.format.model import Event, PACKED_TAGS
from ..log.format.payloads import JsonObj, content_text, obj as _obj
from ..log.format.versions import replace_bounds
from ..log.index.fastindex import load_rowscan_c
from ..log.index.reader import LogReader
from .export_rows import Progress, Row, exact_events, logical_rows, row_type
from .redact import Redactor

_escape_c = getattr(load_rowscan_c(), "ex6_escape", None)   # (html.escape and _md_text in one pass: exp6 section)


def _html_escape(s: str) -> str:
    """:func:`html.escape` (quote=True) of ``s``."""
    if _escape_c is not None:
        got: str = _escape_c(s, 0)
        return got
    return html.escape(s)


# --------------------------------------------------------------------------- transcript model

BlockKind = Literal["text", "reasoning", "code", "image", "error"]
Block = tuple[BlockKind, str]


@dataclass
class Entry:
    kind: Literal["turn", "message", "note"]
    seq: int
    role: str = ""               # user | assistant | tool | model-only | system
    label: str = ""
    turn: object = None          # the payload's turn and step as logged (shown, never computed with)
    step: object = None
    time: int = 0
    blocks: list[Block] = field(default_factory=list)


def _result_image(c: JsonObj) -> str:
    """An image inside a tool result: ``[image name mediaType attachmentId]``."""
    a = _obj(c.get("attachment"))
    return f"[image {a.get('name') or ''} {a.get('mediaType') or ''} {a.get('attachmentId') or ''}]"


def message_blocks(message: JsonObj) -> list[Block]:
    out: list[Block] = []
    for b in (message or {}).get("content") or []:
        if not isinstance(b, dict):
            out.append(("text", str(b)))
            continue
        t = b.get("type")
        if t == "text":
            out.append(("text", str(b.get("text", ""))))
        elif t == "reasoning":
            out.append(("reasoning", str(b.get("text", ""))))
        elif t == "tool-call":
            args = b.get("arguments", "")
            try:
                args = json.dumps(json.loads(args), ensure_ascii=False, indent=2) if isinstance(args, str) else \
                    json.dumps(args, ensure_ascii=False, indent=2)
            except ValueError:
                pass
            out.append(("code", f"tool call {b.get('name')} ({b.get('id')})\n{args}"))
        elif t == "tool-result":
            inner = content_text(b.get("content"), kinds=("text",), image=_result_image, nested=False,
                                 other=lambda c: json.dumps(c, ensure_ascii=False), skip_empty=False)
            out.append(("error" if b.get("isError") else "code", inner))
        elif t == "image":
            a = b.get("attachment") or {}
            out.append(("image", f"[image {a.get('name') or ''} {a.get('mediaType') or ''} "
                                 f"{a.get('width') or '?'}x{a.get('height') or '?'} {a.get('attachmentId') or ''}]"))
        else:
            out.append(("code", json.dumps(b, ensure_ascii=False, indent=2)))
    return out



# rows of these types give no entry (each is an event of that type or a bad row, never anything else)
_NO_ENTRY = frozenset(("request/header", "request/context", "agent/inbox/spliced", "todo/write", "tool/call",
                       "step/start", "step/end", "assistant/chunk", "llm/retry-started", "assistant/attempt",
                       "session/title", *PACKED_TAGS))
# ... and these nothing for the attempts or the title
_NO_ATTEMPT = frozenset(("request/header", "request/context", "agent/inbox/spliced", "todo/write", "tool/call",
                         "user/message", "tool/result", "compaction/start", "compaction/end", "compaction/summary"))


_PREFIX = b'{"type":"'


def _skippable_type(row: Row, skip: frozenset[str]) -> Optional[str]:
    """The row's type when it may be one of ``skip`` (read by :func:`row_type`), else None without reading
    it: a row whose first bytes name another type is decoded anyway, and the decode says what it is."""
    raw = row[3]
    if not row[4]:
        return None
    if raw.startswith(_PREFIX):
        end = raw.find(b'"', 9)
        if end > 0 and raw[9:end].decode("utf-8", "replace") not in skip:
            return None
    return row_type(raw)


def _lean_record(decs: dict[bytes, Callable[[bytes], Any]], row: Row, legacy: bool) -> Any:
    """The lean record of a row (:mod:`app.log.format.fastrows`) when the exact decode would read it with no
    problem, no conversion and no dropped field (its checks, as :func:`~app.log.format.fastrows.accepts` makes
    them), else None: the row takes the exact decode."""
    rec = fr.record_of(decs, row[3], legacy) if row[4] else None
    if rec is not None and rec.K <= fr.PACKED_CALL and not (legacy and fr.packed_members(rec)):
        return None                     # (a packed row in a v2+ log is a bad row)
    return rec


def _apply_record(at: AttemptTracker, rec: Any) -> None:
    """``at.apply`` of the event(s) of a lean record (what :meth:`AttemptTracker.apply` does with the events the
    exact decode reads from the row; a turn's end prunes, as :func:`_first_pass` does)."""
    k, d = rec.K, rec.data
    if k <= fr.PACKED_CALL:
        at.apply_deltas(d.turn, d.step, rec.seq, fr.packed_members(rec))
    elif k == fr.CHUNK:
        c = d.chunk
        at.add_chunk(rec.seq, (d.turn, d.step), c.type, c.reason, c.usage, None)
    elif k in (fr.STEP, fr.TURN_START):
        at.boundary(rec.T, d.turn)
    elif k == fr.TURN_END:
        at.boundary(rec.T, d.turn)
        at.prune()
    elif k == fr.RETRY:
        at.retry(rec.T, rec.seq, (d.turn, d.step), d.retry)
    elif k == fr.MESSAGE and d.stream is None:
        at.cite(rec.seq, (d.turn, d.step), rec.sourceEventSeqs, d.interrupted)
    elif k in (fr.MESSAGE, fr.ATTEMPT):
        chunks, finish, usage = fr.stream_summary(d.stream)
        at.settle(rec.T, rec.seq, (d.turn, d.step), chunks, finish, usage if usage is not None else d.usage,
                  d.interrupted if k == fr.MESSAGE else None)


def _first_pass(reader: LogReader, progress: Progress) -> tuple[object, list[Attempt]]:
    """(the last ``session/title``'s title as logged, the failed attempts in order of first chunk).  A row the
    lean decoders of :mod:`app.log.format.fastrows` read is applied from its record (:func:`_apply_record`),
    any other row from its exact events, in its place."""
    title: object = None
    at = AttemptTracker(keep_text=False)
    decs = fr.decoders(reader.version) if reader.codec.envelope_seqs is None else {}
    legacy = reader.version < 2

    def apply(ev: Event) -> None:
        nonlocal title
        at.apply(ev)
        if ev.type == "session/title" and isinstance(ev.data, dict):
            title = ev.data.get("title", title)
        elif ev.type == "turn/end":
            at.prune()
    for row in logical_rows(reader, progress):
        if _skippable_type(row, _NO_ATTEMPT) in _NO_ATTEMPT:
            continue
        rec = _lean_record(decs, row, legacy) if decs else None
        if rec is not None:
            _apply_record(at, rec)
            continue
        for ev in exact_events(reader, row):
            apply(ev)
    for ev in reader.tail_state().closure:
        apply(ev)
    return title, [a for a in at.attempts if a.failed]


def _event_entry(ev: Event, d: JsonObj) -> Optional[Entry]:
    """The entry of one event (``d``: its data, redacted when the export redacts), None for most."""
    t, s = d.get("turn"), d.get("step")
    typ = ev.type
    if typ == "turn/start":
        return Entry("turn", ev.seq, label=f"Turn {t}", turn=t, time=ev.time)
    if typ == "turn/end":
        reason = _obj(d.get("reason"))
        if reason.get("kind") not in (None, "completed") or reason.get("error"):
            err = reason.get("error")
            msg = err.get("message") if isinstance(err, dict) else (err or "")
            return Entry("note", ev.seq, role="system", label=f"turn {t} ended: {reason.get('kind')}",
                         turn=t, time=ev.time, blocks=[("error", str(msg))] if msg else [])
        return None
    if typ in ("user/message", "assistant/message", "tool/result") and ev.surface_op is not None:
        msg = d if typ == "user/message" else _obj(d.get("message"))
        role = {"user/message": "user", "assistant/message": "assistant", "tool/result": "tool"}[typ]
        src = _obj(msg.get("source"))
        label = role
        if src.get("kind") and src.get("kind") not in ("user", "model", "tool"):
            label += f" ({src.get('kind')}{':' + str(src.get('plugin')) if src.get('plugin') else ''})"
        if ev.is_replace:
            op = ev.surface_op
            return Entry("note", ev.seq, role="model-only", turn=t, step=s, time=ev.time,
                         label=f"model-only replacement of seqs {'–'.join(map(str, replace_bounds(op)))} ({role})",
                         blocks=message_blocks(msg))
        if typ == "assistant/message" and d.get("interrupted"):
            label += " (interrupted)"
        if typ == "assistant/message" and not msg.get("content"):
            label += " (no content)"
        return Entry("message", ev.seq, role=role, label=label, turn=t, step=s, time=ev.time, blocks=message_blocks(msg))
    if typ == "llm/retry":
        f = _obj(d.get("failure"))
        return Entry("note", ev.seq, role="system", turn=t, step=s, time=ev.time,
                     label=f"retry {d.get('retry')} scheduled after {f.get('code') or 'failure'}"
                           f" (delay {d.get('delayMs')} ms)")
    if typ == "compaction/summary":
        from ..log.fold.surface import summary_text
        text = summary_text(d.get("summary"))
        return Entry("note", ev.seq, role="system", turn=t, time=ev.time,
                     label=f"compaction summary {d.get('compactionId', '')}", blocks=[("text", text)] if text else [])
    if typ in ("compaction/start", "compaction/end"):
        return Entry("note", ev.seq, role="system", turn=t, time=ev.time, label=f"{typ} {d.get('compactionId', '')}")
    return None


def _failure_entry(a: Attempt, redact: Optional[Redactor]) -> Entry:
    fail = a.failure or {}
    why = fail.get("message") or ""
    if redact:
        why = redact.obj(why)
    return Entry("note", a.last_seq, role="system", turn=a.turn, step=a.step,
                 label=f"attempt {a.first_seq}–{a.last_seq} failed: {fail.get('code') or a.finish_kind}",
                 blocks=[("error", str(why))] if why else [])


def transcript(reader: LogReader, redact: Optional[Redactor] = None,
               progress: Progress = None) -> tuple[JsonObj, object, Iterator[Entry]]:
    """(header dict, title, entries as they are read) of the readable transcript (append-origin surface
    events, model-only replacements and failures/retries as notes).  The title is the last
    ``session/title`` payload's ``title`` as logged (None without one).  ``progress`` (done, total bytes)
    runs over both passes."""
    total = max(1, reader.physical_total())
    p1 = (lambda d, t: progress(d // 2, total)) if progress else None
    p2 = (lambda d, t: progress(total // 2 + (d + 1) // 2, total)) if progress else None
    header = _json_obj(reader.source.header_raw)
    if redact:
        header = redact.obj(header)
    title, failed = _first_pass(reader, p1)
    if redact and title is not None:
        title = Redactor().obj(title)      # (the title's own redaction is counted where the event is read)
    failed.sort(key=lambda a: a.last_seq)

    def entries() -> Iterator[Entry]:
        k = 0
        evs = (ev for row in logical_rows(reader, p2) if _skippable_type(row, _NO_ENTRY) not in _NO_ENTRY
               for ev in exact_events(reader, row))
        for ev in _chain(evs, reader):
            d: JsonObj = ev.data if isinstance(ev.data, dict) else {}
            if redact:
                d = redact.obj(d)
            e = _event_entry(ev, d)
            if e is None:
                continue
            while k < len(failed) and failed[k].last_seq < e.seq:
                yield _failure_entry(failed[k], redact)
                k += 1
            yield e
        for a in failed[k:]:
            yield _failure_entry(a, redact)
    return header, title, entries()


def _chain(evs: Iterator[Event], reader: LogReader) -> Iterator[Event]:
    yield from evs
    yield from reader.tail_state().closure


def build_transcript(reader: LogReader, redact: Optional[Redactor] = None) -> tuple[JsonObj, object, list[Entry]]:
    """:func:`transcript` with its entries in a list (small logs, tests)."""
    header, title, entries = transcript(reader, redact)
    return header, title, list(entries)


def _json_obj(raw: bytes) -> JsonObj:
    """A stored header row as a dict (``{}`` when there is none)."""
    if not raw:
        return {}
    return _obj(json.loads(raw))


_TIMES: dict[int, str] = {}      # (_fmt_time of an int by its whole second: the text is the second's)


def _fmt_time(ms: object) -> str:
    if type(ms) is int and ms > 0:
        got = _TIMES.get(ms // 1000)
        if got is None:
            if len(_TIMES) >= 4096:
                _TIMES.clear()
            got = _TIMES[ms // 1000] = _fmt_time_exact(ms)
        return got
    return _fmt_time_exact(ms)


def _fmt_time_exact(ms: object) -> str:
    """:func:`_fmt_time` by its definition (an int's text depends only on ``ms // 1000``: ``ms / 1000`` is within
    far less than a millisecond of it, so the microseconds never round up to the next second)."""
    if not isinstance(ms, (int, float)) or ms <= 0:
        return ""
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return ""


# --------------------------------------------------------------------------- markdown

_MD_LINK = re.compile(r"([\[\]])")


def _md_text(s: str) -> str:
    # transcripts are untrusted: neutralise inline HTML for Markdown renderers, and make
    # links and images inert (``[x](javascript:…)``, ``![i](http://…)``: the brackets escaped)
    if _escape_c is not None:
        got: str = _escape_c(s, 1)      # (the same text in one pass: tests/test_export_exp6.py)
        return got
    return _md_text_exact(s)


def _md_text_exact(s: str) -> str:
    """:func:`_md_text` by its definition."""
    return _MD_LINK.sub(r"\\\1", html.escape(s, quote=False))


def _md_inline(s: object) -> str:
    """One-line Markdown text (header fields, labels): a newline cannot start a heading or list."""
    return _md_text(" ".join(str(s).split("\n")).replace("\r", " "))


def _fence(s: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    return "`" * max(3, longest + 1)


def markdown_head(header: JsonObj, title: object) -> list[str]:
    sid = str(header.get("id", ""))
    out = [f"# {_md_inline(str(title or 'Session ' + sid))}", ""]
    out.append(f"- session: `{_md_inline(sid).replace('`', '')}`")
    for k in ("createdAt", "cwd", "parentSession", "origin", "seedLength"):
        if header.get(k) is not None:
            v = _fmt_time(header[k]) or header[k] if k == "createdAt" else header[k]
            out.append(f"- {k}: {_md_inline(str(v))}")
    out.append("")
    return out


def markdown_lines(e: Entry) -> list[str]:
    if e.kind == "turn":
        return [f"## {_md_inline(e.label)}", ""]
    where = f"seq {e.seq}" + (f" · step {e.turn}.{e.step}" if e.step is not None else "")
    out: list[str] = []
    if e.kind == "note":
        out.append(f"> **{_md_inline(e.label)}** ({where})")
        for _k, txt in e.blocks:
            for line in (txt or "").splitlines() or [""]:
                out.append(f"> {_md_text(line)}")
        out.append("")
        return out
    out += [f"### {_md_inline(e.label)} · {where}", ""]
    for k, txt in e.blocks:
        if k == "text":
            out += [_md_text(txt), ""]
        elif k == "reasoning":
            out += ["*reasoning:*", ""] + [f"> {_md_text(l)}" for l in (txt.splitlines() or [""])] + [""]
        elif k == "image":
            out += [f"*{_md_text(txt)}*", ""]
        else:
            f = _fence(txt)
            out += [f + ("text" if k == "code" else "error"), txt, f, ""]
    return out


def render_markdown(header: JsonObj, title: object, entries: list[Entry]) -> str:
    out = markdown_head(header, title)
    for e in entries:
        out += markdown_lines(e)
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- html

_CSS = """
body{font:14px/1.45 -apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;
color:#1d2125;background:#fafbfc}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #d0d7de;padding-bottom:.2em;margin-top:2em}
.meta{color:#57606a;font-size:.9em}.meta td{padding:0 1em 0 0}
.msg{border:1px solid #d0d7de;border-radius:6px;margin:.8em 0;background:#fff}
.msg .hd{padding:.3em .7em;font-weight:600;border-bottom:1px solid #eaeef2;display:flex;justify-content:space-between}
.msg .hd .w{font-weight:400;color:#57606a;font-size:.85em}
.msg.user .hd{background:#ddf4ff}.msg.assistant .hd{background:#dafbe1}.msg.tool .hd{background:#fff8c5}
.b{padding:.5em .7em;white-space:pre-wrap;word-wrap:break-word}
.reasoning{color:#57606a;font-style:italic;border-left:3px solid #d0d7de;margin:.4em .7em}
pre{background:#f6f8fa;margin:.4em .7em;padding:.5em;overflow:auto;white-space:pre-wrap;border-radius:4px}
pre.error{background:#ffebe9}
.note{color:#57606a;font-size:.9em;margin:.5em 0;padding:.3em .7em;border-left:3px solid #bf8700;background:#fff}
.note.model-only{border-left-color:#8250df}
.img{color:#57606a;font-style:italic}
"""



def html_head(header: JsonObj, title: object) -> list[str]:
    e_ = _html_escape
    sid = str(header.get("id", ""))
    parts = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">",
             "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
             f"<title>{e_(str(title or 'Session ' + sid))}</title>", f"<style>{_CSS}</style></head><body>",
             f"<h1>{e_(str(title or 'Session ' + sid))}</h1>", "<table class=\"meta\">"]
    for k in ("id", "createdAt", "cwd", "parentSession", "origin", "seedLength"):
        if header.get(k) is not None:
            v = (_fmt_time(header[k]) or header[k]) if k == "createdAt" else header[k]
            parts.append(f"<tr><td>{e_(k)}</td><td>{e_(str(v))}</td></tr>")
    parts.append("</table>")
    return parts


def html_lines(en: Entry) -> list[str]:
    e_ = _html_escape
    if en.kind == "turn":
        return [f"<h2>{e_(en.label)}</h2>"]
    where = f"seq {en.seq}" + (f" · step {en.turn}.{en.step}" if en.step is not None else "")
    parts: list[str] = []
    if en.kind == "note":
        cls = "note model-only" if en.role == "model-only" else "note"
        parts.append(f"<div class=\"{cls}\"><b>{e_(en.label)}</b> <span>({e_(where)})</span>")
        for _k, txt in en.blocks:
            parts.append(f"<div class=\"b\">{e_(txt or '')}</div>")
        parts.append("</div>")
        return parts
    role = en.role if en.role in ("user", "assistant", "tool") else "other"
    parts.append(f"<div class=\"msg {role}\"><div class=\"hd\"><span>{e_(en.label)}</span>"
                 f"<span class=\"w\">{e_(where)} {e_(_fmt_time(en.time))}</span></div>")
    for k, txt in en.blocks:
        if k == "text":
            parts.append(f"<div class=\"b\">{e_(txt)}</div>")
        elif k == "reasoning":
            parts.append(f"<div class=\"b reasoning\">{e_(txt)}</div>")
        elif k == "image":
            parts.append(f"<div class=\"b img\">{e_(txt)}</div>")
        else:
            parts.append(f"<pre class=\"{'error' if k == 'error' else 'code'}\">{e_(txt)}</pre>")
    parts.append("</div>")
    return parts


def render_html(header: JsonObj, title: object, entries: list[Entry]) -> str:
    parts = html_head(header, title)
    for en in entries:
        parts += html_lines(en)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


# --------------------------------------------------------------------------- streamed text

CHUNK_CHARS = 1 << 20


def transcript_text(reader: LogReader, fmt: str, redact: Optional[Redactor] = None, progress: Progress = None,
                    counter: Optional[list[int]] = None) -> Iterator[bytes]:
    """The Markdown or HTML text (``fmt``) in UTF-8 chunks of about :data:`CHUNK_CHARS` characters, the
    same text as :func:`render_markdown` / :func:`render_html` of :func:`build_transcript`;
    ``counter[0]`` counts the entries."""
    header, title, entries = transcript(reader, redact, progress)
    md = fmt == "markdown"
    lines_of: Callable[[Entry], list[str]] = markdown_lines if md else html_lines
    buf = markdown_head(header, title) if md else html_head(header, title)
    size = 0
    held = ""                # (Markdown) trailing whitespace not yet known to be followed by text
    n = 0
    for e in entries:
        n += 1
        lines = lines_of(e)
        buf += lines
        size += sum(map(len, lines))
        if size >= CHUNK_CHARS:
            text = "\n".join(buf) + "\n"
            buf, size = [], 0
            if md:
                body = text.rstrip()
                text, held = (held + body, text[len(body):]) if body else ("", held + text)
            if text:
                yield text.encode("utf-8")
    if counter is not None:
        counter[0] = n
    if md:
        text = (held + "\n".join(buf)).rstrip() + "\n"
    else:
        buf.append("</body></html>")
        text = "\n".join(buf) + "\n"
    yield text.encode("utf-8")

"""Exports of one session (no Qt): raw, logical JSONL, Markdown and HTML transcripts, dsh ZIP bundle.

Every file is written through :func:`app.store.publish.publish_file` (temp file, fsync,
link).  With ``redact=True`` secrets (API keys, tokens, bearer credentials, key=/token=
assignments, e-mail addresses, user home paths) are masked in every string of the
header and the event payloads, and a report ``<out>.redaction.json`` (counts per kind
and masked examples, never the secrets) is written beside the output.

Raw export: without ``redact`` the stored bytes, identical, plus ``<out>.sha256`` in
``sha256sum`` format.  **With ``redact`` the raw export is no longer byte-identical**: each
stored row is decoded, its strings redacted and the row re-encoded as plain JSONL (a zstd
store comes out decompressed; rows that are not JSON are redacted as text).

ZIP bundle (spec §9): the session's decoded JSONL text, then every descendant's under
``subagents/<id>/``, then each referenced image under ``media/``.  A text entry is named after its
generation without the compression suffix (``session.jsonl`` for v0, ``session.v4.jsonl`` for a
``session.v4.jsonl.zstd``), for the root and the descendants alike.

HTML is self-contained: inline CSS in one ``<style>`` element, no scripts, a
Content-Security-Policy that forbids them anyway, every piece of transcript text passed
through :func:`html.escape`, images shown as text placeholders only.
"""
from __future__ import annotations

import hashlib
import html
import json
import os
import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, UTC
from typing import Literal, NotRequired, Optional, TypedDict, Union, overload
from collections.abc import Callable, Iterator

import msgspec

from ..log.fold.attempts import AttemptTracker
from ..log.format.model import Event
from ..log.format.payloads import JsonObj, content_text, obj as _obj
from ..log.index.reader import LogReader
from ..log.format.versions import replace_bounds
from .publish import publish_file

FORMATS = ("raw", "logical", "markdown", "html", "zip")
_enc = msgspec.json.Encoder()


# --------------------------------------------------------------------------- results

class RedactionReport(TypedDict):
    """What a redacting export masked (``<out>.redaction.json``): counts and masked examples per kind."""
    total: int
    counts: dict[str, int]
    examples: dict[str, list[str]]
    note: str


class RawExport(TypedDict):
    out: str
    bytes: int
    sha256: str
    sidecar: str                 # ``<out>.sha256``
    byteIdentical: bool
    redaction: NotRequired[RedactionReport]
    report: NotRequired[str]     # ``<out>.redaction.json``


class LogicalExport(TypedDict):
    out: str
    events: int
    redaction: NotRequired[RedactionReport]
    report: NotRequired[str]


class TranscriptExport(TypedDict):
    out: str
    format: str                  # "markdown" | "html"
    entries: int
    bytes: int
    redaction: NotRequired[RedactionReport]
    report: NotRequired[str]


class ZipExport(TypedDict):
    out: str
    entries: list[str]           # names in the bundle, in order
    images: int
    problems: list[str]
    redaction: NotRequired[RedactionReport]
    report: NotRequired[str]


ExportResult = Union[RawExport, LogicalExport, TranscriptExport, ZipExport]


# --------------------------------------------------------------------------- redaction

def _mask(s: str, keep: int = 2) -> str:
    return (s[:keep] + "***") if len(s) > keep else "***"


@dataclass
class Redactor:
    """Masks secrets in strings; counts what it masked per kind (examples masked too)."""
    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)
    max_examples: int = 5

    # (kind, pattern, replacement function(match) -> (replacement, secret part))
    def __post_init__(self) -> None:
        self._rules: list[tuple[str, re.Pattern[str], Callable[[re.Match[str]], tuple[str, str]]]] = [
            ("private-key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
             lambda m: ("[REDACTED:private-key]", m.group(0)[11:])),
            ("bearer-token", re.compile(r"(?i)\b(Bearer|Basic)(\s+)([A-Za-z0-9._~+/=-]{8,})"),
             lambda m: (f"{m.group(1)}{m.group(2)}[REDACTED:bearer-token]", m.group(3))),
            ("api-key", re.compile(r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|"
                                   r"github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|"
                                   r"AIza[0-9A-Za-z_-]{35}|xox[abprs]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,})"),
             lambda m: ("[REDACTED:api-key]", m.group(0))),
            ("secret-assignment", re.compile(
                r"(?i)\b([A-Za-z0-9_.-]*(?:api[_-]?key|apikey|token|secret|passwd|password|access[_-]?key|"
                r"client[_-]?secret|auth)[A-Za-z0-9_.-]*)(\\?[\"']?\s*[=:]\s*\\?[\"']?)([^\s\"'\\&,;}\]]{4,})"),
             lambda m: (f"{m.group(1)}{m.group(2)}[REDACTED:secret]", m.group(3))),
            ("email", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
             lambda m: ("[REDACTED:email]", m.group(0))),
            ("home-path", re.compile(r"(/home/|/Users/|[A-Za-z]:\\\\?Users\\\\?)(?!\[user\])([^/\\\s\"'<>:*?|]+)"),
             lambda m: (f"{m.group(1)}[user]", m.group(0))),
        ]

    def text(self, s: str) -> str:
        if not s or not isinstance(s, str):
            return s
        for kind, rx, fn in self._rules:
            def sub(m: re.Match[str], kind: str = kind,
                    fn: Callable[[re.Match[str]], tuple[str, str]] = fn) -> str:
                if "[REDACTED:" in m.group(0):
                    return m.group(0)
                rep, secret = fn(m)
                self.counts[kind] = self.counts.get(kind, 0) + 1
                ex = self.examples.setdefault(kind, [])
                if len(ex) < self.max_examples:
                    ex.append(_mask(secret if kind != "home-path" else m.group(2)))
                return rep
            s = rx.sub(sub, s)
        return s

    @overload
    def obj(self, o: JsonObj) -> JsonObj: ...

    @overload
    def obj(self, o: object) -> object: ...

    def obj(self, o: object) -> object:
        """``o`` (decoded JSON) with every string in it redacted (a new copy; other values as they are)."""
        if isinstance(o, str):
            return self.text(o)
        if isinstance(o, list):
            return [self.obj(x) for x in o]
        if isinstance(o, dict):
            return {k: self.obj(v) for k, v in o.items()}
        return o

    def row(self, raw: bytes) -> bytes:
        """One stored JSON row, strings redacted, re-encoded (text-redacted when not JSON)."""
        try:
            return _enc.encode(self.obj(msgspec.json.decode(raw)))
        except (msgspec.DecodeError, msgspec.ValidationError):
            return self.text(raw.decode("utf-8", errors="replace")).encode("utf-8")

    def report(self) -> RedactionReport:
        return {"total": sum(self.counts.values()), "counts": dict(sorted(self.counts.items())),
                "examples": {k: list(v) for k, v in sorted(self.examples.items())},
                "note": "examples are masked; the secrets themselves are never written"}


def _write_report(out: str, red: Redactor, overwrite: bool) -> str:
    path = out + ".redaction.json"
    publish_file(path, [json.dumps(red.report(), indent=2).encode() + b"\n"], overwrite=overwrite, mode=0o644)
    return path


# --------------------------------------------------------------------------- raw / logical

def stored_rows(reader: LogReader) -> Iterator[bytes]:
    """Each stored row's bytes once (a packed row is one row), bad rows included, oldest first."""
    for it in reader.iter_items():
        if isinstance(it, Event) and it.member:
            continue
        yield it.raw


def readraw_text(reader: LogReader) -> Iterator[bytes]:
    """The decoded JSONL text of a session (spec ``readRaw``): stored bytes for JSONL files,
    the decompressed frames for zstd, header + rows for other backends."""
    if reader.source.kind == "jsonl":
        yield from reader.source.stored_bytes()
        return
    yield reader.source.header_raw + b"\n"
    for seg in reader.source.forward():
        if not getattr(seg, "bad", None) and getattr(seg, "data", None) is not None:
            yield seg.data
    # sources whose segments carry no text fall back to rows
    # (handled by callers via stored_rows when nothing but the header came out)


def _redacted_raw(reader: LogReader, red: Redactor) -> Iterator[bytes]:
    yield red.row(reader.source.header_raw) + b"\n"
    buf: list[bytes] = []
    for raw in stored_rows(reader):
        buf.append(red.row(raw))
        if len(buf) >= 2048:
            yield b"\n".join(buf) + b"\n"
            buf = []
    if buf:
        yield b"\n".join(buf) + b"\n"


def export_raw(reader: LogReader, out: str, redact: bool = False, overwrite: bool = False) -> RawExport:
    h = hashlib.sha256()
    n = 0
    red = Redactor() if redact else None
    src = _redacted_raw(reader, red) if red else reader.source.stored_bytes()

    def chunks() -> Iterator[bytes]:
        nonlocal n
        for c in src:
            h.update(c)
            n += len(c)
            yield c
    publish_file(out, chunks(), overwrite=overwrite, mode=0o644)
    digest = h.hexdigest()
    side = out + ".sha256"
    publish_file(side, [f"{digest}  {os.path.basename(out)}\n".encode()], overwrite=overwrite, mode=0o644)
    res: RawExport = {"out": out, "bytes": n, "sha256": digest, "sidecar": side, "byteIdentical": not redact}
    if red:
        res["redaction"] = red.report()
        res["report"] = _write_report(out, red, overwrite)
    return res


def export_logical(reader: LogReader, out: str, redact: bool = False, overwrite: bool = False) -> LogicalExport:
    red = Redactor() if redact else None
    count = 0

    def chunks() -> Iterator[bytes]:
        nonlocal count
        hdr = reader.source.header_raw
        yield (red.row(hdr) if red else hdr) + b"\n"
        buf: list[bytes] = []
        for ev in reader.iter_events(logical=True):
            env = ev.envelope()
            if red:
                env = red.obj(env)
            buf.append(_enc.encode(env))
            count += 1
            if len(buf) >= 4096:
                yield b"\n".join(buf) + b"\n"
                buf = []
        if buf:
            yield b"\n".join(buf) + b"\n"
    publish_file(out, chunks(), overwrite=overwrite, mode=0o644)
    res: LogicalExport = {"out": out, "events": count}
    if red:
        res["redaction"] = red.report()
        res["report"] = _write_report(out, red, overwrite)
    return res


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


def _blocks_of(message: JsonObj) -> list[Block]:
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


def build_transcript(reader: LogReader, redact: Optional[Redactor] = None) -> tuple[JsonObj, object, list[Entry]]:
    """(header dict, title, [Entry]) of the readable transcript (append-origin surface events,
    model-only replacements and failures/retries as notes).  The title is the last
    ``session/title`` payload's ``title`` as logged (None without one)."""
    header = _json_obj(reader.source.header_raw)
    if redact:
        header = redact.obj(header)
    entries: list[Entry] = []
    title: object = None
    at = AttemptTracker(keep_text=False)
    for ev in reader.iter_events(logical=True):
        at.apply(ev)
        d: JsonObj = ev.data if isinstance(ev.data, dict) else {}
        if redact:
            d = redact.obj(d)
        t, s = d.get("turn"), d.get("step")
        typ = ev.type
        if typ == "turn/start":
            entries.append(Entry("turn", ev.seq, label=f"Turn {t}", turn=t, time=ev.time))
        elif typ == "turn/end":
            reason = _obj(d.get("reason"))
            if reason.get("kind") not in (None, "completed") or reason.get("error"):
                err = reason.get("error")
                msg = err.get("message") if isinstance(err, dict) else (err or "")
                entries.append(Entry("note", ev.seq, role="system", label=f"turn {t} ended: {reason.get('kind')}",
                                     turn=t, time=ev.time, blocks=[("error", str(msg))] if msg else []))
        elif typ == "session/title":
            title = d.get("title", title)
        elif typ in ("user/message", "assistant/message", "tool/result") and ev.surface_op is not None:
            msg = d if typ == "user/message" else _obj(d.get("message"))
            role = {"user/message": "user", "assistant/message": "assistant", "tool/result": "tool"}[typ]
            src = _obj(msg.get("source"))
            label = role
            if src.get("kind") and src.get("kind") not in ("user", "model", "tool"):
                label += f" ({src.get('kind')}{':' + str(src.get('plugin')) if src.get('plugin') else ''})"
            if ev.is_replace:
                op = ev.surface_op
                entries.append(Entry("note", ev.seq, role="model-only", turn=t, step=s, time=ev.time,
                                     label=f"model-only replacement of seqs {'–'.join(map(str, replace_bounds(op)))} ({role})",
                                     blocks=_blocks_of(msg)))
                continue
            if typ == "assistant/message" and d.get("interrupted"):
                label += " (interrupted)"
            if typ == "assistant/message" and not msg.get("content"):
                label += " (no content)"
            entries.append(Entry("message", ev.seq, role=role, label=label, turn=t, step=s, time=ev.time,
                                 blocks=_blocks_of(msg)))
        elif typ == "llm/retry":
            f = _obj(d.get("failure"))
            entries.append(Entry("note", ev.seq, role="system", turn=t, step=s, time=ev.time,
                                 label=f"retry {d.get('retry')} scheduled after {f.get('code') or 'failure'}"
                                       f" (delay {d.get('delayMs')} ms)"))
        elif typ == "compaction/summary":
            from ..log.fold.surface import summary_text
            text = summary_text(d.get("summary"))
            entries.append(Entry("note", ev.seq, role="system", turn=t, time=ev.time,
                                 label=f"compaction summary {d.get('compactionId', '')}",
                                 blocks=[("text", text)] if text else []))
        elif typ.startswith("compaction/") and typ in ("compaction/start", "compaction/end"):
            entries.append(Entry("note", ev.seq, role="system", turn=t, time=ev.time,
                                 label=f"{typ} {d.get('compactionId', '')}"))
    for a in at.attempts:
        if a.failed:
            fail = a.failure or {}
            why = fail.get("message") or ""
            if redact:
                why = redact.obj(why)
            entries.append(Entry("note", a.last_seq, role="system", turn=a.turn, step=a.step,
                                 label=f"attempt {a.first_seq}–{a.last_seq} failed: {fail.get('code') or a.finish_kind}",
                                 blocks=[("error", str(why))] if why else []))
    entries.sort(key=lambda e: (e.seq, 0 if e.kind == "turn" else 1))
    return header, title, entries


def _json_obj(raw: bytes) -> JsonObj:
    """A stored header row as a dict (``{}`` when there is none)."""
    if not raw:
        return {}
    return _obj(json.loads(raw))


def _fmt_time(ms: object) -> str:
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
    return _MD_LINK.sub(r"\\\1", html.escape(s, quote=False))


def _md_inline(s: object) -> str:
    """One-line Markdown text (header fields, labels): a newline cannot start a heading or list."""
    return _md_text(" ".join(str(s).split("\n")).replace("\r", " "))


def _fence(s: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    return "`" * max(3, longest + 1)


def render_markdown(header: JsonObj, title: object, entries: list[Entry]) -> str:
    sid = str(header.get("id", ""))
    out = [f"# {_md_inline(str(title or 'Session ' + sid))}", ""]
    out.append(f"- session: `{_md_inline(sid).replace('`', '')}`")
    for k in ("createdAt", "cwd", "parentSession", "origin", "seedLength"):
        if header.get(k) is not None:
            v = _fmt_time(header[k]) or header[k] if k == "createdAt" else header[k]
            out.append(f"- {k}: {_md_inline(str(v))}")
    out.append("")
    for e in entries:
        if e.kind == "turn":
            out += [f"## {_md_inline(e.label)}", ""]
            continue
        where = f"seq {e.seq}" + (f" · step {e.turn}.{e.step}" if e.step is not None else "")
        if e.kind == "note":
            out.append(f"> **{_md_inline(e.label)}** ({where})")
            for _k, txt in e.blocks:
                for line in (txt or "").splitlines() or [""]:
                    out.append(f"> {_md_text(line)}")
            out.append("")
            continue
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


def render_html(header: JsonObj, title: object, entries: list[Entry]) -> str:
    e_ = html.escape
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
    for en in entries:
        if en.kind == "turn":
            parts.append(f"<h2>{e_(en.label)}</h2>")
            continue
        where = f"seq {en.seq}" + (f" · step {en.turn}.{en.step}" if en.step is not None else "")
        if en.kind == "note":
            cls = "note model-only" if en.role == "model-only" else "note"
            parts.append(f"<div class=\"{cls}\"><b>{e_(en.label)}</b> <span>({e_(where)})</span>")
            for _k, txt in en.blocks:
                parts.append(f"<div class=\"b\">{e_(txt or '')}</div>")
            parts.append("</div>")
            continue
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
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def export_transcript(reader: LogReader, out: str, fmt: str = "markdown", redact: bool = False,
                      overwrite: bool = False) -> TranscriptExport:
    red = Redactor() if redact else None
    header, title, entries = build_transcript(reader, red)
    text = render_markdown(header, title, entries) if fmt == "markdown" else render_html(header, title, entries)
    data = text.encode("utf-8")
    publish_file(out, [data], overwrite=overwrite, mode=0o644)
    res: TranscriptExport = {"out": out, "format": fmt, "entries": len(entries), "bytes": len(data)}
    if red:
        res["redaction"] = red.report()
        res["report"] = _write_report(out, red, overwrite)
    return res


# --------------------------------------------------------------------------- zip bundle

MEDIA_EXT = {"image/png": "png", "image/jpeg": "jpg", "image/jpg": "jpg", "image/webp": "webp", "image/gif": "gif"}


def sanitize_id(sid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", sid or "")


def _images_in(obj: object, out: dict[str, object]) -> None:
    """Each image attachment under ``obj`` once: attachmentId -> mediaType as logged."""
    if isinstance(obj, dict):
        if obj.get("type") == "image" and isinstance(obj.get("attachment"), dict):
            a = obj["attachment"]
            aid = a.get("attachmentId")
            if isinstance(aid, str) and aid not in out:
                out[aid] = a.get("mediaType")
        for v in obj.values():
            _images_in(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _images_in(v, out)


def find_home(session_path: str) -> Optional[str]:
    """The Harness home holding ``attachments/`` above a session file (else $DSH_HOME / ~/.dsh)."""
    p = os.path.dirname(os.path.abspath(session_path))
    while True:
        if os.path.isdir(os.path.join(p, "attachments")):
            return p
        up = os.path.dirname(p)
        if up == p:
            break
        p = up
    from .discovery import harness_home
    h = str(harness_home())
    return h if os.path.isdir(os.path.join(h, "attachments")) else None


def attachment_object(home: Optional[str], attachment_id: str) -> Optional[str]:
    """``<home>/attachments/v1/objects/<prefix>/<sha256>`` (prefix: the digest's first two hex digits;
    any one-level prefix directory holding the digest is accepted)."""
    if not home:
        return None
    hexd = attachment_id.split(":", 1)[1] if attachment_id.startswith("sha256:") else attachment_id
    if not re.fullmatch(r"[0-9a-fA-F]{64}", hexd):
        return None
    base = os.path.join(home, "attachments", "v1", "objects")
    cand = os.path.join(base, hexd[:2], hexd)
    if os.path.isfile(cand):
        return cand
    try:
        for d in os.listdir(base):
            c = os.path.join(base, d, hexd)
            if os.path.isfile(c):
                return c
    except OSError:
        pass
    return None


def bundle_name(reader: LogReader) -> str:
    """The name of a session's text in the ZIP bundle: its generation's file name without the
    compression suffix, since the entry holds the decoded JSONL text (dsh's ``readRaw``), so
    ``session.v4.jsonl`` for ``session.v4.jsonl.zstd`` and ``session.jsonl`` for v0.  The version
    is the file name's (``session.1.jsonl``-style sibling copies count as ``session.jsonl``), or
    the header's when the log has no generation file name (a SQLite session, a renamed file)."""
    from .discovery import parse_generation
    g = parse_generation(os.path.basename(reader.path))
    if g is not None:
        version = int(g[1])
    else:
        version = (reader.header.version or 0) if reader.header is not None else 0
    return "session.jsonl" if version == 0 else f"session.v{version}.jsonl"


def export_zip(reader: LogReader, out: str, home: Optional[str] = None, redact: bool = False, level: int = 6,
               include_descendants: bool = True, overwrite: bool = False) -> ZipExport:
    """The dsh session export bundle (spec §9)."""
    from ..log.query.trace import flatten_descendants
    from .lineage import trace_session
    from .faces import open_reader
    sid = reader.header.id if reader.header else "session"
    if out.endswith(os.sep) or os.path.isdir(out):
        out = os.path.join(out, f"dsh-session-{sanitize_id(sid)}.zip")
    red = Redactor() if redact else None
    members: list[tuple[str, LogReader]] = []
    problems: list[str] = []
    members.append((bundle_name(reader), reader))
    opened: list[LogReader] = []
    if include_descendants:
        try:
            lineage = trace_session(reader.path)
            seen = {sid}
            for node in flatten_descendants(lineage["descendants"]):
                if node["id"] in seen:
                    continue
                seen.add(node["id"])
                r = open_reader(node["path"])
                opened.append(r)
                members.append((f"subagents/{sanitize_id(node['id'])}/{bundle_name(r)}", r))
        except Exception as e:  # lineage problems do not stop the root export
            problems.append(f"descendants: {e}")
    home = home or find_home(reader.path)
    images: dict[str, object] = {}
    spool = tempfile.SpooledTemporaryFile(max_size=64 << 20)
    names: list[str] = []
    try:
        with zipfile.ZipFile(spool, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=level) as zf:
            for name, r in members:
                with zf.open(_zinfo(name, level), "w", force_zip64=True) as w:
                    if red:
                        for c in _redacted_raw(r, red):
                            w.write(c)
                    else:
                        for c in readraw_text(r):
                            w.write(c)
                names.append(name)
                for ev in r.iter_events(logical=False):
                    if ev.type in ("user/message", "assistant/message", "tool/result"):
                        _images_in(ev.data, images)
            for aid, mt in images.items():
                path = attachment_object(home, aid)
                if path is None:
                    problems.append(f"image {aid}: no object under {home or '(no home)'}/attachments/v1/objects")
                    continue
                ext = MEDIA_EXT.get(str(mt).lower(), "png")
                # attachment_object only resolves ``sha256:<64 hex>`` ids, so the name is safe as is
                name = f"media/{aid}.{ext}"
                with open(path, "rb") as f:
                    zf.writestr(_zinfo(name, level), f.read())
                names.append(name)
        spool.seek(0)

        def chunks() -> Iterator[bytes]:
            while True:
                b = spool.read(1 << 20)
                if not b:
                    break
                yield b
        publish_file(out, chunks(), overwrite=overwrite, mode=0o644)
    finally:
        spool.close()
        for r in opened:
            try:
                r.close()
            except Exception:
                pass
    res: ZipExport = {"out": out, "entries": names, "images": len([n for n in names if n.startswith("media/")]),
                      "problems": problems}
    if red:
        res["redaction"] = red.report()
        res["report"] = _write_report(out, red, overwrite)
    return res


def _zinfo(name: str, level: int) -> zipfile.ZipInfo:
    zi = zipfile.ZipInfo(name, date_time=_zip_time())
    zi.compress_type = zipfile.ZIP_DEFLATED
    for attr in ("compress_level", "_compresslevel"):   # 3.13+ / 3.11-3.12 spelling
        if attr in getattr(zipfile.ZipInfo, "__slots__", ()) or hasattr(zi, attr):
            setattr(zi, attr, level)
            break
    zi.external_attr = 0o644 << 16
    return zi


def _zip_time() -> tuple[int, int, int, int, int, int]:
    t = datetime.now().timetuple()
    return (max(1980, t.tm_year), t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)


# --------------------------------------------------------------------------- dispatcher

def refuse_source(reader: LogReader, out: str) -> None:
    """An export never replaces the log it reads (even with ``--force``)."""
    from .publish import PublishError
    src: Optional[str] = getattr(reader.source, "path", None)
    try:
        same = bool(src) and os.path.exists(out) and os.path.samefile(out, src or "")
    except OSError:
        same = False
    if same:
        raise PublishError(f"{out} is the session being exported: an export never replaces its source")


def export(reader: LogReader, fmt: str, out: str, redact: bool = False, overwrite: bool = False,
           home: Optional[str] = None) -> ExportResult:
    refuse_source(reader, out)
    if fmt == "raw":
        return export_raw(reader, out, redact=redact, overwrite=overwrite)
    if fmt == "logical":
        return export_logical(reader, out, redact=redact, overwrite=overwrite)
    if fmt in ("markdown", "md", "html"):
        return export_transcript(reader, out, "html" if fmt == "html" else "markdown", redact=redact,
                                 overwrite=overwrite)
    if fmt == "zip":
        return export_zip(reader, out, home=home, redact=redact, overwrite=overwrite)
    raise ValueError(f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")

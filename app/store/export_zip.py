"""The dsh session export bundle (spec §9) as a ZIP file (no Qt).

The session's decoded JSONL text, then every descendant's under ``subagents/<id>/``, then each
referenced image under ``media/``.  A text entry is named after its generation without the compression
suffix (``session.jsonl`` for v0, ``session.v4.jsonl`` for a ``session.v4.jsonl.zstd``), for the root and
the descendants alike.  Entry names are safe on every filesystem a bundle is unpacked on: each
component is at most :data:`MAX_COMPONENT` bytes and never empty, and no two names differ only in case
(:class:`EntryNames`: an id that would collide, or is empty or long, gets a digest of itself).
The archive is built in a spooled temporary (:data:`SPOOL_BYTES` in memory at most) and published
atomically; with ``redact`` every row is re-encoded with its strings masked (a row over a row limit,
e.g. nested too deeply to decode, is masked as text).
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
import zipfile
from datetime import datetime
from typing import NotRequired, Optional, TypedDict
from collections.abc import Callable, Iterator

from ..log.index.reader import LogReader
from .export_rows import Progress, exact_events, logical_rows
from .publish import publish_file
from .redact import RedactionReport, Redactor

MEDIA_EXT = {"image/png": "png", "image/jpeg": "jpg", "image/jpg": "jpg", "image/webp": "webp", "image/gif": "gif"}
MAX_COMPONENT = 255              # bytes of one path component (ext4, APFS, NTFS limits)
SPOOL_BYTES = 8 << 20
PIECE = 64 << 10                 # bytes compressed between two progress reports


class ZipExport(TypedDict):
    out: str
    entries: list[str]           # names in the bundle, in order
    images: int
    problems: list[str]
    redaction: NotRequired[RedactionReport]
    report: NotRequired[str]


def sanitize_id(sid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", sid or "")


def _digest(s: str) -> str:
    return hashlib.sha256(s.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class EntryNames:
    """Unique, short, non-empty folder names for session ids (compared case-insensitively)."""

    LONG = 96                    # ids longer than this (sanitised) are cut and given a digest

    def __init__(self) -> None:
        self._used: set[str] = set()

    def folder(self, sid: str) -> str:
        base = sanitize_id(sid)
        name = base
        if not base or len(base) > self.LONG or base.lower() in self._used:
            name = f"{base[:self.LONG]}-{_digest(sid)}" if base else f"id-{_digest(sid)}"
        k = 2
        stem = name
        while name.lower() in self._used:
            name = f"{stem}-{k}"
            k += 1
        self._used.add(name.lower())
        return name


def bundle_file_name(sid: str) -> str:
    """``dsh-session-<id>.zip`` for a folder destination (one component of at most :data:`MAX_COMPONENT` bytes)."""
    base = sanitize_id(sid) or "session"
    if len(base) > EntryNames.LONG:
        base = f"{base[:EntryNames.LONG]}-{_digest(sid)}"
    return f"dsh-session-{base}.zip"


def _images_in(obj: object, out: dict[str, object]) -> None:
    """Each image attachment under ``obj`` once: attachmentId -> mediaType as logged (an explicit stack:
    any depth)."""
    todo = [obj]
    while todo:
        o = todo.pop()
        if isinstance(o, dict):
            if o.get("type") == "image" and isinstance(o.get("attachment"), dict):
                a = o["attachment"]
                aid = a.get("attachmentId")
                if isinstance(aid, str) and aid not in out:
                    out[aid] = a.get("mediaType")
            todo.extend(reversed(list(o.values())))
        elif isinstance(o, list):
            todo.extend(reversed(o))


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


def stored_rows(reader: LogReader) -> Iterator[bytes]:
    """Each stored row's bytes once (a packed row is one row), bad rows included, oldest first: the raw
    bytes of every item :meth:`~app.log.index.reader.LogReader.iter_items` gives, read without decoding."""
    for seg in reader.source.forward():
        if seg.bad:
            yield seg.data
            continue
        for _pos, _off, _line, raw, complete in seg.split_rows():
            if complete or raw:
                yield raw


def redacted_raw(reader: LogReader, red: Redactor) -> Iterator[bytes]:
    yield red.row(reader.source.header_raw) + b"\n"
    buf: list[bytes] = []
    row = red.row
    for raw in stored_rows(reader):
        buf.append(row(raw))
        if len(buf) >= 64:
            yield b"\n".join(buf) + b"\n"
            buf = []
    if buf:
        yield b"\n".join(buf) + b"\n"


def _members(reader: LogReader, sid: str, problems: list[str],
             opened: list[LogReader]) -> list[tuple[str, LogReader]]:
    from ..log.query.trace import flatten_descendants
    from .faces import open_reader
    from .lineage import trace_session
    members = [(bundle_name(reader), reader)]
    names = EntryNames()
    try:
        lineage = trace_session(reader.path)
        seen = {sid}
        for node in flatten_descendants(lineage["descendants"]):
            if node["id"] in seen:
                continue
            seen.add(node["id"])
            r = open_reader(node["path"])
            opened.append(r)
            members.append((f"subagents/{names.folder(str(node['id']))}/{bundle_name(r)}", r))
    except Exception as e:  # lineage problems do not stop the root export
        problems.append(f"descendants: {e}")
    return members


def write_bundle(out: str, members: list[tuple[str, LogReader]], home: Optional[str], red: Optional[Redactor],
                 level: int, overwrite: bool, problems: list[str], progress: Progress = None) -> list[str]:
    """Write the bundle of ``members`` (entry name, reader) and their images to ``out``; the entry names."""
    images: dict[str, object] = {}
    names: list[str] = []
    total = max(1, 2 * sum(max(0, r.source.size) for _n, r in members))
    done = 0
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
    try:
        with zipfile.ZipFile(spool, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=level) as zf:
            for name, r in members:
                size = max(0, r.source.size)
                with zf.open(_zinfo(name, level), "w", force_zip64=True) as w:
                    got = 0
                    for c in (redacted_raw(r, red) if red else readraw_text(r)):
                        for k in range(0, len(c), PIECE):         # (a progress report, a cancellation point)
                            w.write(c[k:k + PIECE])
                            got += min(PIECE, len(c) - k)
                            if progress:
                                progress(done + min(got, size), total)
                names.append(name)
                done += size
                scan = (lambda d, t, base=done, size=size: progress(base + min(d, size), total)) if progress else None
                _scan_images(r, images, scan)
                done += size
            _add_images(zf, images, home, level, names, problems)
        spool.seek(0)
        publish_file(out, _read_chunks(spool), overwrite=overwrite, mode=0o644)
    finally:
        spool.close()
    if progress:
        progress(total, total)
    return names


def _scan_images(r: LogReader, images: dict[str, object], progress: Progress) -> None:
    """Each image attachment of ``r``'s messages (physical face) into ``images``: only rows that can hold
    one (a ``"image"`` string, or any ``\\u`` escape) are decoded."""
    for row in logical_rows(r, progress, logical=False):
        raw = row[3]
        if b'"image"' not in raw and b"\\u" not in raw:
            continue
        for ev in exact_events(r, row):
            if ev.type in ("user/message", "assistant/message", "tool/result"):
                _images_in(ev.data, images)


def _add_images(zf: zipfile.ZipFile, images: dict[str, object], home: Optional[str], level: int,
                names: list[str], problems: list[str]) -> None:
    seen: set[str] = set()
    for aid, mt in images.items():
        path = attachment_object(home, aid)
        if path is None:
            problems.append(f"image {aid}: no object under {home or '(no home)'}/attachments/v1/objects")
            continue
        ext = MEDIA_EXT.get(str(mt).lower(), "png")
        # attachment_object only resolves ``sha256:<64 hex>`` ids: the name is safe and short; ids that
        # differ only in the case of their hex digits name one object, stored once
        name = f"media/{aid.lower()}.{ext}"
        if name in seen:
            continue
        seen.add(name)
        with open(path, "rb") as f:
            zf.writestr(_zinfo(name, level), f.read())
        names.append(name)


def _read_chunks(f: tempfile.SpooledTemporaryFile[bytes]) -> Iterator[bytes]:
    while True:
        b = f.read(1 << 20)
        if not b:
            break
        yield b


def export_zip(reader: LogReader, out: str, home: Optional[str] = None, redact: bool = False, level: int = 6,
               include_descendants: bool = True, overwrite: bool = False, progress: Progress = None,
               write_report: Optional[Callable[[str, Redactor, bool], str]] = None) -> ZipExport:
    """The dsh session export bundle (spec §9)."""
    sid = reader.header.id if reader.header else "session"
    if out.endswith(os.sep) or os.path.isdir(out):
        out = os.path.join(out, bundle_file_name(sid))
    red = Redactor() if redact else None
    problems: list[str] = []
    opened: list[LogReader] = []
    try:
        members = _members(reader, sid, problems, opened) if include_descendants else [(bundle_name(reader), reader)]
        names = write_bundle(out, members, home or find_home(reader.path), red, level, overwrite, problems, progress)
    finally:
        for r in opened:
            try:
                r.close()
            except Exception:
                pass
    res: ZipExport = {"out": out, "entries": names, "images": len([n for n in names if n.startswith("media/")]),
                      "problems": problems}
    if red and write_report is not None:
        res["redaction"] = red.report()
        res["report"] = write_report(out, red, overwrite)
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

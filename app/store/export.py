"""Exports of one session (no Qt): raw, logical JSONL, Markdown and HTML transcripts, dsh ZIP bundle.

Every export streams: it reads the log once or twice front to back and hands the text to
:func:`app.store.publish.publish_file` (temp file, fsync, link) in chunks, holding no more than a chunk,
whatever the size of the log.  ``progress(done, total)`` (bytes of the log) is called as it goes; an
exception raised by it (a cancelled job) stops the export and removes the temporary file, so nothing
half-written is ever published.

With ``redact=True`` secrets (API keys, tokens, bearer credentials, key=/token= assignments, e-mail
addresses, user home paths) are masked in every string written (:mod:`app.store.redact`), and a report
``<out>.redaction.json`` (counts per kind and masked examples, never the secrets) is written beside
the output.

Raw export: without ``redact`` the stored bytes, identical (copied by the kernel), plus ``<out>.sha256``
in ``sha256sum`` format.  **With ``redact`` the raw export is no longer byte-identical**: each stored row
is decoded, its strings redacted and the row re-encoded as plain JSONL (a zstd store comes out
decompressed; rows that are not JSON are redacted as text).

Logical export: the header, then one envelope per event of the logical face (packed rows expanded,
the repair cut and closure applied): :func:`app.store.export_rows.logical_jsonl`.
Markdown and HTML: :mod:`app.store.export_transcript`.  ZIP bundle (spec §9): :mod:`app.store.export_zip`.
"""
from __future__ import annotations

import hashlib
import json
import os
from typing import NotRequired, Optional, Protocol, TypedDict, Union
from collections.abc import Iterator

from ..log.gcpause import collector_paused
from ..log.index.reader import LogReader
from .export_rows import Progress, logical_jsonl
from .export_transcript import (Entry, message_blocks, build_transcript, render_html, render_markdown,  # noqa: F401
                                transcript_text)
from .export_zip import (MEDIA_EXT, ZipExport, attachment_object, bundle_name, export_zip as _export_zip,  # noqa: F401
                         find_home, readraw_text, redacted_raw, sanitize_id, stored_rows)
from .publish import publish_file
from .redact import RedactionReport, Redactor

FORMATS = ("raw", "logical", "markdown", "html", "zip")
__all__ = ["FORMATS", "Redactor", "RedactionReport", "RawExport", "LogicalExport", "TranscriptExport", "ZipExport",
           "ExportResult", "export", "export_raw", "export_logical", "export_transcript", "export_zip",
           "refuse_source", "sanitize_id", "build_transcript", "render_markdown", "render_html", "Entry",
           "bundle_name", "find_home", "attachment_object", "readraw_text", "stored_rows", "MEDIA_EXT"]


# --------------------------------------------------------------------------- results

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


ExportResult = Union[RawExport, LogicalExport, TranscriptExport, ZipExport]


def _write_report(out: str, red: Redactor, overwrite: bool) -> str:
    path = out + ".redaction.json"
    publish_file(path, [json.dumps(red.report(), indent=2).encode() + b"\n"], overwrite=overwrite, mode=0o644)
    return path


class _Hash(Protocol):
    """What :func:`_counted` needs of a ``hashlib`` hash object."""
    def update(self, data: bytes, /) -> None: ...


def _counted(chunks: Iterator[bytes], total: int, progress: Progress, h: Optional[_Hash] = None,
             n: Optional[list[int]] = None) -> Iterator[bytes]:
    """``chunks`` passed on, hashed into ``h`` and counted into ``n[0]``; progress by the bytes passed."""
    got = 0
    for c in chunks:
        if h is not None:
            h.update(c)
        got += len(c)
        if progress:
            progress(min(got, total), total)
        yield c
    if n is not None:
        n[0] = got


# --------------------------------------------------------------------------- raw / logical

def export_raw(reader: LogReader, out: str, redact: bool = False, overwrite: bool = False,
               progress: Progress = None) -> RawExport:
    h = hashlib.sha256()
    n = [0]
    red = Redactor() if redact else None
    total = max(1, reader.source.size)
    if red:
        src = redacted_raw(reader, red)
    else:
        src = reader.source.stored_bytes()
    publish_file(out, _counted(src, total, progress, h, n), overwrite=overwrite, mode=0o644)
    digest = h.hexdigest()
    side = out + ".sha256"
    publish_file(side, [f"{digest}  {os.path.basename(out)}\n".encode()], overwrite=overwrite, mode=0o644)
    res: RawExport = {"out": out, "bytes": n[0], "sha256": digest, "sidecar": side, "byteIdentical": not redact}
    if red:
        res["redaction"] = red.report()
        res["report"] = _write_report(out, red, overwrite)
    return res


def export_logical(reader: LogReader, out: str, redact: bool = False, overwrite: bool = False,
                   progress: Progress = None) -> LogicalExport:
    red = Redactor() if redact else None
    count = [0]
    publish_file(out, logical_jsonl(reader, red, progress, count), overwrite=overwrite, mode=0o644)
    res: LogicalExport = {"out": out, "events": count[0]}
    if red:
        res["redaction"] = red.report()
        res["report"] = _write_report(out, red, overwrite)
    return res


# --------------------------------------------------------------------------- transcripts, zip

def export_transcript(reader: LogReader, out: str, fmt: str = "markdown", redact: bool = False,
                      overwrite: bool = False, progress: Progress = None) -> TranscriptExport:
    red = Redactor() if redact else None
    entries = [0]
    size = [0]
    text = transcript_text(reader, fmt, red, progress, entries)
    publish_file(out, _counted(text, 1 << 62, None, None, size), overwrite=overwrite, mode=0o644)
    res: TranscriptExport = {"out": out, "format": fmt, "entries": entries[0], "bytes": size[0]}
    if red:
        res["redaction"] = red.report()
        res["report"] = _write_report(out, red, overwrite)
    return res


def export_zip(reader: LogReader, out: str, home: Optional[str] = None, redact: bool = False, level: int = 6,
               include_descendants: bool = True, overwrite: bool = False, progress: Progress = None) -> ZipExport:
    """The dsh session export bundle (spec §9): :func:`app.store.export_zip.export_zip`."""
    return _export_zip(reader, out, home=home, redact=redact, level=level, include_descendants=include_descendants,
                       overwrite=overwrite, progress=progress, write_report=_write_report)


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
           home: Optional[str] = None, progress: Progress = None) -> ExportResult:
    """The export of ``reader`` in ``fmt`` to ``out``, with the cyclic collector held off
    (:func:`~app.log.gcpause.collector_paused`: rows decoded by the million, no cycles)."""
    refuse_source(reader, out)
    with collector_paused():
        return _export(reader, fmt, out, redact, overwrite, home, progress)


def _export(reader: LogReader, fmt: str, out: str, redact: bool, overwrite: bool, home: Optional[str],
            progress: Progress) -> ExportResult:
    if fmt == "raw":
        return export_raw(reader, out, redact=redact, overwrite=overwrite, progress=progress)
    if fmt == "logical":
        return export_logical(reader, out, redact=redact, overwrite=overwrite, progress=progress)
    if fmt in ("markdown", "md", "html"):
        return export_transcript(reader, out, "html" if fmt == "html" else "markdown", redact=redact,
                                 overwrite=overwrite, progress=progress)
    if fmt == "zip":
        return export_zip(reader, out, home=home, redact=redact, overwrite=overwrite, progress=progress)
    raise ValueError(f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")

"""The reader's envelope probes: the fast envelope decode the index scans with, the v0/v1 legacy-row
probe a fork uses, and the test of an envelope-free dsh test snapshot (split out of :mod:`.reader`).

Nothing here builds a payload: these decoders read ``type``/``seq``/``seq0`` and a packed row's ``dt``
length (plus, for the legacy probe, which data keys are present).
"""
from __future__ import annotations

from typing import Optional, Union

import msgspec

from ..format.codec import decode_js
from ..format.limits import SCAN_MEMBERS
from ..format.model import MAX_SAFE_INT
from ..format.payloads import JsonList
from ..source.sources import RawJsonlSource, Source

# one stored row as the index scans it: (type or packed tag, first seq, members); (None, None, 0) unreadable
RowExtent = tuple[Optional[str], Optional[int], int]


# fast envelope decoding for the index (payloads are skipped, not built)
class ScanData(msgspec.Struct):
    dt: Optional[JsonList] = None


class ScanRowFast(msgspec.Struct):
    type: str
    seq: Optional[int] = None
    seq0: Optional[int] = None
    data: Optional[ScanData] = None


scan_lines_fast = msgspec.json.Decoder(ScanRowFast).decode_lines


# v0/v1 only: the same envelope scan, plus the data keys that tell a legacy-shape row (spec §1.7),
# so a fork knows which segments hold rows it must store converted without reading the others
_RawOrUnset = Union[msgspec.Raw, msgspec.UnsetType]


class ProbeData(msgspec.Struct):
    dt: Optional[JsonList] = None
    id: _RawOrUnset = msgspec.UNSET
    message: _RawOrUnset = msgspec.UNSET
    content: _RawOrUnset = msgspec.UNSET
    callId: _RawOrUnset = msgspec.UNSET
    trigger: _RawOrUnset = msgspec.UNSET
    reason: _RawOrUnset = msgspec.UNSET


class ProbeRow(msgspec.Struct):
    type: str
    seq: Optional[int] = None
    seq0: Optional[int] = None
    data: Optional[ProbeData] = None


scan_lines_probe = msgspec.json.Decoder(ProbeRow).decode_lines


LEGACY_TYPES = frozenset({"steering/message", "user/message", "assistant/message", "tool/result", "turn/start",
                           "turn/end"})


def maybe_legacy(r: ProbeRow) -> bool:
    """A row that may read in a legacy shape (over-approximate; the codec decides)."""
    t, d = r.type, r.data
    if t == "steering/message":
        return True
    if d is None:
        return False
    if t == "user/message":
        return d.id is msgspec.UNSET
    if t == "assistant/message":
        return d.message is msgspec.UNSET and d.content is not msgspec.UNSET
    if t == "tool/result":
        return d.message is msgspec.UNSET and d.callId is not msgspec.UNSET
    if t == "turn/start":
        return d.trigger is not msgspec.UNSET
    if t == "turn/end":
        reason = d.reason
        return reason is msgspec.UNSET or not bytes(reason).startswith(b"{") or (any(
            k in bytes(reason) for k in (b"aborted", b"disposed", b"error")) and legacy_reason(bytes(reason)))
    return False


class ReasonProbe(msgspec.Struct):
    kind: Optional[str] = None          # (another type: a validation error, so "maybe")
    reason: _RawOrUnset = msgspec.UNSET
    error: _RawOrUnset = msgspec.UNSET


def legacy_reason(raw: bytes) -> bool:
    """A ``turn/end`` reason object the codec converts (spec §1.7): ``aborted`` without its own
    reason, ``disposed``, or ``error`` whose error is a string (anything undecodable: maybe)."""
    try:
        r = msgspec.json.decode(raw, type=ReasonProbe)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return True
    return (r.kind == "aborted" and r.reason is msgspec.UNSET) or r.kind == "disposed" or (
        r.kind == "error" and r.error is not msgspec.UNSET and bytes(r.error).lstrip().startswith(b'"'))


def row_extent(r: Union[ScanRowFast, ProbeRow]) -> RowExtent:
    """A scanned envelope's (type, first seq, members); (None, None, 0) for one the codec reads as a bad row."""
    if r.seq0 is not None and r.type.endswith("-chunks"):
        n = (len(r.data.dt) + 1) if r.data is not None and r.data.dt is not None else 1
        if n > SCAN_MEMBERS or not 0 <= r.seq0 <= MAX_SAFE_INT - n:
            return None, None, 0              # the codec reads it as a bad row too
        # (over Session Lens's member limit: counted here, so contiguity holds; the codec says why it
        # does not expand it)
        return r.type, r.seq0, n
    if r.seq is not None and not 0 <= r.seq <= MAX_SAFE_INT:
        return None, None, 0
    return r.type, r.seq, 1


def envelope_free_seqs(src: Source) -> Optional[dict[object, int]]:
    """A dsh test snapshot omits seq/time on every row (spec-versions §0.1): restore them as
    dsh's test readers do (seq = running logical index, time = 0).  Only when NO event row
    has an envelope; a store with some bad rows keeps the store rules.  Returns the restored seq of each
    row position, or None for a log with envelopes."""
    if not isinstance(src, RawJsonlSource) or src.size <= src.header_end:
        return None                         # snapshots are plain JSONL; stores always have envelopes
    first = src.pread(min(65536, src.size - src.header_end), src.header_end)
    first = first.split(b"\n", 1)[0].strip()
    if b'"seq' in first[:160]:
        return None                         # dsh writes type, seq, time, data: an envelope
    if not first:
        return None
    try:
        head = decode_js(first)
    except (msgspec.DecodeError, RecursionError):
        return None                         # a first row longer than 64 KiB or not JSON: not a snapshot
    if not isinstance(head, dict) or "seq" in head or "seq0" in head:
        return None
    seqs: dict[object, int] = {}
    nxt = 0
    for seg in src.forward():
        for pos, _off, _line, raw, complete in seg.split_rows():
            if not complete or not raw.strip():
                continue
            try:
                obj = decode_js(raw)                # (1e999 in its data: a row, as dsh reads it; issue 27)
            except (msgspec.DecodeError, RecursionError):     # a row nested too deeply: a bad row
                continue
            if not isinstance(obj, dict):
                continue
            if "seq" in obj or "seq0" in obj:
                return None                 # a store with envelopes: not a snapshot
            seqs[pos] = nxt
            d = obj.get("data")
            if not isinstance(d, dict):
                d = {}
            payload = d.get("args") if obj.get("type") == "tool-call-chunks" else d.get("texts")
            nxt += len(payload) if obj.get("type") in ("text-chunks", "reasoning-chunks",
                                                         "tool-call-chunks") and isinstance(payload, list) \
                and payload else 1
    return seqs or None

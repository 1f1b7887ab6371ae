"""A packed chunk row of any member count, expanded in bounded memory (issue 27 item 5).

dsh's JSONL packer has a minimum run (3) and no maximum, so one legal row may hold hundreds of
thousands of members (up to Session Lens's row-byte limit).  Decoding such a row into a Python object
builds every member string, and expanding it builds one event per member: memory grows with the member
count.  :class:`PackedStream` reads the row instead as it stands in its bytes:

* the envelope and ``data`` are decoded with the member arrays kept raw (``msgspec.Raw``: slices of the
  row, nothing parsed);
* one checking pass walks both arrays (``texts``/``args`` and ``dt``) element by element, exactly as
  :func:`app.log.format.codec.expand_packed` checks the row (strings, integers, ``dt`` one shorter, the
  time range), keeping only a mark every :data:`BATCH` members (the byte offsets and the running time);
* :meth:`PackedStream.events` then decodes :data:`BATCH` members at a time and yields their
  ``assistant/chunk`` events, the same events ``expand_packed`` builds.

So the memory a row costs is its bytes (at most ``MAX_ROW_BYTES``) plus one batch, whatever its member
count.  Rows small enough to expand at once keep the ordinary path (:mod:`app.log.format.codec`).
"""
from __future__ import annotations

import re
from itertools import islice
from typing import Any, Optional
from collections.abc import Iterator

import msgspec

from .limits import check_row
from .model import MAX_SAFE_INT, PACKED_TAGS, Event

BATCH = 4096                          # members decoded (and events alive) at a time
STREAM_BYTES = 1 << 20                # packed rows from this size on are read by PackedStream
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NUMBER = re.compile(rb'[^,\s\[\]]+')
_TAG = re.compile(rb'\{\s*"type"\s*:\s*"([^"\\]*)"')
_ROW_KEYS = frozenset({"type", "seq0", "time0", "data"})
_TEXT_KEYS = frozenset({"turn", "step", "index", "dt", "texts"})
_CALL_KEYS = frozenset({"turn", "step", "index", "dt", "id", "args"})


class PackedError(ValueError):
    """The row is not a well-formed packed row (the codec reports it as ``bad-packed``)."""


def _is_int(v: object) -> bool:
    return type(v) is int


def _batches(arr: bytes, token: re.Pattern[bytes], what: str) -> Iterator[list[tuple[int, int]]]:
    """(start, end) of the elements of the JSON array ``arr``, BATCH at a time.  The separators inside a
    batch are checked when it is decoded (:func:`_batch` decodes the batch's whole slice); those around
    and between batches here."""
    if arr[:1] != b"[" or arr[-1:] != b"]":
        raise PackedError(f"{what} must be an array")
    it = token.finditer(arr, 1, len(arr) - 1)
    prev, sep = 1, b""
    while True:
        got = [m.span() for m in islice(it, BATCH)]
        if not got:
            break
        if arr[prev:got[0][0]].strip() != sep:
            raise PackedError(f"{what} is not an array of its elements")
        prev, sep = got[-1][1], b","
        yield got
    if arr[prev:len(arr) - 1].strip():
        raise PackedError(f"{what} is not an array of its elements")


def _batch(arr: bytes, spans: list[tuple[int, int]], typ: Any, what: str) -> list[Any]:
    chunk = b"[" + arr[spans[0][0]:spans[-1][1]] + b"]"
    try:
        out: list[Any] = msgspec.json.decode(chunk, type=typ)
    except msgspec.DecodeError:
        if typ == list[int]:
            raise PackedError(f"{what} must hold integers") from None
        try:                               # invalid UTF-8: read with U+FFFD, as the codec does
            out = msgspec.json.decode(chunk.decode("utf-8", "replace").encode("utf-8"), type=typ)
        except msgspec.DecodeError:
            raise PackedError(f"{what} must hold strings") from None
    if len(out) != len(spans):
        raise PackedError(f"{what} is not an array of its elements")
    return out


class PackedStream:
    """One packed chunk row read from its bytes (see the module doc)."""

    def __init__(self, raw: bytes):
        try:
            top = msgspec.json.decode(raw, type=dict[str, msgspec.Raw])
            if set(top) != _ROW_KEYS:
                raise PackedError(f"row keys {sorted(top)} are not exactly {sorted(_ROW_KEYS)}")
            self.tag = msgspec.json.decode(top["type"])
            self.seq0 = msgspec.json.decode(top["seq0"])
            self.time0 = msgspec.json.decode(top["time0"])
            data = msgspec.json.decode(top["data"], type=dict[str, msgspec.Raw])
        except msgspec.DecodeError as e:
            raise PackedError(f"not a packed row: {e}") from None
        if self.tag not in PACKED_TAGS:
            raise PackedError(f"{self.tag!r} is not a packed row type")
        if not (_is_int(self.seq0) and _is_int(self.time0)) or self.seq0 < 0:
            raise PackedError("seq0/time0 must be integers")
        keys = set(data)
        call = self.tag == "tool-call-chunks"
        if (keys - {"name"} if call else keys) != (_CALL_KEYS if call else _TEXT_KEYS):
            raise PackedError(f"data keys {sorted(keys)} are not the {self.tag} keys")
        small = {k: msgspec.json.decode(v) for k, v in data.items() if k not in ("texts", "args", "dt")}
        self.turn, self.step, self.index = small["turn"], small["step"], small["index"]
        if not (_is_int(self.turn) and _is_int(self.step) and _is_int(self.index)):
            raise PackedError("turn/step/index must be integers")
        self.call_id, self.name, self.has_name = small.get("id"), small.get("name"), "name" in small
        self._payload = bytes(data["args" if call else "texts"])
        self._dt = bytes(data["dt"])
        self.n = self._check()

    def _check(self) -> int:
        """The checking pass (every member decoded and dropped a batch at a time): the member count."""
        n = 0
        for spans in _batches(self._payload, _STRING, "payload"):
            _batch(self._payload, spans, list[str], "payload")
            n += len(spans)
        if n == 0:
            raise PackedError("payload must be a non-empty list of strings")
        t, k = self.time0, 0
        for spans in _batches(self._dt, _NUMBER, "dt"):
            t += sum(_batch(self._dt, spans, list[int], "dt"))
            k += len(spans)
        if k != n - 1:
            raise PackedError(f"dt has {k} entries for {n} members (needs members-1 integers)")
        if self.seq0 + n - 1 > MAX_SAFE_INT or (self.tag != "tool-call-chunks" and abs(t) > MAX_SAFE_INT):
            raise PackedError("seq or time beyond 2^53-1")
        return n

    def events(self) -> Iterator[Event]:
        """The row's ``assistant/chunk`` events in order, BATCH at a time (checked before the first)."""
        delta = PACKED_TAGS[self.tag]
        dts = _batches(self._dt, _NUMBER, "dt")
        pending: list[int] = [0]                   # the first member is at time0
        seq, t = self.seq0, self.time0
        for spans in _batches(self._payload, _STRING, "payload"):
            texts = _batch(self._payload, spans, list[str], "payload")
            while len(pending) < len(texts):
                more = next(dts, None)
                if more is None:
                    break
                pending += _batch(self._dt, more, list[int], "dt")
            for text, d in zip(texts, pending):
                t += d
                yield self._event(delta, seq, t, text)
                seq += 1
            del pending[:len(texts)]

    def _event(self, delta: str, seq: int, t: int, text: str) -> Event:
        chunk: dict[str, Any]
        if self.tag == "tool-call-chunks":
            chunk = {"type": delta, "index": self.index, "id": self.call_id}
            if self.has_name:
                chunk["name"] = self.name
            chunk["argumentsDelta"] = text
        else:
            chunk = {"type": delta, "index": self.index, "text": text}
        return Event(seq=seq, type="assistant/chunk", time=t, packed=self.tag,
                     data={"turn": self.turn, "step": self.step, "chunk": chunk})


def open_stream(raw: bytes) -> Optional[PackedStream]:
    """A :class:`PackedStream` of ``raw`` when it is a packed row worth streaming (at least
    :data:`STREAM_BYTES`, with its own ``seq0``), else None (the ordinary path reads it).  Raises
    :class:`PackedError` for a malformed packed row, ``LimitError`` for one over the row limits."""
    if len(raw) < STREAM_BYTES:
        return None
    check_row(raw)                         # (Session Lens's row limits: LimitError)
    m = _TAG.match(raw)
    if m is None or m.group(1).decode("ascii", "replace") not in PACKED_TAGS or b'"seq0"' not in raw:
        return None
    return PackedStream(raw)

"""Rebuilding the rows of a dsh SQLite store as the JSONL writer stores them (spec §1.8), with the guards
on what a cell may hold: a ``data`` cell stored over the row limit is not fetched (:data:`ROW_COLS`), a zstd
BLOB is decompressed only up to the row limit (:func:`unzstd`: a bomb stops there), text must be strict UTF-8
and one JSON value.  A row that cannot be rebuilt raises :class:`Undecodable`; the reader shows it as
:func:`undecodable_marker` bytes (not JSON: the codec reports it malformed)."""
from __future__ import annotations

from typing import Any, Optional

import msgspec

from ..log.format.limits import MAX_ROW_BYTES
from ..log.format.model import PACKED_TAGS
from ..log.source.zstdlib import zstd
from .sqlite_schema import decode_seqs

MAX_DATA_BYTES = MAX_ROW_BYTES       # decompression cap per row (zstd bomb guard): the row limit, checked while
                                     # decompressing (a BLOB expanding past it stops there: never decoded whole)
MAX_STORED = MAX_ROW_BYTES + (64 << 10)   # a data cell stored bigger than this is over the row limit: not fetched
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

encode = msgspec.json.Encoder().encode
_decode_raw = msgspec.json.Decoder(msgspec.Raw).decode

# a data cell over the row limit is not fetched: it comes as NULL (data is NOT NULL in the schema) beside
# its type (length() of a BLOB reads no content; of a TEXT, SQLite's own copy, once, never handed to Python)
ROW_COLS = (f"seq, type, time, typeof(data), CASE WHEN length(data) > {MAX_STORED} THEN NULL ELSE data END, "
             "typeof(source_event_seqs), source_event_seqs, "
             "surface_op, ignorable")
FP_COLS = "seq, type, time, typeof(data), length(data), source_event_seqs, surface_op, ignorable"



class _Members(msgspec.Struct):
    texts: Optional[list[msgspec.Raw]] = None
    args: Optional[list[msgspec.Raw]] = None


_decode_members = msgspec.json.Decoder(_Members).decode


def packed_members(dtype: bytes, data: bytes) -> int:
    """Members of a packed row (1 when its data cannot be read)."""
    try:
        jb = row_json(dtype, data)
        m = _decode_members(jb)
        payload = m.texts if m.texts is not None else m.args
        return max(1, len(payload)) if payload is not None else 1
    except (Undecodable, msgspec.DecodeError, msgspec.ValidationError):
        return 1


class Undecodable(Exception):
    """A stored row that cannot be rebuilt (the message says why)."""


def row_json(dtype: bytes, data: Optional[bytes]) -> bytes:
    """The JSON bytes of a ``data`` cell (TEXT, or a zstd BLOB), validated: strict UTF-8, one value."""
    jb: bytes
    if data is None:
        raise Undecodable(f"data {dtype.decode().upper()} is over the {MAX_ROW_BYTES >> 20} MiB row limit "
                           "(stored bigger: not read)" if dtype in (b"text", b"blob") else "data is NULL")
    if dtype == b"text":
        jb = data
    elif dtype == b"blob":
        jb = unzstd(data)
    else:
        raise Undecodable(f"data has SQLite type {dtype.decode()}, expected TEXT JSON or a zstd BLOB")
    valid_json(jb, "data")
    return jb


def valid_json(jb: bytes, what: str) -> None:
    """Undecodable unless ``jb`` is strict UTF-8 holding one JSON value."""
    try:
        jb.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Undecodable(f"{what} is not valid UTF-8 (byte {e.start})") from None
    try:
        _decode_raw(jb)
    except msgspec.DecodeError as e:
        raise Undecodable(f"{what} is not one JSON value: {e}") from None


def unzstd(blob: bytes) -> bytes:
    """The one zstd frame of a ``data`` BLOB, decompressed up to the row limit; Undecodable otherwise."""
    if not blob.startswith(ZSTD_MAGIC):
        raise Undecodable("data BLOB is not a Zstandard frame (bad magic)")
    d = zstd.ZstdDecompressor()
    try:
        out = d.decompress(blob, max_length=MAX_DATA_BYTES + 1)
    except zstd.ZstdError as e:
        raise Undecodable(f"data BLOB does not decompress: {e}") from None
    if len(out) > MAX_DATA_BYTES:
        raise Undecodable(f"data BLOB decompresses to more than the {MAX_DATA_BYTES >> 20} MiB row limit "
                           "(decompression stopped there)")
    if not d.eof:
        raise Undecodable("data BLOB holds an incomplete Zstandard frame")
    if d.unused_data:
        raise Undecodable("data BLOB holds bytes after its Zstandard frame")
    return out


def reconstruct_row(seq: int, typ: bytes, time: int, dtype: bytes, data: bytes, stype: bytes, seqs: Optional[bytes],
                    surface_op: Optional[bytes], ignorable: Optional[int]) -> tuple[bytes, int]:
    """(JSON row bytes as the JSONL writer stores them, members); raises Undecodable."""
    try:
        t = typ.decode("utf-8") if isinstance(typ, bytes) else str(typ)
    except UnicodeDecodeError:
        raise Undecodable("type is not valid UTF-8") from None
    jb = row_json(dtype, data)
    if ignorable == 0:
        if t not in PACKED_TAGS:
            raise Undecodable(f"ignorable=0 marks a packed row but type {t!r} is not a chunk tag")
        if seqs is not None or surface_op is not None:
            raise Undecodable("packed row (ignorable=0) has surface columns")
        obj: dict[str, Any] = {"type": t, "seq0": seq, "time0": time, "data": msgspec.Raw(jb)}
        members = 1
        try:
            m = _decode_members(jb)
            payload = m.texts if m.texts is not None else m.args
            if payload:
                members = len(payload)
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass
        return encode(obj), members
    obj = {"type": t, "seq": seq, "time": time, "data": msgspec.Raw(jb)}
    if seqs is not None:
        if stype != b"blob":
            raise Undecodable(f"source_event_seqs has SQLite type {stype.decode()}, expected a varint BLOB")
        try:
            obj["sourceEventSeqs"] = decode_seqs(seqs)
        except ValueError as e:
            raise Undecodable(f"source_event_seqs: {e}") from None
    if surface_op is not None:
        valid_json(surface_op, "surface_op")
        obj["surfaceOp"] = msgspec.Raw(surface_op)
    if ignorable == 1:
        obj["ignorable"] = True
    elif ignorable is not None:
        raise Undecodable(f"ignorable is {ignorable!r}, expected NULL, 0 or 1")
    return encode(obj), 1


def undecodable_marker(seq: object, reason: str) -> bytes:
    """Stand-in bytes of a row that cannot be reconstructed: deliberately not JSON."""
    return f"<undecodable sqlite row seq={seq}: {reason}>".encode("utf-8", "replace")

"""Row codec: one stored row (a JSONL line) <-> logical events (spec §1.4, §1.7).

* packed chunk rows (``text-chunks``, ``reasoning-chunks``, ``tool-call-chunks``) are
  expanded to one ``assistant/chunk`` per seq, and :func:`pack_events` packs them back
  exactly as the dsh writer does;
* the legacy shapes of spec §1.7 are converted in memory (``Event.legacy`` says which);
* a row that cannot be read becomes a :class:`BadRow` with a reason, never vanishes.
"""
from __future__ import annotations

import json
import math
from typing import Any, Optional, TypeGuard, TypeVar, Union
from collections.abc import Iterable, Iterator

import msgspec

from .limits import MAX_PACKED_MEMBERS, LimitError, check_row, over_limit
from .model import (MAX_SAFE_INT, PACKED_TAGS, BadKind, BadRow, Event,
                    Header, Item, Problem)
from .packedstream import STREAM_BYTES, PackedError, PackedStream, open_stream
from .payloads import JsonObj
from .versions import decode_seq_ranges, field_problems, known_types, version_problem

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode

ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data", "ignorable", "surfaceOp", "sourceEventSeqs"})
_PACKED_ROW_KEYS = frozenset({"type", "seq0", "time0", "data"})
_PACKED_TEXT_KEYS = frozenset({"turn", "step", "index", "dt", "texts"})
_PACKED_CALL_KEYS = frozenset({"turn", "step", "index", "dt", "id", "args"})
_TAG_OF_DELTA = {v: k for k, v in PACKED_TAGS.items()}   # delta chunk type -> packed tag


class DecodeError(Exception):
    pass


_T = TypeVar("_T")


def _is_int(v: object) -> TypeGuard[int]:
    return type(v) is int


def _js_int(digits: str) -> Any:
    """An integer the JavaScript way where Python cannot read it: past ``sys.get_int_max_str_digits``
    (4300 digits) ``JSON.parse`` gives +-Infinity; every shorter integer is read exactly, as msgspec reads it."""
    try:
        return int(digits)
    except ValueError:
        return -math.inf if digits.startswith("-") else math.inf


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")         # NaN / Infinity literals: JSON.parse refuses them too


_wide = json.JSONDecoder(parse_int=_js_int, parse_constant=_no_constant).decode   # float('1e999') is inf
_OUT_OF_RANGE = ("Number out of range", "Integer value out of range")


def _faults(v: Any, inf_ok: bool) -> bool:
    """True when a string (key or value) under ``v`` holds a lone UTF-16 surrogate (an escape msgspec
    refuses), or, unless ``inf_ok``, a number is +-inf."""
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            try:
                x.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(x, float):
            if not inf_ok and math.isinf(x):
                return True
        elif isinstance(x, dict):
            stack.extend(x)
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return False


def _js_kept(v: Any) -> bool:
    """Whether dsh's newest reader keeps this row (issue 27): an event row (not packed, not a header) with
    its out-of-range numbers only inside ``data``.  Elsewhere (seq, time, sourceEventSeqs, a packed row's
    turn/step/index/dt, a header) dsh's own checks refuse a non-safe integer: refused as before."""
    if not isinstance(v, dict) or not isinstance(v.get("type"), str) or v["type"] in PACKED_TAGS \
            or v["type"] == "session":
        return False
    return not any(_faults(x, k == "data") for k, x in v.items())


def decode_js(raw: bytes) -> Any:
    """msgspec's decode; a row it refuses ONLY for a number out of its range, in a place no dsh check reads
    (:func:`_js_kept`), is read as ``JSON.parse`` reads it (dsh's reader keeps the row: issue 27): a number that
    overflows a double, or an integer too long for Python, is +-inf; everything else as msgspec gives it.
    Any other fault keeps msgspec's refusal (``msgspec.DecodeError``) and its message."""
    try:
        return _decode(raw)
    except msgspec.DecodeError as e:
        if not str(e).startswith(_OUT_OF_RANGE):
            raise
        try:
            v = _wide(raw.decode("utf-8"))
        except (ValueError, RecursionError):        # (JSONDecodeError, UnicodeDecodeError are ValueErrors)
            raise e from None
        if not _js_kept(v):
            raise e from None
        return v


def decode_json(raw: bytes) -> tuple[Any, bool]:
    """Decode JSON bytes; on invalid UTF-8 retry with replacement characters.

    Returns (value, replaced: bool).  Raises DecodeError when not JSON at all, or when the
    row is over a limit of :mod:`app.log.format.limits` (size, nesting depth).  A number out of
    msgspec's range is +-inf, as dsh's ``JSON.parse`` reads it (:func:`decode_js`).
    """
    try:
        check_row(raw)
        return decode_js(raw), False
    except LimitError as e:
        raise DecodeError(str(e)) from None
    except RecursionError:
        raise DecodeError(over_limit("a row nested too deeply to decode")) from None
    except msgspec.DecodeError as e:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
            try:
                return decode_js(text.encode("utf-8")), True
            except msgspec.DecodeError as e2:
                raise DecodeError(f"invalid UTF-8 and not JSON: {e2}") from None
        raise DecodeError(str(e)) from None


# --------------------------------------------------------------------------- header

def parse_header(raw: bytes) -> tuple[Optional[Header], list[Problem]]:
    """Parse the header line (tolerant of snapshot placeholders and old shapes)."""
    problems: list[Problem] = []
    try:
        obj, replaced = decode_json(raw)
    except DecodeError as e:
        return None, [Problem(code="bad-header", message=f"first line is not JSON: {e}", line=1,
                              offset=0, fatal=True)]
    if not isinstance(obj, dict) or obj.get("type") != "session":
        return None, [Problem(code="bad-header", message='first line is not a {"type":"session"} header',
                              line=1, offset=0, fatal=True)]
    if replaced:
        problems.append(Problem(code="bad-utf8", message="header holds invalid UTF-8 (replaced)", line=1))
    version = obj.get("version")
    if version is None:
        problems.append(Problem(code="no-version", message="header has no version (read as 0)", line=1))
    elif version != 0:
        vp = version_problem(version)
        if vp is not None:
            problems.append(vp)
    sid = obj.get("id")
    if not isinstance(sid, str):
        problems.append(Problem(code="bad-header", message="header has no string id", line=1))
        sid = str(sid)
    if "delegationDepth" not in obj:
        problems.append(Problem(code="no-delegation-depth",
                                message="header lacks delegationDepth (older shape; read as 0)", line=1))
    for retired in ("sandboxMode", "approvalPolicy"):
        if retired in obj:
            problems.append(Problem(code="retired-header-key", message=f"header holds retired key {retired}",
                                    line=1))

    def opt(name: str, kind: type[_T]) -> Optional[_T]:
        v = obj.get(name)
        if v is None:
            return None
        if isinstance(v, kind) and not isinstance(v, bool):     # an int is never a JSON boolean
            return v
        problems.append(Problem(code="bad-header", message=f"header {name} has an unexpected value {v!r}",
                                line=1))
        return None

    hdr = Header(id=sid, version=version if _is_int(version) else None,
                 createdAt=opt("createdAt", int), cwd=opt("cwd", str),
                 parentSession=opt("parentSession", str), seedLength=opt("seedLength", int),
                 origin=opt("origin", str), delegationDepth=opt("delegationDepth", int),
                 agentPreset=opt("agentPreset", str))
    if _is_int(version) and version >= 2:
        seeded = obj.get("isSeeded")
        if isinstance(seeded, bool):
            hdr.isSeeded = seeded
        else:
            problems.append(Problem(code="bad-header", message=f"v{version} header has no boolean isSeeded", line=1))
        if "seedLength" in obj:
            problems.append(Problem(code="bad-header", message=f"v{version} header holds seedLength (v0/v1 only)",
                                    line=1))
    return hdr, problems


# --------------------------------------------------------------------------- rows -> events

def _undecodable(e: DecodeError, raw: bytes, pos: object, offset: int, line: Optional[int]
                 ) -> tuple[list[Item], list[Problem]]:
    """:meth:`RowCodec.decode_row` of a row that is not JSON: one bad row (its kind from the error)."""
    kind: BadKind = "bad-utf8" if "UTF-8" in str(e) else (
        "over-limit" if isinstance(e.__cause__, LimitError) or "Session Lens's limit" in str(e)
        or "nested" in str(e) else "malformed")
    reason = str(e) if kind == "over-limit" else f"not a JSON row: {e}"
    if raw[:24] == b"<undecodable sqlite row " and raw[-1:] == b">":   # (sqlite_rows.undecodable_marker)
        reason = raw[1:-1].decode("utf-8", "replace")
        kind = "over-limit" if "row limit" in reason else kind
    return [BadRow(kind=kind, reason=reason, raw=raw, pos=pos, offset=offset, line=line)], [
        Problem(code=kind, message=reason, line=line, offset=offset)]


def _packed_row(obj: JsonObj, typ: str, raw: bytes, pos: object, offset: int, line: Optional[int],
                problems: list[Problem]) -> tuple[list[Item], list[Problem]]:
    """:meth:`RowCodec.decode_row` of a packed row (v0/v1) decoded whole: its members, or one bad row."""
    try:
        events = expand_packed(obj)
    except OverLimit as e:
        return [BadRow(kind="over-limit", reason=str(e), raw=raw, pos=pos, offset=offset, line=line,
                       seqs=(e.seq0, e.n))], \
            problems + [Problem(code="over-limit", message=str(e), line=line, offset=offset, seq=e.seq0)]
    except DecodeError as e:
        reason = f"bad packed {typ} row: {e}"
        return [BadRow(kind="bad-packed", reason=reason, raw=raw, pos=pos, offset=offset, line=line)], \
            problems + [Problem(code="bad-packed", message=reason, line=line, offset=offset,
                                seq=obj.get("seq0") if _is_int(obj.get("seq0")) else None)]
    for i, ev in enumerate(events):
        ev.raw = raw
        ev.pos = pos
        ev.offset = offset
        ev.line = line
        ev.member = i
    return list[Item](events), problems


def _unknown(ev: Event, typ: str, problems: list[Problem]) -> None:
    """An event of a type the log's version does not know (``typ`` as its row has it): marked, and
    reported (ignorable or not)."""
    ev.known = False
    line, offset, seq = ev.line, ev.offset, ev.seq
    if ev.ignorable is True:
        problems.append(Problem(code="unknown-ignorable", message=f"unknown ignorable event type {typ!r}",
                                line=line, offset=offset, seq=seq))
    else:
        problems.append(Problem(code="unknown-type",
                                message=f"unknown event type {typ!r} (dsh would refuse the log; shown raw)",
                                line=line, offset=offset, seq=seq))


class RowCodec:
    """Decodes rows of one session (the session id names legacy message ids)."""

    def __init__(self, session_id: str = "", version: int = 0,
                 envelope_seqs: Optional[dict[object, int]] = None):
        self.session_id = session_id
        self.version = version if _is_int(version) else 0
        self.known = known_types(self.version)
        # envelope-free snapshot (spec-versions §0.1): row pos -> restored seq; time restored as 0
        self.envelope_seqs = envelope_seqs

    def decode_row(self, raw: bytes, *, pos: object = None, offset: int = -1,
                   line: Optional[int] = None) -> tuple[list[Item], list[Problem]]:
        """-> (items, problems); items are Events (several for a packed row) or one BadRow.  A packed row
        over :data:`MAX_PACKED_MEMBERS` members is one ``over-limit`` BadRow here (counted from its bytes,
        in bounded memory); :meth:`iter_row` expands it."""
        problems: list[Problem] = []
        big = self._stream(raw, pos, offset, line)
        if big is not None:
            return self._big_row(big, raw, pos, offset, line)
        try:
            obj, replaced = decode_json(raw)
        except DecodeError as e:
            return _undecodable(e, raw, pos, offset, line)
        if replaced:
            problems.append(Problem(code="bad-utf8", message="row holds invalid UTF-8; read with U+FFFD",
                                    line=line, offset=offset))
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            reason = "row is JSON but not an event (no string type)"
            return [BadRow(kind="bad-envelope", reason=reason, raw=raw, pos=pos, offset=offset, line=line)], \
                problems + [Problem(code="bad-envelope", message=reason, line=line, offset=offset)]
        typ = obj["type"]
        if self.envelope_seqs is not None and "seq" not in obj and "seq0" not in obj and pos in self.envelope_seqs:
            if typ in PACKED_TAGS:
                obj = {"type": typ, "seq0": self.envelope_seqs[pos], "time0": 0,
                       **{k: v for k, v in obj.items() if k != "type"}}
            else:
                obj = dict(obj, seq=self.envelope_seqs[pos])
        if typ in PACKED_TAGS and self.version >= 2:
            reason = f"packed {typ} row in a v{self.version} log (packed rows are v0/v1 only)"
            return [BadRow(kind="bad-packed", reason=reason, raw=raw, pos=pos, offset=offset, line=line)], \
                problems + [Problem(code="bad-packed", message=reason, line=line, offset=offset)]
        if typ in PACKED_TAGS:
            return _packed_row(obj, typ, raw, pos, offset, line, problems)
        seq = obj.get("seq")
        if not _is_int(seq) or seq < 0 or seq > MAX_SAFE_INT:
            reason = f"event row has no valid seq ({seq!r})"
            return [BadRow(kind="bad-envelope", reason=reason, raw=raw, pos=pos, offset=offset, line=line)], \
                problems + [Problem(code="bad-envelope", message=reason, line=line, offset=offset)]
        t = obj.get("time", 0)
        extra = set(obj) - ENVELOPE_KEYS
        if extra:
            problems.append(Problem(code="envelope-keys", message=f"unexpected envelope keys {sorted(extra)}",
                                    line=line, offset=offset, seq=seq))
        if not _is_int(t):
            problems.append(Problem(code="bad-time", message=f"time is not an integer ({t!r}); read as 0",
                                    line=line, offset=offset, seq=seq))
            t = 0
        if "data" not in obj:
            problems.append(Problem(code="no-data", message="event has no data", line=line, offset=offset,
                                    seq=seq))
        ses = obj.get("sourceEventSeqs")
        if self.version >= 1 and isinstance(ses, list):
            ses, why = decode_seq_ranges(ses, seq)
            if why:
                problems.append(Problem(code="bad-source-seqs", message=why, line=line, offset=offset, seq=seq))
        ev = Event(seq=seq, type=typ, time=t, data=obj.get("data"), surface_op=obj.get("surfaceOp"),
                   source_event_seqs=ses, ignorable=obj.get("ignorable"),
                   raw=raw, pos=pos, offset=offset, line=line)
        if self.version < 2:
            self._legacy(ev, problems)
        for why in field_problems(ev):      # a hostile field type: dropped in memory, reported (versions.py)
            problems.append(Problem(code="bad-field", message=why, line=line, offset=offset, seq=seq))
        if ev.type not in self.known:
            _unknown(ev, typ, problems)
        return [ev], problems

    def _big_row(self, big: Union[PackedStream, tuple[BadRow, Problem]], raw: bytes, pos: object, offset: int,
                 line: Optional[int]) -> tuple[list[Item], list[Problem]]:
        """:meth:`decode_row` of a row :meth:`_stream` took: a packed row's members, or one bad row."""
        if isinstance(big, PackedStream) and big.n <= MAX_PACKED_MEMBERS:
            return list[Item](self._members(big, raw, pos, offset, line)), []
        if isinstance(big, PackedStream):
            e = OverLimit(big.seq0, big.n)
            return [BadRow(kind="over-limit", reason=str(e), raw=raw, pos=pos, offset=offset, line=line,
                           seqs=(e.seq0, e.n))], \
                [Problem(code="over-limit", message=str(e), line=line, offset=offset, seq=e.seq0)]
        return [big[0]], [big[1]]

    # -- §1.7 in-memory conversions
    def _legacy(self, ev: Event, problems: list[Problem]) -> None:
        d = ev.data
        if ev.type == "steering/message":
            ev.type = "user/message"
            ev.legacy = "steering/message"
        if not isinstance(d, dict):
            return
        if ev.type == "user/message" and "id" not in d:
            ev.data = dict(d, id=f"legacy-message:{self.session_id}:{ev.seq}", role="user")
            ev.legacy = ev.legacy or "user-message-without-id"
        elif ev.type == "assistant/message" and "message" not in d and "content" in d:
            prov = d.get("provenance")
            if not isinstance(prov, dict):
                prov = {}
            msg = {"role": "assistant", "content": d.get("content") or [],
                   "source": {**prov, "kind": "model"}, "id": f"legacy-message:{self.session_id}:{ev.seq}"}
            new = {k: v for k, v in d.items() if k not in ("content", "provenance")}
            new["message"] = msg
            ev.data = new
            ev.legacy = "assistant-message-content-provenance"
        elif ev.type == "tool/result" and "message" not in d and "callId" in d:
            cid = d.get("callId")
            block: JsonObj = {"type": "tool-result", "toolCallId": cid, "content": d.get("content") or []}
            if "isError" in d:
                block["isError"] = d.get("isError")
            msg = {"role": "user", "content": [block], "source": {"kind": "tool", "callId": cid},
                   "id": f"legacy-message:{self.session_id}:{ev.seq}"}
            new = {k: v for k, v in d.items() if k not in ("callId", "content", "isError")}
            new["message"] = msg
            ev.data = new
            ev.legacy = "tool-result-callid-content"
        elif ev.type == "turn/start" and "trigger" in d:
            ev.data = {k: v for k, v in d.items() if k != "trigger"}
            ev.legacy = "turn-start-trigger"
        elif ev.type == "turn/end":
            reason = d.get("reason")
            new_reason: Optional[JsonObj] = None
            if reason is None and "error" in d:
                err = d.get("error")
                if isinstance(err, dict):
                    new_reason = {"kind": "error", "error": {"message": str(err.get("message", "")),
                                                               "code": err.get("code") or "UNKNOWN"}}
                else:
                    new_reason = {"kind": "error", "error": {"message": str(err), "code": "UNKNOWN"}}
            elif isinstance(reason, str):
                if reason == "aborted":
                    new_reason = {"kind": "aborted", "reason": {"kind": "legacy"}}
                elif reason == "disposed":
                    new_reason = {"kind": "aborted", "reason": {"kind": "disposed"}}
                else:
                    new_reason = {"kind": reason}
            elif isinstance(reason, dict):
                if reason.get("kind") == "aborted" and "reason" not in reason:
                    new_reason = dict(reason, reason={"kind": "legacy"})
                elif reason.get("kind") == "disposed":
                    new_reason = {"kind": "aborted", "reason": {"kind": "disposed"}}
                elif reason.get("kind") == "error" and isinstance(reason.get("error"), str):
                    new_reason = {"kind": "error", "error": {"message": reason["error"], "code": "UNKNOWN"}}
            elif reason is None:
                problems.append(Problem(code="turn-end-no-reason", message="turn/end has no reason",
                                        line=ev.line, offset=ev.offset, seq=ev.seq))
            if new_reason is not None:
                ev.data = {k: v for k, v in d.items() if k != "error"}
                ev.data["reason"] = new_reason
                ev.legacy = "turn-end-reason"


    def iter_row(self, raw: bytes, *, pos: object = None, offset: int = -1, line: Optional[int] = None,
                 problems: Optional[list[Problem]] = None) -> Iterator[Item]:
        """:meth:`decode_row`'s items one at a time; a packed row of any member count is expanded, its
        members decoded a batch at a time (:class:`~app.log.format.packedstream.PackedStream`: bounded
        memory however many members the row holds)."""
        big = self._stream(raw, pos, offset, line)
        if isinstance(big, PackedStream) and big.n > MAX_PACKED_MEMBERS:
            yield from self._members(big, raw, pos, offset, line)
            return
        items, probs = self.decode_row(raw, pos=pos, offset=offset, line=line)
        if problems is not None:
            problems.extend(probs)
        yield from items

    def _stream(self, raw: bytes, pos: object, offset: int, line: Optional[int]
                ) -> Union[None, PackedStream, tuple[BadRow, Problem]]:
        """A big packed row read from its bytes (:func:`~app.log.format.packedstream.open_stream`; v0/v1, with
        its own envelope), a bad-packed or over-limit (BadRow, Problem) when it is not one, else None."""
        if len(raw) < STREAM_BYTES or self.version >= 2 or self.envelope_seqs is not None:
            return None                    # (the common case: one comparison per row)
        try:
            return open_stream(raw)
        except LimitError as e:
            return (BadRow(kind="over-limit", reason=str(e), raw=raw, pos=pos, offset=offset, line=line),
                    Problem(code="over-limit", message=str(e), line=line, offset=offset))
        except PackedError as e:
            reason = f"bad packed row: {e}"
            return (BadRow(kind="bad-packed", reason=reason, raw=raw, pos=pos, offset=offset, line=line),
                    Problem(code="bad-packed", message=reason, line=line, offset=offset))

    @staticmethod
    def _members(ps: PackedStream, raw: bytes, pos: object, offset: int, line: Optional[int]) -> Iterator[Event]:
        for i, ev in enumerate(ps.events()):
            ev.raw, ev.pos, ev.offset, ev.line, ev.member = raw, pos, offset, line, i
            yield ev


# --------------------------------------------------------------------------- packed rows

def packed_extent(row: JsonObj) -> tuple[int, int, int, int]:
    """``(turn, step, seq0, members)`` of a packed chunk row, checked exactly as
    :func:`expand_packed` checks it (raises :class:`DecodeError`), without building its events."""
    tag, seq0, time0, data, payload, dt = _check_packed(row)
    if tag != "tool-call-chunks" and abs(time0 + sum(dt)) > MAX_SAFE_INT:
        raise DecodeError("time beyond 2^53-1")
    return data["turn"], data["step"], seq0, len(payload)


# a checked packed row: (tag, seq0, time0, data, payload, dt)
_Packed = tuple[str, int, int, JsonObj, list[str], list[int]]
# a packable delta's run key: (chunk type, turn, step, index, call id, name, has name)
_RunKey = tuple[str, object, object, object, object, object, bool]


def _check_packed(row: JsonObj) -> _Packed:
    if set(row) != _PACKED_ROW_KEYS:
        raise DecodeError(f"row keys {sorted(row)} are not exactly {sorted(_PACKED_ROW_KEYS)}")
    tag: str = row["type"]          # a packed tag: callers pick packed rows by it
    seq0, time0, data = row["seq0"], row["time0"], row["data"]
    if not (_is_int(seq0) and _is_int(time0)) or seq0 < 0:
        raise DecodeError("seq0/time0 must be integers")
    if not isinstance(data, dict):
        raise DecodeError("data must be an object")
    keys = set(data)
    if tag == "tool-call-chunks":
        if keys - {"name"} != _PACKED_CALL_KEYS:
            raise DecodeError(f"data keys {sorted(keys)} are not the tool-call-chunks keys")
        payload = data["args"]
    else:
        if keys != _PACKED_TEXT_KEYS:
            raise DecodeError(f"data keys {sorted(keys)} are not the {tag} keys")
        payload = data["texts"]
    dt = data["dt"]
    turn, step, index = data["turn"], data["step"], data["index"]
    if not (_is_int(turn) and _is_int(step) and _is_int(index)):
        raise DecodeError("turn/step/index must be integers")
    if not isinstance(payload, list) or not payload or not all(isinstance(p, str) for p in payload):
        raise DecodeError("payload must be a non-empty list of strings")
    if not isinstance(dt, list) or not all(_is_int(x) for x in dt) or len(dt) != len(payload) - 1:
        raise DecodeError(f"dt has {len(dt) if isinstance(dt, list) else '?'} entries for "
                          f"{len(payload)} members (needs members-1 integers)")
    if seq0 + len(payload) - 1 > MAX_SAFE_INT:
        raise DecodeError("seq beyond 2^53-1")
    return tag, seq0, time0, data, payload, dt


class OverLimit(DecodeError):
    """A legal packed row with more members than Session Lens expands at once (its limit, not dsh's)."""

    def __init__(self, seq0: int, n: int):
        super().__init__(over_limit(f"{n:,} members in one packed row: the event faces read them a batch at a time; "
                                    f"the page view shows the row as one (it expands at most {MAX_PACKED_MEMBERS:,})"))
        self.seq0, self.n = seq0, n


def expand_packed(row: JsonObj) -> list[Event]:
    """Expand a packed chunk row to its ``assistant/chunk`` events (spec §1.4); a row over Session Lens's
    member limit raises :class:`OverLimit` (counted by :func:`packed_extent`, never expanded)."""
    tag, seq0, time0, data, payload, dt = _check_packed(row)
    if len(payload) > MAX_PACKED_MEMBERS:
        raise OverLimit(seq0, len(payload))
    turn, step, index = data["turn"], data["step"], data["index"]
    delta = PACKED_TAGS[tag]
    events: list[Event] = []
    t = time0
    if tag == "tool-call-chunks":
        cid, name, has_name = data["id"], data.get("name"), "name" in data
        for k, arg in enumerate(payload):
            if k:
                t += dt[k - 1]
            chunk: JsonObj = {"type": delta, "index": index, "id": cid}
            if has_name:
                chunk["name"] = name
            chunk["argumentsDelta"] = arg
            events.append(Event(seq=seq0 + k, type="assistant/chunk", time=t, packed=tag,
                                data={"turn": turn, "step": step, "chunk": chunk}))
    else:
        for k, text in enumerate(payload):
            if k:
                t += dt[k - 1]
            events.append(Event(seq=seq0 + k, type="assistant/chunk", time=t, packed=tag,
                                data={"turn": turn, "step": step,
                                      "chunk": {"type": delta, "index": index, "text": text}}))
        if abs(t) > MAX_SAFE_INT:
            raise DecodeError("time beyond 2^53-1")
    return events


def _packable(ev: JsonObj) -> Optional[tuple[_RunKey, str]]:
    """The (run key, payload) of an exactly-shaped delta event dict, else None."""
    if set(ev) != {"type", "seq", "time", "data"} or ev["type"] != "assistant/chunk":
        return None
    d = ev["data"]
    if not isinstance(d, dict) or set(d) != {"turn", "step", "chunk"}:
        return None
    c = d["chunk"]
    if not isinstance(c, dict):
        return None
    ct = c.get("type")
    if ct in ("text-delta", "reasoning-delta"):
        if set(c) != {"type", "index", "text"} or not isinstance(c["text"], str):
            return None
        return (ct, d["turn"], d["step"], c["index"], None, None, False), c["text"]
    if ct == "tool-call-delta":
        ks = set(c)
        if ks not in ({"type", "index", "id", "argumentsDelta"}, {"type", "index", "id", "name", "argumentsDelta"}):
            return None
        if not isinstance(c["argumentsDelta"], str):
            return None
        return (ct, d["turn"], d["step"], c["index"], c["id"], c.get("name"), "name" in c), c["argumentsDelta"]
    return None


def pack_events(events: Iterable[JsonObj], min_run: int = 3, max_run: int = 1024) -> list[JsonObj]:
    """Pack runs (>= min_run) of exactly-shaped consecutive deltas into packed rows."""
    out: list[JsonObj] = []
    run: list[tuple[JsonObj, _RunKey, str]] = []   # (event, key, payload)

    def flush() -> None:
        if len(run) >= min_run:
            first = run[0][0]
            key = run[0][1]
            ct, turn, step, index, cid, name, has_name = key
            dt = [run[i][0]["time"] - run[i - 1][0]["time"] for i in range(1, len(run))]
            payload = [r[2] for r in run]
            tag = _TAG_OF_DELTA[ct]
            data: JsonObj = {"turn": turn, "step": step, "index": index, "dt": dt}
            if ct == "tool-call-delta":
                data["id"] = cid
                if has_name:
                    data["name"] = name
                data["args"] = payload
            else:
                data["texts"] = payload
            out.append({"type": tag, "seq0": first["seq"], "time0": first["time"], "data": data})
        else:
            out.extend(r[0] for r in run)
        run.clear()

    for ev in events:
        p = _packable(ev)
        if p is not None and run and run[-1][1] == p[0] and ev["seq"] == run[-1][0]["seq"] + 1 \
                and len(run) < max_run:
            run.append((ev, p[0], p[1]))
            continue
        flush()
        if p is not None:
            run.append((ev, p[0], p[1]))
        else:
            out.append(ev)
    flush()
    return out


def encode_row(obj: object) -> bytes:
    return _encode(obj)

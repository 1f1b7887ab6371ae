"""Would today's dsh refuse this log?  ONE answer, following dsh's read path (issue 27 item 2).

The newest dsh opens a session file in this order, and each step may refuse it:

1. **corruption** (every version): a row that does not decode, followed by a later row holding a
   ``turn/end`` (:func:`app.log.index.integrity.dsh_refusals`); an envelope dsh rejects
   (``sourceEventSeqs`` not strictly backwards or repeated: :class:`~app.log.index.integrity.EventChecks`);
2. **an unknown required type** (every version): a type outside the build's vocabulary (one set for
   every generation, spec-versions §3.5 correction) on a row without ``ignorable: true``;
3. **the migration to the current format** (v1, v2): dsh reads an older generation only through its
   migration chain; the v2 -> v3 edge refuses a surface row (user/assistant message, tool result)
   before the first ``step/start`` and a changed request prompt (``request/header.header.system``)
   while no step is open (``session-format-v2-to-v3/src/migration.ts``, spec-versions §4.3);
4. **native v4 admission**: a message source ``{kind: "plugin"}`` in a message slot (user, system,
   assistant and tool messages, inbox insertions, title requests) is a retired wrapper that the newest
   dsh refuses; early v4 builds wrote it (``session-format-v3-to-v4/src/message-sources.ts``).

:func:`dsh_verdict` is the one function: ``inspect``'s ``dshWouldRefuse``, every command's refusal
line and problems, the outline (the window's banner and Problems panel) all take its answer.  Its
problems say why, each in the words the user sees; Session Lens's own resource limits never appear
here (they are not dsh's rules).
"""
from __future__ import annotations

import functools
import json
import re
from typing import TYPE_CHECKING, Any, Optional

from ..format.model import PACKED_TAGS, Problem
from ..format.versions import known_types
from ..fold.v2heads import INVENTORY as V2_INVENTORY, SURFACE as V2_SURFACE_TYPES, TYPES as V2_TYPES, V2Head
from .integrity import EventChecks, dsh_refusals

if TYPE_CHECKING:
    from .reader import LogReader

_TYPE_AT_ROW = re.compile(rb'\n\{"type": ?"([^"]*)"')       # (a literal first byte: a fast scan; no alternation)
_TYPE_AT_START = re.compile(rb'\{"type": ?"([^"]*)"')       # the first row (no newline before it)
_TYPE = re.compile(rb'\{"type": ?"([^"\\]*)"')
_V2_SURFACE = V2_SURFACE_TYPES
_V2_NEEDED = V2_TYPES
_MESSAGE_SLOTS = {"user/message": "data", "system/message": "message", "assistant/message": "message",
                  "tool/result": "message", "developer/message": "message",
                  "agent/inbox/spliced": "inserted", "session/title-llm-request": "messages"}
_MAX_LISTED = 100                 # unknown-type rows named in the verdict (a hostile log may hold millions)


def dsh_verdict(reader: LogReader, checks: Optional[EventChecks] = None,
                defective: Optional[bool] = None, path: Optional[ReadPath] = None) -> list[Problem]:
    """Why the newest dsh would refuse to open this log ([] when it opens it), in read-path order.

    ``checks``: the per-event checks of a pass that saw the rows (their refusing envelope
    problems are part of the answer).  The read-path rules are checked here over the whole log
    (one pass over the stored text, rows decoded only where a rule needs them), so the answer
    does not depend on which command asks or how far it read.  ``defective=False``: the caller's pass
    met no unreadable row (the corruption scan is skipped; None: it is run).  ``path``: a :class:`ReadPath`
    already fed every segment of the log by the caller's own read (the log is not read again)."""
    # remembered on the reader for the file revision it was read from (a grown log is checked again)
    rev = _revision(reader)
    memo = getattr(reader, "dsh_verdict_memo", None)
    cached: Optional[list[Problem]] = memo[1] if memo is not None and rev is not None and memo[0] == rev else None
    out: list[Problem] = list(cached) if cached is not None else \
        path.finish(defective) if path is not None else _read_path(reader, defective)
    if cached is None and rev is not None:
        try:
            reader.dsh_verdict_memo = (rev, list(out))          # type: ignore[attr-defined]
        except AttributeError:
            pass
    if checks is not None:
        out += [p for p in checks.refusing if p not in out]
    return out


def _read_path(reader: LogReader, defective: Optional[bool]) -> list[Problem]:
    if reader.fatal:
        return []
    rp = ReadPath(reader)
    for seg in reader.source.forward():
        rp.segment(seg)
    return rp.finish(defective)


def row_types(data: bytes) -> set[bytes]:
    """The set ``_TYPE_AT_ROW.findall(b"\\n" + data)`` gives, without copying ``data`` to prepend the newline."""
    first = _TYPE_AT_START.match(data)
    if first is None:
        return set(_TYPE_AT_ROW.findall(data))
    types = set(_TYPE_AT_ROW.findall(data, first.end()))
    types.add(first.group(1))
    return types


def seg_types_py(data: bytes, plugin: bool) -> tuple[set[bytes], bool]:
    """(:func:`row_types` of ``data``, ``b'"plugin"' in data`` when ``plugin``, else False): the interpreted
    definition of the C ``seg_types``, which reads both in one call (issue 29: the two searches were an eighth of
    the background pass)."""
    return row_types(data), plugin and b'"plugin"' in data


@functools.cache
def _c_seg_types() -> Any:
    """The C ``seg_types`` (None: not built), looked up once."""
    from .fastindex import load_rowscan_c
    return getattr(load_rowscan_c(), "seg_types", None)


def seg_types(data: bytes, plugin: bool) -> tuple[set[bytes], bool]:
    """:func:`seg_types_py`, in C where built."""
    c = _c_seg_types()
    return seg_types_py(data, plugin) if c is None else c(data, plugin)


class ReadPath:
    """The read-path rules fed a segment at a time (:func:`_read_path`; the one background pass of
    :mod:`app.log.query.ahead` feeds it the segments it reads, then hands it to :func:`dsh_verdict`)."""

    def __init__(self, reader: LogReader) -> None:
        self.reader = reader
        self.version = version = reader.version or 0
        self.known = known_types(version)
        # v0 (a JSONL or zstd file; dsh's v1+ trees read no SQLite store) and v1 reach the v2 -> v3 edge through
        # the chain, whose earlier edges keep the relative order of what it checks (decision 0022)
        chain = version in (1, 2) or (version == 0 and reader.source.kind in ("jsonl", "zstd"))
        self.mig = _V2Migration(version) if chain else None
        self.plugin: list[Problem] = []
        self.unknown = 0
        self.out: list[Problem] = []

    def segment(self, seg: Any) -> None:
        if seg.bad:
            return
        reader, mig = self.reader, self.mig
        data = b"\n".join(raw for _p, raw in seg.rows) if seg.rows is not None else seg.data
        version = self.version
        types, plugin = seg_types(data, version >= 4 and not self.plugin)
        odd = [t for t in types if t not in _PACKED and t.decode("utf-8", "replace") not in self.known]
        if odd and self.unknown < _MAX_LISTED:               # (bounded: the first rows say it; the codec counts the rest)
            got = _unknown_required(reader, seg, odd, _MAX_LISTED - self.unknown)
            self.unknown += len(got)
            self.out += got
        if mig is not None and mig.why is None and (types & mig.needed or (version == 2 and types - _V2_INVENTORY)):
            mig.segment(reader, seg, inventory=version == 2)
        if plugin:                              # (v4, none found yet, and b'"plugin"' in data)
            self.plugin = _plugin_sources(reader, seg)[:1]        # the first says it; every such row is alike
            self.out += self.plugin

    def finish(self, defective: Optional[bool]) -> list[Problem]:
        if self.reader.fatal:
            return []
        out = dsh_refusals(self.reader) if defective is not False else []
        out += self.out
        mig = self.mig
        if mig is not None:
            if mig.delivery:
                mig.finish(self.reader)
            if mig.why is not None:
                out.append(mig.why)
        return out


_V2_BYTES = frozenset(t.encode() for t in _V2_NEEDED)
_V2_INVENTORY = frozenset(t.encode() for t in V2_INVENTORY)
_PACKED = frozenset(t.encode() for t in PACKED_TAGS)          # packed chunk rows (v0/v1): no event type


def _rows(reader: LogReader, seg: Any) -> Any:
    """(pos, offset, line, raw, type) of the complete rows of ``seg`` that begin with their type (as dsh writes)."""
    for pos, off, line, raw, complete in seg.split_rows():
        m = _TYPE.match(raw) if complete else None
        if m is not None:
            yield pos, off, line, raw, m.group(1).decode("utf-8", "replace")


def _event(reader: LogReader, pos: Any, off: int, line: Optional[int], raw: bytes) -> Any:
    items, _ = reader.codec.decode_row(raw, pos=pos, offset=off, line=line)
    return items[0] if items and hasattr(items[0], "seq") else None


def _where(ev: Any) -> dict[str, Any]:
    return {"seq": ev.seq, "line": ev.line, "offset": ev.offset if ev.offset >= 0 else None}


def _unknown_required(reader: LogReader, seg: Any, odd: list[bytes], limit: int) -> list[Problem]:
    """The rows of ``seg`` whose type is outside the vocabulary and that are not ``ignorable: true``
    (the codec's own problem text, so the two are one problem)."""
    out: list[Problem] = []
    names = {t.decode("utf-8", "replace") for t in odd}
    for pos, off, line, raw, t in _rows(reader, seg):
        if t not in names:
            continue
        ev = _event(reader, pos, off, line, raw)
        if ev is None or ev.known or ev.ignorable is True:
            continue
        out.append(Problem(code="unknown-type",
                           message=f"unknown event type {ev.type!r} (dsh would refuse the log; shown raw)",
                           **_where(ev)))
        if len(out) >= limit:
            break
    return out


V2_REFUSAL = "the newest dsh reads a v2 log only through its v2->v3 migration, which refuses this one: "
CHAIN_REFUSAL = ("the newest dsh reads a v{v} log only through its migration chain (v{v} -> ... -> v4), whose v2->v3 "
                 "edge refuses this one: ")


class _V2Migration:
    """The refusals of dsh's v2 -> v3 edge: its state machine (:class:`~app.log.fold.v2heads.V2Head`) over the
    rows it reads, decoded only where it needs a payload (``request/header``) or a refusal's place."""

    def __init__(self, version: int = 2) -> None:
        self.head = V2Head()
        self.why: Optional[Problem] = None
        self.prefix = V2_REFUSAL if version == 2 else CHAIN_REFUSAL.format(v=version)
        # v0: the v0 -> v1 edge makes a user/message of every steering/message (spec-versions §4.1, 6)
        self.renamed = {"steering/message": "user/message"} if version == 0 else {}
        # v2: the edge's delivery-marker rules (a marker claiming v3; the last v2 marker naming another session)
        self.delivery = version == 2
        self.foreign: Optional[Any] = None        # (seq, row place) of the last v2 marker naming another session
        self.cut = 0                              # the source's inherited cut (its last inherited end-seed)
        self.needed = _V2_BYTES | frozenset(t.encode() for t in self.renamed) | (_DELIVERY if self.delivery else set())

    def segment(self, reader: LogReader, seg: Any, inventory: bool = False) -> None:
        """``inventory``: a type outside the edge's inventory refuses too (a v2 log; a v1 log's types are
        the v1 -> v2 edge's first)."""
        for pos, off, line, raw, t in _rows(reader, seg):
            t = self.renamed.get(t, t)
            if inventory and t not in V2_INVENTORY:
                ev = _event(reader, pos, off, line, raw)
                self.why = Problem(code="dsh-would-refuse", message=self.prefix + (
                    f"{t} at seq {ev.seq if ev is not None else '?'} is not an event type the migration can "
                    "transform (not in the released-v2 inventory; ignorable or not)"),
                    **(_where(ev) if ev is not None else {}))
                return
            if self.delivery and t in _DELIVERY_TYPES:
                if self._delivery(reader, t, _event(reader, pos, off, line, raw)):
                    return
                continue
            if t not in _V2_NEEDED or (t in _V2_SURFACE and self.head.anchor is not None):
                continue                   # (a surface row after the head: nothing to check, nothing decoded)
            ev = _event(reader, pos, off, line, raw) if t == "request/header" or t in _V2_SURFACE else None
            if ev is None and t == "request/header":
                continue
            self.head.apply(t, ev.seq if ev is not None else -1, ev.data if ev is not None else None)
            if self.head.refusal is not None:
                self.why = Problem(code="dsh-would-refuse", message=self.prefix + self.head.refusal,
                                   **(_where(ev) if ev is not None else {}))
                return


    def _delivery(self, reader: LogReader, t: str, ev: Any) -> bool:
        """The edge's delivery-marker rules (``session-format-v2-to-v3/src/migration.ts``); True: it refuses."""
        d = ev.data if ev is not None and isinstance(ev.data, dict) else {}
        if t == "session/end-seed":
            if d.get("inherited") is True:
                self.cut = ev.seq
            return False
        sid = reader.header.id if reader.header is not None else None
        if d.get("sessionFormatVersion") == 3:
            self.why = Problem(code="dsh-would-refuse", message=self.prefix + (
                f"{t} at seq {ev.seq} claims the target format v3"), **_where(ev))
            return True
        if d.get("sessionFormatVersion") == 2 and d.get("sessionId") != sid:
            self.foreign = ev
        return False

    def finish(self, reader: LogReader) -> None:
        """The edge's end-of-log rule: the last v2 marker naming another session must be an inherited one."""
        ev, parent = self.foreign, reader.header.parentSession if reader.header is not None else None
        if self.why is None and ev is not None and (parent is None or ev.seq >= self.cut):
            self.why = Problem(code="dsh-would-refuse", message=self.prefix + (
                f"the delivery marker at seq {ev.seq} names another session ({ev.data.get('sessionId')!r}) and is "
                "not inherited from a parent"), **_where(ev))


_DELIVERY_TYPES = frozenset({"session-log-deepseek/delivery-accepted", "session/end-seed"})
_DELIVERY = frozenset(t.encode() for t in _DELIVERY_TYPES)


def migration_refuses(reader: LogReader) -> bool:
    """Does dsh's migration (v2 -> v3, or the chain from v0/v1) refuse this log (the verdict's answer,
    remembered on the reader)?"""
    chain = CHAIN_REFUSAL.split("{v}")[0]
    return any(p.message.startswith(V2_REFUSAL) or (p.message.startswith(chain) and "migration chain" in p.message)
               for p in dsh_verdict(reader))


def _plugin_sources(reader: LogReader, seg: Any) -> list[Problem]:
    out: list[Problem] = []
    for pos, off, line, raw, t in _rows(reader, seg):
        if b'"plugin"' not in raw:
            continue
        slot = _MESSAGE_SLOTS.get(t)
        if slot is None:
            continue
        ev = _event(reader, pos, off, line, raw)
        d = ev.data if ev is not None and isinstance(ev.data, dict) else None
        if d is None:
            continue
        msgs = [d] if slot == "data" else ([d.get(slot)] if slot == "message" else d.get(slot))
        for m in msgs if isinstance(msgs, list) else ():
            src = m.get("source") if isinstance(m, dict) else None
            if isinstance(src, dict) and src.get("kind") == "plugin":
                role = m.get("role") if isinstance(m.get("role"), str) else "?"
                out.append(Problem(code="dsh-would-refuse", message=(
                    f"{t} at seq {ev.seq}: a {role} message with the retired source {{kind: \"plugin\", plugin: "
                    f"{json.dumps(src.get('plugin'), ensure_ascii=False)}}}: the newest dsh refuses this; earlier v4 "
                    "builds wrote it"),
                    **_where(ev)))
                break
    return out


def refusal_summary(refusals: list[Problem]) -> str:
    """The one line that says dsh would refuse the log (CLI warning, the window's banner)."""
    more = f" (and {len(refusals) - 1} more reason{'s' if len(refusals) > 2 else ''})" if len(refusals) > 1 else ""
    first = str(refusals[0])
    if refusals[0].code == "dsh-would-refuse":          # (the line already says it)
        first = first.removeprefix("dsh-would-refuse: ")
    return f"dsh would refuse to load this log: {first}{more}"


def _revision(reader: Any) -> Optional[object]:
    """The revision of the reader's source (None: unknown, nothing is remembered)."""
    try:
        return str(reader.source.revision())
    except Exception:                    # noqa: BLE001 - a source without revisions (or closed): no memo
        return None

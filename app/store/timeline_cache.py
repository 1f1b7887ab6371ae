"""The timeline of a stored session: computed once (:func:`app.log.query.timeline.timeline`), kept in the user
cache folder beside the seq index, priced from the user's settings, its subagent spans linked to the child
sessions of the store.  No Qt (the command line and the window's worker both use it).

Cache: ``<cache>/index/<key>.timeline`` (the key of :func:`app.store.indexcache.cache_file`: real path,
device, inode), holding a head (the identity and revision (size, mtime) of the log it was computed from, a hash
of the header row), then the spans (MessagePack), closed by a CRC-32 of all that (a check against a torn or
damaged file, read at memory speed; the file is our own copy, never trusted for more than the log gives).  The
head is read first: a file of another revision is a miss without its spans read.  It is used only when all of that
still matches (a grown or rewritten log is computed afresh: a timeline pass is a fraction of an index
build); written atomically; a corrupt or foreign file is ignored.  Raw JSONL and zstd files only.

Prices: ``timelinePrices`` in the window's settings file (``settings.json`` in the user config folder,
``SESSION_LENS_CONFIG_DIR`` overrides it, as :mod:`app.ui.settings` reads it): model name (or a prefix
ending in ``*``) -> USD per million ``input`` / ``output`` / ``cacheRead`` tokens, and optionally the model's
``contextWindow`` (the context meter's line where the log does not say it).  Read here without Qt.
"""
from __future__ import annotations

import gc
import hashlib
import json
import os
import time
import zlib
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Optional, Union, overload

import msgspec

from ..log.format.payloads import JsonObj
from ..log.query.timeline import timeline
from ..log.query.timeline_summary import in_log_order, summarize
from ..log.query.timeline_table import SpanTable
from .cachefiles import read_bounded
from .indexcache import cache_slot, write_parts_atomic

if TYPE_CHECKING:
    from ..log.index.reader import LogReader

MAGIC = b"SLTIM\x00\x06\n"
FORMAT = 6             # 6: spans by column (timeline_table.SpanTable)
PRICES_KEY = "timelinePrices"
# an example table, used until the user saves their own under ``timelinePrices`` (USD per million tokens;
# DeepSeek's published API list prices, late 2025): always shown as an estimate
DEFAULT_PRICES: dict[str, dict[str, float]] = {
    "deepseek-*": {"input": 0.28, "cacheRead": 0.028, "output": 0.42, "contextWindow": 128_000},
}


# --------------------------------------------------------------------------- prices (settings, no Qt)

def settings_file() -> Path:
    env = os.environ.get("SESSION_LENS_CONFIG_DIR")
    if env:
        return Path(env) / "settings.json"
    from platformdirs import user_config_dir
    return Path(user_config_dir("session-lens", appauthor=False)) / "settings.json"


def load_prices() -> dict[str, Any]:
    """The user's price table (settings ``timelinePrices``), else :data:`DEFAULT_PRICES`."""
    try:
        data = json.loads(settings_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    table = data.get(PRICES_KEY) if isinstance(data, dict) else None
    if isinstance(table, dict) and all(isinstance(v, dict) for v in table.values()):
        return table
    return dict(DEFAULT_PRICES)


# --------------------------------------------------------------------------- cache

class _TimelineHead(msgspec.Struct, array_like=True, frozen=True):
    """What a saved timeline was computed from: checked before anything else of the file is read."""
    format: int
    path: str
    dev: int
    ino: int
    kind: str
    size: int
    mtime_ns: int
    header: str


_TIMELINE_LIMIT = 1 << 30     # a saved timeline bigger than this is not read
_HEAD_DEC = msgspec.msgpack.Decoder(_TimelineHead)
_SPANS_DEC = msgspec.msgpack.Decoder()


def _check(body: Union[bytes, memoryview]) -> bytes:
    return zlib.crc32(body).to_bytes(4, "little")


def _load(path: Path, want: _TimelineHead) -> Optional[SpanTable]:
    """The spans saved at ``path`` when its head is ``want`` and its CRC holds: the file is MAGIC, the head's
    length (4 bytes), the head, the spans, the CRC-32 of all before it.  A file of another log or revision is
    told by its head alone (its spans are neither checked nor decoded)."""
    blob = read_bounded(path, _TIMELINE_LIMIT)    # the cache folder is untrusted (cachefiles.py)
    m = len(MAGIC)
    if blob is None or not blob.startswith(MAGIC) or len(blob) < m + 8:
        return None
    view = memoryview(blob)
    end = m + 4 + int.from_bytes(view[m:m + 4], "little")
    try:
        if end > len(blob) - 4 or _HEAD_DEC.decode(view[m + 4:end]) != want or _check(view[:-4]) != view[-4:]:
            return None
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    collecting = gc.isenabled()
    gc.disable()              # (lists of values, no cycles)
    try:
        return SpanTable.unpack(_SPANS_DEC.decode(view[end:-4]))
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
        return None
    finally:
        if collecting:
            gc.enable()


TICK_S = 0.02          # a tick while computing spans: a cancel stops the computation this soon


def _compute(reader: LogReader, tick: Optional[Callable[[], None]]) -> list[JsonObj]:
    """The spans in log order (:func:`~app.log.query.timeline.in_log_order`: saved so, read so); a big raw
    JSONL log in two parts at once (:func:`app.store.timeline_child.split_spans`)."""
    from .timeline_child import split_spans
    halves = split_spans(reader)
    if halves is not None:
        return in_log_order(halves)
    if tick is None:
        return in_log_order(timeline(reader))
    out: list[JsonObj] = []
    last = time.monotonic()
    for s in timeline(reader):
        out.append(s)
        now = time.monotonic()
        if now - last >= TICK_S:
            last = now
            tick()
    return in_log_order(out)


@overload
def cached_spans(reader: LogReader, *, tick: Optional[Callable[[], None]] = None) -> tuple[SpanTable, str]: ...


@overload
def cached_spans(reader: LogReader, build: bool,
                 tick: Optional[Callable[[], None]] = None) -> tuple[Optional[SpanTable], str]: ...


def cached_spans(reader: LogReader, build: bool = True,
                 tick: Optional[Callable[[], None]] = None) -> tuple[Optional[SpanTable], str]:
    """The log's timeline spans in log order (a :class:`~app.log.query.timeline_table.SpanTable`: by column, a span
    a dict only when read) -> (spans, "hit" | "built" | "uncached"); with ``build=False``
    (None, "miss") instead of computing them; ``tick()`` is called every :data:`TICK_S` while computing them
    (the cancellation point of the job or child computing them)."""
    slot = cache_slot(reader, ".timeline")
    if slot is None:
        return (SpanTable.of(_compute(reader, tick)), "uncached") if build else (None, "miss")
    src, ident, path = slot
    head = _TimelineHead(format=FORMAT, path=ident["path"], dev=ident["dev"], ino=ident["ino"], kind=ident["kind"],
                         size=ident["size"], mtime_ns=ident["mtime_ns"],
                         header=hashlib.sha256(src.header_raw).hexdigest())
    saved = _load(path, head)
    if saved is not None:
        return saved, "hit"
    if not build:
        return None, "miss"
    spans = SpanTable.of(_compute(reader, tick))
    try:
        hb = msgspec.msgpack.encode(head)
        body = MAGIC + len(hb).to_bytes(4, "little") + hb + msgspec.msgpack.encode(spans.pack())
        write_parts_atomic(path, body + _check(body))
    except (OSError, ValueError, TypeError, OverflowError):   # (a value msgpack cannot hold: not saved)
        pass
    return spans, "built"


# --------------------------------------------------------------------------- summary (per price table)

class _SummaryFile(msgspec.Struct):
    """``<key>.tlsum``: the turns (a :class:`SpanTable`'s packed form: by column) and totals of a log revision's
    spans at one price table."""
    format: int
    revision: str              # hash of the log's identity, revision (size, mtime) and header row
    prices: str                # hash of the price table it was priced with
    turns: Any
    totals: JsonObj


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def cached_summary(reader: LogReader, spans: Sequence[JsonObj], prices: dict[str, Any]) -> tuple[JsonObj, str]:
    """``{"turns", "totals"}`` of ``spans`` (the log's, from :func:`cached_spans`) at ``prices``: saved beside the
    spans, reused while the log revision and the price table are the same
    -> (summary, "hit" | "built" | "uncached")."""
    slot = cache_slot(reader, ".tlsum")
    if slot is None:
        out = summarize(spans, prices, ordered=True)
        return {"turns": out["turns"], "totals": out["totals"]}, "uncached"
    src, ident, path = slot
    rev = _digest([FORMAT, ident, hashlib.sha256(src.header_raw).hexdigest()])
    key = _digest(prices)
    try:
        blob = path.read_bytes()
        if _check(blob[:-4]) != blob[-4:]:
            raise OSError("damaged")
        saved = msgspec.msgpack.decode(blob[:-4], type=_SummaryFile)
        if saved.format == FORMAT and saved.revision == rev and saved.prices == key:
            return {"turns": SpanTable.unpack(saved.turns), "totals": saved.totals}, "hit"
    except (OSError, msgspec.DecodeError, msgspec.ValidationError, ValueError):
        pass
    out = summarize(spans, prices, ordered=True)
    try:
        body = msgspec.msgpack.encode(_SummaryFile(format=FORMAT, revision=rev, prices=key,
                                                   turns=SpanTable.of(out["turns"]).pack(), totals=out["totals"]))
        write_parts_atomic(path, body + _check(body))
    except (OSError, ValueError, TypeError, OverflowError):
        pass
    return {"turns": out["turns"], "totals": out["totals"]}, "built"


# --------------------------------------------------------------------------- subagents

def link_children(path: str, spans: Sequence[JsonObj]) -> None:
    """Fill each ``subagent`` span's ``childSession`` ({id, path}) from the session's children in its store
    (headers naming it as ``parentSession``): a child created between the call and its result, else the
    children left in creation order.  Nothing found: left ``None``."""
    if isinstance(spans, SpanTable) and not spans.has_kind("subagent"):
        return                     # (no span built)
    subs = [s for s in spans if s["kind"] == "subagent"]
    if not subs:
        return
    try:
        from .lineage import descendants
        kids = sorted((d for d in descendants(path) if d.get("depth") == 1),
                      key=lambda d: (d.get("createdAt") or 0, d.get("path") or ""))
    except Exception:              # (a store that cannot be listed: no links, the timeline still shows)
        return
    left = list(kids)
    for s in subs:
        st, en = s.get("start"), s.get("end")
        for k in left:
            c = k.get("createdAt")
            if isinstance(c, int) and st is not None and en is not None and st <= c <= en:
                s["childSession"] = {"id": k.get("id"), "path": k.get("path")}
                left.remove(k)
                break
    for s in subs:
        if s["childSession"] is None and left:
            k = left.pop(0)
            s["childSession"] = {"id": k.get("id"), "path": k.get("path")}


def session_timeline(reader: LogReader, path: Optional[str] = None, turn: Optional[int] = None,
                     prices: Optional[dict[str, Any]] = None) -> JsonObj:
    """``{"spans", "turns", "totals", "cache"}`` of a session (``path``: its file, to link subagents); the spans
    and turns of a whole session as :class:`SpanTable` objects (a span a dict only when read), of one ``turn`` as
    lists."""
    spans, status = cached_spans(reader)
    if path:
        link_children(path, spans)
    table = load_prices() if prices is None else prices
    if turn is not None:              # (that turn's spans read as dicts, no other)
        mine = [spans[i] for i, t in enumerate(spans.column("turn")) if t == turn]
        out = summarize(mine, table, turn, ordered=True)
    else:
        summ, _how = cached_summary(reader, spans, table)
        out = {"spans": spans, "turns": summ["turns"], "totals": summ["totals"]}
    out["cache"] = status
    return out

"""Surface statuses and compaction groups of a page's rows (pure: no Qt).

* :func:`page_surface_of` — ``{seq: status}`` for a page's stored events (closure rows are
  appends past the log: always current or log-only, never shadowed), computed in the page
  worker from the reader's :class:`~app.log.fold.surface.SurfaceIndex`.
* :func:`page_groups` — the compactions whose bracket has a row on the page
  (``compaction_group`` records, keyed by compactionId).
* :func:`group_compactions` — a page's rows with each compaction bracket (its
  ``compaction/start``, ``summary``, replacement message(s) and ``end``) shown as **one
  collapsed row** (kind ``compaction``: replaced item count, estimated tokens before/after,
  the summary as text).  An expanded compaction keeps its header row and shows the
  underlying rows after it, in log order.
"""
from __future__ import annotations

import weakref
import zlib
from collections.abc import Iterable
from typing import Any, Optional

from ...log.format.model import is_event
from ...log.fold.surface import compaction_group, page_surface
from ...log.blockfile import BlockFile
from .row_kind import RowKind


LOG_ONLY = {"surface": "log-only"}    # the status of most rows (chunks, non-surface types): one shared
                                      # dict, read only (statuses are never changed in place, only replaced)


def page_surface_of(sindex: Any, page: Any) -> dict:
    """``{seq: status}`` of a page's events; the plain log-only status is one shared dict (issue 36:
    one dict per chunk event was about 1.3 MB a loaded page)."""
    items = [it for it in page.items if is_event(it)]
    if page.tail:
        items += list(page.closure or [])
    out = page_surface(sindex, items)
    for seq, st in out.items():
        if st == LOG_ONLY:
            out[seq] = LOG_ONLY
    return out


SUMMARY_BLOCK = "summaryBlock"      # a slimmed record: its summary's block in the index's BlockFile


def slim_summaries(sindex: Any) -> int:
    """The window's surface index keeps each closed compaction's summary text in a
    :class:`~app.log.blockfile.BlockFile` (issue 36: the texts of a 4 GB log's ~1,800 compactions
    were ~3 MB of the window's heap, held for the few compaction rows loaded at a time); the
    record keeps ``""`` and the block's number, and :func:`page_groups` puts the text back in the
    groups of a page.  Once per index; returns how many summaries moved."""
    if _SUMMARIES.get(sindex) is not None:
        return 0
    store = BlockFile()
    for rec in sindex.compactions:
        text = rec.get("summary")
        if isinstance(text, str) and text and rec.get("endSeq") is not None and SUMMARY_BLOCK not in rec:
            rec[SUMMARY_BLOCK] = len(store)
            store.append(zlib.compress(text.encode("utf-8", "surrogatepass")))
            rec["summary"] = ""
    _SUMMARIES[sindex] = store
    return len(store)


def summary_of(sindex: Any, rec: dict) -> str:
    """The summary text of compaction record ``rec`` (slimmed or not)."""
    k = rec.get(SUMMARY_BLOCK)
    store = _SUMMARIES.get(sindex) if isinstance(k, int) else None
    if store is None or not isinstance(k, int) or rec.get("summary"):
        return rec.get("summary") or ""
    return zlib.decompress(store[k]).decode("utf-8", "surrogatepass")


_SUMMARIES: weakref.WeakKeyDictionary[Any, BlockFile] = weakref.WeakKeyDictionary()


def page_groups(sindex: Any, page: Any) -> dict:
    seqs = {it.seq for it in page.items if is_event(it)}
    out: dict = {}
    for rec in sindex.compactions:
        if seqs.isdisjoint((rec["startSeq"], rec["summarySeq"], *rec["replacementSeqs"], rec["endSeq"])):
            continue                    # (not on the page: its group would not be either)
        g = compaction_group(sindex, rec["compactionId"])
        if g is not None and seqs.intersection(g["rows"]):
            first = next(r for r in sindex.compactions if r["compactionId"] == g["compactionId"])
            g["summary"] = summary_of(sindex, first)
            out[g["compactionId"]] = g
    return out


def group_key(g: dict) -> tuple:
    return ("c", g["compactionId"], g["startSeq"])


def group_compactions(rows: list, groups: dict, expanded: Iterable = (), cache: Optional[dict] = None) -> list:
    """``rows`` with every compaction of ``groups`` folded into one row (see the module doc)."""
    from .rows import Row
    member: dict = {}                       # seq -> compactionId
    for cid, g in groups.items():
        for s in g["rows"]:
            member.setdefault(s, cid)
    if not member:
        return rows
    expanded = set(expanded or ())
    children: dict = {}
    for r in rows:
        cid = member.get(r.seq) if r.seq is not None and not r.synthesized else None
        if cid is not None:
            children.setdefault(cid, []).append(r)
    out: list = []
    placed: set = set()
    for r in rows:
        cid = member.get(r.seq) if r.seq is not None and not r.synthesized else None
        if cid is None:
            out.append(r)
            continue
        if cid not in placed:
            placed.add(cid)
            g = groups[cid]
            kids = tuple(children[cid])
            is_open = cid in expanded
            # one header object per bracket (expanding only re-marks it: the view keeps its selection)
            ckey = group_key(g) + (tuple(id(k) for k in kids), g["complete"], g["tokensAfter"])
            head = cache.get(ckey) if cache is not None else None
            if head is None:
                first = kids[0]
                head = Row(key=group_key(g), kind=RowKind.COMPACTION, seq=first.seq,
                           first_seq=min(k.first_seq if k.first_seq is not None else k.seq for k in kids),
                           last_seq=max(k.seq for k in kids), event=first.event)
                head.group = g
                head.children = list(kids)
                if cache is not None:
                    cache[ckey] = head
            marks = frozenset({"expanded"} if is_open else ())
            if head.marks != marks:
                head.marks = marks
                head.touch()
            out.append(head)
        if cid in expanded:
            out.append(r)
    return out


def toggled(expanded: set, cid: Any) -> bool:
    """Expand a collapsed compaction or collapse an expanded one; True when it is now expanded."""
    if cid in expanded:
        expanded.discard(cid)
        return False
    expanded.add(cid)
    return True

"""The streaming scan of the home full-text search (issue 32): sessions the index does not hold
at their current revision are searched straight from their stored bytes, so a query answers at
once on a home never indexed (or being indexed, or changed since) and nothing is silently
missing.

Per session: one read of the file, the byte prefilter of whole-log find
(:func:`app.log.query.find_needles.fold_prefilter`: caseless, JSON escapes included) for each word of
the query; a file holding none of them is never decoded (most files, for a rare word).  A file
that passes is extracted by the index's own extraction (:func:`app.log.query.extract.extract_jsonl`,
the text :func:`app.log.query.textview.shown_fields` shows) and its entries matched one by one
(:class:`app.store.ftsquery.EntryMatcher`).  zstd logs, big logs and SQLite store sessions go
through their reader.  Hits are ranked by the index's own bm25, computed for them from the
index's corpus statistics (:mod:`app.store.ftsrank`): one ranking with the index's hits.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from ..log.jobctl import Cancel, Cancelled, is_cancelled
from ..log.query.extract import Entry, extract_jsonl, read_whole, reader_entries
from .ftsrank import Bm25
from .ftsquery import (EntryMatcher, ParsedQuery, SearchHit, SessionGroup, scan_snippet, term_groups,
                       with_marks)

if TYPE_CHECKING:
    from ..log.query.find_prefilter import Prefilter


@dataclass
class Pending:
    """A session the index does not hold at its current revision."""
    key: str                     # path, or store#id
    path: str
    project: Optional[str] = None
    store: Optional[str] = None  # a SQLite store's session: the store file
    sid: Optional[str] = None    # its id in the store
    size: int = 0


def _term_filters(pq: ParsedQuery) -> Optional[tuple[list[Prefilter], bool]]:
    """(one prefilter per word that must be in an entry, any-of) or None (no byte filter: a
    filter-only query, or a word the prefilter cannot take)."""
    if not pq.terms:
        return None
    groups = term_groups(pq)
    if len(groups) > 1 or any(neg for g in groups for _i, neg in g):
        # OR / NOT between words: a file is read when it holds a word some group needs
        wanted = sorted({i for g in groups for i, neg in g if not neg})
        pfs = _prefilters([pq.terms[i] for i in wanted])
        return None if pfs is None else (pfs, True)
    pfs = _prefilters(pq.terms)
    return None if pfs is None else (pfs, False)


def _prefilters(terms: list[tuple[str, bool, bool]]) -> Optional[list[Prefilter]]:
    from ..log.query.find_needles import fold_prefilter, shown_only    # (whole-log find's: imported when scanned)
    out = []
    for text, _prefix, _phrase in terms:
        words = text.split()
        longest = max(words, key=lambda w: len(w.encode("utf-8"))) if words else ""
        pf = fold_prefilter(longest) if longest else None
        if pf is None or shown_only(pf):
            return None
        out.append(pf)
    return out


class StreamScan:
    """Scans pending sessions for one parsed query."""

    def __init__(self, pq: ParsedQuery, limit: int):
        self.pq = pq
        self.em = EntryMatcher(pq)            # raises QueryError for a query that selects nothing
        self._filters: Optional[tuple[list[Prefilter], bool]] = None
        self._built = False                   # the prefilters are made for the first scanned session
        self.limit = limit
        self.rank = Bm25(pq)                  # the index's statistics, when there is one: live_search sets them
        self.bytes_read = 0
        self.cancel: Cancel = None             # the job's token: a session stops within 64 rows or entries
        self.skipped = 0                      # sessions the byte prefilter ruled out (never decoded)

    def _hits(self, data: bytes) -> Optional[list[int]]:
        """Sorted positions of the words in ``data`` (None: every row may match; []: the file
        cannot match)."""
        if not self._built:
            self._filters, self._built = _term_filters(self.pq), True
        if self._filters is None:
            return None
        pfs, any_of = self._filters
        found = [pf.positions(data) for pf in pfs]
        if not (any(found) if any_of else all(found)):
            return []
        return sorted(p for ps in found for p in ps)

    def _entries(self, p: Pending) -> tuple[Optional[Any], list[Entry], Optional[str]]:
        """(header (id, cwd, created) or None, entries, title) of one pending session ([] when it
        cannot be read: the index reports it)."""
        if p.store is None and not p.path.endswith((".zstd", ".zst")):
            data, st, _why = read_whole(p.path)
            if data is not None and st is not None:
                self.bytes_read += len(data)
                hits = self._hits(data)
                if is_cancelled(self.cancel):    # (the byte prefilter of a big session: not cut short)
                    raise Cancelled("search")
                if hits is not None and not hits:
                    self.skipped += 1
                    return None, [], None
                keep = None
                if hits is not None:             # decode only the rows holding a word (and the context rows)
                    def keep(pos: int, raw: bytes, hits: list[int] = hits) -> bool:
                        i = bisect.bisect_left(hits, pos)
                        return i < len(hits) and hits[i] < pos + len(raw)
                res = extract_jsonl(p.path, data=data, st=st, keep=keep, cancel=self.cancel)
                if res.status == "ok":
                    return res.header, res.entries, res.title
                if res.status != "fallback":
                    return None, [], None
        from .faces import open_reader
        try:
            if p.store is not None:
                assert p.sid is not None
                r = open_reader(p.store, p.sid)
            else:
                from ..log.index.reader import LogReader
                from ..log.source.sources import open_source
                r = LogReader(open_source(p.path))
        except Exception:  # an unreadable session: the index build reports why
            return None, [], None
        try:
            if r.fatal or r.header is None:
                return None, [], None
            entries, rt = reader_entries(r)
            h = r.header
            return (h.id, h.cwd, h.createdAt), entries, rt.title
        finally:
            r.close()

    def scan(self, p: Pending) -> tuple[Optional[SessionGroup], list[tuple[float, SearchHit]]]:
        """One session: its group (None: no match) and its best hits as (score, hit), lower first."""
        head, entries, title = self._entries(p)
        if head is None or not entries:
            return None, []
        sid, cwd, created = head
        if not self.em.session_ok(str(sid), f"{p.project or ''} {cwd or ''}"):
            return None, []
        n = 0
        best: list[tuple[float, SearchHit]] = []
        for i, (seq, turn, tm, kind, tool, text) in enumerate(entries):
            if not i & 63 and is_cancelled(self.cancel):
                raise Cancelled("search")
            span = self.em.match(kind, tool, tm, text)
            if span is None:
                continue
            n += 1
            score = self.rank.score(text)       # the index's bm25: lower first
            if len(best) < self.limit or score < best[-1][0]:
                snip, mk = scan_snippet(text, span)
                bisect.insort(best, (score, SearchHit(
                    session=str(sid), session_key=p.key, path=p.path, seq=seq, turn=turn, kind=kind, tool=tool,
                    time=tm, snippet=with_marks(snip, mk), marks=mk, text=snip, rank=score, store=p.store)),
                    key=lambda x: x[0])
                if len(best) > self.limit:
                    best.pop()
        if not n:
            return None, []
        return SessionGroup(key=p.key, session=str(sid), path=p.path, title=title, created=created, count=n,
                            store=p.store), best

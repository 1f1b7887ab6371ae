"""Queries of the home full-text index (:mod:`app.store.fulltext`): ranked hits with snippets
made for the returned hits only, per-session counts from the rowids of the matches, filters as
SQL on the entries, and the scan where the Python build has no FTS5."""
from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional

from .ftsglobal import ShardRank, first_rows, global_top, shard_stats
from .ftsquery import (FTS5_MISSING, MARK_CLOSE, MARK_OPEN, EntryMatcher, ParsedQuery, QueryError, SearchHit,
                       SearchResult, SessionGroup, like_prefix, like_sub, parse_query, scan_snippet, split_marks,
                       with_marks)

if TYPE_CHECKING:
    from ..log.query.extract import Entry

# an entry's rowid is (sid << SHIFT) + its number in the session: a session's entries are one rowid
# range (no index on sid to maintain) and per-session counts need only the rowids of the matches
SHIFT = 32


class IndexQueries:
    """The query half of :class:`app.store.fulltext.FullTextIndex` (a mixin: it reads ``conn``,
    ``fts5`` and ``root``)."""
    root: str
    fts5: bool

    @property
    def conn(self) -> sqlite3.Connection:
        raise NotImplementedError

    def indexed_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM sessions WHERE status = 'ok'").fetchone()[0])

    def session_problems(self) -> list[tuple[str, str]]:
        """[(key, problem)] of sessions that could not be indexed."""
        out = [(k, p) for k, p in self.conn.execute("SELECT key, problem FROM sessions WHERE status = 'error'")]
        out += [(p, why) for p, why in self.conn.execute("SELECT path, problem FROM files WHERE kind = 'bad'")]
        return out

    def parts(self) -> list[Any]:
        """The shards a query fans out over (each an :class:`IndexQueries`)."""
        return [self]

    def search(self, query: str, limit: int = 50, offset: int = 0, groups: Optional[int] = 200,
               exclude: Optional[list[list[int]]] = None, exact: bool = True) -> SearchResult:
        """Ranked hits (bm25) with marked snippets, and per-session counts.

        Light queries instead of one heavy one: the ``limit`` best rowids (bm25 over the matches,
        nothing else computed per match), their rows and snippets (for those only), and the
        per-session counts (the rowid-only path of the match, grouped by session).  ``sessions``
        holds the ``groups`` sessions with the most matches plus those of the hits (None: all);
        ``session_total`` counts every session with a match.  A sharded index answers from each
        shard (its best rows, its counts) and the answers are merged by the bm25 one index of all
        the rows would give (:mod:`app.store.ftsglobal`); hits tied in rank go by session, seq
        and kind.  ``exclude``: per shard, the sids whose indexed text is
        stale (answered by a scan instead: :mod:`app.store.ftslive`)."""
        t0 = time.perf_counter()
        pq = parse_query(query)
        if not self.fts5:
            res = self._scan_search(pq, limit)
            res.seconds = time.perf_counter() - t0
            return res
        match = pq.fts()
        if match is None and (pq.not_terms or not (pq.kinds or pq.tools)):
            raise QueryError("give words to look for (filters alone select nothing)" if not pq.not_terms
                             else "give words to look for besides the ones to leave out")
        conds, args, need_s = _filter_sql(pq)
        parts = self.parts()
        lazy = not exact and match is not None and not conds
        want = int(limit) + int(offset)
        one = len(parts) > 1 and match is not None     # one ranking over the shards (app.store.ftsglobal)
        n0 = first_rows(want) if one else want

        def excl(i: int) -> Optional[list[int]]:
            return exclude[i] if exclude is not None and i < len(exclude) else None
        try:
            answers = _each(parts, lambda i, p: p._ranked(match, conds, args, need_s, n0, excl(i), lazy))
            if one:
                assert match is not None

                def fetch(i: int, n: int) -> list[tuple[int, float]]:
                    if n <= n0:
                        return list(answers[i][0])
                    more: list[tuple[int, float]] = parts[i]._top(match, conds, args, need_s, n, excl(i))
                    return more
                top = global_top(ShardRank(pq, shard_stats(parts, pq)), parts, fetch, want)[int(offset):]
            else:
                top = sorted(((rank, i, rowid) for i, (ranked, _c, _n) in enumerate(answers) for rowid, rank in ranked),
                             key=lambda x: (x[0], x[1], x[2]))[int(offset):want]
            got: dict[tuple[int, int], tuple[SearchHit, int]] = {}
            for i, p in enumerate(parts):
                mine = [(rowid, rank) for rank, j, rowid in top if j == i]
                got.update(((i, r), h) for r, h in p._hits(mine, match).items())
            # (ties in the order of the session's key, seq and kind: however the rows are sharded)
            hits = sorted((got[(i, r)][0] for _rank, i, r in top if (i, r) in got),
                          key=lambda h: (h.rank, h.session_key, h.seq, h.kind))
            hit_sids = {(i, got[(i, r)][1]) for _rank, i, r in top if (i, r) in got}
            exact_counts = all(cs is not None for _r, cs, _n in answers)
            if exact_counts:
                counts = [((i, sid), n) for i, (_r, cs, _n) in enumerate(answers) for sid, n in cs or ()]
                total = sum(n for _, n in counts)
            else:               # lazy: the total from count(*) (rowids only), counts of the hits' sessions
                assert match is not None
                total = sum(n for _r, _c, n in answers)
                counts = [((i, sid), parts[i]._session_count(match, sid)) for i, sid in sorted(hit_sids)]
            if groups is not None and len(counts) > groups:
                counts.sort(key=lambda r: (-r[1], r[0]))
                shown = counts[:groups] + [r for r in counts[groups:] if r[0] in hit_sids]
            else:
                shown = counts
            sessions = []
            for i, p in enumerate(parts):
                n_of = {sid: n for (j, sid), n in shown if j == i}
                sessions += [SessionGroup(key=k, session=sid_, path=path, title=t, created=cr, count=n_of[sid],
                                          store=sto) for sid, k, sid_, path, t, cr, sto in p._session_rows(list(n_of))]
        except sqlite3.OperationalError as e:
            raise QueryError(f"cannot run the query {query!r}: {e}") from None
        sessions.sort(key=lambda g: (-g.count, g.key))
        return SearchResult(hits=hits, sessions=sessions, total=total, session_total=len(counts),
                            seconds=time.perf_counter() - t0,
                            sessions_exact=exact_counts or (not offset and total <= len(hits)))

    def _session_count(self, match: str, sid: int) -> int:
        """Matches in one session (its rowid range: FTS5 seeks to it)."""
        return int(self.conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ? AND rowid BETWEEN ? AND ?",
                                     (match, sid << SHIFT, ((sid + 1) << SHIFT) - 1)).fetchone()[0])

    def _ranked(self, match: Optional[str], conds: list[str], args: list[Any], need_s: bool, n: int,
                exclude: Optional[list[int]] = None, lazy: bool = False) -> tuple[
                    list[tuple[int, float]], Optional[list[tuple[int, int]]], int]:
        """This shard's ``n`` best (rowid, rank), its (sid, matches) per session and its number of
        matches, the sessions of ``exclude`` left out.  ``lazy`` (a bare MATCH): no per-session
        counts (None), the number of matches from count(*) (FTS5 reads the rowids only)."""
        if lazy and not exclude and match is not None:
            c = self.conn
            top = self._top(match, conds, args, need_s, n, exclude)
            return top, None, int(c.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (match,)).fetchone()[0])
        if exclude:
            conds = conds + ["e.sid NOT IN (SELECT value FROM json_each(?))"]
            args = args + [json.dumps(sorted(exclude))]
        join_s = " JOIN sessions s ON s.sid = e.sid" if need_s else ""
        extra = "".join(" AND " + x for x in conds)
        c = self.conn
        if match is not None:
            top = self._top(match, conds, args, need_s, n)
            if conds:
                counts = c.execute(f"SELECT e.sid, count(*) FROM fts JOIN entries e ON e.rowid = fts.rowid"
                                   f"{join_s} WHERE fts MATCH ?{extra} GROUP BY e.sid", (match, *args)).fetchall()
            else:
                # the rowids alone say the session
                counts = c.execute(f"SELECT rowid >> {SHIFT}, count(*) FROM fts WHERE fts MATCH ? GROUP BY 1",
                                   (match,)).fetchall()
        else:
            where = " AND ".join(conds)
            top = c.execute(f"SELECT e.rowid, 0.0 FROM entries e{join_s} WHERE {where} ORDER BY e.rowid LIMIT ?",
                            (*args, n)).fetchall()
            counts = c.execute(f"SELECT e.sid, count(*) FROM entries e{join_s} WHERE {where} GROUP BY e.sid",
                               args).fetchall()
        return top, counts, sum(k for _s, k in counts)

    def _top(self, match: str, conds: list[str], args: list[Any], need_s: bool, n: int,
             exclude: Optional[list[int]] = None) -> list[tuple[int, float]]:
        """This shard's ``n`` best (rowid, bm25) of ``match`` (its own statistics) under the filters
        ``conds``, the sessions of ``exclude`` left out."""
        if exclude:
            conds = conds + ["e.sid NOT IN (SELECT value FROM json_each(?))"]
            args = args + [json.dumps(sorted(exclude))]
        if not conds:
            return self.conn.execute("SELECT rowid, bm25(fts) AS r FROM fts WHERE fts MATCH ? ORDER BY r LIMIT ?",
                                     (match, n)).fetchall()
        join_s = " JOIN sessions s ON s.sid = e.sid" if need_s else ""
        extra = "".join(" AND " + x for x in conds)
        return self.conn.execute(
            f"SELECT fts.rowid, bm25(fts) AS r FROM fts JOIN entries e ON e.rowid = fts.rowid{join_s} "
            f"WHERE fts MATCH ?{extra} ORDER BY r LIMIT ?", (match, *args, n)).fetchall()

    def _session_rows(self, sids: list[int]) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        for i in range(0, len(sids), 900):            # under SQLite's bound-parameter limit
            part = sids[i:i + 900]
            rows += self.conn.execute(f"SELECT sid, key, id, path, title, created, store FROM sessions "
                                      f"WHERE sid IN ({','.join('?' * len(part))})", part).fetchall()
        return rows

    def _hits(self, top: list[tuple[int, float]], match: Optional[str]) -> dict[int, tuple[SearchHit, int]]:
        """{rowid: (hit, sid)} of the ranked rowids, snippets made for these only."""
        if not top:
            return {}
        ids = [r for r, _ in top]
        marks = ",".join("?" * len(ids))
        rows = {r[0]: r[1:] for r in self.conn.execute(
            f"SELECT e.rowid, s.key, s.id, s.path, s.store, e.seq, e.turn, e.kind, e.tool, e.time, e.sid "
            f"FROM entries e JOIN sessions s ON s.sid = e.sid WHERE e.rowid IN ({marks})", ids)}
        if match is not None:                 # one rowid at a time: FTS5 seeks to it
            sql = (f"SELECT snippet(fts, 0, '{MARK_OPEN}', '{MARK_CLOSE}', '…', 24) FROM fts "
                   f"WHERE fts MATCH ? AND rowid = ?")
            snips = {}
            for r in ids:
                got = self.conn.execute(sql, (match, r)).fetchone()
                snips[r] = got[0] if got else ""
        else:
            snips = {r: (b[:160] + ("…" if len(b) > 160 else "")) for r, b in self.conn.execute(
                f"SELECT rowid, body FROM fts WHERE rowid IN ({marks})", ids)}
        out = {}
        for rowid, rank in top:
            found = rows.get(rowid)
            if found is None:
                continue
            key, sid, path, store, seq, turn, kind, tool, tm, isid = found
            text, mk = split_marks(snips.get(rowid, ""))
            out[rowid] = (SearchHit(session=sid, session_key=key, path=path, seq=seq, turn=turn, kind=kind, tool=tool,
                                    time=tm, snippet=with_marks(text, mk), marks=mk, text=text, rank=rank,
                                    store=store), isid)
        return out

    def _scan_search(self, pq: ParsedQuery, limit: int) -> SearchResult:
        """No FTS5: every session's entries (the same extraction as the index) checked one by one:
        words in one entry, -words left out, every filter (kind, tool, session, project, after, before)."""
        from ..log.query.extract import extract_jsonl, reader_entries
        from .discovery import discover
        from .faces import open_info
        em = EntryMatcher(pq)
        hits: list[SearchHit] = []
        groups: list[SessionGroup] = []
        listing = discover(self.root)
        for info in listing.sessions:
            if not em.session_ok(info.id, f"{info.project or ''} {info.cwd or ''}"):
                continue
            entries: list[Entry] = []
            res = extract_jsonl(info.path) if info.format == "jsonl" and not info.store else None
            if res is not None and res.status == "ok":
                entries = res.entries
            else:
                try:
                    r = open_info(info)
                except Exception:
                    continue
                try:
                    if r.fatal:
                        continue
                    entries, _rt = reader_entries(r)
                finally:
                    r.close()
            n = 0
            for seq, turn, tm, kind, tool, text in entries:
                span = em.match(kind, tool, tm, text)
                if span is None:
                    continue
                n += 1
                if len(hits) < limit:
                    snip, mk = scan_snippet(text, span)
                    hits.append(SearchHit(session=info.id, session_key=info.key, path=info.path, seq=seq, turn=turn,
                                          kind=kind, tool=tool, time=tm, snippet=with_marks(snip, mk), marks=mk,
                                          text=snip, store=info.store))
            if n:
                groups.append(SessionGroup(key=info.key, session=info.id, path=info.path, title=info.title,
                                           created=info.created_at, count=n, store=info.store))
        groups.sort(key=lambda g: -g.count)
        return SearchResult(hits=hits, sessions=groups, total=sum(g.count for g in groups), session_total=len(groups),
                            fallback=FTS5_MISSING)


def beside(other: Callable[[], Any], main: Callable[[], Any]) -> tuple[Any, Any]:
    """(``main()``, ``other()``): ``other`` run in a thread while ``main`` runs here (the freshness
    check's system calls beside the query's SQLite work: both let go of the GIL)."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(1) as ex:
        fut = ex.submit(other)
        got = main()
        return got, fut.result()


def _each(parts: list[Any], fn: Any) -> list[Any]:
    """``fn(i, part)`` for every shard, at once in threads when there are several (SQLite lets go
    of the GIL while a query runs: the shards' bm25 passes share the cores)."""
    if len(parts) == 1:
        return [fn(0, parts[0])]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(len(parts) - 1) as ex:     # (the first shard in this thread: one thread fewer to start)
        rest = ex.map(lambda ip: fn(*ip), list(enumerate(parts))[1:])
        first = fn(0, parts[0])
        return [first, *rest]


def _filter_sql(pq: ParsedQuery) -> tuple[list[str], list[Any], bool]:
    """SQL conditions on entries ``e`` / sessions ``s`` for the query's filters: (conditions,
    arguments, sessions needed)."""
    conds: list[str] = []
    args: list[Any] = []

    def one_of(col: str, vals: list[str], neg: bool) -> None:
        if vals:
            conds.append(f"{col} {'NOT ' if neg else ''}IN ({','.join('?' * len(vals))})")
            args.extend(vals)
    one_of("e.kind", pq.kinds, False)
    one_of("e.kind", pq.not_kinds, True)
    for vals, neg in ((pq.tools, False), (pq.not_tools, True)):    # exact names, or name* a prefix
        if vals:
            conds.append(("NOT " if neg else "") + "(" + " OR ".join(
                "lower(coalesce(e.tool, '')) LIKE ? ESCAPE '\\'" if t.endswith("*")
                else "lower(coalesce(e.tool, '')) = ?" for t in vals) + ")")
            args += [like_prefix(t[:-1].lower()) if t.endswith("*") else t.lower() for t in vals]
    need_s = False
    for vals, neg in ((pq.sessions, False), (pq.not_sessions, True)):
        if vals:
            conds.append(("NOT " if neg else "") + "(" + " OR ".join("s.id LIKE ? ESCAPE '\\'" for _ in vals) + ")")
            args += [like_prefix(x) for x in vals]
            need_s = True
    for vals, neg in ((pq.projects, False), (pq.not_projects, True)):
        if vals:
            conds.append(("NOT " if neg else "") + "(" + " OR ".join(
                "(coalesce(s.project, '') LIKE ? ESCAPE '\\' OR coalesce(s.cwd, '') LIKE ? ESCAPE '\\')"
                for _ in vals) + ")")
            for x in vals:
                args += [like_sub(x), like_sub(x)]
            need_s = True
    if pq.after is not None:
        conds.append("e.time >= ?")
        args.append(pq.after)
    if pq.before is not None:
        conds.append("e.time < ?")
        args.append(pq.before)
    return conds, args, need_s

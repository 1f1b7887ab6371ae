"""Search a home now, whatever state its full-text index is in (issue 32 item 1, issue 28 item 4).

:func:`live_search` answers from two sources that never overlap:

* the index, for every session it holds at the session's current revision: the shards' ``files``
  tables are read inside a read transaction (a WAL snapshot), the stat walk of the root is
  compared with them, and the ranked queries run in the same snapshot, leaving out the sessions
  whose indexed text is stale (grown, rewritten, removed).  A build running meanwhile (another
  thread or process) commits sessions the snapshot does not see: they are scanned instead;
* the streaming scan (:mod:`app.store.ftsstream`) of every other session: those never indexed,
  changed since, or left out by a build that was killed.  Its hits stream in through
  ``on_partial`` while it runs.

So every hit is counted exactly once, and the answer names the sessions that are not indexed
(``unindexed``) and the state of the build (``build``): a partial index is never answered from
silently.  :func:`start_background_build` starts the build in a detached worker process (the
``fts-build`` kind of :data:`app.store.childproc.WORKERS`) so the next query finds the index.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional

from ..log.jobctl import Cancel, Cancelled, is_cancelled
from .ftsquery import EntryMatcher, SearchHit, SearchResult, SessionGroup, parse_query
from .ftsrank import Bm25, index_stats
from .ftswalk import Scanned, scan_root, walk_digest

if TYPE_CHECKING:
    from .ftsstream import Pending
    from .fulltext import FullTextIndex
# (the scan and the extraction are imported when there is a session to scan: issue 32)

OnPartial = Optional[Callable[[SearchResult], None]]


def _snapshot(parts: list[Any]) -> tuple[dict[str, tuple[Any, ...]], list[dict[str, int]]]:
    """Open a read transaction on every shard: ({path: (dev, ino, size, mtime_ns, kind)},
    per shard {session key: sid})."""
    _begin(parts)
    return _load(parts)


def _begin(parts: list[Any]) -> None:
    for p in parts:
        c = p.conn
        if c.in_transaction:
            c.execute("COMMIT")
        c.execute("BEGIN")


def _same_walk(ix: FullTextIndex, digest: Optional[str]) -> bool:
    """Does the index (in the read transaction begun) hold exactly the files of the walk whose
    digest is ``digest``?  Its last update ended whole with that walk and none began since
    (an update removes the digest first): then every session is indexed at its revision."""
    if digest is None:
        return False
    r = ix.conn.execute("SELECT value FROM meta WHERE key = 'walk'").fetchone()
    return r is not None and r[0] == digest


def _load(parts: list[Any]) -> tuple[dict[str, tuple[Any, ...]], list[dict[str, int]]]:
    files: dict[str, tuple[Any, ...]] = {}
    keys: list[dict[str, int]] = []
    for p in parts:
        c = p.conn
        for r in c.execute("SELECT path, dev, ino, size, mtime_ns, kind FROM files"):
            files[r[0]] = r[1:]
        keys.append({k: sid for k, sid in c.execute("SELECT key, sid FROM sessions WHERE status = 'ok'")})
    return files, keys


def pending_list(ix: FullTextIndex, walked: Optional[Scanned] = None) -> list[Pending]:
    """The sessions of ``ix``'s root it does not hold at their current revision (stat only;
    ``walked``: the stat walk of the root, made by the caller)."""
    if walked is None:
        walked = ix.walk()
    parts = ix.parts()
    try:
        files, keys = _snapshot(parts)
    finally:
        _end(parts)
    return pending_sessions(ix.root, files, keys, walked)[0]


def _end(parts: list[Any]) -> None:
    for p in parts:
        if p.conn.in_transaction:
            p.conn.execute("COMMIT")


def pending_sessions(root: str, files: dict[str, tuple[Any, ...]], keys: list[dict[str, int]],
                     walk: Optional[Scanned] = None) -> tuple[list[Pending], list[list[int]]]:
    """(sessions the snapshot does not hold at their current revision, per shard the sids whose
    indexed text is stale or gone).  Stat only, except a changed SQLite store (listed).  ``walk``
    may be made before the snapshot: a session indexed between the two is then scanned (its
    file's stat no longer matches), never counted twice."""
    from .ftsio import list_store
    from .ftsstream import Pending
    walked, stores = walk if walk is not None else scan_root(root)
    pending: list[Pending] = []
    fresh: set[str] = set()
    for path, st, project in walked:
        prev = files.get(path)
        if prev is not None and tuple(prev[:4]) == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns):
            if prev[4] == "session":
                fresh.add(path)
            continue                            # the same file: not a session, or a reported bad one
        pending.append(Pending(key=path, path=path, project=project, size=st.st_size))
    for path, st in stores:
        prev = files.get(path)
        if prev is not None and tuple(prev[:4]) == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns):
            fresh.update(k for ks in keys for k in ks if k.startswith(path + "#"))
            continue
        try:
            listed = list_store(path)
        except Exception:  # a broken store: the build reports it
            continue
        for h in listed:
            pending.append(Pending(key=f"{path}#{h['id']}", path=path, store=path, sid=str(h["id"]), size=st.st_size))
    stale = [[sid for k, sid in ks.items() if k not in fresh] for ks in keys]
    return pending, stale


def ranked(hits: list[SearchHit]) -> list[SearchHit]:
    """Hits in one order whichever part found them: bm25, then session, seq and kind (equal texts
    in copied sessions tie)."""
    return sorted(hits, key=lambda h: (h.rank, h.session_key, h.seq, h.kind))


def _merge(base: SearchResult, groups: list[SessionGroup], scored: list[tuple[float, SearchHit]],
           limit: int) -> SearchResult:
    """The index's answer with the scan's so far: one ranking (the scan's hits carry the index's
    bm25, :mod:`app.store.ftsrank`; ties in the order of :func:`ranked`); every session with a
    match counted once."""
    hits = ranked(list(base.hits) + [h for _s, h in scored])[:limit]
    sessions = sorted(base.sessions + groups, key=lambda g: (-g.count, g.key))
    return SearchResult(hits=hits, sessions=sessions, total=base.total + sum(g.count for g in groups),
                        session_total=base.session_total + len(groups), fallback=base.fallback,
                        unindexed=base.unindexed, build=base.build, total_exact=base.total_exact,
                        sessions_exact=base.sessions_exact, walked=base.walked)


def _index_answer(ix: FullTextIndex, pq: Any, query: str, limit: int, exact: bool, walked: Optional[Scanned],
                  build: str) -> tuple[SearchResult, list[Pending], Optional[Bm25], Optional[Scanned]]:
    """The index's part of :func:`live_search`, in one read snapshot: (its answer, the sessions it
    does not hold at their current revision, the bm25 of this snapshot for the scan's hits, the
    walk made).  A current index with a manifest (:mod:`app.store.ftsfresh`) is queried while the
    manifest is checked beside it; only when the check fails is the root walked and the query
    made again, the stale sessions left out."""
    from .ftsfresh import fresh_digest, manifest_of, recorded_digest
    from .ftssearch import beside
    blob = manifest_of(ix) if walked is None and build == "done" else None
    recorded = recorded_digest(blob)
    if walked is None and recorded is None:
        walked = ix.walk()                      # before the snapshot: see pending_sessions
    parts = ix.parts()
    try:
        _begin(parts)
        pending: list[Pending] = []
        stale: list[list[int]] = [[] for _ in parts]
        base = None
        if walked is None and _same_walk(ix, recorded):
            base, fresh = beside(lambda: fresh_digest(blob) == recorded,
                                 lambda: ix.search(query, limit=limit, exclude=stale, exact=exact))
            if not fresh:                       # something changed since: walk (in this snapshot) and ask again
                base, walked = None, ix.walk()
        if base is None:
            if walked is None:                  # (an update since the manifest was recorded)
                walked = ix.walk()
            if not _same_walk(ix, walk_digest(walked) if build == "done" else None):
                files, keys = _load(parts)      # (else the files the last whole update indexed: nothing to compare)
                pending, stale = pending_sessions(ix.root, files, keys, walked)
            base = ix.search(query, limit=limit, exclude=stale, exact=exact)
        rank = None
        if pending and pq.terms:                 # the scan's hits ranked by the statistics of this snapshot
            rank = Bm25(pq, index_stats(parts, pq))
    finally:
        _end(parts)
    return base, pending, rank, walked


def live_search(ix: FullTextIndex, query: str, limit: int = 50, on_partial: OnPartial = None,
                cancel: Cancel = None, every: float = 0.1, exact: bool = True,
                walked: Optional[Scanned] = None) -> SearchResult:
    """The answer over every session of ``ix``'s root: the index where it is current, the
    streaming scan elsewhere (``on_partial(result so far)`` at most every ``every`` seconds while
    it runs; ``cancel`` - the job's token, or any :data:`app.log.jobctl.Cancel` - stops it between sessions
    and within one read whole (:data:`app.log.query.extract.CANCEL_ROWS`): the answer then says ``partial``).  ``exact`` False: a
    broad query's total is counted lazily (:meth:`app.store.ftssearch.IndexQueries.search`)."""
    t0 = time.perf_counter()
    pq = parse_query(query)
    EntryMatcher(pq)                             # a query that selects nothing fails here, at once
    if not ix.fts5:
        return ix.search(query, limit=limit)     # no FTS5: the whole answer is a scan already
    build = ix.build_state()
    base, pending, rank, walked = _index_answer(ix, pq, query, limit, exact, walked, build)
    base.unindexed = [p.key for p in pending]
    base.build = build
    base.walked = walked
    if not pending:
        base.hits = ranked(base.hits)
        base.seconds = time.perf_counter() - t0
        return base
    groups: list[SessionGroup] = []
    scored: list[tuple[float, SearchHit]] = []
    last = time.perf_counter()
    done = 0
    from ..log.query.extract import ExtractCancelled
    from .ftsstream import StreamScan
    scan = StreamScan(pq, limit)
    if rank is not None:
        scan.rank = rank
    scan.cancel = cancel
    for p in sorted(pending, key=lambda p: p.size):      # small sessions first: first hits sooner
        if is_cancelled(cancel):
            break
        try:
            g, best = scan.scan(p)
        except (ExtractCancelled, Cancelled):     # (within the session being read)
            break
        done += 1
        if g is not None:
            groups.append(g)
            scored = sorted(scored + best, key=lambda x: x[0])[:limit]
        if on_partial is not None and time.perf_counter() - last >= every:
            last = time.perf_counter()
            part = _merge(base, groups, scored, limit)
            part.scanned, part.partial = done, True
            part.seconds = last - t0
            on_partial(part)
    res = _merge(base, groups, scored, limit)
    res.scanned = done
    res.partial = done < len(pending)
    res.seconds = time.perf_counter() - t0
    return res


# --------------------------------------------------------------------------- the background build

def build_main(argv: list[str]) -> int:
    """The ``fts-build`` worker: ``ROOT [DB]``: bring that index up to date, then exit (nothing
    on stdout; a second build started meanwhile waits for this one's lock, then finds little to do)."""
    from .fulltext import FullTextIndex
    if not argv:
        return 2
    with FullTextIndex(argv[0], db_path=argv[1] if len(argv) > 1 else None) as ix:
        ix.update()
    return 0


def start_background_build(root: str, db_path: Optional[str]) -> bool:
    """Start :func:`build_main` detached (its own session: it outlives the CLI that started it).
    -> False when it could not be started (the next query scans again)."""
    import subprocess
    from . import childproc
    args = [root] + ([db_path] if db_path else [])
    try:
        childproc.spawn_worker("fts-build", *args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return False
    return True


"""``session-lens find`` (whole-log find in one session) and ``session-lens search`` (a home's
full-text index).  Plain output holds no control characters (snippets are one plain line)."""
from __future__ import annotations


from .errors import UsageError
from .main import COMMANDS, CliError, session_reader, emit


def start_background_build(root: str, db_path) -> bool:
    from ..store.ftslive import start_background_build as start
    return start(root, db_path)


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"1 {word}"
    return f"{n:,} {word}{'es' if word.endswith(('ch', 'sh', 's', 'x')) else 's'}"


# --------------------------------------------------------------------------- find

def _cfg_find(p):
    p.add_argument("path", help="a session file (session.jsonl, session.jsonl.zstd) or a SQLite store")
    p.add_argument("text", help="text to look for (a regular expression with --regex)")
    p.add_argument("--session", help="session id inside a SQLite store")
    p.add_argument("--regex", action="store_true", help="TEXT is a regular expression (Python syntax)")
    p.add_argument("--case", action="store_true", help="case-sensitive")
    p.add_argument("--word", action="store_true", help="whole words only")
    p.add_argument("--kind", action="append", default=None,
                   help="only these kinds: user, assistant, reasoning, tool-call, tool-output, error, title "
                        "(repeat or comma-separate)")
    p.add_argument("--limit", type=int, default=None, help="stop after N hits")


def _run_find(args):
    from ..log.query.find import FindOptions, FindStats, find
    kinds = None
    if args.kind:
        kinds = [k for arg in args.kind for k in arg.split(",") if k.strip()]
    try:
        opts = FindOptions(args.text, regex=args.regex, case=args.case, word=args.word, kinds=kinds)
    except ValueError as e:
        raise CliError(str(e)) from None
    from .progress import cli_progress
    r = session_reader(args)
    stats = FindStats()
    try:
        with cli_progress(args, "find") as progress:
            # (each hit's snippet made as it comes: the find then decodes the rows as they come, not again later)
            hits = [h for h in find(r, opts, stats=stats, limit=args.limit, progress=progress) if h.to_dict()]
    except ValueError as e:
        raise CliError(str(e)) from None
    obj = {"count": len(hits), "hits": [h.to_dict() for h in hits], "bytesScanned": stats.bytes_scanned,
           "complete": stats.complete}
    if stats.problems:
        obj["problems"] = [str(p) for p in stats.problems]

    def text():
        where = "the whole log" if stats.complete else "the log up to the limit"
        if not hits:
            return f"no match in the whole log ({_plural(stats.bytes_scanned, 'byte')} searched)"
        lines = [f"{_plural(len(hits), 'match')} in {where} ({_plural(stats.bytes_scanned, 'byte')} searched)"]
        for h in hits:
            turn = "-" if h.turn is None else h.turn
            lines.append(f"  seq {h.seq:>7}  turn {turn:>5}  {h.kind:<11}  {h.snippet}")
        return "\n".join(lines)
    emit(args, obj, text)


COMMANDS["find"] = ("search the whole log of one session", _cfg_find, _run_find)


# --------------------------------------------------------------------------- search (home index)

def _cfg_search(p):
    p.add_argument("home", help="Harness home, JSONL root, folder of sessions, or SQLite store")
    p.add_argument("query", nargs="?", default=None,
                   help='words, "phrases", prefix*, filters tool:NAME kind:KIND session:ID after:DATE '
                        'before:DATE project:NAME')
    p.add_argument("--limit", type=int, default=50, help="at most N hits (default 50)")
    p.add_argument("--rebuild", action="store_true", help="drop the index of HOME and build it again")
    p.add_argument("--no-update", action="store_true",
                   help="query the index as it is (sessions not indexed are scanned; no build started)")
    p.add_argument("--exact", action="store_true", help="count every match exactly (a broad query counts lazily)")


# a few changed sessions are indexed before answering; more are scanned now and indexed in the background
INLINE_SESSIONS = 50
INLINE_BYTES = 32 << 20


def _index_state(res) -> dict:
    """The ``index`` field: the build's state and the sessions answered by a scan instead."""
    d: dict = {"build": res.build, "complete": not res.unindexed and res.build == "done",
               "notIndexed": len(res.unindexed)}
    if res.unindexed:
        d["scanned"] = res.scanned
        d["notIndexedSessions"] = res.unindexed[:100]
    return d


def _state_line(res, background: bool) -> str:
    """One line saying what the index did not answer (empty: it answered everything)."""
    if not res.unindexed and res.build == "done":
        return ""
    why = {"running": "the index is being built", "interrupted": "the index build did not finish",
           "never": "the index was never built"}.get(res.build, "sessions changed since the index was updated")
    n = len(res.unindexed)
    line = f"note: {why}: {_plural(n, 'session')} not indexed" + (", searched by a scan" if n else "")
    if res.partial:
        line += f" (stopped after {res.scanned:,})"
    if background:
        line += "; indexing in the background"
    return line


def _unchanged(ix, n: int):
    """The report of an update that found nothing changed (none is run): counts (``n`` sessions
    indexed) and known problems."""
    from ..store.fulltext import UpdateReport
    probs = ix.session_problems()
    rep = UpdateReport(sessions=n + sum(1 for k, _p in probs if k), unchanged=n)
    rep.problems = [f"{k}: {p}" for k, p in probs]
    return rep


def _catch_up(ix, unindexed: list, build: str, walked, indexed: int) -> tuple:
    """After an answer: (update report or None, started in the background).  A few changed
    sessions are indexed now, more by a detached build; nothing changed: nothing is opened (and
    when a stat walk said so, its manifest is kept: the next query checks it instead of walking)."""
    if not unindexed:
        if walked is not None and build == "done":
            from ..store.ftsfresh import keep_manifest
            keep_manifest(ix, walked)
        return _unchanged(ix, indexed), False
    if build == "running":
        return None, False
    sizes = {p.key: p.size for p in ix.pending(walked)}
    if len(unindexed) <= INLINE_SESSIONS and sum(sizes.get(k, 0) for k in unindexed) <= INLINE_BYTES:
        return ix.update(walked=walked), False
    return None, start_background_build(ix.root, None if ix.db_path == ix.default_path() else ix.db_path)


def _search_text(args, obj: dict, res, rep, background: bool) -> str:
    """The plain output of ``search`` (one plain line per hit)."""
    from ..log.query.textview import plain
    from ..store.fulltext import SearchHit
    lines = []
    if args.query:
        if res.fallback:
            lines.append(f"note: {res.fallback}")
        state = _state_line(res, background)
        if state:
            lines.append(state)
        if not res.hits:
            lines.append(f"no match in {_plural(obj['indexed'], 'indexed session')}"
                         + (f" and {_plural(len(res.unindexed), 'scanned session')}" if res.unindexed else ""))
        else:
            about = "" if res.total_exact else "about "
            where = _plural(res.session_total, "session")
            if not res.sessions_exact and res.session_total < res.total:
                where = f"{res.session_total:,}+ sessions"     # counted lazily (--exact counts them all)
            lines.append(f"{about}{_plural(res.total, 'match')} in {where} "
                         f"({_plural(obj['indexed'], 'session')} indexed"
                         + (f", {len(res.unindexed):,} scanned" if res.unindexed else "") + ")")
            by: dict[str, list[SearchHit]] = {}
            for h in res.hits:
                by.setdefault(h.session_key, []).append(h)
            for g in res.sessions:
                hs = by.get(g.key)
                if not hs:
                    continue
                lines.append(f"{plain(g.session)}  {plain(g.title or '-')}  ({_plural(g.count, 'match')})\n"
                             f"  {plain(g.path)}")
                for h in hs:
                    lines.append(f"    seq {h.seq:>7}  turn {'-' if h.turn is None else h.turn:>5}  "
                                 f"{h.kind:<11}  {h.snippet}")
    else:
        lines.append(f"index rebuilt: {_plural(obj['indexed'], 'session')} indexed")
    if rep is not None and rep.problems:
        lines.append(f"{_plural(len(rep.problems), 'problem')} (not indexed):")
        lines += [f"  {plain(p)}" for p in rep.problems]
    return "\n".join(lines)


def _run_search(args):
    from ..store.fulltext import FullTextIndex, IndexRefused, QueryError
    from ..store.ftslive import live_search
    if not args.query and not args.rebuild:
        raise UsageError("give a QUERY (or --rebuild)")
    background = False
    try:
        ix = FullTextIndex.for_home(args.home)
    except IndexRefused as e:
        raise CliError(str(e)) from None
    with ix:
        rep = None
        if args.rebuild:
            rep = ix.rebuild()
        obj: dict = {}
        if args.query:
            try:                              # one freshness check (the manifest's, else a stat walk) serves
                res = live_search(ix, args.query, limit=args.limit, exact=args.exact)   # the query and the update
            except QueryError as e:
                raise CliError(str(e)) from None
            indexed = ix.indexed_count()      # before the catch-up: the sessions the index answered for
            if not args.no_update and not args.rebuild:   # the answer is whole already; the index catches up
                rep, background = _catch_up(ix, res.unindexed, res.build, res.walked, indexed)
            obj = {"hits": [h.to_dict() for h in res.hits], "sessions": res.session_total,
                   "sessionsExact": res.sessions_exact,
                   "indexed": indexed,
                   "total": res.total, "totalExact": res.total_exact,
                   "index": _index_state(res),
                   "bySession": [{"session": g.session, "path": g.path, "title": g.title, "count": g.count}
                                 for g in res.sessions]}
            if background:
                obj["index"]["background"] = True
            if res.fallback:
                obj["fallback"] = res.fallback
        else:                                 # --rebuild alone
            obj = {"indexed": ix.indexed_count()}
        if rep is not None:
            obj["update"] = rep.to_dict()
            if rep.problems:
                obj["problems"] = list(rep.problems)

    emit(args, obj, lambda: _search_text(args, obj, res if args.query else None, rep, background))


COMMANDS["search"] = ("full-text search across the sessions of a home (an index in the user cache)",
                      _cfg_search, _run_search)

"""``session-lens find`` (whole-log search of one session) and ``session-lens search`` (a home's
full-text index).  Plain output holds no control characters (snippets are one plain line)."""
from __future__ import annotations


from .main import COMMANDS, CliError, _reader, emit


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
    from ..log.query.search import FindOptions, FindStats, find
    kinds = None
    if args.kind:
        kinds = [k for arg in args.kind for k in arg.split(",") if k.strip()]
    try:
        opts = FindOptions(args.text, regex=args.regex, case=args.case, word=args.word, kinds=kinds)
    except ValueError as e:
        raise CliError(str(e)) from None
    from .progress import cli_progress
    r = _reader(args)
    stats = FindStats()
    try:
        with cli_progress(args, "find") as progress:
            hits = list(find(r, opts, stats=stats, limit=args.limit, progress=progress))
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
    p.add_argument("--no-update", action="store_true", help="query the index as it is (no incremental update)")


def _run_search(args):
    from ..log.query.textview import plain
    from ..store.fulltext import FullTextIndex, QueryError, SearchHit
    if not args.query and not args.rebuild:
        raise CliError("give a QUERY (or --rebuild)")
    with FullTextIndex.for_home(args.home) as ix:
        if args.rebuild:
            rep = ix.rebuild()
        elif not args.no_update:
            rep = ix.update()
        else:
            rep = None
        obj: dict = {}
        if args.query:
            try:
                res = ix.search(args.query, limit=args.limit)
            except QueryError as e:
                raise CliError(str(e)) from None
            obj = {"hits": [h.to_dict() for h in res.hits], "sessions": res.session_total,
                   "indexed": ix.indexed_count(), "total": res.total,
                   "bySession": [{"session": g.session, "path": g.path, "title": g.title, "count": g.count}
                                 for g in res.sessions]}
            if res.fallback:
                obj["fallback"] = res.fallback
        else:
            obj = {"indexed": ix.indexed_count()}
        if rep is not None:
            obj["update"] = rep.to_dict()
            if rep.problems:
                obj["problems"] = list(rep.problems)

    def text():
        lines = []
        if args.query:
            if res.fallback:
                lines.append(f"note: {res.fallback}")
            if not res.hits:
                lines.append(f"no match in {_plural(obj['indexed'], 'indexed session')}")
            else:
                lines.append(f"{_plural(res.total, 'match')} in {_plural(res.session_total, 'session')} "
                             f"({_plural(obj['indexed'], 'session')} indexed)")
                by: dict[str, list[SearchHit]] = {}
                for h in res.hits:
                    by.setdefault(h.session_key, []).append(h)
                for g in res.sessions:
                    hs = by.get(g.key)
                    if not hs:
                        continue
                    lines.append(f"{g.session}  {g.title or '-'}  ({_plural(g.count, 'match')})\n  {g.path}")
                    for h in hs:
                        lines.append(f"    seq {h.seq:>7}  turn {'-' if h.turn is None else h.turn:>5}  "
                                     f"{h.kind:<11}  {h.snippet}")
        else:
            lines.append(f"index rebuilt: {_plural(obj['indexed'], 'session')} indexed")
        if rep is not None and rep.problems:
            lines.append(f"{_plural(len(rep.problems), 'problem')} (not indexed):")
            lines += [f"  {plain(p)}" for p in rep.problems]
        return "\n".join(lines)
    emit(args, obj, text)


COMMANDS["search"] = ("full-text search across the sessions of a home (an index in the user cache)",
                      _cfg_search, _run_search)

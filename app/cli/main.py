"""``session-lens``: the command line over the same read faces as the app.

Every subcommand takes ``--json``.  Errors exit with the code their class carries (app/cli/errors.py:
2 refused input, 3 internal error) and one line on stderr; problems that still let a log open are
listed in ``problems`` and exit 0.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable


from ..textutil import json_text
from .errors import EXIT_INTERRUPTED, EXIT_OK, CliError, InputError, exit_code_of

# name -> (help, configure(parser), run(args)); feature modules add their own entries
COMMANDS: dict[str, tuple[str, Callable, Callable]] = {}


def emit(args, obj, text: Callable[[], str] | None = None) -> None:
    from .termtext import json_safe, term_safe, write_out
    if args.json or text is None:
        write_out(json_safe(json_text(obj, ensure_ascii=False, indent=None if args.json else 2)) + "\n")
    else:
        write_out(term_safe(text()) + "\n")


def say(line: str) -> None:
    """One line on stderr (an error message may quote log text: neutralised)."""
    from .termtext import term_safe, write_out
    write_out(term_safe(line) + "\n", sys.stderr)


def session_reader(args, indexed: bool = False):
    """The session named on the command line; ``indexed``: with its seq index (persistent cache)."""
    from ..store.faces import open_reader
    r = open_reader(args.path, getattr(args, "session", None))
    if r.fatal:
        raise InputError(f"{args.path}: {r.fatal}")
    if indexed:
        from ..store.indexcache import cached_index
        cached_index(r)
    return r


def item_json(it, hidden: bool = False, attempt=None, view=None) -> dict:
    from ..log.format.model import is_event     # (msgspec: not imported by commands that need no events)
    if is_event(it):
        row: dict[str, object] = {"line": it.line, "offset": it.offset if it.offset >= 0 else None}
        out: dict[str, object] = {"event": it.envelope(), "row": row}
        if it.packed:
            row["packed"] = it.packed
            row["member"] = it.member
        if it.legacy:
            out["legacy"] = it.legacy
        if it.synthesized:
            out["synthesized"] = True
        if not it.known:
            out["unknownType"] = True
        if hidden:
            out["hidden"] = True
        if attempt is not None:
            out["attempt"] = {"firstSeq": attempt.first_seq, "status": attempt.status}
        if view is not None:
            out["view"] = view
        return out
    return {"bad": {"kind": it.kind, "reason": it.reason, "line": it.line,
                    "offset": it.offset if it.offset >= 0 else None,
                    "raw": it.raw.decode("utf-8", errors="replace")}}


# --------------------------------------------------------------------------- list

def _cfg_list(p):
    p.add_argument("path", nargs="?", help="Harness home, JSONL root, project folder, session file or SQLite store "
                                           "(default: $DSH_HOME or ~/.dsh)")
    p.add_argument("--exact-titles", action="store_true",
                   help="read the middle of big logs too, so that every title is exact (a first list reads only "
                        "a bounded head and tail of each log: a title found only in the head is provisional, "
                        "titleExact false)")


def _run_list(args):
    from ..store import title_cache, titles
    from ..store.discovery import discover, harness_home
    path = args.path or str(harness_home())
    import gc
    collecting = gc.isenabled()
    gc.disable()          # (tens of thousands of small objects, no cycles: the collector's passes cost 10-20 %)
    try:
        listing = discover(path, titles=True, workers=os.cpu_count() or 1,    # header + title in one open (cached)
                           exact=getattr(args, "exact_titles", False))
        rows = []
        for s in listing.sessions:
            s.title = titles.session_title(s)
            rows.append(s.to_dict())
    finally:
        if collecting:
            gc.enable()
    title_cache.save()
    obj = {"kind": listing.kind, "root": listing.root, "sessions": rows, "problems": listing.problems}
    from .truth_cmd import list_writers
    list_writers(rows, listing.sessions)          # a fresh fork seed or a released lock is not "live"

    def text():
        from .termtext import one_line as o     # (ids, titles, paths: a line break in one cannot forge a line)
        lines = [f"{listing.kind}: {o(listing.root)} ({len(rows)} sessions)"]
        for r in rows:
            lin = f" <- {o(r['parentSession'])}" if r["parentSession"] else ""
            prov = "" if r["titleExact"] else "  (title provisional: --exact-titles reads the middle)"
            lines.append(f"  {o(r['id'])}  {r['format']:5}  {r['size']:>10}  {o(r['title'] or '-')}{lin}{prov}\n"
                         f"    {o(r['path'])}")
        lines += [f"problem: {o(p)}" for p in listing.problems]
        return "\n".join(lines)
    if args.json:                                 # (10,000 rows: msgspec encodes them in a tenth of the time)
        import msgspec

        from .termtext import json_safe, write_out
        try:
            dumped = msgspec.json.encode(obj).decode("utf-8")
        except (UnicodeEncodeError, TypeError, OverflowError):        # (a surrogate-escaped file name)
            dumped = json.dumps(obj, ensure_ascii=False)
        write_out(json_safe(dumped) + "\n")
        return
    emit(args, obj, text)


COMMANDS["list"] = ("list the sessions of a store", _cfg_list, _run_list)


# --------------------------------------------------------------------------- inspect

def cfg_session_path(p):
    p.add_argument("path", help="a session file (session.jsonl, session.jsonl.zstd) or a SQLite store")
    p.add_argument("--session", help="session id inside a SQLite store")


def _run_inspect(args):
    from ..log.query.analysis import inspect
    from ..store.discovery import generation_facts
    from .truth_cmd import add_writer, is_live, writer_of
    r = session_reader(args)
    ws = writer_of(args, r)                       # live writer: no synthesized closure, inFlight instead
    try:
        before = os.stat(r.path) if r.source.kind != "sqlite" else None
    except OSError:
        before = None
    obj = add_writer(inspect(r, live=is_live(ws)), ws, r)
    obj.setdefault("formatVersion", getattr(r, "version", 0))
    if before is not None:                        # every row was read: the list's title cache learns the exact title
        from ..store import titles
        titles.record_full_read(os.path.abspath(r.path), before, obj.get("title"))
    if r.source.kind != "sqlite":
        gf = generation_facts(r.path)
        obj["generation"] = gf["generation"]            # the generation file read
        obj["generations"] = gf["generations"]          # the other generations in its folder
        if gf["generation"] and not gf["readsNewest"]:
            obj["problems"].append(f"older-generation: {gf['generation']} is not the generation dsh reads (a newer "
                                   "one is present); opened as asked")
        obj["problems"].extend(gf.get("generationProblems") or [])
    else:
        obj["generation"], obj["generations"] = None, []
    obj.setdefault("dshWouldRefuse", False)

    def text():
        keys = ["id", "format", "formatVersion", "generation", "title", "events", "lastSeq", "turns", "messages",
                "attempts", "hiddenAttempts", "openTail", "closure", "dshWouldRefuse"]
        keys += [k for k in ("writer", "inFlight") if obj.get(k) is not None]
        from .termtext import one_line as o     # (one line each, whatever the log's text holds)
        lines = [f"{k:>15}: {o(obj.get(k))}" for k in keys]
        lines += [f"     generation: {o(g['name'])} (v{g['version']}, not read)" for g in obj.get("generations") or []]
        lines += [f"        problem: {o(p)}" for p in obj["problems"]]
        return "\n".join(lines)
    emit(args, obj, text)


def _cfg_inspect(p):
    from .truth_cmd import cfg_writer
    cfg_session_path(p)
    cfg_writer(p)


COMMANDS["inspect"] = ("summary facts of one session (writer live/idle/crashed/complete)", _cfg_inspect,
                       _run_inspect)


# --------------------------------------------------------------------------- messages

def _cfg_messages(p):
    cfg_session_path(p)
    p.add_argument("--through", type=int, help="fold the prefix through this seq (inclusive)")
    p.add_argument("--physical", action="store_true", help="without the logical closure")
    _cfg_as_written(p)


def _cfg_as_written(p):
    p.add_argument("--as-written", action="store_true",
                   help="a v0-v3 log in the writer-era shape (default: as today's dsh derives it, migrated to v4)")


def dsh_refusal(args, reader, checks=None) -> list:
    """Why dsh would refuse to load this log (a corrupt committed row, an envelope it rejects):
    [] when it would load it; else the reasons, and one warning line on stderr.  The command
    still answers (issue 12)."""
    from ..log.index.verdict import dsh_verdict, refusal_summary
    refusals = dsh_verdict(reader, checks)
    if refusals:
        print(f"session-lens {args.cmd}: warning: {refusal_summary(refusals)}; answering from the rows that read",
              file=sys.stderr)
    return [str(p) for p in refusals]


def _run_messages(args):
    from ..log.index.integrity import EventChecks
    from ..log.format.lazyrows import iter_messages
    from ..log.format.model import message_text
    r = session_reader(args)
    checks = EventChecks()
    # streamed, one message at a time (flat memory however long the log); the fold and its checks
    # are complete when the first message comes, so the refusal is known before anything is written
    msgs = iter_messages(r, args.through, logical=not args.physical, checks=checks, as_written=args.as_written)
    first = next(msgs, None)
    refusal = dsh_refusal(args, r, checks)
    from .termtext import json_safe, one_line, term_safe, write_out

    class _Out:                                   # every piece neutralised for the terminal, UTF-8
        @staticmethod
        def write(text: str) -> None:
            write_out(json_safe(text) if args.json else term_safe(text))
    out = _Out()
    if args.json:
        # one shape whatever the log (README "JSON answers"): the verdict first, then the streamed messages
        out.write(json.dumps({"dshWouldRefuse": bool(refusal), "problems": refusal})[:-1] + ', "messages": [')
    n = 0
    for m in (_chain_first(first, msgs) if first is not None else ()):
        if args.json:
            out.write(("" if n == 0 else ", ") + json_text(m, ensure_ascii=False))
        else:
            body = message_text(m) or json.dumps(m.get("content"), ensure_ascii=False)[:200]
            out.write(f"[{one_line(m.get('role'))}] {body}\n")
        n += 1
    if args.json:
        out.write("]}\n")
    elif n == 0:
        out.write("\n")


def _chain_first(first, rest):
    yield first
    yield from rest


COMMANDS["messages"] = ("the derived model messages", _cfg_messages, _run_messages)


# --------------------------------------------------------------------------- request

def _cfg_request(p):
    cfg_session_path(p)
    p.add_argument("--at", type=int, required=True, help="a seq of the attempt (first chunk, any chunk, its message)")
    _cfg_as_written(p)


def _run_request(args):
    from ..log.query.analysis import RequestError, request_at
    from ..log.index.integrity import EventChecks
    r = session_reader(args, indexed=True)
    checks = EventChecks()
    try:
        if r.version in (0, 2, 3, 4) and not r.envelope_free and r.source.kind in ("jsonl", "zstd"):
            from ..log.fold import checkpoints
            from ..store.indexcache import cached_checkpoints
            obj = checkpoints.request_at(r, args.at, cached_checkpoints(r)[0], checks=checks,   # nearest + replay
                                         as_written=args.as_written)
        else:
            obj = request_at(r, args.at, checks=checks, as_written=args.as_written)
    except RequestError as e:
        raise CliError(str(e)) from None
    refusal = dsh_refusal(args, r, checks)
    obj["dshWouldRefuse"] = bool(refusal)
    obj["problems"] = refusal                     # always there (one shape per command)
    emit(args, obj, None)


COMMANDS["request"] = ("the exact request at a dispatch boundary", _cfg_request, _run_request)


# --------------------------------------------------------------------------- page

def _cfg_page(p):
    cfg_session_path(p)
    p.add_argument("--before", type=int, help="page of events with seq < BEFORE")
    p.add_argument("--limit", type=int, default=50, help="messages per page (default 50)")
    face = p.add_mutually_exclusive_group()
    face.add_argument("--logical", action="store_true", help="logical face (default): closure applied")
    face.add_argument("--physical", action="store_true", help="the rows as stored, bad rows included")
    p.add_argument("--attempts", action="store_true", help="include hidden (failed) attempts")
    p.add_argument("--wait", action="store_true", help="the tail of a big log whose surface index is not cached "
                   "yet: fold the whole log for the row statuses (default: shown pending)")
    from .truth_cmd import cfg_writer
    cfg_writer(p)


def page_json(reader, page, physical: bool, attempts: bool, live: bool = False, wait: bool = True) -> dict:
    """``live``: a writer is alive, so the tail page is the live face (no crash closure); ``wait`` False:
    the row statuses pending rather than a fold of a big log (app.cli.page_cold)."""
    from ..log.format.model import is_event
    from ..log.fold.attempts import find_attempts
    from .truth_cmd import annotate_page, page_items
    items = page_items(page, physical, live)
    evs = [it for it in items if is_event(it)]
    tracker = find_attempts(evs)
    views = {}
    try:
        from ..presenters.registry import views_for_page     # (the package registers the built-in presenters)
        views = views_for_page(evs)
    except ImportError:
        pass
    out = []
    hidden_ranges: list[dict[str, object]] = []
    for it in items:
        a = tracker.attempt_of(it.seq) if is_event(it) and it.type in ("assistant/chunk", "assistant/attempt") else None
        hidden = bool(a and a.hidden_by_default)
        if a is not None and hidden and not attempts:
            if not hidden_ranges or hidden_ranges[-1]["firstSeq"] != a.first_seq:
                hidden_ranges.append({"firstSeq": a.first_seq, "lastSeq": a.last_seq, "reason": a.failure_reason()})
            continue
        out.append(item_json(it, hidden=hidden, attempt=a if hidden else None,
                             view=views.get(it.seq) if is_event(it) else None))
    obj = {"face": "physical" if physical else "logical", "events": out, "hasMore": page.has_more,
           "baseSeq": page.base_seq, "lastSeq": page.last_seq, "messages": page.messages, "tail": page.tail,
           "hiddenAttempts": hidden_ranges,
           "closure": [e.type for e in page.closure] if (page.tail and not physical) else [],
           "droppedRows": len(page.dropped) if page.tail else 0}
    return annotate_page(reader, page, items, out, obj, live, physical, wait)   # surface, compactions, truth


def _run_page(args):
    r = session_reader(args, indexed=args.before is not None)
    page = r.tail_page(args.limit) if args.before is None else r.page_before(args.before, args.limit)
    from .truth_cmd import entry_marks, compaction_lines, is_live, writer_of
    ws = writer_of(args, r) if page.tail and not args.physical else None
    obj = page_json(r, page, physical=args.physical, attempts=args.attempts, live=is_live(ws),
                    wait=args.wait or args.before is not None)
    if ws is not None:
        obj["writer"] = ws["writer"]

    def text():
        lines = []
        for e in obj["events"]:
            if "bad" in e:
                lines.append(f"  !! {e['bad']['kind']}: {e['bad']['reason']}  (line {e['bad']['line']}, byte {e['bad']['offset']})")
                continue
            ev = e["event"]
            mark = " [synthesized]" if e.get("synthesized") else (" [hidden attempt]" if e.get("hidden") else "")
            mark += entry_marks(e)
            lines.append(f"{ev['seq']:>7} {ev['type']}{mark}")
        lines += compaction_lines(obj)
        if obj["surfaceStatus"] == "pending":
            import shlex
            from .page_cold import PENDING_LINE
            lines.append(PENDING_LINE.format(path=shlex.quote(args.path)))
        lines.append(f"hasMore={obj['hasMore']} baseSeq={obj['baseSeq']} face={obj['face']}")
        return "\n".join(lines)
    emit(args, obj, text)


COMMANDS["page"] = ("one history page, newest first by default", _cfg_page, _run_page)


# --------------------------------------------------------------------------- entry

def _load_plugins():
    """Subcommands living next to their features register themselves on import."""
    import importlib
    for mod in ("app.cli.gui_cmd", "app.cli.fork_cmd", "app.cli.live_cmd", "app.cli.audit_cmd",
                "app.cli.truth_cmd", "app.cli.search_cmd", "app.cli.index_cmd", "app.cli.doctor_cmd",
                "app.cli.timeline_cmd", "app.cli.asof_cmd"):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise


class _Version(argparse._VersionAction):
    """``--version``: the version and the row scanner in use (imported only when asked)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from ..store.doctor import scanner
        self.version = f"{self.version} (row scanner: {scanner()})"
        super().__call__(parser, namespace, values, option_string)


# a plugin command whose module is imported alone (``session-lens search`` starts faster: issue 32)
PLUGIN_OF = {"search": "app.cli.search_cmd", "find": "app.cli.search_cmd"}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser.  ``only``: a command already registered (one of this module's):
    only its sub-parser is built and no plugin module is imported (a command's run needs no more;
    no command, ``--help`` or an unknown word get the whole parser)."""
    if only not in COMMANDS and only in PLUGIN_OF:
        import importlib
        importlib.import_module(PLUGIN_OF[only])
    if only not in COMMANDS:
        only = None
        _load_plugins()
    parser = argparse.ArgumentParser(prog="session-lens", description="Browse dsh agent session logs.")
    from .. import __version__
    parser.add_argument("--version", action=_Version, version=f"session-lens {__version__}")
    sub = parser.add_subparsers(dest="cmd")
    for name, (help_, cfg, _run) in list(COMMANDS.items()):      # (a cfg may import a plugin module)
        if only is not None and name != only:
            continue
        p = sub.add_parser(name, help=help_)
        cfg(p)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.add_argument("--quiet", action="store_true", help="no progress line on stderr (shown only on a terminal)")
    return parser


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    if argv and argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version"):
        from .mistyped import refuse_unknown
        if (rc := refuse_unknown(parser, argv[0], COMMANDS)) is not None:
            return rc                  # a typo (`session-lens doctr`): usage and the nearest command
        argv = ["gui"] + argv          # `session-lens PATH [--screenshot …]` opens the window
    args = parser.parse_args(argv)
    if not args.cmd:
        if "gui" in COMMANDS:
            args = parser.parse_args(["gui"])
        else:
            parser.print_help()
            return 0
    run = COMMANDS[args.cmd][2]
    try:
        rc = run(args)
        return int(rc or 0)
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as e:  # one clear line, never a traceback wall; the code comes from the class
        code = exit_code_of(e)
        if code == 3 and os.environ.get("SESSION_LENS_DEBUG"):
            raise
        say(f"session-lens {args.cmd}: {error_line(e, code)}")
        return code


def error_line(e: BaseException, code: int) -> str:
    """What stderr says for ``e`` (exit ``code``): the message; an OSError's path and reason; for an
    internal error its type too."""
    if isinstance(e, OSError) and not isinstance(e, (CliError, FileNotFoundError)):
        what = e.strerror or str(e)
        where = f"{os.fsdecode(e.filename)}: " if e.filename and os.fsdecode(e.filename) not in what else ""
        return f"{where}{what}"
    if code == 3 and not isinstance(e, CliError):
        return f"internal error: {type(e).__name__}: {e}"
    return f"internal error: {e}" if code == 3 else str(e)


if __name__ == "__main__":
    sys.exit(main())

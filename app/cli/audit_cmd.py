"""Audit subcommands: ``trace``, ``export`` (all formats), ``diff``, ``stats``.

Imported by :mod:`app.cli.main` when present; ``export`` (registered only here) takes
``--format raw|logical|markdown|html|zip [--redact] --out OUT``; the older
``--raw OUT`` / ``--logical OUT`` options keep working.
"""
from __future__ import annotations

import json

from .errors import UsageError
from .main import COMMANDS, CliError, cfg_session_path, session_reader, emit


# --------------------------------------------------------------------------- trace

def _cfg_trace(p):
    cfg_session_path(p)
    p.add_argument("--seq", type=int, help="trace this event (default: trace the session lineage)")
    p.add_argument("--cap", type=int, default=50, help="at most this many request boundaries listed (default 50)")
    p.add_argument("--session-lineage", action="store_true", help="also trace the session lineage")


def _run_trace(args):
    from ..log.query.trace import TraceError
    from ..store.lineage import trace_session
    from ..store.requests import exact_trace
    obj: dict = {}
    try:
        if args.seq is not None:
            session_reader(args).close()            # (a fatal log: refused as every command refuses it)
            # from the saved checkpoints and surface index when there are some, else one pass
            obj = exact_trace(args.path, getattr(args, "session", None), args.seq, request_cap=args.cap, build=False)
        if args.seq is None or args.session_lineage:
            obj["session"] = trace_session(args.path)
    except TraceError as e:
        raise CliError(str(e)) from None

    def text():
        if args.seq is None:
            s = obj["session"]
            lines = [f"session {s['target']['id']}", f"ancestors: {[a['id'] for a in s['ancestors']]}"]

            def walk(ts, d):
                for t in ts:
                    lines.append("  " * d + f"- {t['id']} ({t['path']})")
                    walk(t["children"], d + 1)
            lines.append("descendants:")
            walk(s["descendants"], 1)
            lines.append("complete" if s["complete"] else f"incomplete: unresolved parent {s['unresolvedParentId']}")
            return "\n".join(lines)
        return json.dumps(obj, ensure_ascii=False, indent=2)
    emit(args, obj, text)


COMMANDS["trace"] = ("trace an event (surface, replacements, compaction, attempt, requests) or the session lineage",
                     _cfg_trace, _run_trace)


# --------------------------------------------------------------------------- export

def _cfg_export(p):
    cfg_session_path(p)
    p.add_argument("--format", choices=("raw", "logical", "markdown", "html", "zip"), help="export format")
    p.add_argument("--out", metavar="OUT", help="output file (zip: a file or a folder for dsh-session-<id>.zip)")
    p.add_argument("--redact", action="store_true",
                   help="mask API keys, tokens, e-mails and home paths; writes OUT.redaction.json "
                        "(a redacted raw export is re-encoded, no longer byte-identical)")
    p.add_argument("--home", help="Harness home whose attachments/ the zip bundle reads images from")
    p.add_argument("--raw", metavar="OUT", help="(legacy) the stored bytes, identical")
    p.add_argument("--logical", metavar="OUT", help="(legacy) JSONL of the logical view")
    p.add_argument("--force", action="store_true", help="overwrite OUT")


def _run_export(args):
    from ..store.export import export
    if not (args.format or args.raw or args.logical):
        raise UsageError("export needs --format FORMAT --out OUT (or --raw OUT / --logical OUT)")
    if args.format and not args.out:
        raise UsageError("--format needs --out OUT")
    from .progress import cli_progress
    r = session_reader(args)
    obj = {}
    if args.format:
        with cli_progress(args, f"export {args.format}") as progress:
            obj[args.format] = export(r, args.format, args.out, redact=args.redact, overwrite=args.force,
                                      home=args.home, progress=progress)
    if args.raw:
        with cli_progress(args, "export raw") as progress:
            obj["raw"] = export(r, "raw", args.raw, redact=args.redact, overwrite=args.force, progress=progress)
    if args.logical:
        with cli_progress(args, "export logical") as progress:
            obj["logical"] = export(r, "logical", args.logical, redact=args.redact, overwrite=args.force,
                                    progress=progress)
    emit(args, obj, None)


COMMANDS["export"] = ("export a session: raw, logical, markdown, html or a dsh zip bundle", _cfg_export, _run_export)


# --------------------------------------------------------------------------- diff

def _cfg_diff(p):
    cfg_session_path(p)
    p.add_argument("--steps", nargs=2, metavar=("A", "B"),
                   help="compare the requests of two steps (turn.step, e.g. 1.1 1.2) or dispatch boundary seqs")
    p.add_argument("--attempts", action="store_true", help="failed attempts beside the committed message per step")
    p.add_argument("--step", metavar="T.S", help="with --attempts: only this step")
    p.add_argument("--fork", action="store_true", help="compare this fork child with its parent")
    p.add_argument("--parent", help="with --fork: the parent session file (default: found by parentSession)")
    p.add_argument("--full", action="store_true", help="include both full requests in --steps output")
    p.add_argument("--as-written", action="store_true",
                   help="with --steps: a v0-v3 log's requests in the writer-era shape (default: as today's dsh "
                        "derives them, migrated to v4)")


def _ref(s: str):
    return s if "." in s else int(s)


def _run_diff(args):
    from ..log.query.diff import DiffError, attempt_diff, fork_diff, request_diff
    from ..store.lineage import find_parent_path
    from ..store.faces import open_reader
    r = session_reader(args)
    obj: dict = {}
    try:
        if args.steps:
            d = request_diff(r, _ref(args.steps[0]), _ref(args.steps[1]), as_written=args.as_written)
            if not args.full:
                d.pop("requests", None)
            obj["requests"] = d
        if args.attempts:
            t = s = None
            if args.step:
                t, s = (int(x) for x in args.step.split(".", 1))
            obj["attempts"] = attempt_diff(r, t, s)
        if args.fork:
            pp = args.parent or find_parent_path(args.path)
            if not pp:
                raise CliError(f"{args.path}: parent session not found (give --parent)")
            obj["fork"] = fork_diff(r, open_reader(pp))
    except DiffError as e:
        raise CliError(str(e)) from None
    if not obj:
        raise UsageError("diff needs --steps A B, --attempts or --fork")
    emit(args, obj, lambda: json.dumps(obj, ensure_ascii=False, indent=2))


COMMANDS["diff"] = ("diff two steps' requests, failed vs committed attempts, or a fork child vs its parent",
                    _cfg_diff, _run_diff)


# --------------------------------------------------------------------------- stats

def _run_stats(args):
    from ..log.query.stats import compute_stats, step_label
    r = session_reader(args)
    obj = compute_stats(r)

    def text():
        lines = ["step   in      out    cache   reason  latency  tools  retries errors"]
        for s in obj["steps"]:
            tk = s["tokens"]
            lat = f"{s['latencyMs']}ms" if s["latencyMs"] is not None else "?"
            lines.append(f"{step_label(s):6} {tk['input']:<7} {tk['output']:<6} {tk['cacheRead']:<7} "
                         f"{tk['reasoning']:<7} {lat:<8} {sum(s['toolCalls'].values()):<6} {s['retries']:<7} "
                         f"{','.join(s['errors']) or '-'}")
        lines += _totals_lines(obj["totals"])
        return "\n".join(lines)
    emit(args, obj, text)


def _totals_lines(t) -> list[str]:
    """The totals as readable lines (never a Python dict's repr)."""
    tk = t["tokens"]
    tokens = ", ".join(f"{v:,} {k}" for k, v in
                       (("in", tk["input"]), ("out", tk["output"]), ("cache read", tk["cacheRead"]),
                        ("cache write", tk["cacheWrite"]), ("reasoning", tk["reasoning"])))
    tools = ", ".join(f"{name} {n}" for name, n in sorted(t["toolCalls"].items())) or "none"
    return [f"total tokens: {tokens}",
            f"total: {t['steps']} steps, {t['turns']} turns, attempts {t['attempts']} ({t['failedAttempts']} failed), "
            f"retries {t['retries']}, errors {t['errors']}",
            f"tool calls: {tools}"]


COMMANDS["stats"] = ("per-step and per-turn tokens, latency, tool calls, retries, errors", cfg_session_path, _run_stats)


# --------------------------------------------------------------------------- audit window

def _cfg_audit(p):
    cfg_session_path(p)
    p.add_argument("--seq", type=int, help="trace this seq first")
    p.add_argument("--tab", choices=("trace", "diff", "plots", "stats"), default="trace")
    p.add_argument("--diff", type=int, default=0, help="index of the comparison shown in the diff tab (negative: from the end)")
    p.add_argument("--screenshot", metavar="PNG", help="render the window, save it as PNG and exit")
    p.add_argument("--size", default="980x640", help="window size WxH (default 980x640)")


def _run_audit(args):
    from PySide6.QtWidgets import QApplication
    from ..ui.audit import AuditWindow, open_audit_window, save_screenshot
    r = session_reader(args)
    app = QApplication.instance() or QApplication(["session-lens"])
    w = open_audit_window(r, args.seq, show=True)
    assert isinstance(w, AuditWindow)         # open_audit_window is typed as returning a QWidget
    try:
        wd, ht = (int(x) for x in args.size.lower().split("x", 1))
        w.resize(wd, ht)
    except ValueError:
        raise UsageError(f"bad --size {args.size!r} (want WxH)") from None
    w.select_tab(args.tab)
    n = w.diff_view.chooser.count()
    if args.tab == "diff" and n and -n <= args.diff < n:
        w.diff_view.chooser.setCurrentIndex(args.diff % n)
    if args.screenshot:
        save_screenshot(w, args.screenshot)
        emit(args, {"screenshot": args.screenshot, "tab": args.tab}, None)
        w.close()
        return 0
    return app.exec()


COMMANDS["audit"] = ("the audit window: trace, diffs, plots and stats (--screenshot PNG to render and exit)",
                     _cfg_audit, _run_audit)

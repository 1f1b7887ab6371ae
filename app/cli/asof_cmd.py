"""``session-lens asof PATH --seq N [--diff B] [--json]``: the session as it stood at seq N (issue 30).

From the log's saved seq index and fold checkpoints (:mod:`app.store.indexcache`, built on first
use) plus a replay from the nearest checkpoint (:func:`app.log.fold.asof.as_of`); surface statuses
from the saved surface index, trimmed to the prefix.  A bad seq (negative, past the end, not a
number) is one line and exit 2.
"""
from __future__ import annotations

from typing import Any

from .main import COMMANDS, CliError, cfg_session_path, session_reader, dsh_refusal, emit


def _cfg(p) -> None:
    cfg_session_path(p)
    p.add_argument("--seq", required=True, metavar="N", help="the position: the session right after seq N")
    p.add_argument("--diff", metavar="B", help="also what changed between seq N and seq B")


def load(args) -> tuple[Any, Any, Any]:
    """(reader, checkpoints or None, surface index) of the session named on the command line."""
    from ..log.fold.surface import index_for
    r = session_reader(args, indexed=True)
    cps = None
    si = None
    if r.version in (0, 2, 3, 4) and not r.envelope_free and r.source.kind in ("jsonl", "zstd"):
        from ..store.indexcache import cached_checkpoints
        from ..store.surface_cache import cached_surface
        cps = cached_checkpoints(r)[0]
        si = cached_surface(r)[0]
    return r, cps, si if si is not None else index_for(r)


def answer(r, cps, si, seq: object, side=None) -> dict[str, Any]:
    """The ``asof --json`` object for one position."""
    from ..log.fold.asof import as_of, surface_as_of
    st = as_of(r, seq, cps, side)
    out = {"seq": st["seq"], "turn": st["turn"], "step": st["step"], "title": st["title"], "todos": st["todos"],
           "messages": st["messages"], "surface": surface_as_of(si, st["seq"]),
           "pendingToolCalls": st["pendingToolCalls"], "request": st["request"]}
    for k in ("time", "openTurn", "modes", "header", "messageSeqs", "children", "requestBoundary", "nodes",
              "requestNote"):
        out[k] = st[k]
    return out


def _run(args) -> None:
    from ..log.fold.asof import AsOfError, SideIndex
    from ..log.query.asofdiff import diff_states, diff_lines, state_lines
    r, cps, si = load(args)
    side = SideIndex(r, cps) if cps is not None else None
    try:
        a = answer(r, cps, si, args.seq, side)
        b = answer(r, cps, si, args.diff, side) if args.diff is not None else None
    except AsOfError as e:
        raise CliError(str(e)) from None
    refusal = dsh_refusal(args, r)
    if b is not None:
        obj: dict[str, Any] = {"from": a, "to": b, "diff": diff_states(a, b, si)}
        text = "\n".join(diff_lines(obj["diff"]))
    else:
        obj = a
        text = "\n".join(state_lines(a))
    if refusal:
        obj["dshWouldRefuse"], obj["problems"] = True, refusal
    emit(args, obj, lambda: text)


COMMANDS["asof"] = ("the session as it stood at a seq (replay), or what changed between two seqs", _cfg, _run)

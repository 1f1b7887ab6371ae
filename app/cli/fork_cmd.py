"""``session-lens fork``: the host fork, durable before it reports success."""
from __future__ import annotations

from .main import COMMANDS, CliError, cfg_session_path, session_reader, dsh_refusal, emit


def _cfg(p):
    cfg_session_path(p)
    p.add_argument("--at", type=int, help="message anchor seq (promoted to its whole completed turn; a seq past "
                                          "the last event is refused); default: after the last completed turn")
    p.add_argument("--out", metavar="STORE", help="JSONL root or Harness home to publish the child in "
                                                   "(default: the source's store)")
    p.add_argument("--live", action="store_true", help="treat the source as live: refuse an open turn instead "
                                                       "of forking from the logical view")
    p.add_argument("--preview", action="store_true", help="say what the child would contain; write nothing")
    p.add_argument("--id", dest="child_id", help="child session id (default session-<uuid>)")


def _run(args):
    from ..log.fold.fork import ForkError
    from ..store.fork_verify import ForkVerifyError
    from ..store.forking import fork, preview
    r = session_reader(args, indexed=True)
    try:
        if args.preview:
            obj = preview(r, args.at, live=args.live, strict_anchor=True)
        else:
            from .progress import cli_progress
            with cli_progress(args, "fork") as progress:        # stderr, only on a terminal (--quiet: none)
                obj = fork(r, args.at, out_store=args.out, child_id=args.child_id, live=args.live,
                           strict_anchor=True, progress=progress)
    except (ForkError, ForkVerifyError) as e:
        raise CliError(str(e)) from None
    refusal = dsh_refusal(args, r)
    obj["dshWouldRefuse"] = bool(refusal)
    obj["problems"] = refusal                     # always there (one shape per command)

    def text():
        if args.preview:
            return (f"child would hold seq 0..{obj['boundary']} ({obj['turns']} turns), then session/end-seed; "
                    f"last message: {(obj.get('lastMessage') or '-')[:120]}")
        return f"forked {obj['parentSession']} -> {obj['id']}\n  {obj['child']}\n  seedLength {obj['seedLength']}"
    from .truth_cmd import with_fork_title
    emit(args, with_fork_title(r, obj, args.preview), text)


COMMANDS["fork"] = ("fork a session from a message (durable before success)", _cfg, _run)

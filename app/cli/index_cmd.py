"""``session-lens index PATH``: build (or reuse) the persistent seq index of a log."""
from __future__ import annotations

from .main import COMMANDS, cfg_session_path, session_reader, emit


def _run_index(args):
    from ..store.indexcache import index_summary
    r = session_reader(args)
    obj = index_summary(r)

    def text():
        how = {"hit": "cached", "extended": "cached, extended", "built": "built and cached",
               "uncached": "built (not cached)"}[obj["status"]]
        return (f"{obj['events']} events, {obj['turns']} turns, {obj['bytes']} bytes: {how} "
                f"in {obj['seconds']:.3f} s")
    emit(args, obj, text)


COMMANDS["index"] = ("build or reuse the persistent seq index of a session (user cache folder)", cfg_session_path,
                     _run_index)

"""Fork double barrier (the parent's copied range is durable before the child is published) and
dsh's child title rule."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from app.log.fold.lineage import child_title, title_base
from app.store.faces import open_reader
from app.store.forking import fork

repo_root = Path(__file__).resolve().parents[1]
DEMO = repo_root / "resources/demo/sessions/--home-dev-demo-project--"


def _fd_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return f"fd:{fd}"


@pytest.fixture
def trace(monkeypatch):
    """Every fsync / fdatasync (with the file it flushed) and link, in order."""
    calls: list = []
    real_fsync, real_fdatasync, real_link = os.fsync, getattr(os, "fdatasync", None), os.link

    def fsync(fd):
        calls.append(("fsync", _fd_path(fd)))
        return real_fsync(fd)

    def fdatasync(fd):
        calls.append(("fdatasync", _fd_path(fd)))
        return real_fdatasync(fd)

    def link(src, dst, *a, **k):
        r = real_link(src, dst, *a, **k)
        calls.append(("link", os.path.abspath(dst)))
        return r
    monkeypatch.setattr(os, "fsync", fsync)
    if real_fdatasync is not None:
        monkeypatch.setattr(os, "fdatasync", fdatasync)
    monkeypatch.setattr(os, "link", link)
    return calls


def _sha(p) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


V4 = repo_root.parent / "shared/fixtures/dsh-next/0217po+deepseek-harness@f4a32dbd0a/snapshots/session/tool-call-turn"


@pytest.mark.parametrize("name", ["demo-long-goal/session.jsonl", "demo-zstd/session.jsonl.zstd",
                                  "tool-call-turn/session.v4.jsonl"])
def test_parent_range_durable_before_child_published(tmp_path, trace, name):
    src_dir = tmp_path / "sessions" / "--home-dev-demo-project--" / Path(name).parent
    src_dir.mkdir(parents=True)
    parent = src_dir / Path(name).name
    shutil.copyfile((V4.parent if name.startswith("tool-call-turn") else DEMO) / name, parent)
    before = (_sha(parent), os.stat(parent).st_mtime_ns, os.stat(parent).st_size)
    r = open_reader(str(parent))
    trace.clear()
    res = fork(r, None, child_id="child-barrier")
    child = os.path.abspath(res["child"])
    assert res["bytesCopied"] > 0
    ops = list(trace)
    # the parent file and its folder were flushed …
    p_sync = [i for i, (op, p) in enumerate(ops) if op in ("fsync", "fdatasync") and p == str(parent)]
    d_sync = [i for i, (op, p) in enumerate(ops) if op == "fsync" and p == str(src_dir)]
    assert p_sync and d_sync, ops
    # … before the child's name exists (the link that publishes it): no moment with a durable
    # child whose seed the parent could still lose
    (i_link,) = [i for i, (op, p) in enumerate(ops) if op == "link" and p == child]
    assert p_sync[0] < i_link and d_sync[0] < i_link
    # the child itself: its temp file flushed before the link, its folder after
    tmp_sync = [i for i, (op, p) in enumerate(ops[:i_link]) if op == "fsync" and
                os.path.basename(p).startswith(os.path.basename(child)) and p.endswith(".tmp")]
    assert tmp_sync, ops
    assert any(op == "fsync" and p == os.path.dirname(child) for op, p in ops[i_link:])
    # a flush, not a write: the parent is byte-identical and untouched
    assert (_sha(parent), os.stat(parent).st_mtime_ns, os.stat(parent).st_size) == before


def test_sqlite_parent_flushed_before_the_child_transaction(tmp_path, trace, monkeypatch):
    import app.store.sqlite_writer as sq
    db = tmp_path / "store.sqlite"
    sq.jsonl_to_sqlite(str(DEMO / "demo-todo/session.jsonl"), str(db))
    parent = open_reader(str(db))
    real = sq.append_batch

    def append_batch(*a, **k):                      # the child's one transaction
        trace.append(("child-transaction", str(db)))
        return real(*a, **k)
    monkeypatch.setattr(sq, "append_batch", append_batch)
    trace.clear()
    res = fork(parent, None, child_id="child-sql")
    assert res["format"] == "sqlite"
    (i_child,) = [i for i, (op, _) in enumerate(trace) if op == "child-transaction"]
    synced = [p for op, p in trace[:i_child] if op in ("fsync", "fdatasync")]
    assert str(db) in synced and str(tmp_path) in synced
    assert open_reader(str(db), "child-sql").header.parentSession == parent.header.id


def test_child_title_rule():
    assert child_title("Fix the parser", []) == "Fix the parser (1)"
    assert child_title("Fix the parser", ["Fix the parser", "Fix the parser (1)"]) == "Fix the parser (2)"
    # forking a child continues the same counter, never "X (1) (1)"
    assert child_title("Fix the parser (1)", ["Fix the parser", "Fix the parser (1)"]) == "Fix the parser (2)"
    assert child_title("Fix the parser", ["Fix the parser (1)", "Fix the parser (7)", "Other (9)"]) == \
        "Fix the parser (8)"
    assert child_title("X", ["X (0)", "X (01)", "Xy (3)"]) == "X (1)"    # not counters of "X"
    assert child_title(None) is None and child_title("  ") is None
    assert title_base("Plan (2)") == "Plan" and title_base("(2)") == "(2)"


def test_fork_child_title_in_a_store(tmp_path):
    from app.store.lineage import fork_child_title
    home = tmp_path / "home"
    shutil.copytree(repo_root / "resources/demo", home)
    parent = home / "sessions/--home-dev-demo-project--/demo-todo/session.jsonl"
    from app.store.discovery import quick_title, session_info
    t = quick_title(session_info(str(parent)))
    assert t
    assert fork_child_title(str(parent)) == f"{t} (1)"
    # two forks later (their logs still carry the inherited title): they read as (1) and (2), the next is (3)
    from app.store.lineage import display_titles, store_listing
    ids = []
    for _ in range(2):
        res = fork(open_reader(str(parent)), None)
        ids.append(res["id"])
    assert fork_child_title(str(parent)) == f"{t} (3)"
    listing = store_listing(str(parent))
    titles = {s.key: quick_title(s) for s in listing.sessions}
    disp = display_titles(listing, titles)
    shown = {s.id: disp.get(s.key) for s in listing.sessions if s.id in ids}
    assert sorted(shown.values()) == [f"{t} (1)", f"{t} (2)"]
    # a fork by dsh in the demo home, which kept its parent's title, reads as "<parent title> (1)" too
    fk = next(s for s in listing.sessions if s.id == "preview-architecture-review")
    assert titles[fk.key] == "WebWorker Preview Showcase" and disp[fk.key] == "WebWorker Preview Showcase (1)"
    # the CLI reports the title a fork gets
    from app.cli.main import main as cli
    import io
    import contextlib
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli(["fork", str(parent), "--preview", "--json"]) == 0
    assert json.loads(buf.getvalue())["title"] == f"{t} (3)"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli(["fork", str(parent), "--json"]) == 0
    assert json.loads(buf.getvalue())["title"] == f"{t} (3)"        # the published child's title

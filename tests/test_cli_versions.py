"""Every subcommand works on v1–v4 (issue 12 item 5), through the real entry point on every
dsh-next log: inspect (formatVersion, generation), messages, request at every dispatch
boundary, page (both faces, attempts), trace, stats, every export, diff, fork preview and a
fork into a scratch store, list.  No internal error (exit 3) anywhere."""
from __future__ import annotations

import io
import json
import contextlib
import re
import shutil

import pytest

from app.cli.main import main
from app.log.query.analysis import dispatches
from app.log.index.reader import LogReader

from fixtures_util import REPO, fast_sample

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
LOGS = sorted(p for p in NEXT.rglob("*.jsonl") if ".v" in p.name)
IDS = [str(p.relative_to(NEXT)).split("/", 1)[0].split("@")[1] + ":" + "/".join(p.parts[-2:]) for p in LOGS]


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    assert rc != 3, (argv, err.getvalue())
    return rc, out.getvalue(), err.getvalue()


# the logs today's dsh refuses (issue 27 item 2): the v2 logs its v2->v3 migration cannot take (a surface row
# before the first step/start, or a changed prompt outside a step) and the early-v4 logs with plugin sources
REFUSED = ("@30f71de5f3/packages/test-support/session-snapshot/tests/fixtures/suite/pin-turn/session.v2.jsonl",
           "@30f71de5f3/packages/test-support/session-snapshot/tests/fixtures/suite/plain-turn/session.v2.jsonl",
           "@85e854eadf/packages/test-support/session-snapshot/tests/fixtures/suite/plain-turn/session.1.v2.jsonl",
           "@a18d8a996c/packages/experimental/webworker-runtime/tests/fixtures/vfs-example/home/sessions/"
           "--dsh-workspace--/preview-showcase/session.v2.jsonl",
           "@d128b28263/packages/experimental/webworker-runtime/tests/fixtures/vfs-example/home/sessions/"
           "--dsh-workspace--/preview-follow-up-builder/session.v2.jsonl",
           "@d128b28263/packages/test-support/session-snapshot/tests/fixtures/suite/shared-pin/session.v2.jsonl",
           "@f4a32dbd0a/snapshots/session/tool-call-turn/session.v4.jsonl",
           "@f4a32dbd0a/scripts/snapshots/python-sdk-single-exe/advanced/session.v4.jsonl")


def refused(p) -> bool:
    return str(p).endswith(REFUSED)


def name_version(p) -> int:
    m = re.search(r"\.v(\d+)\.jsonl$", p.name)
    return int(m.group(1)) if m else 0


@pytest.mark.parametrize("path", fast_sample(LOGS, spread=3), ids=IDS)
def test_every_subcommand_on_every_v2_v4_log(tmp_path, path):
    p = tmp_path / "s" / path.name
    p.parent.mkdir()
    shutil.copy(path, p)
    before = p.read_bytes()
    rc, out, _ = run("inspect", p, "--json")
    info = json.loads(out)
    assert rc == 0 and info["formatVersion"] == name_version(path) >= 2
    no = refused(path)
    assert info["generation"] == path.name and info["generations"] == [] and info["dshWouldRefuse"] is no
    rc, out, err = run("messages", p, "--json")
    assert rc == 0 and (err == "") is not no
    assert json.loads(out)["dshWouldRefuse"] is no and isinstance(json.loads(out)["messages"], list)
    r = LogReader.open(str(p))
    bounds = [b for b, _a in dispatches(r.events())]
    header_seqs = [e.seq for e in r.events() if e.type == "request/header"]
    for b in bounds:
        rc, out, err = run("request", p, "--at", b, "--json")
        if not [s for s in header_seqs if s < b]:          # dsh built no request there (issue 27 item 3)
            assert rc == 2 and "no request/header comes before" in err and err.count("\n") == 1, err
            continue
        assert rc == 0, err
        req = json.loads(out)
        assert req["request"]["sessionId"] == r.header.id and req["dshWouldRefuse"] is no
        if info["formatVersion"] >= 3:
            assert "system" not in req["request"]               # the system prompt is a message from v3 on
    for face in ("--logical", "--physical"):
        rc, out, _ = run("page", p, face, "--attempts", "--json")
        assert rc == 0 and json.loads(out)["events"]
    rc, out, _ = run("page", p, "--limit", "2", "--json")
    pg = json.loads(out)
    if pg["hasMore"]:
        assert run("page", p, "--before", pg["baseSeq"], "--json")[0] == 0
    assert run("trace", p, "--json")[0] == 0
    assert run("trace", p, "--seq", info["lastSeq"], "--json")[0] == 0
    assert run("stats", p, "--json")[0] == 0
    for fmt, name in (("raw", "r.jsonl"), ("logical", "l.jsonl"), ("markdown", "m.md"), ("html", "h.html"),
                      ("zip", "z.zip")):
        rc, out, err = run("export", p, "--format", fmt, "--out", tmp_path / name, "--json")
        assert rc == 0, err
    assert (tmp_path / "r.jsonl").read_bytes() == before                # raw export: the stored bytes
    assert run("diff", p, "--attempts", "--json")[0] == 0
    if len(bounds) >= 2:
        assert run("diff", p, "--steps", bounds[0], bounds[-1], "--json")[0] == 0
    rc, out, err = run("fork", p, "--preview", "--json")
    if rc == 0:
        rc, out, err = run("fork", p, "--out", tmp_path / "forks", "--json")
        assert rc == 0, err
        child = json.loads(out)["child"]
        assert child.endswith(f"session.v{info['formatVersion']}.jsonl")
        rc, out, _ = run("inspect", child, "--json")
        assert json.loads(out)["formatVersion"] == info["formatVersion"]
        rc, out, err = run("diff", child, "--fork", "--parent", p, "--json")
        fd = json.loads(out)["fork"]
        assert rc == 0 and fd["problems"] == [] and fd["seedLength"] == fd["commonPrefix"] == fd["endSeedSeq"]
    else:
        assert "FORK_UNAVAILABLE" in err
    assert run("list", p.parent, "--json")[0] == 0
    assert p.read_bytes() == before                                       # reading never writes

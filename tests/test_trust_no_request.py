"""Issue 27 item 3: no request where dsh has none.  At a dispatch boundary whose prefix holds no
``request/header`` dsh built no request: ``request --at S`` answers with one clear line and exit 2
(before: a request without provider or model), the checkpoint path says the same, and the
Request tab says why."""
from __future__ import annotations

import io
import json
import contextlib

import pytest

from app.cli.main import main
from app.log.fold.checkpoints import build_checkpoints, request_at as request_at_cp
from app.log.index.reader import LogReader
from app.log.query.analysis import RequestError, request_at


def log(tmp_path, header: bool):
    rows = [{"type": "turn/start", "data": {"turn": 1}},
            {"type": "step/start", "data": {"turn": 1, "step": 1}},
            {"type": "system/message", "surfaceOp": "append",
             "data": {"turn": 1, "step": 1, "message": {"id": "s", "role": "system", "source": {"kind": "system-prompt"},
                                                        "content": []}}},
            {"type": "user/message", "surfaceOp": "append",
             "data": {"id": "u", "role": "user", "content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}}]
    if header:
        rows.append({"type": "request/header", "data": {"header": {"config": {"provider": "p", "model": "m"}},
                                                        "reason": "initial"}})
    rows += [{"type": "assistant/message", "surfaceOp": "append",
              "data": {"turn": 1, "step": 1, "stream": [],
                       "message": {"id": "a", "role": "assistant", "content": [{"type": "text", "text": "yo"}]}}},
             {"type": "step/end", "data": {"turn": 1, "step": 1}},
             {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}}]
    hdr = {"type": "session", "version": 4, "id": "s", "createdAt": 1, "isSeeded": False, "delegationDepth": 0}
    p = tmp_path / "session.v4.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in [hdr] + [dict(r, seq=i, time=1) for i, r in enumerate(rows)]))
    return p, 4 + header


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def test_no_header_no_request(tmp_path):
    p, at = log(tmp_path, header=False)
    rc, out, err = run("request", p, "--at", at, "--json")
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "no request/header comes before its dispatch boundary" in err and "dsh built no request" in err
    r = LogReader.open(str(p))
    with pytest.raises(RequestError, match="no request/header"):
        request_at(r, at)
    with pytest.raises(RequestError, match="no request/header"):
        request_at_cp(r, at, build_checkpoints(r, every=2))


def test_with_a_header_the_request_is_there(tmp_path):
    p, at = log(tmp_path, header=True)
    rc, out, err = run("request", p, "--at", at, "--json")
    assert rc == 0, err
    req = json.loads(out)["request"]
    assert req["provider"] == "p" and req["model"] == "m" and [m["id"] for m in req["messages"]] == ["u"]


def test_request_tab_says_why(tmp_path, qtbot):
    from app.ui.request_view import RequestView
    from app.ui.workers import Jobs
    p, at = log(tmp_path, header=False)
    jobs = Jobs()
    view = RequestView(jobs)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.failed, timeout=20_000):
        view.compute(str(p), None, at)
    assert "no request/header" in view.status.text() and f"seq {at}" in view.status.text()

"""v0 difference 5 (issue 12): forking a session with no completed turn is refused
(``fork-unavailable``) as the dsh host refuses it, instead of creating an empty child."""
from __future__ import annotations

import os

import pytest

from app.cli.main import main
from app.log.fold.fork import ForkError
from app.log.index.reader import LogReader
from app.store.forking import fork, preview

from fixtures_util import ev, write_log


@pytest.mark.parametrize("rows", [[], [ev(0, "session/title", {"title": "t", "messageSeqs": [],
                                                                 "source": {"kind": "fallback"}})]],
                         ids=["empty", "no-turn"])
def test_refused_and_nothing_written(tmp_path, rows, capsys):
    p = write_log(tmp_path / "store" / "session.jsonl", rows)
    before = sorted(os.listdir(tmp_path / "store"))
    for call in (lambda r: fork(r), lambda r: preview(r, None)):
        with pytest.raises(ForkError) as e:
            call(LogReader.open(str(p)))
        assert e.value.code == "FORK_UNAVAILABLE" and "no completed turn" in e.value.reason
    assert main(["fork", str(p), "--json"]) == 2
    assert "FORK_UNAVAILABLE" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path / "store")) == before

"""A child's message that cannot be pickled (app.store.childproc.serve) must not leave half of itself in the
pipe: the parent then reads the child's error report, not garbage.  A pass once sent a surface index
holding views of its cache file; the message's first frames went out before pickling failed."""
from __future__ import annotations

import sys

import pytest

from app.store.childproc import ChildFailed, run_child

BODY = ("import sys\n"
        "from app.store.childproc import serve\n"
        "sys.exit(serve(lambda send: send(('partial', b'x' * 300_000, memoryview(b'view'))), 0))\n")


def test_an_unpicklable_message_reports_the_childs_error():
    got: list = []
    with pytest.raises(ChildFailed) as e:
        run_child([sys.executable, "-c", BODY], None, got.append, None, "test child")
    assert "pickle" in str(e.value) and "memoryview" in str(e.value), str(e.value)
    assert got == []                       # (nothing half-sent reached the parent as a message)

"""One writer rule, one set of waits (issue 35): the session list (``live_state``) and the open
session's follower (``Follower.state``) say the same state for the same history of a file.

The list used to keep its own waits (live for 15 s after growth, crashed after 120 s) beside the
follower's (3 s / 30 s): a writer quiet for 10 s was "◌ writer idle" in the status line and
"● live" in the list.  Both now use ``IDLE_AFTER_S`` / ``CRASH_AFTER_S``.

The history is played on a real v0 log from the synthetic generator with a made-up clock: each
append sets the file's mtime to the clock's time (what the kernel does for a real write), the
follower's clock and the list's ``now`` are that time, and both are asked after each step with
their default waits."""
from __future__ import annotations

import os

from app.log.format.codec import encode_row
from app.store.watch import CRASH_AFTER_S, IDLE_AFTER_S, Follower, live_state

from test_live import _header_and_rows


def _history(t0: float):
    """(time, bytes to append or None): a writer inside a turn, quiet, back, quiet until presumed
    dead, back again, a half-written row, the turn closed."""
    return [
        (t0 + 1.0, "row"),                         # growth: live
        (t0 + 1.0 + IDLE_AFTER_S / 2, None),       # still live
        (t0 + 1.0 + IDLE_AFTER_S + 0.5, None),     # quiet inside the turn: idle (the list said live till 15 s)
        (t0 + 10.0, None),                         # idle
        (t0 + 12.0, "row"),                        # back: live
        (t0 + 12.0 + CRASH_AFTER_S / 2, None),     # idle (the list: live till 15 s, idle till 120 s)
        (t0 + 12.0 + CRASH_AFTER_S + 1, None),     # presumed dead: crashed
        (t0 + 50.0, "row"),                        # it was a long tool call after all: live
        (t0 + 51.0, "torn"),                       # half a row
        (t0 + 51.0 + IDLE_AFTER_S / 2, None),      # still being written: live
        (t0 + 51.0 + IDLE_AFTER_S + 0.5, None),    # left half-written: a cut write, crashed
        (t0 + 60.0, "rest"),                       # the row completed, the turn closed: live
        (t0 + 60.0 + IDLE_AFTER_S + 0.5, None),    # quiet, turn closed: complete
    ]


def test_the_list_and_the_follower_say_the_same_state_for_the_same_file_history(tmp_path):
    hdr, evs = _header_and_rows(1000)
    ends = [i for i, e in enumerate(evs) if e["type"] == "turn/end"]
    assert len(ends) >= 2, "need two whole turns"
    rows = [encode_row(e) + b"\n" for e in evs]
    first = ends[0] + 4                                 # inside the second turn
    assert first + 5 < ends[1]
    p = tmp_path / "s" / "session.jsonl"
    p.parent.mkdir()
    t0 = 1_700_000_000.0
    clock = [t0]
    p.write_bytes(encode_row(hdr) + b"\n" + b"".join(rows[:first]))
    os.utime(p, (t0, t0))
    f = Follower(str(p), from_start=True, use_inotify=False, clock=lambda: clock[0])
    f.poll()
    said = [("open", f.state(), live_state(str(p), now=t0))]
    nxt = first
    for t, what in _history(t0):
        clock[0] = t
        if what is not None:
            if what == "row":
                data, nxt = rows[nxt], nxt + 1
            elif what == "torn":
                data = rows[nxt][:9]
            else:                                       # the torn row's rest and the turn up to its end
                data = rows[nxt][9:] + b"".join(rows[nxt + 1:ends[1] + 1])
            with open(p, "ab") as fh:
                fh.write(data)
            os.utime(p, (t, t))
        f.poll()
        said.append((f"{t - t0:g}", f.state(), live_state(str(p), now=t)))
    f.close()
    follower = [s[1] for s in said]
    listed = [s[2] for s in said]
    assert follower == listed, said
    # and it is the rule's story: crashed at once (never seen growing), live, idle, crashed, live...
    assert follower == ["crashed", "live", "live", "idle", "idle", "live", "idle", "crashed", "live",
                        "live", "live", "crashed", "live", "complete"], said


def test_the_command_line_states_the_same_default_waits():
    """``inspect --live-window / --crash-after`` say their defaults: the window's."""
    from app.cli.main import build_parser
    text = build_parser("inspect")._subparsers._group_actions[0].choices["inspect"].format_help()
    flat = " ".join(text.split())
    assert f"(default: the window's, {IDLE_AFTER_S:g})" in flat and f"(default: the window's, {CRASH_AFTER_S:g})" in flat

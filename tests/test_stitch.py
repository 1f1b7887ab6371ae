"""Client stitch (spec §8): the view equals the true log exactly, whatever the live stream does."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.log.fold.stitch import Stitcher, Step


def ev(s):
    return {"type": "x", "seq": s, "time": s, "data": {}}


def evs(a, b):
    return [ev(s) for s in range(a, b)]


def seqs(events):
    return [e["seq"] for e in events]


class View:
    """What a history model does with the steps: reinstall replaces, appended extends."""

    def __init__(self):
        self.rows: list = []
        self.installs = 0

    def apply(self, step: Step):
        if step.reinstall is not None:
            self.rows = list(step.reinstall)
            self.installs += 1
            s = seqs(self.rows)
            assert s == list(range(s[0], s[0] + len(s))) if s else True, f"page not contiguous {s}"
        for e in step.appended:
            if self.rows:
                assert e["seq"] == self.rows[-1]["seq"] + 1, \
                    f"appended {e['seq']} after {self.rows[-1]['seq']} (duplicate or gap)"
            self.rows.append(e)
        return step


# --------------------------------------------------------------------------- examples

def test_buffer_while_loading_then_replay():
    s, v = Stitcher(), View()
    v.apply(s.subscribed(9))
    s.begin_load()
    assert not v.apply(s.offer([ev(11), ev(10), ev(9)]))        # buffered, nothing shown
    st_ = v.apply(s.install(evs(3, 10)))                        # page 3..9
    assert seqs(st_.reinstall) == list(range(3, 10)) and seqs(st_.appended) == [10, 11]
    assert not st_.refetch and s.base_seq == 3 and s.tail_seq == 11 and not s.buffer


def test_drop_append_and_gap_refetch():
    s, v = Stitcher(), View()
    v.apply(s.install(evs(0, 5)))
    assert v.apply(s.offer([ev(3), ev(4)])).appended == []       # seq <= tail: dropped
    assert seqs(v.apply(s.offer([ev(5)])).appended) == [5]      # tail+1: appended
    step = v.apply(s.offer([ev(8)]))                            # gap: buffer + refetch
    assert step.refetch and step.appended == [] and s.missing == (6, 8)
    assert not v.apply(s.offer([ev(9)])).refetch                 # one refetch at a time
    step = v.apply(s.install(evs(2, 8)))                         # overlapping page: extends, replays 8, 9
    assert step.reinstall is None and seqs(step.appended) == [6, 7, 8, 9] and not step.refetch
    assert seqs(v.rows) == list(range(0, 10)) and s.base_seq == 0


def test_non_overlapping_page_reinstalls():
    s, v = Stitcher(), View()
    v.apply(s.install(evs(0, 3)))
    assert v.apply(s.offer([ev(90)])).refetch
    step = v.apply(s.install(evs(50, 90)))
    assert seqs(step.reinstall) == list(range(50, 90)) and seqs(step.appended) == [90]
    assert s.base_seq == 50 and seqs(v.rows) == list(range(50, 91))


def test_subscribed_last_beyond_tail_refetches_once():
    s, v = Stitcher(), View()
    v.apply(s.subscribed(20))
    s.begin_load()
    step = v.apply(s.install(evs(0, 10)))                        # stale page (cache): tail 9 < 20
    assert step.refetch
    step = v.apply(s.install(evs(0, 15)))                        # still short: no second refetch
    assert not step.refetch and seqs(step.appended) == list(range(10, 15))
    assert not v.apply(s.install(evs(0, 15)))                    # nothing new, nothing asked


def test_empty_log_then_rows():
    s, v = Stitcher(), View()
    v.apply(s.subscribed(-1))
    s.begin_load()
    v.apply(s.offer([ev(1)]))
    step = v.apply(s.install([]))
    assert step.reinstall == [] and step.refetch                 # 0 is missing
    step = v.apply(s.install(evs(0, 1)))
    assert seqs(step.appended) == [0, 1] and s.base_seq == 0 and seqs(v.rows) == [0, 1]


def test_stale_refetch_is_asked_again():
    s, v = Stitcher(), View()
    v.apply(s.install(evs(0, 5)))
    assert v.apply(s.offer([ev(7)])).refetch
    step = v.apply(s.install(evs(0, 4)))                         # older than the view
    assert step.refetch and step.appended == [] and s.stale_installs == 1
    step = v.apply(s.install(evs(0, 7)))
    assert seqs(step.appended) == [5, 6, 7] and not step.refetch


def test_reset_forces_reinstall():
    s, v = Stitcher(), View()
    v.apply(s.install(evs(0, 5)))
    s.reset()
    step = v.apply(s.install(evs(0, 3)))                         # rewritten (repaired) log
    assert seqs(step.reinstall) == [0, 1, 2] and s.tail_seq == 2


def test_events_with_seq_attribute():
    class E:
        def __init__(self, seq):
            self.seq = seq
    s = Stitcher()
    s.install([E(0), E(1)])
    assert [e.seq for e in s.offer([E(2), E(1)]).appended] == [2]


# --------------------------------------------------------------------------- property

@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_view_equals_true_log(data):
    """Random writes, live deliveries (reordered, duplicated, some lost), page sizes, stale
    initial pages and refetch timings: the view is always a contiguous run of the log without
    duplicates, and ends at the true last seq once the stream drained."""
    n = data.draw(st.integers(0, 60), label="events")
    true = evs(0, n)
    written = data.draw(st.integers(0, n), label="written at subscribe")
    sub = written                                                # rows seq >= sub are streamed
    s, v = Stitcher(), View()
    channel: list = []                                           # live rows in flight
    max_delivered = -1
    pending = None                                               # (min snapshot) of a refetch in flight

    def write(k):
        nonlocal written
        for q in range(written, min(n, written + k)):
            channel.append(q)
            if data.draw(st.booleans(), label="duplicate"):
                channel.append(q)
        written = min(n, written + k)

    def page(snapshot):
        size = data.draw(st.integers(1, 25), label="page size")
        return true[max(0, snapshot - size):snapshot]

    def handle(step):
        nonlocal pending
        v.apply(step)
        if step.refetch:
            assert pending is None, "a second refetch while one is in flight"
            # a page read after the request sees every row delivered so far and the subscription
            pending = max(sub, max_delivered + 1)

    def serve(fresh):
        nonlocal pending
        lo = pending
        pending = None
        snap = written if fresh else data.draw(st.integers(min(lo, written), written), label="refetch snapshot")
        handle(s.install(page(snap)))

    # subscribe, then the first tail page loads (possibly from an older snapshot) while rows stream
    handle(s.subscribed(sub - 1))
    s.begin_load()
    first_snapshot = data.draw(st.integers(0, written), label="first page snapshot")
    loading_first = True
    lossy = data.draw(st.booleans(), label="lossy stream")
    for _ in range(data.draw(st.integers(0, 40), label="ops")):
        op = data.draw(st.sampled_from(["write", "deliver", "serve", "old-dup"]), label="op")
        if op == "write":
            write(data.draw(st.integers(1, 8), label="write k"))
        elif op == "deliver" and channel:
            k = data.draw(st.integers(1, len(channel)), label="deliver k")
            batch = []
            for _ in range(k):
                i = data.draw(st.integers(0, len(channel) - 1), label="pick")
                q = channel.pop(i)
                if lossy and q != n - 1 and data.draw(st.integers(0, 9), label="loss") == 0:
                    continue
                batch.append(q)
            max_delivered = max([max_delivered] + batch)
            handle(s.offer([true[q] for q in batch]))
        elif op == "old-dup" and written:
            handle(s.offer([true[data.draw(st.integers(0, written - 1), label="old")]]))
        elif op == "serve":
            if loading_first:
                loading_first = False
                handle(s.install(page(first_snapshot)))
            elif pending is not None:
                serve(fresh=False)
    # drain: everything written, delivered, refetches served fresh
    write(n)
    if loading_first:
        handle(s.install(page(first_snapshot)))
    while channel:
        q = channel.pop(data.draw(st.integers(0, len(channel) - 1), label="drain pick"))
        max_delivered = max(max_delivered, q)
        handle(s.offer([true[q]]))
        if pending is not None and data.draw(st.booleans(), label="serve during drain"):
            serve(fresh=True)
    guard = 0
    while pending is not None:
        serve(fresh=True)
        guard += 1
        assert guard < 5, "refetch loop does not converge"
    # the view is exactly the true log from its base to the end
    got = seqs(v.rows)
    if n == 0:
        assert got == []
    else:
        assert got and got[-1] == n - 1, f"view ends at {got[-1:]} not {n - 1}"
        assert got == list(range(got[0], n))
        assert v.rows == true[got[0]:]
        assert s.base_seq == got[0] and s.tail_seq == n - 1
    assert not s.buffer and not s.loading


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 30), max_size=80), st.integers(1, 31))
@pytest.mark.slow
def test_offer_only_appends_successors(deliveries, tail_page):
    """Without refetches served, appended rows are always exactly tail+1, tail+2, …"""
    s, v = Stitcher(), View()
    v.apply(s.install(evs(0, tail_page)))
    for q in deliveries:
        v.apply(s.offer([ev(q)]))
    got = seqs(v.rows)
    assert got == list(range(0, len(got)))
    assert len(got) >= tail_page

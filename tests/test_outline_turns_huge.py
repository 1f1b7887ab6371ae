"""The window's small copy of the outline's turns (app.ui.outline_turns.keep_small) keeps a turn number past
64 bits as logged: the packed turns hold such numbers in a list, which the window must not narrow."""
from __future__ import annotations

from app.log.query.outline import TurnEntry
from app.log.query.outline_packed import CompactTurns
from app.ui.outline_turns import keep_small


def _turns(numbers: list[int]) -> list[TurnEntry]:
    return [TurnEntry(turn=n, first_seq=10 * i, last_seq=10 * i + 9, prompt=f"p{i}", open=False, end="done")
            for i, n in enumerate(numbers)]


def test_turn_numbers_past_64_bits_survive_the_window_copy() -> None:
    want = _turns([1, 2, 1 << 70, 3])
    got = keep_small(CompactTurns(want))
    assert [t.turn for t in got] == [1, 2, 1 << 70, 3]
    assert list(got) == want


def test_small_turn_numbers_are_narrowed_and_read_back_equal() -> None:
    want = _turns(list(range(1, 200)))
    got = keep_small(CompactTurns(want))
    assert got.numbers.typecode == "i" and got.first_seqs.typecode == "i"
    assert list(got) == want

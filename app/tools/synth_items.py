"""Delta runs and item lists of the session generator (:mod:`app.tools.synth`): the compact form of
consecutive delta chunks, and the pack/expand/cut operations over a list of events and runs."""
from __future__ import annotations

from typing import Union, final
from collections.abc import Iterable

MAX_RUN = 1024          # pack_events max_run (dsh: 3..1024 members per packed row)
MIN_RUN = 3

TAG_OF = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks",
          "tool-call-delta": "tool-call-chunks"}


# =========================================================================== delta runs

@final                                # (so `type(it) is DeltaRun` narrows an Item both ways)
class DeltaRun:
    """A run of consecutive exactly-shaped delta chunks of one block (one packable run).

    Member k is ``{"type":"assistant/chunk","seq":seq0+k,"time":ts[k],"data":{"turn","step",
    "chunk":{"type":kind,"index",("id","name")?,"text"|"argumentsDelta"}}}``.
    """
    __slots__ = ("kind", "turn", "step", "index", "cid", "name", "seq0", "ts", "texts")

    def __init__(self, kind, turn, step, index, seq0, ts, texts, cid=None, name=None):
        self.kind = kind
        self.turn = turn
        self.step = step
        self.index = index
        self.cid = cid
        self.name = name
        self.seq0 = seq0
        self.ts = ts
        self.texts = texts

    def __len__(self):
        return len(self.texts)

    def _with(self, seq0, ts, texts) -> DeltaRun:
        return DeltaRun(self.kind, self.turn, self.step, self.index, seq0, ts, texts, self.cid, self.name)

    def split(self, k: int) -> tuple[DeltaRun, DeltaRun]:
        return (self._with(self.seq0, self.ts[:k], self.texts[:k]),
                self._with(self.seq0 + k, self.ts[k:], self.texts[k:]))

    def events(self) -> list[dict]:
        turn, step, index, kind = self.turn, self.step, self.index, self.kind
        seq = self.seq0
        out = []
        if kind == "tool-call-delta":
            cid, name = self.cid, self.name
            for t, x in zip(self.ts, self.texts):
                if name is None:
                    chunk = {"type": kind, "index": index, "id": cid, "argumentsDelta": x}
                else:
                    chunk = {"type": kind, "index": index, "id": cid, "name": name, "argumentsDelta": x}
                out.append({"type": "assistant/chunk", "seq": seq, "time": t,
                            "data": {"turn": turn, "step": step, "chunk": chunk}})
                seq += 1
        else:
            for t, x in zip(self.ts, self.texts):
                out.append({"type": "assistant/chunk", "seq": seq, "time": t,
                            "data": {"turn": turn, "step": step,
                                     "chunk": {"type": kind, "index": index, "text": x}}})
                seq += 1
        return out

    def packed_rows(self) -> list[dict]:
        """Storage rows of this run within one batch, exactly as ``pack_events`` writes them."""
        n = len(self.texts)
        if n < MIN_RUN:
            return self.events()
        out = []
        for i in range(0, n, MAX_RUN):
            ts = self.ts[i:i + MAX_RUN]
            texts = self.texts[i:i + MAX_RUN]
            if len(texts) < MIN_RUN:
                out.extend(self._with(self.seq0 + i, ts, texts).events())
                continue
            t0 = ts[0]
            dt = [b - a for a, b in zip(ts, ts[1:])]
            data = {"turn": self.turn, "step": self.step, "index": self.index, "dt": dt}
            if self.kind == "tool-call-delta":
                data["id"] = self.cid
                if self.name is not None:
                    data["name"] = self.name
                data["args"] = texts
            else:
                data["texts"] = texts
            out.append({"type": TAG_OF[self.kind], "seq0": self.seq0 + i, "time0": t0, "data": data})
        return out


Item = Union[dict, DeltaRun]


def item_len(it: Item) -> int:
    return len(it.texts) if type(it) is DeltaRun else 1


def expand_items(items: Iterable[Item]) -> list[dict]:
    """Logical events of an item list (DeltaRuns expanded)."""
    out: list[dict] = []
    for it in items:
        if type(it) is DeltaRun:
            out.extend(it.events())
        else:
            out.append(it)
    return out


def pack_items(items: Iterable[Item]) -> list[dict]:
    """Storage rows of one write batch: the fast equivalent of ``pack_events(expand_items(items))``.

    Valid because the generator never places two same-key delta runs next to each other (every
    block opens with a ``block-start``), so runs never merge across items.
    """
    out: list[dict] = []
    for it in items:
        if type(it) is DeltaRun:
            out.extend(it.packed_rows())
        else:
            out.append(it)
    return out


def cut_items(items: list, k: int) -> list:
    """The first k logical events of an item list (a DeltaRun is split if needed)."""
    out, n = [], 0
    for it in items:
        if n >= k:
            break
        ln = item_len(it)
        if n + ln <= k:
            out.append(it)
            n += ln
        else:
            out.append(it.split(k - n)[0])
            n = k
    return out


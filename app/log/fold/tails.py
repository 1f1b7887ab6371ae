"""The two tails side by side, and the names of the read faces.

Pure (no Qt, no store).

* :func:`align_tails` — a page's physical rows (what is on disk, bad rows included) beside its
  logical rows (what a reader works with: the kept prefix plus the crash closure computed in
  memory), one row per seq.  A seq that exists on both sides is one row; a synthesized closer
  that takes the seq of a stored row a repair would truncate sits beside that row.  Each side
  has a gutter mark: physical ``torn`` / ``malformed`` / ``bad`` (unreadable rows) or
  ``dropped`` (readable, but after the tail's first defect: a repair truncates it); logical
  ``synthesized`` (not on disk).
* :data:`TRUTHS` — what each view shows, in words a user understands (for view titles, the
  legend in Help, and ``--json`` outputs).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..format.model import is_event

TRUTHS = {
    "model": ("Model's view", "the messages the model sees now: replaced (compacted) messages are gone"),
    "user": ("What the user sees", "the conversation as shown to the user: failed retries hidden"),
    "audit": ("Everything recorded", "every event and every attempt, failed retries included"),
    "physical": ("Everything on disk", "the stored rows exactly, torn or unreadable rows included"),
    "logical": ("Logical history (crash closed in memory)",
                "the stored events with a crashed turn closed as a repair would close it; the file is not changed"),
    "live": ("Live snapshot", "a session being written: the open turn is in flight, nothing is closed; "
                              "the file lags the writer by its write-behind window"),
    "flushed": ("Flushed load", "a complete view of a session at rest; refused while a live turn is open"),
    "range": ("Raw range from seq N", "stored events from a seq on, as stored: no closure, no truncation"),
    "raw": ("Raw artifact", "the file's bytes, identical"),
    "request": ("Exact request at seq N", "the request the model received at that dispatch"),
    "seed": ("Fork seed", "the parent's events a fork child starts from, ending with session/end-seed"),
}


def truth_label(key: str, seq: Optional[int] = None) -> str:
    name = TRUTHS[key][0]
    return name.replace("seq N", f"seq {seq}") if seq is not None else name


def legend() -> list[Any]:
    """[(name, what it shows)] for Help."""
    return [(n, w) for n, w in TRUTHS.values()]


@dataclass
class TailRow:
    seq: Optional[int]                 # None for an unreadable stored row
    physical: object = None            # stored item (Event or BadRow) or None
    logical: object = None             # logical Event or None
    marks: dict[Any, Any] = field(default_factory=dict)   # {"physical": mark, "logical": mark}

    def to_dict(self) -> dict[Any, Any]:
        def side(it: Any) -> Optional[dict[str, Any]]:
            if it is None:
                return None
            if is_event(it):
                return {"seq": it.seq, "type": it.type}
            return {"bad": it.kind, "reason": it.reason, "line": it.line,
                    "offset": it.offset if it.offset >= 0 else None}
        return {"seq": self.seq, "physical": side(self.physical), "logical": side(self.logical),
                "marks": dict(self.marks)}


def align_tails(page: Any) -> list[TailRow]:
    """[TailRow] of a page (the tail page carries closure and dropped rows), oldest first."""
    from ..index.reader import row_key
    dropped = {row_key(d) for d in (page.dropped or [])}
    rows: list[Any] = []
    at: dict[Any, Any] = {}                      # seq -> index of its row
    for it in page.items:
        if not is_event(it):
            rows.append(TailRow(seq=None, physical=it,
                                marks={"physical": it.kind if it.kind in ("torn", "malformed") else "bad"}))
            continue
        if row_key(it) in dropped:
            r = TailRow(seq=it.seq, physical=it, marks={"physical": "dropped"})
        else:
            r = TailRow(seq=it.seq, physical=it, logical=it)
        if it.seq not in at:
            at[it.seq] = len(rows)
        rows.append(r)
    extra: list[Any] = []                   # closers with no stored row at their seq
    for ev in page.closure or []:
        i = at.get(ev.seq)
        if i is not None and rows[i].logical is None:
            rows[i].logical = ev
            rows[i].marks["logical"] = "synthesized"
        else:
            extra.append(TailRow(seq=ev.seq, logical=ev, marks={"logical": "synthesized"}))
    if not extra:
        return rows
    # each closer goes just before the first stored row with a higher seq (bad rows keep their place)
    out: list[Any] = []
    k = 0
    for row in rows:
        while k < len(extra) and row.seq is not None and extra[k].seq < row.seq:
            out.append(extra[k])
            k += 1
        out.append(row)
    out.extend(extra[k:])
    return out

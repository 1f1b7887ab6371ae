"""Whole-log find's hits of more row types made in C (pure core, no Qt): compaction summaries, failed attempts, tool
results with an error, rows showing no text.

rowscan_c.find_hits (:mod:`.find_c2`) left every ``compaction/summary``, ``assistant/attempt``, ``tool/result`` with an
error and no-text row (``request/header``…) to the exact way (a decode each, or a type read: ~13,000 of the rows holding
"the" in the 1 GB log, a fifth of that find's time).  Given these types (:data:`C2_TYPES`) and the error kind
(:data:`~.find_c2.C2_KINDS` ``[2]``) it now reads them itself (the find6 section): a summary's one field
(``content_text`` of its ``summary``, else of its ``content``, as :func:`~.textview.event_fields` makes it), an
attempt's error fields (``error_text`` of each ``finish`` chunk's error reason in its stream), a tool result's output
and error, none for a no-text row; matched and made into hits as the other rows' fields are; any shape it does not
read as the codec would is still left to the exact way.

``rowscan_c.more_text`` gives the fields of one such row as find_hits reads them; :func:`more_text_py` is its
definition (what it gives where it gives anything), and :func:`more_items` is find_hits' definition's part for these
rows (:func:`.find_c2.find_hits_py`).  ``tests/test_find_more.py`` holds the C to the definitions and find's hits to
the exact way's on generated, hostile and edited rows.
"""
from __future__ import annotations

from typing import Any, Optional


from ..format.versions import stream_chunks
from ..index.fastindex import load_rowscan_c
from ..format.payloads import content_text
from .find_fast import QUIET_B, READ_B
from .find_light import TYPE_FIRST
from .find_match import fold_count_py
from .textrow import decoded_row
from .textview import ASSISTANT, ERROR, TOOL_OUTPUT, error_text, plain

MORE_B = frozenset({b"compaction/summary", b"assistant/attempt"}) | QUIET_B
C2_TYPES = tuple(sorted(READ_B | MORE_B))          # the types find hands rowscan_c.find_hits
READ_MORE = MORE_B | {b"tool/result"}              # (a tool result with an error: find6 reads it)
ERROR_B = frozenset({b"assistant/attempt", b"tool/result"})    # (read only given the error kind)
MORE_TEXT = getattr(load_rowscan_c(), "more_text", None)
KIND_CODES = {2: ASSISTANT, 5: TOOL_OUTPUT, 6: ERROR}   # (more_text's kind codes: find_hits' F2Hit kinds)

Fields = tuple[int, Optional[int], list[tuple[str, str]]]


def more_text_py(raw: bytes) -> Optional[Fields]:
    """The definition of ``rowscan_c.more_text`` where it gives anything: (seq, turn or None, [(kind, plained text)])
    of a ``compaction/summary``, ``assistant/attempt``, ``tool/result`` with an error or no-text row written with its
    type first (it may give None where this does not: a shape left to the exact way)."""
    if not raw.startswith(TYPE_FIRST) or raw[9:raw.find(b'"', 9)] not in READ_MORE:
        return None
    got = decoded_row(raw)
    if got is None or type(got[0]) is not str:
        return None
    typ, seq, d, _obj = got
    t = d.get("turn")
    turn = t if type(t) is int else None
    if typ.encode() in QUIET_B:
        return seq, turn, []
    if typ == "tool/result":
        if d.get("error") is None:
            return None
        msg = d.get("message")
        m = msg if isinstance(msg, dict) else {}
        out = content_text(m.get("content"))
        return seq, turn, ([(TOOL_OUTPUT, plain(out))] if out else []) + [(ERROR, plain(error_text(d["error"])))]
    if typ == "compaction/summary":
        text = content_text(d.get("summary") if "summary" in d else d.get("content"))
        return seq, turn, [(ASSISTANT, plain(text))] if text else []
    fields = []
    for _t, c in stream_chunks(d.get("stream")):
        if isinstance(c, dict) and c.get("type") == "finish":
            r = c.get("reason")
            if isinstance(r, dict) and r.get("kind") == "error":
                fields.append((ERROR, plain(error_text(r.get("failure") or r.get("error")))))
    return seq, turn, fields


def more_text(raw: bytes) -> Optional[Fields]:
    """rowscan_c.more_text (its kinds named), else None (no C: find_hits is not used either)."""
    if MORE_TEXT is None:
        return None
    got = MORE_TEXT(raw)
    return None if got is None else (got[0], got[1], [(KIND_CODES[k], t) for k, t in got[2]])


def more_items(data: Any, items: list[Any], lim: int, max_row: int, types: tuple[bytes, ...], needle: str, mode: int,
               kinds: tuple[str, ...]) -> tuple[list[Any], int]:
    """``text_hits_py``'s items with each row it left to the caller that find_hits reads here (a type of
    :data:`MORE_B` in ``types``, within ``max_row``; an attempt only given the error kind, ``kinds[2]``; its fields
    as :func:`more_text` gives them, none holding a character ``fold_count`` refuses) replaced by its hit tuples;
    (items, the rows read so)."""
    out: list[Any] = []
    read = 0
    for it in items:
        if type(it) is not int:
            out.append(it)
            continue
        e = data.find(b"\n", it, lim)
        raw = bytes(data[it:lim if e < 0 else e])
        q = raw.find(b'"', 9)
        typ = raw[9:q] if raw.startswith(TYPE_FIRST) and q >= 0 else b""
        got = more_text(raw) if typ in READ_MORE and typ in types and 10 <= len(raw) <= max_row and \
            (typ not in ERROR_B or len(kinds) == 3) else None
        row = None if got is None else _row_hits(it, len(raw), got, needle, mode, kinds)
        if row is None:
            out.append(it)
            continue
        read += 1
        out += row
    return out, read


def _row_hits(s: int, n: int, got: Fields, needle: str, mode: int, kinds: tuple[str, ...]) -> Optional[list[Any]]:
    seq, turn, fields = got
    row: list[Any] = []
    for kind, text in fields:
        m = fold_count_py(text, needle) if mode == 0 else (text.find(needle), text.count(needle))
        if m is None:
            return None
        if m[1]:
            k = kinds[2] if kind == ERROR else kinds[1] if kind == TOOL_OUTPUT else kind
            row.append((s, n, seq, turn, k, None, None, False, m[0], m[0] + len(needle), m[1], len(row)))
    return row

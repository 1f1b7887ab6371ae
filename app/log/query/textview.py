"""The text a user sees in one event, by kind: the single event -> searchable-text function.

Pure Python (no Qt, no SQLite, no I/O): both searches use it (the whole-log search,
:mod:`app.log.query.find`, and the home full-text index, :mod:`app.store.fulltext`), and it is
meant to feed any other engine the same way (a shared search service, an external indexer):
give it decoded :class:`~app.log.format.model.Event` objects, take the :class:`Field` tuples.

Kinds (``KINDS``):

* ``user``        user message text (image blocks described by name);
* ``assistant``   assistant message text;
* ``reasoning``   assistant reasoning blocks;
* ``tool-call``   tool name, then the arguments (a JSON object shown as ``key: value`` lines,
  string values unescaped, so a quote or newline inside an argument is plain text);
* ``tool-output`` the whole tool output (never clipped);
* ``error``       tool errors, failed attempts (``finish`` with an error), provider retries,
  error turn ends;
* ``title``       session titles;
* ``system``      system and developer messages of the history (formats v3/v4);
* ``event``       the payload of an event shown as a generic row (``feedback/record``,
  ``command/done``, ``approval/asked`` …): its scalar values as ``key value`` lines
  (:func:`payload_text`; the row's one-line summary is built from the same pairs,
  :func:`payload_pairs`).

:func:`event_fields` gives the fields of the text types (both searches); :func:`shown_fields`
adds what else the window shows: the ``event`` field of a generic row, and the tool-call blocks
of an assistant message (the row's "→ calls NAME ARGS" lines, ``tool-call`` fields with the
call's id), which the whole-log search keeps only when no ``tool/call`` row of that id follows
(calls cut by max-tokens, or never started).

Formats v0–v4 (as :mod:`app.log.format.codec` / :mod:`app.log.format.versions` decode them): v4 tool results
(``role:"tool"``, top-level ``toolCallId``), v2+ ``assistant/attempt`` (its embedded stream's
failure is an ``error`` field), v3+ ``system/message``, v4 ``developer/message``.

Streaming ``assistant/chunk`` deltas are not fields: the committed ``assistant/message`` holds
the same text whole (a word split across deltas would never match a delta).  A failed
attempt's error (its ``finish`` chunk) is a field.
"""
from __future__ import annotations

import json
import math
import re
from bisect import bisect_right
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, Optional

from ..format.payloads import JsonObj, as_obj, blocks, content_parts, content_text, value_text

if TYPE_CHECKING:
    from ..format.model import Event

USER, ASSISTANT, REASONING, TOOL_CALL, TOOL_OUTPUT, ERROR, TITLE, SYSTEM, EVENT = (
    "user", "assistant", "reasoning", "tool-call", "tool-output", "error", "title", "system", "event")
KINDS = (USER, ASSISTANT, REASONING, TOOL_CALL, TOOL_OUTPUT, ERROR, TITLE, SYSTEM, EVENT)
# aliases a user may type (CLI --kind, query kind:…)
KIND_ALIASES = {"tool": TOOL_CALL, "call": TOOL_CALL, "toolcall": TOOL_CALL, "tool-call": TOOL_CALL,
                "output": TOOL_OUTPUT, "result": TOOL_OUTPUT, "tooloutput": TOOL_OUTPUT,
                "tool-output": TOOL_OUTPUT, "tool-result": TOOL_OUTPUT, "errors": ERROR, "err": ERROR,
                "think": REASONING, "thinking": REASONING, "message": ASSISTANT, "prompt": USER,
                "titles": TITLE, "developer": SYSTEM, "payload": EVENT, "events": EVENT}

# event types that can carry text (anything else yields no field; lets callers skip decoding)
TEXT_TYPES = frozenset({"user/message", "assistant/message", "tool/call", "tool/result", "turn/end",
                        "assistant/chunk", "llm/retry", "session/title", "compaction/summary",
                        "assistant/attempt", "system/message", "developer/message"})
# event types with a row of their own that shows no payload text (numbers, a model name): no
# ``event`` field; any other type outside TEXT_TYPES is a generic row showing its payload
NO_PAYLOAD_TYPES = frozenset({"turn/start", "step/start", "step/end", "request/header", "request/context",
                              "session/end-seed", "llm/retry-started", "steering/message"})


class Field(NamedTuple):
    kind: str
    text: str
    tool: Optional[str] = None        # tool name (tool-call; tool-output/error when the call is known)


def payload_pairs(data: dict[str, Any], prefix: str = "", depth: int = 0) -> Iterator[tuple[str, Any]]:
    """(key, value) of what a generic row shows of a payload, in order: nested objects by their
    fields one level down (``outer.inner``), deeper objects and lists as values."""
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v and depth < 1:
            yield from payload_pairs(v, key + ".", depth + 1)
        else:
            yield key, v


def _scalar_line(key: str, v: Any) -> Optional[str]:
    if isinstance(v, str):
        return f"{key} {v}" if v else None
    if isinstance(v, bool) or v is None:
        return f"{key} {json.dumps(v)}"
    if isinstance(v, float) and v in (math.inf, -math.inf):
        return f"{key} {'-' if v < 0 else ''}Infinity"     # (as JavaScript shows it; 1e999 in the row: issue 27)
    if isinstance(v, (int, float)):
        return f"{key} {v}"
    return None


def payload_text(typ: str, data: Any) -> str:
    """The searchable text of a generic row's payload: one ``key value`` line per scalar its
    summary shows (:func:`payload_pairs`; strings whole and unescaped, where the summary clips
    them; a nested value under its own key), and the items of a ``todo/write`` list.  Lists and deeper objects the row shows only
    by their size (``inserted [1 item]``) are not text of the row."""
    out: list[str] = []
    if isinstance(data, dict):
        for k, v in payload_pairs(data):
            # (a nested value under its own key: the summary's "outer.inner" is no stored text,
            # and the byte prefilter looks for stored text only)
            line = _scalar_line(k.rsplit(".", 1)[-1] if k not in data else k, v)
            if line is not None:
                out.append(line)
        if typ == "todo/write" and isinstance(data.get("todos"), list):
            out += [value_text(x.get("content")) for x in data["todos"] if isinstance(x, dict) and x.get("content")]
    return "\n".join(out)


def normalize_kind(k: str) -> str:
    """A kind name from user input (``tool``, ``output``, ``errors``…) -> one of ``KINDS``."""
    s = (k or "").strip().lower()
    if s in KINDS:
        return s
    if s in KIND_ALIASES:
        return KIND_ALIASES[s]
    raise ValueError(f"unknown kind {k!r} (one of: {', '.join(KINDS)})")


def arguments_text(arguments: Any) -> str:
    """Tool arguments as a user reads them: ``key: value`` lines for a JSON object
    (string values unescaped), else the arguments verbatim."""
    obj = arguments
    if isinstance(arguments, str):
        try:
            obj = json.loads(arguments)
        except ValueError:
            return arguments
    if isinstance(obj, dict):
        lines = []
        for k, v in obj.items():
            lines.append(f"{k}: {v if isinstance(v, str) else value_text(v)}")
        return "\n".join(lines)
    return value_text(obj)


def error_text(err: Any) -> str:
    """``CODE: message`` of an error/failure object (or its string)."""
    if isinstance(err, dict):
        code = err.get("code")
        msg = err.get("message")
        if msg is None and code is None:
            return value_text(err)
        return f"{code}: {value_text(msg)}" if code else value_text(msg)
    return value_text(err)


def _message(d: JsonObj) -> Optional[JsonObj]:
    return as_obj(d.get("message"))


class Shown(NamedTuple):
    """A field the window shows (:func:`shown_fields`) and, for a tool call, its call's id."""
    field: Field
    call: Optional[str] = None
    block: bool = False               # a tool-call block of an assistant message (not a tool/call row)


def shown_fields(ev: Event, tool_names: Optional[dict[Any, str]] = None) -> list[Shown]:
    """Every field the window shows of one event: :func:`event_fields`, with the call's id of a
    ``tool/call``; the tool-call blocks of an ``assistant/message`` (``block`` set); the
    ``event`` field of a generic row (:func:`payload_text`).  ``tool_names``: as
    :func:`event_fields` takes it."""
    typ = ev.type
    d = ev.data
    if typ not in TEXT_TYPES:
        if typ in NO_PAYLOAD_TYPES or not isinstance(d, dict) or not d:
            return []
        t = payload_text(typ, d)
        return [Shown(Field(EVENT, t))] if t else []
    fields = event_fields(ev, tool_names)
    if typ == "tool/call" and isinstance(d, dict):
        cid = d.get("callId")
        return [Shown(f, cid if isinstance(cid, str) else None) for f in fields]
    out = [Shown(f) for f in fields]
    if typ == "assistant/message" and isinstance(d, dict):
        for b in (_message(d) or {}).get("content") or []:
            if isinstance(b, dict) and b.get("type") == "tool-call":
                name = value_text(b.get("name"))
                args = arguments_text(b.get("arguments"))
                cid = b.get("id")
                out.append(Shown(Field(TOOL_CALL, f"{name}\n{args}" if args else name, name or None),
                                 cid if isinstance(cid, str) else None, True))
    return out


def answered_call(m: JsonObj) -> Any:
    """The callId a tool result's message answers: its source's, v4's ``toolCallId``, or its
    ``tool-result`` block's (None when it names none)."""
    cid = (m.get("source") or {}).get("callId") if isinstance(m.get("source"), dict) else None
    if cid is None:
        cid = m.get("toolCallId")          # v4: the tool message names its call
    if cid is None:
        for b in m.get("content") or []:
            if isinstance(b, dict) and b.get("type") == "tool-result":
                cid = b.get("toolCallId")
                break
    return cid


def event_fields(ev: Event, tool_names: Optional[dict[Any, str]] = None) -> list[Field]:
    """The fields (kind, text, tool) a user sees in one decoded event, in display order.

    ``ev`` is an :class:`~app.log.format.model.Event` (only its ``type`` and ``data`` are read).
    ``tool_names``: callId -> tool name, when the caller tracks calls (a tool output is then
    labelled with its tool); tool calls add themselves to it.  Empty list: nothing to see."""
    typ = ev.type
    d = ev.data
    if typ not in TEXT_TYPES or not isinstance(d, dict):
        return []
    out: list[Field] = []
    if typ == "user/message":
        t = content_text(d.get("content"))
        if t:
            out.append(Field(USER, t))
    elif typ == "assistant/message":
        m = _message(d) or {}
        reasons = content_parts(blocks(m), kinds=("reasoning",), image=None, nested=False, other=None,
                                skip_empty=False)
        texts = content_parts(blocks(m), kinds=("text",), image=None, nested=False, other=None, skip_empty=False)
        if reasons and any(reasons):
            out.append(Field(REASONING, "\n".join(reasons)))
        if texts and any(texts):
            out.append(Field(ASSISTANT, "\n".join(texts)))
    elif typ == "tool/call":
        name = value_text(d.get("name"))
        cid = d.get("callId")
        if tool_names is not None and cid is not None and not isinstance(cid, (list, dict)):
            tool_names[cid] = name                 # (a list or object is no id: it names no call)
        args = arguments_text(d.get("arguments"))
        out.append(Field(TOOL_CALL, f"{name}\n{args}" if args else name, name or None))
    elif typ == "tool/result":
        m = _message(d) or {}
        name = None
        cid = answered_call(m)
        if tool_names is not None and not isinstance(cid, (list, dict)):
            name = tool_names.get(cid)
        t = content_text(m.get("content"))
        if t:
            out.append(Field(TOOL_OUTPUT, t, name))
        if d.get("error") is not None:
            out.append(Field(ERROR, error_text(d.get("error")), name))
    elif typ == "turn/end":
        r = d.get("reason")
        if isinstance(r, dict) and r.get("kind") == "error":
            out.append(Field(ERROR, error_text(r.get("error"))))
    elif typ == "assistant/chunk":
        c = d.get("chunk")
        if isinstance(c, dict) and c.get("type") == "finish":
            r = c.get("reason")
            if isinstance(r, dict) and r.get("kind") == "error":
                out.append(Field(ERROR, error_text(r.get("failure") or r.get("error"))))
    elif typ == "assistant/attempt":
        from ..format.versions import stream_chunks
        for _t, c in stream_chunks(d.get("stream")):
            if isinstance(c, dict) and c.get("type") == "finish":
                r = c.get("reason")
                if isinstance(r, dict) and r.get("kind") == "error":
                    out.append(Field(ERROR, error_text(r.get("failure") or r.get("error"))))
    elif typ in ("system/message", "developer/message"):
        m = _message(d) or {}
        t = content_text(m.get("content"))
        if t:
            out.append(Field(SYSTEM, t))
    elif typ == "llm/retry":
        f = d.get("failure")
        if f is not None:
            out.append(Field(ERROR, error_text(f)))
    elif typ == "session/title":
        t = value_text(d.get("title"))
        if t:
            out.append(Field(TITLE, t))
    elif typ == "compaction/summary":
        t = content_text(d.get("summary") if "summary" in d else d.get("content"))
        if t:
            out.append(Field(ASSISTANT, t))
    return out


def event_turn(ev: Event) -> Optional[int]:
    """The turn an event names in its payload (None: it names none; track turn/start)."""
    d = ev.data
    if isinstance(d, dict):
        t = d.get("turn")
        if type(t) is int:
            return t
    return None


# --------------------------------------------------------------------------- caseless matching

# ``str.casefold`` (full case folding: ß and ẞ to "ss", ligatures such as ﬁ to "fi", ŉ to "ʼn"), and
# the Turkish dotted capital İ and dotless ı to "i" (``re.IGNORECASE`` matched them with i/I, plain
# casefold keeps ı apart and folds İ to "i" + a combining dot): no caseless query that found a word
# with ``re`` before misses it now
_FOLD_FIX = {0x130: "i", 0x131: "i"}


def fold_case(text: str) -> str:
    """The caseless form a search compares: ``str.casefold`` with the Turkish i's folded to "i".
    Never shorter than ``text`` (a character folds to 1–3 characters, each independently)."""
    if text.isascii():
        return text.lower()
    if "\u0130" in text or "\u0131" in text:
        text = text.translate(_FOLD_FIX)
    return text.casefold()


_EXPANDS: Optional[re.Pattern[str]] = None       # the characters that fold to more than one


def _expanders() -> re.Pattern[str]:
    global _EXPANDS
    if _EXPANDS is None:
        # (every character with a multi-character case folding is in the BMP; C-level map, ~10 ms once)
        every = list(map(chr, range(0x10000)))
        many = [c for c, f in zip(every, map(fold_case, every)) if len(f) > 1]
        _EXPANDS = re.compile("[" + "".join(re.escape(c) for c in many) + "]")
    return _EXPANDS


_WORD_CHAR = re.compile(r"\w")


def fold_finditer(text: str, needle: str, word: bool = False) -> Iterator[tuple[int, int]]:
    """(start, end) in ``text`` of each match of ``needle`` (already :func:`fold_case` d) in
    ``fold_case(text)``, oldest first, not overlapping.  A span covers whole characters of ``text``:
    a match that starts or ends inside a character's folded form ("s" in "Maße") covers that
    character.  ``word``: only matches that start and end on character boundaries, not preceded
    or followed by a word character (``re``'s ``(?<!\\w)…(?!\\w)``)."""
    if not needle or not text:
        return
    folded = fold_case(text)
    if not needle.isascii() and folded.isascii():
        return
    n = len(needle)
    # the characters whose fold is longer than one: (their folded starts, their indexes, fold lengths)
    fs: list[int] = []
    ix: list[int] = []
    ln: list[int] = []
    extra: list[int] = []                         # characters added to the folded text up to and with each
    if len(folded) != len(text):
        add = 0
        for m in _expanders().finditer(text):
            k = m.start()
            w = len(fold_case(m.group()))
            fs.append(k + add)
            ix.append(k)
            ln.append(w)
            add += w - 1
            extra.append(add)

    def owner(p: int) -> tuple[int, bool]:
        """(character of ``text`` holding folded offset ``p``, whether ``p`` starts that character)."""
        t = bisect_right(fs, p) - 1
        if t >= 0 and p < fs[t] + ln[t]:
            return ix[t], p == fs[t]
        return p - (extra[t] if t >= 0 else 0), True

    last = 0
    at = folded.find(needle)
    while at >= 0:
        end = at + n
        if fs:
            a, a_whole = owner(at)
            z, _ = owner(end - 1)
            b = z + 1
            b_whole = b >= len(text) or owner(end)[1]
        else:
            a, b, a_whole, b_whole = at, end, True, True
        if word and not (a_whole and b_whole and not (a > 0 and _WORD_CHAR.match(text, a - 1))
                         and not _WORD_CHAR.match(text, b)):
            at = folded.find(needle, at + 1)
            continue
        if a >= last:
            yield a, b
            last = b
        at = folded.find(needle, end)


def fold_spans(text: str, term: str, limit: int = 200, utf16: bool = False) -> list[tuple[int, int]]:
    """(start, end) of each caseless match of ``term`` in ``text`` (at most ``limit``), as the
    whole-log search matches a field (:func:`fold_case` of both, :func:`fold_finditer`), so a
    character that folds to several (ß to "ss", ŉ to "ʼn", ligatures) matches them, and the
    reverse ("STRASSE" in "straße", "straße" in "STRASSE").  Each span covers whole characters of
    ``text``.  ``utf16``: offsets in UTF-16 code units (Qt text positions) instead of code points."""
    out: list[tuple[int, int]] = []
    for span in fold_finditer(text, fold_case(term)):
        out.append(span)
        if len(out) >= limit:
            break
    if utf16 and out and not text.isascii() and max(text) > "\uffff":
        # (characters outside the BMP are two UTF-16 code units: one pass over the text, in order)
        res: list[tuple[int, int]] = []
        at = extra = 0
        for a, b in out:
            extra += len(_ASTRAL.findall(text, at, a))
            a16 = a + extra
            extra += len(_ASTRAL.findall(text, a, b))
            res.append((a16, b + extra))
            at = b
        out = res
    return out


_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def plain(text: str) -> str:
    """One line of terminal-safe text: control characters (newlines too) become spaces."""
    return _CONTROL_RE.sub(" ", text)


def snippet(text: str, start: int, end: int, width: int = 160) -> tuple[str, int, int]:
    """(snippet, s, e): about ``width`` characters of ``text`` around ``[start, end)`` on one
    plain line, and the match's span inside the snippet."""
    ctx = max(10, (width - (end - start)) // 2)
    a = max(0, start - ctx)
    b = min(len(text), end + ctx)
    # prefer to start after a line break / space near the cut
    if a > 0:
        sp = text.rfind("\n", a, start)
        if sp < 0:
            sp = text.rfind(" ", a, max(a, start - ctx // 2))
        if sp >= 0:
            a = sp + 1
    pre = "…" if a > 0 else ""
    post = "…" if b < len(text) else ""
    body = plain(text[a:b])            # (one pass: plain turns each character into one)
    s = len(pre) + start - a
    return pre + body + post, s, s + end - start

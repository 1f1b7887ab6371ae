"""Text for a terminal: log text can never drive it (one helper for every CLI output).

Log text is untrusted: an escape sequence in a title or a tool result must not clear the
screen, retitle the window (OSC) or move the cursor.  :func:`term_safe` shows every C0
control except newline and tab as its Unicode control picture (ESC -> ``␛``, so a whole
escape or OSC sequence is inert), DEL as ``␡``, C1 controls as ``\\x9b``, and lone
surrogates (undecodable file names) as ``\\udcXX``, and bidirectional controls (U+202A-E,
U+2066-9, LRM/RLM/ALM) as ``\\u202e``: a right-to-left override in a title cannot reverse the rest
of the line.  :func:`json_safe` keeps JSON valid and pure UTF-8: C1 controls, lone surrogates and
bidi controls become ``\\u`` escapes.  :func:`one_line` is for fields that are one line by nature
(ids, titles, paths, problems): a line break in them shows as ``␤``, so it cannot forge a line.
"""
from __future__ import annotations

import re
import sys
from typing import Union

_TEXT: dict[int, Union[int, str]] = {c: 0x2400 + c for c in range(32) if c not in (9, 10)}
_TEXT[0x7F] = 0x2421
_TEXT.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
_TEXT.update({c: f"\\u{c:04x}" for c in range(0xD800, 0xE000)})
BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)
_TEXT.update({c: f"\\u{c:04x}" for c in BIDI})
_BREAKS = {c: 0x2424 for c in (0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029)}     # (a line break -> ␤)

_JSON = {c: f"\\u{c:04x}" for c in range(0x80, 0xA0)}
_JSON.update({c: f"\\u{c:04x}" for c in range(0xD800, 0xE000)})
_JSON[0x2028] = "\\u2028"
_JSON[0x2029] = "\\u2029"
_JSON.update({c: f"\\u{c:04x}" for c in BIDI})
_JSON_ANY = re.compile("[\x80-\x9f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")  # (_JSON's keys)


def term_safe(text: str) -> str:
    """``text`` with every control character neutralised (newline and tab kept)."""
    return text.translate(_TEXT)


def one_line(value: object) -> str:
    """A field that is one line by nature (id, title, path, problem) as text: its line breaks shown as
    ``␤`` (then :func:`term_safe` neutralises the rest)."""
    return str(value).translate(_BREAKS)


def json_safe(dumped: str) -> str:
    """A ``json.dumps(…, ensure_ascii=False)`` result made terminal-safe and valid UTF-8
    (only characters that can appear inside JSON strings are rewritten, as ``\\u`` escapes)."""
    if dumped.isascii() or not _JSON_ANY.search(dumped):      # (translate walks in Python-dict steps: 50 ns a character)
        return dumped
    return dumped.translate(_JSON)


def write_out(text: str, stream=None) -> None:
    """Write already-neutralised text as UTF-8, whatever the locale of the stream."""
    stream = stream or sys.stdout
    buf = getattr(stream, "buffer", None)
    if buf is None:
        stream.write(text)
        return
    stream.flush()
    buf.write(text.encode("utf-8", "backslashreplace"))
    buf.flush()

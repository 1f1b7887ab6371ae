"""Log text into Qt, always as plain text (one helper for every widget).

Transcript text is untrusted.  Qt treats a string as rich text when it *looks* like HTML
(``Qt::mightBeRichText``) wherever the text format is automatic: tooltips, message boxes,
labels left on ``AutoText``.  So log text reaches Qt only through these functions:

* :func:`plain` neutralises control characters (C0 except newline/tab, DEL, C1) into
  visible pictures and *isolates* the text's bidirectional runs (U+2068 FSI … U+2069 PDI):
  a right-to-left override in a title cannot reverse our own "seq · time" beside it.
* :func:`tooltip` is a tooltip string that Qt renders literally: escaped HTML inside ``<qt>``
  (so ``<b>``, ``<a href>`` and ``<img src=file:…>`` show as text, nothing loads).
* :func:`set_plain` / :func:`set_title` for labels and window titles.
"""
from __future__ import annotations

import html
import re

FSI, PDI = "\u2068", "\u2069"
_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
_CONTROLS = {c: 0x2400 + c for c in range(32) if c not in (9, 10)}
_CONTROLS[0x7F] = 0x2421
_CONTROLS.update({c: 0xFFFD for c in range(0x80, 0xA0)})
_CONTROLS.update({c: 0xFFFD for c in range(0xD800, 0xE000)})   # lone surrogates (undecodable names)


_ANY_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")      # (the keys of _CONTROLS)


def clean(text) -> str:
    """``text`` as a str with every control character shown as a visible picture (ESC -> ␛): the one
    text-cleaning place for Qt (labels, item views, the history's painted rows, tables)."""
    s = "" if text is None else str(text)
    return s.translate(_CONTROLS) if _ANY_CONTROL.search(s) else s     # (translate: 50 ns a character)


def clean_line(text) -> str:
    """:func:`clean` for a one-line cell: newline and tab shown as spaces too."""
    return clean(text).replace("\n", " ").replace("\t", " ")


def has_bidi_controls(text: str) -> bool:
    return any(ch in _BIDI for ch in text)


def isolate(text) -> str:
    """Log text placed next to our own text: its direction cannot leak out (FSI … PDI)."""
    t = clean(text)
    return f"{FSI}{t}{PDI}" if t and not t.isascii() else t      # ASCII has no direction to leak


def plain(text) -> str:
    """Control characters neutralised and bidi isolated: the form log text takes in Qt."""
    return isolate(text)


def tooltip(text) -> str:
    """A tooltip that Qt shows literally, whatever the text holds."""
    body = html.escape(clean(text), quote=False).replace("\n", "<br>")
    return f"<qt><span style='white-space:pre-wrap'>{body}</span></qt>"


def set_plain(label, text) -> None:
    """A QLabel (or anything with setTextFormat/setText) showing ``text`` as plain text."""
    from PySide6.QtCore import Qt
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(clean(text))


def set_title(window, text) -> None:
    window.setWindowTitle(clean(text).replace("\n", " "))

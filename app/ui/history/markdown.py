"""A small Markdown reader for message text: pure Python, no Qt, no HTML.

It understands what agent transcripts use (ATX headings, bullet and numbered lists, block
quotes, fenced code, pipe tables, rules, ``**bold**``, ``*italic*``, ```code```, links) and
returns plain data that the delegate draws with ``QTextCursor.insertText``.  Nothing here
produces markup: raw HTML stays literal text, an image ``![alt](src)`` becomes the text
``[image: alt]`` (never loaded), and a link keeps its target only as data, opened by the
view after the user confirms it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

SAFE_SCHEMES = ("http://", "https://", "mailto:")


@dataclass
class Span:
    text: str
    bold: bool = False
    italic: bool = False
    code: bool = False
    href: Optional[str] = None


@dataclass
class MdBlock:
    kind: str                    # heading | para | bullet | quote | code | table | rule
    spans: list = field(default_factory=list)
    level: int = 0               # heading level, list depth
    marker: str = ""             # "•", "1." …
    lines: list = field(default_factory=list)     # code lines
    rows: list = field(default_factory=list)      # table cells (plain text)
    lang: str = ""


_FENCE = re.compile(r"^(\s{0,3})(`{3,}|~{3,})\s*([\w+-]*)")
_HEAD = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_URL = r"((?:[^()\s]|\([^()\s]*\))*)"          # one level of balanced parentheses
_INLINE = re.compile(r"(`+)(.+?)\1|!\[([^\]]*)\]\(" + _URL + r"[^)]*\)|\[([^\]]+)\]\(" + _URL + r"[^)]*\)"
                     r"|\*\*(.+?)\*\*|__(.+?)__|(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?!\w)|(?<![\w_])_(?!\s)(.+?)(?<!\s)_(?!\w)")


def inline(text: str, bold=False, italic=False) -> list:
    out: list = []
    pos = 0
    for m in _INLINE.finditer(text):
        if m.start() > pos:
            out.append(Span(text[pos:m.start()], bold, italic))
        if m.group(2) is not None:
            out.append(Span(m.group(2), bold, italic, code=True))
        elif m.group(4) is not None:
            alt = m.group(3).strip() or "image"
            out.append(Span(f"[image: {alt}]", bold, True))
        elif m.group(6) is not None:
            out.append(Span(m.group(5), bold, italic, href=m.group(6)))
        elif m.group(7) is not None or m.group(8) is not None:
            out += inline(m.group(7) or m.group(8), True, italic)
        else:
            out += inline(m.group(9) or m.group(10), bold, True)
        pos = m.end()
    if pos < len(text):
        out.append(Span(text[pos:], bold, italic))
    return out


def _cells(line: str) -> list:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", s)]


def parse(text: str) -> list:
    lines = str(text).replace("\r\n", "\n").split("\n")
    out: list = []
    para: list = []

    def flush():
        if para:
            out.append(MdBlock("para", inline(" ".join(p.strip() for p in para))))
            para.clear()
    i = 0
    while i < len(lines):
        ln = lines[i]
        m = _FENCE.match(ln)
        if m:
            flush()
            fence = m.group(2)
            code = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence):
                code.append(lines[i])
                i += 1
            out.append(MdBlock("code", lines=code, lang=m.group(3)))
            i += 1
            continue
        if not ln.strip():
            flush()
            i += 1
            continue
        m = _HEAD.match(ln)
        if m:
            flush()
            out.append(MdBlock("heading", inline(m.group(2)), level=len(m.group(1))))
            i += 1
            continue
        if _RULE.match(ln):
            flush()
            out.append(MdBlock("rule"))
            i += 1
            continue
        if "|" in ln and i + 1 < len(lines) and _TABLE_SEP.match(lines[i + 1]):
            flush()
            rows = [_cells(ln)]
            i += 2
            while i < len(lines) and "|" in lines[i] and lines[i].strip():
                rows.append(_cells(lines[i]))
                i += 1
            out.append(MdBlock("table", rows=rows))
            continue
        m = _BULLET.match(ln)
        if m:
            flush()
            depth = len(m.group(1).expandtabs(4)) // 2
            mk = m.group(2)
            out.append(MdBlock("bullet", inline(m.group(3)), level=depth,
                               marker="•" if mk in "-*+" else mk))
            i += 1
            continue
        if ln.lstrip().startswith(">"):
            flush()
            out.append(MdBlock("quote", inline(ln.lstrip()[1:].strip())))
            i += 1
            continue
        para.append(ln)
        i += 1
    flush()
    return out


def link_allowed(href: str) -> bool:
    return str(href).strip().lower().startswith(SAFE_SCHEMES)

"""A small Markdown reader for message text: pure Python, no Qt, no HTML.

dsh renders messages as GitHub-flavoured Markdown, so this reader follows CommonMark's block
structure where transcripts use it: ATX and setext headings, bullet, numbered and task lists
(with continuation lines and nested blocks), block quotes (nested), fenced and indented code,
GFM pipe tables (any dash count in the separator), thematic rules; and inline: backslash escapes,
entities, code spans, ``**bold**``, ``*italic*``, ``~~strike~~``, links, ``<autolinks>`` and bare
web addresses.  ``tests/test_markdown_conformance.py`` compares the block structure with
markdown-it-py (a dev dependency only) over every message of the fixtures and a CommonMark sample.

It returns plain data that the delegate draws with ``QTextCursor.insertText``.  Nothing here
produces markup: raw HTML stays literal text, an image ``![alt](src)`` becomes the text
``[image: alt]`` (never loaded), and a link keeps its target only as data, opened by the view
after the user confirms it.
"""
from __future__ import annotations

import html
import re
from html.entities import html5
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
    strike: bool = False


@dataclass
class MdBlock:
    kind: str                    # heading | para | bullet | code | html | table | rule
    spans: list[Span] = field(default_factory=list)
    level: int = 0               # heading level; for the rest, the list depth the block sits in
    marker: str = ""             # a list item's first block: "•", "1.", "☐", "☑"
    lines: list[str] = field(default_factory=list)        # code lines
    rows: list[list[str]] = field(default_factory=list)   # table cells (plain text)
    lang: str = ""
    quote: int = 0               # block-quote depth


# --------------------------------------------------------------------------- inline

_PUNCT = r"!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~"
_URL = r"((?:[^()\s]|\([^()\s]*\))*)"          # one level of balanced parentheses
_INLINE = re.compile(
    r"\\(?P<esc>[" + _PUNCT + r"])"
    r"|(?P<ticks>`+)(?P<code>.+?)(?<!`)(?P=ticks)(?!`)"
    r"|<(?P<auto>[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^<>\s]*)>"
    r"|<(?P<mail>[A-Za-z0-9.!#$%&'*+/=?^_`{|}~\-]+@[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?)>"
    r"|(?P<tag></?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>)"       # raw inline HTML: literal text, not parsed
    r"|(?P<ent>&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});)"
    r"|!\[(?P<alt>[^\]]*)\]\((?P<src>" + _URL + r")[^)]*\)"
    r"|\[(?P<label>(?:[^\]\\]|\\.)+)\]\((?P<href>" + _URL + r")[^)]*\)"
    r"|\*\*\*(?!\s)(?P<both>.+?)(?<!\s)\*\*\*"
    r"|\*\*(?!\s)(?P<strong>.+?)(?<!\s)\*\*|__(?!\s)(?P<strong2>.+?)(?<!\s)__(?!\w)"
    r"|~~(?!\s)(?P<strike>.+?)(?<!\s)~~"
    r"|(?<![\w*\\])\*(?![\s*])(?P<em>.+?)(?<![\s\\])\*(?!\w)"
    r"|(?<![\w_\\])_(?![\s_])(?P<em2>.+?)(?<![\s\\])_(?!\w)"
    r"|(?P<url>https?://[^\s<>]*[^\s<>.,:;\"')\]*_~!?])",      # a bare web address (GFM)
    re.S)


# where an inline construct may start: the scan jumps between these (one C-level search), and tries
# the full pattern only there
_TRIGGER = re.compile(r"[\\`<&!\[*_~]|https?://")


def _entity(ref: str) -> str:
    if ref[1] != "#" and ref[1:] not in html5:
        return ref                                   # not a named entity: literal text
    return html.unescape(ref)


def inline(text: str, bold: bool = False, italic: bool = False, strike: bool = False) -> list[Span]:
    out: list[Span] = []
    pos = 0
    plain: list[str] = []

    def add(sp: Span) -> None:
        if plain:
            out.append(Span("".join(plain), bold, italic, strike=strike))
            plain.clear()
        out.append(sp)
    at = 0
    while True:
        t = _TRIGGER.search(text, at)
        if t is None:
            break
        m = _INLINE.match(text, t.start())
        if m is None:
            at = t.start() + 1
            continue
        if m.start() > pos:
            plain.append(text[pos:m.start()])
        pos = at = m.end()
        k, v = next((k, v) for k, v in m.groupdict().items() if v is not None and k != "ticks")
        if k in ("esc", "tag"):
            plain.append(v)
        elif k == "code":
            code = v.replace("\n", " ")
            if len(code) > 2 and code[0] == " " and code[-1] == " " and code.strip():
                code = code[1:-1]
            add(Span(code, bold, italic, code=True, strike=strike))
        elif k in ("auto", "mail"):
            add(Span(v, bold, italic, href=v if k == "auto" else "mailto:" + v, strike=strike))
        elif k == "ent":
            plain.append(_entity(v))
        elif k == "alt":
            add(Span(f"[image: {v.strip() or 'image'}]", bold, True, strike=strike))
        elif k == "label":
            for sp in inline(v, bold, italic, strike):
                sp.href = sp.href or m.group("href")
                add(sp)
        elif k in ("both", "strong", "strong2", "strike", "em", "em2"):
            for sp in inline(v, bold or k in ("both", "strong", "strong2"), italic or k in ("both", "em", "em2"),
                             strike or k == "strike"):
                add(sp)
        else:
            add(Span(v, bold, italic, href=v, strike=strike))
    if pos < len(text):
        plain.append(text[pos:])
    if plain:
        out.append(Span("".join(plain), bold, italic, strike=strike))
    return out


# --------------------------------------------------------------------------- blocks

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
_HEAD = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_ITEM = re.compile(r"^( {0,3})([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*))?$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_QUOTE = re.compile(r"^ {0,3}> ?")
_TABLE_SEP = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_TASK = re.compile(r"^\[([ xX])\][ \t]+")
# raw HTML blocks (CommonMark kinds 2, 6 and 7), kept as literal text: a comment, a known block tag,
# or any complete tag alone on its line (which cannot interrupt a paragraph)
_BLOCK_TAGS = ("address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|"
               "dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|"
               "hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|"
               "search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul")
_HTML_6 = re.compile(r"^ {0,3}</?(?:" + _BLOCK_TAGS + r")(?:[ \t>]|/>|$)", re.I)
_HTML_7 = re.compile(r"^ {0,3}(?:<[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'|"
                     r"\"[^\"]*\"))?)*\s*/?>|</[A-Za-z][A-Za-z0-9-]*\s*>)[ \t]*$")
_HTML_2 = re.compile(r"^ {0,3}<!--")


def _cells(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", s)]


def _is_table(lines: list[str], i: int) -> bool:
    if "|" not in lines[i] or i + 1 >= len(lines) or not _TABLE_SEP.match(lines[i + 1]):
        return False
    sep = lines[i + 1]
    if "|" not in sep and "|" not in lines[i].strip().strip("|"):
        return False
    return len(_cells(lines[i])) == len(_cells(sep))


def _joined(para: list[str]) -> str:
    """A paragraph's lines as one text: soft line breaks read as spaces."""
    return " ".join(p.strip() for p in para).strip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _starts_block(line: str) -> bool:
    """Would ``line`` start a block (so it cannot continue a paragraph lazily)?"""
    if not line.strip():
        return True
    if _FENCE.match(line) or _HEAD.match(line) or _RULE.match(line) or _QUOTE.match(line):
        return True
    m = _ITEM.match(line)
    return bool(m and m.group(4) and (m.group(2) in "-*+" or m.group(2)[:-1] == "1"))


class _Parser:
    def __init__(self) -> None:
        self.out: list[MdBlock] = []

    def blocks(self, lines: list[str], quote: int, level: int) -> None:
        para: list[str] = []

        def flush() -> None:
            if para:
                self.out.append(MdBlock("para", inline(_joined(para)),
                                        level=level, quote=quote))
                para.clear()
        i = 0
        while i < len(lines):
            ln = lines[i]
            if not ln.strip():
                flush()
                i += 1
                continue
            if para:
                m = _SETEXT.match(ln)
                if m:
                    self.out.append(MdBlock("heading", inline(_joined(para)),
                                            level=1 if m.group(1)[0] == "=" else 2, quote=quote))
                    para.clear()
                    i += 1
                    continue
            elif _indent(ln.expandtabs(4)) >= 4:
                code = []
                while i < len(lines) and (not lines[i].strip() or _indent(lines[i].expandtabs(4)) >= 4):
                    code.append(lines[i].expandtabs(4)[4:])
                    i += 1
                while code and not code[-1].strip():
                    code.pop()
                self.out.append(MdBlock("code", lines=code, level=level, quote=quote))
                continue
            i = self._block(lines, i, para, flush, quote, level)
        flush()

    def _block(self, lines: list[str], i: int, para: list[str], flush, quote: int, level: int) -> int:
        ln = lines[i]
        m = _FENCE.match(ln)
        if m and not (m.group(2)[0] == "`" and "`" in ln[m.end(2):]):
            flush()
            return self._fence(lines, i, m, quote, level)
        m = _HEAD.match(ln)
        if m:
            flush()
            self.out.append(MdBlock("heading", inline((m.group(2) or "").strip()), level=len(m.group(1)), quote=quote))
            return i + 1
        if _RULE.match(ln):
            flush()
            self.out.append(MdBlock("rule", level=level, quote=quote))
            return i + 1
        if _HTML_2.match(ln) or _HTML_6.match(ln) or (not para and _HTML_7.match(ln)):
            flush()
            return self._html(lines, i, quote, level)
        if not para and _is_table(lines, i):
            return self._table(lines, i, quote, level)
        if _QUOTE.match(ln):
            flush()
            return self._quote(lines, i, quote, level)
        m = _ITEM.match(ln)
        if m and (not para or _starts_block(ln)):
            flush()
            return self._item(lines, i, m, quote, level)
        para.append(ln)
        return i + 1

    def _fence(self, lines: list[str], i: int, m: re.Match[str], quote: int, level: int) -> int:
        pad, fence = len(m.group(1)), m.group(2)
        code = []
        i += 1
        while i < len(lines):
            s = lines[i].strip()
            if s.startswith(fence) and not s.strip(fence[0]) and _indent(lines[i]) < 4:
                i += 1
                break
            ln = lines[i]
            code.append(ln[min(pad, _indent(ln)):])
            i += 1
        self.out.append(MdBlock("code", lines=code, lang=m.group(3), level=level, quote=quote))
        return i

    def _html(self, lines: list[str], i: int, quote: int, level: int) -> int:
        raw = []
        comment = bool(_HTML_2.match(lines[i]))
        while i < len(lines) and (comment or lines[i].strip()):
            raw.append(lines[i])
            i += 1
            if comment and "-->" in raw[-1]:
                break
        self.out.append(MdBlock("html", lines=raw, level=level, quote=quote))
        return i

    def _table(self, lines: list[str], i: int, quote: int, level: int) -> int:
        rows = [_cells(lines[i])]
        n = len(rows[0])
        i += 2
        while i < len(lines) and lines[i].strip() and not _starts_block(lines[i]):
            row = _cells(lines[i])
            rows.append((row + [""] * n)[:n])
            i += 1
        self.out.append(MdBlock("table", rows=rows, level=level, quote=quote))
        return i

    def _quote(self, lines: list[str], i: int, quote: int, level: int) -> int:
        inner: list[str] = []
        while i < len(lines):
            ln = lines[i]
            m = _QUOTE.match(ln)
            if m:
                inner.append(ln[m.end():])
            elif ln.strip() and inner and inner[-1].strip() and not _starts_block(ln) \
                    and not _FENCE.match(inner[-1]):
                inner.append(ln)                     # a lazy continuation line of the quoted paragraph
            else:
                break
            i += 1
        self.blocks(inner, quote + 1, level)
        return i

    def _item(self, lines: list[str], i: int, m: re.Match[str], quote: int, level: int) -> int:
        mk = m.group(2)
        gap = len((m.group(3) or " ").expandtabs(4))
        width = len(m.group(1)) + len(mk) + (gap if 1 <= gap <= 4 and m.group(4) else 1)
        first = m.group(4) or ""
        inner = [first]
        i += 1
        while i < len(lines):
            ln = lines[i]
            if not ln.strip():
                nxt = next((x for x in lines[i + 1:] if x.strip()), None)
                if nxt is None or _indent(nxt.expandtabs(4)) < width:
                    break
                inner.append("")
            elif _indent(ln.expandtabs(4)) >= width:
                inner.append(ln.expandtabs(4)[width:])
            elif inner[-1].strip() and not _starts_block(ln) and not _ITEM.match(ln) \
                    and not _FENCE.match(inner[0]):
                inner.append(ln)                      # lazy continuation of the item's paragraph
            else:
                break
            i += 1
        marker = "•" if mk in "-*+" else mk
        t = _TASK.match(inner[0])
        if t:
            marker = "☑" if t.group(1) in "xX" else "☐"
            inner[0] = inner[0][t.end():]
        at = len(self.out)
        self.blocks(inner, quote, level + 1)
        if at < len(self.out) and self.out[at].kind == "para":
            self.out[at].kind = "bullet"
            self.out[at].marker = marker
        else:
            self.out.insert(at, MdBlock("bullet", [], level=level + 1, marker=marker, quote=quote))
        return i


def parse(text: str) -> list[MdBlock]:
    lines = str(text).replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ").split("\n")
    p = _Parser()
    p.blocks(lines, 0, 0)
    return p.out


def link_allowed(href: str) -> bool:
    return str(href).strip().lower().startswith(SAFE_SCHEMES)

"""The message Markdown reader (app/ui/history/markdown.py) against markdown-it-py (CommonMark with
GFM tables and strikethrough; a dev dependency only): the same block structure (leaf kind, heading
level, list depth, quote depth) and the same plain text per block, over every text of the shared
fixtures and a sample of the constructs dsh's GitHub-flavoured rendering uses."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.ui.history.markdown import parse
from tests.fixtures_util import FIXTURES

markdown_it = pytest.importorskip("markdown_it")

NEXT = FIXTURES.parent / "dsh-next"

SAMPLE = [
    # backslash escapes
    "\\*not emphasis\\* and \\# not a heading and a \\\\ backslash",
    # list continuation lines (indented and lazy), loose items, nested lists
    "- first item\n  continues here\nlazily too\n- second\n\n  second paragraph\n  - nested\n    - deeper\n- third",
    "1. one\n2. two\n   continued\n\n3) other marker",
    # nested quotes, lazy continuation, a list in a quote
    "> outer\n> > inner\n> > more\n> back out?\nlazy\n\n> - item in quote\n> - another",
    # setext headings
    "Big title\n=========\n\nSmaller\n-------\n\ntext",
    # tables with single-dash separators, alignment, escaped pipes, short rows
    "| a | b |\n|-|:-:|\n| 1 | 2 \\| 3 |\n| only |",
    "x | y\n--|--\n1 | 2",
    # entities
    "AT&amp;T &copy; &#169; &#x27; &notanentity; & plain",
    # autolinks
    "see <https://example.com/a?b=c> and <mailto:a@b.c> and <user@example.com>",
    # strikethrough and task lists
    "~~gone~~ and ~~two words~~\n\n- [ ] todo\n- [x] done\n- [X] done too",
    # code: fenced (with info, longer fences), indented, code spans
    "```python\ndef f():\n    return `x`\n```\n\n    indented code\n    more\n\nuse `a ``b`` c` here",
    "````\n```\nnested fence\n```\n````",
    # headings, rules, emphasis
    "# One\n## Two ##\n###### Six\n\n---\n***\n___\n\n*em* **strong** _em_ __strong__ ***both***",
    # paragraphs interrupted by blocks
    "para\n# heading\npara\n> quote\npara\n- list\npara\n```\ncode\n```",
    # links and images (never loaded)
    "[text](https://x.org) and ![alt](img.png) and [a *b*](https://y.org \"t\")",
]


def _it_blocks(text: str) -> list[tuple]:
    md = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])
    out: list[tuple] = []
    quote = level = 0
    pending = False                 # a list item opened, its first leaf not seen yet
    heading = 0
    cells: list[list[str]] = []
    in_table = False

    def leaf(kind: str, lv: int, body) -> None:
        nonlocal pending
        if pending and kind == "para":
            out.append(("bullet", level, quote, body))
        else:
            if pending:
                out.append(("bullet", level, quote, ""))
            out.append((kind, lv, quote, body))
        pending = False
    for t in md.parse(text):
        tt = t.type
        if tt == "blockquote_open":
            quote += 1
        elif tt == "blockquote_close":
            quote -= 1
        elif tt in ("bullet_list_open", "ordered_list_open"):
            level += 1
        elif tt in ("bullet_list_close", "ordered_list_close"):
            level -= 1
        elif tt == "list_item_open":
            pending = True
        elif tt == "list_item_close" and pending:
            leaf("para", level, None)            # an empty item
        elif tt == "heading_open":
            heading = int(t.tag[1])
        elif tt == "table_open":
            in_table, cells = True, []
        elif tt == "tr_open":
            cells.append([])
        elif tt == "table_close":
            in_table = False
            leaf("table", level, cells)
        elif tt == "inline":
            if in_table:
                cells[-1].append(_it_text(t))
            elif heading:
                leaf("heading", heading, _it_text(t))
                heading = 0
            else:
                leaf("para", level, _it_text(t))
        elif tt in ("fence", "code_block"):
            leaf("code", level, t.content.rstrip("\n").split("\n") if t.content else [])
        elif tt == "hr":
            leaf("rule", level, None)
        elif tt == "html_block":
            leaf("html", level, t.content.rstrip("\n").split("\n"))
    return [(k, lv, q, b) for k, lv, q, b in out]


def _it_text(tok) -> str:
    parts = []
    for c in tok.children or []:
        if c.type in ("text", "code_inline", "html_inline"):
            parts.append(c.content)
        elif c.type in ("softbreak",) or c.type == "hardbreak":
            parts.append(" ")
        elif c.type == "image":
            parts.append(f"[image: {c.content.strip() or 'image'}]")
    return "".join(parts).strip()


def _ours(text: str) -> list[tuple]:
    out = []
    for b in parse(text):
        body: object
        if b.kind in ("para", "heading", "bullet"):
            body = "".join(s.text for s in b.spans).strip()
            if b.marker in ("☐", "☑"):
                body = ("[ ] " if b.marker == "☐" else "[x] ") + str(body)
            if b.kind == "para" and not body:
                body = None
        elif b.kind == "table":
            body = b.rows
        elif b.kind in ("code", "html"):
            body = list(b.lines)
        else:
            body = None
        out.append((b.kind, b.level, b.quote, body))
    return out


def _norm(blocks: list[tuple]) -> list[tuple]:
    """Compare the plain text with runs of spaces as one (both sides join soft breaks)."""
    def n(b):
        if isinstance(b, str):
            return " ".join(b.split())
        if isinstance(b, list) and b and isinstance(b[0], list):
            return [[" ".join(c.split()) for c in row] for row in b]
        return b
    return [(k, lv, q, n(b)) for k, lv, q, b in blocks]


def _task_prefix(it: list[tuple]) -> list[tuple]:
    # markdown-it's core has no task lists: its text keeps "[x] ", which _ours puts back as well
    return [(k, lv, q, b.replace("[X] ", "[x] ", 1) if k == "bullet" and isinstance(b, str) and b.startswith("[X] ")
             else b) for k, lv, q, b in it]


@pytest.mark.parametrize("text", SAMPLE, ids=[s[:30] for s in SAMPLE])
def test_the_sample_reads_as_markdown_it_reads_it(text):
    assert _norm(_ours(text)) == _norm(_task_prefix(_it_blocks(text)))


def _fixture_texts() -> list[str]:
    seen: set[str] = set()
    out: list[str] = []

    def walk(v) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "text" and isinstance(x, str) and x.strip() and x not in seen:
                    seen.add(x)
                    out.append(x)
                else:
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    for root in (FIXTURES, NEXT):
        for p in sorted(Path(root).rglob("*.jsonl")):
            for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    walk(json.loads(line))
                except ValueError:
                    continue
    return out


def test_every_fixture_text_reads_as_markdown_it_reads_it():
    texts = _fixture_texts()
    assert len(texts) > 100
    bad = [t for t in texts if _norm(_ours(t)) != _norm(_task_prefix(_it_blocks(t)))]
    assert not bad, f"{len(bad)} of {len(texts)} differ, first: {bad[0][:300]!r}"


@pytest.mark.parametrize("text, want", [
    ("a \\*b\\*", [("a *b*", False)]),
    ("~~x~~", [("x", True)]),
])
def test_inline_escapes_and_strikethrough(text, want):
    (b,) = parse(text)
    assert [(s.text, s.strike) for s in b.spans] == want


def test_entities_autolinks_and_tasks_are_data_not_markup():
    (p, item) = parse("&lt;b&gt;x&lt;/b&gt; <https://e.org>\n\n- [x] shipped")
    assert "".join(s.text for s in p.spans).startswith("<b>x</b> ")     # decoded to literal text, never parsed
    assert [s.href for s in p.spans if s.href] == ["https://e.org"]
    assert item.kind == "bullet" and item.marker == "☑" and item.spans[0].text == "shipped"

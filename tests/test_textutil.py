"""app/textutil.py: the one clip / pretty_json / compact_json."""
from __future__ import annotations

import json

from app.textutil import CLIP_HINT, clip, clip_bytes, clip_line, compact_json, pretty_json


def test_clip_by_lines_says_how_many_were_left_out():
    text = "\n".join(f"line {i}" for i in range(30))
    out = clip(text, max_lines=5)
    assert out.splitlines()[:5] == [f"line {i}" for i in range(5)]
    assert out.splitlines()[5] == "… 25 more lines" + CLIP_HINT
    assert clip("a\nb", max_lines=1, hint="").endswith("… 1 more line")


def test_clip_by_characters_and_untouched_short_text():
    assert clip("x" * 50, max_chars=10, hint="") == "x" * 10 + "\n… 40 more characters"
    assert clip("short") == "short"
    assert clip(12345) == "12345"


def test_clip_bytes_counts_utf8_and_is_idempotent():
    text = "é" * 1000                                   # 2000 bytes
    out = clip_bytes(text, 101)
    kept = out.split("\n")[0]
    assert kept == "é" * 50                             # never half a character
    assert out.endswith(f"… ({2000 - 100} more bytes)")
    assert clip_bytes(out, 101) == out
    assert clip_bytes(None, 10) == "" and clip_bytes("abc", 10) == "abc"


def test_clip_line():
    assert clip_line("a\r\nb", 10) == "a\nb"
    assert clip_line("y" * 12, 10) == "y" * 10 + "… (+2 chars)"


def test_pretty_and_compact_json():
    v = {"a": [1, 2], "t": "héllo  world"}
    assert json.loads(pretty_json(v)) == v and "\n  " in pretty_json(v) and "héllo" in pretty_json(v)
    assert compact_json(v) == '{"a": [1, 2], "t": "héllo world"}'
    cut = compact_json({"k": "v" * 500}, 40)
    assert len(cut) == 40 and cut.endswith("…")
    assert pretty_json({1, 2}) == repr({1, 2}) and compact_json(object).startswith("<class")

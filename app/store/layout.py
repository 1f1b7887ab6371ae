"""JSONL tree layout (spec §1.2): project keys and id segments."""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Optional

_LITERAL = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def _utf16_units(s: str) -> Iterator[int]:
    b = s.encode("utf-16-le", errors="surrogatepass")
    for i in range(0, len(b), 2):
        yield b[i] | (b[i + 1] << 8)


def _escape(s: str, separators: bool) -> str:
    out = []
    prev_dash = False
    for u in _utf16_units(s):
        ch = chr(u) if u < 0xD800 or u > 0xDFFF else None
        if separators and ch in ("/", "\\", ":"):
            if not prev_dash:
                out.append("-")
            prev_dash = True
            continue
        prev_dash = False
        if ch is not None and ch in _LITERAL and not (not separators and ch == "."):
            out.append(ch)
        else:
            out.append(f"~{u:04X}")
    return "".join(out)


def project_key(cwd: Optional[str]) -> str:
    """``/home/u/proj`` -> ``--home-u-proj--`` (lossy by design); no cwd -> ``_no-cwd``."""
    if not cwd:
        return "_no-cwd"
    k = _escape(cwd, separators=True).lstrip("-")
    if not k:
        k = "root"
    return f"--{k[:251]}--"


def id_segment(session_id: str) -> str:
    """Injective escape of a session id (``.`` -> ``~002E``)."""
    return _escape(session_id, separators=False)


def generation_name(version: int, compressed: bool) -> str:
    """dsh's file name of one generation (spec-versions §2.1): ``session.jsonl`` for v0,
    ``session.v<N>.jsonl`` for N >= 1, plus ``.zstd`` when compressed."""
    base = "session.jsonl" if not version else f"session.v{version}.jsonl"
    return base + (".zstd" if compressed else "")


# canonical generation names only: lower-case v, decimal without leading zero, never v0
_GENERATION_RE = re.compile(r"^session(?:\.v([1-9][0-9]*))?\.jsonl(\.zstd)?$")


def parse_generation_name(name: str) -> Optional[tuple[int, bool]]:
    """(version, compressed) of a canonical generation file name, else None (``session.v0.jsonl``,
    ``session.v01.jsonl``, ``session.V2.jsonl``, temporaries and migration stages are not)."""
    m = _GENERATION_RE.match(name)
    if not m:
        return None
    return (int(m.group(1)) if m.group(1) else 0), bool(m.group(2))


def session_path(root: str, session_id: str, cwd: Optional[str], compressed: bool, version: int = 0) -> str:
    return os.path.join(root, project_key(cwd), id_segment(session_id), generation_name(version, compressed))

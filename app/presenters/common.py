"""Helpers shared by the built-in presenters: argument lookup, error and meta sections, counts."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Optional

from ..textutil import pretty_json
from .registry import one_line, result_text, section

PresenterPair = tuple[Callable[[dict[str, Any]], dict[str, Any]], Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]]

# --------------------------------------------------------------------------- helpers


def as_str(v: Any) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else (pretty_json(v) if isinstance(v, (dict, list)) else str(v))


def first_of(a: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for k in keys:
        v = a.get(k)
        if v is not None and v != "":
            return v
    return default


def is_error(r: dict[str, Any]) -> bool:
    return bool(r.get("isError") or r.get("error"))


def meta_of(r: dict[str, Any]) -> dict[str, Any]:
    m = r.get("meta")
    return m if isinstance(m, dict) else {}


def error_sections(r: dict[str, Any], text: Optional[str] = None) -> list[Any]:
    text = result_text(r) if text is None else text
    out = [section("error", text or "(no message)")]
    e = r.get("error")
    if isinstance(e, dict) and (e.get("code") or e.get("name")):
        out.append(section("error code", f"{e.get('code', '')} ({e.get('name', '')})".strip()))
    return out


def mark_failed(v: dict[str, Any], r: dict[str, Any], text: str) -> bool:
    """When the result ``r`` is an error, make the view ``v`` say so (status, one-line summary, the error first,
    then ``v``'s own sections) -> whether it was one."""
    if not is_error(r):
        return False
    v.update(status="error", summary=one_line(text), sections=error_sections(r, text) + v["sections"])
    return True


def meta_section(r: dict[str, Any], skip: Iterable[str] = ()) -> list[Any]:
    m = r.get("meta")
    if m is None or m == {} or (isinstance(m, dict) and set(m) <= set(skip)):
        return []
    if isinstance(m, dict) and skip:
        m = {k: v for k, v in m.items() if k not in skip}
    return [section("meta", pretty_json(m), True, "json")]


def count_lines(s: str) -> int:
    return len(s.splitlines()) if s else 0


def plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}" + ("es" if word.endswith(("ch", "sh", "s", "x")) else "s")

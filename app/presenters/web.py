"""Presenters of web tools: search (result items from JSON or text) and fetch."""
from __future__ import annotations

import json
import re
from typing import Any, Optional

from ..textutil import pretty_json
from .registry import one_line, register, result_text, section
from .common import as_str, error_sections, first_of, is_error, meta_of, meta_section, plural

# --------------------------------------------------------------------------- web

SEARCH_TOOLS = ("web_search", "websearch", "search", "search_web", "google_search", "brave_search",
                "tavily_search", "bing_search")
FETCH_TOOLS = ("web_fetch", "webfetch", "fetch", "fetch_url", "browse", "open_url", "read_url")

_URL = re.compile(r"https?://[^\s<>\"'`\])]+")


def _queries(a: dict[str, Any]) -> str:
    q = first_of(a, "query", "queries", "q", "search_term", "search_query", "term", "prompt")
    if isinstance(q, list):
        return " | ".join(as_str(x) for x in q)
    return as_str(q)


def _item(title: Any, url: Any, snippet: Any) -> dict[str, Any]:
    return {"title": as_str(title).strip(), "url": as_str(url).strip(), "snippet": as_str(snippet).strip()[:500]}


def _items_from_json(data: Any) -> Optional[list[Any]]:
    rows = None
    if isinstance(data, list):
        rows = data
    elif isinstance(data, dict):
        for k in ("results", "items", "organic", "webPages", "sources", "hits", "data"):
            if isinstance(data.get(k), list):
                rows = data[k]
                break
            if isinstance(data.get(k), dict) and isinstance(data[k].get("value"), list):
                rows = data[k]["value"]
                break
        if rows is None and isinstance(data.get("searches"), list):     # multi-query results
            rows = [x for s in data["searches"] if isinstance(s, dict) for x in (s.get("results") or [])]
    if rows is None:
        return None
    out = []
    for it in rows:
        if isinstance(it, dict):
            out.append(_item(first_of(it, "title", "name", default=""), first_of(it, "url", "link", "href", default=""),
                             first_of(it, "snippet", "description", "content", "text", "summary", default="")))
        elif isinstance(it, str):
            out.append(_item(it, it if _URL.match(it) else "", ""))
    return out


def items_from_text(text: str) -> list[Any]:
    """Search hits from plain/markdown text: each line holding a URL starts an item; its
    title is the line's other text (or the previous line), its snippet the lines after."""
    lines = (text or "").splitlines()
    items: list[Any] = []
    prev = ""
    snippet: list[Any] = []
    for ln in lines:
        urls = _URL.findall(ln)
        if urls:
            if items:
                items[-1]["snippet"] = " ".join(snippet).strip()[:500]
            snippet = []
            md = re.search(r"\[([^\]]+)\]\((https?://[^)\s]+)\)", ln)
            if md:
                title, url = md.group(1), md.group(2)
            else:
                url = urls[0]
                title = ln.replace(url, " ")
                title = re.sub(r"^\s*(?:\d+[.)]|[-*•#>]+)\s*", "", title)
                title = re.sub(r"\b(?:URL|Link|Source)\s*:\s*", "", title, flags=re.I).strip(" -–—:|()[]")
                if not title:
                    title = prev.strip()
                    title = re.sub(r"^\s*(?:\d+[.)]|[-*•#>]+)\s*", "", title)
            items.append(_item(title or url, url, ""))
            prev = ""
        else:
            if items and ln.strip():
                snippet.append(ln.strip())
            prev = ln if ln.strip() else prev
    if items:
        items[-1]["snippet"] = " ".join(snippet).strip()[:500]
    return items


def search_call(a: dict[str, Any]) -> dict[str, Any]:
    q = _queries(a)
    v: dict[str, Any] = {"card": "search", "title": f"search: {one_line(q)}" if q else "search", "query": q, "summary": "",
         "items": [], "sections": []}
    extra = {k: x for k, x in a.items() if k not in ("query", "queries", "q", "search_term", "search_query")}
    if extra:
        v["sections"].append(section("options", pretty_json(extra), True, "json"))
    return v


def search_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = search_call(a)
    text = result_text(r)
    if is_error(r):
        v.update(status="error", summary=one_line(text), sections=error_sections(r))
        return v
    items = None
    meta = r.get("meta")
    if meta is not None:
        items = _items_from_json(meta)
    if not items:
        try:
            items = _items_from_json(json.loads(text))
        except ValueError:
            items = None
    if items is None:
        items = items_from_text(text)
    v.update(items=items, status="ok", summary=plural(len(items), "result") if items else "no results",
             sections=[section("content", text, mono=False)] + meta_section(r))
    return v


_FETCHED = re.compile(r"\AFetched (\S+)(?: \((?:HTTP )?(\d{3})\))?\s*\n+", re.I)


def fetch_call(a: dict[str, Any]) -> dict[str, Any]:
    url = as_str(first_of(a, "url", "uri", "href", "link", default=""))
    v: dict[str, Any] = {"card": "web", "title": f"fetch {url}" if url else "fetch", "query": url, "summary": "", "items": [],
         "sections": []}
    if a.get("prompt"):
        v["sections"].append(section("prompt", as_str(a["prompt"]), mono=False))
    return v


def fetch_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = fetch_call(a)
    text = result_text(r)
    meta = meta_of(r)
    if is_error(r):
        v.update(status="error", summary=one_line(text), sections=error_sections(r))
        return v
    url = as_str(meta.get("url") or v["query"])
    code = meta.get("statusCode", meta.get("status"))
    body = text
    m = _FETCHED.match(text)
    if m:
        url = url or m.group(1)
        code = code if code is not None else (int(m.group(2)) if m.group(2) else None)
        body = text[m.end():]
    bits = []
    if code is not None:
        bits.append(f"HTTP {code}")
    if meta.get("truncated"):
        bits.append("truncated")
    bits.append(plural(len(body.encode("utf-8", "replace")), "byte"))
    page_title = one_line(re.sub(r"^#+\s*", "", body.strip().split("\n", 1)[0] if body.strip() else ""))
    v.update(query=url, status="ok" if code is None or (isinstance(code, int) and code < 400) else "error",
             summary=", ".join(bits), items=[_item(page_title or url, url, " ".join(body.split())[:300])],
             sections=[section("content", body, mono=False)] + meta_section(r, skip=("url", "statusCode", "truncated")))
    return v


# --------------------------------------------------------------------------- registration

register(SEARCH_TOOLS, call=search_call, result=search_result)
register(FETCH_TOOLS, call=fetch_call, result=fetch_result)

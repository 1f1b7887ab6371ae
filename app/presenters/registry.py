"""Presenter registry (spec §8 "Tool views"): plain functions of events, by tool name.

Views are computed on the fly and never stored.  A view is a JSON-able dict::

    {"for": "call"|"result",
     "card": "terminal"|"diff"|"read"|"write"|"search"|"web"|"todo"|"subagent"|"generic",
     "tool": name, "title": one-line str, "summary": short str, "status": "ok"|"error"|None,
     "sections": [{"label": str, "text": str, "mono": bool, "lang": "diff"|"json"|None}],
     # optional card fields
     "command", "exitCode", "path", "range", "query", "items", "agent",
     "fallback"}          # generic fallback cards only: why no presenter view

Every text value is a plain string (the UI renders text, never HTML); a section's text is
clipped to 64 KiB with a ``… (N more bytes)`` marker.

A presenter is ``present_call(args) -> view`` and/or ``present_result(args, result) -> view``
with ``result = {"content": [blocks], "isError": bool, "meta": Any|None, "error": dict|None}``
(``error`` is the tool/result's ``{name, code}``, an addition to the host's shape).
The dispatchers (:func:`present_call`, :func:`present_result`, :func:`views_for_page`) never
raise: a bad argument string, an unknown tool, a missing presenter or a presenter that throws
give a generic card with a ``fallback`` reason.
"""
from __future__ import annotations

import json
from typing import Any, Optional
from collections.abc import Callable, Iterable

from ..log.format.payloads import JsonObj, content_text
from ..textutil import clip_bytes, compact_json, pretty_json

View = dict[str, Any]                 # a tool view (the shape above)
Presenter = Callable[..., Any]        # present_call(args) / present_result(args, result) -> view

MAX_SECTION = 64 * 1024          # bytes of text kept per section / long field
MAX_TITLE = 200                  # characters of a title
MAX_SUMMARY = 160                # characters of a summary
MAX_ITEMS = 1000                 # items kept in a card's item list

CARDS = frozenset({"terminal", "diff", "read", "write", "search", "web", "todo", "subagent", "generic"})
LANGS = (None, "diff", "json")


_CALL: dict[str, Presenter] = {}
_RESULT: dict[str, Presenter] = {}


# --------------------------------------------------------------------------- registration

def _names(names: str | Iterable[str]) -> list[str]:
    return [names] if isinstance(names, str) else list(names)


def register(names: str | Iterable[str], *, call: Optional[Presenter] = None,
             result: Presenter | bool | None = None) -> Callable[[Presenter], Presenter]:
    """Register presenters for one tool name or several.

    ``register("bash", call=f, result=g)`` registers directly; ``@register("bash")`` as a
    decorator registers a call presenter, ``@register("bash", result=True)`` a result one.
    Returns the decorator (direct use) or the decorated function.
    """
    def decorate(fn: Presenter) -> Presenter:
        for n in _names(names):
            if result is True:
                _RESULT[n] = fn
            else:
                _CALL[n] = fn
        return fn

    if call is None and (result is None or result is True):
        return decorate
    for n in _names(names):
        if call is not None:
            _CALL[n] = call
        if result is not None and result is not True and result is not False:
            _RESULT[n] = result
    return decorate


def unregister(names: str | Iterable[str]) -> None:
    for n in _names(names):
        _CALL.pop(n, None)
        _RESULT.pop(n, None)


def registered() -> list[str]:
    """Tool names with at least one presenter."""
    return sorted(set(_CALL) | set(_RESULT))


def _lookup(table: dict[str, Presenter], name: str) -> Optional[Presenter]:
    fn = table.get(name)
    if fn is None and isinstance(name, str) and name.lower() != name:
        fn = table.get(name.lower())
    return fn


def _known(name: str) -> bool:
    return _lookup(_CALL, name) is not None or _lookup(_RESULT, name) is not None


# --------------------------------------------------------------------------- text helpers

def one_line(text: Any, limit: int = MAX_TITLE) -> str:
    """The first non-empty line of ``text`` (``…`` when more follows or it is cut)."""
    s = "" if text is None else (text if isinstance(text, str) else str(text))
    lines = [ln.strip() for ln in s.strip().splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        return ""
    first = lines[0]
    more = len(lines) > 1
    if len(first) > limit:
        return first[:limit].rstrip() + "…"
    return first + (" …" if more else "")


def section(label: str, text: Any, mono: bool = True, lang: Optional[str] = None) -> dict[str, Any]:
    return {"label": str(label), "text": clip_bytes(text, MAX_SECTION), "mono": bool(mono), "lang": lang if lang in LANGS else None}


def pretty_arguments(arguments_json: Any) -> tuple[str, Optional[str]]:
    """(text, lang) for showing raw arguments: pretty JSON when it parses, else verbatim."""
    if isinstance(arguments_json, (dict, list)):
        return pretty_json(arguments_json), "json"
    try:
        return pretty_json(json.loads(arguments_json)), "json"
    except (TypeError, ValueError):
        return ("" if arguments_json is None else str(arguments_json)), None


def image_label(b: JsonObj) -> str:
    """``[image name mediaType WxH N bytes]`` (the parts the attachment has)."""
    att: dict[str, Any] = _as_dict(b.get("attachment"))
    bits = [str(att.get("name") or ""), str(att.get("mediaType") or "")]
    if att.get("width") is not None and att.get("height") is not None:
        bits.append(f"{att.get('width')}x{att.get('height')}")
    if att.get("bytes") is not None:
        bits.append(f"{att.get('bytes')} bytes")
    return "[image " + " ".join(x for x in bits if x) + "]"


def result_content_text(content: object) -> str:
    """Tool-result content as presenters show it: text blocks as text, images described,
    any other block (reasoning, a nested result, a bare string) as pretty JSON; one line per block."""
    return content_text(content, kinds=("text",), image=image_label, nested=False, other=pretty_json,
                        skip_empty=False)


def block_text(b: Any) -> str:
    """Plain text of one tool-result content block."""
    return result_content_text([b])


def result_text(result: dict[str, Any]) -> str:
    """The text of a result's content blocks (images described, unknown blocks as JSON)."""
    return result_content_text(result.get("content") if isinstance(result, dict) else None)


# --------------------------------------------------------------------------- event helpers

def _as_dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _data(event: Any) -> dict[str, Any]:
    d = getattr(event, "data", event)
    return d if isinstance(d, dict) else {}


def tool_result_of(event: Any) -> dict[str, Any]:
    """The presenter input of a tool/result event (or its data dict):
    ``{"content", "isError", "meta", "error"}``, content = the tool-result block's content."""
    d = _data(event)
    m: dict[str, Any] = _as_dict(d.get("message"))
    e = d.get("error")
    err: Optional[dict[str, Any]] = e if isinstance(e, dict) else None
    blocks: list[Any] = _as_list(m.get("content"))
    for b in blocks:
        if isinstance(b, dict) and b.get("type") == "tool-result":
            content = b.get("content")
            if not isinstance(content, list):
                content = [] if content is None else [{"type": "text", "text": str(content)}]
            return {"content": content, "isError": bool(b.get("isError")) or err is not None,
                    "meta": d.get("meta"), "error": err}
    if m.get("role") == "tool":
        # v4: the tool message itself is the result (top-level toolCallId / isError)
        return {"content": list(blocks), "isError": m.get("isError") is True or err is not None,
                "meta": d.get("meta"), "error": err}
    # no tool-result block: show whatever the message holds
    return {"content": list(blocks), "isError": err is not None, "meta": d.get("meta"), "error": err}


def call_id_of_result(event: Any) -> Optional[str]:
    """data.message.source.callId, else the v4 message's toolCallId, else the tool-result
    block's toolCallId."""
    d = _data(event)
    m: dict[str, Any] = _as_dict(d.get("message"))
    src: dict[str, Any] = _as_dict(m.get("source"))
    cid = src.get("callId")
    if isinstance(cid, str) and cid:
        return cid
    tcid = m.get("toolCallId")
    if isinstance(tcid, str) and tcid:
        return tcid
    blocks: list[Any] = _as_list(m.get("content"))
    for b in blocks:
        if isinstance(b, dict) and b.get("type") == "tool-result" and isinstance(b.get("toolCallId"), str):
            return str(b["toolCallId"])
    return None


# --------------------------------------------------------------------------- views

def _status_of(result: dict[str, Any]) -> str:
    return "error" if result.get("isError") or result.get("error") else "ok"


def generic_view(for_: str, tool: Any, payload: Any, fallback: Optional[str], status: Optional[str] = None,
                 label: Optional[str] = None, lang: Optional[str] = None, extra_sections: Iterable[dict[str, Any]] = (),
                 summary: Optional[str] = None, **fields: Any) -> View:
    """The generic card: tool name + the raw arguments (call) or raw content (result)."""
    tool = tool if isinstance(tool, str) else ("" if tool is None else str(tool))
    text = "" if payload is None else str(payload)
    if summary is None:
        summary = one_line(text, MAX_SUMMARY)
        if lang == "json":
            try:
                summary = compact_json(json.loads(text))
            except ValueError:
                pass
    view: View = {"for": for_, "card": "generic", "tool": tool, "title": one_line(tool) or "(unknown tool)",
            "summary": summary, "status": status,
            "sections": [section(label or ("arguments" if for_ == "call" else "content"), text, True, lang)]
            + list(extra_sections),
            "fallback": fallback}
    view.update(fields)
    return view


def _result_fallback(name: str, res: dict[str, Any], fallback: str, **fields: Any) -> View:
    extra: list[dict[str, Any]] = []
    if res.get("meta") is not None:
        extra.append(section("meta", pretty_json(res["meta"]), True, "json"))
    if res.get("error"):
        e = res["error"]
        extra.append(section("error code", f"{e.get('code', '')} ({e.get('name', '')})", True))
    text = result_text(res)
    return generic_view("result", name, text if text else "(empty)", fallback, _status_of(res),
                        label="error" if res.get("isError") else "content", extra_sections=extra, **fields)


def _s(v: Any, limit: int = MAX_SECTION) -> str:
    return clip_bytes(v if isinstance(v, str) else ("" if v is None else str(v)), limit)


def _finish(view: Any, for_: str, name: str, status: Optional[str]) -> View:
    """Normalize a presenter's view: required keys, plain strings, clipped text, JSON-able."""
    if not isinstance(view, dict):
        raise TypeError(f"presenter returned {type(view).__name__}, not a dict")
    v: View = dict(view)
    v["for"] = for_
    v["tool"] = name
    card = v.get("card")
    v["card"] = card if card in CARDS else "generic"
    v["title"] = one_line(v.get("title")) or name
    v["summary"] = one_line(v.get("summary"), MAX_SUMMARY)
    st = v.get("status")
    if for_ == "call":
        v["status"] = st if st in ("ok", "error") else None
    else:
        v["status"] = st if st in ("ok", "error") else status
    sections = []
    for s in v.get("sections") or []:
        if isinstance(s, dict):
            sections.append(section(s.get("label") or "", s.get("text", ""), s.get("mono", True), s.get("lang")))
        elif s is not None:
            sections.append(section("", s))
    v["sections"] = sections
    for k in ("command", "path", "query", "agent"):
        if k in v and v[k] is not None:
            v[k] = _s(v[k])
    if "exitCode" in v and not (v["exitCode"] is None or isinstance(v["exitCode"], int)):
        v["exitCode"] = None
    if "items" in v:
        items = v["items"] if isinstance(v["items"], list) else []
        v["items"] = [{str(k): (x if isinstance(x, (int, float, bool)) or x is None else _s(x, 4096))
                       for k, x in it.items()} for it in items[:MAX_ITEMS] if isinstance(it, dict)]
    v.pop("fallback", None)
    json.dumps(v)                                   # JSON-able, or the presenter is at fault
    return v


def _parse_args(arguments_json: Any) -> Optional[dict[str, Any]]:
    if isinstance(arguments_json, dict):
        return arguments_json
    if not isinstance(arguments_json, (str, bytes, bytearray)):
        return None
    try:
        v = json.loads(arguments_json)
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


def present_call(name: Any, arguments_json: Any) -> View:
    """The call view of tool ``name`` with its raw ``arguments`` JSON string."""
    name = name if isinstance(name, str) else ("" if name is None else str(name))
    raw, lang = pretty_arguments(arguments_json)
    if not name or not _known(name):
        return generic_view("call", name, raw, "unknown-tool", lang=lang)
    fn = _lookup(_CALL, name)
    if fn is None:
        return generic_view("call", name, raw, "no-presenter", lang=lang)
    args = _parse_args(arguments_json)
    if args is None:
        return generic_view("call", name, "" if arguments_json is None else str(arguments_json), "bad-json")
    try:
        return _finish(fn(args), "call", name, None)
    except Exception as e:  # a presenter must never break the history
        return generic_view("call", name, raw, f"presenter-error: {type(e).__name__}: {e}", lang=lang)


def present_result(name: Any, arguments_json: Any, tool_result_event: Any) -> View:
    """The result view of a tool/result event whose call was tool ``name`` with ``arguments``."""
    name = name if isinstance(name, str) else ("" if name is None else str(name))
    try:
        res = tool_result_of(tool_result_event)
    except Exception as e:
        return generic_view("result", name, "", f"presenter-error: {type(e).__name__}: {e}", "error")
    if not name or not _known(name):
        return _result_fallback(name, res, "unknown-tool")
    fn = _lookup(_RESULT, name)
    if fn is None:
        return _result_fallback(name, res, "no-presenter")
    args = _parse_args(arguments_json)
    if args is None:
        return _result_fallback(name, res, "bad-json")
    try:
        return _finish(fn(args, res), "result", name, _status_of(res))
    except Exception as e:
        return _result_fallback(name, res, f"presenter-error: {type(e).__name__}: {e}")


def views_for_page(events: list[Any], scope: Any = None) -> dict[int, View]:
    """seq -> view for the tool/call and tool/result events of one page.

    The host rule (spec §8): every tool/call gets its call view; a tool/result is matched to
    its tool/call by callId **in this list only** (the nearest earlier call with that id,
    else a later one); a result whose call is not in the list gets a generic card with
    fallback ``call-not-on-page`` showing the raw result content.  ``scope`` (the presenter
    scope: live agent / agent preset) is accepted for the future and ignored: presenters are
    global here.
    """
    evs = list(events or [])
    calls = page_calls(evs)
    views: dict[int, View] = {}
    for i, ev in enumerate(evs):
        if getattr(ev, "type", None) in ("tool/call", "tool/result"):
            views[ev.seq] = view_at(evs, i, calls)
    return views


def page_calls(evs: list[Any]) -> dict[str, list[tuple[int, Any]]]:
    """callId -> [(index, tool/call event)] of one page's events (:func:`views_for_page`'s list)."""
    calls: dict[str, list[tuple[int, Any]]] = {}
    for i, ev in enumerate(evs):
        if getattr(ev, "type", None) == "tool/call":
            d = _data(ev)
            cid = d.get("callId")
            if isinstance(cid, str):
                calls.setdefault(cid, []).append((i, ev))
    return calls


def view_at(evs: list[Any], i: int, calls: dict[str, list[tuple[int, Any]]]) -> View:
    """The view of ``evs[i]`` (a tool/call or tool/result) in :func:`views_for_page`'s page ``evs``, whose
    calls are ``calls`` (:func:`page_calls`): one view alone, e.g. when its row is first shown."""
    ev = evs[i]
    t = getattr(ev, "type", None)
    d = _data(ev)
    try:
        if t == "tool/call":
            return present_call(d.get("name"), d.get("arguments"))
        cid = call_id_of_result(ev)
        cands = calls.get(cid) if cid is not None else None
        call = None
        if cands:
            before = [c for j, c in cands if j < i]
            call = before[-1] if before else cands[0][1]
        if call is None:
            return _result_fallback("", tool_result_of(ev), "call-not-on-page",
                                    summary=f"the call {cid} is not on this page" if cid
                                    else "the result names no call")
        cd = _data(call)
        return present_result(cd.get("name"), cd.get("arguments"), ev)
    except Exception as e:          # belt and braces: a page always gets its views
        return generic_view("call" if t == "tool/call" else "result", d.get("name"), "",
                            f"presenter-error: {type(e).__name__}: {e}")

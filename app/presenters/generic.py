"""Presenters of the other known tools (generic cards): code runs, questions, plans, skills, goals, cordis."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Optional

from ..textutil import compact_json, pretty_json
from .registry import one_line, register, result_text, section
from .common import PresenterPair, as_str, first_of, mark_failed, meta_section
from .files import path_of

# --------------------------------------------------------------------------- other known tools (generic cards)

def _simple(title_of: Callable[..., Any], body_of: Optional[Callable[..., Any]] = None, card: str = "generic",
            result_lang_json: bool = True) -> PresenterPair:
    """A generic card (no fallback) with a readable title and the arguments/result shown."""
    def call(a: dict[str, Any]) -> dict[str, Any]:
        v: dict[str, Any] = {"card": card, "title": title_of(a), "summary": "", "sections": []}
        if body_of is not None:
            v["sections"] = body_of(a)
        elif a:
            v["sections"] = [section("arguments", pretty_json(a), True, "json")]
        return v

    def result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
        v = call(a)
        text = result_text(r)
        if mark_failed(v, r, text):
            return v
        lang = None
        summary = one_line(text)
        if result_lang_json and text.lstrip()[:1] in ("{", "["):
            try:
                parsed = json.loads(text)
                text, lang, summary = pretty_json(parsed), "json", compact_json(parsed)
            except ValueError:
                pass
        v.update(status="ok", summary=summary,
                 sections=v["sections"] + [section("result", text, True, lang)] + meta_section(r))
        return v
    return call, result


def _code_body(a: dict[str, Any]) -> list[Any]:
    out = [section("code", as_str(first_of(a, "code", "source", "script", default="")))]
    rest = {k: x for k, x in a.items() if k not in ("code", "source", "script", "description")}
    if rest:
        out.append(section("arguments", pretty_json(rest), True, "json"))
    return out


def _questions_body(a: dict[str, Any]) -> list[Any]:
    lines = []
    for q in a.get("questions") or []:
        if not isinstance(q, dict):
            lines.append(as_str(q))
            continue
        head = as_str(q.get("header") or "")
        lines.append((f"[{head}] " if head else "") + as_str(q.get("question", "")) +
                     (" (multiple choice)" if q.get("multi_select") or q.get("multiSelect") else ""))
        for o in q.get("options") or []:
            if isinstance(o, dict):
                lines.append(f"  - {as_str(o.get('label', ''))}" +
                             (f": {as_str(o.get('description'))}" if o.get("description") else ""))
            else:
                lines.append(f"  - {as_str(o)}")
    return [section("questions", "\n".join(lines) or pretty_json(a), mono=False)]


def _plan_body(a: dict[str, Any]) -> list[Any]:
    return [section("plan", as_str(first_of(a, "plan", "text", default="")), mono=False)]


def _cordis_title(name: str) -> Callable[[dict[str, Any]], str]:
    def title(a: dict[str, Any]) -> str:
        label = first_of(a, "name", "pluginId", "id", "what", "method")
        if name == "cordis_define" and isinstance(a.get("plugin"), dict):
            label = label or a["plugin"].get("id")
        if name == "cordis_run" and a.get("packageId"):
            label = f"{as_str(a.get('pluginId', ''))}/{as_str(a['packageId'])}"
        verb = name.split("_", 1)[1].replace("_", " ") if "_" in name else name
        return f"cordis {verb}" + (f" {one_line(as_str(label))}" if label else "")
    return title


_LSP_TITLE = lambda a: (f"lsp {as_str(a.get('operation', ''))} {path_of(a)}"  # noqa: E731
                        + (f":{as_str(a['line'])}" if a.get("line") is not None else "")
                        + (f":{as_str(a['character'])}" if a.get("character") is not None else ""))


# --------------------------------------------------------------------------- registration

_SIMPLE = {
    "run_code": (lambda a: "run code" + (f": {one_line(as_str(a['description']))}" if a.get("description") else ""),
                 _code_body),
    "code": (lambda a: "run code" + (f": {one_line(as_str(a['description']))}" if a.get("description") else ""),
             _code_body),
    "execute_code": (lambda a: "run code", _code_body),
    "ask_user_question": (lambda a: "ask the user: " + one_line(as_str(next(
        (q.get("question") for q in a.get("questions") or [] if isinstance(q, dict)), "") or "question")),
        _questions_body),
    "exit_plan_mode": (lambda a: "exit plan mode: " + one_line(as_str(a.get("plan", ""))), _plan_body),
    "skill": (lambda a: f"load skill {as_str(a.get('name', ''))}", None),
    "lsp": (_LSP_TITLE, None),
    "create_goal": (lambda a: "create goal: " + one_line(as_str(a.get("objective", ""))), None),
    "get_goal": (lambda a: "get goal", None),
    "update_goal": (lambda a: f"update goal {as_str(a.get('goal_id', ''))}: {as_str(a.get('action', ''))}", None),
    "session_event_read": (lambda a: f"read session event {as_str(a.get('seq', ''))}", None),
}
for _n, (_t, _b) in _SIMPLE.items():
    _c, _r = _simple(_t, _b)
    register(_n, call=_c, result=_r)
for _n in ("cordis_define", "cordis_inspect", "cordis_inspect_query", "cordis_mount", "cordis_run",
           "cordis_undefine", "cordis_unmount", "cordis_stop"):
    _c, _r = _simple(_cordis_title(_n))
    register(_n, call=_c, result=_r)

del _n, _c, _r, _t, _b

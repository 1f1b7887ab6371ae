"""Built-in presenters for the tools seen in dsh logs."""
from __future__ import annotations

import difflib
import json
import re

from .registry import register, result_text, section

SHELLS = ("bash", "pwsh", "shell", "terminal_send", "job_output")
_EXIT = re.compile(r"(?:exit code|exit status|exited with)[:\s]+(-?\d+)", re.I)


def _first_line(s: str, n: int = 100) -> str:
    s = (s or "").strip()
    return s.splitlines()[0][:n] if s else ""


def shell_call(a):
    cmd = a.get("command") or a.get("text") or ""
    v = {"card": "terminal", "title": f"$ {_first_line(cmd)}", "summary": a.get("description") or "",
         "command": cmd, "sections": []}
    if a.get("run_in_background"):
        v["summary"] = (v["summary"] + " (background)").strip()
    return v


def shell_result(a, r):
    out = result_text(r)
    meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
    code = meta.get("exitCode")
    if code is None:
        m = _EXIT.search(out)
        code = int(m.group(1)) if m else None
    status = "error" if (r["isError"] or (code not in (None, 0))) else "ok"
    cmd = a.get("command") or a.get("text") or ""
    return {"card": "terminal", "title": f"$ {_first_line(cmd)}", "command": cmd, "exitCode": code, "status": status,
            "summary": f"exit {code}" if code is not None else ("error" if r["isError"] else ""),
            "sections": [section("output", out)]}


def _path(a):
    return a.get("file_path") or a.get("path") or ""


def read_call(a):
    rng = ""
    if a.get("offset") is not None or a.get("limit") is not None:
        rng = f" (offset {a.get('offset', 0)}, limit {a.get('limit', '-')})"
    return {"card": "read", "title": f"read {_path(a)}", "path": _path(a), "summary": rng.strip(),
            "sections": []}


def read_result(a, r):
    return {"card": "read", "title": f"read {_path(a)}", "path": _path(a),
            "summary": "error" if r["isError"] else f"{len(result_text(r).splitlines())} lines",
            "sections": [section("content", result_text(r))]}


def _diff(path, old, new):
    return "".join(difflib.unified_diff(str(old).splitlines(True), str(new).splitlines(True),
                                        fromfile=f"a/{path}", tofile=f"b/{path}"))


def edit_call(a):
    p = _path(a)
    if a.get("command") in ("create",) or "file_text" in a:
        return {"card": "write", "title": f"create {p}", "path": p, "summary": "",
                "sections": [section("content", a.get("file_text", ""))]}
    if a.get("command") == "view":
        return read_call(a)
    old = a.get("old_string", a.get("old_str", ""))
    new = a.get("new_string", a.get("new_str", ""))
    d = _diff(p, old, new)
    return {"card": "diff", "title": f"edit {p}", "path": p,
            "summary": f"-{len(str(old).splitlines())} +{len(str(new).splitlines())} lines",
            "sections": [section("diff", d or "(no change)", lang="diff")]}


def edit_result(a, r):
    v = edit_call(a)
    v["sections"] = v["sections"] + [section("result", result_text(r))]
    return v


def write_call(a):
    p = _path(a)
    c = a.get("content", "")
    return {"card": "write", "title": f"write {p}", "path": p, "summary": f"{len(str(c).splitlines())} lines",
            "sections": [section("content", c)]}


def write_result(a, r):
    v = write_call(a)
    v["sections"] = [section("result", result_text(r))] + v["sections"]
    return v


def web_call(a):
    q = a.get("query") or a.get("url") or ""
    return {"card": "search" if "query" in a else "web", "title": q, "query": q, "summary": "", "sections": []}


_URL = re.compile(r"https?://[^\s)\"'<>]+")


def web_result(a, r):
    text = result_text(r)
    items = []
    try:
        data = json.loads(text)
        rows = data.get("results") if isinstance(data, dict) else data
        for it in rows or []:
            if isinstance(it, dict):
                items.append({"title": str(it.get("title", "")), "url": str(it.get("url", "")),
                              "snippet": str(it.get("snippet", it.get("content", "")))[:300]})
    except (ValueError, AttributeError, TypeError):
        items = [{"title": u, "url": u, "snippet": ""} for u in dict.fromkeys(_URL.findall(text))][:20]
    v = web_call(a)
    v.update(items=items, summary=f"{len(items)} results" if items else "",
             sections=[section("content", text)])
    return v


def todo_call(a):
    todos = [t for t in (a.get("todos") or []) if isinstance(t, dict)]
    mark = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
    text = "\n".join(f"{mark.get(t.get('status'), '[?]')} {t.get('content', '')}" for t in todos)
    done = sum(1 for t in todos if t.get("status") == "completed")
    return {"card": "todo", "title": f"todos: {done}/{len(todos)} done",
            "items": [{"content": str(t.get("content", "")), "status": str(t.get("status", ""))} for t in todos],
            "summary": "", "sections": [section("todos", text, mono=False)]}


def todo_result(a, r):
    v = todo_call(a)
    v["sections"].append(section("result", result_text(r)))
    return v


def agent_call(a):
    name = a.get("description") or a.get("subagent_id") or a.get("agent") or "subagent"
    prompt = a.get("prompt") or a.get("message") or ""
    return {"card": "subagent", "title": f"agent: {_first_line(str(name))}", "agent": str(name),
            "summary": "background" if a.get("run_in_background") else "", "sections": [section("prompt", prompt, mono=False)]}


def agent_result(a, r):
    v = agent_call(a)
    v["sections"].append(section("result", result_text(r), mono=False))
    return v


register(SHELLS, call=shell_call, result=shell_result)
register(("read", "read_image", "view"), call=read_call, result=read_result)
register(("edit", "str_replace_editor", "apply_patch"), call=edit_call, result=edit_result)
register(("write",), call=write_call, result=write_result)
register(("web_search", "web_fetch", "search"), call=web_call, result=web_result)
register(("todo_write",), call=todo_call, result=todo_result)
register(("subagent", "subagent_codex", "subagent_fork", "spawn_agent", "send_message"), call=agent_call,
         result=agent_result)

"""Presenters of the todo list, subagents, messages to agents, reports and workflows."""
from __future__ import annotations

import re
from typing import Any

from ..textutil import pretty_json
from .registry import one_line, register, result_text, section
from .common import PresenterPair, as_str, error_sections, first_of, is_error, mark_failed, plural

# --------------------------------------------------------------------------- todo

TODO_TOOLS = ("todo_write", "todowrite", "todo", "todos", "write_todos", "update_todos", "todo_update",
              "update_plan", "plan_update")

_STATUS = {"completed": "completed", "complete": "completed", "done": "completed", "finished": "completed",
           "in_progress": "in_progress", "in-progress": "in_progress", "inprogress": "in_progress",
           "active": "in_progress", "doing": "in_progress", "running": "in_progress",
           "pending": "pending", "todo": "pending", "not_started": "pending", "open": "pending",
           "cancelled": "cancelled", "canceled": "cancelled"}
_MARK = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]", "cancelled": "[-]"}


def todo_items(a: dict[str, Any]) -> list[Any]:
    rows = first_of(a, "todos", "items", "plan", "tasks", "steps", default=[])
    out = []
    for t in rows if isinstance(rows, list) else []:
        if isinstance(t, dict):
            content = as_str(first_of(t, "content", "text", "title", "step", "task", "description", default=""))
            raw = as_str(first_of(t, "status", "state", default="pending"))
            status = _STATUS.get(raw.lower().replace(" ", "_"), raw)
            if t.get("completed") is True or t.get("done") is True:
                status = "completed"
            out.append({"content": content, "status": status})
        elif isinstance(t, str):
            out.append({"content": t, "status": "pending"})
    return out


def todo_call(a: dict[str, Any]) -> dict[str, Any]:
    items = todo_items(a)
    done = sum(1 for t in items if t["status"] == "completed")
    doing = sum(1 for t in items if t["status"] == "in_progress")
    pending = sum(1 for t in items if t["status"] == "pending")
    text = "\n".join(f"{_MARK.get(t['status'], '[?]')} {t['content']}" for t in items)
    return {"card": "todo", "title": f"todos: {done}/{len(items)} done", "items": items,
            "summary": f"{pending} pending, {doing} in progress, {done} completed",
            "sections": [section("todos", text or "(empty list)", mono=True)]}


def todo_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = todo_call(a)
    text = result_text(r)
    if mark_failed(v, r, text):
        return v
    v["sections"].append(section("result", text, mono=False))
    v["status"] = "ok"
    return v


# --------------------------------------------------------------------------- subagents

SUBAGENT_TOOLS = ("subagent", "subagent_codex", "subagent_claude", "subagent_fork", "spawn", "spawn_agent",
                  "spawn_subagent", "delegate", "delegate_task", "task", "agent", "dispatch_agent", "run_agent",
                  "call_agent")
MESSAGE_TOOLS = ("send_message", "send_input", "message_agent")


def _agent_name(tool: str, a: dict[str, Any]) -> str:
    """The agent a spawn call names: an explicit argument, else the tool's suffix
    (``subagent_codex`` -> ``codex``), else the tool name itself."""
    n = first_of(a, "subagent_type", "agent", "agent_type", "agent_name", "agentPreset", "preset", "subagent_id",
               "agent_id", "name")
    if n is not None:
        return as_str(n)
    if tool.startswith("subagent_"):
        return tool[len("subagent_"):]
    return tool


def _agent_views(tool: str) -> PresenterPair:
    def call(a: dict[str, Any]) -> dict[str, Any]:
        desc = as_str(first_of(a, "description", "title", "task", default=""))
        prompt = as_str(first_of(a, "prompt", "message", "instructions", "input", "query", default=""))
        agent = _agent_name(tool, a)
        title = f"{tool}: {one_line(desc)}" if desc else f"{tool}: {one_line(prompt)}"
        bits = [] if agent == tool else [f"agent {agent}"]
        if a.get("run_in_background"):
            bits.append("background")
        if a.get("model"):
            bits.append(f"model {as_str(a['model'])}")
        return {"card": "subagent", "title": title, "agent": agent, "summary": ", ".join(bits),
                "sections": [section("prompt", prompt or "(no prompt)", mono=False)]}

    def result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
        v = call(a)
        text = result_text(r)
        if mark_failed(v, r, text):
            return v
        m = re.match(r"started background (?:subagent )?job (\S+)", text)
        v["summary"] = f"background job {m.group(1)}" if m else one_line(text)
        v["sections"].append(section("result", text, mono=False))
        v["status"] = "ok"
        return v
    return call, result


def _message_views(tool: str) -> PresenterPair:
    def call(a: dict[str, Any]) -> dict[str, Any]:
        target = as_str(first_of(a, "subagent_id", "agent_id", "to", "target", "recipient", "id", default="?"))
        msg = as_str(first_of(a, "message", "text", "content", "input", "prompt", default=""))
        return {"card": "subagent", "title": f"message to {target}", "agent": target, "summary": one_line(msg),
                "sections": [section("message", msg, mono=False)]}

    def result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
        v = call(a)
        text = result_text(r)
        if mark_failed(v, r, text):
            return v
        v.update(status="ok", summary=one_line(text), sections=v["sections"] + [section("result", text, mono=False)])
        return v
    return call, result


def report_call(a: dict[str, Any]) -> dict[str, Any]:
    out = as_str(first_of(a, "output", "report", "result", "message", "text", default=""))
    return {"card": "subagent", "title": "report to parent", "agent": "parent", "summary": one_line(out),
            "sections": [section("report", out, mono=False)]}


def report_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = report_call(a)
    text = result_text(r)
    if mark_failed(v, r, text):
        return v
    v.update(status="ok", sections=v["sections"] + [section("result", text, mono=False)])
    return v


def list_agents_call(a: dict[str, Any]) -> dict[str, Any]:
    return {"card": "subagent", "title": "list agents", "summary": "",
            "sections": [section("arguments", pretty_json(a), True, "json")] if a else []}


def list_agents_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = list_agents_call(a)
    text = result_text(r)
    if is_error(r):
        v.update(status="error", summary=one_line(text), sections=error_sections(r))
        return v
    n = len([ln for ln in text.splitlines() if ln.strip()])
    v.update(status="ok", summary=plural(n, "agent"), sections=[section("agents", text)])
    return v


def workflow_call(a: dict[str, Any]) -> dict[str, Any]:
    m = a.get("meta")
    meta: dict[str, Any] = m if isinstance(m, dict) else {}
    name = as_str(first_of(meta, "name", default="") or first_of(a, "name", default="workflow"))
    desc = as_str(first_of(meta, "description", default="") or a.get("description", ""))
    script = as_str(first_of(a, "script", "code", "source", default=""))
    return {"card": "subagent", "title": f"workflow {name}", "agent": name, "summary": desc,
            "sections": [section("script", script)]}


def workflow_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = workflow_call(a)
    text = result_text(r)
    if mark_failed(v, r, text):
        return v
    v.update(status="ok", summary=one_line(text), sections=v["sections"] + [section("result", text)])
    return v


# --------------------------------------------------------------------------- registration

register(TODO_TOOLS, call=todo_call, result=todo_result)

for _n in SUBAGENT_TOOLS:
    _c, _r = _agent_views(_n)
    register(_n, call=_c, result=_r)
for _n in MESSAGE_TOOLS:
    _c, _r = _message_views(_n)
    register(_n, call=_c, result=_r)
register(("report", "report_result"), call=report_call, result=report_result)
register(("list_agents",), call=list_agents_call, result=list_agents_result)
register(("workflow", "run_workflow"), call=workflow_call, result=workflow_result)
del _n, _c, _r

"""Messages of a v3 log in the shape today's dsh derives them (issue 27 item 1, spec-versions §8, §4.4).

Today's dsh migrates a v3 generation to v4 before deriving anything.  The v3 -> v4 edge renumbers
nothing (it only rewrites events in place and appends catalog facts, which produce no message), so the
normalized messages of a v3 log are its derived messages with the edge's per-message rewrites applied:

* a ``tool/result`` message ``{role: "user", source: {kind: "tool", callId}, content: [{type:
  "tool-result", toolCallId, content, isError?}], id, ...}`` is lifted to ``{role: "tool", source,
  toolCallId, content: <inner>, isError?, id, plugin:message:<other outer keys>...,
  plugin:result:<other wrapper keys>...}`` (key order as the edge writes it, ``liftToolResult``);
* a ``{kind: "plugin", plugin: P, ...}`` message source gets a direct kind (the §4.4 table;
  ``@deepseek-ai/dsh-system-prompt`` is ``system-prompt`` on a system message, ``runtime-context`` on
  any other), the other source keys kept in place, ``plugin`` dropped;
* content block tags outside the v4 set become ``plugin:<type>``.

Pure and per message: the fold is unchanged, only what it hands out is rewritten, so a v3 log costs one
dict rewrite per derived message on top of today's derivation.  ``--as-written`` (CLI) and the Request
tab's toggle skip it and show the writer-era shape.
"""
from __future__ import annotations

from typing import Any

from ..format.payloads import JsonObj

_FIRST_PARTY = frozenset({
    "agent-instructions", "session-reference", "team-message", "goal", "skill-invocation", "skill-catalog",
    "coordinator", "subagent-report", "subagent-settled", "webhook", "agent-message", "model-selection",
    "plan-mode", "time-context", "tmux-context", "user-approval", "repeat-tool-reminder", "tool-cordis",
    "cordis-host-runner", "tool-goal", "tool-jobs", "hooks-codex", "hooks-claude-code", "schedule",
    "dsh-session-title-llm"})
_RENAMED = {"compact": "compact-checkpoint", "tools-code-mode": "ptc-mode", "tools-ptc": "ptc-mode",
            "dsh-compaction-basic": "compact-basic"}
_V4_BLOCKS = frozenset({"text", "reasoning", "image", "file", "tool-call"})


def source_kind(plugin: Any, role: Any) -> str:
    """The direct v4 kind of a v3 ``{kind: "plugin", plugin}`` source (spec-versions §4.4)."""
    if plugin == "@deepseek-ai/dsh-system-prompt":
        return "system-prompt" if role == "system" else "runtime-context"
    if plugin in _RENAMED:
        return _RENAMED[plugin]
    if plugin in _FIRST_PARTY:
        return str(plugin)
    return f"plugin:{plugin}"


def _source(src: Any, role: Any) -> Any:
    if not isinstance(src, dict) or src.get("kind") != "plugin" or not isinstance(src.get("plugin"), str):
        return src
    return {k: (source_kind(src["plugin"], role) if k == "kind" else v) for k, v in src.items() if k != "plugin"}


def _blocks(content: Any) -> Any:
    if not isinstance(content, list) or all(not isinstance(b, dict) or b.get("type") in _V4_BLOCKS
                                            for b in content):
        return content
    return [dict(b, type=f"plugin:{b.get('type')}") if isinstance(b, dict) and isinstance(b.get("type"), str)
            and b["type"] not in _V4_BLOCKS else b for b in content]


def _lift_tool_result(m: JsonObj) -> JsonObj:
    content = m.get("content")
    if not (isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict)
            and content[0].get("type") == "tool-result"):
        return m                                  # not the wrapper the edge lifts: as written
    w = content[0]
    out: JsonObj = {"role": "tool", "source": m.get("source"), "toolCallId": w.get("toolCallId"),
                    "content": _blocks(w.get("content"))}
    if "isError" in w:
        out["isError"] = w["isError"]
    out["id"] = m.get("id")
    for k, v in m.items():
        if k not in ("role", "source", "content", "id"):
            out[f"plugin:message:{k}"] = v
    for k, v in w.items():
        if k not in ("type", "toolCallId", "content", "isError"):
            out[f"plugin:result:{k}"] = v
    return out


def v4_message(m: JsonObj) -> JsonObj:
    """One derived v3 message in the shape the v3 -> v4 edge gives it."""
    if not isinstance(m, dict):
        return m
    role = m.get("role")
    if role == "user" and isinstance(m.get("source"), dict) and m["source"].get("kind") == "tool":
        return _lift_tool_result(m)
    src = m.get("source")
    new_src = _source(src, role)
    content = m.get("content")
    new_content = _blocks(content)
    if new_src is src and new_content is content:
        return m
    return {k: (new_src if k == "source" else new_content if k == "content" else v) for k, v in m.items()}

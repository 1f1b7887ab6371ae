"""Built-in presenters for the tools seen in dsh logs (and their common variants).

Argument names follow the fixtures (``file_path``, ``old_string``/``new_string``,
``command``/``description``, ``todos[{content,status}]``, ``description``/``prompt`` …) and
tolerate the usual variants of other harnesses (``path``, ``old_str``, ``cmd``, ``queries`` …).
Result text conventions parsed (all seen in fixtures):

* shell output: ``stdout`` then ``[stderr]\\n<stderr>``, then trailer lines such as
  ``[exit code: 1]``, ``[sandbox: …]``, ``[status: killed, …]``; ``[shell exited: code 9]``;
* read: ``<path>…</path>\\n<type>file|image</type>\\n<content>\\n…\\n</content>`` with
  ``meta {path, offset, lines[{number,text}], totalLines}``;
* write/edit: ``meta {diffs: [{path, oldText, newText}]}``;
* web_fetch: ``Fetched <url> (HTTP 200)\\n\\n<body>`` with ``meta {url, statusCode, truncated}``;
* glob: ``meta {shape: "paths", paths, truncated, total}``.
"""
from __future__ import annotations

import difflib
import json
import re
import shlex
from collections.abc import Callable, Iterable
from typing import Any, Optional

from ..textutil import compact_json, pretty_json
from .registry import block_text, one_line, register, result_text, section

PresenterPair = tuple[Callable[[dict[str, Any]], dict[str, Any]], Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]]

# --------------------------------------------------------------------------- helpers


def _str(v: Any) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else (pretty_json(v) if isinstance(v, (dict, list)) else str(v))


def _first(a: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for k in keys:
        v = a.get(k)
        if v is not None and v != "":
            return v
    return default


def _is_error(r: dict[str, Any]) -> bool:
    return bool(r.get("isError") or r.get("error"))


def _meta(r: dict[str, Any]) -> dict[str, Any]:
    m = r.get("meta")
    return m if isinstance(m, dict) else {}


def _error_sections(r: dict[str, Any], text: Optional[str] = None) -> list[Any]:
    text = result_text(r) if text is None else text
    out = [section("error", text or "(no message)")]
    e = r.get("error")
    if isinstance(e, dict) and (e.get("code") or e.get("name")):
        out.append(section("error code", f"{e.get('code', '')} ({e.get('name', '')})".strip()))
    return out


def _meta_section(r: dict[str, Any], skip: Iterable[str] = ()) -> list[Any]:
    m = r.get("meta")
    if m is None or m == {} or (isinstance(m, dict) and set(m) <= set(skip)):
        return []
    if isinstance(m, dict) and skip:
        m = {k: v for k, v in m.items() if k not in skip}
    return [section("meta", pretty_json(m), True, "json")]


def _n_lines(s: str) -> int:
    return len(s.splitlines()) if s else 0


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}" + ("es" if word.endswith(("ch", "sh", "s", "x")) else "s")


# --------------------------------------------------------------------------- terminal

SHELL_TOOLS = ("bash", "pwsh", "powershell", "shell", "sh", "zsh", "cmd", "terminal", "run_shell_command",
               "shell_command", "exec_command", "execute_command", "run_command", "run_terminal_cmd",
               "local_shell", "container.exec")

_TRAILER = re.compile(r"^\[(?!stderr\]|stdout\])[a-z][\w .-]*(?::[^\n]*)?\]$", re.I)
_EXIT_LINE = re.compile(r"^\[(?:exit code|exit status|exit):\s*(-?\d+)\]$|^\[shell exited: code (-?\d+)\]$", re.I | re.M)


_FAILED_NOTE = re.compile(r"^\[status: ((?:killed|failed|error|timed.out|timeout|aborted|crashed)\b[^\]]*)\]$", re.I)


def _command_of(a: dict[str, Any]) -> str:
    c = _first(a, "command", "cmd", "script", "commands", "input", "text")
    if isinstance(c, list):
        if all(isinstance(x, str) for x in c):
            # ["bash", "-lc", "…"] -> the script; other argv lists -> a shell-quoted line
            if len(c) == 3 and c[1] in ("-c", "-lc", "-Command", "/c"):
                return str(c[2])
            return shlex.join(c)
        return pretty_json(c)
    return _str(c)


def parse_shell_output(text: str) -> dict[str, Any]:
    """Split dsh shell tool text into stdout / stderr / trailer notes and an exit code."""
    lines = (text or "").split("\n")
    notes: list[str] = []
    while lines and _TRAILER.match(lines[-1].strip() or "-"):
        notes.insert(0, lines.pop().strip())
    body = "\n".join(lines)
    stdout, stderr = body, ""
    if body.startswith("[stderr]\n") or body == "[stderr]":
        stdout, stderr = "", body[len("[stderr]\n"):]
    elif "\n[stderr]\n" in body or body.endswith("\n[stderr]"):
        i = body.find("\n[stderr]")
        stdout, stderr = body[:i], body[i + len("\n[stderr]\n"):]
    if stdout.startswith("[stdout]\n"):
        stdout = stdout[len("[stdout]\n"):]
    code = None
    for m in _EXIT_LINE.finditer(text or ""):
        code = int(m.group(1) or m.group(2))
    return {"stdout": stdout, "stderr": stderr, "notes": notes, "exitCode": code}


def _exit_from_meta(m: dict[str, Any]) -> Optional[int]:
    for k in ("exitCode", "exit_code", "code", "status"):
        v = m.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def _shell_flags(a: dict[str, Any]) -> str:
    bits = []
    if a.get("description"):
        bits.append(_str(a["description"]))
    if a.get("run_in_background"):
        bits.append("(background)")
    if a.get("sandbox_permissions"):
        bits.append(f"[sandbox: {_str(a['sandbox_permissions'])}]")
    if a.get("timeout") is not None:
        bits.append(f"[timeout {_str(a['timeout'])}]")
    return " ".join(bits)


def shell_call(a: dict[str, Any]) -> dict[str, Any]:
    cmd = _command_of(a)
    v: dict[str, Any] = {"card": "terminal", "title": "$ " + one_line(cmd), "summary": _shell_flags(a), "command": cmd,
         "sections": []}
    if a.get("justification"):
        v["sections"].append(section("justification", _str(a["justification"]), mono=False))
    cwd = _first(a, "cwd", "workdir", "working_directory")
    if cwd:
        v["path"] = _str(cwd)
    return v


def _terminal_output(r: dict[str, Any], title: str, command: Optional[str] = None, base: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    text = result_text(r)
    meta = _meta(r)
    p = parse_shell_output(text)
    code = _exit_from_meta(meta)
    if code is None:
        code = p["exitCode"]
    stdout = p["stdout"] if not isinstance(meta.get("stdout"), str) else meta["stdout"]
    stderr = p["stderr"] if not isinstance(meta.get("stderr"), str) else meta["stderr"]
    err = _is_error(r)
    sections = []
    if stdout.strip() or not (stderr.strip() or p["notes"]):
        sections.append(section("error" if err and not stderr else "output", stdout if stdout else "(no output)"))
    if stderr.strip():
        sections.append(section("stderr", stderr))
    if p["notes"]:
        sections.append(section("notes", "\n".join(p["notes"])))
    if isinstance(meta.get("viewport"), str):
        sections.append(section("screen", meta["viewport"]))
    if isinstance(r.get("error"), dict):
        sections.extend(_error_sections(r)[1:])
    failed = next((m.group(1) for m in map(_FAILED_NOTE.match, p["notes"]) if m), None)
    status = "error" if err or failed or (code not in (None, 0)) else "ok"
    if code is not None:
        summary = f"exit {code}"
    elif failed:
        summary = failed
    elif err:
        summary = one_line(stdout or stderr)
    else:
        summary = one_line(stdout or stderr)
    v = dict(base or {})
    v.update({"card": "terminal", "title": title, "summary": summary, "status": status, "exitCode": code,
              "sections": sections})
    if command is not None:
        v["command"] = command
    return v


def shell_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    cmd = _command_of(a)
    return _terminal_output(r, "$ " + one_line(cmd), cmd)


# background jobs and persistent terminals (PTY) ------------------------------

def _job_title(name: str, a: dict[str, Any]) -> str:
    job = _str(_first(a, "job_id", "jobId", "id", default="?"))
    return {"job_output": f"job {job} output" + (" (wait)" if a.get("wait") else ""),
            "job_kill": f"kill job {job}"}.get(name, f"{name} {job}")


def _pty_title(name: str, a: dict[str, Any]) -> str:
    sid = _str(_first(a, "sessionId", "session_id", "id", default="?"))
    if name == "terminal_open":
        t = _str(_first(a, "name", default=""))
        kind = _str(_first(a, "type", default=""))
        return "open terminal" + (f" {t}" if t else "") + (f" [{kind}]" if kind else "")
    if name == "terminal_send":
        return f"{sid} $ " + one_line(_str(_first(a, "text", "input", "data", default="")))
    if name == "terminal_read":
        rng = ""
        if a.get("offset") is not None or a.get("count") is not None:
            rng = f" (offset {_str(a.get('offset', 0))}, count {_str(a.get('count', '-'))})"
        return f"read terminal {sid}{rng}"
    if name == "terminal_signal":
        return f"signal {_str(a.get('signal', '?'))} → {sid}"
    if name == "terminal_close":
        return f"close terminal {sid}"
    if name == "terminal_list":
        return "list terminals"
    return f"{name} {sid}"


def _aux_terminal(titler: Callable[..., Any], name: str, command_key: Optional[tuple[str, ...]] = None) -> PresenterPair:
    def call(a: dict[str, Any]) -> dict[str, Any]:
        v: dict[str, Any] = {"card": "terminal", "title": titler(name, a), "summary": _str(a.get("reason", "")), "sections": []}
        if command_key:
            c = _first(a, *command_key)
            if c is not None:
                v["command"] = _str(c)
        return v

    def result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
        c = _first(a, *command_key) if command_key else None
        return _terminal_output(r, titler(name, a), None if c is None else _str(c))
    return call, result


# --------------------------------------------------------------------------- read

READ_TOOLS = ("read", "read_file", "view_file", "open_file", "cat", "read_image", "readfile", "notebook_read")

_WRAPPED = re.compile(r"\A<path>(.*?)</path>\n<type>(.*?)</type>\n<content>\n?(.*?)\n?</content>\s*\Z", re.S)


def _path_of(a: dict[str, Any]) -> str:
    return _str(_first(a, "file_path", "path", "filePath", "filename", "file", "target_file", "notebook_path",
                       "absolute_path", default=""))


def _range_of(a: dict[str, Any]) -> Optional[dict[str, Any]]:
    offset = _first(a, "offset", "start_line", "startLine", "line_start")
    limit = _first(a, "limit", "count", "lines")
    end = _first(a, "end_line", "endLine", "line_end")
    vr = a.get("view_range")
    if isinstance(vr, list) and len(vr) == 2:
        offset, end = vr
    if offset is None and limit is None and end is None:
        return None
    out: dict[str, Any] = {}
    for k, x in (("offset", offset), ("limit", limit), ("end", end)):
        if isinstance(x, int) and not isinstance(x, bool):
            out[k] = x
        elif x is not None:
            out[k] = _str(x)
    return out


def _range_text(rng: Optional[dict[str, Any]]) -> str:
    if not rng:
        return ""
    o, lim, end = rng.get("offset"), rng.get("limit"), rng.get("end")
    if isinstance(o, int) and isinstance(lim, int):
        return f"lines {o}–{o + lim - 1}"
    if o is not None and end is not None:
        return f"lines {o}–{end}"
    bits = []
    if o is not None:
        bits.append(f"from line {o}")
    if lim is not None:
        bits.append(f"limit {lim}")
    if end is not None:
        bits.append(f"to line {end}")
    return ", ".join(bits)


def read_call(a: dict[str, Any]) -> dict[str, Any]:
    p = _path_of(a)
    rng = _range_of(a)
    v: dict[str, Any] = {"card": "read", "title": f"read {p}", "path": p, "summary": _range_text(rng), "sections": []}
    if rng:
        v["range"] = rng
    return v


def read_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = read_call(a)
    meta = _meta(r)
    if _is_error(r):
        v.update(status="error", summary=one_line(result_text(r)), sections=_error_sections(r))
        return v
    blocks = [b for b in (r.get("content") or []) if isinstance(b, dict)]
    texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
    images = [b for b in blocks if b.get("type") == "image"]
    others = [b for b in blocks if b.get("type") not in ("text", "image")]
    # the first text block carries the wrapped content
    m = _WRAPPED.match(texts[0]) if texts else None
    kind = "file"
    if m:
        v["path"] = m.group(1) or v["path"]
        kind = m.group(2) or "file"
        content = m.group(3)
        rest = texts[1:]
    else:
        content = "\n".join(texts)
        rest = []
    if isinstance(meta.get("path"), str) and meta["path"]:
        v["path"] = meta["path"]
    lines = meta.get("lines") if isinstance(meta.get("lines"), list) else None
    total = meta.get("totalLines") if isinstance(meta.get("totalLines"), int) else None
    nums = [x.get("number") for x in lines or [] if isinstance(x, dict) and isinstance(x.get("number"), int)]
    if nums:
        rng = {"start": nums[0], "end": nums[-1]}
        if total is not None:
            rng["total"] = total
        v["range"] = rng
        v["summary"] = f"lines {nums[0]}–{nums[-1]}" + (f" of {total}" if total is not None else "")
    elif total is not None:
        v["summary"] = _plural(total, "line")
    elif kind == "image":
        v["summary"] = one_line(content)
    elif not v["summary"]:
        v["summary"] = _plural(_n_lines(content), "line")
    sections = [section("content", content)]
    if images:
        sections.append(section("image", "\n".join(block_text(b) for b in images)))
    if rest or others:
        sections.append(section("more", "\n".join(rest + [block_text(b) for b in others])))
    v["status"] = "ok"
    v["sections"] = sections
    return v


# --------------------------------------------------------------------------- diff helpers

def unified_diff(path: str, old: Any, new: Any, context: int = 3) -> str:
    old_s, new_s = _str(old), _str(new)
    p = path or "file"
    absolute = p.startswith(("/", "~", "{", "\\")) or re.match(r"^[A-Za-z]:[\\/]", p) is not None
    a_name, b_name = (p, p) if absolute else (f"a/{p}", f"b/{p}")
    lines = list(difflib.unified_diff(old_s.splitlines(), new_s.splitlines(), fromfile=a_name,
                                      tofile=b_name, lineterm="", n=context))
    return "\n".join(lines)


def _diff_stats(diff: str) -> tuple[Any, ...]:
    add = sum(1 for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++"))
    rem = sum(1 for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---"))
    return add, rem


def _meta_diffs(r: dict[str, Any], default_path: str) -> list[Any]:
    out = []
    for d in _meta(r).get("diffs") or []:
        if isinstance(d, dict) and ("oldText" in d or "newText" in d):
            p = _str(d.get("path") or default_path)
            out.append((p, unified_diff(p, d.get("oldText") or "", d.get("newText") or "")))
    return out


def _diff_view(title: str, path: str, diff: str, extra: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    add, rem = _diff_stats(diff)
    v: dict[str, Any] = {"card": "diff", "title": title, "path": path, "summary": f"+{add} −{rem}",
         "sections": [section("diff", diff if diff else "(no change)", True, "diff")]}
    if extra:
        v.update(extra)
    return v


# --------------------------------------------------------------------------- write

WRITE_TOOLS = ("write", "write_file", "create_file", "writefile", "save_file")


def write_call(a: dict[str, Any]) -> dict[str, Any]:
    p = _path_of(a)
    c = _str(_first(a, "content", "contents", "file_text", "text", "data", default=""))
    v: dict[str, Any] = {"card": "write", "title": f"write {p}", "path": p,
         "summary": f"{_plural(_n_lines(c), 'line')}, {_plural(len(c.encode('utf-8', 'replace')), 'byte')}",
         "sections": [section("content", c)]}
    if a.get("justification"):
        v["sections"].append(section("justification", _str(a["justification"]), mono=False))
    if a.get("sandbox_permissions"):
        v["summary"] += f" [sandbox: {_str(a['sandbox_permissions'])}]"
    return v


def write_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = write_call(a)
    content_sections = [s for s in v["sections"] if s["label"] == "content"]
    if _is_error(r):
        v.update(status="error", summary=one_line(result_text(r)), sections=_error_sections(r) + content_sections)
        return v
    text = result_text(r)
    m = _WRAPPED.match(text)
    msg = m.group(3) if m else text
    if m and m.group(1):
        v["path"] = m.group(1)
    diffs = _meta_diffs(r, v["path"])
    if diffs:
        diff = "\n".join(d for _, d in diffs)
        out = _diff_view(f"write {v['path']}", v["path"], diff)
        out["summary"] = f"{one_line(msg)} · {out['summary']}" if msg.strip() else out["summary"]
        out["sections"].append(section("result", msg, mono=False))
        out["status"] = "ok"
        return out
    v["summary"] = one_line(msg) or v["summary"]
    v["sections"] = [section("result", msg, mono=False)] + content_sections
    v["status"] = "ok"
    return v


# --------------------------------------------------------------------------- edit / patch

EDIT_TOOLS = ("edit", "edit_file", "str_replace", "replace", "search_replace", "replace_in_file")
MULTI_EDIT_TOOLS = ("multi_edit", "multiedit")
EDITOR_TOOLS = ("str_replace_editor", "str_replace_based_edit_tool", "text_editor")
PATCH_TOOLS = ("apply_patch", "patch", "apply_diff")


def _old_new(a: dict[str, Any]) -> tuple[Any, ...]:
    old = _first(a, "old_string", "old_str", "oldText", "old_text", "search", "old", default="")
    new = _first(a, "new_string", "new_str", "newText", "new_text", "replace", "new", default="")
    return _str(old), _str(new)


def edit_call(a: dict[str, Any]) -> dict[str, Any]:
    p = _path_of(a)
    old, new = _old_new(a)
    v = _diff_view(f"edit {p}", p, unified_diff(p, old, new))
    if a.get("replace_all"):
        v["summary"] += " (replace all)"
    return v


def _edit_result_from(call_view: dict[str, Any], a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = dict(call_view)
    text = result_text(r)
    if _is_error(r):
        v.update(status="error", summary=one_line(text), sections=_error_sections(r) + list(call_view["sections"]))
        return v
    diffs = _meta_diffs(r, v.get("path", ""))
    if diffs:
        diff = "\n".join(d for _, d in diffs)
        add, rem = _diff_stats(diff)
        v["sections"] = [section("diff", diff or "(no change)", True, "diff")]
        v["summary"] = f"+{add} −{rem}"
        if len(diffs) > 1:
            v["summary"] += f" in {_plural(len(diffs), 'file')}"
    else:
        v["sections"] = list(call_view["sections"])
    v["sections"].append(section("result", text, mono=False))
    v["status"] = "ok"
    return v


def edit_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    return _edit_result_from(edit_call(a), a, r)


def multi_edit_call(a: dict[str, Any]) -> dict[str, Any]:
    p = _path_of(a)
    edits = [e for e in (a.get("edits") or []) if isinstance(e, dict)]
    diffs = []
    for e in edits:
        old, new = _old_new(e)
        diffs.append(unified_diff(_path_of(e) or p, old, new))
    v = _diff_view(f"edit {p}", p, "\n".join(d for d in diffs if d))
    v["summary"] += f" ({_plural(len(edits), 'edit')})"
    return v


def multi_edit_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    return _edit_result_from(multi_edit_call(a), a, r)


def editor_call(a: dict[str, Any]) -> dict[str, Any]:
    cmd = _str(a.get("command", ""))
    p = _path_of(a)
    if cmd == "view":
        return read_call(a)
    if cmd == "create":
        v = write_call({"file_path": p, "content": _first(a, "file_text", "content", default="")})
        v["title"] = f"create {p}"
        return v
    if cmd == "insert":
        line = a.get("insert_line")
        new = _str(_first(a, "new_str", "text", default=""))
        diff = "\n".join([f"--- a/{p}", f"+++ b/{p}", f"@@ insert after line {_str(line)} @@"]
                         + ["+" + ln for ln in new.splitlines()])
        return _diff_view(f"insert into {p}", p, diff)
    if cmd == "undo_edit":
        return {"card": "diff", "title": f"undo last edit of {p}", "path": p, "summary": "undo", "sections": []}
    v = edit_call(a)
    if cmd and cmd != "str_replace":
        v["title"] = f"{cmd} {p}"
    return v


def editor_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    cmd = _str(a.get("command", ""))
    if cmd == "view":
        v = read_call(a)
        if _is_error(r):
            v.update(status="error", summary=one_line(result_text(r)), sections=_error_sections(r))
        else:
            text = result_text(r)
            v.update(status="ok", sections=[section("content", text)])
            m = re.search(r"total of (\d+) lines", text)
            if m and not v["summary"]:
                v["summary"] = _plural(int(m.group(1)), "line")
        return v
    if cmd == "create":
        return write_result({"file_path": _path_of(a), "content": _first(a, "file_text", "content", default="")}, r) \
            | {"title": f"create {_path_of(a)}"}
    return _edit_result_from(editor_call(a), a, r)


_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\+\+\+ (?:b/)?(.+)$", re.M)


def _patch_text(a: dict[str, Any]) -> str:
    return _str(_first(a, "patch", "input", "diff", "patch_text", "patchText", "content", default=""))


def patch_paths(patch: str) -> list[Any]:
    out = []
    for m in _PATCH_FILE.finditer(patch or ""):
        p = (m.group(1) or m.group(2) or "").strip()
        if p and p != "/dev/null" and p not in out:
            out.append(p)
    return out


def patch_call(a: dict[str, Any]) -> dict[str, Any]:
    patch = _patch_text(a)
    paths = patch_paths(patch) or ([_path_of(a)] if _path_of(a) else [])
    p = paths[0] if paths else ""
    title = f"patch {p}" + (f" (+{len(paths) - 1} more)" if len(paths) > 1 else "")
    v = _diff_view(title, p, patch)
    if len(paths) > 1:
        v["summary"] += f" in {_plural(len(paths), 'file')}"
        v["sections"].append(section("files", "\n".join(paths)))
    return v


def patch_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    return _edit_result_from(patch_call(a), a, r)


# --------------------------------------------------------------------------- web

SEARCH_TOOLS = ("web_search", "websearch", "search", "search_web", "google_search", "brave_search",
                "tavily_search", "bing_search")
FETCH_TOOLS = ("web_fetch", "webfetch", "fetch", "fetch_url", "browse", "open_url", "read_url")

_URL = re.compile(r"https?://[^\s<>\"'`\])]+")


def _queries(a: dict[str, Any]) -> str:
    q = _first(a, "query", "queries", "q", "search_term", "search_query", "term", "prompt")
    if isinstance(q, list):
        return " | ".join(_str(x) for x in q)
    return _str(q)


def _item(title: Any, url: Any, snippet: Any) -> dict[str, Any]:
    return {"title": _str(title).strip(), "url": _str(url).strip(), "snippet": _str(snippet).strip()[:500]}


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
            out.append(_item(_first(it, "title", "name", default=""), _first(it, "url", "link", "href", default=""),
                             _first(it, "snippet", "description", "content", "text", "summary", default="")))
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
    if _is_error(r):
        v.update(status="error", summary=one_line(text), sections=_error_sections(r))
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
    v.update(items=items, status="ok", summary=_plural(len(items), "result") if items else "no results",
             sections=[section("content", text, mono=False)] + _meta_section(r))
    return v


_FETCHED = re.compile(r"\AFetched (\S+)(?: \((?:HTTP )?(\d{3})\))?\s*\n+", re.I)


def fetch_call(a: dict[str, Any]) -> dict[str, Any]:
    url = _str(_first(a, "url", "uri", "href", "link", default=""))
    v: dict[str, Any] = {"card": "web", "title": f"fetch {url}" if url else "fetch", "query": url, "summary": "", "items": [],
         "sections": []}
    if a.get("prompt"):
        v["sections"].append(section("prompt", _str(a["prompt"]), mono=False))
    return v


def fetch_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = fetch_call(a)
    text = result_text(r)
    meta = _meta(r)
    if _is_error(r):
        v.update(status="error", summary=one_line(text), sections=_error_sections(r))
        return v
    url = _str(meta.get("url") or v["query"])
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
    bits.append(_plural(len(body.encode("utf-8", "replace")), "byte"))
    page_title = one_line(re.sub(r"^#+\s*", "", body.strip().split("\n", 1)[0] if body.strip() else ""))
    v.update(query=url, status="ok" if code is None or (isinstance(code, int) and code < 400) else "error",
             summary=", ".join(bits), items=[_item(page_title or url, url, " ".join(body.split())[:300])],
             sections=[section("content", body, mono=False)] + _meta_section(r, skip=("url", "statusCode", "truncated")))
    return v


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
    rows = _first(a, "todos", "items", "plan", "tasks", "steps", default=[])
    out = []
    for t in rows if isinstance(rows, list) else []:
        if isinstance(t, dict):
            content = _str(_first(t, "content", "text", "title", "step", "task", "description", default=""))
            raw = _str(_first(t, "status", "state", default="pending"))
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
    if _is_error(r):
        v.update(status="error", summary=one_line(text), sections=_error_sections(r) + v["sections"])
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
    n = _first(a, "subagent_type", "agent", "agent_type", "agent_name", "agentPreset", "preset", "subagent_id",
               "agent_id", "name")
    if n is not None:
        return _str(n)
    if tool.startswith("subagent_"):
        return tool[len("subagent_"):]
    return tool


def _agent_views(tool: str) -> PresenterPair:
    def call(a: dict[str, Any]) -> dict[str, Any]:
        desc = _str(_first(a, "description", "title", "task", default=""))
        prompt = _str(_first(a, "prompt", "message", "instructions", "input", "query", default=""))
        agent = _agent_name(tool, a)
        title = f"{tool}: {one_line(desc)}" if desc else f"{tool}: {one_line(prompt)}"
        bits = [] if agent == tool else [f"agent {agent}"]
        if a.get("run_in_background"):
            bits.append("background")
        if a.get("model"):
            bits.append(f"model {_str(a['model'])}")
        return {"card": "subagent", "title": title, "agent": agent, "summary": ", ".join(bits),
                "sections": [section("prompt", prompt or "(no prompt)", mono=False)]}

    def result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
        v = call(a)
        text = result_text(r)
        if _is_error(r):
            v.update(status="error", summary=one_line(text), sections=_error_sections(r) + v["sections"])
            return v
        m = re.match(r"started background (?:subagent )?job (\S+)", text)
        v["summary"] = f"background job {m.group(1)}" if m else one_line(text)
        v["sections"].append(section("result", text, mono=False))
        v["status"] = "ok"
        return v
    return call, result


def _message_views(tool: str) -> PresenterPair:
    def call(a: dict[str, Any]) -> dict[str, Any]:
        target = _str(_first(a, "subagent_id", "agent_id", "to", "target", "recipient", "id", default="?"))
        msg = _str(_first(a, "message", "text", "content", "input", "prompt", default=""))
        return {"card": "subagent", "title": f"message to {target}", "agent": target, "summary": one_line(msg),
                "sections": [section("message", msg, mono=False)]}

    def result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
        v = call(a)
        text = result_text(r)
        if _is_error(r):
            v.update(status="error", summary=one_line(text), sections=_error_sections(r) + v["sections"])
            return v
        v.update(status="ok", summary=one_line(text), sections=v["sections"] + [section("result", text, mono=False)])
        return v
    return call, result


def report_call(a: dict[str, Any]) -> dict[str, Any]:
    out = _str(_first(a, "output", "report", "result", "message", "text", default=""))
    return {"card": "subagent", "title": "report to parent", "agent": "parent", "summary": one_line(out),
            "sections": [section("report", out, mono=False)]}


def report_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = report_call(a)
    text = result_text(r)
    if _is_error(r):
        v.update(status="error", summary=one_line(text), sections=_error_sections(r) + v["sections"])
        return v
    v.update(status="ok", sections=v["sections"] + [section("result", text, mono=False)])
    return v


def list_agents_call(a: dict[str, Any]) -> dict[str, Any]:
    return {"card": "subagent", "title": "list agents", "summary": "",
            "sections": [section("arguments", pretty_json(a), True, "json")] if a else []}


def list_agents_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = list_agents_call(a)
    text = result_text(r)
    if _is_error(r):
        v.update(status="error", summary=one_line(text), sections=_error_sections(r))
        return v
    n = len([ln for ln in text.splitlines() if ln.strip()])
    v.update(status="ok", summary=_plural(n, "agent"), sections=[section("agents", text)])
    return v


def workflow_call(a: dict[str, Any]) -> dict[str, Any]:
    m = a.get("meta")
    meta: dict[str, Any] = m if isinstance(m, dict) else {}
    name = _str(_first(meta, "name", default="") or _first(a, "name", default="workflow"))
    desc = _str(_first(meta, "description", default="") or a.get("description", ""))
    script = _str(_first(a, "script", "code", "source", default=""))
    return {"card": "subagent", "title": f"workflow {name}", "agent": name, "summary": desc,
            "sections": [section("script", script)]}


def workflow_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = workflow_call(a)
    text = result_text(r)
    if _is_error(r):
        v.update(status="error", summary=one_line(text), sections=_error_sections(r) + v["sections"])
        return v
    v.update(status="ok", summary=one_line(text), sections=v["sections"] + [section("result", text)])
    return v


# --------------------------------------------------------------------------- file search (glob/grep/ls)

def _find_views(tool: str) -> PresenterPair:
    def call(a: dict[str, Any]) -> dict[str, Any]:
        pat = _str(_first(a, "pattern", "query", "regex", "glob", "name", default=""))
        p = _str(_first(a, "path", "dir", "directory", "cwd", default=""))
        v: dict[str, Any] = {"card": "search", "title": f"{tool} {pat}" + (f" in {p}" if p else ""), "query": pat,
             "summary": "", "items": [], "sections": []}
        if p:
            v["path"] = p
        extra = {k: x for k, x in a.items() if k not in ("pattern", "query", "regex", "path", "dir", "directory")}
        if extra:
            v["sections"].append(section("options", pretty_json(extra), True, "json"))
        return v

    def result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
        v = call(a)
        text = result_text(r)
        if _is_error(r):
            v.update(status="error", summary=one_line(text), sections=_error_sections(r))
            return v
        meta = _meta(r)
        paths = meta.get("paths") if isinstance(meta.get("paths"), list) else None
        if paths is None:
            body = text.split("\n\n(", 1)[0]
            paths = [ln for ln in body.splitlines() if ln.strip()]
        v["items"] = [{"title": _str(p), "url": "", "snippet": ""} for p in paths]
        total = meta.get("total") if isinstance(meta.get("total"), int) else None
        v["summary"] = _plural(len(paths), "match") + (f" of {total}" if total is not None and total != len(paths)
                                                        else "")
        v["status"] = "ok"
        v["sections"] = [section("output", text)]
        return v
    return call, result


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
        if _is_error(r):
            v.update(status="error", summary=one_line(text), sections=_error_sections(r) + v["sections"])
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
                 sections=v["sections"] + [section("result", text, True, lang)] + _meta_section(r))
        return v
    return call, result


def _code_body(a: dict[str, Any]) -> list[Any]:
    out = [section("code", _str(_first(a, "code", "source", "script", default="")))]
    rest = {k: x for k, x in a.items() if k not in ("code", "source", "script", "description")}
    if rest:
        out.append(section("arguments", pretty_json(rest), True, "json"))
    return out


def _questions_body(a: dict[str, Any]) -> list[Any]:
    lines = []
    for q in a.get("questions") or []:
        if not isinstance(q, dict):
            lines.append(_str(q))
            continue
        head = _str(q.get("header") or "")
        lines.append((f"[{head}] " if head else "") + _str(q.get("question", "")) +
                     (" (multiple choice)" if q.get("multi_select") or q.get("multiSelect") else ""))
        for o in q.get("options") or []:
            if isinstance(o, dict):
                lines.append(f"  - {_str(o.get('label', ''))}" +
                             (f": {_str(o.get('description'))}" if o.get("description") else ""))
            else:
                lines.append(f"  - {_str(o)}")
    return [section("questions", "\n".join(lines) or pretty_json(a), mono=False)]


def _plan_body(a: dict[str, Any]) -> list[Any]:
    return [section("plan", _str(_first(a, "plan", "text", default="")), mono=False)]


def _cordis_title(name: str) -> Callable[[dict[str, Any]], str]:
    def title(a: dict[str, Any]) -> str:
        label = _first(a, "name", "pluginId", "id", "what", "method")
        if name == "cordis_define" and isinstance(a.get("plugin"), dict):
            label = label or a["plugin"].get("id")
        if name == "cordis_run" and a.get("packageId"):
            label = f"{_str(a.get('pluginId', ''))}/{_str(a['packageId'])}"
        verb = name.split("_", 1)[1].replace("_", " ") if "_" in name else name
        return f"cordis {verb}" + (f" {one_line(_str(label))}" if label else "")
    return title


_LSP_TITLE = lambda a: (f"lsp {_str(a.get('operation', ''))} {_path_of(a)}"  # noqa: E731
                        + (f":{_str(a['line'])}" if a.get("line") is not None else "")
                        + (f":{_str(a['character'])}" if a.get("character") is not None else ""))


# --------------------------------------------------------------------------- registration

register(SHELL_TOOLS, call=shell_call, result=shell_result)
for _n in ("job_output", "job_kill", "job_status", "job_list"):
    _c, _r = _aux_terminal(_job_title, _n)
    register(_n, call=_c, result=_r)
for _n in ("terminal_open", "terminal_send", "terminal_read", "terminal_list", "terminal_close", "terminal_signal"):
    _c, _r = _aux_terminal(_pty_title, _n, ("text", "input", "data") if _n == "terminal_send" else None)
    register(_n, call=_c, result=_r)

register(READ_TOOLS, call=read_call, result=read_result)
register(WRITE_TOOLS, call=write_call, result=write_result)
register(EDIT_TOOLS, call=edit_call, result=edit_result)
register(MULTI_EDIT_TOOLS, call=multi_edit_call, result=multi_edit_result)
register(EDITOR_TOOLS, call=editor_call, result=editor_result)
register(PATCH_TOOLS, call=patch_call, result=patch_result)

register(SEARCH_TOOLS, call=search_call, result=search_result)
register(FETCH_TOOLS, call=fetch_call, result=fetch_result)
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

for _n in ("glob", "grep", "find", "ls", "list_directory", "list_dir", "search_files", "find_files"):
    _c, _r = _find_views(_n)
    register(_n, call=_c, result=_r)

_SIMPLE = {
    "run_code": (lambda a: "run code" + (f": {one_line(_str(a['description']))}" if a.get("description") else ""),
                 _code_body),
    "code": (lambda a: "run code" + (f": {one_line(_str(a['description']))}" if a.get("description") else ""),
             _code_body),
    "execute_code": (lambda a: "run code", _code_body),
    "ask_user_question": (lambda a: "ask the user: " + one_line(_str(next(
        (q.get("question") for q in a.get("questions") or [] if isinstance(q, dict)), "") or "question")),
        _questions_body),
    "exit_plan_mode": (lambda a: "exit plan mode: " + one_line(_str(a.get("plan", ""))), _plan_body),
    "skill": (lambda a: f"load skill {_str(a.get('name', ''))}", None),
    "lsp": (_LSP_TITLE, None),
    "create_goal": (lambda a: "create goal: " + one_line(_str(a.get("objective", ""))), None),
    "get_goal": (lambda a: "get goal", None),
    "update_goal": (lambda a: f"update goal {_str(a.get('goal_id', ''))}: {_str(a.get('action', ''))}", None),
    "session_event_read": (lambda a: f"read session event {_str(a.get('seq', ''))}", None),
}
for _n, (_t, _b) in _SIMPLE.items():
    _c, _r = _simple(_t, _b)
    register(_n, call=_c, result=_r)
for _n in ("cordis_define", "cordis_inspect", "cordis_inspect_query", "cordis_mount", "cordis_run",
           "cordis_undefine", "cordis_unmount", "cordis_stop"):
    _c, _r = _simple(_cordis_title(_n))
    register(_n, call=_c, result=_r)

del _n, _c, _r, _t, _b

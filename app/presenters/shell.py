"""Presenters of shell tools: commands, their output and exit status, background jobs and terminals."""
from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import Any, Optional

from ..textutil import pretty_json
from .registry import one_line, register, result_text, section
from .common import PresenterPair, as_str, error_sections, first_of, is_error, meta_of

# --------------------------------------------------------------------------- terminal

SHELL_TOOLS = ("bash", "pwsh", "powershell", "shell", "sh", "zsh", "cmd", "terminal", "run_shell_command",
               "shell_command", "exec_command", "execute_command", "run_command", "run_terminal_cmd",
               "local_shell", "container.exec")

_TRAILER = re.compile(r"^\[(?!stderr\]|stdout\])[a-z][\w .-]*(?::[^\n]*)?\]$", re.I)
_EXIT_LINE = re.compile(r"^\[(?:exit code|exit status|exit):\s*(-?\d+)\]$|^\[shell exited: code (-?\d+)\]$", re.I | re.M)


_FAILED_NOTE = re.compile(r"^\[status: ((?:killed|failed|error|timed.out|timeout|aborted|crashed)\b[^\]]*)\]$", re.I)


def _command_of(a: dict[str, Any]) -> str:
    c = first_of(a, "command", "cmd", "script", "commands", "input", "text")
    if isinstance(c, list):
        if all(isinstance(x, str) for x in c):
            # ["bash", "-lc", "…"] -> the script; other argv lists -> a shell-quoted line
            if len(c) == 3 and c[1] in ("-c", "-lc", "-Command", "/c"):
                return str(c[2])
            return shlex.join(c)
        return pretty_json(c)
    return as_str(c)


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
        bits.append(as_str(a["description"]))
    if a.get("run_in_background"):
        bits.append("(background)")
    if a.get("sandbox_permissions"):
        bits.append(f"[sandbox: {as_str(a['sandbox_permissions'])}]")
    if a.get("timeout") is not None:
        bits.append(f"[timeout {as_str(a['timeout'])}]")
    return " ".join(bits)


def shell_call(a: dict[str, Any]) -> dict[str, Any]:
    cmd = _command_of(a)
    v: dict[str, Any] = {"card": "terminal", "title": "$ " + one_line(cmd), "summary": _shell_flags(a), "command": cmd,
         "sections": []}
    if a.get("justification"):
        v["sections"].append(section("justification", as_str(a["justification"]), mono=False))
    cwd = first_of(a, "cwd", "workdir", "working_directory")
    if cwd:
        v["path"] = as_str(cwd)
    return v


def _terminal_output(r: dict[str, Any], title: str, command: Optional[str] = None, base: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    text = result_text(r)
    meta = meta_of(r)
    p = parse_shell_output(text)
    code = _exit_from_meta(meta)
    if code is None:
        code = p["exitCode"]
    stdout = p["stdout"] if not isinstance(meta.get("stdout"), str) else meta["stdout"]
    stderr = p["stderr"] if not isinstance(meta.get("stderr"), str) else meta["stderr"]
    err = is_error(r)
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
        sections.extend(error_sections(r)[1:])
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
    job = as_str(first_of(a, "job_id", "jobId", "id", default="?"))
    return {"job_output": f"job {job} output" + (" (wait)" if a.get("wait") else ""),
            "job_kill": f"kill job {job}"}.get(name, f"{name} {job}")


def _pty_title(name: str, a: dict[str, Any]) -> str:
    sid = as_str(first_of(a, "sessionId", "session_id", "id", default="?"))
    if name == "terminal_open":
        t = as_str(first_of(a, "name", default=""))
        kind = as_str(first_of(a, "type", default=""))
        return "open terminal" + (f" {t}" if t else "") + (f" [{kind}]" if kind else "")
    if name == "terminal_send":
        return f"{sid} $ " + one_line(as_str(first_of(a, "text", "input", "data", default="")))
    if name == "terminal_read":
        rng = ""
        if a.get("offset") is not None or a.get("count") is not None:
            rng = f" (offset {as_str(a.get('offset', 0))}, count {as_str(a.get('count', '-'))})"
        return f"read terminal {sid}{rng}"
    if name == "terminal_signal":
        return f"signal {as_str(a.get('signal', '?'))} → {sid}"
    if name == "terminal_close":
        return f"close terminal {sid}"
    if name == "terminal_list":
        return "list terminals"
    return f"{name} {sid}"


def _aux_terminal(titler: Callable[..., Any], name: str, command_key: Optional[tuple[str, ...]] = None) -> PresenterPair:
    def call(a: dict[str, Any]) -> dict[str, Any]:
        v: dict[str, Any] = {"card": "terminal", "title": titler(name, a), "summary": as_str(a.get("reason", "")), "sections": []}
        if command_key:
            c = first_of(a, *command_key)
            if c is not None:
                v["command"] = as_str(c)
        return v

    def result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
        c = first_of(a, *command_key) if command_key else None
        return _terminal_output(r, titler(name, a), None if c is None else as_str(c))
    return call, result


# --------------------------------------------------------------------------- registration

register(SHELL_TOOLS, call=shell_call, result=shell_result)
for _n in ("job_output", "job_kill", "job_status", "job_list"):
    _c, _r = _aux_terminal(_job_title, _n)
    register(_n, call=_c, result=_r)
for _n in ("terminal_open", "terminal_send", "terminal_read", "terminal_list", "terminal_close", "terminal_signal"):
    _c, _r = _aux_terminal(_pty_title, _n, ("text", "input", "data") if _n == "terminal_send" else None)
    register(_n, call=_c, result=_r)
del _n, _c, _r

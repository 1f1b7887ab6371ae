"""Presenters of file tools: read, write, edit, multi-edit, editor and patch (with diffs), and the file
searches (glob, grep, ls)."""
from __future__ import annotations

import difflib
import re
from typing import Any, Optional

from ..textutil import pretty_json
from .registry import block_text, one_line, register, result_text, section
from .common import PresenterPair, as_str, count_lines, error_sections, first_of, is_error, meta_of, plural

# --------------------------------------------------------------------------- read

READ_TOOLS = ("read", "read_file", "view_file", "open_file", "cat", "read_image", "readfile", "notebook_read")

_WRAPPED = re.compile(r"\A<path>(.*?)</path>\n<type>(.*?)</type>\n<content>\n?(.*?)\n?</content>\s*\Z", re.S)


def path_of(a: dict[str, Any]) -> str:
    return as_str(first_of(a, "file_path", "path", "filePath", "filename", "file", "target_file", "notebook_path",
                       "absolute_path", default=""))


def _range_of(a: dict[str, Any]) -> Optional[dict[str, Any]]:
    offset = first_of(a, "offset", "start_line", "startLine", "line_start")
    limit = first_of(a, "limit", "count", "lines")
    end = first_of(a, "end_line", "endLine", "line_end")
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
            out[k] = as_str(x)
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
    p = path_of(a)
    rng = _range_of(a)
    v: dict[str, Any] = {"card": "read", "title": f"read {p}", "path": p, "summary": _range_text(rng), "sections": []}
    if rng:
        v["range"] = rng
    return v


def read_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = read_call(a)
    meta = meta_of(r)
    if is_error(r):
        v.update(status="error", summary=one_line(result_text(r)), sections=error_sections(r))
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
        v["summary"] = plural(total, "line")
    elif kind == "image":
        v["summary"] = one_line(content)
    elif not v["summary"]:
        v["summary"] = plural(count_lines(content), "line")
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
    old_s, new_s = as_str(old), as_str(new)
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
    for d in meta_of(r).get("diffs") or []:
        if isinstance(d, dict) and ("oldText" in d or "newText" in d):
            p = as_str(d.get("path") or default_path)
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
    p = path_of(a)
    c = as_str(first_of(a, "content", "contents", "file_text", "text", "data", default=""))
    v: dict[str, Any] = {"card": "write", "title": f"write {p}", "path": p,
         "summary": f"{plural(count_lines(c), 'line')}, {plural(len(c.encode('utf-8', 'replace')), 'byte')}",
         "sections": [section("content", c)]}
    if a.get("justification"):
        v["sections"].append(section("justification", as_str(a["justification"]), mono=False))
    if a.get("sandbox_permissions"):
        v["summary"] += f" [sandbox: {as_str(a['sandbox_permissions'])}]"
    return v


def write_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = write_call(a)
    content_sections = [s for s in v["sections"] if s["label"] == "content"]
    if is_error(r):
        v.update(status="error", summary=one_line(result_text(r)), sections=error_sections(r) + content_sections)
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
    old = first_of(a, "old_string", "old_str", "oldText", "old_text", "search", "old", default="")
    new = first_of(a, "new_string", "new_str", "newText", "new_text", "replace", "new", default="")
    return as_str(old), as_str(new)


def edit_call(a: dict[str, Any]) -> dict[str, Any]:
    p = path_of(a)
    old, new = _old_new(a)
    v = _diff_view(f"edit {p}", p, unified_diff(p, old, new))
    if a.get("replace_all"):
        v["summary"] += " (replace all)"
    return v


def _edit_result_from(call_view: dict[str, Any], a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    v = dict(call_view)
    text = result_text(r)
    if is_error(r):
        v.update(status="error", summary=one_line(text), sections=error_sections(r) + list(call_view["sections"]))
        return v
    diffs = _meta_diffs(r, v.get("path", ""))
    if diffs:
        diff = "\n".join(d for _, d in diffs)
        add, rem = _diff_stats(diff)
        v["sections"] = [section("diff", diff or "(no change)", True, "diff")]
        v["summary"] = f"+{add} −{rem}"
        if len(diffs) > 1:
            v["summary"] += f" in {plural(len(diffs), 'file')}"
    else:
        v["sections"] = list(call_view["sections"])
    v["sections"].append(section("result", text, mono=False))
    v["status"] = "ok"
    return v


def edit_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    return _edit_result_from(edit_call(a), a, r)


def multi_edit_call(a: dict[str, Any]) -> dict[str, Any]:
    p = path_of(a)
    edits = [e for e in (a.get("edits") or []) if isinstance(e, dict)]
    diffs = []
    for e in edits:
        old, new = _old_new(e)
        diffs.append(unified_diff(path_of(e) or p, old, new))
    v = _diff_view(f"edit {p}", p, "\n".join(d for d in diffs if d))
    v["summary"] += f" ({plural(len(edits), 'edit')})"
    return v


def multi_edit_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    return _edit_result_from(multi_edit_call(a), a, r)


def editor_call(a: dict[str, Any]) -> dict[str, Any]:
    cmd = as_str(a.get("command", ""))
    p = path_of(a)
    if cmd == "view":
        return read_call(a)
    if cmd == "create":
        v = write_call({"file_path": p, "content": first_of(a, "file_text", "content", default="")})
        v["title"] = f"create {p}"
        return v
    if cmd == "insert":
        line = a.get("insert_line")
        new = as_str(first_of(a, "new_str", "text", default=""))
        diff = "\n".join([f"--- a/{p}", f"+++ b/{p}", f"@@ insert after line {as_str(line)} @@"]
                         + ["+" + ln for ln in new.splitlines()])
        return _diff_view(f"insert into {p}", p, diff)
    if cmd == "undo_edit":
        return {"card": "diff", "title": f"undo last edit of {p}", "path": p, "summary": "undo", "sections": []}
    v = edit_call(a)
    if cmd and cmd != "str_replace":
        v["title"] = f"{cmd} {p}"
    return v


def editor_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    cmd = as_str(a.get("command", ""))
    if cmd == "view":
        v = read_call(a)
        if is_error(r):
            v.update(status="error", summary=one_line(result_text(r)), sections=error_sections(r))
        else:
            text = result_text(r)
            v.update(status="ok", sections=[section("content", text)])
            m = re.search(r"total of (\d+) lines", text)
            if m and not v["summary"]:
                v["summary"] = plural(int(m.group(1)), "line")
        return v
    if cmd == "create":
        return write_result({"file_path": path_of(a), "content": first_of(a, "file_text", "content", default="")}, r) \
            | {"title": f"create {path_of(a)}"}
    return _edit_result_from(editor_call(a), a, r)


_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\+\+\+ (?:b/)?(.+)$", re.M)


def _patch_text(a: dict[str, Any]) -> str:
    return as_str(first_of(a, "patch", "input", "diff", "patch_text", "patchText", "content", default=""))


def patch_paths(patch: str) -> list[Any]:
    out = []
    for m in _PATCH_FILE.finditer(patch or ""):
        p = (m.group(1) or m.group(2) or "").strip()
        if p and p != "/dev/null" and p not in out:
            out.append(p)
    return out


def patch_call(a: dict[str, Any]) -> dict[str, Any]:
    patch = _patch_text(a)
    paths = patch_paths(patch) or ([path_of(a)] if path_of(a) else [])
    p = paths[0] if paths else ""
    title = f"patch {p}" + (f" (+{len(paths) - 1} more)" if len(paths) > 1 else "")
    v = _diff_view(title, p, patch)
    if len(paths) > 1:
        v["summary"] += f" in {plural(len(paths), 'file')}"
        v["sections"].append(section("files", "\n".join(paths)))
    return v


def patch_result(a: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    return _edit_result_from(patch_call(a), a, r)



# --------------------------------------------------------------------------- file search (glob/grep/ls)

def _find_views(tool: str) -> PresenterPair:
    def call(a: dict[str, Any]) -> dict[str, Any]:
        pat = as_str(first_of(a, "pattern", "query", "regex", "glob", "name", default=""))
        p = as_str(first_of(a, "path", "dir", "directory", "cwd", default=""))
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
        if is_error(r):
            v.update(status="error", summary=one_line(text), sections=error_sections(r))
            return v
        meta = meta_of(r)
        paths = meta.get("paths") if isinstance(meta.get("paths"), list) else None
        if paths is None:
            body = text.split("\n\n(", 1)[0]
            paths = [ln for ln in body.splitlines() if ln.strip()]
        v["items"] = [{"title": as_str(p), "url": "", "snippet": ""} for p in paths]
        total = meta.get("total") if isinstance(meta.get("total"), int) else None
        v["summary"] = plural(len(paths), "match") + (f" of {total}" if total is not None and total != len(paths)
                                                        else "")
        v["status"] = "ok"
        v["sections"] = [section("output", text)]
        return v
    return call, result


# --------------------------------------------------------------------------- registration

register(READ_TOOLS, call=read_call, result=read_result)
register(WRITE_TOOLS, call=write_call, result=write_result)
register(EDIT_TOOLS, call=edit_call, result=edit_result)
register(MULTI_EDIT_TOOLS, call=multi_edit_call, result=multi_edit_result)
register(EDITOR_TOOLS, call=editor_call, result=editor_result)
register(PATCH_TOOLS, call=patch_call, result=patch_result)

for _n in ("glob", "grep", "find", "ls", "list_directory", "list_dir", "search_files", "find_files"):
    _c, _r = _find_views(_n)
    register(_n, call=_c, result=_r)
del _n, _c, _r

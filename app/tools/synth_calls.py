"""Tool calls of the session generator: what each tool is called with and what it answers
(:class:`SynthCalls`, between :class:`app.tools.synth_base.SynthBase` and :class:`app.tools.synth.SessionSynth`)."""
from __future__ import annotations

import bisect
import json
from typing import Any


from .synth_base import SynthBase
from .synth_text import ALNUM, DIRS, MODS, NAMES, WORDS, new_uuid


class SynthCalls(SynthBase):
    """Planned tool calls and their results."""

    _tool_cum: list[int]
    _todos: list[dict]

    # ------------------------------------------------------------------ tool calls
    def _call_id(self, i: int) -> str:
        rng = self._rng
        return f"call_{i:02d}_" + "".join(rng.choices(ALNUM, k=20)) + f"{rng.randrange(10000):04d}"

    def _pick_tool(self) -> str:
        return self._tool_names[bisect.bisect_right(self._tool_cum, self._rng.random() * self._tool_cum[-1])]

    def _plan_call(self, i: int) -> dict:
        """A tool call: name, arguments (JSON text) and what its result will be."""
        rng = self._rng
        name = self._pick_tool()
        cid = self._call_id(i)
        err = rng.random() < self.mix.p_tool_error
        plan = {"bash": self._call_bash, "read": self._call_read, "write": self._call_write,
                "edit": self._call_edit, "web_search": self._call_web_search, "todo_write": self._call_todo_write,
                "subagent": self._call_subagent}.get(name, self._call_other)
        args, res = plan(err)
        if err and "error" not in res:
            res["error"] = {"name": "ToolError", "code": "FAILED"}
        return {"id": cid, "name": name, "arguments": json.dumps(args, ensure_ascii=False), "result": res}

    def _call_bash(self, err: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        rng = self._rng
        p = self._p
        args: dict[str, Any]
        res: dict[str, Any]
        cmd = rng.choice([
            "pytest -q tests/", "git status --short", "git diff --stat", f"ls -la {rng.choice(DIRS)}",
            f"rg -n '{rng.choice(NAMES)}' {rng.choice(DIRS)}", "npm test", "make build",
            f"python -m {rng.choice(MODS)} --help", f"wc -l {self._path()}", "cargo test -q",
            f"grep -rn \"{rng.choice(WORDS)}\" src | head -50", "python -c \"import sys; print(sys.version)\""])
        args = {"command": cmd, "description": f"{rng.choice(['Run', 'Check', 'List', 'Search'])} "
                                               f"{self._words(rng.randint(2, 6))}"}
        size = self._size(90)
        nl = max(1, int(size / p.avg_out))
        s = rng.randrange(len(p.out))
        text = "\n".join(p.out2[s:s + min(nl, len(p.out))]) + "\n"
        if len(text) > 50_000:
            omitted = len(text) - 30_000
            text = (text[-30_000:] + f"\n\n(Omitted {omitted} bytes. Full formatted result stored at: "
                    f"/tmp/dsh-{rng.getrandbits(40):010x}/{rng.getrandbits(48):012x}-bash.txt. Use read with "
                    "offset/limit, or grep this path to search within it.)")
        if rng.random() < self.mix.p_exit_nonzero:
            text += f"\n[exit code: {rng.choice([1, 1, 1, 2, 127, 130])}]"
        res = {"text": text}
        if err:
            res = {"text": "Error: command timed out after 120000 ms", "error": {"name": "BashError",
                                                                                 "code": "TIMEOUT"}}
        return args, res

    def _call_read(self, err: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        rng = self._rng
        p = self._p
        cwd = self.cwd or "/workspace"
        args: dict[str, Any]
        res: dict[str, Any]
        path = self._path()
        if err:
            args = {"file_path": path}
            res = {"text": f"Error: cannot read \"{cwd}/{path}\": not found",
                   "error": {"name": "FsError", "code": "FS_NOT_FOUND"}}
        else:
            size = self._size(700)
            s, lines = self._code(int(size * p.avg_code / (p.avg_code + 7)) - 200)
            offset = 1 if rng.random() < 0.8 else rng.randint(2, 400)
            total = offset - 1 + len(lines) + (0 if rng.random() < 0.7 else rng.randint(1, 3000))
            args = {"file_path": path} if offset == 1 else {"file_path": path, "offset": offset,
                                                            "limit": len(lines)}
            body = "\n".join([f"{offset + k}: {ln}" for k, ln in enumerate(lines)])
            last = offset + len(lines) - 1
            tail = (f"(End of file - total {total} lines)" if last >= total else
                    f"(Showing lines {offset}-{last} of {total}. Use offset={last + 1} to continue.)")
            res = {"text": f"<path>{cwd}/{path}</path>\n<type>file</type>\n<content>\n{body}\n\n{tail}\n</content>",
                   "meta": {"path": f"{cwd}/{path}", "offset": offset,
                            "lines": [{"number": offset + k, "text": ln} for k, ln in enumerate(lines)],
                            "totalLines": total}}
        return args, res

    def _call_write(self, err: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        rng = self._rng
        cwd = self.cwd or "/workspace"
        args: dict[str, Any]
        res: dict[str, Any]
        path = self._path()
        s, lines = self._code(self._size(500))
        args = {"file_path": path, "content": "\n".join(lines) + "\n"}
        res = {"text": f"<path>{cwd}/{path}</path>\n<type>file</type>\n<content>\n"
                       f"{rng.choice(['Created file', 'Overwrote file'])}\n</content>", "meta": {"diffs": []}}
        if err:
            res = {"text": f"Error: write outside the workspace is denied: {path}",
                   "error": {"name": "FsError", "code": "FS_DENIED"}}
        return args, res

    def _call_edit(self, err: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        rng = self._rng
        cwd = self.cwd or "/workspace"
        args: dict[str, Any]
        res: dict[str, Any]
        path = self._path()
        s, lines = self._code(rng.randint(40, 400))
        old = "\n".join(lines)
        new_lines = list(lines)
        k = rng.randrange(len(new_lines))
        new_lines[k] = new_lines[k] + f"  # {self._words(3)}"
        if rng.random() < 0.4:
            new_lines.insert(k, f"    {rng.choice(WORDS)} = {rng.choice(NAMES).lower()}()")
        new = "\n".join(new_lines)
        args = {"file_path": path, "old_string": old, "new_string": new}
        ctx_b = "\n".join(self._p.code2[s + len(lines):s + len(lines) + 3])
        res = {"text": f"The file {cwd}/{path} has been updated successfully.",
               "meta": {"diffs": [{"path": path, "oldText": old + "\n" + ctx_b, "newText": new + "\n" + ctx_b}]}}
        if err:
            res = {"text": f"Error: edit requires reading \"{cwd}/{path}\" first — read the file, then retry",
                   "error": {"name": "FsError", "code": "FS_NOT_OBSERVED"}}
        return args, res

    def _call_web_search(self, err: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        rng = self._rng
        args: dict[str, Any]
        res: dict[str, Any]
        q = self._words(rng.randint(2, 7))
        args = {"query": q}
        results = []
        for _j in range(rng.randint(3, 10)):
            w = rng.choice(WORDS)
            results.append({"title": self._words(rng.randint(3, 9)).title(),
                             "url": f"https://{w}.example.org/{rng.choice(WORDS)}/{rng.getrandbits(24):06x}",
                             "snippet": self._words(self._size(40, 1.5) // 6 + 8) + "."})
        text = f"Search results for \"{q}\":\n\n" + "\n\n".join(
            f"{j + 1}. {r['title']}\n   {r['url']}\n   {r['snippet']}" for j, r in enumerate(results))
        res = {"text": text, "meta": {"query": q, "results": results}}
        if err:
            res = {"text": "Error: search provider unavailable (HTTP 503)",
                   "error": {"name": "WebSearchError", "code": "UPSTREAM"}}
        return args, res

    def _call_todo_write(self, err: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        args: dict[str, Any]
        res: dict[str, Any]
        todos = self._next_todos()
        args = {"todos": todos}
        cnt = {s: sum(1 for t in todos if t["status"] == s) for s in ("pending", "in_progress", "completed")}
        res = {"text": f"Updated todo list: {cnt['pending']} pending, {cnt['in_progress']} in progress, "
                       f"{cnt['completed']} completed.", "todos": todos}
        return args, res

    def _call_subagent(self, err: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        rng = self._rng
        args: dict[str, Any]
        res: dict[str, Any]
        task = self._words(rng.randint(3, 8))
        args = {"description": task.capitalize(), "prompt": self._prompt_text(), "run_in_background": False}
        n = self._size(300) // 6 + 2
        text = " ".join(rng.choices(WORDS, k=n)).capitalize() + "."
        res = {"text": text}
        if err:
            res = {"text": "Error: subagent failed: provider error (HTTP 500)",
                   "error": {"name": "SubagentError", "code": "FAILED"}}
        return args, res

    def _call_other(self, err: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        args: dict[str, Any]
        res: dict[str, Any]
        args = {"input": self._words(4)}
        res = {"text": self._words(self._size(50) // 6 + 1)}
        return args, res

    def _next_todos(self) -> list:
        rng = self._rng
        todos = [dict(t) for t in self._todos]
        for t in todos:
            if t["status"] == "in_progress" and rng.random() < 0.6:
                t["status"] = "completed"
        if not todos or all(t["status"] == "completed" for t in todos) or rng.random() < 0.3:
            todos = [t for t in todos if t["status"] != "completed" or rng.random() < 0.5]
            for _ in range(rng.randint(1, 4)):
                todos.append({"content": f"{rng.choice(['Fix', 'Add', 'Test', 'Refactor', 'Document'])} "
                                         f"{self._words(rng.randint(2, 5))}", "status": "pending"})
        if not any(t["status"] == "in_progress" for t in todos):
            for t in todos:
                if t["status"] == "pending":
                    t["status"] = "in_progress"
                    break
        self._todos = todos[:12]
        return self._todos


    def _tool_results(self, items, turn, step, calls) -> None:
        rng = self._rng
        call_seqs = []
        for c in calls:
            call_seqs.append(self._seq)
            items.append(self._ev("tool/call", {"turn": turn, "step": step, "callId": c["id"], "name": c["name"],
                                                "arguments": c["arguments"]}))
            if len(calls) > 1:
                self._t += rng.randint(0, 1)
        for c, cseq in zip(calls, call_seqs):
            res = c["result"]
            if c["name"] == "bash":
                self._t += int(rng.lognormvariate(5.5, 1.6)) + 5
            elif c["name"] == "subagent":
                self._t += rng.randint(5_000, 300_000)
            elif c["name"] == "web_search":
                self._t += rng.randint(400, 4000)
            else:
                self._t += rng.randint(3, 40)
            if "todos" in res:
                items.append(self._ev("todo/write", {"todos": res["todos"]}))
                self._t += 1
            is_err = "error" in res
            data = {"turn": turn, "step": step, "message": {
                "source": {"kind": "tool", "callId": c["id"]},
                "content": [{"type": "tool-result", "toolCallId": c["id"],
                             "content": [{"type": "text", "text": res["text"]}], "isError": is_err}],
                "role": "user", "id": new_uuid(rng)}}
            if is_err:
                data["error"] = res["error"]
            elif "meta" in res:
                data["meta"] = res["meta"]
            items.append(self._surface("tool/result", data, [cseq]))
            self._add_ctx(len(res["text"]) // 4 + 10)



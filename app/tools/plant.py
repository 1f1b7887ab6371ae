"""Generated logs with words planted at known places (search tests and benchmarks).

:class:`PlantingSynth` is a :class:`~app.tools.synth.SessionSynth` whose turns, from given turn
numbers on, carry planted words: in line 700 of a 900-line tool output, in a non-ASCII word of
the user prompt, in a string with a quote inside a tool argument, in reasoning, in an
assistant text.  ``planted`` records where each landed: word -> (seq, turn, kind).  The log
stays a normal synth log (same writer, packed rows), so it is written with
:func:`~app.tools.synth.write_jsonl` or :func:`~app.tools.synth.batches` at full speed.
"""
from __future__ import annotations

import json
import os
import random
from typing import Any, Optional

from .synth import SessionSynth

# word -> where it is planted; the defaults used by tests and bench
PLANTS = {
    "zebraquokka": "tool-output-line-700",     # line 700 of a 900-line tool output
    "Grüßeñandú": "user-nonascii",             # a non-ASCII word in the prompt
    'say "hello-quoted" now': "tool-argument",  # a string with quotes inside a tool argument
    "pangolinreason": "reasoning",
    "axolotltext": "assistant",
}


class PlantingSynth(SessionSynth):
    """SessionSynth planting each of ``plants`` (word -> place) once, at the first suitable
    event of turn ``at_turn`` or later.  ``planted``: word -> (seq, turn, kind)."""

    def __init__(self, *a, plants: Optional[dict] = None, at_turn: int = 2, **kw):
        super().__init__(*a, **kw)
        self.plants = dict(PLANTS if plants is None else plants)
        self.at_turn = at_turn
        self.planted: dict = {}

    def turn_items(self) -> list:
        items = super().turn_items()
        turn = self.turn
        if turn < self.at_turn:
            return items
        for word, place in self.plants.items():
            if word in self.planted:
                continue
            for it in items:
                if not isinstance(it, dict):
                    continue
                seq = self._plant(it, word, place)
                if seq is not None:
                    self.planted[word] = (seq, turn, _KIND[place])
                    break
        return items

    @staticmethod
    def _plant(ev: dict, word: str, place: str) -> Optional[int]:
        typ, d = ev["type"], ev["data"]
        if place == "tool-output-line-700" and typ == "tool/result" and "error" not in d:
            msg = d["message"]
            lines = [f"{i + 1:04d} output line of a long listing" for i in range(900)]
            lines[699] = f"0700 here the {word} sits in line 700"
            out = [{"type": "text", "text": "\n".join(lines)}]
            if msg.get("role") == "tool":        # v4: the tool message's own content is the output
                if msg.get("isError"):
                    return None
                msg["content"] = out
            else:                                # v0: a tool-result block holds it
                msg["content"][0]["content"] = out
            return ev["seq"]
        if place == "user-nonascii" and typ == "user/message" and (d.get("source") or {}).get("kind") == "user":
            d["content"][0]["text"] += f" Bitte {word} prüfen."
            return ev["seq"]
        if place == "tool-argument" and typ == "tool/call":
            try:
                args = json.loads(d["arguments"])
            except ValueError:
                return None
            if not isinstance(args, dict):
                return None
            args["description"] = f"{args.get('description', '')} {word}"
            d["arguments"] = json.dumps(args, ensure_ascii=False)
            return ev["seq"]
        if place in ("reasoning", "assistant") and typ == "assistant/message":
            want = "reasoning" if place == "reasoning" else "text"
            for b in d["message"]["content"]:
                if isinstance(b, dict) and b.get("type") == want:
                    b["text"] += f" {word}."
                    return ev["seq"]
        return None


_KIND = {"tool-output-line-700": "tool-output", "user-nonascii": "user", "tool-argument": "tool-call",
         "reasoning": "reasoning", "assistant": "assistant"}


# =========================================================================== generated homes

def _new_id(rng) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def fixture_sessions(fixtures: str) -> list:
    """(path, bytes) of every fixture file whose first line is a session header."""
    out = []
    for dirpath, _dirs, names in os.walk(fixtures):
        for n in sorted(names):
            if not n.endswith(".jsonl"):
                continue
            p = os.path.join(dirpath, n)
            with open(p, "rb") as f:
                data = f.read()
            first = data.split(b"\n", 1)[0]
            try:
                ok = json.loads(first).get("type") == "session"
            except (ValueError, AttributeError):
                ok = False
            if ok:
                out.append((p, data))
    out.sort()
    return out


def with_new_id(data: bytes, sid: str) -> bytes:
    """The session bytes with its header's id replaced (rows kept byte for byte)."""
    first, _, rest = data.partition(b"\n")
    h = json.loads(first)
    h["id"] = sid
    return json.dumps(h, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n" + rest


def make_home(root: str, fixtures: str, copies: int = 2, planted: int = 5, projects=("alpha", "beta", "gamma"),
              seed: int = 1, synth_turns: int = 4, zstd_every: int = 0, extra=()) -> dict:
    """A Harness home under ``root`` (``root/sessions/--home-dev-<project>--/<id>/session.jsonl``):
    ``copies`` copies of every fixture session with new ids, plus ``planted`` synth sessions each
    planting its own words (``plantN…``), plus one copy of each session of the ``extra`` fixture
    folders (e.g. the v2–v4 corpus).  ``zstd_every``: every Nth copy written as
    ``session.jsonl.zstd`` (one frame per row batch).  -> {"sessions": {id: path}, "planted":
    {word: (id, seq, kind)}, "project": {id: project dir}}."""
    rng = random.Random(seed)
    base = os.path.join(root, "sessions")
    out: dict[str, dict[str, Any]] = {"sessions": {}, "planted": {}, "project": {}}
    fx = fixture_sessions(fixtures)
    more = [x for d in extra for x in fixture_sessions(d)]
    k = 0
    for c in range(copies + (1 if more else 0)):
        for p, data in (fx if c < copies else more):
            sid = _new_id(rng)
            proj = f"--home-dev-{projects[k % len(projects)]}--"
            d = os.path.join(base, proj, sid)
            os.makedirs(d, exist_ok=True)
            body = with_new_id(data, sid)
            k += 1
            if zstd_every and k % zstd_every == 0:
                from ..log.source.zstdframes import encode_frame      # zstd only when asked for
                path = os.path.join(d, "session.jsonl.zstd")
                lines = body.split(b"\n")
                frames = [encode_frame(lines[0] + b"\n")]
                rows = [ln + b"\n" for ln in lines[1:] if ln]
                for i in range(0, len(rows), 7):
                    frames.append(encode_frame(b"".join(rows[i:i + 7])))
                with open(path, "wb") as f:
                    f.write(b"".join(frames))
            else:
                path = os.path.join(d, "session.jsonl")
                with open(path, "wb") as f:
                    f.write(body)
            out["sessions"][sid] = path
            out["project"][sid] = proj
            out.setdefault("origin", {})[sid] = p
    from .synth import write_jsonl
    for i in range(planted):
        sid = _new_id(rng)
        proj = f"--home-dev-{projects[i % len(projects)]}--"
        words = {f"plant{i}output": "tool-output-line-700", f"plant{i}grüße": "user-nonascii",
                 f'plant{i} "quoted" arg': "tool-argument", f"plant{i}reason": "reasoning",
                 f"plant{i}text": "assistant"}
        s = PlantingSynth(seed=seed * 1000 + i, session_id=sid, plants=words, at_turn=2,
                          created_at=1_790_000_000_000 + i * 86_400_000 * 20)
        path = os.path.join(base, proj, sid, "session.jsonl")
        write_jsonl(path, s, turns=synth_turns)
        for w, (seq, _turn, kind) in s.planted.items():
            out["planted"][w] = (sid, seq, kind)
        out["sessions"][sid] = path
        out["project"][sid] = proj
    return out

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
from typing import Optional

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
            block = d["message"]["content"][0]
            lines = [f"{i + 1:04d} output line of a long listing" for i in range(900)]
            lines[699] = f"0700 here the {word} sits in line 700"
            block["content"] = [{"type": "text", "text": "\n".join(lines)}]
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

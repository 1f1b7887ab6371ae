"""Precomputed, seed-independent text pools of the session generator (:mod:`app.tools.synth`): words,
prompts, sentences, code and tool-output lines, stream tokens."""
from __future__ import annotations

import random
from typing import Optional


# =========================================================================== text pools

WORDS = """the a to of and in is that it for this file function test we need I should let me check
run code error value return import module class method call line output update fix change config path
read write edit look first then now also here so but not with from by on at as be are was can will if
when which because after before into only each all any user tool result bash command see seems like
looks failing passes passed failure exception stack trace variable parameter argument default option
flag setting data list dict string number index key type schema field struct parse decode encode row
event session log store reader writer cache buffer page query filter sort order seq time turn step
message chunk packed stream batch frame header version format legacy repair closure fork seed title
handle case edge empty missing invalid unknown expected actual assert mock fixture helper util common
base core main app src tests docs build install package dependency version release branch commit diff
patch merge rebase review comment todo done pending progress plan approach simple minimal correct
safe fast slow memory disk bytes size limit offset window range start end begin finish stop cancel
retry attempt timeout server response request provider model context token usage reasoning prompt
system workspace directory project repository script shell process exit status signal job background
""".split()
_SUBWORDS = ["verb", "atim", "ize", "able", "ing", "ed", "er", "tion", "ally", "ment", "ness", "s", "'s",
             "n't", "'ll", "'re", "un", "re", "pre", "de"]
_PUNCT = [".", ".", ".", ",", ",", ",", ":", ";", "?", " (", ")", " —", " `", "`", "\n\n", "\n", "\n- ",
          "\n1. ", " **", "**", " \"", "\"", " é", " ✓", " →"]
NAMES = ["parse_row", "decode_line", "fold_surface", "pack_events", "open_reader", "tail_page",
          "SeqIndex", "RowCodec", "write_batch", "load_config", "resolve_path", "run_tests", "main",
          "handle_request", "SessionStore", "index_of", "read_range", "flush", "repair_tail", "fork_at",
          "build_index", "scan_frame", "LogReader", "render_row", "HistoryModel", "apply_patch"]
ERRS = ["KeyError", "ValueError", "TypeError", "IndexError", "AssertionError", "TimeoutError",
         "FileNotFoundError", "UnicodeDecodeError", "RuntimeError", "OSError"]
DIRS = ["src/app", "src/app/log", "src/app/store", "src/app/ui", "tests", "lib", "pkg/core", "scripts",
         "docs", "src/server", "src/client", "tools"]
MODS = ["reader", "writer", "codec", "index", "model", "config", "cli", "main", "utils", "store",
         "cache", "paging", "fold", "repair", "fork", "server", "client", "api", "schema", "views"]
_EXTS = [".py", ".py", ".py", ".ts", ".ts", ".rs", ".md", ".toml", ".json", ".go"]
PROMPTS = [
    "Fix the failing test in {path}.",
    "Why does {name} raise {err} when the input is empty?",
    "Add a --{word} option to the CLI and document it in the README.",
    "Refactor {path} so that {name} no longer reads the whole file into memory.",
    "The {word} {word2} is slow on large inputs; profile it and make it faster.",
    "Review the changes in {path} and tell me if anything looks wrong.",
    "Write tests for {name} covering the edge cases.",
    "Search the web for how other projects handle {word} {word2}, then summarize.",
    "Run the test suite and fix whatever fails.",
    "Rename {name} to {name2} everywhere and update the call sites.",
    "Explain how {name} works, step by step.",
    "Implement {word} support in {path}; keep the public API unchanged.",
    "Can you continue where we left off?",
    "Update the todo list and start on the next item.",
    "Delegate a code review of {path} to a subagent and report back.",
]
_SENTENCES = [
    "The user wants me to {verb} {thing}.",
    "Let me check {path} first.",
    "I need to look at how `{name}` handles {thing}.",
    "The test fails because `{name}` returns {val} instead of {val2}.",
    "Now I'll run the test suite to verify the fix.",
    "That looks right.",
    "Wait, {thing} may be empty here, so I should guard against it.",
    "So the problem is in `{name}`: it tries to {verb} {thing} before {thing2} is ready.",
    "I'll read {path} to see where `{name}` is defined.",
    "The output shows {n} failures, all in `{name}`.",
    "Let me search for other call sites of `{name}`.",
    "This is a {adj} change, so I'll keep the public API unchanged.",
    "Hmm, {thing} is never flushed when {thing2} fails.",
    "Actually, a simpler approach is to {verb} {thing} once and reuse it.",
    "I should also add a test for the {adj} case.",
    "The {err} comes from line {n} of {path}.",
    "Good — the build passes now.",
    "First, I'll {verb} {thing}; then I'll update {path}.",
    "It seems `{name}` assumes {thing} is sorted by seq, which is not always true.",
    "I'm going to edit {path} to {verb} {thing} lazily.",
    "All {n} tests pass.",
    "There is one more place that needs the same fix: `{name}`.",
    "A payload of {n} bytes is well within the limit.",
    "Let me double-check the {adj} path before I finish.",
]
_VERBS = ["parse", "decode", "validate", "cache", "flush", "index", "load", "sort", "rename", "split", "merge",
          "encode", "repair", "refactor", "stream", "fix", "check", "update"]
_THINGS = ["the header", "the tail page", "the row index", "the config file", "the packed rows", "the buffer",
           "the session list", "the retry logic", "the seq index", "the request header", "the tool results",
           "the torn tail", "the time field", "the cache key", "the file handle", "the error message"]
_ADJS = ["small", "safe", "minimal", "backwards-compatible", "empty", "edge", "slow", "legacy", "common", "rare"]
_VALS = ["None", "an empty list", "-1", "0", "the old value", "a string", "`False`", "a stale page"]
_TEST_STATUS = ["PASSED", "PASSED", "PASSED", "PASSED", "PASSED", "PASSED", "FAILED", "SKIPPED"]


def _mk_code_lines(rng: random.Random, n: int) -> list[str]:
    lines = []
    indent = ""
    w = WORDS
    for _ in range(n):
        r = rng.random()
        nm = rng.choice(NAMES)
        a, b, c = rng.choice(w), rng.choice(w), rng.choice(w)
        if r < 0.06:
            lines.append(f"def {nm.lower()}_{a}({b}, {c}=None):")
            indent = "    "
        elif r < 0.09:
            lines.append(f"class {nm}{a.capitalize()}:")
            indent = "    "
        elif r < 0.16:
            lines.append("")
            indent = "" if rng.random() < 0.3 else indent
        elif r < 0.24:
            lines.append(f"{indent}# {a} {b} {c} {rng.choice(w)} {rng.choice(w)}")
        elif r < 0.30:
            lines.append(f"{indent}if {a} is None or not {b}:")
        elif r < 0.36:
            lines.append(f"{indent}    return {nm.lower()}({a}, {b})")
        elif r < 0.42:
            lines.append(f"{indent}for {a} in {b}.{c}():")
        elif r < 0.46:
            lines.append(f"from .{rng.choice(MODS)} import {nm}, {rng.choice(NAMES)}")
        elif r < 0.50:
            lines.append(f"{indent}raise {rng.choice(ERRS)}(f\"{a} {b}: {{{c}!r}}\")")
        elif r < 0.53:
            lines.append(f"{indent}\"\"\"{a.capitalize()} the {b} of a {c} — {rng.choice(w)} only.\"\"\"")
        else:
            lines.append(f"{indent}{a}_{b} = {nm.lower()}({c}, {rng.randint(0, 4096)}, "
                         f"{rng.choice(w)}={rng.choice(['True', 'False', 'None', repr(c)])})")
    return lines


def _mk_output_lines(rng: random.Random, code: list[str], n: int) -> list[str]:
    out = []
    for _ in range(n):
        r = rng.random()
        mod = rng.choice(MODS)
        d = rng.choice(DIRS)
        if r < 0.3:
            out.append(f"tests/test_{mod}.py::test_{rng.choice(WORDS)}_{rng.choice(WORDS)} "
                       f"{rng.choice(_TEST_STATUS)} [{rng.randint(1, 100):3d}%]")
        elif r < 0.55:
            out.append(f"{d}/{mod}.py:{rng.randint(1, 2000)}:{rng.choice(code)}")
        elif r < 0.7:
            out.append(f"-rw-r--r--  1 dev dev {rng.randint(10, 900000):7d} Aug {rng.randint(1, 28):2d} "
                       f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {mod}{rng.choice(_EXTS)}")
        elif r < 0.8:
            out.append(f"  File \"{d}/{mod}.py\", line {rng.randint(1, 900)}, in {rng.choice(NAMES)}")
        elif r < 0.9:
            out.append(f"[{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}] "
                       f"INFO {mod}: {rng.choice(WORDS)} {rng.choice(WORDS)} {rng.randint(0, 99999)} "
                       f"{rng.choice(WORDS)}")
        else:
            out.append(f"{rng.choice(ERRS)}: {rng.choice(WORDS)} {rng.choice(WORDS)} "
                       f"'{rng.choice(WORDS)}'")
    return out


_TOKEN_RE = None


def _tokenize(text: str) -> list[str]:
    """Provider-like stream tokens: words with their leading space, punctuation apart, and
    some longer words split in two (" verb", "atim")."""
    import re
    global _TOKEN_RE
    if _TOKEN_RE is None:
        _TOKEN_RE = re.compile(r" ?[A-Za-z_]+| ?[0-9]+| ?`|[^\sA-Za-z0-9_`]+| +")
    out = []
    for i, tok in enumerate(_TOKEN_RE.findall(text)):
        if len(tok) > 8 and (i * 7 + len(tok)) % 3 == 0:
            cut = len(tok) // 2 + 1
            out.append(tok[:cut])
            out.append(tok[cut:])
        else:
            out.append(tok)
    return out


class TextPools:
    """Precomputed, seed-independent text pools (built once per process)."""
    _inst: Optional[TextPools] = None

    def __init__(self):
        rng = random.Random(0x5E55)
        self.paths = [f"{d}/{m}{e}" for d in DIRS for m in MODS for e in _EXTS[:4]]
        toks = [" " + w for w in WORDS] * 3 + [" " + w.capitalize() for w in WORDS[:80]]
        toks += _SUBWORDS + _PUNCT * 4
        toks += [" `" + n + "`" for n in NAMES] + [" " + n for n in NAMES]
        self.tokens = toks
        # each sentence twice: after a space/newline (no leading space) and inline (leading space)
        plain = [_tokenize(self._fill(rng, rng.choice(_SENTENCES))) for _ in range(3000)]
        sents = [(t, [" " + t[0]] + t[1:]) for t in plain]
        brk = [(["\n\n"], ["\n\n"])] * 300 + [(["\n- "], ["\n- "])] * 120 + \
            [(["\n\n**", "Summary", "**\n\n"], ["\n\n**", "Summary", "**\n\n"])] * 20
        self.sentences = sents + brk
        self.code = _mk_code_lines(rng, 8192)
        self.code2 = self.code + self.code           # wrap-around slices
        self.code_len = [len(x) + 1 for x in self.code]
        self.avg_code = sum(self.code_len) / len(self.code_len)
        self.out = _mk_output_lines(rng, self.code, 4096)
        self.out2 = self.out + self.out
        self.avg_out = sum(len(x) + 1 for x in self.out) / len(self.out)
        # time between deltas (ms): mostly 0/1 with ~30 ms gaps; one backwards step (clock skew)
        self.dt = [0] * 40 + [1] * 18 + list(range(24, 33)) * 3 + [58, 59, 61, 90, 140]
        self.dt_skew = self.dt + [-1]
        # argument piece lengths (like provider tool-call deltas)
        self.piece = [1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8, 10, 12]

    def _fill(self, rng, tpl: str) -> str:
        return tpl.format(verb=rng.choice(_VERBS), thing=rng.choice(_THINGS), thing2=rng.choice(_THINGS),
                          name=rng.choice(NAMES), path=rng.choice(self.paths) if hasattr(self, "paths") else
                          f"{rng.choice(DIRS)}/{rng.choice(MODS)}.py", val=rng.choice(_VALS),
                          val2=rng.choice(_VALS), adj=rng.choice(_ADJS), err=rng.choice(ERRS),
                          n=rng.choice([2, 3, 4, 7, 12, 31, 118, 402, 1024, 4096]))

    @classmethod
    def get(cls) -> TextPools:
        if cls._inst is None:
            cls._inst = TextPools()
        return cls._inst


def new_uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"



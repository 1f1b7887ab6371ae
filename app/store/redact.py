"""Secret masking for exports (no Qt): :class:`Redactor`.

Every string of a redacting export goes through :meth:`Redactor.text`, which runs six rules in a
fixed order.  Each rule has a cheap *gate* (substring tests at C speed) that every string it can
match must pass; a string that fails a gate is left to the next rule without running the pattern,
so the answer (and the counts in the report) is exactly the ungated one, at a fraction of the cost on
ordinary text.  Values nested deeper than :data:`~app.log.format.limits.MAX_DEPTH` are never walked
by recursion: :meth:`Redactor.row` masks such a row as text (the reader refuses it anyway), and
:meth:`Redactor.obj` walks with an explicit stack.

A stored row in the very form msgspec's encoder writes (as dsh's writer and the generators write rows) is
redacted from its bytes where the C scanner module is built (:meth:`Redactor.canonical_row`: the strings a
gate passes on are redacted in place, the rest of the row copied), and a row none of whose strings a gate
passes is told from its bytes too (:func:`quiet_values`): the same bytes, counts and examples as decoding,
walking and encoding the row (``tests/test_redact_quiet.py``, ``bench/export_identity.py``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NotRequired, Optional, TypedDict, overload
from collections.abc import Callable, Iterator

import msgspec

from ..log.format.limits import MAX_DEPTH, MAX_ROW_BYTES, LimitError, check_row
from ..log.format.payloads import JsonObj
from ..log.index.fastindex import load_rowscan_c

_enc = msgspec.json.Encoder()
_decode_str = msgspec.json.Decoder(str).decode
_native = load_rowscan_c()      # (its redact_gate and redact_walk: may_match and Redactor.obj in C; None: Python)
_common = getattr(_native, "redact_common", None)     # (Redactor._text's common rules in C; None: the patterns)
# (redact_walk with each string gated once and only changed containers copied: the exp6 section's; same answer)
_walk_c = getattr(_native, "ex6_redact_walk", None) or getattr(_native, "redact_walk", None)
_KINDS = {3: "secret-assignment", 5: "home-path"}     # (redact_common's rules: Redactor's index -> kind)
_COMMON_OUT = ~(1 << 3 | 1 << 5)                      # (gates of the rules redact_common leaves to the patterns)


def quiet_values(raw: bytes) -> bool:
    """Whether :meth:`Redactor.obj` of ``raw`` decoded is that value and masks nothing, where the C scanner
    module can tell from the bytes (``redact_quiet``: JSON whose string values no gate passes, in any
    layout); False says nothing, as for :func:`quiet_row`."""
    return _native is not None and len(raw) <= MAX_ROW_BYTES and _native.redact_quiet(raw, False, MAX_DEPTH)


class RedactionReport(TypedDict):
    """What a redacting export masked (``<out>.redaction.json``): counts and masked examples per kind."""
    total: int
    counts: dict[str, int]
    examples: dict[str, list[str]]
    note: str
    partial: NotRequired[bool]


def _mask(s: str, keep: int = 2) -> str:
    return (s[:keep] + "***") if len(s) > keep else "***"


# the letters that an IGNORECASE pattern takes for an ASCII letter of the keywords but ``str.lower`` keeps
# (capital I with dot, dotless i, long s, Kelvin sign)
_FOLD = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
_DEEP = 64                       # levels walked by recursion (then an explicit stack)
_SCALARS = (int, float, bool, type(None))


def _fold(s: str) -> str:
    if not s.isascii():
        for c, a in _FOLD.items():
            if c in s:
                s = s.replace(c, a)
    return s.lower()


# gates: a string a rule can match always passes its gate (s: the string, low: s.lower())
def _gate_private_key(s: str, low: str) -> bool:
    return "-----BEGIN" in s


def _gate_bearer(s: str, low: str) -> bool:
    return "bearer" in low or "basic" in low


_API_PREFIXES = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "AKIA", "ASIA", "AIza", "xox", "glpat-")


def _gate_api_key(s: str, low: str) -> bool:
    return any(p in s for p in _API_PREFIXES)


def _gate_assignment(s: str, low: str) -> bool:
    """A keyword whose run of name characters is followed by ``=`` or ``:`` with only backslashes, quotes,
    whitespace or non-ASCII characters between (``secret-assignment``'s name group holds a keyword and ends
    where its run does; its separator group starts with a backslash, a quote and whitespace, each optional,
    then ``=`` or ``:``)."""
    if "=" not in s and ":" not in s:
        return False
    for k in _KEY_PARTS:
        for h in _find_all(low, k):
            if _SEP_AFTER.match(s, _NAME_RUN.match(s, h).end()):        # type: ignore[union-attr]
                return True
    return False


def _gate_email(s: str, low: str) -> bool:
    return "@" in s


def _gate_home(s: str, low: str) -> bool:
    return "/home/" in s or "Users" in s


_GATES = (_gate_private_key, _gate_bearer, _gate_api_key, _gate_assignment, _gate_email, _gate_home)
ALL_GATES = (1 << len(_GATES)) - 1


def gate_bits(s: str) -> int:
    """The rules whose gates pass on ``s``: bit ``i`` for the rule ``i`` (in :class:`Redactor`'s order), every
    bit when ``s`` holds a letter of :data:`_FOLD`; 0: :meth:`Redactor.text` leaves ``s`` as it is and counts
    nothing.  The definition of the C scanner module's ``redact_gate`` (``tests/test_redact_c.py`` holds the
    two equal)."""
    if any(c in s for c in _FOLD):
        return ALL_GATES
    low = s.lower()
    return sum(1 << i for i, gate in enumerate(_GATES) if gate(s, low))


# every keyword of ``secret-assignment`` holds one of these (in the folded text)
_KEY_PARTS = ("key", "token", "secret", "passw", "auth")
_KEYWORDS = re.compile("|".join(_KEY_PARTS))
_NAME_CHAR = re.compile(r"(?i)[A-Za-z0-9_.-]")       # the name class of ``secret-assignment``, same flags
_NAME_RUN = re.compile(r"(?i)[A-Za-z0-9_.-]*")
_WORD = re.compile(r"\w")
_SEP = re.compile(r"\\?[\"']?\s*[=:]")             # how the separator group of ``secret-assignment`` starts
_SEP_AFTER = re.compile(r"[\\\"'\s\x80-\U0010ffff]*[=:]")       # (the assignment gate's looser form of it)


def _find_all(low: str, k: str) -> Iterator[int]:
    i = low.find(k)
    while i >= 0:
        yield i
        i = low.find(k, i + 1)


def _run_around(s: str, h: int) -> tuple[int, int]:
    """The run of name characters holding position ``h``: (start, end)."""
    a = h
    while a > 0 and _NAME_CHAR.match(s, a - 1):
        a -= 1
    m = _NAME_RUN.match(s, h)
    return a, (m.end() if m else h)


def _boundary(s: str, q: int) -> bool:
    """``\\b`` at ``q`` (unicode word characters, as the patterns see them)."""
    before = q > 0 and _WORD.match(s, q - 1) is not None
    return before != (q < len(s) and _WORD.match(s, q) is not None)


_Rule = tuple[str, re.Pattern[str], Callable[[re.Match[str]], tuple[str, str]], Callable[[str, str], bool]]


@dataclass
class Redactor:
    """Masks secrets in strings; counts what it masked per kind (examples masked too)."""
    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)
    max_examples: int = 5

    # (kind, pattern, replacement function(match) -> (replacement, secret part), gate)
    def __post_init__(self) -> None:
        self._rules: list[_Rule] = [
            ("private-key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
             lambda m: ("[REDACTED:private-key]", m.group(0)[11:]), _gate_private_key),
            ("bearer-token", re.compile(r"(?i)\b(Bearer|Basic)(\s+)([A-Za-z0-9._~+/=-]{8,})"),
             lambda m: (f"{m.group(1)}{m.group(2)}[REDACTED:bearer-token]", m.group(3)), _gate_bearer),
            ("api-key", re.compile(r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|"
                                   r"github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|"
                                   r"AIza[0-9A-Za-z_-]{35}|xox[abprs]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,})"),
             lambda m: ("[REDACTED:api-key]", m.group(0)), _gate_api_key),
            ("secret-assignment", re.compile(
                r"(?i)\b([A-Za-z0-9_.-]*(?:api[_-]?key|apikey|token|secret|passwd|password|access[_-]?key|"
                r"client[_-]?secret|auth)[A-Za-z0-9_.-]*)(\\?[\"']?\s*[=:]\s*\\?[\"']?)([^\s\"'\\&,;}\]]{4,})"),
             lambda m: (f"{m.group(1)}{m.group(2)}[REDACTED:secret]", m.group(3)), _gate_assignment),
            ("email", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
             lambda m: ("[REDACTED:email]", m.group(0)), _gate_email),
            ("home-path", re.compile(r"(/home/|/Users/|[A-Za-z]:\\\\?Users\\\\?)(?!\[user\])([^/\\\s\"'<>:*?|]+)"),
             lambda m: (f"{m.group(1)}[user]", m.group(0)), _gate_home),
        ]
        self._subs = [(rx, self._replacer(kind, fn), gate) for kind, rx, fn, gate in self._rules]
        # (the gates are inlined in :meth:`text`, in this order; each function documents its rule's)

    def _replacer(self, kind: str, fn: Callable[[re.Match[str]], tuple[str, str]]) -> Callable[[re.Match[str]], str]:
        def sub(m: re.Match[str]) -> str:
            if "[REDACTED:" in m.group(0):
                return m.group(0)
            rep, secret = fn(m)
            self._found(kind, secret if kind != "home-path" else m.group(2))
            return rep
        return sub

    def _assignments(self, s: str, low: str) -> str:
        """``secret-assignment``'s ``sub`` of ``s``, trying the pattern only where it can match.

        A match's name part is a run of name characters (the pattern's class) holding a keyword, and it
        always reaches the end of its run (what follows it cannot start with a name character).  So the
        only start to try in a run is its first word boundary, and only runs holding a keyword's letters
        (found in ``low``, which has the same length as ``s``) and followed by what the
        separator group starts with (``_SEP``: it never starts with a name character, so it starts where
        the run ends) need a try: the same matches as the pattern scanning every position, in time
        proportional to the keywords."""
        rx, sub, _gate = self._subs[3]
        # (the keywords found left to right, none overlapping the one before: each run's first keyword is
        # among them, and it is the only one of its run the loop below reads)
        hits = [k.start() for k in _KEYWORDS.finditer(low)]
        out: list[str] = []
        last = done = 0
        run, sep = _NAME_RUN.match, _SEP.match
        for h in hits:
            if h < done:
                continue
            m0 = run(s, h)
            done = m0.end() if m0 else h
            if not sep(s, done):
                continue
            a, b = _run_around(s, h)
            done = b
            p = next((q for q in range(max(a, last), b) if _boundary(s, q)), -1)
            m = rx.match(s, p) if p >= 0 else None
            if m is not None:
                out += (s[last:m.start()], sub(m))
                last = done = m.end()
        if not out:
            return s
        out.append(s[last:])
        return "".join(out)

    def _homes(self, s: str) -> str:
        """``home-path``'s ``sub`` of ``s``, trying the pattern only where a match can start: at a ``/home/`` or
        ``/Users/``, or three or four characters before a ``Users`` (a drive letter, a colon and one or two
        backslashes).  A match never starts elsewhere, so trying these places from the left finds the pattern's
        leftmost matches, the ones ``sub`` replaces, without the pattern trying every position."""
        rx, sub, _gate = self._subs[5]
        starts = set(_find_all(s, "/home/"))
        for u in _find_all(s, "Users"):
            starts.update((u - 3, u - 4))
            if u and s[u - 1] == "/" and s.startswith("/", u + 5):        # (a "/Users/")
                starts.add(u - 1)
        out: list[str] = []
        last = 0
        for p in sorted(starts):
            m = rx.match(s, p) if p >= last else None
            if m is not None:
                out += (s[last:p], sub(m))
                last = m.end()
        if not out:
            return s
        out.append(s[last:])
        return "".join(out)

    def _apply(self, i: int, s: str, low: str) -> str:
        """Rule ``i`` applied to ``s`` (``low``: ``_fold(s)``, used by ``secret-assignment`` only)."""
        if i == 3:
            return self._assignments(s, low)
        if i == 5:
            return self._homes(s)
        rx, sub, _gate = self._subs[i]
        return rx.sub(sub, s)

    def text(self, s: str) -> str:
        if not s or not isinstance(s, str):
            return s
        return self._text(s, _native.redact_gate(s) if _native is not None else gate_bits(s))

    def _text(self, s: str, bits: int) -> str:
        """:meth:`text` of a non-empty string whose gates are ``bits`` (:func:`gate_bits`): the six rules in
        order, each only when its gate passes on the string as the rules before it left it (``bits`` until
        one changes it; the gates themselves after).  In C for a string whose gates are among
        ``secret-assignment`` and ``home-path`` (``redact_common``: the same text, counts and examples,
        ``tests/test_redact_common.py``)."""
        if _common is not None and not bits & _COMMON_OUT:
            got = _common(s, bits)
            if got is not None:
                found = got[1]
                for k in range(0, len(found), 2):
                    self._found(_KINDS[found[k]], found[k + 1])
                t: str = got[0]
                return t
        return self._text_exact(s, bits)

    def _found(self, kind: str, secret: str) -> None:
        """A secret of ``kind`` masked: counted, and its masked example kept (the first :attr:`max_examples`)."""
        self.counts[kind] = self.counts.get(kind, 0) + 1
        ex = self.examples.setdefault(kind, [])
        if len(ex) < self.max_examples:
            ex.append(_mask(secret))

    def _text_exact(self, s: str, bits: int) -> str:
        """:meth:`_text` by the rules' patterns (its definition)."""
        low = ""                         # (_fold(s) once a gate or rule needs it: bearer's gate, rule 3)
        fresh = True                     # (s as it came: bits hold its gates)
        for i, gate in enumerate(_GATES):
            if fresh:
                if not bits >> i & 1:
                    continue
            else:
                if not low and i in (1, 3):
                    low = _fold(s)
                if not gate(s, low):
                    continue
            if i == 3 and not low:
                low = _fold(s)
            t = self._apply(i, s, low)
            if t is not s:
                s, low, fresh = t, "", False
        return s

    def quiet(self, o: object) -> bool:
        """Whether :meth:`obj` of ``o`` masks and counts nothing, where that is plain to see: a string no gate passes
        (:func:`gate_bits`), None, a bool or a number.  False for anything else (the caller takes the exact way)."""
        if type(o) is str:
            return not (_native.redact_gate(o) if _native is not None else gate_bits(o))
        return o is None or type(o) in (bool, int, float)

    @overload
    def obj(self, o: JsonObj) -> JsonObj: ...

    @overload
    def obj(self, o: object) -> object: ...

    def obj(self, o: object) -> object:
        """``o`` (decoded JSON) with every string in it redacted (other values as they are), never changed in
        place: a copy of each container holding a masked string, containers where nothing was masked as they
        are, or copied (callers only read the answer).  In C when the scanner module is built
        (``redact_walk``: :meth:`text` on the strings whose :func:`gate_bits` are not 0, the same order, up to
        :data:`_DEEP` levels of plain str, list and dict); else, or past that, recursive to :data:`_DEEP`
        levels, then walked with an explicit stack: any depth is safe."""
        if _walk_c is not None:
            got = _walk_c(o, self._text, _DEEP)
            if got is not NotImplemented:
                return got
        return self._walk(o, 0)

    def _walk(self, o: object, depth: int) -> object:
        t = type(o)
        if t is str:
            return self.text(o)          # type: ignore[arg-type]
        if t is dict:
            if depth > _DEEP:
                return self._deep(o)
            text, walk = self.text, self._walk
            return {k: text(v) if type(v) is str else v if type(v) in _SCALARS else walk(v, depth + 1)
                    for k, v in o.items()}   # type: ignore[attr-defined]
        if t is list:
            if depth > _DEEP:
                return self._deep(o)
            text, walk = self.text, self._walk
            return [text(v) if type(v) is str else v if type(v) in _SCALARS else walk(v, depth + 1)
                    for v in o]          # type: ignore[attr-defined]
        if isinstance(o, str):
            return self.text(o)
        if isinstance(o, (list, dict)):
            return self._deep(o)
        return o

    def _deep(self, o: object) -> object:
        """:meth:`obj` with an explicit stack (in the order of a depth-first recursive walk)."""
        root: list[object] = [None]
        # (container to fill, key or index, value to copy)
        todo: list[tuple[object, object, object]] = [(root, 0, o)]
        while todo:
            dst, key, v = todo.pop()
            if isinstance(v, str):
                v = self.text(v)
            elif isinstance(v, list):
                new_l: list[object] = [None] * len(v)
                todo.extend((new_l, i, x) for i, x in reversed(list(enumerate(v))))
                v = new_l
            elif isinstance(v, dict):
                new_d: dict[object, object] = dict.fromkeys(v)
                todo.extend((new_d, k, x) for k, x in reversed(list(v.items())))
                v = new_d
            dst[key] = v                        # type: ignore[index]
        return root[0]

    def row(self, raw: bytes) -> bytes:
        """One stored JSON row, strings redacted, re-encoded (text-redacted when not JSON, or when it is
        over a row limit: too large or too deeply nested to decode).  :meth:`canonical_row` where it can tell."""
        got = self.canonical_row(raw)
        return got if got is not None else self.row_exact(raw)

    def row_exact(self, raw: bytes) -> bytes:
        """:meth:`row` by its definition: decoded, :meth:`obj`, encoded (or redacted as text)."""
        try:
            check_row(raw)
            return _enc.encode(self.obj(msgspec.json.decode(raw)))
        except (msgspec.DecodeError, msgspec.ValidationError, LimitError, RecursionError):
            return self.text(raw.decode("utf-8", errors="replace")).encode("utf-8")

    def canonical_row(self, raw: bytes) -> Optional[bytes]:
        """:meth:`row` of ``raw`` read from its bytes, where the C scanner module can tell (``redact_spans``): a
        row in the very form msgspec's encoder writes (so decoding and encoding it again gives its bytes) is
        itself with each string value a gate may pass on replaced by its :meth:`text`, encoded, in the order of
        the text (the order :meth:`obj` walks it, so the same counts and examples): no decode of the row, no
        walk, no encode.  None: the module is not built or the row is not in that form (the caller decodes)."""
        spans = self.canonical_spans(raw)
        return None if spans is None else self.spliced(raw, spans)

    def canonical_spans(self, raw: bytes) -> Optional[list[int]]:
        """The C scanner module's ``redact_spans`` of ``raw`` (None: not built, or not a row in msgspec's form)."""
        if _native is None or len(raw) > MAX_ROW_BYTES:
            return None
        got: Optional[list[int]] = _native.redact_spans(raw, MAX_DEPTH)
        return got

    def spliced(self, raw: bytes, spans: list[int]) -> bytes:
        """:meth:`canonical_row` of ``raw`` from its :meth:`canonical_spans` (not None): the strings redacted."""
        raw = raw if type(raw) is bytes else bytes(raw)
        if not spans:
            return raw
        text, enc, dec = self._text, _enc.encode, _decode_str
        out: list[bytes] = []
        last = 0
        for k in range(0, len(spans), 3):
            a, b = spans[k], spans[k + 1]
            s = dec(raw[a:b])
            t = text(s, spans[k + 2]) if s else s       # (the gates of its bytes: the string's, maybe more)
            if t != s:
                out += (raw[last:a], enc(t))
                last = b
        if not out:
            return raw
        out.append(raw[last:])
        return b"".join(out)

    def report(self) -> RedactionReport:
        return {"total": sum(self.counts.values()), "counts": dict(sorted(self.counts.items())),
                "examples": {k: list(v) for k, v in sorted(self.examples.items())},
                "note": "examples are masked; the secrets themselves are never written"}

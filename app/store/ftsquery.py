"""Queries of the home full-text index (:mod:`app.store.fulltext`): parsing, results, snippets,
and the scan that answers them where the Python build has no FTS5.

Query language: words and "phrases" (all in one entry), ``prefix*``, ``OR`` / ``NOT`` between
terms, ``-word`` / ``-"phrase"`` (entries holding it are left out), and the filters of
``FILTERS``: ``tool:bash``, ``kind:error``, ``session:<id prefix>``, ``project:<name>``,
``after:YYYY-MM-DD``, ``before:…`` (a leading ``-`` negates a filter too).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Optional

from ..log.query.textview import normalize_kind, snippet

MARK_OPEN, MARK_CLOSE = "\x02", "\x03"        # snippet sentinels (the body holds no control chars)
HIT_OPEN, HIT_CLOSE = "«", "»"               # plain-text marks in returned snippets
FILTERS = ("tool", "kind", "session", "after", "before", "project")
FTS5_MISSING = ("this Python's SQLite has no FTS5: searching by scanning every session "
                "(slower; install a Python whose sqlite3 has FTS5 for the index)")

_TOKEN_RE = re.compile(r'(-?)(?:(\w+):"([^"]*)"|"([^"]*)"|(\S+))')
_OPS = ("OR", "AND", "NOT")


class QueryError(ValueError):
    """A query that cannot be run (one clear line)."""


# --------------------------------------------------------------------------- results

@dataclass
class SearchHit:
    session: str               # session id
    session_key: str           # unique key (path, or store#id)
    path: str
    seq: int
    turn: Optional[int]
    kind: str
    tool: Optional[str]
    time: Optional[int]
    snippet: str               # plain text, matched words between « »
    marks: list[tuple[int, int]]   # (start, end) of matched words inside ``text``
    text: str                  # ``snippet`` without marks
    rank: float = 0.0
    store: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        return {"session": self.session, "seq": self.seq, "turn": self.turn, "kind": self.kind,
                "snippet": self.snippet, "path": self.path, "tool": self.tool, "time": self.time,
                **({"store": self.store} if self.store else {})}


@dataclass
class SessionGroup:
    key: str
    session: str
    path: str
    title: Optional[str]
    created: Optional[int]
    count: int
    store: Optional[str] = None


@dataclass
class SearchResult:
    hits: list[SearchHit]
    sessions: list[SessionGroup]   # most matches first (the ones with the most, and those of the hits)
    total: int                 # matches in all sessions
    session_total: int = 0     # sessions with a match (``sessions`` may list fewer)
    fallback: Optional[str] = None
    seconds: float = 0.0
    # what the index did not answer (:func:`app.store.ftslive.live_search`): sessions not indexed at
    # their current revision, searched by the streaming scan instead (keys), and how far it got
    unindexed: list[str] = field(default_factory=list)
    scanned: int = 0           # of ``unindexed``, the sessions scanned so far
    build: str = "done"        # the index build: done | running | interrupted | never
    partial: bool = False      # an answer streamed while the scan still runs (more hits to come)
    total_exact: bool = True   # False: ``total`` is a lower bound ("about N"); exact on demand
    sessions_exact: bool = True   # False: ``session_total`` counts the sessions of the hits only (lazy)
    # the stat walk the answer compared the index with (None: the manifest check proved it current)
    walked: Any = field(default=None, repr=False, compare=False)


# --------------------------------------------------------------------------- parsing

@dataclass
class ParsedQuery:
    terms: list[tuple[str, bool, bool]]       # (text, prefix, phrase) that must match
    kinds: list[str]
    tools: list[str]
    sessions: list[str]
    projects: list[str]
    after: Optional[int] = None
    before: Optional[int] = None
    ops: list[str] = field(default_factory=list)     # FTS expression parts in order (terms and OR/NOT)
    not_terms: list[tuple[str, bool, bool]] = field(default_factory=list)   # -word, -"phrase"
    not_kinds: list[str] = field(default_factory=list)
    not_tools: list[str] = field(default_factory=list)
    not_sessions: list[str] = field(default_factory=list)
    not_projects: list[str] = field(default_factory=list)

    def fts(self) -> Optional[str]:
        """The FTS5 MATCH expression of the words (None: no word to look for)."""
        ops = list(self.ops)
        # a leading or trailing operator is a syntax error: drop dangling ones
        while ops and ops[0] in _OPS:
            ops.pop(0)
        while ops and ops[-1] in _OPS:
            ops.pop()
        if not ops:
            return None
        expr = "(" + " ".join(ops) + ")"
        if self.not_terms:
            expr += " NOT (" + " OR ".join(_fts_term(t) for t in self.not_terms) + ")"
        return expr

    def has_filters(self) -> bool:
        return bool(self.kinds or self.tools or self.sessions or self.projects or self.not_kinds
                    or self.not_tools or self.not_sessions or self.not_projects
                    or self.after is not None or self.before is not None)


def _quote(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def _fts_term(t: tuple[str, bool, bool]) -> str:
    return _quote(t[0]) + ("*" if t[1] else "")


fts_phrase = _fts_term          # one term as a phrase of a MATCH expression


def _date_ms(s: str, what: str) -> int:
    s = s.strip()
    for fmt in ("%Y-%m-%d", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m"):
        try:
            d = datetime.strptime(s, fmt).replace(tzinfo=UTC)
            return int(d.timestamp() * 1000)
        except ValueError:
            continue
    raise QueryError(f"{what}:{s} is not a date (YYYY-MM-DD)")


def _filter(pq: ParsedQuery, key: str, val: str, neg: bool) -> None:
    if not val:
        raise QueryError(f"{key}: needs a value")
    if key in ("after", "before"):
        ms = _date_ms(val, key)
        if (key == "after") != neg:               # -before:X is after:X and the other way round
            pq.after = ms
        else:
            pq.before = ms
        return
    if key == "kind":
        try:
            val = normalize_kind(val)
        except ValueError as e:
            raise QueryError(str(e)) from None
    lists = {"kind": (pq.kinds, pq.not_kinds), "tool": (pq.tools, pq.not_tools),
             "session": (pq.sessions, pq.not_sessions), "project": (pq.projects, pq.not_projects)}[key]
    lists[1 if neg else 0].append(val)


def parse_query(q: str) -> ParsedQuery:
    """Words, "phrases", prefix*, OR/NOT between terms, -negated terms, and the filters of ``FILTERS``."""
    pq = ParsedQuery(terms=[], kinds=[], tools=[], sessions=[], projects=[])
    for m in _TOKEN_RE.finditer(q or ""):
        neg_s, fkey, fval, phrase, word = m.groups()
        neg = neg_s == "-"
        key: Optional[str] = None
        val = ""
        if fkey is not None and fkey.lower() in FILTERS:
            key, val = fkey.lower(), fval
        elif word is not None and ":" in word and word.split(":", 1)[0].lower() in FILTERS:
            k, val = word.split(":", 1)
            key = k.lower()
        if key is not None:
            _filter(pq, key, val, neg)
            continue
        if fkey is not None:                       # word:"…" with an unknown key: a phrase of both
            word = None
            phrase = f"{fkey} {fval}"
        term: Optional[tuple[str, bool, bool]] = None
        if phrase is not None:
            if phrase.strip():
                term = (phrase, False, True)
        elif word in _OPS and not neg:
            pq.ops.append(word)
            continue
        elif word is not None:
            prefix = word.endswith("*")
            toks = re.findall(r"\w+", word.rstrip("*"))
            if toks:
                term = (" ".join(toks), prefix, len(toks) > 1)
        if term is None:
            continue
        if neg:
            pq.not_terms.append(term)
        else:
            pq.terms.append(term)
            pq.ops.append(_fts_term(term))
    return pq


# --------------------------------------------------------------------------- snippets

def split_marks(snip: str) -> tuple[str, list[tuple[int, int]]]:
    """Strip the sentinels: (plain text, [(start, end)])."""
    out: list[str] = []
    marks: list[tuple[int, int]] = []
    pos = 0
    start: Optional[int] = None
    for ch in snip:
        if ch == MARK_OPEN:
            start = pos
        elif ch == MARK_CLOSE:
            if start is not None:
                marks.append((start, pos))
            start = None
        else:
            out.append(ch)
            pos += 1
    return "".join(out), marks


def with_marks(text: str, marks: list[tuple[int, int]]) -> str:
    out: list[str] = []
    at = 0
    for a, b in marks:
        out += [text[at:a], HIT_OPEN, text[a:b], HIT_CLOSE]
        at = b
    out.append(text[at:])
    return "".join(out)


def like_prefix(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def like_sub(s: str) -> str:
    return "%" + s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def term_re(t: tuple[str, bool, bool]) -> re.Pattern[str]:
    """A case-insensitive regex of one term as FTS5's ``unicode61`` tokenizer matches it: tokens
    are runs of letters and digits (an underscore separates them, as any other punctuation does),
    whole tokens or a prefix*; diacritics are compared removed (:func:`fold_diacritics`)."""
    words = [fold_diacritics(x) for x in re.findall(r"[^\W_]+", t[0])] or [re.escape(t[0])]
    body = r"[\W_]+".join(re.escape(x) for x in words)
    return re.compile(r"(?<![^\W_])" + body + ("" if t[1] else r"(?![^\W_])"), re.IGNORECASE)


class _Diacritics(dict[int, str]):
    """A ``str.translate`` table: each character to itself without its diacritics (computed once)."""

    def __missing__(self, cp: int) -> str:
        c = chr(cp)
        d = unicodedata.normalize("NFD", c) if cp >= 0xC0 else c
        out = d[0] if len(d) > 1 and all(unicodedata.combining(x) for x in d[1:]) else c
        self[cp] = out
        return out


_DIACRITICS = _Diacritics()


def fold_diacritics(text: str) -> str:
    """``text`` with each letter's diacritics removed (``remove_diacritics 2``), one character
    for one (spans found in it are spans of ``text``)."""
    if text.isascii():
        return text
    return text.translate(_DIACRITICS)


# --------------------------------------------------------------------------- the scan (no FTS5)

class EntryMatcher:
    """The query's words and filters applied to one entry (the scan; the index answers in SQL)."""

    def __init__(self, pq: ParsedQuery):
        if not pq.terms and not pq.has_filters():
            raise QueryError("give words to look for")
        if pq.not_terms and not pq.terms and not pq.has_filters():
            raise QueryError("give words to look for besides the ones to leave out")
        self.pq = pq
        self.pos = [term_re(t) for t in pq.terms]
        self.groups = term_groups(pq)
        self.neg = [term_re(t) for t in pq.not_terms]
        self.kinds = set(pq.kinds)
        self.not_kinds = set(pq.not_kinds)
        self.tools = [t.lower() for t in pq.tools]
        self.not_tools = [t.lower() for t in pq.not_tools]

    def session_ok(self, sid: str, where: str) -> bool:
        pq = self.pq
        if pq.sessions and not any(sid.startswith(x) for x in pq.sessions):
            return False
        if any(sid.startswith(x) for x in pq.not_sessions):
            return False
        w = where.lower()
        if pq.projects and not any(x.lower() in w for x in pq.projects):
            return False
        return not any(x.lower() in w for x in pq.not_projects)

    def match(self, kind: str, tool: Optional[str], time: Optional[int],
              text: str) -> Optional[tuple[int, int]]:
        """The span of the first word's first match (``(0, 0)`` for a filter-only query), or None."""
        pq = self.pq
        if (self.kinds and kind not in self.kinds) or kind in self.not_kinds:
            return None
        name = (tool or "").lower()
        if (self.tools and not any(_tool_is(name, t) for t in self.tools)) or \
                any(_tool_is(name, t) for t in self.not_tools):
            return None
        if pq.after is not None and (time is None or time < pq.after):
            return None
        if pq.before is not None and (time is None or time >= pq.before):
            return None
        plain_ascii = text.isascii()
        if self.neg and any(rx.search(text if plain_ascii else fold_diacritics(text)) for rx in self.neg):
            return None
        if not self.pos:
            return (0, 0)
        found = [rx.search(text) for rx in self.pos]
        if not plain_ascii and not all(found):
            # folding is one character for one and keeps letters letters: a match in the text is one
            # in its folded form, so the folded form is searched only for the words not found
            folded = fold_diacritics(text)
            found = [m or rx.search(folded) for m, rx in zip(found, self.pos)]
        for group in self.groups:                    # OR of groups, each an AND of (term, negated)
            if all((found[i] is None) == neg for i, neg in group):
                m = next((found[i] for i, neg in group if not neg), None)
                return m.span() if m is not None else (0, 0)
        return None


def term_groups(pq: ParsedQuery) -> list[list[tuple[int, bool]]]:
    """The words of the query as FTS5 reads them (``NOT`` binds tighter than ``AND``, which binds
    tighter than ``OR``; words side by side are ANDed): an OR of groups, each group an AND of
    (index into ``pq.terms``, negated).  Dangling operators are dropped, as :meth:`ParsedQuery.fts`
    drops them."""
    groups: list[list[tuple[int, bool]]] = [[]]
    k = 0
    negate = False
    for op in pq.ops:
        if op == "OR":
            if groups[-1]:
                groups.append([])
            negate = False
        elif op == "NOT":
            negate = bool(groups[-1])                # a leading NOT is dropped
        elif op == "AND":
            negate = False
        else:
            groups[-1].append((k, negate))
            k += 1
            negate = False
    return [g for g in groups if any(not neg for _i, neg in g)] or [[]]


def _tool_is(name: str, want: str) -> bool:
    """``tool:NAME`` is the exact name (any case); ``tool:PREFIX*`` a prefix."""
    return name.startswith(want[:-1]) if want.endswith("*") else name == want


def scan_snippet(text: str, span: tuple[int, int]) -> tuple[str, list[tuple[int, int]]]:
    if span == (0, 0):
        s = text[:160]
        return s + ("…" if len(text) > 160 else ""), []
    s, a, b = snippet(text, span[0], span[1])
    return s, [(a, b)]

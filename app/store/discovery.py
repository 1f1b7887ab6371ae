"""Finding and listing sessions without decoding their logs (spec §1.1, §1.2).

Accepts a Harness home (``$DSH_HOME``, else ``~/.dsh``; sessions under ``<home>/sessions``),
a JSONL root (``--<project>--/<id>/session.jsonl[.zstd]``), a project folder, a single
session file, a SQLite store, or any folder of session files (e.g. the shared fixtures:
``session.jsonl``, ``session.1.jsonl`` …).  Only the header is read for the list.
"""
from __future__ import annotations

import functools
import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union
from collections.abc import Iterator


from ..log.format.limits import open_regular, read_head
from . import title_cache
from .discovery_headers import Facts, fmt_of, read_facts, read_header_bytes, read_many

SESSION_SUFFIXES = (".jsonl", ".jsonl.zstd", ".jsonl.zst")
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
LIVE_WINDOW_S = 15.0


def harness_home(explicit: Optional[str] = None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("DSH_HOME")
    return Path(env).expanduser() if env else Path.home() / ".dsh"


@dataclass
class SessionInfo:
    path: str
    format: str                       # jsonl | zstd | sqlite
    id: str
    header: dict[str, Any]
    size: int = 0
    mtime: float = 0.0
    project: Optional[str] = None     # project directory name (--key--), when in a JSONL tree
    store: Optional[str] = None       # the SQLite file, for sqlite sessions
    problems: list[str] = field(default_factory=list)
    title: Optional[str] = None
    generation: Optional[str] = None  # the generation file read (session.v4.jsonl …), when in a session folder
    generations: list[dict[str, Any]] = field(default_factory=list)   # the other generations (newest first)
    title_read: bool = field(default=False, repr=False)   # ``title`` was read (None then means: none)
    title_exact: bool = True          # False: a provisional title (bounded reads left a middle unread)

    @property
    def version(self) -> Optional[int]:
        """The stored format version of the file read (its header's ``version``)."""
        v = self.header.get("version", 0)
        return v if type(v) is int else None

    @property
    def key(self) -> str:
        """Unique key within a listing (ids may repeat across fixture folders)."""
        return f"{self.store}#{self.id}" if self.store else self.path

    @property
    def created_at(self) -> Optional[int]:
        return self.header.get("createdAt")

    @property
    def cwd(self) -> Optional[str]:
        return self.header.get("cwd")

    @property
    def parent(self) -> Optional[str]:
        return self.header.get("parentSession")

    @property
    def live(self) -> bool:
        return self.format != "sqlite" and (time.time() - self.mtime) < LIVE_WINDOW_S

    def to_dict(self) -> dict[str, Any]:
        h = self.header.get                  # (the properties inlined: 10,000 rows in a list)
        v = h("version", 0)
        return {"id": self.id, "path": self.path, "format": self.format, "title": self.title,
                "createdAt": h("createdAt"), "cwd": h("cwd"), "parentSession": h("parentSession"),
                "seedLength": h("seedLength"), "origin": h("origin"),
                "delegationDepth": h("delegationDepth"), "size": self.size,
                "mtime": self.mtime, "live": self.format != "sqlite" and (time.time() - self.mtime) < LIVE_WINDOW_S,
                "problems": self.problems, "formatVersion": v if type(v) is int else None,
                "isSeeded": h("isSeeded"), "generation": self.generation, "generations": self.generations,
                "titleExact": self.title_exact}


TreeNode = tuple[SessionInfo, list["TreeNode"]]     # a session and its children's subtrees


@dataclass
class Listing:
    kind: str                          # home | root | project | folder | file | sqlite
    root: str
    sessions: list[SessionInfo]
    problems: list[str] = field(default_factory=list)

    def children_of(self) -> dict[str, list[SessionInfo]]:
        """parentSession id -> [SessionInfo]; resolution prefers a parent in the same folder."""
        by_id: dict[str, list[SessionInfo]] = {}
        for s in self.sessions:
            by_id.setdefault(s.id, []).append(s)
        out: dict[str, list[SessionInfo]] = {}
        for s in self.sessions:
            if s.parent:
                out.setdefault(s.parent, []).append(s)
        return out

    def tree(self) -> list[TreeNode]:
        """[(SessionInfo, [subtrees])] roots first, children sorted by createdAt then id."""
        by_key = {s.key: s for s in self.sessions}
        parent_key: dict[str, str] = {}
        ids: dict[str, list[SessionInfo]] = {}
        for s in self.sessions:
            ids.setdefault(s.id, []).append(s)
        for s in self.sessions:
            if not s.parent or s.parent == s.id:
                continue
            cands = [c for c in ids.get(s.parent, []) if c is not s]
            if not cands:
                continue
            same = [c for c in cands if os.path.dirname(c.path) == os.path.dirname(s.path)]
            parent_key[s.key] = (same or cands)[0].key
        # break cycles
        for k in list(parent_key):
            seen, cur = {k}, parent_key.get(k)
            while cur is not None:
                if cur in seen:
                    parent_key.pop(k, None)
                    break
                seen.add(cur)
                cur = parent_key.get(cur)
        kids: dict[str, list[SessionInfo]] = {}
        for k, pk in parent_key.items():
            kids.setdefault(pk, []).append(by_key[k])

        def order(xs: list[SessionInfo]) -> list[SessionInfo]:
            return sorted(xs, key=lambda s: (s.created_at if isinstance(s.created_at, int) else 0, s.id, s.path))

        def build(s: SessionInfo) -> TreeNode:
            return (s, [build(c) for c in order(kids.get(s.key, []))])

        roots = [s for s in self.sessions if s.key not in parent_key]
        roots.sort(key=lambda s: (-(s.mtime or 0), s.path))
        return [build(s) for s in roots]


def session_info(path: str, project: Optional[str] = None, problems: Optional[list[str]] = None,
                 title: bool = False, cached: bool = False,
                 pre: Optional[tuple[int, float, Union[Facts, str, None], tuple[int, int]]] = None,
                 exact: bool = False) -> Optional[SessionInfo]:
    """Header facts of one session file; None when it is not a session file (``problems``
    gets a line when it could not even be read: permissions, not a regular file).

    One ``stat`` and at most one open per file.  ``title``: also the session's title, read in the
    same open (bounded tail and head windows, :mod:`app.store.titles`); the title and the header
    facts are cached by revision, so with ``title`` or ``cached`` a file whose revision is cached
    is not opened at all.  ``pre``: (size, mtime, facts) the caller already read (no stat, no open);
    ``exact``: the title read with the middle (a provisional cached title is read again)."""
    fmt = fmt_of(path)
    if pre is not None:
        size, mtime, facts, ident = pre
    else:
        try:
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):
                os.close(open_regular(path))          # raises NotRegularFile: the sentence says what it is
        except OSError as e:
            if problems is not None:
                problems.append(f"{path}: cannot read: {e.strerror or e}")
            return None
        size, mtime, ident = st.st_size, st.st_mtime, title_cache.ident_of(st)
        hit = title_cache.lookup_head(path, size, mtime, ident) if title or cached else None
        if hit is not None and exact and not hit[4]:
            hit = None
        if hit is not None:
            t, header, sid, probs, t_exact = hit
            return SessionInfo(path=path, format=fmt, id=sid, header=header, size=size, mtime=mtime,
                               project=project, problems=probs, title=t, title_read=True, title_exact=t_exact)
        facts = read_facts(path, size, title, exact)
    if isinstance(facts, str):
        if problems is not None:
            problems.append(facts)
        return None
    if facts is None:
        return None
    header, sid, probs, title_read, t, t_exact, fsize, fmtime, fident = facts
    if size < 0:                           # (not stat'ed by the caller: the open file's)
        size, mtime, ident = fsize, fmtime, fident
    if title_read:
        title_cache.remember(path, size, mtime, t, (header, sid, list(probs)), t_exact, ident)
    return SessionInfo(path=path, format=fmt, id=sid, header=header, size=size, mtime=mtime,
                       project=project, problems=probs, title=t, title_read=title_read, title_exact=t_exact)


# --------------------------------------------------------------------------- generations (spec-versions §2)
# A session folder may hold one file per format version: session.jsonl, session.v2.jsonl, …
# (test fixtures also name children session.1.jsonl / session.1.v3.jsonl: the stem groups them).
_GEN_RE = re.compile(r"^(session(?:\.[0-9]+)?)(?:\.v([1-9][0-9]*))?\.jsonl(\.zstd)?$")


@functools.lru_cache(maxsize=1024)
def parse_generation(name: str) -> Optional[tuple[str, int, bool]]:
    """(stem, version, compressed) of a generation file name, else None (``session.v0.jsonl``,
    ``session.v02.jsonl``, ``session.V2.jsonl``, ``*.tmp`` and migration stages are not generations;
    the few names of a home are parsed once)."""
    m = _GEN_RE.match(name)
    if not m:
        return None
    return m.group(1), (int(m.group(2)) if m.group(2) else 0), bool(m.group(3))


Generations = list[tuple[int, bool, str]]      # [(version, compressed, path)], newest first


def generation_files(directory: str, stem: str = "session") -> Generations:
    """[(version, compressed, path)] of one session's generations in ``directory``, newest first."""
    out = []
    for name in _safe_listdir(directory):
        g = parse_generation(name)
        if g is None or g[0] != stem:
            continue
        full = os.path.join(directory, name)
        if os.path.isfile(full):
            out.append((g[1], g[2], full))
    out.sort(key=lambda t: (-t[0], t[1]))
    return out


def select_generation(directory: str, stem: str = "session") -> tuple[Optional[str], list[str], list[str]]:
    """The generation dsh reads (the numerically highest), the others, and problems.

    No fallback: a damaged or too-new highest generation is still the one selected (opening
    it says why), never silently an older one.  Both encodings in one folder is reported, as
    dsh refuses such a lookup (one root, one encoding)."""
    return _selection(generation_files(directory, stem))


def _selection(gens: Generations) -> tuple[Optional[str], list[str], list[str]]:
    if not gens:
        return None, [], []
    if len(gens) == 1:                      # (most sessions: one generation)
        return gens[0][2], [], []
    problems = []
    if len({c for _v, c, _p in gens}) > 1:
        problems.append("generations in both encodings (session.*.jsonl and session.*.jsonl.zstd) in one folder: "
                        "dsh refuses this session (one root holds one encoding)")
    return gens[0][2], [g[2] for g in gens[1:]], problems


def _generation_groups(files: list[str]) -> dict[str, Generations]:
    """path -> the generations of its session (folder + stem), newest first, for every
    generation file among ``files`` (the walk already listed the folders: none is listed again)."""
    groups: dict[tuple[str, str], Generations] = {}
    for f in files:
        folder, _sep, name = f.rpartition(os.sep)
        g = parse_generation(name)
        if g is not None:
            groups.setdefault((folder, g[0]), []).append((g[1], g[2], f))
    out: dict[str, Generations] = {}
    for gens in groups.values():
        gens.sort(key=lambda t: (-t[0], t[1]))
        for _v, _c, f in gens:
            out[f] = gens
    return out


def older_generations(files: list[str]) -> set[str]:
    """Paths of generations that a newer generation of the same session (folder + stem) hides."""
    return {f for f, gens in _generation_groups(files).items() if gens[0][2] != f}


def _gen_entry(path: str) -> dict[str, Any]:
    g = parse_generation(os.path.basename(path))
    raw, why = read_header_bytes(path)
    hv = None
    if raw is not None:
        from ..log.format.versions import header_version
        hv = header_version(raw)
    try:
        size = os.path.getsize(path)
    except OSError:
        size = None
    return {"path": path, "name": os.path.basename(path), "version": g[1] if g else None,
            "compressed": g[2] if g else path.endswith((".zstd", ".zst")), "headerVersion": hv, "size": size,
            "problem": why if raw is None else None}


def _describe_generations(info: SessionInfo, explicit: bool = False, gens: Optional[Generations] = None) -> None:
    """Fill ``generation``/``generations`` and the generation problems of a listed file
    (``gens``: its session's generations when the caller listed the folder already)."""
    name = info.path.rpartition(os.sep)[2]
    g = parse_generation(name)
    if g is None:
        return
    info.generation = name
    if g[1] != info.version and info.version is not None:
        info.problems.append(f"generation-mismatch: the file name {name} says v{g[1]} but its header says "
                             f"v{info.version} (dsh refuses this generation)")
    selected, others, probs = select_generation(os.path.dirname(info.path), g[0]) if gens is None else \
        _selection(gens)
    if others or selected != info.path:
        info.generations = [_gen_entry(p) for p in ([selected] if selected else []) + others if p != info.path]
    if explicit and selected is not None and selected != info.path:
        info.problems.append(f"older-generation: {name} is not the generation dsh reads "
                             f"({os.path.basename(selected)} is newer); opened as asked, read-only")
    info.problems.extend(probs)


def generation_facts(path: str) -> dict[str, Any]:
    """For ``inspect``: the generation file read, whether dsh would read it, the others present."""
    name = os.path.basename(path)
    g = parse_generation(name)
    if g is None:
        return {"generation": None, "generations": [], "readsNewest": None}
    selected, others, probs = select_generation(os.path.dirname(os.path.abspath(path)), g[0])
    allg = ([selected] if selected else []) + others
    return {"generation": name,
            "generations": [_gen_entry(o) for o in allg if os.path.abspath(o) != os.path.abspath(path)],
            "readsNewest": selected is not None and os.path.abspath(selected) == os.path.abspath(path),
            "generationProblems": probs}


def generation_info(path: str, project: Optional[str] = None, problems: Optional[list[str]] = None,
                    gens: Optional[Generations] = None, title: bool = False, cached: bool = False,
                    pre: Optional[tuple[int, float, Union[Facts, str, None], tuple[int, int]]] = None) -> Optional[SessionInfo]:
    """The session of the newest generation ``path``: its header facts, the other generations,
    and a problem when it is damaged (never an older generation instead).  ``problems`` gets
    a line when ``path`` cannot be read at all (permissions, not a regular file).  ``gens``: the
    session's generations when the caller listed the folder; ``title``: read the title too; ``pre``: as
    :func:`session_info`."""
    info = session_info(path, project, problems, title=title, cached=cached, pre=pre)
    if info is not None:
        _describe_generations(info, gens=gens)
        return info
    g = parse_generation(os.path.basename(path))
    if g is None:
        return None
    _sel, others, probs = select_generation(os.path.dirname(path), g[0]) if gens is None else _selection(gens)
    older = [o for o in others if session_info(o) is not None]
    if not older:
        return None
    raw, why = read_header_bytes(path)
    base = session_info(older[0], project)
    if base is None:
        return None
    info = SessionInfo(path=path, format="zstd" if path.endswith((".zstd", ".zst")) else "jsonl", id=base.id,
                       header={**base.header, "version": g[1]}, size=os.path.getsize(path),
                       mtime=os.path.getmtime(path), project=project, title=None)
    info.generation = os.path.basename(path)
    info.generations = [_gen_entry(o) for o in others]
    info.problems.append(f"generation-damaged: the newest generation {info.generation} cannot be read "
                         f"({why or 'its first line is not a session header'}); dsh refuses this session and does "
                         f"not fall back to {os.path.basename(older[0])} (open that file explicitly to read it)")
    info.problems.extend(probs)
    return info


def _is_session_name(name: str) -> bool:
    return name.endswith(SESSION_SUFFIXES)


def _walk(root: str, max_depth: int = 8, problems: Optional[list[str]] = None) -> Iterator[str]:
    stack = [(root, 0)]
    while stack:
        d, depth = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as err:
            if problems is not None:
                problems.append(f"{d}: cannot list the folder: {err.strerror or err}")
            continue
        for e in entries:
            if e.name.startswith(".") and e.name not in (".sessions", ".dsh"):
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    if depth < max_depth:
                        stack.append((e.path, depth + 1))
                elif e.is_file() and (_is_session_name(e.name) or e.name.endswith(SQLITE_SUFFIXES)):
                    yield e.path
                elif (_is_session_name(e.name) or e.name.endswith(SQLITE_SUFFIXES)) and problems is not None \
                        and not e.is_dir():
                    problems.append(f"{e.path}: not a regular file (FIFO, device, socket or dangling link): "
                                    "skipped")
            except OSError:
                continue


PROJECT_RE = re.compile(r"^--.*--$|^_no-cwd$")


def discover(path: str, titles: bool = False, workers: int = 0, exact: bool = False) -> Listing:
    """List the sessions under ``path``: at most one open per session file, reading its header and
    (``titles``) its title together; a file whose revision is in the title cache is not opened
    (its header facts and title come from there).  Without ``titles`` (the window: headers first,
    titles streamed afterwards by :func:`app.store.titles.session_title`) only the header is read.
    ``workers`` > 1: files not in the cache are read by that many forked processes (the CLI only:
    never in a process with other threads).  ``exact`` (with ``titles``): every title exact, the middles
    read (a provisional title in the cache is read again and the entry upgraded); else the titles of
    big logs may be provisional (decision 0016)."""
    p = os.path.abspath(os.path.expanduser(path))
    if not os.path.exists(p):
        raise FileNotFoundError(f"no such file or folder: {path}")
    if not os.path.isdir(p):
        read_head(p, 0)            # refuses a FIFO, a device, a link to /dev/zero (NotRegularFile)
    if os.path.isfile(p):
        return _file_listing(path, p, titles, exact)
    kind, root = _folder_kind(p)
    problems: list[str] = []
    files = list(_walk(root, problems=problems))
    groups = _generation_groups(files)
    # 1. one stat per session file; a revision in the cache needs no read at all
    todo, reads = _plan_reads(files, groups, titles, exact, problems)
    # 2. the others: one open and bounded reads each (worker processes when asked and worth it)
    read = dict(zip((p for p, _n in reads), read_many(reads, titles, workers, exact and titles)))
    # 3. in the walk's order
    sessions = _assemble(kind, root, todo, read, groups, titles, problems)
    return Listing(kind=kind, root=root, sessions=sessions, problems=problems)


def _file_listing(path: str, p: str, titles: bool, exact: bool) -> Listing:
    """The listing of one file ``p`` (``path`` as given): a SQLite store's sessions, or one session file."""
    if p.endswith(SQLITE_SUFFIXES) or is_sqlite(p):
        return _sqlite_listing(p)
    info = session_info(p, title=titles, exact=exact)
    if info is None:
        raise ValueError(f"{path} is not a session file (its first line is not a session header)")
    _describe_generations(info, explicit=True)
    return Listing(kind="file", root=p, sessions=[info])


def _folder_kind(p: str) -> tuple[str, str]:
    """(kind, root) of a folder: a Harness home (its ``sessions``), a JSONL root, a project, else a folder."""
    if os.path.isdir(os.path.join(p, "sessions")):
        return "home", os.path.join(p, "sessions")
    if any(PROJECT_RE.match(n) for n in _safe_listdir(p)):
        return "root", p
    if PROJECT_RE.match(os.path.basename(p)):
        return "project", p
    return "folder", p


# (path, None for a SQLite file | (size, mtime, cache hit or None, ident)) in the walk's order
Todo = list[tuple[str, Any]]


def _plan_reads(files: list[str], groups: dict[str, Generations], titles: bool, exact: bool,
                problems: list[str]) -> tuple[Todo, list[tuple[str, int]]]:
    """One stat per session file (none when the title cache is empty: the reads' fstat gives size and
    mtime); a revision in the cache needs no read.  (todo, the (path, size) to read)."""
    todo: Todo = []
    none_cached = title_cache.empty()
    no_stat = none_cached and not exact        # (nothing to look up: size and mtime from the reads' fstat)
    reads: list[tuple[str, int]] = []
    for f in files:
        gens = groups.get(f)
        if gens is not None and gens[0][2] != f:
            continue                       # an older generation: described with the newest
        if f.endswith(SQLITE_SUFFIXES):
            todo.append((f, None))
            continue
        if no_stat:
            reads.append((f, -1))
            todo.append((f, (-1, 0.0, None, title_cache.NO_IDENT)))
            continue
        try:
            st = os.stat(f)
            if not stat.S_ISREG(st.st_mode):
                os.close(open_regular(f))          # raises NotRegularFile: the sentence says what it is
        except OSError as e:
            problems.append(f"{f}: cannot read: {e.strerror or e}")
            continue
        hit = None if none_cached else title_cache.lookup_head(f, st.st_size, st.st_mtime, title_cache.ident_of(st))
        if hit is not None and exact and titles and not hit[4]:
            hit = None                     # a provisional title: read again, the middle too
        if hit is None:
            reads.append((f, st.st_size))
        todo.append((f, (st.st_size, st.st_mtime, hit, title_cache.ident_of(st))))
    return todo, reads


def _assemble(kind: str, root: str, todo: Todo, read: dict[str, Union[Facts, str, None]],
              groups: dict[str, Generations], titles: bool, problems: list[str]) -> list[SessionInfo]:
    """The sessions of ``todo`` in the walk's order: a store's sessions, a cached revision's facts, or the
    facts ``read``; a repeated id in a home, root or project is a problem."""
    sessions: list[SessionInfo] = []
    seen_ids: dict[str, str] = {}
    for f, got in todo:
        if got is None:
            if is_sqlite(f):
                try:
                    sessions.extend(_sqlite_listing(f).sessions)
                except Exception as e:  # a broken store must not hide the others
                    problems.append(f"{f}: {e}")
            continue
        rel = (f[len(root) + 1:] if f.startswith(root + os.sep) else os.path.relpath(f, root)).split(os.sep)
        project = rel[0] if kind in ("root", "home") and len(rel) >= 3 and PROJECT_RE.match(rel[0]) else None
        size, mtime, hit, ident = got
        if hit is not None:
            t, header, sid, probs, t_exact = hit
            cached_info = SessionInfo(path=f, format=fmt_of(f), id=sid, header=header, size=size, mtime=mtime,
                                      project=project, problems=probs, title=t, title_read=True, title_exact=t_exact)
            _describe_generations(cached_info, gens=groups.get(f))
            got_info: Optional[SessionInfo] = cached_info
        else:
            got_info = generation_info(f, project, problems, gens=groups.get(f), title=titles, cached=True,
                                       pre=(size, mtime, read[f], ident))
        if got_info is None:
            continue
        info = got_info
        if kind in ("root", "home", "project"):
            if info.id in seen_ids:
                problems.append(f"duplicate session id {info.id!r}: {seen_ids[info.id]} and {f}")
            seen_ids[info.id] = f
        sessions.append(info)
    return sessions


def _safe_listdir(p: str) -> list[str]:
    try:
        return os.listdir(p)
    except OSError:
        return []


def is_sqlite(p: str) -> bool:
    try:
        return read_head(p, 16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _sqlite_listing(p: str) -> Listing:
    from .sqlite_store import SqliteStore
    store = SqliteStore.open(p)
    try:
        out = []
        for h in store.list_sessions():
            hdr = {k: v for k, v in h.items() if k not in ("revision", "events", "lastSeq")}
            out.append(SessionInfo(path=p, format="sqlite", id=h["id"], header=hdr, store=p,
                                   size=os.path.getsize(p), mtime=os.path.getmtime(p)))
        return Listing(kind="sqlite", root=p, sessions=out)
    finally:
        close = getattr(store, "close", None)
        if close:
            close()


def quick_title(info: SessionInfo) -> Optional[str]:
    """The session's title as the list shows it: the last ``session/title`` of the bounded tail
    region, else of the head region, raw JSONL and zstd alike (:mod:`app.store.titles`; cached by
    revision; ``info.title_exact`` False: provisional).  The same title as ``inspect``'s whenever it is exact."""
    from .titles import session_title
    return session_title(info)

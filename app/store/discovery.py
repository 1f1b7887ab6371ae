"""Finding and listing sessions without decoding their logs (spec §1.1, §1.2).

Accepts a Harness home (``$DSH_HOME``, else ``~/.dsh``; sessions under ``<home>/sessions``),
a JSONL root (``--<project>--/<id>/session.jsonl[.zstd]``), a project folder, a single
session file, a SQLite store, or any folder of session files (e.g. the shared fixtures:
``session.jsonl``, ``session.1.jsonl`` …).  Only the header is read for the list.
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional
from collections.abc import Iterator

from ..log.codec import parse_header
from ..log.limits import open_regular, read_head

SESSION_SUFFIXES = (".jsonl", ".jsonl.zstd", ".jsonl.zst")
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
LIVE_WINDOW_S = 15.0
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


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
    header: dict
    size: int = 0
    mtime: float = 0.0
    project: Optional[str] = None     # project directory name (--key--), when in a JSONL tree
    store: Optional[str] = None       # the SQLite file, for sqlite sessions
    problems: list = field(default_factory=list)
    title: Optional[str] = None
    generation: Optional[str] = None  # the generation file read (session.v4.jsonl …), when in a session folder
    generations: list = field(default_factory=list)   # the other generations present (dicts, newest first)

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

    def to_dict(self) -> dict:
        return {"id": self.id, "path": self.path, "format": self.format, "title": self.title,
                "createdAt": self.created_at, "cwd": self.cwd, "parentSession": self.parent,
                "seedLength": self.header.get("seedLength"), "origin": self.header.get("origin"),
                "delegationDepth": self.header.get("delegationDepth"), "size": self.size,
                "mtime": self.mtime, "live": self.live, "problems": self.problems,
                "formatVersion": self.version, "isSeeded": self.header.get("isSeeded"),
                "generation": self.generation, "generations": self.generations}


@dataclass
class Listing:
    kind: str                          # home | root | project | folder | file | sqlite
    root: str
    sessions: list
    problems: list = field(default_factory=list)

    def children_of(self) -> dict:
        """parentSession id -> [SessionInfo]; resolution prefers a parent in the same folder."""
        by_id: dict = {}
        for s in self.sessions:
            by_id.setdefault(s.id, []).append(s)
        out: dict = {}
        for s in self.sessions:
            if s.parent:
                out.setdefault(s.parent, []).append(s)
        return out

    def tree(self) -> list:
        """[(SessionInfo, [subtrees])] roots first, children sorted by createdAt then id."""
        by_key = {s.key: s for s in self.sessions}
        parent_key: dict = {}
        ids: dict = {}
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
        kids: dict = {}
        for k, pk in parent_key.items():
            kids.setdefault(pk, []).append(by_key[k])

        def order(xs):
            return sorted(xs, key=lambda s: (s.created_at if isinstance(s.created_at, int) else 0, s.id, s.path))

        def build(s):
            return (s, [build(c) for c in order(kids.get(s.key, []))])

        roots = [s for s in self.sessions if s.key not in parent_key]
        roots.sort(key=lambda s: (-(s.mtime or 0), s.path))
        return [build(s) for s in roots]


def read_header_bytes(path: str, limit: int = 1 << 20) -> tuple[Optional[bytes], Optional[str]]:
    """The header line of a session file (frame 1 for zstd), or (None, reason)."""
    try:
        with os.fdopen(open_regular(path), "rb") as f:
            head = f.read(8192)                 # a header line is a few hundred bytes (grown below if not)
            if head.startswith(_ZSTD_MAGIC):
                from backports import zstd  # noqa: WPS433 (optional at import time)
                data = head
                while True:
                    try:
                        n = zstd.get_frame_size(data)
                        break
                    except zstd.ZstdError:
                        more = f.read(65536)
                        if not more or len(data) > limit:
                            return None, "the zstd header frame is incomplete or corrupt"
                        data += more
                try:
                    from ..log.zstdframes import decode_bounded
                    text = decode_bounded(data[:n], limit)      # a bomb in the header frame stays a bad header
                except zstd.ZstdError as e:
                    return None, f"the zstd header frame does not decode: {e}"
                if text.count(b"\n") != 1 or not text.endswith(b"\n"):
                    return None, "the zstd header frame is not exactly one line"
                return text[:-1], None
            data = head
            while b"\n" not in data:
                more = f.read(65536)
                if not more:
                    break
                data += more
                if len(data) > limit:
                    return None, "the first line is longer than 1 MiB"
            if not data:
                return None, "empty file"
            return data.split(b"\n", 1)[0], None
    except OSError as e:
        return None, f"cannot read: {e.strerror or e}"


def session_info(path: str, project: Optional[str] = None,
                 problems: Optional[list] = None) -> Optional[SessionInfo]:
    """Header facts of one session file; None when it is not a session file (``problems``
    gets a line when it could not even be read: permissions, not a regular file)."""
    raw, why = read_header_bytes(path)
    if raw is None:
        if problems is not None and why and why.startswith("cannot read"):
            problems.append(f"{path}: {why}")
        return None
    hdr, probs = parse_header(raw)
    if hdr is None:
        return None
    import msgspec
    try:
        header = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        header = hdr.to_dict()
    st = os.stat(path)
    fmt = "zstd" if path.endswith((".zstd", ".zst")) else "jsonl"
    return SessionInfo(path=path, format=fmt, id=hdr.id, header=header, size=st.st_size, mtime=st.st_mtime,
                       project=project, problems=[str(p) for p in probs if p.fatal])


# --------------------------------------------------------------------------- generations (spec-versions §2)
# A session folder may hold one file per format version: session.jsonl, session.v2.jsonl, …
# (test fixtures also name children session.1.jsonl / session.1.v3.jsonl: the stem groups them).
_GEN_RE = re.compile(r"^(session(?:\.[0-9]+)?)(?:\.v([1-9][0-9]*))?\.jsonl(\.zstd)?$")


def parse_generation(name: str) -> Optional[tuple]:
    """(stem, version, compressed) of a generation file name, else None (``session.v0.jsonl``,
    ``session.v02.jsonl``, ``session.V2.jsonl``, ``*.tmp`` and migration stages are not generations)."""
    m = _GEN_RE.match(name)
    if not m:
        return None
    return m.group(1), (int(m.group(2)) if m.group(2) else 0), bool(m.group(3))


def generation_files(directory: str, stem: str = "session") -> list:
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


def select_generation(directory: str, stem: str = "session") -> tuple[Optional[str], list, list]:
    """The generation dsh reads (the numerically highest), the others, and problems.

    No fallback: a damaged or too-new highest generation is still the one selected (opening
    it says why), never silently an older one.  Both encodings in one folder is reported, as
    dsh refuses such a lookup (one root, one encoding)."""
    gens = generation_files(directory, stem)
    if not gens:
        return None, [], []
    problems = []
    if len({c for _v, c, _p in gens}) > 1:
        problems.append("generations in both encodings (session.*.jsonl and session.*.jsonl.zstd) in one folder: "
                        "dsh refuses this session (one root holds one encoding)")
    return gens[0][2], [g[2] for g in gens[1:]], problems


def _older_generations(files: list) -> set:
    """Paths of generations that a newer generation of the same session (folder + stem) hides."""
    groups: dict = {}
    for f in files:
        g = parse_generation(os.path.basename(f))
        if g is not None:
            groups.setdefault((os.path.dirname(f), g[0]), []).append((g[1], g[2], f))
    hidden = set()
    for gens in groups.values():
        if len(gens) > 1:
            gens.sort(key=lambda t: (-t[0], t[1]))
            hidden.update(f for _v, _c, f in gens[1:])
    return hidden


def _gen_entry(path: str) -> dict:
    g = parse_generation(os.path.basename(path))
    raw, why = read_header_bytes(path)
    hv = None
    if raw is not None:
        from ..log.versions import header_version
        hv = header_version(raw)
    try:
        size = os.path.getsize(path)
    except OSError:
        size = None
    return {"path": path, "name": os.path.basename(path), "version": g[1] if g else None,
            "compressed": g[2] if g else path.endswith((".zstd", ".zst")), "headerVersion": hv, "size": size,
            "problem": why if raw is None else None}


def _describe_generations(info: SessionInfo, explicit: bool = False) -> None:
    """Fill ``generation``/``generations`` and the generation problems of a listed file."""
    name = os.path.basename(info.path)
    g = parse_generation(name)
    if g is None:
        return
    info.generation = name
    if g[1] != info.version and info.version is not None:
        info.problems.append(f"generation-mismatch: the file name {name} says v{g[1]} but its header says "
                             f"v{info.version} (dsh refuses this generation)")
    selected, others, probs = select_generation(os.path.dirname(info.path), g[0])
    info.generations = [_gen_entry(p) for p in ([selected] + others) if p != info.path]
    if explicit and selected is not None and selected != info.path:
        info.problems.append(f"older-generation: {name} is not the generation dsh reads "
                             f"({os.path.basename(selected)} is newer); opened as asked, read-only")
    info.problems.extend(probs)


def generation_facts(path: str) -> dict:
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


def generation_info(path: str, project: Optional[str] = None,
                    problems: Optional[list] = None) -> Optional[SessionInfo]:
    """The session of the newest generation ``path``: its header facts, the other generations,
    and a problem when it is damaged (never an older generation instead).  ``problems`` gets
    a line when ``path`` cannot be read at all (permissions, not a regular file)."""
    info = session_info(path, project, problems)
    if info is not None:
        _describe_generations(info)
        return info
    g = parse_generation(os.path.basename(path))
    if g is None:
        return None
    _sel, others, probs = select_generation(os.path.dirname(path), g[0])
    older = [o for o in others if session_info(o) is not None]
    if not older:
        return None
    raw, why = read_header_bytes(path)
    base = session_info(older[0], project)
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


def _walk(root: str, max_depth: int = 8, problems: Optional[list] = None) -> Iterator[str]:
    stack = [(root, 0)]
    while stack:
        d, depth = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            if problems is not None:
                problems.append(f"{d}: cannot list the folder: {e.strerror or e}")
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


_PROJECT_RE = re.compile(r"^--.*--$|^_no-cwd$")


def discover(path: str) -> Listing:
    """List the sessions under ``path`` (header reads only)."""
    p = os.path.abspath(os.path.expanduser(path))
    if not os.path.exists(p):
        raise FileNotFoundError(f"no such file or folder: {path}")
    if not os.path.isdir(p):
        read_head(p, 0)            # refuses a FIFO, a device, a link to /dev/zero (NotRegularFile)
    if os.path.isfile(p):
        if p.endswith(SQLITE_SUFFIXES) or _is_sqlite(p):
            return _sqlite_listing(p)
        info = session_info(p)
        if info is None:
            raise ValueError(f"{path} is not a session file (its first line is not a session header)")
        _describe_generations(info, explicit=True)
        return Listing(kind="file", root=p, sessions=[info])
    kind = "folder"
    root = p
    if os.path.isdir(os.path.join(p, "sessions")):
        kind, root = "home", os.path.join(p, "sessions")
    elif any(_PROJECT_RE.match(n) for n in _safe_listdir(p)):
        kind = "root"
    elif _PROJECT_RE.match(os.path.basename(p)):
        kind = "project"
    sessions, problems = [], []
    seen_ids: dict = {}
    files = list(_walk(root, problems=problems))
    hidden = _older_generations(files)
    for f in files:
        if f in hidden:
            continue
        if f.endswith(SQLITE_SUFFIXES):
            if _is_sqlite(f):
                try:
                    sessions.extend(_sqlite_listing(f).sessions)
                except Exception as e:  # a broken store must not hide the others
                    problems.append(f"{f}: {e}")
            continue
        rel = (f[len(root) + 1:] if f.startswith(root + os.sep) else os.path.relpath(f, root)).split(os.sep)
        project = rel[0] if kind in ("root", "home") and len(rel) >= 3 and _PROJECT_RE.match(rel[0]) else None
        info = generation_info(f, project, problems)
        if info is None:
            continue
        if kind in ("root", "home", "project"):
            if info.id in seen_ids:
                problems.append(f"duplicate session id {info.id!r}: {seen_ids[info.id]} and {f}")
            seen_ids[info.id] = f
        sessions.append(info)
    return Listing(kind=kind, root=root, sessions=sessions, problems=problems)


def _safe_listdir(p: str) -> list:
    try:
        return os.listdir(p)
    except OSError:
        return []


def _is_sqlite(p: str) -> bool:
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


_TITLE_RE = re.compile(rb'\{[^\n]*"type":"session/title"[^\n]*\n')


def quick_title(info: SessionInfo, window: int = 262144) -> Optional[str]:
    """The last ``session/title`` found in the head or tail window of a raw JSONL file."""
    if info.format != "jsonl":
        return None
    import msgspec
    try:
        with os.fdopen(open_regular(info.path), "rb") as f:
            size = info.size
            f.seek(max(0, size - window))
            tail = f.read(window)
            f.seek(0)
            head = f.read(window) if size > window else b""
    except OSError:
        return None
    for blob in (tail, head):
        found = None
        for m in _TITLE_RE.finditer(blob):
            try:
                obj = msgspec.json.decode(m.group(0))
                t = obj.get("data", {}).get("title")
                if isinstance(t, str):
                    found = t
            except (msgspec.DecodeError, AttributeError):
                continue
        if found:
            return found
    return None

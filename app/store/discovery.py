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
from typing import Iterator, Optional

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
                "mtime": self.mtime, "live": self.live, "problems": self.problems}


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
            head = f.read(65536)
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
    for f in _walk(root, problems=problems):
        if f.endswith(SQLITE_SUFFIXES):
            if _is_sqlite(f):
                try:
                    sessions.extend(_sqlite_listing(f).sessions)
                except Exception as e:  # a broken store must not hide the others
                    problems.append(f"{f}: {e}")
            continue
        rel = os.path.relpath(f, root).split(os.sep)
        project = rel[0] if kind in ("root", "home") and len(rel) >= 3 and _PROJECT_RE.match(rel[0]) else None
        info = session_info(f, project, problems)
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

"""Session list view model: the lineage tree of a store (headers only), titles filled later.

``discover`` (header reads only) and ``session_title`` (a bounded head and tail per file, cached by
revision) run in workers; provisional titles (a middle left unread, decision 0016) are then refined
by :func:`refine_titles_job` (the middles read in a low-priority child process), which updates the
rows in place.  This model only holds their results.  No widgets here.
"""
from __future__ import annotations

import os
import time
from typing import Optional

from .plaintext import clean_line, isolate, tooltip
from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, Signal

from ..store.discovery import discover
from ..store.title_cache import save as titles_save
from ..store.titles import session_title
from .history.rows import fmt_datetime
from .tree_model import NodeTreeModel

INFO_ROLE = Qt.ItemDataRole.UserRole + 1
FILTER_ROLE = Qt.ItemDataRole.UserRole + 2
DISTINCT_ROLE = Qt.ItemDataRole.UserRole + 3    # where a label starts to differ from the most alike other label
# True on the title of a row whose title is provisional (the middle of the log not read yet); the list's
# delegate (app/ui/session_list.py) draws it in italics: a view model holds no font (QtCore only)
PROVISIONAL_ROLE = Qt.ItemDataRole.UserRole + 4
COLUMNS = ("Session", "Updated", "Project", "Format")


def short_datetime(ms) -> str:
    """``fmt_datetime`` without the year when it is this year (the list column stays narrow)."""
    full = fmt_datetime(ms)
    return full[5:] if full[:4] == time.strftime("%Y") else full


def is_placeholder(text) -> bool:
    """A template id such as ``{{sessionId}}`` (fixtures): not something to show as a name."""
    t = str(text or "").strip()
    return not t or ("{{" in t and "}}" in t)


def display_title(info, titles: Optional[dict] = None) -> str:
    """The session's title, else a short id, else its folder: never a raw template id."""
    t = (titles or {}).get(info.key) or info.title
    if t and not is_placeholder(t):
        return " ".join(str(t).split())
    if not is_placeholder(info.id):
        return f"{info.id[:12]}{'…' if len(info.id) > 12 else ''}"
    folder = os.path.basename(os.path.dirname(info.path)) if info.format != "sqlite" else ""
    return f"session in {folder}" if folder else "untitled session"


def store_label(info, store_path: Optional[str] = None) -> str:
    """Where the session lives, short: the SQLite file, the project folder, or the file's folder."""
    if info.format == "sqlite":
        return os.path.basename(info.store or info.path)
    if info.project:
        return project_name(info.project)
    return os.path.basename(os.path.dirname(info.path)) or os.path.basename(store_path or "")


def window_title(info, titles: dict, store_path: Optional[str], app: str) -> str:
    if info is None:
        return app
    title, store = isolate(display_title(info, titles)), isolate(store_label(info, store_path))
    return " · ".join(p for p in (title, store if store not in title else "") if p) + f" · {app}"


def project_name(key: Optional[str]) -> str:
    """A JSONL tree's project key ``--home-me-proj--`` as ``proj`` (the folder's last part)."""
    k = str(key or "").strip("-")
    parts = [p for p in k.split("-") if p]
    return parts[-1] if parts else str(key or "")


def format_version(info) -> str:
    v = getattr(info, "version", None)
    if not isinstance(v, int):
        v = (info.header or {}).get("version")
    v = v if isinstance(v, int) else 0
    kind = {"jsonl": "", "zstd": " zstd", "sqlite": " SQLite"}.get(info.format, f" {info.format}")
    more = len(getattr(info, "generations", None) or [])
    return f"v{v}{kind}" + (f" +{more}" if more else "")     # +N: older generations beside it


def updated_ms(info) -> Optional[float]:
    """When the session last changed: its file's mtime (a SQLite store's newest event, when known)."""
    last = getattr(info, "updated_at", None) or getattr(info, "last_time", None)
    if isinstance(last, (int, float)) and last > 0:
        return float(last)
    return info.mtime * 1000 if info.mtime else None


LIVE_BADGES = {"live": "● live", "idle": "◌ idle", "crashed": "✕ crashed"}
RECENT_S = 600.0            # sessions modified this recently get a writer state in the list
MAX_STATES = 300            # tail reads per poll, at most (the newest files first)


def live_states_job(job, sessions: list, prev: dict) -> dict:
    """``{key: state}`` ("live" | "idle" | "crashed" | "complete") for the sessions a writer
    touched lately (modified within RECENT_S, or not "complete" at the previous poll).
    Only stats files; the tail is read (``live_state``, cached per revision) for those."""
    from ..store.watch import live_state
    now = time.time()
    todo = []
    for info in sessions:
        job.check()
        f = info.store if info.format == "sqlite" and info.store else info.path
        try:
            mtime = os.stat(f).st_mtime
            if info.format == "sqlite":
                try:
                    mtime = max(mtime, os.stat(f + "-wal").st_mtime)
                except OSError:
                    pass
        except OSError:
            continue
        if now - mtime < RECENT_S or prev.get(info.key) not in (None, "complete"):
            todo.append((mtime, info))
    todo.sort(key=lambda x: -x[0])
    out = {}
    for _mtime, info in todo[:MAX_STATES]:
        job.check()
        try:
            # growth between two polls decides, never the file's age (a checkout's demo is no writer)
            if info.format == "sqlite":
                out[info.key] = live_state(info.store or info.path, info.id, now=now)
            else:
                out[info.key] = live_state(info.path, now=now)
        except Exception:
            continue
    return out


def discover_job(job, path: str):
    t0 = time.perf_counter()
    listing = discover(path)
    tree = listing.tree()
    return listing, tree, time.perf_counter() - t0


def sqlite_titles(store_path: str, ids: list) -> dict:
    """{id: (title | None, last event time ms | None)} of a SQLite store's sessions: the last
    ``session/title`` event and the newest event time, by the primary-key index (read-only)."""
    import msgspec
    from ..store.sqlite_store import SqliteStore
    out: dict = {}
    store = SqliteStore.open(store_path)
    try:
        def q(c):
            for sid in ids:
                row = c.execute("SELECT data FROM events WHERE session_id = CAST(? AS TEXT) AND type = "
                                "'session/title' ORDER BY seq DESC LIMIT 1", (sid,)).fetchone()
                last = c.execute("SELECT time FROM events WHERE session_id = CAST(? AS TEXT) "
                                 "ORDER BY seq DESC LIMIT 1", (sid,)).fetchone()
                title = None
                if row is not None:
                    try:
                        d = msgspec.json.decode(row[0] if isinstance(row[0], (bytes, str)) else bytes(row[0]))
                        title = d.get("title") if isinstance(d, dict) else None
                    except (msgspec.DecodeError, TypeError):
                        title = None
                out[sid] = (title if isinstance(title, str) else None, last[0] if last else None)
        store.read(q)
    finally:
        store.close()
    return out


def titles_job(job, sessions: list):
    """The title of each session (cached by revision), streamed in batches (UI updates as they come);
    SQLite sessions get their title and newest event time from one query per session."""
    batch: dict = {}
    every: dict = {}
    last = time.perf_counter()
    stores: dict = {}
    for info in sessions:
        if info.format == "sqlite" and info.store:
            stores.setdefault(info.store, []).append(info)
    for store, infos in stores.items():
        job.check()
        try:
            got = sqlite_titles(store, [i.id for i in infos])
        except Exception:
            continue
        for info in infos:
            t, when = got.get(info.id, (None, None))
            if isinstance(when, int) and when > 0:
                info.updated_at = when
            batch[info.key] = t          # None: no title event, the row still repaints its date
    for info in sessions:
        job.check()
        if info.format == "sqlite":
            continue
        try:
            t = session_title(info)
        except Exception:
            t = None
        if t:
            batch[info.key] = every[info.key] = t
        now = time.perf_counter()
        if batch and (now - last > 0.1 or len(batch) >= 200):
            job.stream(batch)
            batch, last = {}, now
    # fork children still carrying their parent's title get dsh's counter: "X (1)", "X (2)" …
    try:
        from ..store.discovery import Listing
        from ..store.lineage import display_titles
        # (display_titles reads only the listing's sessions)
        batch.update(display_titles(Listing(kind="sessions", root="", sessions=list(sessions)), every))
    except Exception:
        pass
    if batch:
        job.stream(batch)
    titles_save()
    return len(sessions)


def refine_titles_job(job, sessions: list) -> int:
    """The exact titles of the sessions whose listed title is provisional (decision 0016), read with
    their middles in a low-priority child process (:mod:`app.store.titles_child`), in display order,
    streamed in batches ``{key: (title, changed)}`` (every refined row: an unchanged title is now exact,
    its row is repainted) and recorded over the cache's provisional entries.  Returns how many titles
    changed."""
    from ..store.titles import apply_exact
    from ..store.titles_child import refine
    todo = [i for i in sessions if i.format in ("jsonl", "zstd") and not i.title_exact]
    batch: dict = {}
    last = [time.perf_counter(), time.perf_counter()]
    changed = [0]

    def on_title(k: int, got) -> None:
        r = apply_exact(todo[k], got)
        if r is not None:
            batch[todo[k].key] = r
            changed[0] += r[1]
        now = time.perf_counter()
        if batch and (now - last[0] > 0.1 or len(batch) >= 200):
            job.stream(dict(batch))               # (raises Cancelled: the child is killed)
            batch.clear()
            last[0] = now
        if now - last[1] > 5.0:                   # a long refinement keeps what it has read
            titles_save()
            last[1] = now
    refine([(i.path, i.format, i.size, i.mtime) for i in todo], on_title, job)
    if batch:
        job.stream(dict(batch))
    titles_save()
    return changed[0]


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


class _Node:
    __slots__ = ("info", "parent", "row", "kids")

    def __init__(self, info, parent, row):
        self.info, self.parent, self.row = info, parent, row
        self.kids: list = []


class SessionTreeModel(NodeTreeModel):
    titlesRefined = Signal(int)        # the provisional titles were refined (how many changed)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._root = _Node(None, None, 0)
        self._by_key: dict = {}
        self.titles: dict = {}
        self.states: dict = {}      # key -> writer state (live | idle | crashed | complete)
        self.listing = None

    def set_listing(self, listing, tree) -> None:
        self.beginResetModel()
        self.listing = listing
        self._root = _Node(None, None, 0)
        self._by_key = {}
        self.titles = {}
        self.states = {}

        def add(parent, subtree):
            for i, (info, kids) in enumerate(subtree):
                n = _Node(info, parent, i)
                parent.kids.append(n)
                self._by_key[info.key] = n
                if info.title:
                    self.titles[info.key] = info.title
                add(n, kids)
        add(self._root, tree)
        self.endResetModel()

    def clear(self) -> None:
        self.set_listing(None, [])

    @property
    def session_count(self) -> int:
        return len(self._by_key)

    def sessions(self) -> list:
        """All SessionInfo in display order (depth first)."""
        out = []

        def walk(n):
            for k in n.kids:
                out.append(k.info)
                walk(k)
        walk(self._root)
        return out

    def set_titles(self, titles: dict) -> None:
        touched: list = []
        for key, t in titles.items():
            n = self._by_key.get(key)
            if n is None:
                continue
            if t:
                self.titles[key] = t
                n.info.title = t
            touched.append(n)
        self._titles_changed(touched)

    def _titles_changed(self, nodes: list) -> None:
        """One ``dataChanged`` per parent for the rows of ``nodes`` (from the first to the last of them), not one
        per row: the sorting proxy re-sorts all its rows on each, and 400 titles cost 2.6 million ``data()``
        calls one row at a time (tests/test_ui_app.py: test_many_sessions_listed_from_headers_only)."""
        spans: dict[int, list] = {}
        for n in nodes:
            got = spans.get(id(n.parent))
            if got is None:
                spans[id(n.parent)] = [n, n]
            else:
                if n.row < got[0].row:
                    got[0] = n
                if n.row > got[1].row:
                    got[1] = n
        roles = [Qt.ItemDataRole.DisplayRole, PROVISIONAL_ROLE, FILTER_ROLE]
        for first, last in spans.values():
            self.dataChanged.emit(self.createIndex(first.row, 0, first),
                                  self.createIndex(last.row, len(COLUMNS) - 1, last), roles)

    def set_refined(self, refined: dict) -> None:
        """Exact titles from the refinement, ``{key: (title, changed)}``: a changed title replaces the
        row's (a refined session may have no title after all), an unchanged one keeps the row's label
        (a fork child's "title (1)") and is repainted upright."""
        touched: list = []
        for key, (t, changed) in refined.items():
            n = self._by_key.get(key)
            if n is None:
                continue
            if changed:
                if t:
                    self.titles[key] = t
                else:
                    self.titles.pop(key, None)
                n.info.title = t
            touched.append(n)
        self._titles_changed(touched)

    def refined(self, changed: int) -> None:
        """The refinement of provisional titles ended (``changed`` titles differ): says so."""
        self.titlesRefined.emit(int(changed))

    def set_states(self, states: dict) -> None:
        """Writer states from the live poll or the open session's follower.

        A session marked crashed stays crashed until its log grows (``live``) or its last turn
        is closed (``complete``): the follower's shorter "idle" clock and the list poll's longer
        crash delay must not make "✕ crashed" come and go between polls."""
        for key, st in states.items():
            n = self._by_key.get(key)
            if n is None or self.states.get(key) == st:
                continue
            if self.states.get(key) == "crashed" and st not in ("live", "complete"):
                continue
            self.states[key] = st
            ix = self.createIndex(n.row, 0, n)
            self.dataChanged.emit(ix, ix, [Qt.ItemDataRole.DisplayRole])

    def state_of(self, info) -> Optional[str]:
        st = self.states.get(info.key)
        if st is None and info.live:
            st = "live"
        return st

    def index_for_key(self, key) -> QModelIndex:
        n = self._by_key.get(key)
        return self.createIndex(n.row, 0, n) if n is not None else QModelIndex()

    def info_at(self, index):
        return index.internalPointer().info if index.isValid() else None

    # ---- Qt API
    def columnCount(self, parent=QModelIndex()):
        return len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def label(self, info) -> str:
        base = isolate(display_title(info, self.titles))
        h = info.header or {}
        if info.parent:
            sub, fork = h.get("origin") == "subagent", h.get("seedLength") is not None
            kind = "subagent fork" if sub and fork else ("subagent" if sub else ("fork" if fork else ""))
            if kind:
                base = f"⤷ {kind} · {base}"
            else:
                base = f"⤷ {base}"
        shown = display_title(info, self.titles)
        if self._dup_titles().get(shown, 0) > 1:             # titles alike: the id tells them apart
            sid = str(info.id)
            if shown.rstrip("…") and sid.startswith(shown.rstrip("…")):
                base = base.replace(isolate(shown), isolate(sid))      # (an id cut short: the whole id)
            else:
                tail = sid[-12:]
                tail = tail[tail.find("-") + 1:] if "-" in tail[:-1] else tail
                base += f" · {isolate(tail)}"
        state = self.state_of(info)
        badge = LIVE_BADGES.get(state) if state is not None else None
        return f"{badge} · {base}" if badge else base      # in front: a long title elides, not the state

    def _dup_titles(self) -> dict:
        """display title -> how many listed sessions show it (recounted when titles change)."""
        key = (id(self.listing), len(self._by_key), hash(frozenset(self.titles.items())))
        if getattr(self, "_dups", (None,))[0] != key:
            counts: dict = {}
            for n in self._by_key.values():
                t = display_title(n.info, self.titles)
                counts[t] = counts.get(t, 0) + 1
            self._dups = (key, counts)
        return self._dups[1]

    def _distinct(self) -> dict:
        """key -> length of the longest start its label shares with another label (the part that
        tells it apart begins there); neighbours in sorted order are the most alike."""
        key = (id(self.listing), len(self._by_key),
               hash(frozenset(self.titles.items())), hash(frozenset(self.states.items())))
        if getattr(self, "_dist", (None,))[0] != key:
            labels = sorted((self.label(n.info), k) for k, n in self._by_key.items())
            out = dict.fromkeys(self._by_key, 0)
            for (a, ka), (b, kb) in zip(labels, labels[1:]):
                n = len(os.path.commonprefix([a, b]))
                out[ka], out[kb] = max(out[ka], n), max(out[kb], n)
            self._dist = (key, out)
        return self._dist[1]

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        info = index.internalPointer().info
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return self.label(info)
            if col == 1:
                return short_datetime(updated_ms(info)) or short_datetime(info.created_at) or "—"
            if col == 2:
                if info.project:
                    return isolate(project_name(info.project))
                cwd = "" if is_placeholder(info.cwd) else os.path.basename((info.cwd or "").rstrip("/"))
                return isolate(cwd or os.path.basename(os.path.dirname(info.path)))
            if col == 3:
                return format_version(info)
        if role == INFO_ROLE:
            return info
        if role == DISTINCT_ROLE and col == 0:
            return self._distinct().get(info.key, 0)
        if role == PROVISIONAL_ROLE and col == 0:
            return not info.title_exact       # a provisional title (the middle of the log not read yet)
        if role == FILTER_ROLE:
            return " ".join(str(x) for x in (self.titles.get(info.key) or "", info.id, info.cwd or "",
                                             os.path.basename(os.path.dirname(info.path)))).casefold()
        if role == Qt.ItemDataRole.ToolTipRole:
            prov = "" if info.title_exact else " (provisional: read from the start and end of the log; a rename " \
                "in its middle may be newer)"
            lines = [f"title: {clean_line(display_title(info, self.titles))}{prov}", f"id: {clean_line(info.id)}",
                     f"file: {clean_line(info.path)}",
                     f"format: {format_version(info)} · {_size(info.size)}"]
            if fmt_datetime(info.created_at):
                lines.append(f"created: {fmt_datetime(info.created_at)}")
            if fmt_datetime(updated_ms(info)):
                lines.append(f"updated: {fmt_datetime(updated_ms(info))}")
            if info.cwd:
                lines.append(f"folder: {clean_line(info.cwd)}")
            if info.parent:
                lines.append(f"parent: {info.parent}")
            if (info.header or {}).get("seedLength") is not None:
                lines.append(f"fork seed: {info.header['seedLength']} events")
            st = self.state_of(info)
            if st:
                lines.append("writer: " + {"live": "live (the log grew in the last seconds)",
                                           "idle": "idle (quiet, last turn still open)",
                                           "crashed": "crashed (open turn, quiet for long: the writer died)",
                                           "complete": "finished (last turn closed)"}.get(st, st))
            for p in info.problems or []:
                lines.append(f"problem: {p}")
            return tooltip("\n".join(lines))
        return None


class SessionFilterModel(QSortFilterProxyModel):
    """Case-insensitive filter on title, id and cwd; a match keeps its ancestors visible."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self.setFilterRole(FILTER_ROLE)
        self._needle = ""

    def set_needle(self, text: str) -> None:
        if hasattr(self, "beginFilterChange"):         # Qt >= 6.9
            self.beginFilterChange()
            self._needle = (text or "").casefold().strip()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self._needle = (text or "").casefold().strip()
            self.invalidateRowsFilter()

    def filterAcceptsRow(self, source_row, source_parent):
        if not self._needle:
            return True
        src = self.sourceModel()
        ix = src.index(source_row, 0, source_parent)
        hay = src.data(ix, FILTER_ROLE) or ""     # a direct Python call (see history.delegate.row_of)
        return all(w in hay for w in self._needle.split())

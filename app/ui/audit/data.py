"""What the audit window shows, computed without widgets (safe on a worker thread).

:func:`compute_audit` decodes the logical events of one reader once and precomputes the
initial trace, the list of comparisons (with the sides of the first one), and the stats.
:func:`diff_sides` and :func:`trace_of` compute the rest on demand; the window runs
them in a worker when it has a :class:`app.ui.workers.Jobs`, inline otherwise (the
``session-lens audit --screenshot`` path).  Nothing here creates a widget; the helpers of
:mod:`.sides` used here are plain functions of plain data.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional
from collections.abc import Callable

from ...log.fold.attempts import AttemptTracker
from ...log.query.diff import attempt_diff, fork_diff, request_diff
from ...log.query.stats import compute_stats
from ...log.query.trace import TraceError, trace_event
from ...store.lineage import find_parent_path
from .sides import attempt_sides, event_lines, fork_sides, request_sides

# the kinds of comparison (the second item of a ``DiffSpec``)
ATTEMPT, REQUEST, FORK, ERROR = "attempt", "request", "fork", "error"


class EventsWithHeader(list):
    """An event list that also carries ``header`` (what diff functions read from a reader)."""

    def __init__(self, events, header):
        super().__init__(events)
        self.header = header


@dataclass
class AuditData:
    """One session's audit, ready for the panels (plain data)."""
    path: Optional[str]
    session_id: Optional[str]
    header: Any                          # the session header (app.log.format.model.Header), None when unreadable
    events: list
    seq: Optional[int]                   # the seq traced first
    trace: Optional[dict] = None         # its trace, or
    trace_error: Optional[str] = None    # why it could not be traced
    diffs: list = field(default_factory=list)           # [(label, spec tuple)]
    first_sides: Optional[tuple] = None  # the sides of diffs[0]
    stats: Optional[dict] = None
    stats_error: Optional[str] = None
    seqs: frozenset = frozenset()        # every seq in ``events``

    @property
    def title(self) -> str:
        return f"Audit — {self.header.id if self.header is not None else '?'}"

    def has_seq(self, seq: Optional[int]) -> bool:
        return seq is None or seq in self.seqs


def default_seq(events: list) -> Optional[int]:
    """A seq worth tracing first: a shadowed/replacing surface event, else the last message."""
    for ev in events:
        if ev.is_replace:
            return ev.surface_op.get("start")
    for ev in reversed(events):
        if ev.type in ("assistant/message", "user/message") and ev.surface_op is not None:
            return ev.seq
    return events[-1].seq if events else None


def trace_of(events: list, seq: Optional[int]) -> tuple:
    """(trace dict or None, error text or None) for ``seq``."""
    if seq is None:
        return None, "empty log: nothing to trace"
    try:
        return trace_event(events, int(seq)), None
    except TraceError as e:
        return None, str(e)


def dispatch_attempts(events: list) -> list:
    """Every model dispatch (attempt) of the log, one pass."""
    at = AttemptTracker(keep_text=False)
    for ev in events:
        at.apply(ev)
    return at.attempts


def diff_specs(events: list, header, path: Optional[str], find_parent: bool = True) -> list:
    """[(label, spec)]: failed attempts vs committed, consecutive steps' requests, fork vs parent."""
    out: list = []
    try:
        for step in attempt_diff(events):
            for i, f in enumerate(step["failed"]):
                code = (f.get("failure") or {}).get("code") or f.get("finishKind")
                out.append((f"attempt {f['firstSeq']}–{f['lastSeq']} ({code}) vs committed, step "
                            f"{step['turn']}.{step['step']}", (ATTEMPT, step, i)))
        # steps with a model dispatch (what resolve_boundary accepts), in log order: one pass, not one per step
        dispatched = {(a.turn, a.step) for a in dispatch_attempts(events)}
        steps, seen = [], set()
        for ev in events:
            if ev.type == "step/start":
                t, s = ev.turn_step()
                if (t, s) not in seen:
                    seen.add((t, s))
                    if (t, s) in dispatched:
                        steps.append(f"{t}.{s}")
        for a, b in zip(steps, steps[1:]):
            out.append((f"requests of steps {a} → {b}", (REQUEST, a, b)))
    except Exception as e:  # keep the window usable
        out.append((f"error: {e}", (ERROR, str(e))))
    if find_parent and header is not None and header.parentSession and path:
        try:
            # the parent anywhere in the child's store (real Harness home: another project folder too)
            from ...store.lineage import find_parent as parent_in_store
            pp = parent_in_store(path) or find_parent_path(path)
        except Exception:       # e.g. a session inside a SQLite store: no sibling files to search
            pp = None
        if pp:
            out.append(("fork child vs parent", (FORK, pp)))
    return out


def diff_sides(events: list, header, spec: tuple) -> tuple:
    """(left title, left text, right title, right text, summary) of one comparison.
    A fork comparison reads the parent file: run it off the UI thread."""
    kind = spec[0]
    if kind == ATTEMPT:
        return attempt_sides(spec[1], spec[2])
    if kind == REQUEST:
        return request_sides(request_diff(EventsWithHeader(events, header), spec[1], spec[2]))
    if kind == FORK:
        from ...store.faces import open_reader
        pr = open_reader(spec[1])
        try:
            pe = list(pr.iter_events(logical=True))
            d = fork_diff(EventsWithHeader(events, header), EventsWithHeader(pe, pr.header))
        finally:
            pr.close()
        at = d.get("divergenceSeq")
        return fork_sides(d, event_lines(pe, at), event_lines(events, at))
    return "", str(spec[1] if len(spec) > 1 else ""), "", "", "diff failed"


def is_cheap(spec: tuple) -> bool:
    """Sides computed from precomputed data only (no pass over the events, no file)."""
    return spec[0] in (ATTEMPT, ERROR)


def compute_audit(reader, seq: Optional[int] = None, progress: Optional[Callable[[int, int], None]] = None,
                  phase: Optional[Callable[[str], None]] = None, session_id: Optional[str] = None) -> AuditData:
    """Decode ``reader``'s logical events and precompute what the window opens with.
    ``progress(done, total)`` follows the decoding; ``phase(text)`` names the later steps
    (both may raise to cancel)."""
    events = list(reader.iter_events(logical=True, progress=progress))
    header = reader.header
    data = AuditData(path=reader.path, session_id=session_id, header=header, events=events,
                     seq=seq if seq is not None else default_seq(events),
                     seqs=frozenset(ev.seq for ev in events))
    if phase:
        phase(f"tracing seq {data.seq}…" if data.seq is not None else "tracing…")
    data.trace, data.trace_error = trace_of(events, data.seq)
    if phase:
        phase("finding comparisons…")
    data.diffs = diff_specs(events, header, reader.path)
    if data.diffs:
        try:
            data.first_sides = diff_sides(events, header, data.diffs[0][1])
        except Exception as e:
            data.first_sides = ("", "", "", "", f"diff failed: {type(e).__name__}: {e}")
    if phase:
        phase("computing stats…")
    try:
        data.stats = compute_stats(events)
    except Exception as e:
        data.stats_error = f"stats failed: {e}"
    return data


def load_audit_job(job, path: str, session_id: Optional[str], seq: Optional[int]) -> AuditData:
    """Worker body (:meth:`app.ui.workers.Jobs.submit`): open, decode, precompute, close."""
    from ...store.faces import open_reader
    reader = open_reader(path, session_id)
    try:
        return compute_audit(reader, seq, progress=lambda d, t: job.report(d, t),
                             phase=lambda text: job.stream(("phase", text)), session_id=session_id)
    finally:
        reader.close()


def trace_job(job, events: list, seq: Optional[int]) -> tuple:
    job.check()
    return seq, *trace_of(events, seq)


def diff_job(job, events: list, header, index: int, spec: tuple) -> tuple:
    job.check()
    return index, diff_sides(events, header, spec)

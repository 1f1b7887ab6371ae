"""The history model's part for issue 16: the surface index job, compaction rows, the live face
and the face switch (physical/logical tail, attempts).

Mixed into :class:`~app.ui.history.model.HistoryModel` (its jobs, window, ``apply_changes`` and
signals); no widgets.  The decisions are the window's (:mod:`app.ui.history.window_truth`).
"""
from __future__ import annotations

from typing import Any, Optional

from .compaction import slim_summaries
from .pages import surface_job
from .window import Reset


class TruthModel:
    # provided by HistoryModel (declared for the type checker)
    jobs: Any
    window: Any
    path: Optional[str]
    session_id: Optional[str]
    pages: Any
    apply_changes: Any
    job_group: Any
    faceChanged: Any
    statsChanged: Any
    surfaceReady: Any
    physical: bool
    show_attempts: bool
    _want_face: Optional[tuple]
    set_loading: Any

    # the whole-log pass (app.ui.go_actions) brings the surface index of a log not read before: this open's state
    _by_pass = False             # a pass will come (announced at ``opened``, before start_surface)
    _waiting = False             # the cache had none: waiting for the pass
    _pass_over = False           # the pass ended (done, failed or cancelled)

    def expect_pass_surface(self) -> None:
        """The whole-log pass of this open hands its surface index over (:meth:`surface_from_pass`): the
        surface job reads only the cache, and the log itself only if the pass ends without one."""
        self._by_pass, self._waiting, self._pass_over = True, False, False

    def start_surface(self, read: bool = False) -> None:
        """The surface index in its own worker, after the tail page is shown (the first paint
        does not wait for it); no index: rows show no status."""
        read = read or not self._by_pass
        self._by_pass = False
        self.jobs.submit(surface_job, self.path, self.session_id, read, name="surface", group=self.job_group("surface"),
                         on_done=self._cached_surface, on_error=lambda msg: None)

    def _cached_surface(self, sindex) -> None:
        if sindex is not None:
            self._install_surface(sindex)
            return
        self._waiting = True
        if self._pass_over:
            self.surface_pass_ended()

    def surface_from_pass(self, sindex) -> None:
        """The whole-log pass's surface index (the first open reads the log once); None: the pass saved it in its
        cache file, read from there (:func:`~app.store.scan_child.surface_message`: the columns stay a map of the
        file, issue 36); if that read finds none after all, the log is read as when the pass brings none."""
        self._pass_over = True
        if sindex is None:
            if self.pages and self.window.sindex is None:
                self._waiting = False
                self.jobs.submit(surface_job, self.path, self.session_id, False, name="surface",
                                 group=self.job_group("surface"), on_done=self._cached_surface, on_error=lambda msg: None)
            return
        self._install_surface(sindex)

    def surface_pass_ended(self) -> None:
        """The pass ended: still no index (it failed or was cancelled): read it as before."""
        self._pass_over = True
        if self._waiting and self.pages and self.window.sindex is None:
            self._waiting = False
            self.start_surface(read=True)

    def _install_surface(self, sindex) -> None:
        if not self.pages or self.window.sindex is not None:    # (one index an open: the first to come)
            return
        slim_summaries(sindex)          # (the compactions' summary texts in a temporary file: issue 36)
        changes = self.window.set_surface(sindex)
        self.apply_changes(changes)
        if any(isinstance(c, Reset) for c in changes):
            self.faceChanged.emit()
        self.surfaceReady.emit()
        self.statsChanged.emit()

    def toggle_compaction(self, cid) -> None:
        """Expand or collapse one compaction row (its four underlying rows)."""
        self.apply_changes(self.window.toggle_compaction(cid))
        self.statsChanged.emit()

    def set_live_face(self, live: Optional[bool]) -> None:
        """The writer is live (the open turn drawn in flight) or gone (the crash closure)."""
        changes = self.window.set_live(live)
        if changes:
            self.apply_changes(changes)
            self.faceChanged.emit()
            self.statsChanged.emit()

    # ------------------------------------------------------------------ faces
    @property
    def wanted_face(self) -> tuple:
        """(physical, show_attempts) last asked for (the shown face may still be building)."""
        return self._want_face or (self.physical, self.show_attempts)

    def reset_face(self, physical: bool = False, show_attempts: bool = False) -> None:   # after close(), for open()
        self._want_face, self.window.physical, self.window.show_attempts = None, bool(physical), bool(show_attempts)

    def set_physical(self, on: bool) -> None:
        if bool(on) != self.wanted_face[0]:
            self._switch_face(bool(on), self.wanted_face[1])

    def set_show_attempts(self, on: bool) -> None:
        if bool(on) != self.wanted_face[1]:
            self._switch_face(self.wanted_face[0], bool(on))

    def _switch_face(self, physical: bool, show_attempts: bool) -> None:
        """Rows for the new face: at once when little must be built, else in the ``face``
        job group (the old rows stay up meanwhile; a newer switch cancels this one)."""
        from .model import FACE_SYNC_EVENTS          # read when called (the model module's setting)
        key = (physical, show_attempts)
        self._want_face = key
        todo = [lp for lp in self.pages if key not in lp.faces]
        work = sum(len(lp.events) for lp in todo)
        group = self.job_group("face")
        if work <= FACE_SYNC_EVENTS:
            if self.jobs.cancel_group(group):         # a slower switch still building: superseded
                self.set_loading(False)
            self._set_face(physical, show_attempts)
            return
        self.set_loading(True)

        pages = list(self.pages)                     # the pages as of this switch (the worker's snapshot)

        def build(job):
            for lp in pages:
                job.check()
                lp.rows_for(physical, show_attempts)

        def done(_):
            self.set_loading(False)
            self._set_face(physical, show_attempts)
        self.jobs.submit(build, serial=True, name="face", group=group, on_done=done,
                         on_error=lambda msg: self.set_loading(False))
        self.statsChanged.emit()

    def _set_face(self, physical: bool, show_attempts: bool) -> None:
        self.apply_changes(self.window.set_face(physical, show_attempts))
        self.statsChanged.emit()
        self.faceChanged.emit()

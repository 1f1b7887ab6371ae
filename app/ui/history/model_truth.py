"""The history model's part for issue 16: the surface index job, compaction rows, the live face.

Mixed into :class:`~app.ui.history.model.HistoryModel` (its jobs, window, ``_apply`` and
signals); no widgets.  The decisions are the window's (:mod:`app.ui.history.window_truth`).
"""
from __future__ import annotations

from typing import Any, Optional

from .pages import _surface_job
from .window import Reset


class TruthModel:
    # provided by HistoryModel (declared for the type checker)
    jobs: Any
    window: Any
    path: Optional[str]
    session_id: Optional[str]
    pages: Any
    _apply: Any
    _group: Any
    faceChanged: Any
    statsChanged: Any
    surfaceReady: Any

    def start_surface(self) -> None:
        """The surface index in its own worker, after the tail page is shown (the first paint
        does not wait for it); no index: rows show no status."""
        self.jobs.submit(_surface_job, self.path, self.session_id, name="surface", group=self._group("surface"),
                         on_done=self._install_surface, on_error=lambda msg: None)

    def _install_surface(self, sindex) -> None:
        if not self.pages:
            return
        changes = self.window.set_surface(sindex)
        self._apply(changes)
        if any(isinstance(c, Reset) for c in changes):
            self.faceChanged.emit()
        self.surfaceReady.emit()
        self.statsChanged.emit()

    def toggle_compaction(self, cid) -> None:
        """Expand or collapse one compaction row (its four underlying rows)."""
        self._apply(self.window.toggle_compaction(cid))
        self.statsChanged.emit()

    def set_live_face(self, live: Optional[bool]) -> None:
        """The writer is live (the open turn drawn in flight) or gone (the crash closure)."""
        changes = self.window.set_live(live)
        if changes:
            self._apply(changes)
            self.faceChanged.emit()
            self.statsChanged.emit()


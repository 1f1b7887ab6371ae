"""Live actions of the main window: what the open session's follower reports (status,
banner, session list badge) and the writer states of the listed sessions, polled in a
worker every ``STATES_POLL_MS``."""
from __future__ import annotations

from PySide6.QtCore import QObject, QTimer

from .session_model import live_states_job

STATES_POLL_MS = 4000        # session list: writer states refreshed this often
LIVE_STATUS = {"live": "● live", "idle": "◌ writer idle", "complete": "finished", "crashed": "✕ writer gone"}


class LiveActions(QObject):
    def __init__(self, win):
        super().__init__(win)
        self.win = win
        self._states_job = None
        self.timer = QTimer(self)
        self.timer.setInterval(STATES_POLL_MS)
        self.timer.timeout.connect(self.poll_states)
        win.history.liveStateChanged.connect(self._on_live_state)
        win.history.liveAppended.connect(lambda _n: win.update_banner())

    def store_listed(self) -> None:
        """A store was listed: poll its sessions' writer states now and from now on."""
        self.poll_states()
        self.timer.start()

    def _on_live_state(self, state: str):
        win = self.win
        if win.session is not None and state in LIVE_STATUS:
            win.sessions.model.set_states({win.session.key: state})
        if state.startswith("error"):
            win.statusBar().showMessage(f"Live follow stopped: {state[6:].strip()}", 8000)
        win.update_status()
        win.update_banner()

    def poll_states(self):
        """Which listed sessions a writer is touching (stat + tail of recent files, in a worker)."""
        model = self.win.sessions.model
        if self._states_job is not None or not model.session_count:
            return
        prev = dict(model.states)

        def done(states):
            self._states_job = None
            win = self.win
            if win.session is not None and win.history.live_state in LIVE_STATUS:
                states.pop(win.session.key, None)      # the follower knows better
            model.set_states(states)

        def failed(_msg):
            self._states_job = None
        self._states_job = self.win.jobs.submit(live_states_job, model.sessions(), prev,
                                                name="live-states", on_done=done, on_error=failed)

    def shutdown(self) -> None:
        self.timer.stop()
        self.win.history.stop_live()

"""The outline/problems child yields the cores while the user scrolls (app/store/childproc.py
``pause_background``, app/ui/scroll_pause.py): a paused child is really stopped, makes no
progress, goes on when resumed and its outline is the same as an unpaused one; a search child
(somebody waits for its hits) is never paused; in the window a scroll gesture pauses the pass, the
window's own moves of the scroll bar do not, and the outline completes once the user stops."""
from __future__ import annotations

import signal
import threading
import time

import pytest
from PySide6.QtWidgets import QAbstractSlider

from app.log.query.outline import build_outline
from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, find_all
from app.store.childproc import background_paused, background_pids, pause_background, resume_background
from app.store.scan_child import run_isolated
from app.tools.plant import PlantingSynth
from app.tools.synth import SessionSynth, write_jsonl

from test_ui_history import WAIT, make_window, open_and_wait  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="no SIGSTOP on this platform")


@pytest.fixture(autouse=True)
def _resumed(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))
    yield
    resume_background()


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    path = tmp_path_factory.mktemp("pause") / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=5), turns=40)
    return str(path)


def _state(pid: int) -> str:
    """The process state letter from /proc (T: stopped)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def _wait(pred, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def test_a_paused_outline_child_is_stopped_makes_no_progress_and_completes_after_resume(log):
    ref = build_outline(LogReader.open(log))
    msgs: list = []
    out: dict = {}
    assert pause_background() == 0            # nothing running yet; children started now are stopped
    t = threading.Thread(target=lambda: out.setdefault("ol", run_isolated("outline", log, None, {}, msgs.append,
                                                                          lambda: False)))
    t.start()
    try:
        assert _wait(lambda: background_pids(), 10)
        pid = background_pids()[0]
        assert _wait(lambda: _state(pid) == "T", 5)
        time.sleep(0.6)                        # a running pass reports progress every 40 ms
        assert msgs == [] and t.is_alive() and _state(pid) == "T"
    finally:
        assert resume_background() == 1
    t.join(60)
    assert not t.is_alive() and background_pids() == []
    ol = out["ol"]
    assert ol.complete and [x.to_dict() for x in ol.turns] == [x.to_dict() for x in ref.turns]
    assert len(ol.turns) == 40 and ol.problems == ref.problems and any(m[0] == "progress" for m in msgs)


def test_a_running_outline_child_is_stopped_where_it_is_and_goes_on(tmp_path):
    path = str(tmp_path / "big.jsonl")
    write_jsonl(path, SessionSynth(seed=9), turns=400)
    ref = build_outline(LogReader.open(path))
    msgs: list = []
    out: dict = {}
    t = threading.Thread(target=lambda: out.setdefault("ol", run_isolated("outline", path, None, {}, msgs.append,
                                                                          lambda: False)))
    t.start()
    assert _wait(lambda: any(m[0] == "progress" for m in msgs) or not t.is_alive(), 30)
    if t.is_alive():
        assert pause_background() == 1
        pid = background_pids()[0]
        assert _wait(lambda: _state(pid) == "T", 5)
        time.sleep(0.2)
        n = len(msgs)
        time.sleep(0.5)
        assert len(msgs) == n                  # no progress while stopped
        resume_background()
    t.join(120)
    ol = out["ol"]
    assert ol.complete and [x.to_dict() for x in ol.turns] == [x.to_dict() for x in ref.turns]


def test_a_search_child_is_not_paused(log, tmp_path):
    path = tmp_path / "planted.jsonl"
    s = PlantingSynth(seed=3, at_turn=2)
    write_jsonl(str(path), s, turns=6)
    opts = FindOptions(text="zebraquokka")
    pause_background()
    msgs: list = []
    t0 = time.monotonic()
    st = run_isolated("find", str(path), None, {"opts": opts, "limit": None}, msgs.append, lambda: False)
    assert time.monotonic() - t0 < 30 and background_paused()
    want, wst = find_all(LogReader.open(str(path)), opts)
    assert st.complete and st.hits == wst.hits >= 1


def test_a_scroll_gesture_pauses_the_outline_and_it_completes_once_the_user_stops(qtbot, make_window, log):  # noqa: F811
    from app.ui.scroll_pause import IDLE_MS
    win = make_window(page_size=3)
    ga = win.go_actions
    sb = win.view.verticalScrollBar()
    # the window's own moves (anchors, stick to the bottom) are no gesture
    sb.setValue(sb.value())
    assert not background_paused()
    # the user scrolls from before the session opens until well after: the pass starts stopped
    poke = {"n": 0}

    def gesture():
        poke["n"] += 1
        sb.triggerAction(QAbstractSlider.SliderAction.SliderSingleStepSub)
    gesture()
    assert background_paused()
    from PySide6.QtCore import QTimer
    timer = QTimer()
    timer.setInterval(IDLE_MS // 3)
    timer.timeout.connect(gesture)
    timer.start()
    ready: dict = {}
    ga.outlineReady.connect(lambda: ready.setdefault("t", time.monotonic()))
    open_and_wait(qtbot, win, log)
    qtbot.waitUntil(lambda: bool(background_pids()), timeout=WAIT)
    pid = background_pids()[0]
    qtbot.waitUntil(lambda: _state(pid) == "T", timeout=WAIT)
    qtbot.wait(800)
    assert ga.outline is None and not ready and _state(pid) == "T" and background_paused()
    timer.stop()
    stopped = time.monotonic()
    with qtbot.waitSignal(ga.outlineReady, timeout=WAIT * 2):
        pass
    assert not background_paused() and ready["t"] - stopped >= IDLE_MS / 1000 * 0.9
    ref = build_outline(LogReader.open(log))
    assert [x.to_dict() for x in ga.outline.turns] == [x.to_dict() for x in ref.turns]
    assert ga.outline_model.rowCount() == 40 and poke["n"] > 5
    # a wheel turn over the rows and a key press in the view are gestures too; the window's
    # shutdown lets stopped children go
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication
    vp = win.view.viewport()
    QApplication.sendEvent(vp, QWheelEvent(QPointF(50, 50), QPointF(vp.mapToGlobal(QPoint(50, 50))), QPoint(0, 0),
                                           QPoint(0, 120), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                                           Qt.ScrollPhase.NoScrollPhase, False))
    assert background_paused()
    qtbot.waitUntil(lambda: not background_paused(), timeout=WAIT)
    qtbot.keyClick(win.view, Qt.Key.Key_Up)
    assert background_paused()
    win.shutdown()
    assert not background_paused()


# --------------------------------------------------------------------------- the same frame after a prepend

def _screen_and_fresh(win):
    """The viewport as the window's backing store holds it (what is on screen) and a fresh render of it."""
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QImage
    vp = win.view.viewport()
    scr = win.windowHandle().screen().grabWindow(win.winId())
    tl = vp.mapTo(win, QPoint(0, 0))
    a = scr.copy(tl.x(), tl.y(), vp.width(), vp.height()).toImage().convertToFormat(QImage.Format.Format_RGB32)
    b = vp.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    return a, b


def test_rows_slid_in_above_the_screen_keep_the_frame_and_the_screen_shows_the_right_rows(qtbot, make_window, log):  # noqa: F811
    """Scrolling up through older pages: a prepend that leaves the same rows at the same places skips
    the repaint (``frames.kept``); what is on screen then is exactly a fresh render of the rows (same
    text, same places).  (The first version kept a frame while a scroll step's strip was still to
    be painted: the screen then showed the rows of before the step at the top; this catches it.)"""
    win = make_window(page_size=3)
    h = open_and_wait(qtbot, win, log)
    if getattr(win, "tour", None) is not None:
        win.tour.finish()
    v = win.view
    sb = v.verticalScrollBar()
    qtbot.wait(200)
    checks = 0
    for _ in range(60):
        if not h.has_more:
            break
        qtbot.waitUntil(lambda: not h.loading, timeout=20000)
        k0 = v.frames.kept
        sb.setSliderPosition(max(0, sb.value() - 60))      # a scroll step, painted before the page comes
        qtbot.wait(20)
        v.viewport().repaint()
        # (the older page is asked for here rather than by the scroll's own trigger, so the step is
        # painted before it slides in whatever the machine's load: a kept frame is then always tried)
        h.request_older()
        qtbot.waitUntil(lambda: not h.loading, timeout=20000)
        qtbot.wait(40)
        if v.frames.kept > k0:
            a, b = _screen_and_fresh(win)
            assert a == b
            checks += 1
        if checks >= 6:
            break
    if checks == 0:      # (seen only with both cores saturated: idle-time row work dirtied each frame first)
        pytest.skip("no frame was kept: every frame was marked changed before its page slid in")
    # every row on screen holds its own text: the fresh render draws each row's document
    top = v.indexAt(v.viewport().rect().topLeft())
    assert top.isValid() and v.delegate.document(h.rows[top.row()]).toPlainText().strip()


def test_a_screenshot_taken_before_a_kept_frame_is_painted_shows_the_rows(qtbot, make_window, log):  # noqa: F811
    """A frame marked to be kept (the backing store holds it) is kept only on the screen: a grab
    taken before the next paint (a screenshot right after a prepend) draws the rows as always."""
    from PySide6.QtCore import Qt
    win = make_window(page_size=3)
    open_and_wait(qtbot, win, log)
    v = win.view
    vp = v.viewport()
    qtbot.wait(200)
    want = vp.grab().toImage()
    fr = v.frames
    fr.clean, fr.keep = True, fr.signature()
    assert fr.keep is not None
    vp.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)      # as after the anchor of a prepend
    assert vp.grab().toImage() == want and fr.kept == 0
    assert not vp.testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent) and fr.keep is None

"""Colours for light and dark mode, following the system colour scheme.

``Theme.current()`` follows ``QStyleHints.colorScheme()`` (and, when the platform does
not say, the lightness of the application palette).  ``apply_palette`` gives Fusion a
matching palette so a forced or system dark mode is readable everywhere.
"""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette


@dataclass(frozen=True)
class Theme:
    dark: bool
    base: str          # list background
    fg: str            # body text
    dim: str           # secondary text
    row_bg: str        # message rows
    user_bg: str
    card_bg: str       # tool cards
    card_border: str
    mono_bg: str
    boundary: str      # turn/step separators
    selected: str      # selection outline
    selected_bg: str
    match_bg: str      # search match
    match_fg: str
    current_match_bg: str
    bad_bg: str        # torn / malformed rows
    bad_fg: str
    synth_bg: str      # synthesized closure rows
    synth_fg: str
    hidden_bg: str     # failed / retried attempts
    hidden_fg: str
    accent_user: str
    accent_assistant: str
    accent_tool: str
    accent_result: str
    accent_error: str
    accent_event: str
    ok: str
    warn: str
    err: str
    diff_add: str
    diff_del: str
    link: str

    @property
    def generation(self) -> str:
        return "dark" if self.dark else "light"

    def color(self, name: str) -> QColor:
        return QColor(getattr(self, name))

    @staticmethod
    def current(force: str = "auto") -> Theme:
        return DARK if is_dark(force) else LIGHT


LIGHT = Theme(
    dark=False, base="#f6f7f9", fg="#1d2127", dim="#5f6773", row_bg="#ffffff", user_bg="#eef4ff",
    card_bg="#fbfbfc", card_border="#d4d8de", mono_bg="#f1f3f5", boundary="#8a93a0",
    selected="#2f6fdb", selected_bg="#e3ecfb", match_bg="#ffe58a", match_fg="#000000",
    current_match_bg="#ff9d3b", bad_bg="#fde8e8", bad_fg="#9b1c1c", synth_bg="#fff6dd", synth_fg="#7a5300",
    hidden_bg="#f3eefa", hidden_fg="#5b3d8f", accent_user="#2f6fdb", accent_assistant="#1f9d66",
    accent_tool="#b7791f", accent_result="#8a6d3b", accent_error="#c53030", accent_event="#9aa3ae",
    ok="#1f7a4d", warn="#a86400", err="#c53030", diff_add="#1f7a4d", diff_del="#b42318", link="#2f6fdb",
)

DARK = Theme(
    dark=True, base="#16181c", fg="#e4e7eb", dim="#9aa3ae", row_bg="#1f2227", user_bg="#1d2738",
    card_bg="#23272e", card_border="#3a404a", mono_bg="#2a2f37", boundary="#7d8794",
    selected="#6ea2ff", selected_bg="#233350", match_bg="#8a6d00", match_fg="#ffffff",
    current_match_bg="#c2570c", bad_bg="#3d1f22", bad_fg="#ff9b9b", synth_bg="#3a3118", synth_fg="#f2c96b",
    hidden_bg="#2c2540", hidden_fg="#c9b3f5", accent_user="#6ea2ff", accent_assistant="#4cc38a",
    accent_tool="#e0a84f", accent_result="#c9a96b", accent_error="#ff6b6b", accent_event="#6b7480",
    ok="#4cc38a", warn="#f0b44c", err="#ff7b7b", diff_add="#5fd39a", diff_del="#ff8a80", link="#8ab4ff",
)


def system_scheme() -> str:
    app = QGuiApplication.instance()
    if app is None:
        return "light"
    try:
        scheme = QGuiApplication.styleHints().colorScheme()
        if scheme == Qt.ColorScheme.Dark:
            return "dark"
        if scheme == Qt.ColorScheme.Light:
            return "light"
    except AttributeError:  # Qt < 6.5
        pass
    win = QGuiApplication.palette().color(QPalette.ColorRole.Window)
    return "dark" if win.lightnessF() < 0.45 else "light"


def is_dark(force: str = "auto") -> bool:
    if force in ("dark", "light"):
        return force == "dark"
    return system_scheme() == "dark"


def palette_for(theme: Theme) -> QPalette:
    p = QPalette()
    c = QColor
    if theme.dark:
        roles = {
            QPalette.ColorRole.Window: "#1b1d21", QPalette.ColorRole.WindowText: theme.fg,
            QPalette.ColorRole.Base: theme.base, QPalette.ColorRole.AlternateBase: "#1f2227",
            QPalette.ColorRole.Text: theme.fg, QPalette.ColorRole.Button: "#262a30",
            QPalette.ColorRole.ButtonText: theme.fg, QPalette.ColorRole.Highlight: "#2f5fb3",
            QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.ToolTipBase: "#2a2f37",
            QPalette.ColorRole.ToolTipText: theme.fg, QPalette.ColorRole.PlaceholderText: theme.dim,
            QPalette.ColorRole.Link: theme.link, QPalette.ColorRole.Mid: "#3a404a",
            QPalette.ColorRole.Dark: "#101214", QPalette.ColorRole.Light: "#3a404a",
            QPalette.ColorRole.BrightText: "#ffffff",
        }
    else:
        roles = {
            QPalette.ColorRole.Window: "#eceef1", QPalette.ColorRole.WindowText: theme.fg,
            QPalette.ColorRole.Base: "#ffffff", QPalette.ColorRole.AlternateBase: "#f5f6f8",
            QPalette.ColorRole.Text: theme.fg, QPalette.ColorRole.Button: "#e6e8ec",
            QPalette.ColorRole.ButtonText: theme.fg, QPalette.ColorRole.Highlight: "#2f6fdb",
            QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.ToolTipBase: "#ffffe8",
            QPalette.ColorRole.ToolTipText: "#000000", QPalette.ColorRole.PlaceholderText: theme.dim,
            QPalette.ColorRole.Link: theme.link,
        }
    for role, col in roles.items():
        p.setColor(role, c(col))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, c(theme.dim))
    return p


def apply_palette(app, theme: Theme) -> None:
    """Give the application a palette matching ``theme`` (Fusion renders it faithfully)."""
    app.setPalette(palette_for(theme))

"""``session-lens gui [PATH]``: the desktop window (also the default with no subcommand)."""
from __future__ import annotations

from .main import COMMANDS


def _cfg_gui(p):
    p.add_argument("path", nargs="?", help="Harness home, project folder or session file (default: the demo store)")
    p.add_argument("--screenshot", metavar="OUT.png", help="render the window once the tail page is shown, save, exit")
    p.add_argument("--physical", action="store_true", help="start on the physical tail (stored rows only)")
    p.add_argument("--attempts", action="store_true", help="show hidden (failed/retried) attempts")
    p.add_argument("--select", type=int, metavar="SEQ", help="select the row of this seq after loading")
    p.add_argument("--request", action="store_true", help="with --select: show the Request inspector tab")
    p.add_argument("--as-written", action="store_true",
                   help="the Request tab starts on a v3 log's writer-era shape (its 'As written' toggle)")
    p.add_argument("--wait-index", action="store_true",
                   help="with --screenshot: also wait for the seq index of the session and print how it was built")
    p.add_argument("--size", metavar="WxH", help="window size, e.g. 1400x860")
    p.add_argument("--page-size", type=int, default=50, metavar="N", help="messages per history page (default 50)")
    p.add_argument("--theme", choices=("auto", "light", "dark"), default="auto",
                   help="colour scheme (default: follow the system)")


def _run_gui(args):
    import os
    from ..ui.app import run_gui
    if args.as_written:
        os.environ["SESSION_LENS_REQUEST_AS_WRITTEN"] = "1"          # read by the Request tab (request_view)
    return run_gui(args.path, screenshot=args.screenshot, physical=args.physical, attempts=args.attempts,
                   select=args.select, size=args.size, page_size=args.page_size, theme=args.theme,
                   request=args.request, wait_index=args.wait_index)


COMMANDS["gui"] = ("the desktop history browser", _cfg_gui, _run_gui)

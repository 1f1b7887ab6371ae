"""``session-lens doctor [--json]``: what this installation runs on and whether each part works
(app/store/doctor.py makes the report; Help › Diagnostics shows the same one).

The Qt part comes from the worker ``qt-probe`` (app/ui/diagnostics_dialog.py), a child process of the
one launcher: a platform plugin that cannot load ends that child, and the doctor reports it."""
from __future__ import annotations

from typing import Any

from .main import COMMANDS, emit


def qt_report() -> dict[str, Any]:
    from ..store.childproc import ChildFailed, NoChild, run_child, worker_argv
    try:
        got = run_child(worker_argv("qt-probe"), None, lambda _m: None, None, "Qt check")
    except (ChildFailed, NoChild) as e:
        return {"error": f"Qt did not start: {e}"}
    return got if isinstance(got, dict) else {"error": "Qt check gave no facts"}


def _cfg_doctor(p):
    p.add_argument("--no-workers", action="store_true", help="skip the worker checks (they start a process each)")


def _run_doctor(args):
    from pathlib import Path

    from ..store.doctor import report, report_text
    qt = qt_report()
    settings = qt.pop("settings", None)           # (app.ui's config folder, from the Qt check's child)
    rep = report(qt=qt, settings=Path(settings) if settings else None, workers=not args.no_workers)
    emit(args, rep, lambda: report_text(rep))


COMMANDS["doctor"] = ("check this installation: versions, Qt, fonts, scanner, zstd, paths, every worker kind",
                      _cfg_doctor, _run_doctor)

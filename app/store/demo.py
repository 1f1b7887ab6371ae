"""The shipped demo store (``resources/demo``) is never written: a fork of one of its sessions goes
to a folder in the user's data directory (``platformdirs.user_data_dir("session-lens")/demo-forks``;
``$SESSION_LENS_DATA_DIR`` overrides the data directory), in the demo's own layout (``sessions/``).
:func:`app.store.forking.fork` applies it when no destination is given; the fork dialog says where."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

APP_SLUG = "session-lens"


def shipped_demo() -> Path:
    """``resources/demo`` beside the source tree (a checkout, the packaged bundle), else the copy an
    installed wheel carries (``app/_resources/demo``, put there by setup.py)."""
    app_dir = Path(__file__).resolve().parents[1]
    beside = app_dir.parent / "resources" / "demo"
    return beside if beside.is_dir() else app_dir / "_resources" / "demo"


def in_demo(path: str, demo: Optional[Path] = None) -> bool:
    """``path`` is inside the shipped demo store."""
    root = os.path.realpath(demo or shipped_demo())
    return os.path.commonpath([root, os.path.realpath(path)]) == root


def data_dir() -> Path:
    env = os.environ.get("SESSION_LENS_DATA_DIR")
    if env:
        return Path(env)
    import platformdirs
    return Path(platformdirs.user_data_dir(APP_SLUG, appauthor=False))


def demo_fork_store() -> Path:
    """Where forks of demo sessions go (a store in the demo's layout)."""
    return data_dir() / "demo-forks"


def fork_store_for(path: str) -> Optional[str]:
    """The store a fork of ``path`` goes to when none is chosen: the demo fork store for a demo
    session, else None (beside the parent)."""
    return str(demo_fork_store()) if in_demo(path) else None


def prepare(store: str) -> None:
    """Create the demo fork store's ``sessions`` folder (at fork time; a preview writes nothing)."""
    os.makedirs(os.path.join(store, "sessions"), exist_ok=True)

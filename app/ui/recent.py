"""Recently opened stores, kept in the user config dir (platformdirs)."""
from __future__ import annotations

import json
import os
from pathlib import Path

MAX_RECENT = 12


def config_dir() -> Path:
    env = os.environ.get("SESSION_LENS_CONFIG_DIR")
    if env:
        return Path(env)
    from platformdirs import user_config_dir
    return Path(user_config_dir("session-lens", appauthor=False))


def _file() -> Path:
    return config_dir() / "recent.json"


def load() -> list[str]:
    try:
        data = json.loads(_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [p for p in data.get("stores", []) if isinstance(p, str)][:MAX_RECENT] if isinstance(data, dict) else []


def add(path: str) -> list[str]:
    p = os.path.abspath(os.path.expanduser(path))
    items = [x for x in load() if x != p]
    items.insert(0, p)
    items = items[:MAX_RECENT]
    try:
        f = _file()
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.with_suffix(".tmp")
        tmp.write_text(json.dumps({"stores": items}, indent=1), encoding="utf-8")
        os.replace(tmp, f)
    except OSError:
        pass
    return items


def clear() -> None:
    try:
        _file().unlink()
    except OSError:
        pass

"""Window preferences kept between runs (theme, font size, Markdown, geometry, the tour seen),
as JSON in the user config dir (platformdirs; ``SESSION_LENS_CONFIG_DIR`` overrides it, as
for :mod:`app.ui.recent`).  Written atomically; unreadable files count as empty."""
from __future__ import annotations

import json
import os

from .recent import config_dir


def _file():
    return config_dir() / "settings.json"


def load() -> dict:
    try:
        data = json.loads(_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def update(**values) -> dict:
    data = load()
    data.update(values)
    try:
        f = _file()
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(tmp, f)
    except OSError:
        pass
    return data

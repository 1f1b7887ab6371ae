"""Session Lens desktop UI (PySide6).  See app/ui/app.py for the entry point."""
from .qtcompat import keep_none_alive as _keep_none_alive

_keep_none_alive()

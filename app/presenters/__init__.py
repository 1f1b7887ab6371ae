"""Tool presenters: registered by tool name, computed on the fly, never persisted."""
from . import builtin  # noqa: F401  (registers the built-in presenters)
from .registry import (generic_view, present_call, present_result, register, registered,  # noqa: F401
                       views_for_page)

"""Tool presenters (spec §8 "Tool views"): registered by tool name, computed on the fly from
events, never persisted.  No Qt here: the UI renders the view dicts, the CLI embeds them."""
from . import builtin  # noqa: F401  (registers the built-in presenters)
from .registry import (call_id_of_result, generic_view, present_call, present_result,  # noqa: F401
                       register, registered, tool_result_of, unregister, views_for_page)

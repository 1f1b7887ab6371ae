"""Typed access to the decoded JSON the core reads (event payloads, messages, request headers).

A decoded payload is JSON: ``None``, ``bool``, ``int``, ``float``, ``str``, a list or an object.
The log is untrusted input, so code that reads a payload narrows each value before using it;
these helpers do that narrowing in one place, so callers get ``JsonObj``/``list`` values (an empty
one where the value is missing or of another type) and mypy checks what they do with them.

No I/O, no Qt; nothing here changes a value, it only selects and narrows.
"""
from __future__ import annotations

from typing import Any, TypeAlias

# A JSON object as decoded (keys are strings; values are JSON, read through the helpers below).
JsonObj: TypeAlias = dict[str, Any]
# A JSON array as decoded.
JsonList: TypeAlias = list[Any]


def as_obj(value: object) -> JsonObj | None:
    """``value`` when it is a JSON object, else None."""
    return value if isinstance(value, dict) else None


def obj(value: object) -> JsonObj:
    """``value`` (the same dict, not a copy) when it is a JSON object, else a new empty one."""
    return value if isinstance(value, dict) else {}


def items(value: object) -> JsonList:
    """``value`` when it is a JSON array, else an empty list."""
    return value if isinstance(value, list) else []


def blocks(message: object) -> list[JsonObj]:
    """The content blocks of a model message that are objects (others are skipped)."""
    return [b for b in items(message.get("content") if isinstance(message, dict) else None)
            if isinstance(b, dict)]


# A tool-call id as logged.  dsh writes strings, but the log is untrusted: ids are kept exactly as
# read (never coerced, so a call and its result still pair up) and only compared and used as keys.
CallId: TypeAlias = Any

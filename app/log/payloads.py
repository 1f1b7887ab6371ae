"""Typed access to the decoded JSON the core reads (event payloads, messages, request headers).

A decoded payload is JSON: ``None``, ``bool``, ``int``, ``float``, ``str``, a list or an object.
The log is untrusted input, so code that reads a payload narrows each value before using it;
these helpers do that narrowing in one place, so callers get ``JsonObj``/``list`` values (never
``None`` where a container is expected) and mypy checks what they do with them.

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
    """``value`` when it is a JSON object, else an empty one (a fresh dict: safe to fill)."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> JsonList | None:
    """``value`` when it is a JSON array, else None."""
    return value if isinstance(value, list) else None


def items(value: object) -> JsonList:
    """``value`` when it is a JSON array, else an empty list."""
    return value if isinstance(value, list) else []


def get_obj(parent: object, key: str) -> JsonObj | None:
    """``parent[key]`` when ``parent`` is an object and the value is an object, else None."""
    return as_obj(parent.get(key)) if isinstance(parent, dict) else None


def get_list(parent: object, key: str) -> JsonList | None:
    """``parent[key]`` when ``parent`` is an object and the value is an array, else None."""
    return as_list(parent.get(key)) if isinstance(parent, dict) else None


def get_str(parent: object, key: str) -> str | None:
    """``parent[key]`` when it is a string, else None."""
    v = parent.get(key) if isinstance(parent, dict) else None
    return v if isinstance(v, str) else None


def get_int(parent: object, key: str) -> int | None:
    """``parent[key]`` when it is an integer (not a bool), else None."""
    v = parent.get(key) if isinstance(parent, dict) else None
    return v if type(v) is int else None


def blocks(message: object) -> list[JsonObj]:
    """The content blocks of a model message that are objects (others are skipped)."""
    return [b for b in items(message.get("content") if isinstance(message, dict) else None)
            if isinstance(b, dict)]

# A tool-call id as logged.  dsh writes strings, but the log is untrusted: ids are kept exactly as
# read (never coerced, so a call and its result still pair up) and only compared and used as keys.
CallId: TypeAlias = Any

"""Typed access to the decoded JSON the core reads (event payloads, messages, request headers).

A decoded payload is JSON: ``None``, ``bool``, ``int``, ``float``, ``str``, a list or an object.
The log is untrusted input, so code that reads a payload narrows each value before using it;
these helpers do that narrowing in one place, so callers get ``JsonObj``/``list`` values (an empty
one where the value is missing or of another type) and mypy checks what they do with them.

Message content becomes display text in one place, :func:`content_text` (the callers that show
it differently — a placeholder for images, pretty JSON for unknown blocks, only some block
types — say so with its parameters).

No I/O, no Qt; nothing here changes a value, it only selects and narrows.
"""
from __future__ import annotations

import json
from typing import Any, Optional, TypeAlias
from collections.abc import Callable, Collection

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


# --------------------------------------------------------------------------- content -> display text

def value_text(value: object) -> str:
    """A JSON value as text: a string as is, null (or missing) as "", anything else as compact JSON
    (non-ASCII kept; ``str`` for a value that is not JSON)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def image_label(block: JsonObj) -> str:
    """``[image NAME]`` for an image block (NAME: the attachment's name, else its media type)."""
    att = obj(block.get("attachment"))
    name = att.get("name") or att.get("mediaType") or ""
    return f"[image {name}]".replace(" ]", "]")


def block_or_json(block: object) -> str:
    """A block no other rule took: a bare string as is, a block's string ``text``, else its JSON."""
    if isinstance(block, str):
        return block
    if isinstance(block, dict) and isinstance(text := block.get("text"), str):
        return text
    return value_text(block)


def content_parts(content: object, *, kinds: Collection[str] = ("text", "reasoning"),
                  image: Optional[Callable[[JsonObj], str]] = image_label, nested: bool = True,
                  other: Optional[Callable[[object], str]] = block_or_json,
                  skip_empty: bool = True) -> list[str]:
    """The display text of each block of message ``content`` (see :func:`content_text`)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return [] if content is None else [value_text(content)]
    out: list[str] = []
    for b in content:
        if isinstance(b, dict):
            t = b.get("type")
            if isinstance(t, str) and t in kinds:
                s = value_text(b.get("text"))
            elif t == "image" and image is not None:
                s = image(b)
            elif t == "tool-result" and nested:
                s = content_text(b.get("content"), kinds=kinds, image=image, nested=nested, other=other,
                                 skip_empty=skip_empty)
            elif other is not None:
                s = other(b)
            else:
                continue
        elif other is not None:
            s = other(b)
        else:
            continue
        if s or not skip_empty:
            out.append(s)
    return out


def content_text(content: object, *, kinds: Collection[str] = ("text", "reasoning"),
                 image: Optional[Callable[[JsonObj], str]] = image_label, nested: bool = True,
                 other: Optional[Callable[[object], str]] = block_or_json,
                 sep: str = "\n", skip_empty: bool = True) -> str:
    """Message content (a list of blocks, or a bare string) as the text a user reads.

    A bare string is the text; null is ""; another non-list value is its JSON.  Each block:
    a block whose ``type`` is in ``kinds`` gives its ``text``; an image gives ``image(block)``;
    a ``tool-result`` block (``nested``) gives its own content's text; anything else gives
    ``other(block)``.  ``image``/``other`` None: such blocks are left out.  The parts are
    joined by ``sep``; ``skip_empty`` leaves out parts with no text.
    """
    return sep.join(content_parts(content, kinds=kinds, image=image, nested=nested, other=other,
                                  skip_empty=skip_empty))

"""Event model of a dsh session log (spec §1.4, §2).

Pure data: no I/O, no Qt.  Every decoded row keeps its stored bytes (``raw``) so
raw views and exports are exact; ``data`` is the decoded JSON payload (after the
in-memory legacy conversions of spec §1.7, which set ``legacy``).  Typed views of
the known payloads are msgspec tagged structs (:func:`typed`).
"""
from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, Literal, Optional, Union, cast

import msgspec

from .payloads import JsonList, JsonObj, blocks, content_text

if TYPE_CHECKING:
    from typing_extensions import TypeIs

# --------------------------------------------------------------------------- vocabulary

CORE_TYPES = frozenset({
    "turn/start", "turn/end", "step/start", "step/end", "user/message", "assistant/chunk",
    "assistant/message", "tool/call", "tool/result", "request/header", "request/context",
    "todo/write", "session/end-seed",
})
PLUGIN_TYPES = frozenset({
    "agent/inbox/spliced", "agent-preset/selected", "approval/asked", "approval/decided",
    "approval/policy", "command/run", "command/done", "compaction/start", "compaction/summary",
    "compaction/prune", "compaction/end", "feedback/record", "goal/change", "hook/invoked",
    "hook/result", "llm/retry", "llm/retry-started", "permission/preset", "plan/mode",
    "sandbox/mode", "schedule/change", "session/title", "session/title-llm-request",
    "subagent/descriptor", "team/member", "team/task", "team/message/queued",
    "team/message/delivered", "tool/code-dispatch-start", "tool/code-dispatch",
    "tool-workflow/run-start", "tool-workflow/run-end", "tool-workflow/agent-start",
    "tool-workflow/agent-end", "web/deepseek-search-llm-request",
})
KNOWN_TYPES = CORE_TYPES | PLUGIN_TYPES
SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
PACKED_TAGS = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta",
               "tool-call-chunks": "tool-call-delta"}
MAX_SAFE_INT = 2 ** 53 - 1


# --------------------------------------------------------------------------- envelope

class Event(msgspec.Struct, kw_only=True, dict=True):
    """One logical event (a packed row expands to several, sharing ``raw``)."""
    seq: int
    type: str
    time: int
    data: Any
    surface_op: Any = None            # "append" | {"op":"replace","start","end"} | None
    source_event_seqs: Optional[JsonList] = None   # as logged (v1+: ranges decoded to seqs)
    ignorable: Optional[bool] = None
    raw: bytes = b""                  # the stored row bytes (without the trailing newline)
    pos: Any = None                   # physical position of the row (source-specific, sortable)
    offset: int = -1                  # byte offset of the row in the decoded text (raw/zstd)
    line: Optional[int] = None        # 1-based line number in the decoded text, when known
    member: Optional[int] = None      # index inside a packed row
    packed: Optional[str] = None      # packed row tag when expanded from one
    legacy: Optional[str] = None      # which §1.7 conversion was applied
    known: bool = True                # type in the known vocabulary
    synthesized: bool = False         # a logical-closure row, not on disk

    # ---- convenience
    @property
    def is_surface(self) -> bool:
        return (self.type in SURFACE_TYPES or (self.type in ("system/message", "developer/message") and self.known)) \
            and self.surface_op is not None

    @property
    def is_append(self) -> bool:
        return isinstance(self.surface_op, str) and self.surface_op == "append"

    @property
    def is_replace(self) -> bool:
        return isinstance(self.surface_op, dict) and self.surface_op.get("op") == "replace"

    def turn_step(self) -> tuple[object, object]:
        d = self.data
        if isinstance(d, dict):
            return d.get("turn"), d.get("step")
        return None, None

    def envelope(self) -> JsonObj:
        """The logical SessionEvent as JSON-ready dict (key order: type, seq, time, data, …)."""
        out: JsonObj = {"type": self.type, "seq": self.seq, "time": self.time, "data": self.data}
        if self.source_event_seqs is not None:
            out["sourceEventSeqs"] = self.source_event_seqs
        if self.surface_op is not None:
            out["surfaceOp"] = self.surface_op
        if self.ignorable:
            out["ignorable"] = True
        return out


BadKind = Literal["torn", "malformed", "bad-packed", "bad-envelope", "bad-utf8", "corrupt-frame", "over-limit"]


class BadRow(msgspec.Struct, kw_only=True):
    """A stored row that could not be read as an event: kept, shown, reported."""
    kind: BadKind
    reason: str
    raw: bytes
    pos: Any = None
    offset: int = -1
    line: Optional[int] = None
    # a legal row over one of Session Lens's own limits (kind "over-limit"): the seqs it holds, when
    # known (a packed row's seq0 and member count), so contiguity is not cut there
    seqs: Optional[tuple[int, int]] = None


class Problem(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Something a reader noticed; the log still opens unless ``fatal``."""
    code: str
    message: str
    line: Optional[int] = None
    offset: Optional[int] = None
    seq: Optional[int] = None
    fatal: bool = False

    def __str__(self) -> str:
        where = []
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.offset is not None and self.offset >= 0:
            where.append(f"byte {self.offset}")
        if self.seq is not None:
            where.append(f"seq {self.seq}")
        return f"{self.code}: {self.message}" + (f" ({', '.join(where)})" if where else "")


class Header(msgspec.Struct, kw_only=True, omit_defaults=True):
    id: str
    version: Optional[int] = None
    createdAt: Optional[int] = None
    cwd: Optional[str] = None
    parentSession: Optional[str] = None
    seedLength: Optional[int] = None
    origin: Optional[str] = None
    delegationDepth: Optional[int] = None
    agentPreset: Optional[str] = None
    isSeeded: Optional[bool] = None     # v2+ headers (the inherited cut is the last tagged end-seed)

    def to_dict(self) -> JsonObj:
        # a Struct always converts to a dict (msgspec types the result as Any)
        return cast(JsonObj, msgspec.to_builtins(self))


Item = Union[Event, BadRow]


def is_event(item: object) -> TypeIs[Event]:
    return isinstance(item, Event)      # (an Event, or one decoded when first read: app/log/format/lazyevent.py)


# --------------------------------------------------------------------------- typed payloads
# Tagged structs for the known core payloads.  ``typed(event)`` converts the decoded
# ``data`` into them; payloads of unknown or plugin types stay plain JSON.

class _Base(msgspec.Struct, kw_only=True, forbid_unknown_fields=False):
    pass


class Message(_Base):
    role: str
    content: JsonList
    id: Optional[str] = None
    source: Optional[JsonObj] = None


class Usage(_Base):
    inputTokens: int = 0
    outputTokens: int = 0
    cacheReadTokens: Optional[int] = None
    cacheWriteTokens: Optional[int] = None
    reasoningTokens: Optional[int] = None


class TurnStart(_Base, tag="turn/start"):
    turn: int


class TurnEnd(_Base, tag="turn/end"):
    turn: int
    reason: JsonObj


class StepStart(_Base, tag="step/start"):
    turn: int
    step: int


class StepEnd(_Base, tag="step/end"):
    turn: int
    step: int


class UserMessage(Message, tag="user/message"):
    pass


class AssistantChunk(_Base, tag="assistant/chunk"):
    turn: int
    step: int
    chunk: JsonObj


class AssistantMessage(_Base, tag="assistant/message"):
    turn: int
    step: int
    message: Message
    usage: Optional[Usage] = None
    interrupted: Optional[bool] = None


class ToolCall(_Base, tag="tool/call"):
    turn: int
    step: int
    callId: str
    name: str
    arguments: str


class ToolResult(_Base, tag="tool/result"):
    turn: int
    step: int
    message: Message
    error: Optional[JsonObj] = None
    meta: Optional[Any] = None


class RequestHeader(_Base, tag="request/header"):
    header: JsonObj
    reason: Optional[str] = None


class RequestContext(_Base, tag="request/context"):
    provider: Optional[str] = None
    model: Optional[str] = None
    contextWindow: Optional[int] = None


class TodoWrite(_Base, tag="todo/write"):
    todos: JsonList


class EndSeed(_Base, tag="session/end-seed"):
    pass


CorePayload = Union[TurnStart, TurnEnd, StepStart, StepEnd, UserMessage, AssistantChunk, AssistantMessage,
                    ToolCall, ToolResult, RequestHeader, RequestContext, TodoWrite, EndSeed]
_CORE_CLASSES: tuple[type[CorePayload], ...] = (
    TurnStart, TurnEnd, StepStart, StepEnd, UserMessage, AssistantChunk, AssistantMessage,
    ToolCall, ToolResult, RequestHeader, RequestContext, TodoWrite, EndSeed)
TYPED = {cls.__struct_config__.tag: cls for cls in _CORE_CLASSES}


def typed(event: Event) -> Optional[CorePayload]:
    """The payload of a known core event as its tagged struct; None for other types.

    Raises msgspec.ValidationError when the payload does not have the documented shape.
    """
    cls = TYPED.get(event.type)
    if cls is None:
        return None
    return msgspec.convert(event.data, type=cls)


# --------------------------------------------------------------------------- helpers

def message_text(message: object, kinds: Collection[str] = ("text",)) -> str:
    """Concatenated text of a message's blocks of the given kinds (other blocks left out)."""
    return content_text(blocks(message), kinds=kinds, image=None, nested=False, other=None, sep="")


def event_message(event: Event) -> Optional[JsonObj]:
    """The model message an event carries (spec §3 deriveEventMessage), or None."""
    d = event.data
    if not isinstance(d, dict):
        return None
    if event.type == "user/message":
        return d
    if event.type in ("assistant/message", "tool/result", "system/message", "developer/message"):
        m = d.get("message")
        return m if isinstance(m, dict) else None
    return None

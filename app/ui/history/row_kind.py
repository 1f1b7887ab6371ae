"""What a display row stands for (``Row.kind``): pure Python, no Qt.

A ``str`` enum: a member equals, hashes and serialises as its value (``RowKind.TOOL_CALL ==
"tool-call"``, ``json.dumps`` writes ``"tool-call"``), so exports, Markdown copies and the
filters keyed by these strings read the same as before the enum; mypy checks every row built.
"""
from __future__ import annotations

from enum import StrEnum


class RowKind(StrEnum):
    USER = "user"                        # user/message
    ASSISTANT = "assistant"              # assistant/message (its attempt's chunks collapsed into it)
    TOOL_CALL = "tool-call"
    TOOL_RESULT = "tool-result"
    TURN_START = "turn-start"
    TURN_END = "turn-end"
    STEP_START = "step-start"
    STEP_END = "step-end"
    STREAMING = "streaming"              # an attempt still streaming on the tail (or cut off: its writer is gone)
    ATTEMPT_FAILED = "attempt-failed"    # a failed model call (shown with "hidden attempts")
    ATTEMPT_OPEN = "attempt-open"        # an attempt that ended without a message
    BAD = "bad"                          # a stored row that is not an event (torn, malformed)
    EVENT = "event"                      # any other event type (generic row)
    NOTICE = "notice"                    # llm/retry, llm/retry-started
    GAP = "gap"                          # seqs missing between two loaded rows (first_seq..last_seq)
    COMPACTION = "compaction"            # a compaction group folding the rows it replaced


BOUNDARY_KINDS = frozenset({RowKind.TURN_START, RowKind.TURN_END, RowKind.STEP_START, RowKind.STEP_END})
CARD_KINDS = frozenset({RowKind.TOOL_CALL, RowKind.TOOL_RESULT})
# rows built from an attempt's chunks (no assistant/message for them on the page)
ATTEMPT_KINDS = frozenset({RowKind.STREAMING, RowKind.ATTEMPT_FAILED, RowKind.ATTEMPT_OPEN})
# event type -> the kind of its row (assistant/chunk and assistant/attempt rows depend on their attempt;
# any other type is a generic ``EVENT`` row)
EVENT_ROW_KINDS = {
    "user/message": RowKind.USER, "assistant/message": RowKind.ASSISTANT,
    "tool/call": RowKind.TOOL_CALL, "tool/result": RowKind.TOOL_RESULT,
    "turn/start": RowKind.TURN_START, "turn/end": RowKind.TURN_END,
    "step/start": RowKind.STEP_START, "step/end": RowKind.STEP_END,
    "llm/retry": RowKind.NOTICE, "llm/retry-started": RowKind.NOTICE,
}

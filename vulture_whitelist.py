"""Reviewed vulture findings (make check runs `vulture app tests bench vulture_whitelist.py`).

Each name below was looked at and kept on purpose; the reason is the comment above its group. Clearly dead
code is deleted instead of listed. Regenerate candidates with `vulture app tests bench --make-whitelist`.
"""
# ruff: noqa
_ = object()

# Event-schema fields (msgspec structs mirror the dsh format: decoded and re-encoded, read by exports/--json)
createdAt  # app/log/format/model.py
delegationDepth  # app/log/format/model.py
agentPreset  # app/log/format/model.py
inputTokens  # app/log/format/model.py
outputTokens  # app/log/format/model.py
cacheReadTokens  # app/log/format/model.py
cacheWriteTokens  # app/log/format/model.py
reasoningTokens  # app/log/format/model.py
callId  # app/log/format/model.py
contextWindow  # app/log/format/model.py
source_id  # app/log/fold/fork.py ForkPlan field (the plan names its source)
last_turn_end_seq  # app/log/index/reader.py TailState field
_.turn_start_seq  # app/log/fold/repair.py TailTracker state, part of its documented snapshot
_.is_surface  # app/log/format/model.py Event property (spec §3 vocabulary)
MARK_TYPES  # app/log/index/reader.py public constant beside MARK_NAMES
MAGIC_INT  # app/log/source/zstdframes.py the zstd magic as an int, beside MAGIC

# TypedDict keys of JSON written out (the index cache file's meta, `session-lens index --json`)
mtime_ns  # app/store/indexcache.py Identity
lastSeq  # app/store/indexcache.py IndexSummary
contiguousThrough  # app/store/indexcache.py IndexSummary
cpuSeconds  # app/store/indexcache.py IndexSummary (read by bench/scale.py)
scanner  # app/store/indexcache.py IndexSummary (session-lens index --json: which row scanner ran)

# Spec-named core operations kept as the core's public API (spec §3, §6; used from the REPL and by support)
derive_messages  # app/log/fold/folds.py deriveMessages
header_equals  # app/log/fold/folds.py
closure_of  # app/log/fold/repair.py
dispatches  # app/log/query/analysis.py
_.scan_rows  # app/log/index/reader.py
_.children_of  # app/store/discovery.py
_._scan_segment_seqs  # app/log/index/reader.py -- candidate for deletion once the formats rewrite of reader.py lands

# Counters and state kept for diagnostics (benchmarks' diagnose modes, debugging a live session)
_.refetches  # app/log/fold/stitch.py
_.notifications  # app/store/watch.py
_.emitted  # app/store/watch.py
_.memory_bytes  # app/log/index/reader.py (bench/run.py)
_.next_seq  # app/tools/synth.py
_.finished  # app/ui/workers.py Job state
_.started_at  # app/ui/workers.py
_.busy  # app/ui/workers.py
_.running  # app/ui/live.py
_._exporting  # app/ui/audit_action.py in-flight export count
_.shown_seq  # app/ui/request_view.py
_.tools_menu  # app/ui/audit_action.py
none_leaks_per_void_call  # app/ui/qtcompat.py: the measurement behind the Python 3.11 refcount shim

# Unused parameters kept for a stable signature
start_end  # app/log/index/reader.py iter_items
scope  # app/presenters/registry.py views_for_page
from_top  # _goto_turn's parameter

# Set for the library, never read by us: sqlite3 / zipfile / Qt attributes
_.text_factory  # sqlite3.Connection
_.external_attr  # zipfile.ZipInfo
_.cursor  # QTextEdit.ExtraSelection

# Qt virtual overrides and signals (called by Qt, not by our code)
_.mouseMoveEvent
_.dragMoveEvent
_.paint
_.flags
_.hasChildren
_.columnCount
_.headerData
_.filterAcceptsRow
_.eventFilter
_.loadResource  # tests/test_ui_frame.py: a QTextDocument that records resource loads
_.wheelEvent  # app/ui/timeline_view.py Waterfall (zoom)
_.mousePressEvent  # app/ui/timeline_view.py Waterfall (pan, click)
_.mouseDoubleClickEvent  # app/ui/timeline_view.py Waterfall (fit)
rowActivated  # app/ui/history/view.py signal

# Theme colours, read by name through Theme.color(name) / getattr
mono_bg
hidden_fg
accent_user
accent_assistant
accent_tool
accent_result
accent_error
accent_event
warn
diff_add
diff_del

# landed from ui-split before this check: review (delete if still unused once the split settles)
_.row_ordinal  # app/ui/history/window.py RowWindow
_.view_menu  # app/ui/history_actions.py, beside tools_menu: where other controllers place entries
_._job  # app/ui/request_view.py the running request job (its group cancels it)
_._expose_pending  # app/ui/history/model.py
_.open_error  # app/ui/history/model.py, the last open failure

# tests: presenters registered by decorator, values unpacked for readability, recorder attributes
_call
_result
repl_r
exhausted
_.installs
normalize  # tests/test_fork.py helper (formats-read's tests; review)
gap_at  # tests/test_v0_dsh_would_refuse.py helper parameter
no_demo  # tests/test_first_run.py: a fixture requested for its effect
_._follow_bottom  # app/ui/history/view.py

# app/log/format/versions.py (formats v1-v4): public helpers of the version table, kept for readers of the module
ALL_SURFACE_TYPES
is_supported
parse_generation_name  # app/store/layout.py, the inverse of generation_name (formats §2)

# landed from search before this check: review
neg  # app/store/fulltext.py parse_query unpacks a leading "-" and never uses it (is negation meant to work?)
zadded  # tests/test_fulltext.py unpacked, unused

# landed on main unused (app/ui/plaintext.py plain-text helpers, from the hardening/ui merges): listed by the perf2
# merge so `make check` passes; review (delete if nothing is meant to call them). (Its unused message_box, which
# imported QtWidgets into a module view models import, was deleted: the layering test failed on it.)
has_bidi_controls  # app/ui/plaintext.py
set_plain  # app/ui/plaintext.py
set_title  # app/ui/plaintext.py (its one caller was message_box)
# TypedDict keys of JSON-ready records (written as dict literals, read by key string: trace/stats/--json)
compactionId  # app/log/query/trace.py _Compaction
startSeq  # app/log/query/trace.py _Compaction, app/log/query/stats.py StepStats
summarySeq  # app/log/query/trace.py _Compaction
endSeq  # app/log/query/trace.py _Compaction
replacementSeqs  # app/log/query/trace.py _Compaction
startTime  # app/log/query/stats.py StepStats, _TurnInfo
finishTime  # app/log/query/stats.py StepStats
latencyMs  # app/log/query/stats.py StepStats
latencyNote  # app/log/query/stats.py StepStats
failedAttempts  # app/log/query/stats.py StepStats
toolCalls  # app/log/query/stats.py StepStats
toolOutcomes  # app/log/query/stats.py StepStats
endReason  # app/log/query/stats.py _TurnInfo
# TypedDict keys of export results and live records (written as dict literals, read by key: --json, the status line)
byteIdentical  # app/store/export.py RawExport
redaction  # app/store/export.py *Export (NotRequired: set when redacting)
firstSeq  # app/store/watch.py LastBatch
seed_only  # app/store/watch.py _ListState
# pytest reads a test module's marks from this name
pytestmark  # tests/test_sqlite_store.py
# worker entry points, run by name through the launcher's table (app/store/childproc.py WORKERS)
shard_main  # app/store/fulltext.py
__getattr__  # app/store/fulltext.py (the shard worker's entry points, imported when asked for)
build_main  # app/store/ftslive.py (the fts-build worker, named in childproc.WORKERS)
part_main  # app/store/timeline_child.py (the timeline-part worker, named in childproc.WORKERS)
child_main  # app/store/indexer.py, scan_child.py, titles_child.py
# a field of the .idx meta schema (decoded and validated by type, app/store/indexcache.py)
saved_at  # app/store/indexcache.py
qt_probe_main  # app/ui/diagnostics_dialog.py (doctor's Qt check)
# the facts a writer state went by (app/store/watch.py WriterFacts, read by app/ui/truth_views.writer_why)
grewAt  # app/store/watch.py WriterFacts
idleAfter  # app/store/watch.py WriterFacts
crashAfter  # app/store/watch.py WriterFacts

"""Every diagnostic code traceconv records, in one table: (code, kind, severity, text).

A reader, writer or transformation counts what it drops, repairs or guesses under a stable
code (:mod:`traceconv.model.diagnostics`); this table is the only place where a code's kind,
severity and text live. A call site names the code only
(:meth:`Diagnostics.add <traceconv.model.diagnostics.Diagnostics.add>` takes everything
else from here and raises for a code that is not here), the validator checks that a trace's
codes are all registered (:func:`lookup`), ``docs/diagnostics.md`` is generated from it
(:mod:`traceconv.model.diagnostics_page`), and a test keeps the table and the source in
step (every code the source names is here, nothing here is unused, and no call passes a
kind or a text).

A code may hold a ``{placeholder}`` for a part that varies: ``align.residual.{index}`` is
``align.residual.1``, ``align.residual.2``...; ``{reader}.invalid_utf8`` is
``paddle_pb.invalid_utf8``...

>>> lookup("chrome.missing_timestamp").kind, lookup("align.residual.3").code
('dropped', 'align.residual.{index}')
>>> lookup("no.such_code") is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from ..control_pictures import NUL_PICTURE

Kind = Literal["dropped", "repaired", "guessed", "note"]
Severity = Literal["info", "warning", "error"]

# what a kind means for the user unless its code says otherwise
DEFAULT_SEVERITY: dict[str, Severity] = {
    "dropped": "warning",
    "repaired": "info",
    "guessed": "info",
    "note": "info",
}


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """One registered code (or code pattern) and what it means."""

    code: str
    kind: Kind
    text: str
    severity: Severity

    @property
    def is_pattern(self) -> bool:
        return "{" in self.code


# an input cut short: everything after the cut is missing from every output, so
# ``traceconv check`` of the input fails (analysis/read_check.py)
CUT: Severity = "error"


def _Code(code: str, kind: Kind, text: str, severity: Severity | None = None) -> CodeInfo:  # noqa: N802
    return CodeInfo(code, kind, text, severity or DEFAULT_SEVERITY[kind])


CODES: tuple[CodeInfo, ...] = (
    # align
    _Code("align.kept", "note", "clocks not shifted (why: in the example)"),
    _Code("align.residual.{index}", "note",
          "one input's residual clock skew after alignment (the input, the median and max over"
          " the matched collectives, and its shift: in the example)"),
    _Code("align.shifted", "repaired", "rank clocks shifted onto the first input's (how, and "
          "each input's shift: in the example)"),
    _Code("align.unmatched.{index}", "guessed",
          "an input (in the example) with no collective in common with the first input: not "
          "shifted"),
    # analysis
    _Code("analysis.device_counters", "note",
          "counter tracks derived from the device work (launch queue per stream, memcpy "
          "bandwidth per direction)"),
    # analysis: kernels of replayed CUDA/HIP graphs mapped back to their capture
    _Code("graph_replay.unmatched", "note",
          "replayed graph kernels that no captured launch matches in order (no op above them)"),
    # breakdown
    _Code("breakdown.children_scaled", "repaired",
          "children add up to more than their parent; drawn scaled down"),
    # chrome
    _Code("chrome.duplicate_trace_events", "dropped", 'events of a second "traceEvents" key: '
          "dropped (the first array is read)"),
    _Code("chrome.envelope_value_skipped", "dropped",
          "top-level keys that traceconv does not read, with a value over the size it holds "
          "of one (64 MiB): read past, not kept among the trace's attributes"),
    _Code("chrome.args_not_object", "repaired",
          "args that are not objects: kept under the key 'args'"),
    _Code("chrome.async_id_unusable", "guessed",
          "b/e/n events whose id (id, id2.global, id2.local) is neither an integer of int64 "
          "nor a text: trace_processor drops them; kept, their object named by the id's "
          "JSON text"),
    _Code("chrome.async_without_id", "guessed",
          "b/e/n events with neither id nor id2: matched on one track per (process, "
          "category, name) (trace_processor drops them)"),
    _Code("chrome.async_cut_short", "repaired",
          "b events still open above one that an e closed below them: they end where it "
          "ends, as trace_processor ends them (their own e comes later, and closes another "
          "b of its name or nothing)"),
    _Code("chrome.thread_cut_short", "repaired",
          "B events still open above one that a named E closed below them: they end where "
          "it ends, as trace_processor ends them (their own E comes later, and closes "
          "another B of its name or nothing)"),
    _Code("chrome.begin_without_end", "repaired",
          "B/b events never closed: they end at the trace's last timestamp "
          "(args.unfinished=true); analyses count them as calls and do not time them"),
    _Code("chrome.counter_not_numeric", "dropped", "counter values that are not numbers"),
    _Code("chrome.device_track_guessed", "guessed",
          "threads of no category read as device streams: every slice on them a copy, memset or "
          "kernel signature by name, none within another, in a process that such a thread's "
          "copy or memset proves a device (the thread and the evidence: in the example)"),
    _Code("chrome.empty_event", "note",
          "empty {} events (Paddle, XLA and TensorFlow write one at the end)"),
    _Code("chrome.end_without_begin", "dropped", "E/e events with no open B/b on their track"),
    _Code("chrome.event_not_object", "dropped", "traceEvents items that are not objects"),
    # a one-ended flow links nothing: no viewer draws it, and its slice is kept (a note, not
    # a loss: Kineto writes an ac2g 'f' on runtime calls that launch nothing)
    _Code("chrome.flow_backwards", "note",
          "flows written whose target starts before their source: the 'f' sits at the "
          "source's start inside the target, where a viewer binds it to the innermost slice "
          "open then (one nested in the target, or the arrow drawn from the earlier slice)"),
    _Code("chrome.flow_not_shown", "note",
          "flows written whose target ends before their source starts (two clocks that "
          "disagree): both ends are in the file, but its 'f' comes before its 's', and a "
          "viewer draws no arrow back in time (`check` counts them as flow_unpaired)"),
    _Code("chrome.counter_renamed", "repaired",
          "counter tracks written under their thread's name too ('thread_time (Main)'): "
          "a viewer keys a C event by process and name, and would merge the counters of "
          "several threads that share a name"),
    _Code("chrome.id_replaced", "repaired",
          "pids or tids out of a viewer's 32-bit range (XLA's thread ids), used twice, or a "
          "tid 0 beside the thread numbered as its process (trace_processor reads tid 0 as "
          "tid = pid): written as made-up ones from 16,777,216 on (the thread's name still "
          "says which)"),
    _Code("chrome.flow_dangling", "note",
          "flow events whose other end is not in the file (a start with no finish or a finish "
          "with no start): an arrow needs both ends, so none is drawn; the slice is kept"),
    _Code("chrome.flow_on_instant", "dropped",
          "flow v2 bindings (bind_id with flow_in/flow_out) on instant events (i/I/R): "
          "not linked, as trace_processor links none (it binds flow v2 on slices only)"),
    _Code("chrome.flow_unbound", "dropped",
          "flow events with no thread slice or thread instant around them (none at that "
          "time on that thread; an async slice there is no slice the model links a flow "
          "to)"),
    _Code("chrome.flow_within_one_slice", "dropped",
          "flows whose two ends bind to one slice (both points inside it: the model links "
          "two slices, and a slice to itself draws no arrow)"),
    _Code("chrome.malformed_event", "dropped", "events with fields of the wrong type (a ts "
          "or dur past int64 is a time, the builder's: model.time_beyond_range, "
          "model.slice_end_beyond_int64; inf is malformed)"),
    _Code("chrome.memory_event_as_slice", "repaired",
          "[memory] events written as X (torch's python exporter): read as instants"),
    _Code("chrome.metadata_conflict", "repaired",
          "a thread or process named twice differently: both names kept"),
    _Code("chrome.written_record_unread", "note",
          "rows of the traceconv key's processes, threads or counters (a file traceconv wrote) "
          "that are not as its writer makes them: those processes and tracks keep what the "
          "events say"),
    _Code("chrome.metadata_ignored", "note",
          "M events other than process/thread name, labels and sort index"),
    _Code("chrome.missing_phase", "dropped", "events without ph"),
    _Code("chrome.missing_timestamp", "dropped", "events without ts"),
    _Code("chrome.time_base_out_of_range", "dropped",
          "baseTimeNanoseconds that would move times beyond int64: not applied"),
    _Code("chrome.truncated_array", "repaired",
          "the event array has no closing bracket (allowed by the spec): read up to the end"),
    _Code("chrome.unsupported_phase.{phase}", "dropped",
          "events of a phase (the code's last part) that traceconv does not model (V8's CPU "
          "profile samples, 'P', trace_processor reads as stack samples; most others it "
          "ignores too)"),
    _Code("chrome.x_without_dur", "guessed", "X events without dur: duration 0"),
    # csv (every CSV reader's rows: traceconv/formats/csv_rows.py)
    _Code("csv.row_cut", "dropped",
          "a last row cut mid-line (no line end and fewer cells than the header, or its "
          "last cell empty where the column holds numbers, or a quoted field never "
          "closed): the file was cut there; not read", CUT),
    _Code("csv.row_width_mismatch", "dropped",
          "CSV rows with another number of cells than their header (their cells would "
          "land in the wrong columns): not read (the first one's line in the example)"),
    _Code("csv.pasted", "repaired",
          "a CSV pasted into a page, every line carrying the page's marks (a Markdown "
          "quote's '> ', a fence or markup around it, NBSP for every space): the marks "
          "undone, the rows read as the clean file's (which marks: in the example)"),
    # dataflow
    _Code("dataflow.flows", "note",
          "flows added from producer to consumer ops of the op graph (--flows dataflow)"),
    # input (the input layer: traceconv/io.py and the readers' shared helpers)
    _Code("input.double_spaced", "repaired",
          "a text or CSV input with a blank line after every line (a chat's or an editor's "
          "double spacing, CR CR LF line ends, a form feed after each newline): read "
          "single-spaced, a CSV's line numbers those of the file as written "
          "(traceconv/formats/pasted_text.py, pasted_csv.py)"),
    _Code("input.line_cut", "repaired",
          "lines of a text input longer than 1 M characters: cut there, the rest of the "
          "line not read"),
    _Code("input.settings_only", "note",
          "inputs holding a run's settings alone (no event, row, op or memory block), read "
          "to join the traces given with them (which: in the example); given alone, "
          "nothing read"),
    _Code("input.carried_blocks_unread", "dropped",
          "memory blocks or reservations the file carries (a trace traceconv wrote) that are not "
          "as its writer makes them: the whole list left out (the blocks the events make, such as "
          "Kineto's [memory] instants, stay), the first bad place in the example"),
    _Code("input.carried_graph_unread", "dropped",
          "an op graph the file carries (a trace traceconv wrote) that is not as its writer makes "
          "it: left out whole (nodes name one another and their slices), the first bad place in "
          "the example"),
    _Code("input.carried_stats_unread", "dropped",
          "op statistics the file carries (a trace traceconv wrote) that are not as its writer "
          "makes them: left out, every row (rows name their parents by place), the first bad "
          "row in the example"),
    _Code("input.unknown_diagnostic", "note",
          "diagnostics the file carries (a trace traceconv wrote) under a code this version "
          "does not know, or with a count that is not a whole number: counted here, the first "
          "code in the example"),
    # kineto
    _Code("kineto.flows_from_correlation", "guessed",
          "launch → device flows added from matching correlation ids (no ac2g flow event "
          "linked them)"),
    _Code("kineto.malformed_correlation", "dropped",
          "launch or device events whose correlation id is a list or an object (not joined "
          "by it)"),
    _Code("kineto.malformed_device_properties", "dropped",
          "deviceProperties that are not a list of objects with an id (no GPU model from "
          "them)"),
    _Code("kineto.malformed_memory_event", "dropped",
          "[memory] events whose Addr, Device Type or Device Id is a list or an object (no "
          "block)"),
    _Code("kineto.memory_event_without_block", "note",
          "[memory] events with no Addr or no integer Bytes (older Kineto writes no Addr): "
          "kept as instants, no memory block made of them"),
    _Code("kineto.flow_rebound", "repaired",
          "ac2g flows moved to the launch with the device op's correlation id (the flow "
          "event's time fits two launches on that thread)"),
    # link_et
    _Code("link_et.kernels_without_op", "note",
          "device slices launched outside any op of the execution trace (no op node carries"
          " them)"),
    _Code("link_et.linked_ops", "note",
          "execution-trace ops linked to their Kineto slice by record function id"),
    _Code("link_et.name_mismatch", "dropped",
          "record function ids found in both traces under different names (not linked: are "
          "the two from the same run?)"),
    _Code("link_et.record_function_ids_zero", "note",
          "Kineto slices whose record function id is 0, all of them: the profile was taken "
          "without the ExecutionTraceObserver attached to it (torch.profiler.profile("
          "execution_trace_observer=...)), so no op of the execution trace can be linked; "
          "not a difference of names"),
    _Code("link_et.slices_not_in_et", "note",
          "Kineto slices with a record function id the execution trace does not hold"),
    _Code("link_et.unlinked_ops", "dropped",
          "execution-trace ops with no Kineto slice of the same record function id and name"
          " (no times)"),
    # megengine
    _Code("megengine_memflow.truncated", "dropped", "a memory_flow.svg cut before its "
          "closing </svg>: the rects before the cut are read, those after it are missing", CUT),
    _Code("megengine.chunk_id_not_key", "repaired",
          "mem_chunk entries whose id is not their key (the block is named by the key, "
          "which memory plans refer to)"),
    _Code("megengine.chunk_no_address", "dropped", "chunk without dev_ptr or prev_dev_ptr"),
    _Code("megengine.chunk_prev_ptr", "guessed",
          "chunk without dev_ptr placed at its owner var's prev_dev_ptr"),
    _Code("megengine.chunk_unexecuted_owner", "guessed",
          "chunk whose vars no executed opr produces: no lifetime"),
    _Code("megengine.chunk_unknown_owner", "guessed",
          "chunk owned by an unknown var: kept with no owner and no lifetime"),
    _Code("megengine.chunk_untimed", "guessed",
          "chunk whose producer or last reader has no device timing: no lifetime"),
    _Code("megengine.device_clock_shifted", "guessed",
          "device clock(s) shifted onto the host clock (launch latency 0 for the tightest "
          "opr)"),
    _Code("megengine.dynamic_var_memory", "guessed",
          "vars allocated at run time (jit.trace, load_and_run without --embed-input) have "
          "no memory chunk: blocks derived from their prev_dev_ptr..prev_dev_ptr_end range"),
    _Code("megengine.empty_chunk", "note", "mem_chunk of size 0 (no memory block)"),
    _Code("megengine.in_place_output", "note",
          "outputs written over an input's memory (in-place overwrite) start when their op "
          "ends, as MegEngine's plan counts them"),
    _Code("megengine.nonfinite_time", "dropped", "timing with inf/nan start or end"),
    _Code("megengine.repeated_opr", "dropped",
          "oprs listed again in comp_seq (a compiled sequence runs each opr once and the "
          "profiler keys one timing by opr id): the first place kept, the repeats left out "
          "(no second slice with the same times; where: in the example)"),
    _Code("megengine.tensor_without_address", "note",
          "chrome_timeline tensors carry no address, so they are graph tensors but not "
          "memory blocks (memory_flow.svg has the addresses)"),
    _Code("megengine.unexecuted_opr", "note",
          "oprs outside comp_seq (static shape inference only) are not op nodes; their vars"
          " name them as static_producer"),
    _Code("megengine.unknown_var", "dropped", "operator input/output names no var"),
    _Code("megengine.unprofiled_opr", "dropped",
          "opr in comp_seq without an operator entry or profiler timing"),
    # merge
    _Code("merge.clocks", "note",
          "inputs do not share an epoch clock; their times are kept as they are, not "
          "aligned"),
    _Code("merge.other_inputs", "note",
          "tracks, events, flows, graph nodes, memory blocks, reservations and statistics rows "
          "of a merged trace's other inputs, left out of the input taken on its own (advise "
          "judges each rank apart)"),
    _Code("merge.statistics_joined", "note",
          "statistics rows of inputs that hold only statistics (no clock), joined as "
          "statistics of the same run to the timeline given with them, or to each other: "
          "not ranks, no clock aligned; timeline outputs draw them as an aggregate breakdown "
          "(which files: in the example)"),
    # migraphx
    _Code("migraphx.eval_unknown_instruction", "note",
          "trace-eval record without a parsable instruction (ROCm 4.1 prints 'Instruction "
          "not part of program')"),
    _Code("migraphx.eval_unmatched", "note",
          "trace-eval record naming an instruction that the program does not have"),
    _Code("migraphx.eval_without_time", "note",
          "trace-eval record without a 'Time:' line (before ROCm 4.5); laid out at 1 µs"),
    _Code("migraphx.listing_superseded", "note",
          "program listings of a run that also has a perf report (the report lists the same"
          " program)"),
    _Code("migraphx.load_range_reversed", "repaired",
          "load with end before offset (a cut line?); the shape's size is used from the "
          "offset"),
    _Code("migraphx.load_size_mismatch", "note",
          "load end - offset differs from the bytes of its printed shape; the printed range"
          " is used"),
    _Code("migraphx.load_without_offset", "guessed",
          "load without readable offset/end; placed at offset 0 with its shape's size"),
    _Code("migraphx.report_truncated", "dropped",
          "perf report that ends before or inside its Summary (which: in the example), "
          "without its trailer (Total time ...): a cut file or paste; the lines present are "
          "read", CUT),
    _Code("migraphx.report_without_lines", "note",
          "perf report with a summary or trailer but no per-instruction lines (a cut paste): "
          "kept as statistics and metadata; a listing beside it stays untimed"),
    _Code("migraphx.shape_too_large", "dropped",
          "shapes whose byte size passes int64 (garbled dimensions or strides): no size"),
    _Code("migraphx.truncated_instruction", "repaired",
          "instruction print cut short (no shape or unclosed brackets); read as far as it "
          "goes"),
    _Code("migraphx.unclosed_attributes", "repaired",
          "code_object attributes without the closing ']' (ROCm 4.2-4.5 print)"),
    _Code("migraphx.unparsed_line", "dropped",
          "line inside MIGraphX output shaped like one of its lines (an instruction, a timed "
          "line, a Summary or trailer line) that could not be read"),
    _Code("migraphx.name_repeated", "repaired",
          "instruction names printed again in their module (a garbled or spliced paste): "
          "kept as <name>#2...; references go to the first"),
    _Code("migraphx.unresolved_input", "dropped",
          "input name defined nowhere in the program (elided or cut paste); the edge is "
          "dropped"),
    _Code("migraphx.untitled_summary", "note",
          "Summary rows pasted without their 'Summary:' line"),
    _Code("migraphx.wrapped_line", "repaired",
          "line hard-wrapped by the paste (instruction, Summary row, Output list, trailer);"
          " the pieces were joined"),
    # model
    _Code("model.parent_cycle", "repaired",
          "ops whose parent links go round (an op its own parent, or A inside B inside A): "
          "the cycle's first op (the outermost, recorded first) gets no parent (the cycle "
          "in the example)"),
    _Code("model.counter_value_not_finite", "repaired", "counter samples whose value is "
          "infinite (now the largest finite number of its sign) or NaN (now 0)"),
    _Code("model.timeline_partial", "note", "timed slices of a run whose statistics table "
          "covers more than its timeline (a paste elided most of a listing): summaries, "
          "reports and totals use the table, conversions draw its rows beside the timeline; "
          "the slices are kept and drawn (traceconv/model/partial_timeline.py)"),
    _Code("model.statistic_beyond_range", "repaired", "statistics (calls, times, sizes) beyond "
          "±2^62: moved to that edge, so that sums and differences of two runs fit int64"),
    _Code("model.negative_length", "repaired", "memory blocks with a negative size: made 0 "
          "bytes"),
    _Code("model.negative_statistic", "dropped", "counts, sizes and times below 0 in "
          "statistics rows (-1 calls, a negative total): no measurement, made unknown (a "
          "total: 0)"),
    _Code("model.end_before_start", "repaired", "slices that end before they start, memory "
          "blocks freed before their allocation: made zero-length at their start"),
    _Code("model.unknown_track", "repaired", "events on a track that does not exist: moved "
          "to one '(unknown track)' track"),
    _Code("model.unknown_slice_ref", "dropped", "flows whose source or target is not a slice "
          "row: left out"),
    _Code("model.unknown_owner", "dropped", "memory blocks whose owner op or tensor is not "
          "such a node of the op graph (a .pftrace carries no graph): the link left out, "
          "the owner's name kept", "info"),
    _Code("model.memory_block_unreadable", "dropped", "memory blocks or reserved ranges whose "
          "address or size is no number int64 holds (a text such as '0x10', a number past "
          "±2^63), or whose time is no number: left out, the rest of the trace read (a time "
          "past int64 is model.time_beyond_range's)"),
    _Code("model.live_bytes_beyond_int64", "repaired", "levels of a live-bytes counter "
          "whose blocks' sizes sum past int64 (2^63 - 1 bytes): drawn at that edge, never "
          "wrapped around (traceconv/numbers.py int64_running_sums)"),
    _Code("model.name_cut", "repaired", "names or categories longer than 65,536 characters: "
          "cut there"),
    _Code("model.share_beyond_range", "repaired", "statistics rows whose share of their "
          "section is outside 0-100 %: moved to that edge (NaN: no share)"),
    _Code("model.time_beyond_range", "repaired", "times before -1e18 or after 3.5e18 ns "
          "(slices, instants, counters, memory blocks; past int64 too): moved to that edge, "
          "so that the difference of any two times fits int64"),
    _Code("model.shift_clamped", "repaired",
          "times that a clock shift would have moved past int64: stopped at its end"),
    _Code("model.device_number_beyond", "dropped", "device memory sizes or compute "
          "capabilities that are negative or past int64: not known"),
    _Code("model.id_beyond_int64", "dropped", "a process's pid, a track's tid or a sort "
          "index that is an integer past int64: not known (the name still shows it)"),
    _Code("model.slice_end_beyond_int64", "repaired",
          "slices whose end (start + duration) passes int64: shortened to end there"),
    # nesting
    _Code("nesting.instant_too_deep_moved", "repaired",
          "instants inside more slices than the depth limit (in the example) were moved to an "
          "overlap lane track"),
    _Code("nesting.overlap_moved", "repaired",
          "slices that partially overlap the slice enclosing them were moved to an overlap "
          "lane track"),
    _Code("nesting.too_deep_moved", "repaired",
          "slices nested deeper than the depth limit (in the example) were moved to an "
          "overlap lane track"),
    # nsys
    _Code("nsys.empty_table", "note", "tables of the export with no rows"),
    _Code("nsys.memory_operation_unknown", "dropped",
          "memory usage events that are neither an allocation nor a deallocation (not read)"),
    _Code("nsys.metadata_not_read", "note",
          "rows of tables that describe the capture (system environment, capture settings, "
          "CUDA contexts, payload schemas...), not read"),
    _Code("nsys.missing_string", "repaired",
          "string ids with no StringIds entry (named <string N>)"),
    _Code("nsys.nvtx_names", "note",
          "NVTX rows that name a thread, domain or category (read as names, not events)"),
    _Code("nsys.nvtx_other_event_type", "dropped", "NVTX rows of other event types (not read)"),
    _Code("nsys.nvtx_unfinished_range", "repaired",
          "NVTX ranges without an end (still open when the capture stopped): they end at the "
          "trace's last timestamp (args.unfinished=true); analyses count them as calls and "
          "do not time them"),
    _Code("nsys.sync_device_from_context", "repaired",
          "synchronisations placed on the GPU of their CUDA context (CUPTI records them "
          "with device 0)"),
    _Code("nsys.table_not_read", "dropped",
          "rows of export tables this reader does not read (scheduling, sampling, call "
          "chains, other APIs...)"),
    _Code("nsys.work_without_launch", "note",
          "GPU work whose correlation id matches no API call of its process (no flow; a "
          "time-window cut of the export leaves some)"),
    # nsys_stats
    _Code("nsys_stats.line_outside_table", "dropped",
          "lines of a summary report that are neither a table's row nor nsys's prose (not "
          "read)"),
    _Code("nsys_stats.name_cut", "note",
          "names of rows read that nsys's column layout cut to fit its column (they end in "
          "…; its CSV output keeps them whole: nsys stats --format csv)"),
    _Code("nsys_stats.malformed_row", "dropped",
          "report rows that do not fit their header: a start, end, PID, TID, count or time "
          "that is not a number or out of range, or a drawn row short of its columns (not "
          "read; the example names its line and shows the row's "
          "cells apart: a | b | c)"),
    _Code("nsys_stats.table_not_read", "dropped",
          "rows of drawn tables whose header names no report traceconv reads: a report it "
          "does not read (nvtx_gpu_proj_trace...) or a header a paste damaged (the example "
          "names the table's line and header; the other tables are read)"),
    _Code("nsys_stats.report_skipped", "note",
          "reports nsys skipped for lack of data (SKIPPED: ... does not contain ...)"),
    # overview (traceconv overview, split's overview.pftrace)
    _Code("overview.hidden_slices", "note",
          "slices the overview does not show (it shows the longest of each track and the "
          "collectives; each track's hidden slices per time bucket are a counter track)"),
    _Code("overview.slices_out_of_order", "guessed",
          "slices that start before an earlier slice of their track in the file: the "
          "utilisation counts only their time past what the track had covered"),
    # paddle
    _Code("paddle.deivce_typo", "repaired",
          "device process names spelt 'Deivce' by the writer, corrected"),
    _Code("paddle.duration_suffix", "repaired",
          "'[x ms]' duration suffixes removed from event names (the duration is the "
          "slice's)"),
    _Code("paddle.memory_record_malformed", "dropped",
          "[memory] events without an integer addr/increase_bytes (kept as instants, no "
          "memory block)"),
    _Code("paddle.timeline_memory_total", "note",
          "timeline.py keeps only a running total of memory events over all places: no "
          "memory blocks (read the .profile for them)"),
    # paddle_pb
    _Code("paddle_pb.parent_cycle", "repaired",
          "host nodes whose parent ids form a cycle: attached to the node itself"),
    _Code("paddle_pb.root_nodes", "note", "synthetic per-thread root nodes skipped"),
    _Code("paddle_pb.supplement_without_op", "dropped", "op shapes recorded outside any op"),
    _Code("paddle_pb.time_out_of_range", "dropped",
          "events with timestamps beyond int64 were dropped"),
    # paddle_profile
    _Code("paddle_profile.memory_addresses_guessed", "guessed",
          "memory events carry no address; blocks get logical offsets"),
    _Code("paddle_profile.time_out_of_range", "dropped",
          "events with timestamps beyond int64 (uninitialised CUPTI times) were dropped (a "
          "memory event's numbers are the builder's: model.memory_block_unreadable, "
          "model.time_beyond_range)"),
    # paddle_report
    _Code("paddle_report.cut_row", "dropped",
          "dropped row: cut off (fewer cells than the table's columns)", CUT),
    _Code("paddle_report.headerless_table", "guessed",
          "Event Summary rows without their header: columns taken from the rows' shape"),
    _Code("paddle_report.nesting_guessed", "guessed",
          "indentation collapsed: nested rows without a name hint were placed by arithmetic"
          " (a parent's total holds its children's)"),
    _Code("paddle_report.overhead_without_total", "repaired",
          "overhead split without a 'Total time' line"),
    _Code("paddle_report.unreadable_row", "dropped",
          "line inside an Event Summary table shaped like a row (a name, then its calls where "
          "the table has them) whose cells do not read"),
    _Code("paddle_report.wrapped_line", "repaired",
          "line hard-wrapped by the paste: the pieces were joined"),
    _Code("paddle_report.unknown_place", "note",
          "a Place: the profiler never printed (times kept, neither host nor device)"),
    # paddle_summary
    _Code("paddle_summary.orphan_indent", "repaired",
          "indented row with no enclosing row (kept at top level)"),
    _Code("paddle_summary.unreadable_row", "dropped",
          "rows whose numbers do not parse or whose cells do not match the table's header: "
          "skipped"),
    _Code("paddle_summary.untitled_rows", "guessed",
          "summary rows without their table's title or header: the table was told from the "
          "rows' shape"),
    # perfetto
    _Code("perfetto.timestamp_beyond_int64", "dropped",
          "events with a timestamp at or above 2^63 (a negative number written as uint64): left"
          " out, as trace_processor leaves them out"),
    _Code("perfetto.incremental_clock_before_snapshot", "dropped",
          "events on an incremental clock before any ClockSnapshot gave it a base: left out"),
    _Code("perfetto.end_without_begin", "dropped",
          "slice ENDs with no open BEGIN on their track (a legacy async 'e': none of its name "
          "and category): left out, as trace_processor leaves them out"),
    _Code("perfetto.async_cut_short", "repaired",
          "legacy async begins still open above one that an 'e' closed below them: they end"
          " where it ends, as trace_processor ends them"),
    _Code("perfetto.async_without_id", "guessed",
          "legacy async events (phase b/e/n) with no unscoped_id, global_id or local_id: "
          "matched on one track per (process, category, name) (trace_processor drops them)"),
    _Code("perfetto.slice_not_ended", "repaired",
          "slices that never end (trace_processor shows them as 'Did not end'): they end at the"
          " trace's last timestamp (args.unfinished=true); analyses count them as calls and "
          "do not time them"),
    _Code("perfetto.flow_endpoint_not_slice", "dropped",
          "flow ids on a counter or a left-out event: the model links slices only (an "
          "instant with a flow is read as a slice of no length, as trace_processor has it), "
          "so these are left out"),
    _Code("perfetto.flow_end_without_start", "dropped",
          "terminating flow ids never started before: no link (trace_processor draws none)"),
    _Code("perfetto.clock_beyond_int64", "dropped",
          "ClockSnapshot readings (timestamp times unit multiplier) or events whose time on "
          "the trace clock would pass int64: left out"),
    _Code("perfetto.clock_without_snapshot", "dropped",
          "events on a clock that no ClockSnapshot links to the trace clock: left out, as "
          "trace_processor leaves them out"),
    _Code("perfetto.needs_incremental_state", "dropped",
          "packets that need the incremental state before their sequence cleared it: skipped, "
          "as trace_processor skips them"),
    _Code("perfetto.event_type", "dropped",
          "track events of another type (or a legacy phase) than slice begin/end, instant, "
          "counter, complete or async (b/e/n, S/T/p/F): left out"),
    _Code("perfetto.event_without_timestamp", "dropped",
          "track events without a packet timestamp (legacy delta timestamps): left out"),
    _Code("perfetto.not_modelled.{packet}", "note",
          "packets of a kind the model does not hold (TrackEvent timelines, ftrace bundles and "
          "the process tree are): skipped"),
    _Code("perfetto.ftrace_not_modelled.{event}", "note",
          "ftrace events of a kind the model does not hold (a system trace's atrace print "
          "lines, sched_switch, cpu_frequency and cpu_idle are): skipped"),
    _Code("perfetto.sys_stats_not_modelled.{field}", "note",
          "sys_stats values of a kind the model does not hold (meminfo, vmstat and CPU times"
          " are), and process_stats values other than memory and oom_score_adj ('process_"
          "fds', ...): skipped"),
    _Code("perfetto.ftrace_clock_not_boot", "note",
          "ftrace bundles recorded on another kernel clock (global, local, mono_raw) than the "
          "boot clock: their times are kept as written, not moved onto the trace clock"),
    _Code("perfetto.ftrace_print_not_atrace", "dropped",
          "ftrace print events whose text is no atrace line (B|pid|name, E, C|pid|name|value,"
          " S/F|pid|name|cookie, I|pid|name): left out"),
    _Code("perfetto.sched_not_ended", "repaired",
          "threads still running on a CPU when the trace ends: their CPU slice ends at the "
          "trace's last timestamp (args.unfinished=true); analyses do not time it"),
    _Code("perfetto.sched_first_compact_switch", "dropped",
          "threads switched in by a CPU's first sched_switch in the compact form, which does "
          "not state the thread switched out: no CPU slice, as trace_processor makes none"),
    _Code("perfetto.thread_state_not_ended", "repaired",
          "thread states still open when the trace ends: they end at the trace's last "
          "timestamp (args.unfinished=true; trace_processor leaves them open); analyses do "
          "not time them"),
    _Code("perfetto.thread_state_compact_switch", "dropped",
          "sched_switch events in the compact form, which does not state the thread switched "
          "out nor its state: no thread state made from them"),
    _Code("perfetto.frame_timeline_token_repeated", "dropped",
          "expected surface frames (FrameTimeline) whose token an earlier one of their process "
          "had (layers of one app share it): left out, as trace_processor leaves them out"),
    _Code("perfetto.frame_without_display_frame", "note",
          "actual surface frames (FrameTimeline) whose display frame token names no actual "
          "display frame of the trace: no flow"),
    _Code("perfetto.unknown_name_iid", "dropped",
          "event name iids never interned on their sequence: the events have no name"),
    _Code("perfetto.model_attribute_unreadable", "note",
          "the traceconv.model attribute does not hold together: read as any Perfetto trace"),
    _Code("perfetto.extra_counter_values", "dropped",
          "extra counter values that do not pair up with their tracks (another number of "
          "track uuids than values, in the event or in its sequence's defaults): left out, "
          "as trace_processor leaves them out"),
    _Code("perfetto.track_parent_not_declared", "dropped",
          "events on a track whose parent (or an ancestor's parent) no descriptor declares: "
          "left out, as trace_processor leaves them out"),
    _Code("perfetto.truncated", "dropped",
          "the file ends inside a packet: the rest was not read (inside the first: no "
          "whole packet, an error)", CUT),
    _Code("perfetto.packet_decode", "dropped",
          "a packet's part does not decode: left out"),
    _Code("perfetto.typed_field_not_read", "note",
          "typed TrackEvent fields that give no args (which: in the example): extensions "
          "that no extension descriptor in the trace describes (trace_processor also knows "
          "Chrome's, built in), fields the perfetto package's protos do not know, callstacks"
          " and thread-time fields (trace_processor keeps those in tables of their own), "
          "iids never interned, debug annotations' proto values of a type no descriptor "
          "describes (kept as their text)"),
    _Code("perfetto.annotation_decode", "dropped",
          "debug annotations whose nested value does not decode: kept without a value"),
    _Code("perfetto.undeclared_track", "guessed",
          "events on a track uuid that no TrackDescriptor declares: put on a track of their own"),
    _Code("perfetto.counter_on_slice_track", "dropped",
          "counter values on a track that is not a counter track (no CounterDescriptor): left "
          "out, as Perfetto leaves them out"),
    _Code("perfetto.flow_backwards", "note",
          "flows that Perfetto reads reversed, from the end it meets first (the target starts "
          "before the source, or with it and comes first in the file): the format has no word "
          "for a flow's direction, so Perfetto draws them from the earlier slice; traceconv "
          "reading the file back turns them round (the model attribute lists them)"),
    _Code("perfetto.flow_dropped", "dropped",
          "flows that link a slice to itself, to a missing slice or to one not written were"
          " not written"),
    _Code("perfetto.instant_on_counter_track", "dropped",
          "instants on a counter track: not written (a counter track holds values only; "
          "Perfetto would drop or misdraw them)"),
    _Code("perfetto.nul_replaced", "repaired",
          "strings (names, categories, argument names and values, track and process names) "
          "held a NUL character, which trace_processor cuts a string at: each NUL was written"
          f" as '{NUL_PICTURE}' (each distinct string counted once)"),
    _Code("perfetto.pid_replaced", "repaired",
          "a process pid was out of range or used twice; it gets a made-up one above pid_max "
          "(a process without threads becomes a named track group)"),
    _Code("perfetto.tid_replaced", "repaired",
          "a thread's tid was 0 (the idle thread to a Perfetto viewer: Kineto's thread 0), "
          "past a viewer's 32 bits (XLA's thread ids) or used twice in its process; it gets "
          "a made-up one, its name kept (traceconv reads the original back)"),
    _Code("perfetto.slice_on_counter_track", "dropped",
          "slices on a counter track (instants too, when a .pftrace is read): left out (a "
          "counter track holds values only; Perfetto would drop or misdraw them)"),
    _Code("perfetto.time_shifted", "repaired",
          "the trace has negative timestamps; all times were shifted so that the first is 0"),
    # rpd
    _Code("rpd.allocation_without_args", "note",
          "allocation or free calls without a ptr/size in their args (rpd records them only"
          " in some modes)"),
    _Code("rpd.callstack_not_read", "note",
          "ext_callstack rows (a derived summary: parent/child call pairs with inclusive "
          "times), not read"),
    _Code("rpd.dangling_api_op", "dropped",
          "rocpd_api_ops rows naming a call or an op that is not in the file (no flow)"),
    _Code("rpd.dangling_input_signal", "dropped",
          "op dependencies naming an op that is not in the file"),
    _Code("rpd.missing_string", "repaired",
          "string ids with no rocpd_string row (named <string N>)"),
    _Code("rpd.monitor_series_end", "note",
          "counter samples added at the end of each series' last row (rocpd_monitor rows "
          "are intervals)"),
    _Code("rpd.monitor_value_not_a_number", "dropped",
          "rocpd_monitor rows whose value or start is not a number (not read)"),
    _Code("rpd.table_not_read", "dropped", "rows of tables this reader does not read"),
    _Code("rpd.unknown_op_type", "note",
          "GPU ops of a type this reader does not know (category gpu_op)"),
    # rocprof
    _Code("rocprof.allocation_not_read", "dropped",
          "memory allocation and scratch memory records other than ALLOC/FREE (REALLOC, "
          "ASYNC_RECLAIM), without an address (scratch memory: a queue) or a start: no "
          "memory block (a block whose address or size is no number int64 holds is the "
          "builder's: model.memory_block_unreadable)"),
    _Code("rocprof.counter_without_dispatch", "dropped",
          "dispatches of a counter collection file that are in none of the kernel traces "
          "given with it (same dispatch id and kernel): their counters not read"),
    _Code("rocprof.empty_event", "note",
          "empty events of a v1 results.json (rocprof writes one before the first)"),
    _Code("rocprof.event_not_read", "dropped",
          "results.json events of a phase this reader does not read"),
    _Code("rocprof.flow_not_read", "dropped",
          "flow events (s/t/f) of a v1 results.json that bind to no slice, or whose other "
          "end does not (no flow)"),
    _Code("rocprof.malformed_row", "dropped",
          "rows or events whose start or end is not an integer, statistic rows whose calls "
          "or total is not a number (not read)"),
    _Code("rocprof.metadata_event", "note",
          "metadata (M) events of a v1 results.json: process names, which tell its GPU "
          "and COPY events from calls (not events of their own)"),
    _Code("rocprof.name_rejoined", "repaired",
          "CSV rows with more cells than the header (rocprof v1 did not quote a kernel name "
          "with commas): the name's cells joined back with their commas"),
    _Code("rocprof.quoted_text", "note",
          "texts of a results.db stored with the CSV's double quotes around them (read "
          "without)"),
    _Code("rocprof.record_not_read", "dropped",
          "rocprofv3 JSON records of a kind this reader does not read (memory copies and "
          "allocations, scratch memory, PC samples, counter records...)"),
    _Code("rocprof.section_guessed", "guessed",
          "a --stats CSV whose file name tells no section (results.stats.csv, "
          "results.hip_stats.csv, *_kernel_stats.csv, *_hip_api_stats.csv...; a renamed or "
          "pasted file): its rows taken for kernels, their time the device's; name the file "
          "as rocprof did to read API calls as the host's"),
    _Code("rocprof.table_not_read", "dropped",
          "rows of database tables this reader does not read (results.db tables without "
          "BeginNs/EndNs; rocpd samples, queues, arguments...)"),
    _Code("rocprof.value_elided", "dropped",
          "CSV cells written as '...' (a table printed with its long cells cut, then saved "
          "or pasted as CSV): no value, read as empty cells (a counter or argument left "
          "out, a row without its time not read: rocprof.malformed_row), never as 0 (the "
          "file and columns: in the example)"),
    _Code("rocprof.work_without_call", "note",
          "dispatches and copies whose correlation id matches no call of the API trace "
          "given with them (no flow; a trimmed trace or files of two runs)"),
    # sqlite (the one way databases are opened: traceconv/sqlite_access.py)
    _Code("sqlite.generated_column_ignored", "dropped",
          "virtual generated columns of the database (computed at every read, a memory and "
          "time bomb in a hostile file): not read, as if missing"),
    _Code("sqlite.log_ignored", "dropped",
          "a write-ahead log or rollback journal beside the database could not be read: its "
          "rows (often the newest) are missing", severity="error"),
    _Code("sqlite.log_read", "note",
          "a write-ahead log or rollback journal beside the database was read with it"),
    _Code("sqlite.malformed_row", "dropped",
          "rows of a database table with a number column holding something else (text, a "
          "blob, a number beyond 64 bits): left out (the example names table, rowid and "
          "column); a quantity the builder judges (an nsys memory block's size) is handed "
          "to it as stated instead (model.memory_block_unreadable)"),
    # steps (--steps: device work by the step that launched it)
    _Code("steps.device.other_steps", "dropped",
          "device work launched in steps that --steps did not choose (wherever it ran)"),
    _Code("steps.device.unowned", "dropped",
          "device work launched outside every step or with no known launch: in no step"),
    _Code("steps.host.outside", "dropped", "host slices outside the chosen steps' host range"),
    # tensorflow (the Chrome flavour of TF 1.x step timelines)
    _Code("stream.carried_level_not_repeated", "note",
          "live-bytes counter samples a piece of a trace converted piece by piece got at its "
          "start for the memory blocks carried into it, at the level the counter already "
          "had: not written again (the whole trace has no sample there)"),
    _Code("stream.flows_cut", "dropped",
          "flows of a trace converted piece by piece whose two ends fell in different "
          "pieces: each end was read alone, so the flow is not drawn (the reader counts "
          "the ends too)"),
    _Code("stream.memory_blocks_joined", "note",
          "memory blocks alive across a cut of a trace converted piece by piece: the copy "
          "the later piece held was joined to the block (one block, as in the whole trace)"),
    _Code("tensorflow.stream_view_repeated", "note",
          "GPU records of TF's stream:all and memcpy processes, which repeat the records of "
          "the per-stream processes: kept as device ranges that no total counts (the first "
          "in the example)"),
    _Code("tensorflow.device_record_without_op", "note",
          "GPU records whose node name no op of their device's executor has (a copy over a "
          "Send/Recv edge, edge_22_MatMul; the tracer's unknown): device work linked to no "
          "launching op"),
    _Code("tensorflow.input_from_unrecorded_op", "note",
          "op inputs naming a tensor whose producing op the timeline does not hold (folded "
          "away, or run in another step): graph tensors with no producer"),
    _Code("tensorflow.tensor_object_unpaired", "dropped",
          "tensor snapshots or deletions (O, D) of no object the Tensors process created (N), or with an id that is no number or text"),
    _Code("tensorflow.tensor_without_allocation", "note",
          "tensors whose snapshot states no address (ptr) or no requested_bytes: graph "
          "tensors, no memory block"),
    # torch_et
    _Code("torch_et.duplicate_id", "dropped",
          "nodes whose id an earlier node already has: an id names one op (its links and "
          "its Kineto slice), so the first node keeps it and the later ones are left out"),
    _Code("torch_et.malformed", "dropped",
          "nodes, parent ids, argument lists or attribute entries of the wrong type (a node"
          " without an integer id is skipped; a bad parent, argument list or attribute "
          "entry is left out)"),
    _Code("torch_et.structure_nodes", "note",
          "process/thread root nodes of the execution trace (structure, not ops)"),
    # torch_memory
    _Code("torch_memory.impossible_free", "dropped", "frees of a size no block can have "
          "(zero, negative: a row whose sign says the other action, or past int64): ignored "
          "(an allocation's size and offset are the builder's: model.memory_block_unreadable, "
          "model.negative_length)"),
    _Code("torch_memory.reconstructed", "guessed",
          "the export has no tensor ids or addresses: blocks pair allocations with frees of"
          " the same category and size, at logical offsets"),
    _Code("torch_memory.split", "guessed",
          "a free matched no block of its size and took part of one"),
    _Code("torch_memory.unmatched_free", "dropped",
          "bytes freed with no live block of that category (ignored)"),
    _Code("torch_memory.time_backwards", "repaired",
          "rows earlier than the row before them: read at that row's time (a block is never"
          " freed before it was allocated)"),
    _Code("torch_memory.negative_total", "repaired", "category totals below zero: read as 0"),
    # torch_snapshot
    _Code("torch_snapshot.alloc_before_history", "guessed",
          "allocated blocks alive at dump time whose alloc is older than the recorded "
          "history (alloc time unknown)"),
    _Code("torch_snapshot.annotation_unpaired", "dropped",
          "external annotation START/END without its partner (or an END before its START)"),
    _Code("torch_snapshot.annotation_without_time", "dropped",
          "external annotations without time_us"),
    _Code("torch_snapshot.free_before_history", "guessed",
          "frees of blocks allocated before the recorded history (alloc time unknown)"),
    _Code("torch_snapshot.free_never_completed", "note",
          "blocks whose free was requested but not completed at dump time (drawn alive to "
          "the end)"),
    _Code("torch_snapshot.malformed", "dropped",
          "device traces, entries, segments, blocks or annotations of the wrong shape (not "
          "an object, a list or text where a number belongs, not finite, a negative size, a "
          "stream or device past int64): skipped (an address, size or time past int64 is "
          "the builder's: model.memory_block_unreadable, model.time_beyond_range)"),
    _Code("torch_snapshot.malformed_frames", "dropped",
          "frames that are not a list of objects (no stack)"),
    _Code("torch_snapshot.no_time", "guessed",
          "entries without time_us: placed at the previous entry's time"),
    _Code("torch_snapshot.pool_from_size", "guessed",
          "cudaMalloc segments freed before the dump (so no dump-time segment names their "
          "pool): small pool when 2 MiB (its segment size), else large"),
    _Code("torch_snapshot.realloc", "repaired",
          "allocs, segment allocs or maps at an address still in use (a free or unmap was "
          "lost): the older block, or the part of the older segment they cover, is closed "
          "there"),
    _Code("torch_snapshot.segment_before_history", "guessed",
          "dump-time segments reserved, in whole or in part, before the recorded history "
          "(reserve time unknown)"),
    _Code("torch_snapshot.segment_free_before_history", "guessed",
          "segment frees and unmaps of memory reserved before the recorded history"),
    _Code("torch_snapshot.unknown_action", "dropped",
          "trace entries with an action traceconv does not know"),
    # runs (analysis/runs.py)
    _Code("runs.other_runs", "note",
          "processes, tracks, events, graph nodes, memory blocks and statistics rows of the "
          "file's other runs, left out of the run taken (FILE@N): each run shows its own"),
    # trim
    _Code("trim.exclude", "dropped", "slices matching --exclude"),
    _Code("trim.flows", "dropped", "flows with an end trimmed away"),
    _Code("trim.only", "dropped", "slices not matching --only (nor enclosing a match)"),
    _Code("trim.tracks", "dropped", "tracks left out by --tracks"),
    _Code("trim.tracks.slices", "dropped", "slices on tracks --tracks left out"),
    _Code("trim.tracks.{table}", "dropped",
          "instants or counter samples on tracks --tracks left out"),
    _Code("trim.window.clipped", "repaired", "slices cut to the --window bounds"),
    _Code("trim.window.memory_blocks", "dropped", "memory blocks not alive during --window"),
    _Code("trim.window.slices", "dropped", "slices outside --window"),
    _Code("trim.window.{table}", "dropped", "instants or counter samples outside --window"),
    # trtexec
    _Code("trtexec.layer_names_only", "note",
          "layers exported by name only (--profilingVerbosity=layer_names_only): no "
          "tensors, types or tactics"),
    _Code("trtexec.no_enqueue_times", "note",
          "inferences without enqueue times (TensorRT 7 exports): no host slice or launch "
          "flow"),
    _Code("trtexec.profile_layer_not_in_graph", "note",
          "profile rows naming no layer of the layer information (another engine's export?)"),
    _Code("trtexec.repeated_export", "dropped",
          "exports of the same kind given twice for one engine: the first is read"),
    _Code("trtexec.trex_metadata", "note",
          "trt-engine-explorer metadata files read into the attributes (no events)"),
    _Code("trtexec.zero_length_transfers", "note",
          "H2D/D2H phases of zero length (data transfers disabled or not measured): no "
          "slice"),
    # xplane
    _Code("xplane.aggregated_events", "dropped",
          "events that only count occurrences (no time of their own): left out of the "
          "timeline"),
    _Code("xplane.ambiguous_correlation", "dropped",
          "correlation ids on several host events: no launch flow drawn"),
    _Code("xplane.ambiguous_producer", "guessed",
          "contexts produced by several events: linked from the first"),
    _Code("xplane.binary_stats", "dropped",
          "stat values holding serialized protos (core details, memory access breakdowns, "
          "HLO protos) left out of the args"),
    _Code("xplane.consumer_without_producer", "note",
          "events consuming a context (_ct/_c) that no event produced"),
    _Code("xplane.device_event_without_launch", "note",
          "device events whose correlation_id no host event shares (launched before the "
          "capture, or by another process)"),
    _Code("xplane.empty_lines", "note", "lines with no events (no track made)"),
    _Code("xplane.flow_single_end", "note",
          "flow stats whose id no other event shares (no arrow to draw)"),
    _Code("xplane.launch_without_device_event", "note",
          "host events with a correlation_id that no device event shares (the device side "
          "was not captured)"),
    _Code("xplane.memory_event_without_address", "dropped",
          "allocator events without an integer addr (or an allocation without its size): "
          "instants only, no block"),
    _Code("xplane.plane_without_events", "note",
          "planes with no events (device properties or profile times only): their stats are"
          " in the attributes"),
    _Code("xplane.profiler_errors", "note",
          "errors the profiler recorded in the XSpace (see the attributes)"),
    _Code("xplane.profiler_warnings", "note",
          "warnings the profiler recorded in the XSpace (see the attributes)"),
    _Code("xplane.sub_ns_times", "repaired",
          "events whose picosecond start or duration is not a whole nanosecond: floored to "
          "ns"),
    _Code("xplane.unknown_device_line", "guessed",
          "device lines traceconv does not know: read as annotations"),
    _Code("xplane.unknown_event_metadata", "repaired",
          "events whose metadata id the plane does not define: named by the id"),
    _Code("xplane.unknown_stat_metadata", "repaired",
          "stats whose metadata id the plane does not define: named stat#<id>"),
    # {reader}
    _Code("{reader}.allocator_counter_present", "note",
          "allocator counters the file already holds (a traceconv output read back): not "
          "derived again"),
    _Code("{reader}.alloc_without_free", "guessed",
          "allocations on an address whose block was still open: its free was not recorded, "
          "so that block ends where the new one starts (traceconv/model/block_pairing.py)"),
    _Code("{reader}.free_without_alloc", "guessed",
          "frees with no open block on their address: memory allocated before the trace, a "
          "block from the trace's start (traceconv/model/block_pairing.py)"),
    _Code("{reader}.unknown_memory_record", "dropped",
          "allocator records of an unknown type (kept as instants)"),
    _Code("{reader}.kernel_without_launch", "note",
          "device records with no runtime call to link from"),
    _Code("{reader}.launch_flows_guessed", "guessed",
          "runtime→kernel flows matched by annotation and order (no correlation ids)"),
    _Code("{reader}.foreign_lines", "note",
          "lines outside the report's tables or not shaped like a row (prose, markup, shell "
          "commands, other output around a paste): skipped, nothing of the report lost "
          "(traceconv/formats/stray_lines.py)"),
    _Code("{reader}.row_remark", "note",
          "text a paste wrote after a drawn table's rows (a tutorial's '# comment' on each "
          "line of output), past the rule its widest cell sets: not part of the row's last "
          "cell (a name); nothing of the report lost, the first remark in the example "
          "(traceconv/formats/ruled_tables.py)"),
    _Code("{reader}.other_report", "dropped",
          "lines of another tool's report in the same text (an nsys stats report, then a "
          "MIGraphX perf report): the lines, from where another text format's sniffer is "
          "sure of them, are not read; the example names that line and the format (split "
          "the file to read it) (traceconv/formats/stray_lines.py)"),
    _Code("{reader}.elided", "dropped",
          "'...' lines or '# ...' remarks among a report's rows: the paste left rows out there "
          "(the rows read do not hold them; totals the report states do) "
          "(traceconv/formats/stray_lines.py)"),
    _Code("{reader}.never_timed", "note",
          "a text report's rows with a time printed nan (-nan ms: a MIGraphX module that did "
          "not run, a cell the tool could not time): kept, that time unknown (an instruction "
          "laid out with zero duration, a statistic's total 0); the one number rule of the "
          "text readers, whose infinity is a time past range (traceconv/numbers.py)"),
    _Code("{reader}.never_sized", "note",
          "a text report's rows with a count or size printed nan (a Paddle Memory Summary "
          "cell, an nsys stats count): kept, that figure unknown; the one number rule of the "
          "text readers, whose infinity is a number past range (traceconv/numbers.py "
          "printed_whole)"),
    _Code("{reader}.table_cut", "dropped",
          "the input ends inside a report's table (a cut file or paste): in the middle of a "
          "line not whole by the table's grammar (every cell, padded to the table's width), "
          "inside a row's indentation, or right after a section's title: the rows after the "
          "cut are lost, how many the input cannot say; an unread cut line is counted as a "
          "row lost (traceconv/formats/stray_lines.py)", CUT),
    _Code("{reader}.rows_missing", "dropped",
          "a table whose rows read fall short of what the report states of it (a count, a "
          "total, shares of 100 %) beyond the printed precision, or an input that ends "
          "before the text its format prints after a table (a closing rule, a Note's rule, "
          "a report that always follows): rows lost (a cut at a line end, a partial paste) "
          "or edited; the numbers or the missing end in the example "
          "(traceconv/formats/stated_totals.py)"),
    _Code("{reader}.stated_total_differs", "note",
          "a table whose rows read exceed what the report states of it beyond the printed "
          "precision: nothing lost, the report disagrees with itself (numbers edited, rows of "
          "another run); both numbers in the example (traceconv/formats/stated_totals.py)"),
    _Code("{reader}.stated_total_unchecked", "note",
          "a table whose stated total or shares could not be compared with its rows: the "
          "total or a row's share is printed as no number (a cell edited, text of another "
          "column); the rows are kept, that check not made; the place and the text in the "
          "example (traceconv/formats/stated_totals.py)"),
    _Code("{reader}.invalid_utf8", "repaired",
          "strings that were not valid UTF-8: undecodable bytes shown as U+FFFD"),
)

_EXACT = {c.code: c for c in CODES}   # (a pattern finds itself too)
# codes an older traceconv wrote that one shared rule now counts under another name, so that
# a trace it wrote reads back under today's code (:meth:`.Diagnostics.add_carried`)
RENAMED = {
    "nsys.free_without_allocation": "nsys.free_without_alloc",     # (model/block_pairing.py)
    "rocprof.free_without_allocation": "rocprof.free_without_alloc",
    "nsys.address_beyond_int64": "model.memory_block_unreadable",  # (model/builder.py)
    "torch_memory.size_out_of_range": "model.memory_block_unreadable",
    "migraphx.nan_time": "migraphx.never_timed",                   # (numbers.printed_ns)
    "paddle_report.non_finite_total": "paddle_report.never_timed",
}
_PLACEHOLDER = re.compile(r"\\\{\w+\\\}")


@cache
def _patterns() -> list[tuple[re.Pattern[str], CodeInfo]]:
    # a placeholder stands for one dotted part of a code; the last one for the rest, as the
    # source wrote it (a Chrome phase is any text: ``chrome.unsupported_phase.{phase}``)
    out = []
    for c in CODES:
        if c.is_pattern:
            text = _PLACEHOLDER.sub(r"[^.]+", re.escape(c.code))
            if c.code.endswith("}"):
                text = text[:-len("[^.]+")] + r"[\s\S]*"   # (a phase may be "")
            out.append((re.compile(text + r"\Z"), c))
    return out


def lookup(code: str) -> CodeInfo | None:
    """The table's entry for ``code`` (an exact code first, else a pattern), or None."""
    found = _EXACT.get(code)
    if found is not None:
        return found
    return next((info for pattern, info in _patterns() if pattern.match(code)), None)

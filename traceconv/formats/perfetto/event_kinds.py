"""The kinds of track event the reader keeps (its events' ``type`` column): TrackEvent's own
types, and the legacy phases (``TrackEvent.legacy_event.phase``) that have none.

>>> LEGACY_PHASES[ord("b")] == ASYNC_BEGIN, ASYNC[ASYNC_END], ASYNC[LEGACY_PHASES[ord("T")]]
(True, 'e', 'n')
"""

BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4    # TrackEvent.Type
TYPES = (BEGIN, END, INSTANT, COUNTER)
COMPLETE = 9   # a legacy 'X' event, with its duration
# legacy async events ('b', 'e', 'n'): an object's, named by its id (:mod:`.legacy_async`);
# and the old async ones ('S', 'T', 'p', 'F'), whose ids are scoped by the event's name
ASYNC_BEGIN, ASYNC_END, ASYNC_INSTANT = 10, 11, 12
OLD_ASYNC_BEGIN, OLD_ASYNC_STEP_INTO, OLD_ASYNC_STEP_PAST, OLD_ASYNC_END = 13, 14, 15, 16
OLD_ASYNC = (OLD_ASYNC_BEGIN, OLD_ASYNC_STEP_INTO, OLD_ASYNC_STEP_PAST, OLD_ASYNC_END)
# each as a 'b', 'e' or 'n' makes slices (a step: an instant); and as trace_processor counts
# it for its object's hold on its track (a 'T' as an end, an 'F' as an instant)
ASYNC = {ASYNC_BEGIN: "b", ASYNC_END: "e", ASYNC_INSTANT: "n", OLD_ASYNC_BEGIN: "b",
         OLD_ASYNC_STEP_INTO: "n", OLD_ASYNC_STEP_PAST: "n", OLD_ASYNC_END: "e"}
HOLDS = {**ASYNC, OLD_ASYNC_STEP_INTO: "e", OLD_ASYNC_END: "n"}
KEPT = (*TYPES, COMPLETE, *ASYNC)
# ('R': a mark, Chrome's navigationStart and paint timings: an instant, as trace_processor
# shows it)
LEGACY_PHASES = {ord("B"): BEGIN, ord("E"): END, ord("X"): COMPLETE, ord("I"): INSTANT,
                 ord("i"): INSTANT, ord("R"): INSTANT, ord("b"): ASYNC_BEGIN,
                 ord("e"): ASYNC_END, ord("n"): ASYNC_INSTANT, ord("S"): OLD_ASYNC_BEGIN,
                 ord("T"): OLD_ASYNC_STEP_INTO, ord("p"): OLD_ASYNC_STEP_PAST,
                 ord("F"): OLD_ASYNC_END}

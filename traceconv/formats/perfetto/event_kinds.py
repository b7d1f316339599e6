"""The kinds of track event the reader keeps (its events' ``type`` column): TrackEvent's own
types, and the legacy phases (``TrackEvent.legacy_event.phase``) that have none.

>>> LEGACY_PHASES[ord("b")] == ASYNC_BEGIN, ASYNC[ASYNC_END]
(True, 'e')
"""

BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4    # TrackEvent.Type
TYPES = (BEGIN, END, INSTANT, COUNTER)
COMPLETE = 9   # a legacy 'X' event, with its duration
# legacy async events ('b', 'e', 'n'): an object's, named by its id (:mod:`.legacy_async`)
ASYNC_BEGIN, ASYNC_END, ASYNC_INSTANT = 10, 11, 12
ASYNC = {ASYNC_BEGIN: "b", ASYNC_END: "e", ASYNC_INSTANT: "n"}
KEPT = (*TYPES, COMPLETE, *ASYNC)
# ('R': a mark, Chrome's navigationStart and paint timings: an instant, as trace_processor
# shows it)
LEGACY_PHASES = {ord("B"): BEGIN, ord("E"): END, ord("X"): COMPLETE, ord("I"): INSTANT,
                 ord("i"): INSTANT, ord("R"): INSTANT,
                 **{ord(phase): kind for kind, phase in ASYNC.items()}}

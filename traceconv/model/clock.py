"""Names of trace clocks that are not time: a logical clock orders events without timing
them (one step per event, 1 ns apart, so that every writer still has integer times); an
input on no clock at all (a statistics table, an execution trace's op order) says
``none (what it holds)``, and has no span.

>>> is_logical(LOGICAL_ENTRY_CLOCK), is_logical("unix epoch"), has_no_clock(STATISTICS_CLOCK)
(True, False, True)
"""

from __future__ import annotations

from ..units import format_duration

LOGICAL_PREFIX = "logical"
# A torch allocator snapshot without time_us (torch < ~2.1): entry k of its trace is at k ns
LOGICAL_ENTRY_CLOCK = "logical (allocator trace entry index: no time_us, 1 ns = 1 entry)"
NO_CLOCK_PREFIX = "none"
# the clock of an input that holds only statistics (totals per name: no event has a time)
STATISTICS_CLOCK = "none (statistics)"
# statistics drawn as slices as long as their totals, side by side (model.breakdown): the
# span is the totals' sum, not a time that passed
AGGREGATE_PREFIX = "synthetic: aggregate breakdown"


def is_logical(clock: str | None) -> bool:
    """Whether ``clock`` numbers events in order instead of timing them."""
    return bool(clock) and clock.startswith(LOGICAL_PREFIX)  # type: ignore[union-attr]


def has_no_clock(clock: str | None) -> bool:
    """Whether ``clock`` says the input has no times at all (``none (statistics)``)."""
    return bool(clock) and clock.startswith(NO_CLOCK_PREFIX)  # type: ignore[union-attr]


def span_text(span_ns: int, clock: str | None) -> str:
    """How long a trace is, for people: a duration on a clock of time, its own steps on a
    logical clock.

    >>> span_text(9700, LOGICAL_ENTRY_CLOCK), span_text(9700, "unix epoch"), span_text(300, None)
    ('9,700 entries', '9.7 µs', '300 ns')
    >>> span_text(0, STATISTICS_CLOCK)
    'none (no clock: statistics)'
    >>> span_text(7_659_638_200, AGGREGATE_PREFIX + " (...)")
    '7.66 s of op totals (side by side: not elapsed)'
    """
    if has_no_clock(clock):
        return f"none (no clock: {clock.removeprefix(NO_CLOCK_PREFIX).strip(' ()')})"  # type: ignore[union-attr]
    if clock and clock.startswith(AGGREGATE_PREFIX):
        return f"{format_duration(span_ns)} of op totals (side by side: not elapsed)"
    if not is_logical(clock):
        return format_duration(span_ns)
    return f"{span_ns:,} {'entries' if clock == LOGICAL_ENTRY_CLOCK else 'steps'}"

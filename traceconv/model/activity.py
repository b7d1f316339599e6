"""What each slice *is* and what it is *for*, in one vocabulary shared by every analysis.

Readers know their vendor's words (``cpu_op``, ``cuda_runtime``, ``Operator``,
``migraphx.kernel``...); analyses must not. So each reader states, once, at read time, the
activity of every slice in :attr:`SliceTable.activity <traceconv.model.columns.SliceTable>`
(one int8 per slice), from its own :class:`Vocabulary` (:func:`fill_activity`). A row left
:attr:`Activity.UNKNOWN` (a trace built by hand, a reader that does not know) is classified
by the general vocabulary when an analysis asks
(:func:`traceconv.analysis.activity.slice_activity`, the one accessor).

A value is a *kind* (what the record is: host op, Python frame, annotation, runtime call,
kernel, copy, a range that is no work such as an async span...; the low four bits) plus
*roles* (what it is for: a training step, data
loading, communication; one bit each). :func:`primary` folds them into the one word the
advice and critical-path analyses use; :func:`kind_of` keeps the record's kind (the
operator table of ``torch.profiler`` needs it: a Python frame inside the data loader is
still a Python frame).

>>> int(Activity.ANNOTATION | Activity.STEP), Activity(primary(Activity.ANNOTATION | Activity.STEP)).name
(19, 'STEP')

A host thread blocked in a call (:attr:`Activity.WAIT`: ``futex``, ``poll``,
``pthread_cond_wait``) is waiting, not working: no analysis counts that time as host work.
A call that waits for the device (:attr:`Activity.SYNC`: ``cudaStreamSynchronize``) stays a
runtime call: the critical path follows it to the device work it waited for, and torch's
``key_averages`` counts its time as CPU time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING

import numpy as np

from .entities import ProcessKind
from .typed_arrays import read_only_view

if TYPE_CHECKING:
    from .trace import Trace

KIND_BITS = 0x0F   # the kind of a value; the bits above are roles


class Activity(IntEnum):
    """The kind of work a slice stands for (values below 16), or a role (16, 32, 64)."""

    UNKNOWN = 0          # not classified by the reader (see the module text)
    HOST_OP = 1          # a framework operator on a host thread
    PYTHON = 2           # a Python function frame
    ANNOTATION = 3       # a user range on the host
    LAUNCH = 4           # a runtime call that enqueues device work (kernel launch, async copy)
    SYNC = 5             # a runtime call that blocks the host until the device catches up
    RUNTIME = 6          # any other runtime / driver call
    KERNEL = 7           # compute (on a device; on the host for CPU kernels)
    MEMCPY = 8           # device copy
    MEMSET = 9           # device memset
    RANGE = 10           # a range that is no work: drawn on a device stream (a device
    #                      annotation), or an async span (an object's lifetime, a logical
    #                      operation: no thread runs it; see analysis.activity.slice_activity)
    DEVICE_ANNOTATION = 10   # (the same kind: a range drawn on a device stream)
    DEVICE_SYNC = 11     # a device-side sync / event marker (not work)
    WAIT = 11            # (the same kind, on a host thread: a call in which the thread is
    #                      blocked until another thread, a timer or a file wakes it, such as
    #                      futex, poll, pthread_cond_wait: waiting, not work)
    OVERHEAD = 12        # the profiler's own overhead
    AGGREGATE = 13       # drawn from a statistics table, not a timeline
    PROFILER = 14        # the profiler's own recording window
    OTHER = 15           # known, and none of the above
    # roles, or-ed onto a kind
    STEP = 16            # one training / inference step
    DATALOADER = 32      # fetching the next batch
    COMMUNICATION = 64   # collectives / point-to-point (NCCL, RCCL, Gloo...)


ROLES = (Activity.STEP, Activity.DATALOADER, Activity.COMMUNICATION)   # in precedence order
DEVICE_WORK = (Activity.KERNEL, Activity.MEMCPY, Activity.MEMSET, Activity.COMMUNICATION)
# what marks time but is nobody's work: a statistics table's rows, the profiler's window,
# ranges, a thread blocked in a call (and, the same kind on a device, a sync marker)
NOT_WORK = (Activity.AGGREGATE, Activity.PROFILER, Activity.RANGE, Activity.WAIT)
RUNTIME_CALLS = (Activity.LAUNCH, Activity.SYNC, Activity.RUNTIME)


def kind_of(values: np.ndarray) -> np.ndarray:
    """The kinds of activity values (roles dropped).

    >>> kind_of(np.array([Activity.KERNEL | Activity.COMMUNICATION], np.int8)).tolist()
    [7]
    """
    return values & KIND_BITS


def primary(values: np.ndarray | int) -> np.ndarray:
    """One activity per value: its first role (step, data loading, communication), else its
    kind. This is the vocabulary of ``advise`` and ``critical-path``. Ranges (a device
    annotation, an async span) and device syncs are not work: they keep their kind whatever
    their role.

    >>> [Activity(a).name for a in primary(np.array([1, 1 | 64, 2 | 32 | 64, 10 | 16], np.int8))]
    ['HOST_OP', 'COMMUNICATION', 'DATALOADER', 'RANGE']
    """
    values = np.asarray(values, dtype=np.int8)
    out = values & KIND_BITS
    work = (out != Activity.RANGE) & (out != Activity.DEVICE_SYNC)
    for role in reversed(ROLES):
        out = np.where(work & (values & role != 0), np.int8(role), out)
    return out.astype(np.int8)


def _lower(words: Iterable[str]) -> frozenset[str]:
    return frozenset(w.lower() for w in words)


# Where a word of a name begins or ends: beside a character that is no letter or digit
# (``_ : - . ( <``, a space, either end), between a letter and a digit, at a capital after
# a small letter (``ncclDevKernel_AllReduce``) and before the last capital of a run of them
# that a small letter follows (``HtoDAsync``). (Cases are told apart whatever the flags.)
WORD_EDGE = (r"(?:(?<![^\W_])|(?![^\W_])|(?-i:(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]))"
             r"|(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_]))")


def _either(patterns: Iterable[str], *, whole_words: bool = True) -> re.Pattern[str] | None:
    """One case-insensitive pattern of ``patterns``, each matching whole words only (a
    match begins and ends at a :data:`WORD_EDGE`): ``all_reduce`` is in
    ``nccl:all_reduce`` and ``ncclDevKernel_AllReduce``, never in ``small_reduce_kernel``.
    (Without ``whole_words``: anywhere, a wider pattern that scans many times faster.)

    >>> words = _either(["all[_-]?reduce", "memcpy"])
    >>> [bool(words.search(n)) for n in ("ncclDevKernel_AllReduce_Sum_f32", "c_allreduce_sum",
    ...  "all-reduce.1", "small_reduce_kernel", "cudaMemcpyAsync", "cudaMemcpy2D", "memcpyish")]
    [True, True, True, False, True, True, False]
    """
    parts = [p for p in patterns if p]
    if not parts:
        return None
    either = "|".join(f"(?:{p})" for p in parts)
    if whole_words:
        either = f"{WORD_EDGE}(?:{either}){WORD_EDGE}"
    return re.compile(either, re.IGNORECASE | re.MULTILINE)   # (a name a line: name_bits_of)


@dataclass(frozen=True)
class Vocabulary:
    """One producer's words for the activities: categories (matched case-insensitively) and
    name patterns (regular expressions, case-insensitive, matching whole words of a name:
    see :func:`_either`; step names match the whole name, case and all). Vendor knowledge
    lives in the readers' instances of this class, never in an analysis.

    >>> v = Vocabulary("demo", kernel={"kernel"}, runtime={"cuda_runtime"},
    ...                sync_names=("Synchronize",), launch_names=("Launch",))
    >>> Activity(v.classify("cuda_runtime", "cudaStreamSynchronize", False)).name
    'SYNC'
    >>> Activity(v.classify("kernel", "gemm", True)).name, Activity(v.classify("x", "y", False)).name
    ('KERNEL', 'HOST_OP')
    """

    name: str
    kernel: AbstractSet[str] = frozenset()            # compute (either side)
    memcpy: AbstractSet[str] = frozenset()            # device copies
    memset: AbstractSet[str] = frozenset()
    device_annotation: AbstractSet[str] = frozenset()
    device_sync: AbstractSet[str] = frozenset()
    runtime: AbstractSet[str] = frozenset()           # runtime / driver API calls
    annotation: AbstractSet[str] = frozenset()        # user ranges on the host
    python: AbstractSet[str] = frozenset()
    overhead: AbstractSet[str] = frozenset()
    aggregate: AbstractSet[str] = frozenset()
    profiler: AbstractSet[str] = frozenset()
    step: AbstractSet[str] = frozenset()              # categories of step ranges
    dataloader: AbstractSet[str] = frozenset()
    other: AbstractSet[str] = frozenset()             # known, none of the above (bookkeeping)
    step_names: tuple[str, ...] = ()                # (anchored at both ends)
    dataloader_names: tuple[str, ...] = ()
    communication_names: tuple[str, ...] = ()
    sync_names: tuple[str, ...] = ()                # runtime calls that wait for the device
    wait_names: tuple[str, ...] = ()                # runtime calls that block the thread
    launch_names: tuple[str, ...] = ()              # runtime calls that enqueue work
    memcpy_names: tuple[str, ...] = ()              # device work named as a copy
    memset_names: tuple[str, ...] = ()
    # device records that wait for other work whatever their category (rocprof files
    # barrier packets among the kernel dispatches)
    device_sync_names: tuple[str, ...] = ()
    _patterns: dict[str, re.Pattern[str] | None] = field(init=False, repr=False,
                                                         compare=False)
    _near: dict[str, re.Pattern[str] | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in _SETS:
            object.__setattr__(self, name, _lower(getattr(self, name)))
        for attribute, whole_words in (("_patterns", True), ("_near", False)):
            patterns = {name: _either(getattr(self, f"{name}_names"), whole_words=whole_words)
                        for name in _NAMED}
            steps = patterns["step"]
            if steps is not None:   # a step name is the whole name (a line), as written
                patterns["step"] = re.compile(f"^(?:{steps.pattern})$", re.MULTILINE)
            object.__setattr__(self, attribute, patterns)

    def category_bits(self, category: str) -> int:
        """Which of the category sets ``category`` is in (one bit per set of ``_SETS``)."""
        cat = category.lower()
        return sum(1 << i for i, name in enumerate(_SETS) if cat in getattr(self, name))

    def name_bits(self, name: str) -> int:
        """Which of the name patterns ``name`` matches (one bit per rule of ``_NAMED``)."""
        return sum(1 << i for i, rule in enumerate(_NAMED)
                   if (p := self._patterns[rule]) is not None and p.search(name) is not None)

    def named(self, name: str, *rules: str) -> bool:
        """Whether ``name`` matches the name patterns of any of ``rules`` (of ``_NAMED``:
        ``"communication"``, ``"memcpy"``...), by the rule :meth:`classify` follows.

        >>> v = Vocabulary("demo", communication_names=("all[_-]?gather",))
        >>> [v.named(n, "communication") for n in ("ncclKernel_AllGather_RING_LL_Sum_float",
        ...                                        "install_gather_hooks")]
        [True, False]
        """
        return any((p := self._patterns[rule]) is not None and p.search(name) is not None
                   for rule in rules)

    def name_bits_of(self, names: list[str]) -> np.ndarray:
        """:meth:`name_bits` of many names at once: each rule's pattern without its word
        edges scans the names joined by line breaks in one pass (name patterns never match
        a line break), and only the names it finds are tried whole, so a trace with
        thousands of long Python-frame names costs one fast scan per rule, not one per name."""
        bits = np.zeros(len(names), np.int32)
        clean = [n for n in names if "\n" not in n]
        if len(clean) != len(names):   # (a name with a line break: one at a time)
            return np.array([self.name_bits(n) for n in names], np.int32)
        text = "\n".join(names)
        starts = np.cumsum([0] + [len(n) + 1 for n in names[:-1]])
        for i, rule in enumerate(_NAMED):
            pattern, near = self._patterns[rule], self._near[rule]
            if pattern is None or near is None or not names:
                continue
            hits = [m.start() for m in near.finditer(text)]
            found = np.unique(np.searchsorted(starts, hits, "right") - 1).tolist()
            bits[[k for k in found if pattern.search(names[k])]] |= 1 << i
        return bits

    def classify(self, category: str, name: str, on_device: bool) -> int:
        """The activity value (kind | roles) of one slice."""
        return decide(self.category_bits(category), self.name_bits(name), on_device)

    def statistic(self, category: str, name: str, on_device: bool,
                  section: str) -> tuple[str, str | None]:
        """The type of a statistics row of ``section`` named ``name`` and what its time is,
        by the rule that classifies the timeline's slices of that category and name
        (:meth:`classify`), so that a table and a timeline of one run count alike. Its type
        is ``communication`` for a collective (NCCL's or RCCL's kernels), else its section;
        its time, when it is no work, is a key of
        :data:`~traceconv.model.entities.NOT_WORK_TIMES` (for ``OpStat.extra[TIME_IS]``): a
        host thread blocked in a call is ``waiting``, a device waiting for other work is
        ``device waiting``; None for work.

        >>> v = Vocabulary("demo", kernel={"kernel"}, runtime={"os"}, wait_names=("poll",),
        ...                device_sync_names=("<barrier>",), communication_names=("nccl",))
        >>> v.statistic("os", "poll", False, "osrt"), v.statistic("kernel", "<barrier>", True, "kernel")
        (('osrt', 'waiting'), ('kernel', 'device waiting'))
        >>> v.statistic("kernel", "ncclDevKernel_Generic", True, "kernel")
        ('communication', None)
        """
        activity = self.classify(category, name, on_device)
        kind = "communication" if activity & Activity.COMMUNICATION else section
        if activity & KIND_BITS != Activity.WAIT:
            return kind, None   # (a thread's wait and a device's sync are the one kind)
        return kind, "device waiting" if on_device else "waiting"

    def classify_rows(self, trace: Trace, rows: np.ndarray | None = None) -> np.ndarray:
        """The activity values of slice ``rows`` (all by default), vectorised: the sets and
        patterns are tried once per distinct category and name, never per row."""
        s = trace.slices
        every = rows is None or len(rows) == len(s)
        if not len(s) or rows is not None and not len(rows):
            return np.zeros(0 if rows is None else len(rows), np.int8)
        strings = trace.strings.strings
        category = read_only_view(s.category)[:len(s)]
        name = read_only_view(s.name)[:len(s)]
        device = on_device_rows(trace)
        if not every:
            category, name, device = category[rows], name[rows], device[rows]
        # each distinct set membership of the categories present gets a small code
        codes: dict[int, int] = {}
        cat_code = np.zeros(len(strings), np.int32)
        for i in np.flatnonzero(np.bincount(category, minlength=len(strings))).tolist():
            cat_code[i] = codes.setdefault(self.category_bits(strings[i]), len(codes))
        name_bits = np.zeros(len(strings), np.int32)
        present = np.flatnonzero(np.bincount(name, minlength=len(strings)))
        name_bits[present] = self.name_bits_of([strings[i] for i in present.tolist()])
        table = np.zeros(len(codes) << (len(_NAMED) + 1), np.int8)
        for bits, code in codes.items():
            for k in range(code << (len(_NAMED) + 1), (code + 1) << (len(_NAMED) + 1)):
                table[k] = decide(bits, (k >> 1) & ((1 << len(_NAMED)) - 1), bool(k & 1))
        found = np.empty(len(name), np.int8)
        for lo in range(0, len(name), _ROWS):   # (a block at a time: its keys only)
            part = slice(lo, lo + _ROWS)
            found[part] = table[(cat_code[category[part]] << (len(_NAMED) + 1))
                                | (name_bits[name[part]] << 1) | device[part]]
        return found

    @classmethod
    def union(cls, name: str, *vocabularies: Vocabulary) -> Vocabulary:
        """One vocabulary with every word of ``vocabularies`` (for input of unknown origin).

        >>> a, b = Vocabulary("a", kernel={"kernel"}), Vocabulary("b", kernel={"Kernel", "k2"})
        >>> sorted(Vocabulary.union("ab", a, b).kernel)
        ['k2', 'kernel']
        """
        merged: dict[str, object] = {}
        for v in vocabularies:
            for key in (*_SETS, *(f"{rule}_names" for rule in _NAMED)):
                value, old = getattr(v, key), merged.get(key)
                merged[key] = value if old is None else (
                    old | value if isinstance(value, frozenset)   # type: ignore[operator]
                    else tuple(dict.fromkeys((*old, *value))))   # type: ignore[misc]
        return cls(name, **merged)   # type: ignore[arg-type]


_SETS = ("aggregate", "profiler", "device_annotation", "device_sync", "memset", "memcpy",
         "kernel", "runtime", "python", "overhead", "annotation", "step", "dataloader", "other")
_NAMED = ("step", "dataloader", "communication", "sync", "launch", "memcpy", "memset",
          "wait", "device_sync")
_ROWS = 1 << 16   # slices classified together (their composite keys are alive at once)
_C = {name: 1 << i for i, name in enumerate(_SETS)}
_N = {name: 1 << i for i, name in enumerate(_NAMED)}


def decide(category: int, name: int, on_device: bool) -> int:
    """The activity of a slice from its category's set bits and its name's pattern bits
    (see :meth:`Vocabulary.category_bits` and :meth:`Vocabulary.name_bits`).

    >>> Activity(decide(_C["annotation"], _N["communication"], False) & KIND_BITS).name
    'ANNOTATION'
    >>> [Activity(decide(_C["other"], n, True)).name for n in (0, _N["memcpy"])]
    ['OTHER', 'MEMCPY']
    """
    if category & _C["aggregate"]:
        return Activity.AGGREGATE
    if category & _C["profiler"]:
        return Activity.PROFILER
    if on_device:
        if category & _C["step"]:   # a step marker drawn on a device line (XPlane's Steps)
            return Activity.OTHER | Activity.STEP
        if category & _C["device_annotation"]:   # (a step's range drawn on the device too)
            return Activity.DEVICE_ANNOTATION | (Activity.STEP if name & _N["step"] else 0)
        if category & _C["device_sync"] or name & _N["device_sync"]:
            return Activity.DEVICE_SYNC
        named = not category & _C["kernel"]   # a kernel category is trusted over the name
        if category & _C["memset"] or named and name & _N["memset"]:
            return Activity.MEMSET
        if category & _C["memcpy"] or named and name & _N["memcpy"]:
            return Activity.MEMCPY
        if name & _N["communication"]:
            return Activity.KERNEL | Activity.COMMUNICATION
        # (a producer's bookkeeping on a device is no kernel; a copy among it stays a copy)
        return Activity.OTHER if category & _C["other"] else Activity.KERNEL
    if category & _C["runtime"]:
        if name & _N["wait"]:
            return Activity.WAIT
        if name & _N["sync"]:
            return Activity.SYNC
        return Activity.LAUNCH if name & _N["launch"] else Activity.RUNTIME
    kind = (Activity.PYTHON if category & _C["python"] else Activity.OVERHEAD
            if category & _C["overhead"] else Activity.ANNOTATION
            if category & _C["annotation"] else Activity.KERNEL if category & _C["kernel"]
            else Activity.OTHER if category & _C["other"] else Activity.HOST_OP)
    # (a Python frame's name is its file and function: "sc_dataloader" or
    # "dataloader.py(631): __next__" is code, not a loading range; the ranges are marked)
    named = kind != Activity.PYTHON
    if category & _C["step"] or named and name & _N["step"]:
        return kind | Activity.STEP
    if category & _C["dataloader"] or named and name & _N["dataloader"]:
        return kind | Activity.DATALOADER
    if kind in (Activity.HOST_OP, Activity.ANNOTATION) and name & _N["communication"]:
        return kind | Activity.COMMUNICATION
    return kind


def on_device_rows(trace: Trace) -> np.ndarray:
    """For every slice, whether its track belongs to a device process."""
    if not len(trace.slices):
        return np.zeros(0, dtype=bool)
    device = np.array([p.kind is ProcessKind.DEVICE for p in trace.processes] + [False],
                      dtype=bool)
    process = np.array([t.process for t in trace.tracks] + [len(trace.processes)],
                       dtype=np.int64)
    return device[process[trace.slices.numpy("track")]]


def fill_activity(trace: Trace, vocabulary: Vocabulary, *, only_unknown: bool = True) -> None:
    """Classify the slices of a trace being read (a reader's last step): every row still
    :attr:`Activity.UNKNOWN` (or every row) gets its activity from ``vocabulary``.

    >>> from traceconv.model import Trace
    >>> t = Trace(); a = t.add_track("a", process=t.add_process("p"))
    >>> _ = t.add_slice(a, 0, 5, "cudaLaunchKernel", "cuda_runtime")
    >>> fill_activity(t, Vocabulary("demo", runtime={"cuda_runtime"}, launch_names=("Launch",)))
    >>> Activity(t.slices.activity[0]).name
    'LAUNCH'
    """
    s = trace.slices
    column = read_only_view(s.activity)
    rows = np.flatnonzero(column == Activity.UNKNOWN) if only_unknown else np.arange(len(s))
    if len(rows):
        values = np.array(column)   # (a writable copy: the column may be read-only)
        values[rows] = vocabulary.classify_rows(trace, rows)
        s.set_activity(values)

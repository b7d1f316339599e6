"""The format table: which module reads, writes or checks what, and how inputs are recognised.

A format is one module that provides the functions of :class:`FormatModule` that apply to it,
described by one :class:`FormatInfo` row. Built-in formats are rows of :data:`BUILTINS`
(data: no module is imported to know them); a separately installed
package adds its own through the entry-point group ``traceconv.formats``, whose entries load
to a :class:`FormatInfo` (or a list of them)::

    # pyproject.toml of a plugin package
    [project.entry-points."traceconv.formats"]
    hpctoolkit = "traceconv_hpctoolkit:FORMAT"   # FormatInfo("hpctoolkit", "...",
                                                 #   "traceconv_hpctoolkit", (".db",), reads=True)

The built-ins are in the table before anything else can run, so a plugin (or a
:func:`register` call, whatever the import order) can never take a built-in's name or alias. Detection looks at the file name first (extension,
ignoring ``.gz``); when several formats share an extension, or none claims it, their
``sniff`` functions decide from the first decompressed bytes.

A format's options are the keyword parameters of its ``read``/``write``: the API refuses
any other name (a ``**options`` catch-all must name the dataclass that checks it in
``READ_OPTIONS``/``WRITE_OPTIONS``).
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, is_dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, Protocol

from .errors import FormatError
from .io import Source

if TYPE_CHECKING:
    from .formats.key_claims import KeyClaim
    from .model import Trace
    from .model.check_report import CheckReport

ENTRY_POINT_GROUP = "traceconv.formats"
FLAVOUR_SEPARATOR = ":"   # --format chrome:kineto

Capability = Literal["reads", "writes", "checks"]


class FormatModule(Protocol):
    """What a format module provides; each function only when the format can do it.

    - ``sniff(head, source) -> float``: how sure the format is that ``source`` is its own,
      from the first decompressed bytes ``head`` (0 = not mine ... 1 = certainly mine).
    - ``read(source, *, option=...) -> Trace`` (``FormatInfo.reads``): the whole input.
    - ``write(trace, out, *, option=...) -> None`` (``FormatInfo.writes``): to the binary
      stream ``out``, never changing ``trace``.
    - ``check(source) -> CheckReport`` (``FormatInfo.checks``): what a viewer of the file
      would drop or misdraw.
    - ``flavours() -> dict[str, str]`` (``FormatInfo.flavoured``): the producers the reader
      tells apart (name -> description), forceable as ``read(source, flavour=name)``.
    - ``SCHEMAS: dict[str, type[pydantic.BaseModel]]``: JSON Schemas of the documents read.
    """

    def sniff(self, head: bytes, source: Source) -> float: ...
    def read(self, source: Source, **options: Any) -> Trace: ...
    def write(self, trace: Trace, out: BinaryIO, **options: Any) -> None: ...
    def check(self, source: Source) -> CheckReport: ...
    def flavours(self) -> dict[str, str]: ...


@dataclass(frozen=True)
class FormatInfo:
    """One row of the format table."""

    name: str
    description: str
    module: str                       # import path, loaded on first use
    extensions: tuple[str, ...] = ()  # matched against the end of the name without .gz
    reads: bool = False
    writes: bool = False
    aliases: tuple[str, ...] = ()
    checks: bool = False              # the module has check(source)
    flavoured: bool = False           # the module has flavours() and read(flavour=...)
    origin: str = "built-in"          # or the distribution of the plugin that added it
    # "module:function" of a light sniff (no reader imported to detect: every built-in
    # reader has one, tests/test_light_detection.py); None: the module's (a plugin's)
    sniffer: str | None = None
    # "module:attribute" of a JSON format's KeyClaims (formats.key_claims): the keys that
    # tell its files wherever they come, looked for past the head when no sniff is sure
    key_claims: str | None = None
    binary: bool = False              # writes bytes that are not text (never to a terminal)
    # reads text lines: its sniffer is given the head as pasted text reads (pasted_text), its
    # reader reads pasted_text.pasted_lines (the one normalisation, the one bounded line reader)
    text: bool = False
    # reads CSV: its sniffer is given the head as a CSV reader reads it (pasted_csv), its
    # reader reads csv_rows.source_rows (the csv module's line ends, a page's paste undone)
    csv: bool = False

    @property
    def default_extension(self) -> str:
        return self.extensions[0] if self.extensions else f".{self.name}"

    def load(self) -> Any:
        """Import the implementing module (a :class:`FormatModule`)."""
        module: ModuleType = importlib.import_module(self.module)
        return module

    def sniff_function(self) -> Callable[[bytes, Source], float] | None:
        """The function that tells this format's inputs from their first bytes, if any."""
        if self.sniffer:
            module, _, function = self.sniffer.partition(":")
            found: Callable[[bytes, Source], float] = getattr(
                importlib.import_module(module), function or "sniff")
            return found
        return getattr(self.load(), "sniff", None)

    def key_claim_rows(self) -> tuple[KeyClaim, ...]:
        """The :attr:`key_claims` of this format (none without the column)."""
        if not self.key_claims:
            return ()
        module, _, attribute = self.key_claims.partition(":")
        claims: tuple[KeyClaim, ...] = getattr(importlib.import_module(module), attribute)
        return claims

    def flavours(self) -> dict[str, str]:
        """The reader's flavours (name -> description); empty for an unflavoured format."""
        return dict(self.load().flavours()) if self.flavoured else {}


@dataclass(frozen=True)
class Resolved:
    """A ``--format`` value: the format and, for ``chrome:kineto``, the forced flavour."""

    info: FormatInfo
    flavour: str | None = None


# The built-in formats, one row each (a new format: its module, and one row here).
BUILTINS: tuple[FormatInfo, ...] = (
    FormatInfo(
        "chrome", "Chrome Trace Event JSON: PyTorch/Kineto, MegEngine Profiler, Paddle profiler "
        "and timeline.py, any catapult/Perfetto-style JSON", "traceconv.formats.chrome",
        (".json", ".trace.json"), reads=True, writes=True, aliases=("json",), checks=True,
        flavoured=True,
        sniffer="traceconv.formats.sniffing:chrome",
        key_claims="traceconv.formats.sniffing:CHROME_KEYS"),
    FormatInfo(
        "perfetto", "Perfetto TrackEvent protobuf trace", "traceconv.formats.perfetto",
        (".pftrace", ".perfetto-trace", ".perfetto", ".pb"), reads=True, writes=True,
        aliases=("pftrace", "proto"), checks=True, binary=True,
        sniffer="traceconv.formats.sniffing:perfetto"),
    FormatInfo(
        "megengine", "MegEngine static-graph profile JSON (trace.get_profile(), "
        "load_network_and_run --profile) and graph.json", "traceconv.formats.megengine.profile",
        (".json",),
        reads=True, aliases=("megengine-profile",),
        sniffer="traceconv.formats.sniffing:megengine_profile",
        key_claims="traceconv.formats.sniffing:MEGENGINE_PROFILE_KEYS"),
    FormatInfo(
        "summary", "per-operator summary table (profile_analyze-like), any trace",
        "traceconv.presentation.summary", (".summary.txt",), writes=True),
    FormatInfo(
        "summary-json", "per-operator summary as JSON", "traceconv.presentation.summary.as_json",
        (".summary.json",), writes=True),
    FormatInfo(
        "graphml", "op graph (ops, tensors, edges) as GraphML", "traceconv.formats.graphml",
        (".graphml",), writes=True),
    FormatInfo(
        "dot", "op graph as Graphviz DOT", "traceconv.formats.dot", (".dot", ".gv"), writes=True),
    FormatInfo(
        "megengine-meminfo", "MegEngine StaticMemoryInfo.json (static memory plan, logical "
        "addresses)", "traceconv.formats.megengine.meminfo", ("staticmemoryinfo.json",),
        reads=True,
        sniffer="traceconv.formats.sniffing:megengine_meminfo",
        key_claims="traceconv.formats.sniffing:MEGENGINE_MEMINFO_KEYS"),
    FormatInfo(
        "megengine-memflow-svg", "MegEngine Profiler memory_flow.svg (tensor rects) as input",
        "traceconv.formats.megengine.memflow_svg", ("memory_flow.svg",), reads=True,
        sniffer="traceconv.formats.sniffing:megengine_memflow_svg"),
    FormatInfo(
        "paddle-report", "Paddle old text Profiling Report (fluid profiler; every layout, many "
        "per log)", "traceconv.formats.paddle_report", (".txt", ".log"), reads=True, text=True,
        sniffer="traceconv.formats.text_sniffing:paddle_report"),
    FormatInfo(
        "paddle-profile", "Paddle old binary profile (fluid profiler profile_path, profiler.proto)",
        "traceconv.formats.paddle_profile", (".profile",), reads=True,
        sniffer="traceconv.formats.sniffing:paddle_profile"),
    FormatInfo(
        "paddle-pb", "Paddle profiler protobuf export (NodeTreesProto, *.paddle_trace.pb)",
        "traceconv.formats.paddle_pb", (".paddle_trace.pb", ".pb"), reads=True,
        sniffer="traceconv.formats.sniffing:paddle_pb"),
    FormatInfo(
        "paddle-summary", "Paddle profiler summary() tables and Perf Summary text",
        "traceconv.formats.paddle_summary", (".txt", ".log"), reads=True, text=True,
        sniffer="traceconv.formats.text_sniffing:paddle_summary"),
    FormatInfo(
        "migraphx", "AMD MIGraphX program printouts, migraphx-driver perf reports and "
        "MIGRAPHX_TRACE_EVAL logs (text)", "traceconv.formats.migraphx", (".txt", ".log"),
        reads=True, text=True, aliases=("migraphx-driver", "mxr-text"),
        sniffer="traceconv.formats.text_sniffing:migraphx"),
    FormatInfo(
        "svg", "Memory-flow SVG: time x address, one rectangle per memory block, live-bytes peak",
        "traceconv.formats.memflow_svg", (".svg",), writes=True, aliases=("memflow",)),
    FormatInfo(
        "torch-memory", "PyTorch export_memory_timeline JSON (per-category totals or raw events)",
        "traceconv.formats.torch_memory", (".raw.json", ".json"), reads=True,
        aliases=("memory_timeline",),
        sniffer="traceconv.formats.sniffing:torch_memory"),
    FormatInfo(
        "torch-snapshot", "PyTorch CUDA allocator snapshot (torch.cuda.memory._dump_snapshot "
        "pickle; read without running code)", "traceconv.formats.torch_snapshot",
        (".pickle", ".pkl"), reads=True, aliases=("memory_snapshot",),
        sniffer="traceconv.formats.sniffing:torch_snapshot"),
    FormatInfo(
        "torch-et", "PyTorch execution trace (Chakra schema, ExecutionTraceObserver): op graph; "
        "linked to its Kineto trace when both are given", "traceconv.formats.torch_et",
        ("_et.json", ".et.json", ".json"), reads=True, aliases=("chakra", "execution-trace"),
        sniffer="traceconv.formats.sniffing:torch_et",
        key_claims="traceconv.formats.sniffing:TORCH_ET_KEYS"),
    FormatInfo(
        "nsys", "Nsight Systems SQLite export (nsys export --type sqlite, schema 2.9-3.25): CUDA "
        "API, kernels, copies, NVTX, OS runtime, launch flows", "traceconv.formats.nsys",
        (".sqlite", ".nsys.sqlite"), reads=True, aliases=("nsight-systems", "nsys-sqlite"),
        sniffer="traceconv.formats.database_sniffing:nsys"),
    FormatInfo(
        "rpd", "rocmProfileData SQLite trace (.rpd): HIP API calls, roctx ranges, GPU ops per "
        "queue, api -> op flows, monitor counters", "traceconv.formats.rpd", (".rpd",),
        reads=True, aliases=("rocmprofiledata", "rocpd"),
        sniffer="traceconv.formats.database_sniffing:rpd"),
    FormatInfo(
        "nsys-stats", "nsys stats --format csv reports: NVTX ranges (nvtx_pushpop_trace; .csv or "
        ".csv.xz) and summaries as statistics (cuda_gpu_kern_sum, cuda_api_sum, "
        "cuda_gpu_mem_time_sum, nvtx_sum; gpukernsum ...)", "traceconv.formats.nsys_stats",
        (".csv.xz", ".csv"), reads=True, text=True, csv=True,
        aliases=("nvtx-pushpop-csv",), sniffer="traceconv.formats.database_sniffing:nsys_stats"),
    FormatInfo(
        "xplane", "XPlane XSpace protobuf (jax.profiler, tf.profiler, torch_xla; the *.xplane.pb "
        "xprof reads): host threads, GPU/TPU planes, XLA ops", "traceconv.formats.xplane",
        (".xplane.pb",), reads=True, aliases=("xspace", "xprof"),
        sniffer="traceconv.formats.export_sniffing:xplane"),
    FormatInfo(
        "trtexec", "TensorRT trtexec exports: --exportLayerInfo (engine graph), --exportProfile "
        "(per-layer times), --exportTimes (per-inference timeline); one engine's files together "
        "read as one trace", "traceconv.formats.trtexec",
        (".graph.json", ".profile.json", ".timing.json", ".times.json", ".layers.json",
         ".metadata.json", ".json"), reads=True, aliases=("tensorrt", "trex"),
        sniffer="traceconv.formats.export_sniffing:trtexec",
        key_claims="traceconv.formats.export_sniffing:TRTEXEC_KEYS"),
    FormatInfo(
        "rocprof", "AMD rocprof v1/v2 results.csv/.json/.db and *stats.csv, rocprofv3 CSV "
        "(kernel, API, memory copy, counter traces; one run's files together read as one "
        "trace with launch flows), JSON and rocpd SQLite databases", "traceconv.formats.rocprof",
        (".csv", ".db", ".json"), reads=True, csv=True, aliases=("rocprofv3", "rocprofiler"),
        sniffer="traceconv.formats.rocprof_sniffing:rocprof",
        key_claims="traceconv.formats.rocprof_sniffing:ROCPROF_KEYS"),
)

@dataclass(frozen=True)
class SeedSample:
    """A small input of one reader's format, from the project's own files: what the
    hostile-input matrix (``tests/test_hostile_matrix.py``) and the fuzzer
    (``benchmarks/fuzz``) make their variants of.

    ``syntax`` is the container the variants edit: ``json``, ``text``, ``csv``, ``svg``,
    ``protobuf``, ``pickle`` or ``sqlite``.

    >>> seed_samples("chrome")[0].path
    'tests/data/seeds/chrome.pt.trace.json'
    """

    path: str      # relative to the project root (the seeds are not installed)
    syntax: str


# One or more seeds per built-in reader: small files of the project (cut from the bundled
# samples into tests/data/seeds/: see PROVENANCE.md there). A new reader adds its row here; a
# test fails while one lacks it.
_SEEDS = "tests/data/seeds/"
SEED_SAMPLES: dict[str, tuple[SeedSample, ...]] = {
    name: tuple(SeedSample(path, syntax) for path in paths)
    for name, syntax, paths in (
        ("chrome", "json", (_SEEDS + "chrome.pt.trace.json",)),
        ("perfetto", "protobuf", (_SEEDS + "perfetto.pftrace",
                                  _SEEDS + "perfetto_traceconv.pftrace",
                                  _SEEDS + "perfetto_system.perfetto-trace")),
        ("megengine", "json", (_SEEDS + "megengine_profile.json",)),
        ("megengine-meminfo", "json", (_SEEDS + "StaticMemoryInfo.json",)),
        ("megengine-memflow-svg", "svg", (_SEEDS + "memory_flow.svg",)),
        ("paddle-report", "text", ("samples/paddle/report_gpu_before.txt",)),
        ("paddle-profile", "protobuf", (_SEEDS + "paddle.profile",)),
        ("paddle-pb", "protobuf", (_SEEDS + "paddle.paddle_trace.pb",)),
        ("paddle-summary", "text", ("tests/data/paddle/gpu_summary.txt",)),
        ("migraphx", "text", ("samples/migraphx/perf_simple_graph_rocm4.txt",)),
        ("torch-memory", "json", (_SEEDS + "memory_timeline.raw.json",)),
        ("torch-snapshot", "pickle", (_SEEDS + "snapshot.pickle",)),
        ("torch-et", "json", (_SEEDS + "torch_et.json",)),
        ("nsys", "sqlite", (_SEEDS + "nsys.sqlite",)),
        ("rpd", "sqlite", (_SEEDS + "matmul.rpd",)),
        ("nsys-stats", "csv", (_SEEDS + "nvtx_pushpop_trace.csv",
                               "tests/data/nsys_stats/nvtx_sum_stdout.csv")),
        ("xplane", "protobuf", (_SEEDS + "jax_cpu.xplane.pb",)),
        ("trtexec", "json", (_SEEDS + "resnet.engine.profile.json",)),
    )} | {"rocprof": (SeedSample(_SEEDS + "rocprof_results.csv", "csv"),
                      SeedSample(_SEEDS + "rocprof_results.json", "json"),
                      SeedSample(_SEEDS + "rocprof_results.db", "sqlite"),
                      SeedSample(_SEEDS + "rocprof_results.stats.csv", "csv"),
                      SeedSample(_SEEDS + "rocprofv3_kernel_trace.csv", "csv"),
                      SeedSample(_SEEDS + "rocprofv3_hip_api_trace.csv", "csv"),
                      SeedSample(_SEEDS + "rocprofv3_results.json", "json"),
                      SeedSample(_SEEDS + "rocprofv3_results.db", "sqlite"))}


def seed_samples(name: str) -> tuple[SeedSample, ...]:
    """The seeds of the reader called ``name`` (or an alias); empty when it has none."""
    return SEED_SAMPLES.get(get(name).name, ())


_FORMATS: dict[str, FormatInfo] = {}
_ALIASES: dict[str, str] = {}
_state = "empty"   # "empty" -> "loading" (plugins) -> "ready"


def register(info: FormatInfo) -> FormatInfo:
    """Add a format to the table; a name or alias that is already taken is refused.

    >>> register(FormatInfo("chrome", "another Chrome", "my.module"))
    Traceback (most recent call last):
    ...
    traceconv.errors.FormatError: format name 'chrome' is already taken (built-in format chrome)
    """
    _ensure_loaded()
    for name in (info.name, *info.aliases):
        owner = _owner(name)
        if owner is not None:
            raise FormatError(f"format name {name!r} is already taken "
                              f"({owner.origin} format {owner.name})")
    _add(info)
    return info


def _owner(name: str) -> FormatInfo | None:
    key = _key(name)
    found = _FORMATS.get(_ALIASES.get(key, key))
    return found


def _key(name: str) -> str:
    """Format names are case-insensitive and ``paddle_pb`` means ``paddle-pb``."""
    return name.lower().replace("_", "-")


def text_sniffers() -> list[tuple[str, Callable[[bytes, Source], float]]]:
    """(name, sniffer) of every text format, built in or plugged in: what a text reader
    asks (through :mod:`traceconv.implementations`) to tell another tool's report among
    its foreign lines.

    >>> "migraphx" in [name for name, _ in text_sniffers()]
    True
    """
    return [(info.name, sniff) for info in all_formats()
            if info.text and (sniff := info.sniff_function()) is not None]


def all_formats() -> list[FormatInfo]:
    """Every registered format: built-ins in registration order, then plugins."""
    _ensure_loaded()
    return list(_FORMATS.values())


def get(name: str) -> FormatInfo:
    """The format called ``name`` (or one of its aliases).

    >>> get("pftrace").name
    'perfetto'
    >>> get("perfeto")
    Traceback (most recent call last):
    ...
    traceconv.errors.FormatError: unknown format 'perfeto'; did you mean 'perfetto'? (see `traceconv formats`)
    """
    _ensure_loaded()
    info = _owner(name)
    if info is None:
        raise FormatError(f"unknown format {name!r}{_suggestion(_key(name), _known_names())} "
                          "(see `traceconv formats`)")
    return info


def resolve(name: str) -> Resolved:
    """A ``--format`` value: a format name or alias, ``FORMAT:FLAVOUR``, or a flavour name
    that only one format knows.

    >>> resolve("chrome:kineto")
    Resolved(info=FormatInfo(name='chrome', ...), flavour='kineto')
    """
    _ensure_loaded()
    base, sep, flavour = name.partition(FLAVOUR_SEPARATOR)
    if sep:
        info = get(base)
        known = info.flavours()
        if _key(flavour) not in known:
            choices = ", ".join(known) or "none"
            raise FormatError(f"format {info.name} has no flavour {flavour!r}"
                              f"{_suggestion(_key(flavour), list(known))} (its flavours: {choices})")
        return Resolved(info, _key(flavour))
    if _owner(name) is not None:
        return Resolved(get(name))
    owners = [info for info in _FORMATS.values() if _key(name) in info.flavours()]
    if len(owners) == 1:
        return Resolved(owners[0], _key(name))
    flavoured = [(i.name, f) for i in _FORMATS.values() for f in i.flavours()]
    names = _known_names() + [f for _, f in flavoured] + [f"{n}:{f}" for n, f in flavoured]
    raise FormatError(f"unknown format {name!r}{_suggestion(_key(name), names)} "
                      "(see `traceconv formats`)")


def _known_names() -> list[str]:
    return [*(_FORMATS[k].name for k in _FORMATS), *_ALIASES]


def _suggestion(name: str, choices: Iterable[str]) -> str:
    """``; did you mean 'perfetto'?`` for a close match, else nothing."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _matches(info: FormatInfo, filename: str) -> int:
    """Length of the longest extension of ``info`` that ``filename`` ends with (0 = none)."""
    return max((len(ext) for ext in info.extensions if filename.endswith(ext)), default=0)


# a content score from which another format overrules the one a unique extension names
# (Chrome JSON with "ph" near its start: 0.6; from a lone "[" or "{": 0.1)
CONFIDENT = 0.5


def _sniff_score(info: FormatInfo, source: Source) -> float:
    sniff = info.sniff_function()
    if sniff is None:
        return 0.0
    head = _csv_head(source.head) if info.csv else source.head
    return float(sniff(_pasted_head(head) if info.text else head, source))


@functools.lru_cache(maxsize=1)
def _csv_head(head: bytes) -> bytes:
    """``head`` as a CSV reader reads it (one undoing per input)."""
    from .formats.pasted_csv import unpasted_head

    return unpasted_head(head)


@functools.lru_cache(maxsize=1)
def _pasted_head(head: bytes) -> bytes:
    """``head`` as a text reader reads it (one undoing per input, whichever text formats
    are asked)."""
    from .formats.pasted_text import unpasted_bytes

    return unpasted_bytes(head)


def detect(source: Source, can: Capability = "reads") -> FormatInfo:
    """The format of ``source`` among those that can do ``can``: by extension, then content.

    A unique, specific extension (``.pftrace``) decides alone unless another format's
    content is a confident match (:data:`CONFIDENT`): a weak guess (a JSON array from one
    ``[``, which a protobuf's second byte can be) or none leaves the file to the reader
    its name implies, which says where the file breaks. Shared extensions (``.json``,
    ``.txt``) are settled by sniffing the candidates, then all other formats.

    A JSON file holding the keys of two formats' claims (the top-level keys each names,
    :mod:`~traceconv.formats.key_claims`) is refused, whether the keys are in its head or
    past it: which one it is is the user's to say (``--format``), not the order of its keys.
    """
    _ensure_loaded()
    able = [f for f in _FORMATS.values() if getattr(f, can)]
    filename = source.stem_name
    by_name = sorted(((m, f) for f in able if (m := _matches(f, filename))),
                     key=lambda pair: -pair[0])
    candidates = [f for _, f in by_name]
    named = candidates[0] if len(candidates) == 1 else None   # what the name alone says
    if named is not None and named.sniff_function() is None:
        return named
    guess = None   # a weak content score: what a lone "[" says, unless keys tell more
    for group in (candidates, [f for f in able if f not in candidates]):
        scored = [(score, f) for f in group if (score := _sniff_score(f, source)) > 0]
        if scored:
            score, best = max(scored, key=lambda pair: pair[0])
            if score >= CONFIDENT:
                if best.key_claims:   # (a JSON format: no other's keys in the head too)
                    _claimed_by_keys(source, able, in_head=True)
                return best
            if named is None or best is named:
                guess = best
                break
    by_keys = _claimed_by_keys(source, able)
    if by_keys is not None:
        return by_keys
    if guess is not None:
        return guess
    from .formats.foreign import database_tables, describe

    foreign = describe(source.head, filename) or database_tables(
        source.head, None if source.is_stdin or source.compressed else source.path)
    if foreign:
        raise FormatError(f"not a format traceconv reads: {foreign}", file=source.name)
    if named is not None:
        return named
    raise FormatError("cannot tell the format from the name or the content; "
                      "name it with --format (see `traceconv formats`)", file=source.name)


def _claimed_by_keys(source: Source, able: list[FormatInfo], in_head: bool = False
                     ) -> FormatInfo | None:
    """The one format whose :attr:`~FormatInfo.key_claims` ``source`` holds past its head
    (one scan for the keys of every format), or in its head (``in_head``: the keys the
    sniffers saw); a file two formats claim is named, not guessed, wherever the keys are.
    """
    from .formats.key_claims import keys_found, keys_in_head  # (only for JSON, or no sniff)

    claims = {info: info.key_claim_rows() for info in able if info.key_claims}
    every = [c for rows in claims.values() for c in rows]
    found = (keys_in_head(source.head, every) if in_head
             else keys_found(source.head, source, every))
    claiming = [info for info, rows in claims.items() if any(c.holds(found) for c in rows)]
    if len(claiming) > 1:
        raise FormatError("the keys of " + " and of ".join(i.name for i in claiming) + " are "
                          "both in this file; name its format with --format", file=source.name)
    return claiming[0] if claiming else None


def for_output(path: str, format: str | None) -> FormatInfo:
    """The writable format named ``format``, or the one the output name's extension implies."""
    _ensure_loaded()
    if format:
        info = get(format)
    else:
        filename = path.lower().removesuffix(".gz")
        writers = [(m, f) for f in _FORMATS.values() if f.writes and (m := _matches(f, filename))]
        if not writers:
            raise FormatError("cannot tell the output format from the name; "
                              "name it with --to (see `traceconv formats`)", file=path)
        info = max(writers, key=lambda pair: pair[0])[1]
    if not info.writes:
        raise FormatError(f"traceconv cannot write {info.name} files", file=path)
    return info


def check_options(function: Callable[..., Any], options: dict[str, Any], what: str,
                  declared: type | None = None) -> None:
    """Refuse option names that ``function`` does not take (``what``: "the perfetto writer").

    The names are ``function``'s keyword parameters, plus the fields of the dataclass
    ``declared`` when the function forwards ``**options`` to it.

    >>> def write(trace, out, *, workers=1): ...
    >>> check_options(write, {"workerz": 3}, "the perfetto writer")
    Traceback (most recent call last):
    ...
    traceconv.errors.FormatError: unknown option 'workerz' for the perfetto writer; did you mean 'workers'? (it takes: workers)
    """
    accepted = option_names(function, declared)
    if accepted is None:
        return
    for name in options:
        if name not in accepted:
            takes = ", ".join(sorted(accepted)) or "no options"
            raise FormatError(f"unknown option {name!r} for {what}"
                              f"{_suggestion(name, accepted)} (it takes: {takes})")


def option_names(function: Callable[..., Any], declared: type | None = None) -> set[str] | None:
    """The option names ``function`` accepts, or None when it takes any (``**options`` with
    no declared dataclass)."""
    params = inspect.signature(function).parameters.values()
    names = {p.name for p in params
             if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is not p.empty}
    if any(p.kind is p.VAR_KEYWORD for p in params):
        if declared is None or not is_dataclass(declared):
            return None
        names |= {f.name for f in fields(declared)}
    return names


def _add(info: FormatInfo) -> None:
    _FORMATS[_key(info.name)] = info
    for alias in info.aliases:
        _ALIASES[_key(alias)] = _key(info.name)


def _ensure_loaded() -> None:
    """Load the plugins once (re-entrant while loading); the built-ins are always there."""
    global _state
    if _state != "empty":
        return
    _state = "loading"
    _load_plugins()
    _state = "ready"


for _builtin in BUILTINS:
    _add(_builtin)


def _load_plugins() -> None:
    """Register the formats of installed packages (entry-point group ``traceconv.formats``).

    A broken plugin is reported as a warning and skipped: it must not break the built-ins.
    """
    from .plugin_scan import may_declare

    if not may_declare(ENTRY_POINT_GROUP):   # the usual case, found in ~1 ms, not ~25
        return
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = entry.load()
            infos = loaded if isinstance(loaded, list | tuple) else [loaded]
            for info in infos:
                if not isinstance(info, FormatInfo):
                    raise TypeError(f"{entry.value} is not a traceconv FormatInfo")
                origin = f"plugin {entry.dist.name}" if entry.dist else "plugin"
                register(_with_origin(info, origin))
        except Exception as exc:  # any failure of third-party code: warn, keep going
            warnings.warn(f"traceconv: format plugin {entry.name!r} skipped: {exc}",
                          stacklevel=2)


def _with_origin(info: FormatInfo, origin: str) -> FormatInfo:
    from dataclasses import replace

    return info if info.origin != "built-in" else replace(info, origin=origin)

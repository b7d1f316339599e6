"""Reserved memory of real allocator snapshots, with expandable segments (``segment_map`` at
addresses inside the segment, one ``segment_unmap`` covering several maps or part of one) and
with ``cudaMalloc`` segments, against a plain replay of each file's own entries and torch's
``_memory_viz``.

The replay here walks the document's dicts (read with traceconv's safe unpickler, used only
as a loader) as a set of 2 MiB pages: the dump-time segments' pages with the history undone
backwards give the pages mapped before it, then each entry maps or unmaps its pages.
"""

from __future__ import annotations

import gzip
import pickle
from collections import Counter
from pathlib import Path

import pytest

import traceconv
from traceconv.analysis.advise import advise
from traceconv.analysis.memory_moment import memory_report
from traceconv.formats.torch_snapshot.unpickle import PlainUnpickler

DATA = Path("tests/data/torch_snapshot")
MIB = 1 << 20
PAGE = 2 * MIB   # every segment, map and unmap of these files is a whole number of pages
# torch 2.13.0+cpu `python -m torch.cuda._memory_viz stats FILE` on the unedited pickles
# (segsum), run once: "total_reserved: 614.0MiB", "468.0MiB", "486.0MiB"
SEGSUM_RESERVED = {"snapshot_expandable": 614 * MIB,
                   "snapshot_with_empty_cache_expandable": 468 * MIB,
                   "snapshot_with_empty_cache": 486 * MIB}
OPEN, CLOSE = ("segment_alloc", "segment_map"), ("segment_free", "segment_unmap")


def _document(name: str) -> dict:
    with gzip.open(DATA / f"{name}.pkl.gz") as f:
        return PlainUnpickler(f).load()


def _pages(address: int, size: int) -> set[int]:
    assert address % PAGE == 0 and size % PAGE == 0
    return set(range(address, address + size, PAGE))


def _reserved_replay(document: dict) -> tuple[set[int], list[set[int]]]:
    """The pages mapped before the history, and after each entry."""
    entries = document["device_traces"][0]
    mapped: set[int] = set()
    for segment in document["segments"]:
        mapped |= _pages(segment["address"], segment["total_size"])
    for entry in reversed(entries):
        if entry["action"] in OPEN:
            mapped -= _pages(entry["addr"], entry["size"])
        elif entry["action"] in CLOSE:
            mapped |= _pages(entry["addr"], entry["size"])
    before, after = set(mapped), []
    for entry in entries:
        if entry["action"] in OPEN:
            mapped |= _pages(entry["addr"], entry["size"])
        elif entry["action"] in CLOSE:
            mapped -= _pages(entry["addr"], entry["size"])
        after.append(set(mapped))
    return before, after


def _live_replay(document: dict, upto: int) -> dict[int, tuple[int, int]]:
    """Address -> (requested size, bytes taken) of the blocks live after entry ``upto``:
    those allocated before the history (freed in it first, or alive at dump and never
    allocated in it) and those the entries allocate and free."""
    entries = document["device_traces"][0]
    first, last = {}, {}
    for entry in entries:
        if entry["action"] in ("alloc", "free_completed"):
            first.setdefault(entry["addr"], entry)
            last[entry["addr"]] = entry["action"]
    live = {addr: (e["size"], _rounded(e["size"])) for addr, e in first.items()
            if e["action"] == "free_completed"}
    for segment in document["segments"]:
        for block in segment["blocks"]:
            if block["state"].startswith("active") and last.get(block["address"]) != "alloc":
                live[block["address"]] = (block["requested_size"], block["size"])
    for entry in entries[:upto + 1]:
        if entry["action"] == "alloc":
            live[entry["addr"]] = (entry["size"], _rounded(entry["size"]))
        elif entry["action"] == "free_completed":
            live.pop(entry["addr"], None)
    return live


def _rounded(size: int) -> int:
    return max(512, -(-size // 512) * 512)


def _runs(pages: set[int]) -> list[tuple[int, int]]:
    """Contiguous mapped ranges."""
    runs: list[list[int]] = []
    for page in sorted(pages):
        if runs and runs[-1][1] == page:
            runs[-1][1] += PAGE
        else:
            runs.append([page, page + PAGE])
    return [(a, b) for a, b in runs]


def _reserved_counter(trace: traceconv.Trace) -> list[tuple[int, int]]:
    (track,) = [t.id for t in trace.tracks if t.name == "cuda:0 reserved bytes"]
    return [(s.ts, int(s.value)) for s in trace.iter_counter_samples() if s.track == track]


@pytest.fixture(scope="module", params=list(SEGSUM_RESERVED))
def case(request) -> tuple[str, dict, traceconv.Trace]:
    name = request.param
    return name, _document(name), traceconv.load(DATA / f"{name}.pkl.gz")


def test_reserved_counter_is_the_mapped_pages_after_every_entry(case):
    name, document, trace = case
    before, after = _reserved_replay(document)
    samples = _reserved_counter(trace)
    # the time is the entry's index (no time_us): the counter's value after each entry
    value, k = None, 0
    for index, pages in enumerate(after):
        while k < len(samples) and samples[k][0] <= index:
            value, k = samples[k][1], k + 1
        assert value == len(pages) * PAGE, f"after entry {index}"
    assert samples[-1][1] == len(after[-1]) * PAGE == SEGSUM_RESERVED[name]
    if name == "snapshot_expandable":   # 108 MiB mapped before the history, 40 MiB at entry 0
        assert (len(before) * PAGE, samples[0]) == (113_246_208, (0, 155_189_248))


def test_reservations_at_the_end_are_the_dump_time_segments(case):
    """torch lists one segment per contiguous mapped range: a split or grown expandable
    segment ends as exactly those ranges, a cudaMalloc segment as itself."""
    _, document, trace = case
    alive = sorted((r.address, r.size, r.args["segment_type"]) for r in trace.reservations
                   if r.free_ns is None)
    assert alive == sorted((s["address"], s["total_size"], s["segment_type"])
                           for s in document["segments"])


def test_the_moment_reserved_fragmentation_and_pools(case):
    name, document, trace = case
    (device,) = memory_report(trace)["devices"]
    at = device["moment"]["time"]
    _, after = _reserved_replay(document)
    live = _live_replay(document, at)
    reserved = len(after[at]) * PAGE
    allocated = sum(requested for requested, _ in live.values())
    assert (device["allocated_bytes"], device["reserved_bytes"]) == (allocated, reserved)
    assert device["fragmentation_bytes"] == reserved - allocated
    if not name.endswith("expandable"):   # (cudaMalloc segments: no runs to form)
        assert (at, reserved) == (7_498, 662_700_032)
        return
    # both files peak at 614 MiB reserved, 44.3 MiB of it unused (before: 1.09 GiB and
    # 550 MiB, the dump-time segments counted again over their maps)
    assert (reserved, reserved - allocated) == (643_825_664, 46_498_176)
    kinds = {}   # a mapped range's pool: the dump-time segment it overlaps
    for a, b in _runs(after[at]):
        (kind,) = {s["segment_type"] for s in document["segments"]
                   if s["address"] < b and a < s["address"] + s["total_size"]}
        inside = sorted((addr, taken) for addr, (_, taken) in live.items() if a <= addr < b)
        cursor, gap = a, 0
        for addr, taken in inside:
            gap, cursor = max(gap, addr - cursor), max(cursor, addr + taken)
        count, size, largest = kinds.get(kind, (0, 0, 0))
        kinds[kind] = (count + 1, size + b - a, max(largest, gap, b - cursor))
    assert {p["pool"]: (p["segments"], p["reserved_bytes"], p["largest_free_bytes"])
            for p in device["pools"]} == kinds
    assert kinds == {"large": (1, 560 * MIB, 14_614_528), "small": (1, 54 * MIB, 12_109_824)}


def test_segments_before_the_history_are_counted_once(case):
    """A dump-time segment holds memory from before the history where no entry maps, unmaps,
    allocates or frees its pages."""
    _, document, trace = case
    touched: set[int] = set()
    for entry in document["device_traces"][0]:
        if entry["action"] in OPEN + CLOSE:
            touched |= _pages(entry["addr"], entry["size"])
    older = sum(bool(_pages(s["address"], s["total_size"]) - touched)
                for s in document["segments"])
    assert trace.diagnostics["torch_snapshot.segment_before_history"].count == older


@pytest.mark.parametrize("name", ["snapshot_expandable", "snapshot_with_empty_cache_expandable"])
def test_advise_finds_no_fragmentation(name):
    """Unused is 46,498,176 of 643,825,664 peak reserved bytes (7.2%): under the rule's 35%."""
    document = _document(name)
    _, after = _reserved_replay(document)
    peak_reserved = max(len(pages) for pages in after) * PAGE
    assert peak_reserved == 643_825_664
    result = advise(traceconv.load(DATA / f"{name}.pkl.gz"), rules=["fragmentation"])
    assert (result.findings, result.passed) == ([], ["fragmentation"])


def test_a_range_reserved_again_closes_the_older_reservation(tmp_path):
    """A hand-made history that lost an unmap: the second map of a mapped page ends the
    older reservation there (counted as a realloc), so the page counts once."""
    page = {"action": "segment_map", "addr": 0, "size": PAGE, "stream": 0}
    document = {"segments": [{"device": 0, "address": 0, "total_size": PAGE, "stream": 0,
                              "segment_type": "large", "is_expandable": True, "blocks": []}],
                "device_traces": [[page | {"time_us": 1}, page | {"time_us": 2}]]}
    path = tmp_path / "lost_unmap.pickle"
    path.write_bytes(pickle.dumps(document))
    trace = traceconv.load(path)
    assert [(r.alloc_ns, r.free_ns) for r in trace.reservations] == [(1000, 2000), (2000, None)]
    assert {value for _, value in _reserved_counter(trace)} == {PAGE}
    assert trace.diagnostics["torch_snapshot.realloc"].count == 1


def test_memflow_legend_states_the_most_reserved_at_once():
    """A growing expandable segment is drawn as one range per size: the legend gives the
    replay's peak, not the ranges' sum."""
    from traceconv.formats.memflow_svg import MemflowOptions, svg_text

    _, after = _reserved_replay(_document("snapshot_expandable"))
    assert max(len(pages) for pages in after) * PAGE == 614 * MIB
    svg = svg_text(traceconv.load(DATA / "snapshot_expandable.pkl.gz"), MemflowOptions())
    assert " ranges · 614 MiB at the peak" in svg


def test_an_expandable_segment_mapped_in_the_history_has_its_pool_throughout(tmp_path):
    """Two maps grow one segment (hand-made, no page from before the history): the first,
    shorter range is of the dump-time segment's pool too."""
    maps = [{"action": "segment_map", "addr": addr, "size": PAGE, "stream": 7,
             "time_us": t} for addr, t in ((0, 1), (PAGE, 2))]
    document = {"segments": [{"device": 0, "address": 0, "total_size": 2 * PAGE, "stream": 7,
                              "segment_type": "small", "is_expandable": True, "blocks": []}],
                "device_traces": [maps]}
    path = tmp_path / "grown.pickle"
    path.write_bytes(pickle.dumps(document))
    trace = traceconv.load(path)
    assert [(r.size, r.alloc_ns, r.free_ns, r.args["segment_type"])
            for r in trace.reservations] == [(PAGE, 1000, 2000, "small"),
                                             (2 * PAGE, 2000, None, "small")]
    assert "torch_snapshot.segment_before_history" not in {d.code for d in trace.diagnostics}


def test_a_segment_freed_before_the_dump_takes_its_pool_from_its_size():
    """No dump-time segment names the pool of a cudaMalloc segment freed before the dump:
    its size does (torch's small pool takes whole 2 MiB segments, its large pool 10 MiB or
    more). Counted from the file's own entries: the segments freed again, by size."""
    name = "snapshot_with_empty_cache"
    opened: dict[int, int] = {}
    sizes = []   # of each segment freed in the history (allocated in it or before)
    for entry in _document(name)["device_traces"][0]:
        if entry["action"] == "segment_alloc":
            opened[entry["addr"]] = entry["size"]
        elif entry["action"] == "segment_free":
            sizes.append(opened.pop(entry["addr"], entry["size"]))
    trace = traceconv.load(DATA / f"{name}.pkl.gz")
    assert all(r.args.get("segment_type") in ("small", "large") for r in trace.reservations)
    told = trace.diagnostics.count("torch_snapshot.pool_from_size")
    assert told == len(sizes) == 54 and sum(s == PAGE for s in sizes) == 36
    small = [r for r in trace.reservations if r.free_ns is not None
             and r.args["segment_type"] == "small"]
    assert all(r.size == PAGE for r in small) and len(small) == 36
    pools = {p["pool"]: p for d in memory_report(trace)["devices"] for p in d["pools"]}
    assert "unknown" not in pools


def test_device_backend_frames_are_the_framework_not_a_site():
    """Ascend's torch_npu plugs into torch: its frames (``torch_npu/utils/_module.py``
    around ``module.to``) are the framework's, so a block's site is the first frame of
    neither package, as a plain walk of each alloc's frames finds it."""
    name = "snapshot_1768383987920985470"
    wanted: Counter[str] = Counter()
    for entry in _document(name)["device_traces"][0]:
        if entry["action"] == "alloc" and entry.get("frames"):
            user = [f for f in entry["frames"] if "site-packages/torch" not in f["filename"]]
            if user:
                f = user[0]
                wanted[f"{f['filename'].rsplit('/', 1)[-1]}:{f['line']} {f['name']}"] += 1
    trace = traceconv.load(DATA / f"{name}.pkl.gz")
    got = Counter(b.name for b in trace.memory if b.name in wanted)
    assert not [b.name for b in trace.memory if b.name.startswith("_module.py")]
    assert got["memory_leaks_demo.py:26 main"] == wanted["memory_leaks_demo.py:26 main"] > 0

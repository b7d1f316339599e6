"""``traceconv memory``: the moment that matters and what was live then, checked against a
replay of each snapshot's plain data written here (not the reader's)."""

from __future__ import annotations

import gzip
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from tests.conftest import ROOT, SAMPLES, SHARED
from traceconv.analysis.memory_moment import memory_report
from traceconv.formats.torch_snapshot.unpickle import PlainUnpickler
from traceconv.report.memory_pane import memory_pane

BUNDLED = [SAMPLES / "torch" / "resnet18_train_snapshot.pickle.gz",
           SAMPLES / "torch" / "flexgen_opt_oom_snapshot.pickle.gz"]
CORPUS = SHARED.parent / "corpus"
SHARED_SNAPSHOTS = sorted([*CORPUS.glob("round[45]/snapshot/*.pickle"),
                           *CORPUS.glob("torch/round3/snapshot/*.pickle"),
                           *SHARED.glob("torch/**/*snapshot*.pickle")])
OOM_SNAPSHOT = BUNDLED[1]   # the corpus' round5 yiyi_llm_inference_oom_snapshot, gzipped
ACTIVE = ("active_allocated", "active_pending_free")


def plain_document(path: Path) -> dict:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        return PlainUnpickler(f).load()  # type: ignore[no-any-return]


def replay(document: dict, device: int) -> tuple[list[list], list[list]]:
    """(blocks, segments) of one device as ``[start, end, size]``, ``None`` where the
    snapshot does not say: the trace entries in order, then the dump-time table for what
    the entries never opened."""
    all_traces = document.get("device_traces") or []
    logical = not any("time_us" in e for entries in all_traces for e in entries)
    entries = all_traces[device] if device < len(all_traces) else []
    open_blocks: dict[int, list] = {}
    open_segments: dict[int, list] = {}
    blocks, segments = [], []
    for index, e in enumerate(entries):
        at = index if logical else e["time_us"] * 1000
        action, addr = e["action"], e["addr"]
        if action == "alloc":
            if addr in open_blocks:
                open_blocks[addr][1] = at
            open_blocks[addr] = [at, None, e["size"]]
            blocks.append(open_blocks[addr])
        elif action in ("free_requested", "free_completed"):
            opened(open_blocks, blocks, addr, e["size"])
            if action == "free_completed":
                open_blocks.pop(addr)[1] = at
        elif action in ("segment_alloc", "segment_map"):
            open_segments[addr] = [at, None, e["size"]]
            segments.append(open_segments[addr])
        elif action in ("segment_free", "segment_unmap"):
            opened(open_segments, segments, addr, e["size"])
            open_segments.pop(addr)[1] = at
    for seg in document.get("segments") or []:
        if seg.get("device", 0) != device:
            continue
        if seg["address"] not in open_segments:
            segments.append([None, None, seg["total_size"]])
        address = seg["address"]   # (torch < 2.1: blocks tile the segment, no addresses)
        for b in seg["blocks"]:
            address = b.get("address", address)
            if b["state"] in ACTIVE and address not in open_blocks:
                blocks.append([None, None, b.get("requested_size", b["size"])])
            address += b["size"]
    return blocks, segments


def opened(table: dict[int, list], found: list[list], addr: int, size: int) -> None:
    """Open at ``addr`` an item alive since before the history, unless one is open."""
    if addr not in table:
        table[addr] = [None, None, size]
        found.append(table[addr])


def live_at(items: list[list], at: int, start: int) -> int:
    return sum(size for begin, end, size in items
               if (start if begin is None else begin) <= at and (end is None or end > at))


def first_peak(blocks: list[list], segments: list[list]) -> int:
    """The first time at which the live blocks' bytes are highest."""
    times = sorted({t for b in blocks + segments for t in b[:2] if t is not None})
    start = times[0] if times else 0
    best, best_at = -1, start
    for t in [start, *times]:
        level = live_at(blocks, t, start)
        if level > best:
            best, best_at = level, t
    return best_at


def check_against_replay(path: Path) -> None:
    document = plain_document(path)
    report = memory_report(traceconv.load(path))
    devices = {d["device"]: d for d in report["devices"]}
    count = max(len(document.get("device_traces") or []),
                1 + max((s.get("device", 0) for s in document.get("segments") or []),
                        default=-1))
    assert set(devices) == {f"cuda:{d}" for d in range(count)}
    for d in range(count):
        blocks, segments = replay(document, d)
        times = [t for b in blocks + segments for t in b[:2] if t is not None]
        start = min(times, default=0)
        at = first_peak(blocks, segments)
        got = devices[f"cuda:{d}"]
        assert got["moment"]["kind"] in ("peak", "dump")
        assert (got["allocated_bytes"], got["reserved_bytes"]) == (
            live_at(blocks, at, start), live_at(segments, at, start))
        assert sum(s["bytes"] for s in got["sites"]) == got["allocated_bytes"]
        assert sum(s["blocks"] for s in got["sites"]) == sum(
            1 for begin, end, _ in blocks
            if (start if begin is None else begin) <= at and (end is None or end > at))
        assert got["fragmentation_bytes"] == got["reserved_bytes"] - got["allocated_bytes"]


@pytest.mark.slow
@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_bundled_snapshot_equals_the_replay(path):
    check_against_replay(path)


@pytest.mark.parametrize("path", SHARED_SNAPSHOTS, ids=lambda p: p.name)
def test_shared_snapshot_equals_the_replay(path):
    check_against_replay(path)


@pytest.mark.shared
def test_shared_snapshots_are_there():
    if not SHARED.is_dir():
        pytest.skip("../shared is not beside this checkout")
    assert len(SHARED_SNAPSHOTS) >= 8


def test_oom_snapshot_dumped_without_history_is_its_dump_state():
    """The OOM snapshot in the corpus (torch 2.0) holds no ``oom`` entry, only the state:
    the answer is that state, whole, not a peak or an OOM it cannot show."""
    document = plain_document(OOM_SNAPSHOT)
    (device,) = memory_report(traceconv.load(OOM_SNAPSHOT))["devices"]
    blocks = [b for s in document["segments"] for b in s["blocks"] if b["state"] in ACTIVE]
    assert device["moment"] == {"kind": "dump", "time": None, "since_start": None}
    assert device["allocated_bytes"] == sum(b["requested_size"] for b in blocks)
    assert device["reserved_bytes"] == sum(s["total_size"] for s in document["segments"])
    assert device["allocated_rounded_bytes"] == sum(
        s["allocated_size"] for s in document["segments"])
    # every block has its stack (torch 2.0 keeps it in the block's history)
    assert device["sites"][0]["site"] == "pytorch_backend.py:190 allocate"
    assert "live_blocks_without_stack" not in device["unknown"]


def with_oom(document: dict, position: int, size: int | None) -> dict:
    """``document`` with an ``oom`` entry as torch writes it before entry ``position``
    (torch's memory_snapshot.cpp: ``device_free`` in place of ``addr``)."""
    entries = list(document["device_traces"][0])
    oom = {"action": "oom", "stream": 0, "device_free": 123_456_768,
           "time_us": entries[position]["time_us"], "frames": []}
    if size is not None:
        oom["size"] = size
    entries.insert(position, oom)
    return {**document, "device_traces": [entries]}


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=True)
@given(st.floats(0.05, 0.95))
def test_the_moment_is_the_oom_event(tmp_path_factory, where):
    path = BUNDLED[0]
    document = plain_document(path)
    position = int(len(document["device_traces"][0]) * where)
    oomed = with_oom(document, position, 3 << 30)
    target = tmp_path_factory.mktemp("oom") / "oom.pickle"
    target.write_bytes(pickle.dumps(oomed, protocol=4))
    (device,) = memory_report(traceconv.load(target))["devices"]
    at = oomed["device_traces"][0][position]["time_us"] * 1000
    blocks, segments = replay(document, 0)
    start = min(t for b in blocks + segments for t in b[:2] if t is not None)
    assert device["moment"]["kind"] == "oom"
    assert (device["moment"]["time"], device["moment"]["requested_bytes"],
            device["moment"]["device_free_bytes"]) == (at, 3 << 30, 123_456_768)
    assert (device["allocated_bytes"], device["reserved_bytes"]) == (
        live_at(blocks, at, start), live_at(segments, at, start))
    # no free block of 3 GiB in a 1.5 GiB reservation
    assert device["moment"]["largest_free_fits_request"] is False


@pytest.mark.slow
def test_an_oom_without_size_says_it_is_unknown(tmp_path):
    document = plain_document(BUNDLED[0])
    target = tmp_path / "oom.pickle"
    target.write_bytes(pickle.dumps(with_oom(document, 100, None), protocol=4))
    (device,) = memory_report(traceconv.load(target))["devices"]
    assert device["moment"]["requested_bytes"] is None
    assert device["unknown"]["oom_requested_bytes_unknown"] == 1
    assert "largest_free_fits_request" not in device["moment"]


@pytest.mark.slow
def test_a_wrapped_history_counts_what_it_lost(tmp_path):
    """Dropping the first half of the entries (a ring buffer that wrapped): frees of blocks
    never seen allocated are counted, and the numbers still equal the replay."""
    document = plain_document(BUNDLED[0])
    entries = document["device_traces"][0]
    wrapped = {**document, "device_traces": [entries[len(entries) // 2:]]}
    target = tmp_path / "wrapped.pickle"
    target.write_bytes(pickle.dumps(wrapped, protocol=4))
    (device,) = memory_report(traceconv.load(target))["devices"]
    lost = {e["addr"] for e in entries[:len(entries) // 2] if e["action"] == "alloc"} & {
        e["addr"] for e in entries[len(entries) // 2:] if e["action"] == "free_completed"}
    assert device["unknown"]["frees_of_blocks_allocated_before_history"] >= 1
    assert lost
    check_against_replay(target)


@pytest.mark.slow
def test_without_times_the_moment_is_an_entry_index(tmp_path):
    document = plain_document(BUNDLED[0])
    timeless = {**document, "device_traces": [
        [{k: v for k, v in e.items() if k != "time_us"} for e in document["device_traces"][0]]]}
    target = tmp_path / "timeless.pickle"
    target.write_bytes(pickle.dumps(timeless, protocol=4))
    report = memory_report(traceconv.load(target))
    assert report["time_unit"] == "entry"
    check_against_replay(target)


@pytest.mark.slow
def test_three_devices_each_their_own(tmp_path):
    """Segments and histories on three devices: one answer per device, each its replay."""
    document = plain_document(BUNDLED[0])
    entries = document["device_traces"][0]
    segments = [{**s, "device": d} for d in range(3) for s in document["segments"]
                if d == 0 or s["segment_type"] == "small"]
    three = {**document, "segments": segments,
             "device_traces": [entries, entries[: len(entries) // 3], []]}
    target = tmp_path / "three.pickle"
    target.write_bytes(pickle.dumps(three, protocol=4))
    check_against_replay(target)


def test_deeper_sites_still_sum_to_allocated():
    trace = traceconv.load(BUNDLED[0])
    one, three = (memory_report(trace, depth)["devices"][0] for depth in (1, 3))
    assert sum(s["bytes"] for s in three["sites"]) == three["allocated_bytes"]
    assert len(three["sites"]) >= len(one["sites"])
    assert any(s["site"].count(" < ") == 2 for s in three["sites"])


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "traceconv", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_cli_json_is_the_api_report():
    path = BUNDLED[0]
    result = run_cli("memory", str(path), "--json", "--depth", "2")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data == json.loads(json.dumps(memory_report(traceconv.load(path), 2)))
    assert data["schema"] == 1
    device = data["devices"][0]
    for key in ("allocated_bytes", "reserved_bytes", "fragmentation_bytes"):
        assert type(device[key]) is int


def test_cli_text_names_the_moment_and_sites():
    result = run_cli("memory", str(BUNDLED[0].relative_to(ROOT)))
    assert result.returncode == 0, result.stderr
    assert "the first peak of allocated bytes" in result.stdout
    assert "resnet.py:269 _forward_impl" in result.stdout


def test_cli_bad_input_is_one_line(tmp_path):
    bad = tmp_path / "bad.pickle"
    bad.write_bytes(b"\x80\x04not a pickle at all")
    result = run_cli("memory", str(bad))
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert "bad.pickle" in result.stderr


def replayed_allocated(path: Path) -> int:
    blocks, segments = replay(plain_document(path), 0)
    times = [t for b in blocks + segments for t in b[:2] if t is not None]
    return live_at(blocks, first_peak(blocks, segments), min(times, default=0))


@pytest.mark.parametrize("pair", [
    BUNDLED,
    [CORPUS / "round5" / "snapshot" / f"yiyi_llm_inference_{name}_snapshot.pickle"
     for name in ("log1_1.3b", "1.3b")]], ids=["bundled", "flexgen-commits"])
def test_two_snapshots_change_by_site(pair):
    """``memory A B``: the site changes sum exactly to the change of the replayed peaks."""
    if not all(p.is_file() for p in pair):
        pytest.skip("../shared/corpus/round5 is not beside this checkout")
    result = run_cli("memory", *map(str, pair), "--json")
    assert result.returncode == 0, result.stderr
    (device,) = json.loads(result.stdout)["devices"]
    change = replayed_allocated(pair[1]) - replayed_allocated(pair[0])
    assert device["change_bytes"] == change
    assert sum(s["change_bytes"] for s in device["sites"]) == change
    for site in device["sites"]:
        assert site["change_bytes"] == site["after_bytes"] - site["before_bytes"] != 0
        assert site["status"] == ("new" if not site["before_bytes"] else "gone"
                                  if not site["after_bytes"] else "grown"
                                  if site["change_bytes"] > 0 else "shrunk")


@pytest.mark.parametrize("name", ["streams_graph_nccl_cuda.pt.trace.json.gz",
                                  "cnn_step5.pt.trace.json"])
def test_kineto_memory_events_peak(name):
    """A Kineto trace with ``profile_memory``: per device, allocated at the first peak is the
    highest level of its ``[memory]`` events replayed in time order (a free of a block
    allocated before the trace counts from the start)."""
    path = SAMPLES / "torch" / name
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("name") == "[memory]"]
    expected = {}
    for kind, index in {(e["args"]["Device Type"], e["args"]["Device Id"]) for e in events}:
        mine = sorted((e for e in events if (e["args"]["Device Type"], e["args"]["Device Id"])
                       == (kind, index)), key=lambda e: e["ts"])
        live: set[int] = set()
        level = 0   # before the first event: the blocks freed but never seen allocated
        for e in mine:
            if e["args"]["Bytes"] > 0:
                live.add(e["args"]["Addr"])
            elif e["args"]["Addr"] in live:
                live.discard(e["args"]["Addr"])
            else:
                level -= e["args"]["Bytes"]
        levels = {}
        for e in mine:
            level += e["args"]["Bytes"]
            levels[e["ts"]] = level   # the level after every change at that time
        expected["CPU" if kind == 0 else f"CUDA:{index}"] = max(levels.values())
    report = memory_report(traceconv.load(path))
    got = {d["device"]: d["allocated_bytes"] for d in report["devices"]}
    assert got == expected
    for device in report["devices"]:
        # no segments in a Kineto trace: reserved is the caching allocator's own total
        # where it states one (CUDA), none for the CPU (it keeps no cache: 0)
        assert (device["reserved_bytes"] is None) == (device["device"] == "CPU")
        assert sum(s["bytes"] for s in device["sites"]) == device["allocated_bytes"]


@st.composite
def histories(draw: st.DrawFn) -> dict:
    """A snapshot document: random allocs and frees over a few addresses inside two segments
    (some frees of blocks never seen allocated, as after a wrapped ring buffer), some
    entries at the same time, and what stays allocated in the dump-time table."""
    entries, live, time = [], set(), 1_000
    segments = [(1 << 30, 1 << 20), (2 << 30, 2 << 20)]
    for _ in range(draw(st.integers(1, 40))):
        addr = draw(st.sampled_from([base + k * 4096 for base, _ in segments
                                     for k in range(6)]))
        size = draw(st.integers(1, 4096))
        time += draw(st.sampled_from([0, 1, 7]))
        if addr in live or draw(st.integers(0, 4)) == 0:   # (else a free of an unseen block)
            live.discard(addr)
            entries += [{"action": a, "addr": addr, "size": size, "stream": 0, "time_us": time}
                        for a in ("free_requested", "free_completed")]
        else:
            live.add(addr)
            entries.append({"action": "alloc", "addr": addr, "size": size, "stream": 0,
                            "time_us": time, "frames": [
                                {"name": "f", "filename": "/m/net.py", "line": addr % 97}]})
    table = [{"device": 0, "address": base, "total_size": total, "stream": 0,
              "segment_type": "large", "blocks": [
                  {"address": a, "size": 4096, "requested_size": 4096,
                   "state": "active_allocated"} for a in sorted(live) if base <= a < base + total]}
             for base, total in segments]
    return {"segments": table, "device_traces": [entries]}


@settings(max_examples=40, deadline=None, derandomize=True)
@given(histories())
def test_any_history_equals_the_replay(tmp_path_factory, document):
    path = tmp_path_factory.mktemp("history") / "snapshot.pickle"
    path.write_bytes(pickle.dumps(document, protocol=4))
    check_against_replay(path)


def test_segments_that_disagree_are_counted(tmp_path):
    """Without the dump-time segments table, blocks allocated before the history lie in no
    segment the snapshot knows: counted, and reserved still the replay's."""
    document = plain_document(BUNDLED[0])
    target = tmp_path / "no_table.pickle"
    target.write_bytes(pickle.dumps({**document, "segments": []}, protocol=4))
    (device,) = memory_report(traceconv.load(target))["devices"]
    blocks, segments = replay({**document, "segments": []}, 0)
    times = [t for b in blocks + segments for t in b[:2] if t is not None]
    at = first_peak(blocks, segments)
    assert device["reserved_bytes"] == live_at(segments, at, min(times))
    assert device["unknown"].get("live_blocks_outside_live_segments", 0) + device[
        "unknown"].get("reserved_below_allocated", 0) >= 1


def test_an_oom_naming_no_device_is_the_one_device():
    """An OOM instant without a device (a trace written before the reader named it) belongs
    to the trace's one device."""
    trace = traceconv.Trace()
    for address, start, end in ((0, 0, 50), (4096, 10, None), (8192, 30, 40)):
        trace.add_memory_block(traceconv.MemoryBlock(address, 1000, start, end,
                                                     device="cuda:0"))
    track = trace.add_track("allocator events", process=trace.add_process("allocator"))
    trace.add_instant(track, 20, "out of memory", "oom", {"requested bytes": 5000})
    (device,) = memory_report(trace)["devices"]
    assert (device["device"], device["moment"]["kind"], device["moment"]["time"],
            device["allocated_bytes"]) == ("cuda:0", "oom", 20, 2000)


def _replayed(path: Path) -> tuple[int, int]:
    """(allocated, reserved) of ``path``'s device 0 at its moment, by the hand replay."""
    blocks, segments = replay(plain_document(path), 0)
    times = [t for b in blocks + segments for t in b[:2] if t is not None]
    start, at = min(times, default=0), first_peak(blocks, segments)
    return live_at(blocks, at, start), live_at(segments, at, start)


@pytest.mark.slow
def test_ranks_side_by_side_equal_each_ranks_replay():
    """The bundled snapshots as the ranks of one job: a row per rank with its replayed
    bytes, the most allocated first, and the sites whose bytes differ between them."""
    result = run_cli("memory", "--ranks", "--json", *(str(p) for p in BUNDLED))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    expected = sorted(((str(p), *_replayed(p)) for p in BUNDLED), key=lambda row: -row[1])
    assert [(r["rank"], r["allocated_bytes"], r["reserved_bytes"]) for r in data["ranks"]] \
        == expected
    held = {name: sum(s["bytes"][name] for s in data["differing_sites"])
            for name, _, _ in expected}
    assert all(held[name] <= allocated for name, allocated, _ in expected)
    top = data["differing_sites"][0]   # (the OOM triage's one site holds all of FlexGen's)
    assert top["site"] == "pytorch_backend.py:190 allocate"
    assert max(top["bytes"].values()) == 11_840_159_744


def test_more_than_two_inputs_without_ranks_is_a_usage_error():
    result = run_cli("memory", *(str(p) for p in BUNDLED * 2))
    assert result.returncode == 2 and "--ranks" in result.stderr


KINETO_CUDA = SAMPLES / "torch" / "resnet18_train_cuda.pt.trace.json.gz"


def test_a_kineto_peak_states_the_allocators_own_totals():
    """Kineto's [memory] events carry the caching allocator's totals: at the peak, its
    `Total Allocated` (blocks held from before the trace included) and `Total Reserved`, as
    the last event of the device at or before that moment states them (read from the JSON)."""
    trace = traceconv.load(KINETO_CUDA)
    (cuda,) = [d for d in memory_report(trace)["devices"] if d["device"] == "CUDA:0"]
    with gzip.open(KINETO_CUDA) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("name") == "[memory]"
                  and e["args"].get("Device Type") == 1]
    origin = trace.metadata.attributes.get("baseTimeNanoseconds", 0)
    at = cuda["moment"]["time"]
    # (the model's times are ns; the file's µs with three decimals, after its base)
    stated = max((e for e in events if round(e["ts"] * 1000) + origin <= at),
                 key=lambda e: e["ts"])["args"]
    assert cuda["allocated_by_allocator_bytes"] == stated["Total Allocated"]
    assert cuda["reserved_bytes"] == stated["Total Reserved"]
    assert cuda["fragmentation_bytes"] == stated["Total Reserved"] - stated["Total Allocated"]
    assert cuda["allocated_bytes"] < stated["Total Allocated"]   # (some held from before)
    # the report's pane says it too, with the bytes held from before the trace
    held = stated["Total Allocated"] - cuda["allocated_bytes"]
    assert (f"{stated['Total Allocated']:,} B" in memory_pane(trace)
            and f"({held:,} B held from before the trace)" in memory_pane(trace))


@pytest.mark.parametrize("extra", [(), ("--ranks",)])
def test_an_input_without_memory_is_one_error_in_every_mode(extra: tuple[str, ...]):
    """Alone, beside a snapshot or among ranks, an input without memory blocks (rocprof
    statistics) is named in one line, exit 1: not an empty table or comparison (--json
    gives the empty object, as for one input)."""
    stats = SAMPLES / "rocprof" / "llamacpp_results.stats.csv"
    for inputs in ([stats], [SAMPLES / "torch" / "cnn_step5.pt.trace.json", stats]):
        result = run_cli("memory", *extra, *(str(p) for p in inputs))
        assert result.returncode == 1 and not result.stdout
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "llamacpp_results.stats.csv" in lines[0]
        assert "no memory blocks" in lines[0]


def test_a_snapshot_against_itself_changes_no_site():
    """The same snapshot twice: allocated unchanged (+0), and one line saying no site
    changed, not a table of headers."""
    snapshot = str(SAMPLES / "torch" / "resnet18_train_snapshot.pickle.gz")
    result = run_cli("memory", snapshot, snapshot)
    assert result.returncode == 0, result.stderr
    assert "(+0) from" in result.stdout
    assert "sites that changed: none (every site holds the same bytes)" in result.stdout
    assert "┃" not in result.stdout

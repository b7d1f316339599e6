"""advise: every rule fires on a real sample that has the problem and stays quiet on one that
does not; numbers are checked against counts taken straight from the source files."""

from __future__ import annotations

import functools
import gzip
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from traceconv.analysis.advise import RULES, advise
from traceconv.cli import app

DATA = Path(__file__).parent / "data"
SAMPLES = Path(__file__).parent.parent / "samples"
TORCH = DATA / "torch"
RESNET = TORCH / "resnet18_train_cuda.pt.trace.json.gz"        # fp32, 2 ProfilerSteps
GPT = TORCH / "gpt_compile_bf16_cuda.pt.trace.json.gz"          # bf16 autocast, compiled
STREAMS = SAMPLES / "torch" / "streams_graph_nccl_cuda.pt.trace.json.gz"    # pageable D2H, pinned H2D
DDP = TORCH / "ddp_gloo_rank0.pt.trace.json.gz"                 # gloo collectives
PADDLE_BEFORE = SAMPLES / "paddle" / "report_gpu_before.txt"
PADDLE_AFTER = SAMPLES / "paddle" / "report_gpu_after.txt"
PADDLE_LOADER = DATA / "paddle" / "small_2.6.2.paddle_trace.json.gz"
SNAPSHOT = SAMPLES / "torch" / "resnet18_train_snapshot.pickle.gz"   # allocator segments


def raw_events(path: Path) -> list[dict]:
    with gzip.open(path) as f:
        return json.load(f)["traceEvents"]


@functools.cache
def load(path: Path) -> traceconv.Trace:
    return traceconv.load(path)


def fired(path: Path, rule: str, **options):
    result = advise(load(path), rules=[rule], **options)
    assert not result.skipped, result.skipped
    return [f for f in result.findings if f.rule == rule]


def union_ns(intervals: list[tuple[float, float]]) -> float:
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def test_every_rule_is_documented():
    table = (Path(__file__).parent.parent / "docs" / "advise.md").read_text()
    for rule in RULES:
        assert re.search(rf"^\| `{rule.id}` \|", table, re.M), rule.id


def test_gpu_idle_matches_an_independent_busy_union():
    """Busy time = union of GPU kernels/copies/memsets inside the ProfilerStep windows,
    computed here from the raw JSON (µs)."""
    events = raw_events(RESNET)
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in events
             if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
    work = [(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("ph") == "X"
            and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    clipped = [(max(a, s0), min(b, s1)) for a, b in work for s0, s1 in steps
               if min(b, s1) > max(a, s0)]
    window = sum(b - a for a, b in steps)
    busy = union_ns(clipped)
    (finding,) = fired(RESNET, "gpu-idle")
    ev = finding.evidence
    assert ev["steps"] == len(steps) == 2
    assert ev["window_ns"] == pytest.approx(window * 1000, abs=2)
    assert ev["busy_ns"] == pytest.approx(busy * 1000, abs=len(clipped))
    assert ev["host_wait_ns"] + ev["kernel_wait_ns"] + ev["other_ns"] == ev["idle_ns"]
    assert finding.severity == "high" and ev["idle_share"] > 0.6


def test_gpu_idle_without_launch_calls_names_no_cause():
    """A kernel trace alone (rocprof, no API trace) has no launch calls: the gaps' cause is
    unknown, so the finding says so instead of advising on queued work."""
    path = SAMPLES / "rocprof" / "jimw567__rocprof-unified-viewer__decode_kernel_trace.csv"
    (finding,) = fired(path, "gpu-idle")
    assert "cause unknown: no launch calls" in finding.title
    assert "no launch calls" in finding.advice and "queued" not in finding.advice
    assert finding.evidence["host_wait_ns"] == finding.evidence["kernel_wait_ns"] == 0


def test_gpu_idle_quiet_when_the_device_is_busy():
    # MegEngine's training timeline keeps its device busy (a different reader, same concept)
    assert fired(DATA / "megengine" / "train_chrome_timeline.json.gz", "gpu-idle") == []


def test_launch_bound_counts_kernels_shorter_than_their_launch():
    events = raw_events(GPT)
    launches = {e["args"]["correlation"]: e["dur"] for e in events
                if e.get("cat") == "cuda_runtime" or e.get("cat") == "cuda_driver"
                if isinstance(e.get("args"), dict) and "correlation" in e["args"]}
    kernels = [e for e in events if e.get("cat") == "kernel"
               and e["args"].get("correlation") in launches
               and not re.search("nccl", e["name"], re.I)]
    shorter = sum(1 for k in kernels if k["dur"] < launches[k["args"]["correlation"]])
    (finding,) = fired(GPT, "launch-bound")
    assert finding.evidence["kernels"] == len(kernels) == 720
    assert finding.evidence["shorter_than_launch"] == shorter


def test_launch_bound_quiet_on_long_kernels():
    assert fired(STREAMS, "launch-bound") == []


def test_sync_copy_and_pageable_copy_on_pageable_device_to_host_copies():
    events = raw_events(STREAMS)
    pageable = [e for e in events if e.get("cat") == "gpu_memcpy" and "Pageable" in e["name"]]
    (sync,) = fired(STREAMS, "sync-copy")
    assert sync.evidence["blocking_copies"] == len(pageable) == 3
    assert sync.where["launch_calls"] == ["cudaMemcpyAsync"]
    (page,) = fired(STREAMS, "pageable-copy")
    assert page.evidence["bytes"] == sum(e["args"]["bytes"] for e in pageable) == 3 * 2**24
    # the pinned host-to-device copies are neither blocking nor pageable
    assert all("Pinned" not in name for name in page.where["copies"] + sync.where["copies"])


def test_copy_rules_quiet_without_the_problem():
    # (ResNet-18's trace has memsets but no copy: no copy call to judge)
    result = advise(load(RESNET), rules=["sync-copy"])
    assert [s.reason for s in result.skipped] == ["not applicable: missing copy calls"]
    assert fired(TORCH / "hta_sampled_rank-0.json.gz", "pageable-copy") == []


def memory_manipulation_rows(path: Path) -> list[tuple[str, int, float, float]]:
    """(name, calls, CPU total ms, GPU total ms) of the Memory Manipulation Summary of a
    ``paddle.profiler`` summary, read with plain string handling."""
    table = path.read_text().split("Memory Manipulation Summary---")[1].split("```")[0]
    rows = []
    for line in table.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) == 4 and cells[1].isdigit():
            rows.append((cells[0], int(cells[1]), float(cells[2].split(" / ")[0]),
                         float(cells[3].split(" / ")[0])))
    return rows


def test_copies_judged_by_device_time_and_host_waits_by_sync_copy():
    """PaddleFleetX's GPT summary: the copies' 1029.59 ms are CPU time, 1024.46 ms of it in
    27 synchronous copies (host waits), the GPU time is 16.73 ms; the reader's buffer copy
    is a host copy. So sync-copy fires on the host time, memcpy-heavy stays quiet."""
    path = DATA / "paddle" / "paddlefleetx_docs_profiler_gpt_v100.md"
    rows = memory_manipulation_rows(path)
    assert len(rows) == 5
    sync = [r for r in rows if r[0].startswith("GpuMemcpySync")]
    step_ms = float(re.search(r"^ProfileStep\s+\d+\s+([\d.]+)", path.read_text(), re.M)[1])
    (finding,) = fired(path, "sync-copy")
    assert finding.evidence["blocking_copies"] == sum(r[1] for r in sync) == 27
    assert finding.evidence["host_blocked_ns"] == round(sum(r[2] for r in sync) * 1e6)
    assert finding.evidence["window_ns"] == round(step_ms * 1e6)
    assert finding.severity == "high" and "3 steps" in finding.title
    assert finding.where["copies"] == sorted(r[0] for r in sync)
    assert fired(path, "memcpy-heavy") == []
    found = load(path)
    from traceconv.analysis.copy_time import device_copy_time

    (device,) = device_copy_time(found)
    device_ms = sum(r[3] for r in rows if "Memcpy" in r[0])   # (the host buffer copy: 0)
    assert device.copy_ns / 1e6 >= device_ms - 0.01   # the Overview's Memcpy + Memset row
    assert "BufferedReader:MemoryCopy" not in device.names


def test_copy_statistics_without_busy_or_step_time_are_not_judged():
    """nsys stats' copy table alone (no kernel time) and rocprof's HIP API table (no step
    time) hold copies but nothing to weigh them against."""
    memops = DATA / "nsys_stats" / "cuda_gpu_mem_time_sum.csv"
    result = advise(load(memops), rules=["memcpy-heavy"])
    assert "missing device busy time" in result.skipped[0].reason
    api = DATA / "rocprof" / "amd__HPCTrainingExamples__jacobi_1389712_hip_api_stats.csv"
    result = advise(load(api), rules=["sync-copy"])
    assert "missing step time" in result.skipped[0].reason


def test_memcpy_heavy_on_a_timeline():
    (finding,) = fired(STREAMS, "memcpy-heavy")
    assert finding.evidence["share"] > 0.4
    assert fired(RESNET, "memcpy-heavy") == []


def test_no_mixed_precision_fires_on_fp32_not_on_bf16():
    (finding,) = fired(RESNET, "no-mixed-precision")
    assert finding.evidence["tensor_core_gpu"] is True and finding.evidence["tf32"] is True
    assert fired(GPT, "no-mixed-precision") == []


def test_framework_overhead_from_paddles_ratio():
    (finding,) = fired(PADDLE_BEFORE, "framework-overhead")
    assert finding.evidence["ratio_pct"] == pytest.approx(33.4025)   # the report's own line
    assert fired(RESNET, "framework-overhead") == []


def test_host_bound_op_and_dataloader_on_paddle():
    events = raw_events(PADDLE_LOADER)
    # Paddle states exact times in args ("11.507 us"); ts is rounded to whole µs
    loader = union_ns([(float(e["args"]["start_time"].split()[0]),
                        float(e["args"]["end_time"].split()[0]))
                       for e in events if e.get("cat") == "Dataloader"])
    (finding,) = fired(PADDLE_LOADER, "dataloader-bound")
    assert finding.evidence["loader_ns"] == pytest.approx(loader * 1000, abs=8)
    assert finding.evidence["calls"] == 8
    assert fired(TORCH / "threads_default.pt.trace.json.gz", "dataloader-bound") == []


def test_host_bound_op_needs_a_device_that_waits():
    """A host op is "bound" only where a device could have been working: on the HTA
    event-sync trace (one step of 3.154 ms, raw JSON) the one ``aten::ones`` runs 2.245 ms
    while the GPU is busy 1 µs of it; Paddle's CPU-only trace has no device to wait, so the
    rule does not apply there (its "Gradient Backward" is simply the work)."""
    events = raw_events(TORCH / "event_sync_trace.json.gz")
    (ones,) = [e for e in events if e.get("name") == "aten::ones"]
    (step,) = [e for e in events if "ProfilerStep" in str(e.get("name"))]
    (op,) = fired(TORCH / "event_sync_trace.json.gz", "host-bound-op")
    assert op.where["op"] == "aten::ones" and op.evidence["calls"] == 1
    assert op.evidence["host_ns"] == round(ones["dur"] * 1000)
    assert op.evidence["window_ns"] == round(step["dur"] * 1000)
    advice = advise(load(PADDLE_LOADER), rules=["host-bound-op"])
    assert not advice.findings and [s.rule for s in advice.skipped] == ["host-bound-op"]
    assert fired(STREAMS, "host-bound-op") == []


def test_exposed_communication_on_gloo_not_on_overlapped_nccl():
    (finding,) = fired(DDP, "exposed-communication")
    assert finding.evidence["on_device"] is False
    assert finding.evidence["share"] > 0.3
    assert fired(STREAMS, "exposed-communication") == []


def test_memory_rules_from_allocator_totals():
    events = raw_events(GPT)
    memory = [e["args"] for e in events if e.get("name") == "[memory]"
              and e["args"].get("Device Type") == 1]
    reserved = max(a["Total Reserved"] for a in memory)
    allocated = max(a["Total Allocated"] for a in memory)
    (frag,) = fired(GPT, "fragmentation")
    assert frag.evidence["peak_reserved_bytes"] == reserved
    assert frag.evidence["peak_allocated_bytes"] == allocated
    assert fired(STREAMS, "fragmentation") == []           # 17% unused only
    assert fired(GPT, "memory-peak") == []                 # 1.5 GB of an 80 GB H100
    (peak,) = fired(GPT, "memory-peak", device_memory=int(reserved / 0.85))
    assert peak.severity == "medium" and peak.evidence["peak_bytes"] == reserved
    # the peak's moment: the first event, in time, that states it (not the first in the file)
    first = min(e["ts"] for e in events if e.get("name") == "[memory]"
                and e["args"].get("Device Type") == 1 and e["args"]["Total Reserved"] == reserved)
    origin = min(e["ts"] for e in events if e.get("ph") in ("X", "i") and "ts" in e)
    assert peak.where["peak_ns"] == pytest.approx((first - origin) * 1000, abs=1)


def test_missing_concepts_are_reported_not_guessed():
    result = advise(load(PADDLE_BEFORE))
    reasons = {s.rule: s.reason for s in result.skipped}
    # (a Paddle report: statistics, not a timeline, which the reason says)
    assert reasons["gpu-idle"] == ("not applicable: missing device work (the input holds "
                                   "statistics, not a timeline)")
    assert reasons["memory-peak"].startswith("not applicable: missing ")
    ran = {f.rule for f in result.findings} | set(result.passed)
    assert ran | set(reasons) == {r.id for r in RULES} and not ran & set(reasons)


def test_cli_json_contract_and_several_inputs():
    result = CliRunner().invoke(app, ["advise", str(STREAMS), str(PADDLE_BEFORE), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    keys = {"rule", "severity", "title", "evidence", "where", "advice", "trace"}
    assert data["findings"] and all(set(f) == keys for f in data["findings"])
    assert {f["trace"] for f in data["findings"]} == {STREAMS.name, PADDLE_BEFORE.name}
    assert [f["severity"] for f in data["findings"]] == sorted(
        (f["severity"] for f in data["findings"]), key=["high", "medium", "info"].index)


def test_cli_text_and_errors(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["advise", str(PADDLE_BEFORE)])
    assert result.exit_code == 0 and "framework-overhead" in result.output
    bad = runner.invoke(app, ["advise", str(PADDLE_BEFORE), "--rule", "nope"])
    assert bad.exit_code == 1 and "unknown rule 'nope'" in bad.output
    assert runner.invoke(app, ["advise", "--list-rules"]).output.count("\n") == len(RULES)


@pytest.mark.slow
def test_fragmentation_of_an_allocator_snapshot_from_its_segments():
    """Snapshots have no running totals: reserved = live segments, allocated = live blocks.
    Reference: a plain replay of the snapshot's own history, backwards from its dump state."""
    import pickle

    with gzip.open(SNAPSHOT) as f:
        document = pickle.load(f)   # a bundled sample, only plain data
    entries = document["device_traces"][0]
    segments = document["segments"]

    def peak(final: int, changes: list[tuple[int, int]]) -> int:
        level = final - sum(delta for _, delta in changes)    # the level before the history
        top = level
        for _, delta in sorted(changes):                     # same instant: frees first
            level += delta
            top = max(top, level)
        return top

    reserved = peak(sum(s["total_size"] for s in segments),
                    [(e["time_us"], e["size"] if e["action"] == "segment_alloc" else -e["size"])
                     for e in entries if e["action"] in ("segment_alloc", "segment_free")])
    allocated = peak(sum(b["requested_size"] for s in segments for b in s["blocks"]
                         if b["state"] == "active_allocated"),
                     [(e["time_us"], e["size"] if e["action"] == "alloc" else -e["size"])
                      for e in entries if e["action"] in ("alloc", "free_completed")])
    (frag,) = fired(SNAPSHOT, "fragmentation")
    assert (frag.evidence["peak_reserved_bytes"], frag.evidence["peak_allocated_bytes"]) == (
        reserved, allocated)
    assert frag.severity == "medium"          # 42% of 1.45 GiB held unused
    (high,) = fired(SNAPSHOT, "memory-peak", device_memory=int(reserved / 0.95))
    assert high.severity == "high" and high.evidence["peak_bytes"] == reserved


def test_a_run_without_steps_is_called_the_run():
    """Advice measures a trace without step markers over all its work, and says so: "of
    the run", not "of the steps" (a real CPU profile of one forward and backward pass)."""
    path = TORCH / "adamm1909_unsloth_cpu_mac.pt.trace.json"
    text = path.read_text()
    assert "ProfilerStep" not in text
    titles = [f.title for f in advise(traceconv.load(path)).findings]
    assert titles and all("of the steps" not in t for t in titles)
    assert any(t.endswith("of the run") for t in titles)


def test_a_cpu_only_pytorch_run_gets_no_cuda_advice():
    """The advice for a PyTorch run with no device names no CUDA API (CUDA graphs, pinned
    memory): a real CPU-only profile's framework-overhead finding says torch.compile."""
    advice = advise(load(TORCH / "adamm1909_unsloth_cpu_mac.pt.trace.json"))
    assert advice.findings
    assert all("CUDA" not in f.advice and "cuda" not in f.advice for f in advice.findings)
    from traceconv.analysis.advise.frameworks import advice_for, framework_of

    assert "CUDA graphs" in advice_for("framework-overhead", framework_of(load(RESNET)), "")


def test_rules_that_need_a_timeline_say_the_input_is_statistics():
    """nsys stats and rocprof statistics list kernels: advise must not call them missing
    without saying why (summary lists them): the input holds statistics, not a timeline."""
    from traceconv.analysis.advise import STATISTICS_ONLY

    for path in (DATA / "nsys_stats" / "nanomoe_stats_console_nsys2026.1.txt",
                 DATA / "rocprof" / "amd__HPCTrainingExamples__jacobi_1389712_kernel_stats.csv"):
        result = advise(load(path))
        assert result.skipped and all(s.reason.endswith(STATISTICS_ONLY) for s in result.skipped)
        text = CliRunner().invoke(app, ["advise", str(path)]).output
        assert "the input holds statistics, not a timeline" in " ".join(text.split())
    assert not any(s.reason.endswith(STATISTICS_ONLY)
                   for s in advise(load(RESNET)).skipped)


TF_TIMELINE = DATA / "tensorflow" / "gpu_timeline_01.json"
MIGRAPHX_TWO_RUNS = DATA / "migraphx" / "rocm7.2_perf_test_two_runs.txt"


def test_memcpy_heavy_judges_the_device_not_a_copy_stream():
    """TF's GPU tracer writes each stream as a process of its own, and its copies go on
    streams that only copy: each such stream is all copies, the device is not. Counted from
    the JSON: the per-stream processes' records, copies those the ``/memcpy`` process
    repeats (same name, start and length)."""
    events = json.loads(TF_TIMELINE.read_text())["traceEvents"]
    named = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    streams = {pid for pid, name in named.items() if re.search(r"/stream:\d+ Compute$", name)}
    memcpy = {pid for pid, name in named.items() if name.endswith("/memcpy Compute")}
    ran = [e for e in events if e.get("ph") == "X"]
    repeated = {(e["name"], e["ts"], e["dur"]) for e in ran if e["pid"] in memcpy}
    work = [e for e in ran if e["pid"] in streams]
    copies = [e for e in work if (e["name"], e["ts"], e["dur"]) in repeated]
    for pid in {e["pid"] for e in copies}:   # a copy stream: all copies
        assert all(e in copies for e in work if e["pid"] == pid)
    copy_us = union_ns([(e["ts"], e["ts"] + e["dur"]) for e in copies])
    busy_us = union_ns([(e["ts"], e["ts"] + e["dur"]) for e in work])
    assert (len(copies), copy_us, busy_us) == (2, 1216, 6820)

    from traceconv.analysis.copy_time import device_copy_time

    (device,) = device_copy_time(load(TF_TIMELINE))
    assert (device.copy_ns, device.busy_ns, device.copies) == (
        copy_us * 1000, busy_us * 1000, len(copies))
    assert fired(TF_TIMELINE, "memcpy-heavy") == []   # 17.8%: under the 20% threshold


def test_advise_judges_each_run_of_a_file_apart():
    """Two MIGraphX perf runs in one file: each finding's evidence is one run's (the
    gemm's line of that run's report), never the two added."""
    gemm_ms = re.findall(r"^@4 = gpu::gemm.*: ([\d.]+)ms, \d+%$",
                         MIGRAPHX_TWO_RUNS.read_text(), re.M)
    assert gemm_ms == ["0.00880674", "0.00872388"]
    found = fired(MIGRAPHX_TWO_RUNS, "no-mixed-precision")
    assert [(f.trace, f.evidence["kernel_ns"]) for f in found] == [
        ("run 1 of 2 (program 1)", round(float(gemm_ms[0]) * 1e6)),
        ("run 2 of 2 (program 2)", round(float(gemm_ms[1]) * 1e6))]


def test_memcpy_heavy_weighs_each_run_of_a_statistics_file_apart():
    """Paddle's device_guard tutorial prints two profiling reports (before and after the
    fix): each run's copies weigh against that run's device time, counted from its Event
    Summary (GPU Time column; top-level rows for the busy time, the GpuMemcpy rows for the
    copies), never the two runs added."""
    path = DATA / "paddle" / "paddle_docs_device_guard_profile_all.md"
    tables = path.read_text().split("Event Summary")[1:]
    by_hand = []
    for table in tables:
        rows = re.findall(r"^( *)(\S+) +(\d+) +[\d.]+ +[\d.]+ \([\d.]+\) +([\d.]+) \(",
                          table.split("```")[0], re.M)
        gpu_ns = [(indent, name, int(calls), round(float(ms) * 1e6))
                  for indent, name, calls, ms in rows]
        copies = [(calls, ns) for _, name, calls, ns in gpu_ns if name.startswith("GpuMemcpy")]
        busy = sum(ns for indent, _, _, ns in gpu_ns if not indent)
        by_hand.append((sum(ns for _, ns in copies), busy, sum(c for c, _ in copies)))
    assert by_hand == [(56512, 158948, 30), (21984, 103936, 10)]
    found = fired(path, "memcpy-heavy")
    assert [(f.evidence["copy_ns"], f.evidence["busy_ns"], f.evidence["copies"])
            for f in found] == by_hand

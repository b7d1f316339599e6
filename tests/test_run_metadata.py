"""What a source states about its run reaches every output as data, and the report says it.

- Metadata values are written as JSON values (objects, arrays, numbers), never as a
  Python repr (``"{'Throughput': ...}"``): a census over every bundled sample that has
  metadata, read back with plain ``json`` and the real protobuf runtime.
- trtexec's stated figures (trex's ``performance_summary``, ``device_information``) and
  nsys's GPUs become the model's ``run`` and ``devices``; the report shows them and heads
  with the stated walltime, not the sum of per-layer totals.
- ``advise``'s launch-bound rule judges statistics (kernel and launch-call counts and
  totals) where no timeline is given.

Expected values come from the files, read with plain ``json`` / ``gzip`` / text splitting.
"""

from __future__ import annotations

import ast
import gzip
import json
import lzma
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLES, bundled_files
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace as PbTrace

import traceconv
import traceconv.api
from traceconv.analysis.advise import advise
from traceconv.analysis.merge import merge
from traceconv.report import render_report

DATA = Path(__file__).parent / "data"
TRTEXEC = SAMPLES / "trtexec"
PROFILE_METADATA = TRTEXEC / "resnet_rtx3090_fp32.engine.profile.metadata.json.gz"
ENGINE_SET = sorted(TRTEXEC.glob("resnet_rtx3090_fp32.engine.*.json.gz"))
NSYS_STATS = DATA / "nsys_stats"


def _source_bytes(path: Path) -> bytes:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        return gzip.decompress(raw)
    return lzma.decompress(raw) if path.suffix == ".xz" else raw


def _repr_texts(value: Any, where: str, found: list[tuple[str, str]]) -> None:
    """Strings in ``value`` that are the Python repr of a structure or a constant: Python
    reads them (``ast.literal_eval``) and JSON does not."""
    if isinstance(value, dict):
        for key, item in value.items():
            _repr_texts(item, f"{where}.{key}", found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _repr_texts(item, f"{where}[{index}]", found)
    elif isinstance(value, str) and value.strip()[:1] in ("{", "[", "(", "N", "T", "F"):
        try:
            ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return
        try:
            json.loads(value)
        except ValueError:
            found.append((where, value))


def _pftrace_attributes(data: bytes) -> dict[str, Any]:
    """The model's metadata as the Perfetto output keeps it (real protobuf runtime)."""
    for packet in PbTrace.FromString(data).packet:
        for attribute in packet.trace_attributes.attribute:
            if attribute.key == "traceconv.model":
                return json.loads(attribute.string_value)["metadata"]
    raise AssertionError("no traceconv.model attribute")


def _with_metadata() -> list[Path]:
    found = []
    for path in bundled_files(SAMPLES):
        try:
            trace = traceconv.load(path)
        except traceconv.TraceconvError:   # (broken.json: a hostile sample; PROVENANCE.md)
            continue
        if trace.metadata.attributes and (trace.counts()["slices"] or trace.stats):
            found.append(path)
    return found


@pytest.mark.slow
def test_no_metadata_value_in_any_output_is_a_python_repr(tmp_path):
    """Census: every sample with metadata, to Chrome JSON and Perfetto. A repr-looking text
    the source itself holds (rpd's ``rocpd_metadata`` stores ``True`` as text) is data."""
    samples = _with_metadata()
    assert len(samples) >= 20   # (torch, nsys, rpd, trtexec, xplane, paddle, migraphx...)
    for path in samples:
        trace = traceconv.load(path)
        trace.save(tmp_path / "out.json")
        trace.save(tmp_path / "out.pftrace")
        header = json.loads((tmp_path / "out.json").read_text())
        found: list[tuple[str, str]] = []
        _repr_texts({k: v for k, v in header.items() if k != "traceEvents"}, "json", found)
        _repr_texts(_pftrace_attributes((tmp_path / "out.pftrace").read_bytes()), "pftrace",
                    found)
        source = _source_bytes(path)
        invented = [(where, text) for where, text in found if text.encode() not in source]
        assert invented == [], path.name


def test_trex_metadata_is_written_as_the_json_it_was():
    summary = json.loads(gzip.decompress(PROFILE_METADATA.read_bytes()))
    trace = traceconv.load(PROFILE_METADATA, joining=True)
    assert trace.metadata.attributes["trtexec.performance_summary"] == summary[
        "performance_summary"]
    # the key is the section's name, as for every section (docs/trtexec.md)
    assert trace.metadata.attributes["trtexec.device_information"] == summary[
        "device_information"]


def test_converted_trex_metadata_reads_back_as_objects(tmp_path):
    summary = json.loads(gzip.decompress(PROFILE_METADATA.read_bytes()))
    trace = traceconv.load(PROFILE_METADATA, joining=True)
    trace.save(tmp_path / "out.json")
    header = json.loads((tmp_path / "out.json").read_text())
    assert header["trtexec.performance_summary"] == summary["performance_summary"]
    trace.save(tmp_path / "out.pftrace")
    saved = _pftrace_attributes((tmp_path / "out.pftrace").read_bytes())
    assert saved["attributes"]["trtexec.device_information"] == summary["device_information"]


def test_trex_stated_figures_and_device_become_the_model_s():
    summary = json.loads(gzip.decompress(PROFILE_METADATA.read_bytes()))
    perf, device = summary["performance_summary"], summary["device_information"]
    trace = traceconv.load(PROFILE_METADATA, joining=True)
    run = trace.metadata.run
    assert run.walltime_ns == round(perf["Total Host Walltime"] * 1e9)
    assert run.device_ns == round(perf["Total GPU Compute Time"] * 1e9)
    assert run.throughput_per_s == perf["Throughput"]
    minimum, maximum, mean, median = perf["Latency"][:4]   # (trtexec's order)
    assert (run.latency_min_ns, run.latency_max_ns, run.latency_mean_ns,
            run.latency_median_ns) == tuple(round(ms * 1e6) for ms in (minimum, maximum,
                                                                         mean, median))
    (found,) = trace.metadata.devices
    mib = int(device["Device Global Memory"].removesuffix(" MiB"))
    assert (found.name, found.memory_bytes) == (device["Selected Device"], mib << 20)
    assert f"{found.compute_major}.{found.compute_minor}" == str(device["Compute Capability"])


def test_stated_figures_survive_a_perfetto_round_trip(tmp_path):
    trace = traceconv.load(PROFILE_METADATA, joining=True)
    trace.save(tmp_path / "out.pftrace")
    again = traceconv.load(tmp_path / "out.pftrace", joining=True)
    assert again.metadata.run == trace.metadata.run
    assert again.metadata.devices == trace.metadata.devices


def test_nsys_gpus_are_the_model_s_devices():
    import sqlite3

    path = SAMPLES / "nsys" / "mock_rtx3080_nsys2026.1.sqlite"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute("select id, name, totalMemory, computeMajor, computeMinor "
                          "from TARGET_INFO_GPU order by id").fetchall()
    devices = traceconv.load(path).metadata.devices
    assert [(d.id, d.name, d.memory_bytes, d.compute_major, d.compute_minor)
            for d in devices] == rows


def test_report_of_a_trtexec_run_states_its_figures_and_labels_the_sum():
    summary = json.loads(gzip.decompress(PROFILE_METADATA.read_bytes()))
    perf = summary["performance_summary"]
    profile = json.loads(gzip.decompress(
        (TRTEXEC / "resnet_rtx3090_fp32.engine.profile.json.gz").read_bytes()))
    layer_sum_s = sum(row["timeMs"] for row in profile[1:]) / 1e3
    # (no --exportTimes: the profile's layers are the only times, as in the probe's run)
    untimed = [p for p in ENGINE_SET if ".timing." not in p.name]
    trace = traceconv.api.combine([traceconv.load(p, joining=True) for p in untimed])
    html = render_report(trace)
    headline = re.search(r'<p class="sub">(.*?)</p>', html)
    assert headline is not None
    assert f"{perf['Total Host Walltime']:.3f} s host walltime (stated by the run)" in (
        headline[1])
    assert f"{perf['Throughput']:,.2f} a second" in html
    assert summary["device_information"]["Selected Device"] in html
    # the slices' span is the layers' totals side by side: said so, not called a duration
    span = re.search(r"([\d.,]+) (s|ms|µs) of op totals \(side by side: not elapsed\)", html)
    assert span is not None
    seconds = float(span[1].replace(",", "")) / {"s": 1, "ms": 1e3, "µs": 1e6}[span[2]]
    assert seconds == pytest.approx(layer_sum_s, rel=1e-3)


def test_report_of_merged_ranks_lists_its_inputs_and_says_the_tables_are_pooled():
    paths = sorted((SAMPLES / "torch").glob("ddp_gloo_rank*.pt.trace.json.gz"))
    html = render_report(merge([traceconv.load(p) for p in paths]))
    run = html[html.index("<h2>Run</h2>"):html.index("<h2>Step time</h2>")]
    assert "file</td><td>-" not in run.replace(" ", "")
    for path in paths:
        assert path.name in run
    assert f"{len(paths)} inputs" in run
    top = html[html.index("<h2>Top ops and kernels</h2>"):]
    assert "Job level" in top.split("<table")[0]


def _report_starts(lines: list[str], report: str) -> list[int]:
    """Where nsys announces ``report``'s table (``** ... (report):`` or ``Executing 'report'``)."""
    return [i for i, line in enumerate(lines) if f"({report})" in line or f"'{report}'" in line]


def _console_table(lines: list[str]) -> list[list[str]]:
    """The rows of the first console table in ``lines``: cells split on runs of spaces,
    numbers without their grouping commas."""
    rule = next(i for i, line in enumerate(lines) if line.strip().startswith("---"))
    rows = []
    for line in lines[rule + 1:]:
        if not line.strip():
            break
        rows.append([cell.replace(",", "") for cell in line.split()])
    return rows


def _stated_loop(path: Path, occurrence: int = 0) -> tuple[int, int, int, int]:
    """(kernels, kernel ns, launches, launch ns) of one run of a console output, by hand:
    Instances and Total Time of every kernel row, of the ``cudaLaunchKernel`` row."""
    lines = path.read_text().splitlines()
    kernels = _console_table(lines[_report_starts(lines, "cuda_gpu_kern_sum")[occurrence]:])
    api = _console_table(lines[_report_starts(lines, "cuda_api_sum")[occurrence]:])
    (launch,) = [row for row in api if row[-1] == "cudaLaunchKernel"]
    return (sum(int(r[2]) for r in kernels), sum(int(r[1]) for r in kernels),
            int(launch[2]), int(launch[1]))


@pytest.mark.parametrize(("name", "runs"), [("nsight_deep_dive_two_runs_readme.md", 2),
                                            ("nanomoe_stats_console_nsys2026.1.txt", 1)])
def test_launch_bound_is_judged_from_statistics(name, runs):
    path = NSYS_STATS / name
    findings = [f for f in advise(traceconv.load(path)).findings if f.rule == "launch-bound"]
    assert len(findings) == runs
    for occurrence, finding in enumerate(findings):
        kernels, kernel_ns, launches, launch_ns = _stated_loop(path, occurrence)
        assert kernel_ns / kernels < launch_ns / launches and kernels >= 50
        idle = 1 - kernel_ns / launch_ns
        assert finding.severity == ("high" if idle >= 0.6 else "medium")
        assert finding.evidence["kernels"] == kernels
        assert finding.evidence["kernel_ns"] == kernel_ns
        assert finding.evidence["launch_calls"] == launches
        assert finding.evidence["launch_ns"] == launch_ns
        assert finding.evidence["device_idle_share"] == round(idle, 4)
        assert "judged from statistics" in finding.title


def test_the_readme_s_two_runs_are_judged_apart():
    """1,010 kernels of 1.81 µs against 1,010 launches of 3.17 µs: the device idles at
    least 1 - 1.831 / 3.202 = 42.8% of the launching time (medium); run 2 likewise."""
    findings = [f for f in advise(traceconv.load(
        NSYS_STATS / "nsight_deep_dive_two_runs_readme.md")).findings if f.rule == "launch-bound"]
    # (each run named by its report file, as the README's progress lines name it)
    assert [f.where.get("run") for f in findings] == ["vector_add_profile_v3",
                                                      "vector_add_profile_v4"]
    assert [f.severity for f in findings] == ["medium", "medium"]


def test_statistics_without_launch_bound_loops_pass():
    """assignment2: kernels longer on average than the launch calls (by hand below)."""
    path = NSYS_STATS / "assignment2_stats_console_nsys2024.6.2.txt"
    kernels, kernel_ns, launches, launch_ns = _stated_loop(path)
    assert kernel_ns / kernels >= launch_ns / launches or 1 - kernel_ns / launch_ns < 0.3
    result = advise(traceconv.load(path))
    assert "launch-bound" in result.passed


def test_rocprof_gpu_agents_are_the_model_s_devices():
    path = DATA / "rocprof" / "ROCm__rocm-systems__vcopy_MI300A_ps_file_results.json.gz"
    agents = json.loads(gzip.decompress(path.read_bytes()))["rocprofiler-sdk-tool"][0]["agents"]
    gpus = [(a["logical_node_id"], a["product_name"]) for a in agents if a["type"] == 2]
    assert gpus   # (type 2: a GPU agent in rocprofiler-sdk's enum; the CPUs are type 1)
    assert [(d.id, d.name) for d in traceconv.load(path).metadata.devices] == gpus

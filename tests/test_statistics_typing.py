"""A statistics row is typed by the rule that types the timeline's slices of its name
(:meth:`traceconv.model.activity.Vocabulary.statistic`): a collective's kernels are
communication and a barrier packet is no work, in rocprof's and nsys's tables alike, so
``summary`` and ``report`` count them as the timeline's slices are counted. Expected values
are plain ``csv`` sums of the real files, by names classified here by hand."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.cli_errors import run
from tests.conftest import DATA, SAMPLES, SHARED

# by hand, reading every name of the files below: the collective library's kernels, and
# the device waiting for other work (rocprof's AQL barrier packets, filed among kernels)
COLLECTIVES = {"ncclDevKernel_Generic(ncclDevComm*, channelMasks, ncclWork*)"}
NO_WORK = {"<barrier packet>"}
KERNEL_STATS = [*(DATA / "rocprof" / name for name in (
    "anghostcici__saltfish__results.stats_head.csv", "dalg24__kokkos__results.stats.csv",
    "shashankparsi__HIP_Programming__results.stats.csv",
    "amd__HPCTrainingExamples__jacobi_1389712_kernel_stats.csv")),
    SAMPLES / "rocprof" / "llamacpp_results.stats.csv"]
# API statistics: host calls, none a collective nor a wait (by hand)
API_STATS = [*(DATA / "rocprof").glob("*hip*stats.csv"),
             *(SHARED / "rocprof").glob("*hip_api_stats.csv")]


def _hand_typed(path: Path, section: str) -> Counter:
    """ns per type of the rows of ``path`` by the names above (no-work rows left out). The
    name is the first column; rocprof v1 leaves a name with commas unquoted, so a row's
    extra cells are its name's."""
    by_type: Counter = Counter()
    with path.open(newline="") as f:
        header, *rows = csv.reader(f)
    assert header[0] == "Name"
    for cells in rows:
        extra = len(cells) - len(header)
        name = ",".join(cells[:1 + extra])
        total = dict(zip(header[1:], cells[1 + extra:], strict=True))["TotalDurationNs"]
        if name not in NO_WORK:
            by_type["communication" if name in COLLECTIVES else section] += round(float(total))
    return by_type


def _summary_typed(path: Path, place: str) -> tuple[Counter, dict]:
    result = run("summary", str(path), "--json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    by_type: Counter = Counter()
    for row in shown["rows" if place == "device" else "host_rows"]:
        by_type[row["type"]] += row[f"{place}_self_time"]
    return by_type, shown


@pytest.mark.parametrize("path", KERNEL_STATS, ids=lambda p: p.name)
def test_rocprof_kernel_statistics_are_typed_as_their_slices(path: Path):
    expected = _hand_typed(path, "kernel")
    by_type, shown = _summary_typed(path, "device")
    assert by_type.keys() == expected.keys()
    for kind, ns in expected.items():
        assert by_type[kind] == pytest.approx(ns / 1e9)
    assert shown["total_device_time"] == pytest.approx(sum(expected.values()) / 1e9)


@pytest.mark.parametrize("path", API_STATS, ids=lambda p: p.name)
def test_rocprof_api_statistics_keep_their_section(path: Path):
    expected = _hand_typed(path, "hip_api")
    by_type, _ = _summary_typed(path, "host")
    assert by_type.keys() == expected.keys() == {"hip_api"}
    assert by_type["hip_api"] == pytest.approx(expected["hip_api"] / 1e9)


def test_an_nsys_kernel_table_types_nccl_kernels_as_communication(tmp_path: Path):
    """The real ``cuda_gpu_kern_sum.csv`` with its second kernel renamed to one of NCCL's."""
    nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
    with (DATA / "nsys_stats" / "cuda_gpu_kern_sum.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    rows[2][-1] = nccl
    path = tmp_path / "cuda_gpu_kern_sum.csv"
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    expected: Counter = Counter()
    for row in rows[1:]:
        expected["communication" if row[-1] == nccl else "kernels"] += int(row[1])
    by_type, shown = _summary_typed(path, "device")
    assert by_type.keys() == expected.keys()
    for kind, ns in expected.items():
        assert by_type[kind] == pytest.approx(ns / 1e9)


def test_the_report_of_one_statistics_file_draws_no_step_time_and_no_barrier(tmp_path: Path):
    """A statistics file has no timeline: no step-time breakdown; its top table shows the
    collective's kernel as communication and leaves the barrier packets (no work) out."""
    path = KERNEL_STATS[0]
    page = tmp_path / "report.html"
    result = run("report", str(path), "-o", str(page))
    assert result.exit_code == 0, result.output
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.read_text()))
    assert "Step time" not in text and "&lt;barrier packet&gt;" not in text
    assert re.search(r"ncclDevKernel_Generic\(\S* \S* \S* communication", text)

"""Op and kernel names in an 80-column table: C++ signatures shortened to what names them
(traceconv.presentation.symbol_names, applied by fitted_table to every ``symbols`` column),
columns that say nothing left out, and distinct names printed distinct.

Expected cells are written by hand from the input; the real name lists are read here with
plain ``json``, ``csv`` and ``re``."""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from functools import cache

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from tests.conftest import DATA, SAMPLES
from traceconv.cli.app import app
from traceconv.presentation.tables import Column, fitted_table

KERNELS = [  # (name, total ns, instances): a hand-made `nsys stats` cuda_gpu_kern_sum
    ("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>"
     "(cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4::Params)", 6_000_000, 30),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
     "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
     "at::detail::Array<char*, 1>)", 3_000_000, 20),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, "
     "at::detail::Array<char*, 3> >(int, at::native::AddFunctor<float>, "
     "at::detail::Array<char*, 3>)", 1_000_000, 10),
]


def _summary_at_80(tmp_path) -> list[str]:
    path = tmp_path / "cuda_gpu_kern_sum.csv"
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)",
                      "Min (ns)", "Max (ns)", "StdDev (ns)", "Name"])
        for name, total, calls in KERNELS:
            out.writerow([f"{total / 1e5:.1f}", total, calls, total / calls, total / calls,
                          total // calls, total // calls, 0.0, name])
    result = CliRunner().invoke(app, ["summary", str(path)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return [line.rstrip() for line in result.stdout.splitlines()]


def test_kernel_names_at_80_columns_read_by_their_function_and_what_tells_them_apart(tmp_path):
    lines = _summary_at_80(tmp_path)
    assert max(map(len, lines)) <= 80
    rows = [line.split() for line in lines if re.match(r"\d ", line)]
    # the return type, namespaces and parameter lists go; cutlass's kernel is named by its
    # template argument (cut in the middle, its number whole); the two elementwise kernels
    # by the one argument they differ in, next to the function's name
    assert rows == [
        ["0", "6.000ms", "6.000ms", "Kernel2<cutlass_80_…_16x6_nn_align4>(…)", "30"],
        ["1", "3.000ms", "9.000ms", "vectorized_elementw…illFunctor<…>,", "…>(…)", "20"],
        ["2", "1.000ms", "10.000ms", "vectorized_elementw…AddFunctor<…>,", "…>(…)", "10"]]
    shares = [line.split() for line in lines if line.strip().endswith("kernels")]
    assert shares == [["60.0%", "60.0%", "kernels"], ["30.0%", "90.0%", "kernels"],
                      ["10.0%", "100.0%", "kernels"]]
    # the six columns a statistics table has no value for take no width, and say so
    table = lines[lines.index("device self time per operator"):]
    assert "N/A" not in " ".join(table[:-2])
    assert " ".join(table[-2:]) == ("hidden, N/A on every row: computation, FLOPS, memory, "
                                    "bandwidth, in_shapes, out_shapes")


def test_a_wide_table_keeps_the_names_whole(tmp_path):
    path = tmp_path / "k.csv"
    _summary_at_80(tmp_path)   # (writes the file)
    (tmp_path / "cuda_gpu_kern_sum.csv").rename(path)
    result = CliRunner().invoke(app, ["summary", str(path), "--wide"])
    assert all(name in result.stdout for name, _, _ in KERNELS)


def _nsys_console_names(name: str) -> list[str]:
    row = re.compile(r"\s*(?:[\d.,]+\s+){6,}(\S.*)$")   # (the numbers, then the name)
    text = (DATA / "nsys_stats" / name).read_text()
    return [m.group(1).rstrip() for line in text.splitlines() if (m := row.match(line))]


def _kineto_kernel_names(name: str) -> list[str]:
    with gzip.open(SAMPLES / "torch" / name, "rt") as f:
        events = json.load(f)["traceEvents"]
    return [e["name"] for e in events if e.get("cat") == "kernel"]


def _rocprof_names() -> list[str]:
    with (SAMPLES / "rocprof" / "llamacpp_results.stats.csv").open(newline="") as f:
        return [row["Name"] for row in csv.DictReader(f)]


@cache
def _real_names() -> dict[str, list[str]]:
    return {source: sorted(set(names)) for source, names in {
        "nsys 2024.6": _nsys_console_names("assignment2_stats_console_nsys2024.6.2.txt"),
        "nsys legacy": _nsys_console_names("cs533_profile_stats_console_legacy.txt"),
        "nsys cuvs": _nsys_console_names("gpu_mvr_profile_stats_console.txt"),
        "kineto resnet18": _kineto_kernel_names("resnet18_train_cuda.pt.trace.json.gz"),
        "kineto gpt compile": _kineto_kernel_names("gpt_compile_bf16_cuda.pt.trace.json.gz"),
        "rocprof llama.cpp": _rocprof_names()}.items()}


def test_the_real_name_lists_hold_c_plus_plus_signatures():
    names = _real_names()
    assert all(len(found) >= 3 for found in names.values()), \
        {source: len(found) for source, found in names.items()}
    assert sum("<" in n and "(" in n for found in names.values() for n in found) >= 30


def _inside_a_number(name: str, at: int) -> bool:
    return 0 < at < len(name) and all(c.isdigit() or c in ",." for c in name[at - 1:at + 1])


def _one_cut_tells_apart(names: list[str], width: int) -> bool:
    """Whether one cut at ``width`` (a start and an end kept, no number cut in two: the
    tables' rule) tells ``names`` apart."""
    for head in range(width):
        tail = width - 1 - head
        long = [n for n in names if len(n) > width]
        if any(_inside_a_number(n, head) or _inside_a_number(n, len(n) - tail) for n in long):
            continue
        seen = {n if len(n) <= width else (n[:head], n[len(n) - tail:]) for n in names}
        if len(seen) == len(names):
            return True
    return False


@settings(max_examples=60, derandomize=True, deadline=None)
@given(data=st.data(), width=st.integers(min_value=30, max_value=80))
def test_distinct_real_names_print_distinct_whenever_one_cut_could_tell_them_apart(data, width):
    source = data.draw(st.sampled_from(sorted(_real_names())))
    names = data.draw(st.lists(st.sampled_from(_real_names()[source]), min_size=2,
                               max_size=12, unique=True))
    rows = [[name, f"{i:,}"] for i, name in enumerate(names)]
    table = fitted_table([Column("name", symbols=True), Column("row", True)], rows, width)
    out = io.StringIO()
    Console(file=out, width=width, color_system=None, emoji=False, markup=False).print(table)
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    assert max(map(len, lines)) <= width
    body = lines[2:2 + len(rows)]
    printed = {line.rsplit(None, 1)[0].rstrip() for line in body}
    name_width = width - 2 - len(f"{len(rows) - 1:,}")
    if _one_cut_tells_apart(names, name_width):
        assert len(printed) == len(names), (source, width, sorted(printed))

"""The new Paddle profiler's summary() tables and Perf Summary text."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.analysis.diff import diff
from traceconv.formats import paddle_report, paddle_summary
from traceconv.formats.paddle_summary.parser import SummaryParser

DATA = Path(__file__).parent / "data" / "paddle"


def section(trace, name):
    return [s for s in trace.stats if s.section == name]


def test_every_table_of_the_default_summary():
    trace = traceconv.load(DATA / "small_summary_default.txt")
    assert trace.metadata.source_format == "paddle-summary"
    assert trace.metadata.attributes["paddle.summary_tables"] == [
        "Device Summary", "Overview Summary", "Model Summary", "Operator Summary",
        "UserDefined Summary", "Memory Summary - Place(cpu)"]
    assert trace.metadata.attributes["paddle.utilization_pct"] == {
        "CPU(Process)": 60.0, "CPU(System)": 100.0}
    ops = section(trace, "operator")
    assert len(ops) == 98                       # rows under "Thread: All threads merged"
    grad = ops[0]
    assert (grad.name, grad.calls, grad.total_ns, grad.avg_ns, grad.max_ns, grad.min_ns,
            grad.ratio, grad.device_ns, grad.extra["flops"]) == (
        "Conv2dGradNodeFinal", 16, 14_810_000, 930_000, 4_980_000, 100_000, 30.79, 0, 0)
    inner = ops[2]
    assert inner.name == "conv2d_grad compute" and trace.stats[inner.parent] is grad
    assert inner.ratio == 98.14 and inner.depth == 1 and "flops" not in inner.extra
    model = {s.name: s for s in section(trace, "model")}
    # (the file prints "-" in Others' Calls cell: unknown, not 0)
    assert model["ProfileStep"].total_ns == 101_660_000 and model["Others"].calls is None
    assert trace.stats[model["Backward"].parent] is model["ProfileStep"]
    overview = section(trace, "overview")
    assert [s.name for s in overview][:3] == ["ProfileStep", "UserDefined", "Operator"]
    assert overview[2].calls == 544 and overview[2].cpu_ns == 48_100_000
    memory = section(trace, "memory")
    assert len(memory) == 41
    last = memory[-1]
    assert (last.name, last.type, last.calls, last.extra["free_count"],
            last.extra["increased_size"]) == ("GradNodeAccumulation", "Allocated", 0, 80, -2165056)
    assert last.extra["peak_allocated_memory"] == 1822776
    (user,) = section(trace, "userdefined")
    assert (user.name, user.total_ns) == ("my_user_range", 21_490_000)
    breakdowns = [p.name for p in trace.processes]
    assert breakdowns == [f"Paddle summary: {t} Summary: aggregate breakdown (not a timeline)"
                          for t in ("Operator", "Model", "UserDefined")]
    assert trace.stats[0].section == "operator"   # the per-op table leads (see summary)


def test_time_units_and_thread_sep():
    us = traceconv.load(DATA / "small_summary_time_unit_us.txt")
    (user,) = section(us, "userdefined")
    assert (user.total_ns, user.avg_ns, user.max_ns) == (21_487_340, 2_685_920, 6_423_130)
    sep = traceconv.load(DATA / "small_summary_thread_sep.txt")
    assert {s.extra["thread"] for s in section(sep, "operator")} == {"20664"}


def test_gpu_shapes_kernels_memcpy_overflow():
    doc, trace = paddle_summary.parse((DATA / "gpu_summary.txt").read_text())
    assert not trace.diagnostics.count("paddle_summary.unreadable_row")
    ops = section(trace, "operator")
    kernel = ops[2]
    assert kernel.name == "void gemm_kernel_with_a_very_long_templated_name_that_overflows<float>"
    assert kernel.depth == 2 and trace.stats[kernel.parent].name == "matmul compute"
    assert kernel.cpu_ns is None and kernel.device_ns == 1_600_000 and kernel.calls == 16
    assert ops[0].extra["flops"] == 33554432 and ops[0].extra["gpu_ratio_pct"] == 50.0
    kernels = section(trace, "kernel")
    assert [(k.calls, k.total_ns, k.ratio) for k in kernels] == [
        (16, 1_600_000, 50.0), (8, 1_600_000, 50.0)]
    copies = section(trace, "memory manipulation")
    assert [(c.name, c.cpu_ns, c.device_ns) for c in copies] == [
        ("GpuMemcpySync:GPU->CPU", 600_000, 400_000), ("GpuMemcpyAsync:CPU->GPU", 200_000,
                                                       400_000)]
    gpu_rows = [s for s in section(trace, "overview") if s.device_ns is not None]
    assert [(s.name, s.calls, s.device_ns) for s in gpu_rows] == [
        ("Kernel", 32, 6_400_000), ("Memcpy", 8, 800_000)]
    distribution = {s.name: s for s in section(trace, "distribution")}
    assert distribution["Overlap"].total_ns == 1_500_000 and distribution["Overlap"].ratio == 7.5
    assert trace.stats[distribution["Computation"].parent].name == "ProfileStep"
    memory = section(trace, "memory")
    assert memory[1].extra["increased_size"] == -4194304
    assert {m.extra["place"] for m in memory} == {"Place(gpu:0)"}
    assert memory[2].type == "Reserved"


def test_perf_summary_and_step_info():
    trace = traceconv.load(DATA / "timer_only_perf_summary.txt")
    perf = {s.name: s for s in section(trace, "perf")}
    assert (perf["reader_cost"].avg_ns, perf["reader_cost"].max_ns,
            perf["reader_cost"].min_ns) == (1_360_000, 9_140_000, 30_000)
    assert perf["ips"].extra == {"avg": 7983.03224, "max": 28819.27433, "min": 1543.60903,
                                 "unit": "samples/s"}
    attrs = trace.metadata.attributes
    assert attrs["paddle.perf_summary"][0]["reader_ratio_pct"] == 64.715
    assert [s["ips"] for s in attrs["paddle.step_info"]] == [158.637, 11315.176, 20747.803,
                                                            4421.255]
    v3 = traceconv.load(DATA / "timer_only_perf_summary_3.3.1.txt")
    assert v3.diagnostics.count("paddle_summary.foreign_lines") == 2   # a UserWarning


def test_sniffers_split_the_txt_formats():
    report = (DATA / "legacy_CPU_OpDetail.txt").read_bytes()
    summary = (DATA / "small_summary_default.txt").read_bytes()
    perf = (DATA / "timer_only_perf_summary.txt").read_bytes()
    assert paddle_summary.sniff(summary, None) > 0.9  # type: ignore[arg-type]
    assert paddle_summary.sniff(perf, None) > 0.9  # type: ignore[arg-type]
    assert paddle_summary.sniff(report, None) == 0  # type: ignore[arg-type]
    assert paddle_report.sniff(summary, None) == 0  # type: ignore[arg-type]
    assert traceconv.load(DATA / "pir_static_summary_default.txt").metadata.source_format \
        == "paddle-summary"


def test_summary_diff_between_versions():
    a = traceconv.load(DATA / "small_summary_default.txt")
    b = traceconv.load(DATA / "small_summary_time_unit_us.txt")   # same run, other unit
    changes = [d for d in diff(a, b) if d.section == "operator"]
    # 2-decimal ms vs 2-decimal us: totals agree to rounding (<= 5 us), calls exactly
    assert all(abs(d.delta["total_ns"]) <= 5_000 for d in changes)
    assert all(d.delta["calls"] == 0 for d in changes)


_TEXT = (DATA / "small_summary_default.txt").read_text().splitlines()


@settings(max_examples=50, deadline=None)
@given(cut=st.integers(0, len(_TEXT)), junk=st.lists(st.tuples(
    st.integers(0, len(_TEXT)), st.text(st.characters(blacklist_categories=("Cs",),
                                                      blacklist_characters="\r\n\x0b\x0c\x1c"
                                                      "\x1d\x1e\x85\u2028\u2029"),
                                        max_size=50)), max_size=4),
       collapse=st.booleans())
def test_truncated_noisy_or_collapsed_text_never_raises(cut, junk, collapse):
    lines = _TEXT[:cut]
    for at, line in sorted(junk, reverse=True):
        lines.insert(min(at, len(lines)), line)
    text = "\n".join(lines)
    if collapse:
        text = re.sub(" {3,}", "  ", text)   # cells stay >= 2 spaces apart
    parser = SummaryParser()
    doc = parser.parse_text(text)
    assert sum(len(t.rows) for t in doc.tables) <= 157 + len(junk)


def test_tables_pasted_in_markdown_end_at_their_code_fence():
    """Paddle's profiler guide (a Markdown page) pastes real summary tables of three runs;
    three of them (Operator, Kernel, Memory) end at the closing code fence, without a line
    of dashes. Every row is read, none counted unreadable. The 109 rows by hand: Model
    Summary 3 x 6, Overview 13, Device 3, Distribution 4, Operator 43, Kernel 13, Memory
    Manipulation 5, UserDefined 1, Perf Summary 3 x 3."""
    page = Path(__file__).parent / "data" / "paddle" / "paddlepaddle_docs_profiling_model.md"
    trace = traceconv.load(page)
    assert len(trace.stats) == 109
    assert not trace.diagnostics.count("paddle_summary.unreadable_row")


def test_a_pastes_own_cut_is_counted_as_rows_left_out():
    """PaddleFleetX's guide cuts its Operator and Kernel tables with a line "...": those
    lines are the paste's rows left out, counted as such, not as rows that did not read.
    Rows by hand: Overview 13, Model 6, Operator 12, Kernel 13."""
    path = DATA / "paddlefleetx_gpt_hybrid_v100_summary.txt"
    lines = path.read_text().splitlines()
    trace = traceconv.load(path)
    assert trace.diagnostics.count("paddle_summary.elided") == lines.count("...") == 2
    assert not trace.diagnostics.count("paddle_summary.unreadable_row")
    assert len(trace.stats) == 13 + 6 + 12 + 13

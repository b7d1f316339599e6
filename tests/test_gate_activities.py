"""``diff --fail-if runtime:`` / ``host_op:`` take the rows the activity vocabulary says are
runtime calls or host ops, whichever profiler wrote them: checked against host rows of real
traces labelled by hand (tests/data/vocabulary/host_rows_labelled.json). A rule of names of
its own (``cuda``/``hip`` + a capital) missed the driver API (``cuLaunchKernel``,
``cuLaunchKernelEx``...) and Kineto's unnamed runtime call (``INVALID``), and called every
other host row, steps and the profiler's own work included, a host op: 5 and 23 of these
61 rows wrong; the vocabulary gets 0 and the 2 known misses."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from traceconv.analysis.fail_if import ACTIVITIES
from traceconv.analysis.timeline_diff import timeline_diff
from traceconv.cli import app

ROOT = Path(__file__).parent.parent
LABELLED = json.loads((ROOT / "tests" / "data" / "vocabulary" / "host_rows_labelled.json")
                      .read_text())


@pytest.mark.parametrize("path", sorted(LABELLED["files"]))
def test_runtime_and_host_op_gates_take_the_rows_labelled_so(path):
    trace = traceconv.load(ROOT / path)
    rows = {r.name: r for r in timeline_diff(trace, trace, False, False).rows
            if r.kind == "cpu"}
    wrong = sorted(name for name, label in LABELLED["files"][path].items()
                   for subject in ("runtime", "host_op")
                   if ACTIVITIES[subject](rows[name]) != (label == subject))
    assert wrong == sorted(set(wrong) & set(LABELLED["known_misses"]))


def test_a_runtime_gate_counts_the_driver_calls_and_kineto_unnamed_calls():
    """The gate's row count, by the command: every runtime row of the file, the driver's
    and Kineto's ``INVALID`` among them (a count of distinct names made by json)."""
    path = ROOT / "samples" / "torch" / "ddp_gloo_rank0.pt.trace.json.gz"
    with gzip.open(path, "rt") as f:
        runtime = {e["name"] for e in json.load(f)["traceEvents"]
                   if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("ph") == "X"}
    assert "INVALID" in runtime
    result = CliRunner().invoke(app, ["diff", str(path), str(path), "--json", "--names", "raw",
                                      "--fail-if", "runtime:+1%"])
    assert result.exit_code == 0, result.output
    (check,) = json.loads(result.stdout)["verdict"]["checks"]
    rows = {r["name"] for r in json.loads(result.stdout)["rows"]
            if r["kind"] == "cpu" and r["a_ns"]}
    assert check["rows"] == len(runtime & rows)

"""The analysis façade (issue 21, part 6): ``traceconv.analysis`` names every analysis,
its result and error types, lazily, with type hints that resolve."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing

import pytest

import traceconv.analysis as analysis
from tests.test_startup import HEAVY, imported

ANALYSES = ["op_summary", "summarize", "advise", "critical_path", "diff", "stragglers",
            "live_bytes", "merge", "trim", "align", "device_idle", "timeline_diff",
            "link_execution_trace", "slice_activity"]
RESULTS = ["OpRow", "Summary", "Advice", "Finding", "CriticalPath", "PathEntry", "OpDelta",
           "Straggler", "LiveBytes", "Alignment", "DeviceIdle", "TimelineDiff", "Activity"]
ERRORS = ["TraceconvError", "InputError"]


def test_all_names_the_analyses_results_and_errors() -> None:
    assert set(ANALYSES + RESULTS + ERRORS) <= set(analysis.__all__)
    assert analysis.__all__ == sorted(analysis.__all__)
    assert set(analysis.__all__) <= set(dir(analysis))
    assert all(callable(getattr(analysis, name)) for name in ANALYSES)
    assert all(inspect.isclass(getattr(analysis, name)) for name in RESULTS + ERRORS)
    assert issubclass(analysis.InputError, analysis.TraceconvError)
    with pytest.raises(AttributeError, match="no attribute 'op_sumary'"):
        _ = analysis.op_sumary  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", [n for n in analysis.__all__ if n not in ("RULES",)])
def test_type_hints_resolve(name: str) -> None:
    value = getattr(analysis, name)
    target = value.__init__ if inspect.isclass(value) else value
    hints = typing.get_type_hints(target)
    if not inspect.isclass(value):
        assert "return" in hints, f"{name} has no return annotation"


def test_public_names_stay_functions_after_their_modules_load() -> None:
    import traceconv.analysis.diff
    import traceconv.analysis.merge
    import traceconv.analysis.op_summary  # noqa: F401

    assert inspect.isfunction(analysis.op_summary) and inspect.isfunction(analysis.diff)
    assert analysis.merge is traceconv.merge
    from traceconv.analysis.op_summary import OpRow  # the module is still importable

    assert OpRow is analysis.OpRow


def test_importing_the_facade_loads_no_analysis() -> None:
    names = imported("-c", "import traceconv.analysis")
    assert not {n for n in names if n.split(".")[0] in HEAVY or n in HEAVY}
    assert "traceconv.analysis.op_summary" not in names


def test_facade_in_a_fresh_interpreter() -> None:
    code = ("import traceconv.analysis.diff, traceconv.analysis as a, inspect; "
            "print(inspect.isfunction(a.diff), inspect.isfunction(a.op_summary))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["True", "True"]

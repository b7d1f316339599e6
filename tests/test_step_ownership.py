"""``--steps`` by launch: each step holds the device work launched inside its host range.

The referee reads the Kineto JSON itself (``json`` with exact decimals): a step is a host
``ProfilerStep#N`` range; a kernel, copy or memset belongs to the step whose range holds the
start of the runtime call with the same ``correlation`` id, wherever it ran; host events
count by their own time, cut to the step. Compared per name (calls and total ns) with what
:func:`traceconv.analysis.steps.select_steps` keeps, on every step of every Kineto trace
with step markers.
"""

from __future__ import annotations

import gzip
import json
import re
from bisect import bisect_right
from collections import Counter
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from tests.conftest import DATA, SAMPLES, SHARED
from traceconv.analysis.activity import Timeline
from traceconv.analysis.steps import select_steps
from traceconv.cli import app

# categories as Kineto writes them (lower-cased: the 2021 format wrote "Kernel", "Runtime"...;
# MTIA writes its device work as mtia_ccp_events, its launches as mtia_runtime)
DEVICE_WORK = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset", "mtia_ccp_events"}
DEVICE = DEVICE_WORK | {"gpu_user_annotation"}
LAUNCHES = {"cuda_runtime", "cuda_driver", "runtime", "mtia_runtime"}
HOST = {"cpu_op", "operator", "user_annotation"} | LAUNCHES
STEP = re.compile(r"^ProfilerStep#(\d+)$")
pytestmark = pytest.mark.slow   # each trace is cut once per step
MOST_STEPS = 20
BIG_TRACE = 200_000
# the 200-step trace's generator run longer: the same class, and the slowest file of the
# suite to load (34 s) for the three steps a trace this big is checked at
LONGER_RUN_OF_A_CHECKED_TRACE = frozenset({"large_cpu_500steps.pt.trace.json.gz"})
# the GPU runs behind the host here: step 16's host range holds step 15's kernels
LAGGING = DATA / "torch" / "tracelens_mi300_resnet_act_checkpoint.json.gz"


def _events(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        data = json.load(f, parse_float=Decimal)
    events = data["traceEvents"] if isinstance(data, dict) else data
    kept = [e for e in events if isinstance(e, dict) and e.get("ph") == "X"]
    for e in kept:
        e["cat"] = str(e.get("cat")).lower()
    return kept


def _ns(us) -> int:
    return int((Decimal(us) * 1000).to_integral_value(ROUND_HALF_EVEN))


def _steps(events: list[dict]) -> dict[int, tuple[int, int]]:
    """Step number → host range [start, end) in ns."""
    found = {}
    for e in events:
        m = STEP.match(str(e.get("name")))
        if m and e.get("cat") not in DEVICE:
            found[int(m[1])] = (_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"]))
    return found


def referee(events: list[dict]) -> dict[int, tuple[Counter, Counter]]:
    """Per step number: (device per name, host per name), each a Counter of
    (name, "calls") and (name, "ns"); one pass over the events."""
    steps = _steps(events)
    ranges = sorted((lo, hi, number) for number, (lo, hi) in steps.items())
    starts = [lo for lo, _, _ in ranges]
    launch_at = {e["args"]["correlation"]: _ns(e["ts"]) for e in events
                 if e["cat"] in LAUNCHES and "correlation" in e.get("args", {})}
    tables: dict[int, tuple[Counter, Counter]] = {n: (Counter(), Counter()) for n in steps}
    for e in events:
        cat, name = e["cat"], e["name"]
        if cat in DEVICE_WORK:
            at = launch_at.get(e.get("args", {}).get("correlation"))
            i = bisect_right(starts, at) - 1 if at is not None else -1
            if i >= 0 and at < ranges[i][1]:
                device = tables[ranges[i][2]][0]
                device[name, "calls"] += 1
                device[name, "ns"] += _ns(e["dur"])
        elif cat in HOST:
            start = _ns(e["ts"])
            end = start + _ns(e["dur"])
            # the steps it overlaps (a zero-length event: those holding it, ends included)
            for lo, hi, number in ranges[max(0, bisect_right(starts, start) - 2):]:
                if lo > end:
                    break
                if start < hi and end > lo or start == end and lo <= start <= hi:
                    host = tables[number][1]
                    host[name, "calls"] += 1
                    host[name, "ns"] += min(end, hi) - max(start, lo)
    return tables


def model_side(trace, number: int) -> tuple[Counter, Counter]:
    """The same two tables from the trace ``select_steps`` cuts to step ``number``."""
    tl = Timeline(select_steps(trace, str(number)))
    strings = tl.trace.strings.strings
    category = tl.trace.slices.numpy("category")
    device, host = Counter(), Counter()
    for row in tl.device_work().tolist():
        name = strings[tl.name[row]]
        device[name, "calls"] += 1
        device[name, "ns"] += int(tl.dur[row])
    for row in (~tl.on_device).nonzero()[0].tolist():
        if strings[category[row]].lower() in HOST:
            name = strings[tl.name[row]]
            host[name, "calls"] += 1
            host[name, "ns"] += int(tl.dur[row])
    return device, host


def _json_files(folder: Path) -> list[Path]:
    """JSON files under ``folder`` (execution traces left out: they hold no timeline);
    whether one is a Kineto trace with step markers is the test's to find out, so that
    collecting the suite reads none of them."""
    return [path for path in sorted(folder.rglob("*.json*"))
            if path.suffix in (".json", ".gz") and "_et" not in path.name]


def _kineto_with_steps(folder: Path) -> list[Path]:
    """The bundled Kineto JSON files under ``folder`` with host step markers."""
    return [path for path in _json_files(folder) if _has_steps(path)]


def _has_steps(path: Path) -> bool:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        text = f.read()
    return b'"ProfilerStep#' in text and b'"traceEvents"' in text


def _check_every_step(path: Path) -> int:
    """Every step (of a trace with hundreds, the first and last five and ten between; of
    one with more than BIG_TRACE events, the first, middle and last: each cut copies the
    whole trace)."""
    events = _events(path)
    trace = traceconv.load(path)
    expected = referee(events)
    numbers = sorted(expected)
    if len(events) > BIG_TRACE:
        numbers = sorted({numbers[0], numbers[len(numbers) // 2], numbers[-1]})
    elif len(numbers) > MOST_STEPS:
        numbers = sorted(set(numbers[:5] + numbers[-5:] + numbers[::len(numbers) // 10]))
    for number in numbers:
        assert model_side(trace, number) == expected[number], (path.name, number)
    return len(numbers)


def test_lagging_step_holds_only_its_launches():
    """Step 16 of the bundled MI300 trace (a hand count of its JSON): 895 device items, 22.94 ms launched inside it."""
    device, _ = referee(_events(LAGGING))[16]
    assert sum(v for (_, what), v in device.items() if what == "calls") == 895
    assert sum(v for (_, what), v in device.items() if what == "ns") == 22_935_406
    assert _check_every_step(LAGGING) >= 2


def test_the_rest_is_counted_apart():
    """Device work of other steps and work launched outside every step is counted, and
    so are the host slices outside the step."""
    trace = traceconv.load(LAGGING)
    cut = select_steps(trace, "16")
    host_before = int((~Timeline(trace).on_device).sum())
    host_after = int((~Timeline(cut).on_device).sum())
    assert host_after + cut.diagnostics.count("steps.host.outside") == host_before
    events = _events(LAGGING)
    work = [e for e in events if e.get("cat") in DEVICE_WORK]
    device, _ = referee(events)[16]
    kept = sum(v for (_, what), v in device.items() if what == "calls")
    dropped = (cut.diagnostics.count("steps.device.other_steps")
               + cut.diagnostics.count("steps.device.unowned"))
    assert kept + dropped == len(work)
    assert cut.diagnostics.count("steps.device.unowned") > 0


@pytest.mark.parametrize("path", _kineto_with_steps(SAMPLES / "torch")
                         + _kineto_with_steps(DATA / "torch"), ids=lambda p: p.name)
def test_every_bundled_step_against_the_raw_json(path):
    assert _check_every_step(path) >= 1


@pytest.mark.shared
@pytest.mark.parametrize("path", _json_files(SHARED.parent / "corpus")
                         + _json_files(SHARED / "torch") if SHARED.is_dir() else [],
                         ids=lambda p: p.name)
def test_every_corpus_step_against_the_raw_json(path):
    if not _has_steps(path):
        pytest.skip("not a Kineto trace with step markers")
    if path.name in LONGER_RUN_OF_A_CHECKED_TRACE:
        pytest.skip("the 200-step trace of the same generator is checked")
    assert _check_every_step(path) >= 1


def test_summary_steps_says_what_it_left_out():
    """``summary --steps 16``: the device total is the referee's, and the work left out is
    said on stderr."""
    tables = referee(_events(LAGGING))
    device = tables[16][0]
    other = sum(v for n, (d, _) in tables.items() if n != 16
                for (_, what), v in d.items() if what == "calls")
    result = CliRunner().invoke(app, ["summary", str(LAGGING), "--steps", "16", "--json",
                                      "--print-only", "summary"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["self_device_ns_total"] == sum(
        v for (_, what), v in device.items() if what == "ns")
    assert f"device work left out: {other:,} launched in other steps" in result.stderr

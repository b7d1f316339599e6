"""Issue #38 item 7: the job's critical path across ranks (``critical-path RANK0 RANK1 ...``),
checked against plain scans of the raw JSON of the 4-rank DDP job (bundled) and the 8-rank
DLRM job (../shared)."""

from __future__ import annotations

import gzip
import json
import os
from decimal import Decimal
from itertools import pairwise
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from traceconv.cli import app

ROOT = Path(__file__).parent.parent
SHARED = Path(os.environ.get("TRACECONV_SHARED", ROOT.parent / "shared"))
DDP = [ROOT / "samples" / "torch" / f"ddp_gloo_rank{r}.pt.trace.json.gz" for r in range(4)]
DATA = ROOT / "tests" / "data" / "torch"
DLRM = sorted((SHARED / "corpus" / "torch" / "round3" / "kineto" / "dlrm_8rank").glob(
    "worker*.json"))
# not work: the profiler's own window, device-side copies of host ranges
NOT_WORK = {"Trace", "gpu_user_annotation"}
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_sync"}


def raw(path: Path) -> tuple[dict, list[dict]]:
    """The file's top-level object and its complete events with [start, end) in ns."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        data = json.load(f, parse_float=Decimal)
    base = data.get("baseTimeNanoseconds", 0)
    events = []
    for e in data["traceEvents"]:
        if e.get("ph") == "X" and "dur" in e and e.get("cat") not in NOT_WORK:
            start = base + round(Decimal(e["ts"]) * 1000)
            events.append(e | {"start": start, "end": start + round(Decimal(e["dur"]) * 1000)})
    return data, events


def busiest_host_thread_ns(events: list[dict]) -> int:
    """A rank's lower bound: its busiest host thread's busy time (the union of its events).
    Kineto's own work (``overhead``, on its pseudo process -1) keeps the main thread (tid =
    pid) busy: it runs inside the op that ran out of trace buffer, as torch nests it."""
    main = next(((e["pid"], e["tid"]) for e in events if e["pid"] == e["tid"]), None)
    spans: dict[tuple, list[tuple[int, int]]] = {}
    for e in events:
        if e.get("cat") not in DEVICE:
            thread = main if e.get("cat") == "overhead" and e["pid"] == -1 and main else (
                e["pid"], e["tid"])
            spans.setdefault(thread, []).append((e["start"], e["end"]))
    def union(items: list[tuple[int, int]]) -> int:
        total, reach = 0, min(s for s, _ in items)
        for s, e in sorted(items):
            total += max(0, e - max(s, reach))
            reach = max(reach, e)
        return total

    return max(map(union, spans.values()), default=0)


def job_json(paths: list[Path]) -> dict:
    result = CliRunner().invoke(app, ["critical-path", *map(str, paths), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def check_job(data: dict, ranks: list[int], lower_bounds: list[int]) -> None:
    """Every entry carries an integer rank of the job; time order, no overlap; the breakdown
    and each rank's split add up to the length exactly; never shorter than any rank's own
    lower bound (recomputed from the raw JSON)."""
    path = data["path"]
    assert all(type(p["rank"]) is int and p["rank"] in ranks for p in path)
    assert all(a["start_ns"] + a["dur_ns"] <= b["start_ns"] for a, b in pairwise(path))
    length = data["length_ns"]
    assert length == path[-1]["start_ns"] + path[-1]["dur_ns"] - path[0]["start_ns"]
    assert sum(data["breakdown"].values()) == length
    assert {r["rank"] for r in data["ranks"]} == set(ranks)
    for r in data["ranks"]:
        assert r["collective_wait_ns"] + r["busy_ns"] + r["idle_ns"] + r["unrecorded_ns"] \
            == length, r
        assert r["collective_wait_ns"] == sum(w["ns"] for w in r["waited_for"])
        assert min(r["busy_ns"], r["idle_ns"], r["unrecorded_ns"]) >= 0
    assert length >= max(lower_bounds)
    assert [r["lower_bound_ns"] for r in data["ranks"]] == lower_bounds


def collective_waits(per_rank: list[list[dict]], window: tuple[int, int],
                     offsets: list[int] | None = None, errors: list[int] | None = None
                     ) -> list[tuple[dict[int, int], int]]:
    """Referee of the per-rank waits from the raw events: the n-th call of each gloo
    collective (point-to-point send/recv aside) on every rank is one instance; every rank
    but the last to start waits from its start to the last start; overlapping waits count
    once, each moment for the first wait that covers it; clipped to the path's window.
    Per rank: {last rank: ns}, and the ns of waits whose last rank led the runner-up by no
    more than the two ranks' ``errors`` (times shifted by ``offsets``)."""
    lo, hi = window
    offsets = offsets or [0] * len(per_rank)
    errors = errors or [0] * len(per_rank)
    instances: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for rank, events in enumerate(per_rank):
        calls = sorted((e for e in events if e["name"].startswith("gloo:")
                        and e["name"] not in ("gloo:send", "gloo:recv")
                        and e.get("cat") not in DEVICE), key=lambda e: (e["start"], e["end"]))
        seen: dict[str, int] = {}
        for call in calls:
            n = seen[call["name"]] = seen.get(call["name"], -1) + 1
            instances.setdefault((call["name"], n), []).append(
                (call["start"] + offsets[rank], rank))
    waits: list[list[tuple[int, int, int, bool]]] = [[] for _ in per_rank]
    for arrivals in instances.values():
        if len(arrivals) < 2:
            continue
        (runner_up, second), (last_start, last) = sorted(arrivals)[-2:]
        unsure = last_start - runner_up <= errors[last] + errors[second]
        for start, rank in arrivals:
            if rank != last:
                waits[rank].append((max(start, lo), min(last_start, hi), last, unsure))
    totals: list[tuple[dict[int, int], int]] = []
    for items in waits:
        reach, whom, uncertain = lo, {}, 0
        for start, end, last, unsure in sorted(items):
            start = max(start, reach)
            if end > start:
                whom[last] = whom.get(last, 0) + end - start
                uncertain += (end - start) if unsure else 0
                reach = end
        totals.append((whom, uncertain))
    return totals


@pytest.mark.slow
def test_ddp_four_ranks_hand_checked_collective_and_exact_sums():
    """The first all_reduce of the DDP job (raw JSON, µs): rank 0 enters at 22,124.937,
    rank 3 at 24,263.817, rank 2 at 24,803.029, rank 1 last at 25,497.033 — so rank 0
    waited 3,372.096 µs for rank 1 there. Per rank, the waits the command reports equal the
    referee's over every gloo collective, attributed to the same ranks."""
    raws = [raw(p) for p in DDP]
    events = [e for _, e in raws]
    first = [min((e for e in ev if e["name"] == "gloo:all_reduce" and e.get("cat") not in DEVICE),
                 key=lambda e: e["start"]) for ev in events]
    starts = [e["start"] for e in first]
    assert max(range(4), key=lambda r: starts[r]) == 1
    assert starts[1] - starts[0] == 3_372_096
    data = job_json(DDP)
    check_job(data, [0, 1, 2, 3], [busiest_host_thread_ns(ev) for ev in events])
    assert data["alignment"]["applied"] is False   # one host, one clock: no shift
    lo = data["origin_ns"] + data["path"][0]["start_ns"]
    expected = collective_waits(events, (lo, lo + data["length_ns"]))
    for share, (whom, _) in zip(data["ranks"], expected, strict=True):
        assert {w["rank"]: w["ns"] for w in share["waited_for"]} == whom
    # rank 1 arrived last at every all_reduce: no rank ever waited for rank 0
    assert all(w["rank"] != 0 for share in data["ranks"] for w in share["waited_for"])
    assert {w["rank"] for w in data["ranks"][0]["waited_for"]} == {1, 3}


def test_waits_within_the_clock_error_are_uncertain():
    """The 4 CPU ranks of gen_distributed.py were shifted by up to 2.9 ms to align and
    still disagree by up to 7.6 ms: a wait whose last rank led the runner-up by no more
    than the two ranks' residual skew counts as uncertain. Per rank, the waits and the
    uncertain part equal the referee's, given the alignment's shifts and residuals."""
    paths = [DATA / f"rank-{r}.pt.trace.json" for r in range(4)]
    events = [raw(p)[1] for p in paths]
    data = job_json(paths)
    alignment = data["alignment"]
    assert alignment["applied"] is True
    offsets = [r["offset_ns"] for r in alignment["ranks"]]
    errors = [r["residual_max_ns"] for r in alignment["ranks"]]
    lo = data["origin_ns"] + data["path"][0]["start_ns"]
    expected = collective_waits(events, (lo, lo + data["length_ns"]), offsets, errors)
    for share, (whom, uncertain) in zip(data["ranks"], expected, strict=True):
        assert {w["rank"]: w["ns"] for w in share["waited_for"]} == whom
        assert share["uncertain_ns"] == uncertain
        assert share["error_bound_ns"] == errors[share["rank"]]
    assert any(r["uncertain_ns"] for r in data["ranks"])
    check_job(data, [0, 1, 2, 3], [busiest_host_thread_ns(ev) for ev in events])


def test_highlight_takes_one_rank():
    result = CliRunner().invoke(app, ["critical-path", *map(str, DDP[:2]), "--highlight"])
    assert result.exit_code == 2
    assert "--highlight" in result.output


def test_a_job_without_a_path_ends_as_one_trace_without_one(tmp_path: Path):
    """Ranks whose traces hold no work to walk (a memory counter and a marker each): the
    job has no path, and the command says so as it does for one trace (one line naming
    the inputs, exit 1, with --json the empty object and ``why_empty``), never an empty
    table and exit 0."""
    ranks = []
    for rank in range(2):
        path = tmp_path / f"rank{rank}.json"
        path.write_text(json.dumps({"traceEvents": [
            {"ph": "C", "name": "memory", "pid": 1, "ts": 1, "args": {"bytes": 8}},
            {"ph": "i", "name": "marker", "pid": 1, "tid": 1, "ts": 2, "s": "t"}]}))
        ranks.append(str(path))
    why = ("no critical path: no rank's trace holds any host or device work to walk "
           "(see `traceconv info`)")
    line = f"traceconv: error: {', '.join(ranks)}: {why}"
    result = CliRunner().invoke(app, ["critical-path", *ranks])
    assert (result.exit_code, result.output.strip()) == (1, line)
    as_json = CliRunner().invoke(app, ["critical-path", *ranks, "--json"])
    assert (as_json.exit_code, as_json.stderr.strip()) == (1, line)
    data = json.loads(as_json.stdout)
    assert (data["path"], data["why_empty"]) == ([], why)


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.skipif(len(DLRM) != 8, reason="needs ../shared")
def test_dlrm_eight_ranks_path_crosses_at_a_collective_to_the_last_arriver():
    """8-rank DLRM (NCCL): the path crosses ranks at an NCCL kernel, to the rank whose kernel
    of that collective started last (raw JSON); never shorter than rank 1's own lower bound
    (its busiest thread, 19.9 ms, the longest of the eight)."""
    raws = [raw(p) for p in DLRM]
    ranks = [int(d["distributedInfo"]["rank"]) for d, _ in raws]
    assert ranks == list(range(8))
    events = [e for _, e in raws]
    data = job_json(DLRM)
    check_job(data, ranks, [busiest_host_thread_ns(ev) for ev in events])
    via_nccl = [c for c in data["crossings"] if c["via"].startswith("ncclKernel")]
    assert via_nccl
    for crossing in via_nccl:
        at = data["origin_ns"] + crossing["at_ns"]
        # the kernel of `via` on from_rank starts exactly then, and it is the latest start
        # among the eight ranks' kernels of that collective running at that moment
        kernels = [min((e for e in ev if e["name"] == crossing["via"] and e["end"] > at),
                       key=lambda e: e["start"]) for ev in events]
        starts = [k["start"] for k in kernels]
        assert starts[crossing["from_rank"]] == at == max(starts)
        assert crossing["to_rank"] != crossing["from_rank"]


# -- a bulk-synchronous job as a property: the path is known by hand ------------------------

def bulk_synchronous(work: list[list[int]], transfer: int = 50):
    """Ranks (one list of compute times each, one per step) that compute, then all-reduce;
    an all_reduce ends for every rank ``transfer`` ns after the last rank arrived."""
    from traceconv.model import Trace

    traces = [Trace() for _ in work]
    threads = [t.add_track("main", process=t.add_process("python", pid=1)) for t in traces]
    end = 0
    steps = []
    for step in range(len(work[0])):
        arrivals = [end + w[step] for w in work]
        last = max(arrivals)
        for t, thread, arrive in zip(traces, threads, arrivals, strict=True):
            t.add_slice(thread, end, arrive - end, f"step{step}", "cpu_op")
            t.add_slice(thread, arrive, last + transfer - arrive, "gloo:all_reduce",
                        "user_annotation")
        steps.append((end, arrivals.index(last), last))
        end = last + transfer
    return traces, steps, end


def check_bulk_synchronous(work: list[list[int]]) -> None:
    """The path is, step by step, the compute of the rank that arrived last, then the
    all_reduce from its arrival; it crosses to that rank at each step where it changes."""
    from traceconv.analysis.job_path import job_critical_path

    traces, steps, end = bulk_synchronous(work)
    job = job_critical_path(traces, "none")
    expected = []
    for step, (begin, last, arrival) in enumerate(steps):
        expected.append((last, f"step{step}", begin, arrival))
        expected.append((last, "gloo:all_reduce", arrival, arrival + 50))
    got = [(e.rank, e.name, e.start_ns, e.end_ns) for e in job.path]
    assert [g[1:] for g in got] == [x[1:] for x in expected]
    assert [g[0] for g in got if g[1] != "gloo:all_reduce"] == [x[0] for x in expected
                                                                if x[1] != "gloo:all_reduce"]
    assert job.length_ns == end and job.breakdown["idle"] == 0
    # the walk starts on rank 0 (all ranks end together; the first wins), and each step's
    # all_reduce is walked on the rank it goes back from: it crosses where the rank changes
    lasts = [last for _, last, _ in steps] + [0]
    assert len(job.crossings) == sum(1 for a, b in pairwise(lasts) if a != b)
    for share in job.ranks:
        waited = sum(max(0, arrival - (begin + work[share.rank][step]))
                     for step, (begin, _, arrival) in enumerate(steps))
        assert share.collective_wait_ns == waited
        assert share.collective_wait_ns + share.busy_ns + share.idle_ns \
            + share.unrecorded_ns == end


@pytest.mark.slow
@given(st.integers(2, 4).flatmap(lambda ranks: st.lists(
    st.lists(st.integers(1, 10_000), min_size=ranks, max_size=ranks, unique=True),
    min_size=1, max_size=8)))
def test_bulk_synchronous_job_path_is_known_by_hand(by_step):
    check_bulk_synchronous([list(r) for r in zip(*by_step, strict=True)])


@pytest.mark.slow
def test_long_bulk_synchronous_job_walks_in_batches():
    """600 steps: anyone last in the first 300, then rank 1 in the last 300 (600 links on it
    before its first crossing: more than the walk's first batches; seeded)."""
    import random

    rng = random.Random(38)
    slow = [[rng.randrange(1, 5_000), rng.randrange(9_000, 10_000), rng.randrange(1, 5_000)]
            for _ in range(300)]
    by_step = [rng.sample(range(1, 10_000), 3) for _ in range(300)] + slow
    check_bulk_synchronous([list(r) for r in zip(*by_step, strict=True)])

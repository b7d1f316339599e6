"""``split --by step`` of a job: every process marks the same steps at its own times.

A merged multi-rank trace holds each rank's ``ProfilerStep#N`` at that rank's time. The
steps are cut per step number and each process at its own markers, so a piece holds step N
of every rank; the expected windows here come from each process's markers read with plain
``json``, not from the code under test.
"""

from __future__ import annotations

import bisect
import gzip
import json
import re
from collections import Counter
from pathlib import Path

import traceconv
from traceconv.splitting import split

ROOT = Path(__file__).resolve().parent.parent
RANKS = [ROOT / "tests" / "data" / "torch" / f"rank-{k}.pt.trace.json" for k in range(4)]
MI300 = ROOT / "tests" / "data" / "torch" / "tracelens_mi300_resnet_act_checkpoint.json.gz"
STEP = re.compile(r"^ProfilerStep#(\d+)$")
DEVICE_WORK = {"kernel", "gpu_memcpy", "gpu_memset"}


def raw(path: Path) -> dict:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        return json.load(f)


def own_markers(events: list[dict]) -> dict[object, list[float]]:
    """Each process's host step starts, in time order."""
    marks: dict[object, list[float]] = {}
    for e in events:
        if e.get("ph") == "X" and STEP.match(str(e.get("name"))) \
                and e.get("cat") != "gpu_user_annotation":
            marks.setdefault(e["pid"], []).append(e["ts"])
    return {pid: sorted(ts) for pid, ts in marks.items()}


def earliest(marks: dict[object, list[float]]) -> list[float]:
    return [min(ts[k] for ts in marks.values()) for k in range(len(next(iter(marks.values()))))]


def piece_events(outdir: Path, manifest: dict) -> list[list[dict]]:
    out = []
    for p in manifest["pieces"]:
        events = raw(outdir / p["file"])["traceEvents"]
        out.append([e for e in events if e.get("ph") != "M"
                    and "Pre-existing" not in (e.get("args") or {})])
    return out


def test_each_rank_of_a_merged_job_is_cut_at_its_own_step_markers(tmp_path):
    merged = tmp_path / "job.json"
    traceconv.save(traceconv.merge([traceconv.load(p) for p in RANKS]), merged)
    whole = raw(merged)["traceEvents"]
    marks = own_markers(whole)
    assert len(marks) == 4 and len({tuple(ts) for ts in marks.values()}) == 4   # 4 clocks
    reference = earliest(marks)

    def bounds(pid: object) -> list[float]:
        return marks.get(pid, reference)

    def expected(e: dict) -> int:   # 0: before the first step, k: step k
        return bisect.bisect_right(bounds(e["pid"]), e["ts"])

    manifest = split(merged, tmp_path / "steps", by="step", overview=False)
    assert [p["label"] for p in manifest["pieces"]] == ["before", "step2", "step3"]
    pieces = piece_events(tmp_path / "steps", manifest)
    for k, events in enumerate(pieces):
        assert events and all(expected(e) == k for e in events)
    timed = [e for e in whole if e.get("ph") != "M"]
    assert sum(len(p) for p in pieces) == len(timed)

    def end(e: dict) -> float:
        ends = bounds(e["pid"])
        k = expected(e)
        return ends[k] if k < len(ends) else float("inf")

    cut = Counter(e["name"] for e in timed if e.get("ph") == "X" and e["ts"] + e["dur"] > end(e))
    assert manifest["cuts"]["slices_by_name"] == dict(cut)
    assert manifest["cuts"]["flows"] == 0
    # cut at every marker of every rank instead (the rule for one process), 8 windows
    # of fragments of four ranks' steps cut 38 slices and 21 flows of this job


def test_device_work_follows_the_step_of_the_rank_that_launched_it(tmp_path):
    """Two ranks of one GPU job, the second one's clock 40 % of a step later: each kernel
    goes to the step its own rank launched it in."""
    rank0 = raw(MI300)["traceEvents"]
    steps = sorted(own_markers(rank0).values())[0]
    shift = 0.4 * (steps[1] - steps[0])
    pids = {e["pid"] for e in rank0 if isinstance(e.get("pid"), int)}
    offset = max(pids) + 1000
    rank1 = []
    for e in rank0:
        copy = json.loads(json.dumps(e))
        if isinstance(copy.get("pid"), int):
            copy["pid"] += offset
        if isinstance(copy.get("ts"), int | float) and copy.get("ph") != "M":
            copy["ts"] += shift
        args = copy.get("args") or {}
        if isinstance(args.get("correlation"), int):
            args["correlation"] += 10_000_000
        if copy.get("cat") == "ac2g":
            copy["id"] += 10_000_000
        rank1.append(copy)
    job = tmp_path / "job.json"
    job.write_text(json.dumps({"traceEvents": rank0 + rank1}))
    whole = rank0 + rank1
    marks = own_markers(whole)
    assert len(marks) == 2
    launched = {(e["args"]["correlation"]): (e["pid"], e["ts"]) for e in whole
                if e.get("ph") == "X" and e.get("cat") not in DEVICE_WORK
                and isinstance((e.get("args") or {}).get("correlation"), int)}
    reference = earliest(marks)

    def window(pid: object, ts: float) -> int:
        return bisect.bisect_right(marks.get(pid, reference), ts)

    def expected(e: dict) -> int:
        correlation = (e.get("args") or {}).get("correlation")
        if e.get("cat") in DEVICE_WORK and correlation in launched:
            return window(*launched[correlation])
        if e.get("cat") == "ac2g" and e["ph"] == "f" and e["id"] in launched:
            return window(*launched[e["id"]])
        return window(e["pid"], e["ts"])

    manifest = split(job, tmp_path / "steps", by="step", overview=False)
    pieces = piece_events(tmp_path / "steps", manifest)
    for k, events in enumerate(pieces):
        assert all(expected(e) == k for e in events)
    assert sum(len(p) for p in pieces) == sum(1 for e in whole if e.get("ph") != "M")
    assert manifest["cuts"]["flows"] == 0   # no launch flow cut, on either rank


def test_grouped_steps_keep_each_ranks_own_ends(tmp_path):
    """--target-size groups consecutive steps; each rank's group still ends at its own
    marker of the group's last step."""
    merged = tmp_path / "job.json"
    traceconv.save(traceconv.merge([traceconv.load(p) for p in RANKS]), merged)
    whole = raw(merged)["traceEvents"]
    marks = own_markers(whole)
    manifest = split(merged, tmp_path / "steps", by="step", overview=False,
                     target_size=10**12)   # everything in one group...
    assert [p["label"] for p in manifest["pieces"]] == ["before-step3"]
    manifest = split(merged, tmp_path / "two", by="step", overview=False, target_size=1)
    assert [p["label"] for p in manifest["pieces"]] == ["before", "step2", "step3"]  # (each alone)
    pieces = piece_events(tmp_path / "two", manifest)
    for k, events in enumerate(pieces):
        assert all(bisect.bisect_right(marks[e["pid"]], e["ts"]) == k
                   for e in events if e["pid"] in marks)

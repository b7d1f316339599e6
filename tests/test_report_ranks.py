"""The report of a merged multi-rank trace: a step-time breakdown per rank, each over its own
steps, and the slowest rank.

``report RANK0 RANK1 ...`` used to cut the union of every rank's steps into one breakdown
(DLRM, 8 ranks of one step each: "8 steps, 20.82 ms", each instant charged to whichever
rank's work ran then). The expected values here are counted by hand from each rank's own
JSON (plain ``json`` with ``Decimal``, no traceconv): its step windows
(:func:`tests.test_rank_windows.own_windows`), and each instant of them charged as
docs/analysis.md defines the report's Step time: to the device work running (the one that
started last), else to the host slice running (each thread's innermost slice, its slices
nested and a child cut at its parent's end; among threads, the one whose innermost slice
has been running since latest), else idle; device work is compute, memcpy (copies and
memsets) or communication (NCCL kernels), host work is communication when the slice is a
collective op (``nccl:``, ``gloo:``, ``c10d::``, ``record_param_comms``, all-reduce /
all-gather / all-to-all in its name), else host.
"""

from __future__ import annotations

import re
import subprocess
from functools import cache
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

import traceconv
from tests.test_memflow_browser import CHROMIUM, decode_png
from tests.test_rank_windows import DDP, DEVICE_WORK, DLRM, _ns, own_windows, read_rank
from traceconv.analysis.merge import merge
from traceconv.report.page import page as report_page
from traceconv.report.step_time import rank_step_times, step_time_section

PARTS = ("compute", "memcpy", "communication", "host", "idle")
# host slices that are no work: the profiler's own span, and ranges drawn on a device
NOT_HOST_WORK = {"Trace", "gpu_user_annotation", "kernel", "gpu_memcpy", "gpu_memset"}
COLLECTIVE = re.compile(r"nccl|c10d::|gloo:|record_param_comms|all_?reduce|all_?gather|"
                        r"all_?to_?all|reduce_?scatter", re.IGNORECASE)


def _device_part(event: dict) -> str:
    if event["cat"] in ("gpu_memcpy", "gpu_memset"):
        return "memcpy"
    return "communication" if event["name"].lower().startswith("nccl") else "compute"


def _host_part(event: dict) -> str:
    steps = event["name"].startswith("ProfilerStep#")
    return "communication" if not steps and COLLECTIVE.search(event["name"]) else "host"


def _main_thread(events: list[dict]) -> tuple:
    """The thread holding the steps, else the one whose tid is its pid: where torch puts
    the profiler's own overhead (written under pid -1)."""
    for e in events:
        if e["name"].startswith("ProfilerStep#") and e.get("cat") == "user_annotation":
            return e["pid"], e["tid"]
    return next((e["pid"], e["tid"]) for e in events if e["pid"] == e["tid"])


@cache   # (each file is counted once for the tests that compare with it)
def step_time_by_hand(path: Path) -> tuple[int, int, dict[str, int]]:
    """(rank, its step windows' ns, ns per part) of one rank's file."""
    rank, events = read_rank(path)
    main = _main_thread(events)
    windows = own_windows(events)
    device = [(_ns(ev["ts"]), _ns(ev["ts"]) + _ns(ev["dur"]), i, _device_part(ev))
              for i, ev in enumerate(events)
              if ev.get("cat") in DEVICE_WORK and _ns(ev["dur"]) > 0]
    threads: dict[tuple, list[tuple[int, int, int, str]]] = {}
    for i, ev in enumerate(events):
        if ev.get("cat") in NOT_HOST_WORK or _ns(ev["dur"]) == 0:
            continue
        thread = main if ev["pid"] == -1 else (ev["pid"], ev["tid"])
        threads.setdefault(thread, []).append(
            (_ns(ev["ts"]), _ns(ev["ts"]) + _ns(ev["dur"]), i, _host_part(ev)))
    host = []   # (start, end, depth order, part, thread): nested, a child cut at its
    for thread, slices in threads.items():   # parent's end (one thread runs one at a time)
        enclosing: list[int] = []
        for order, (start, end, _, part) in enumerate(sorted(
                slices, key=lambda x: (x[0], -x[1], x[2]))):
            while enclosing and enclosing[-1] <= start:
                enclosing.pop()
            end = min([end, *enclosing[-1:]])
            enclosing.append(end)
            host.append((start, end, order, part, thread))
    cuts = sorted({t for w in windows for t in w} | {t for d in device for t in d[:2]}
                  | {t for h in host for t in h[:2]})
    totals = dict.fromkeys(PARTS, 0)
    stretch: dict[tuple, tuple[int, int]] = {}   # thread -> (its innermost slice, since)
    for a, b in pairwise(cuts):
        running = [h for h in host if h[0] <= a and h[1] >= b]
        innermost: dict[tuple, tuple] = {}
        for h in running:   # a thread's innermost: the deepest nested
            if h[4] not in innermost or h[2] > innermost[h[4]][2]:
                innermost[h[4]] = h
        # each thread's stretch: since when its innermost slice has been the one running
        stretch = {thread: stretch[thread] if stretch.get(thread, (None,))[0] == h[2]
                   else (h[2], a) for thread, h in innermost.items()}
        if not any(w0 <= a and b <= w1 for w0, w1 in windows):
            continue
        on_device = [d for d in device if d[0] <= a and d[1] >= b]
        if on_device:
            part = max(on_device, key=lambda d: (d[0], -d[2]))[3]
        elif innermost:
            part = max(innermost.values(), key=lambda h: stretch[h[4]][1])[3]
        else:
            part = "idle"
        totals[part] += b - a
    return rank, sum(w1 - w0 for w0, w1 in windows), totals


def _check(paths: list[Path]) -> None:
    got = rank_step_times(merge([traceconv.load(p) for p in paths]))
    expected = [step_time_by_hand(p) for p in paths]
    assert [(t.label, t.window_ns, dict(t.parts)) for t in got] == [
        (f"rank {rank}", window, parts) for rank, window, parts in expected]


def test_each_ddp_rank_has_its_own_step_time():
    """4 DDP (gloo) ranks without step markers: each rank over its own first-to-last work
    (rank 0: 31.951 ms, 11.201 ms of it in gloo collectives), not one 32.11 ms breakdown."""
    _check(DDP)


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.skipif(not DLRM, reason="needs ../shared")
def test_each_dlrm_rank_has_its_own_step_time():
    """8 DLRM ranks (NCCL, one step each, starting up to 7.8 ms apart): each rank's step 12
    split by hand from its own file; it was one "8 steps, 20.82 ms" breakdown of the union."""
    _check(DLRM)


def _table(html: str) -> list[list[str]]:
    return [re.findall(r"<t[dh][^>]*>([^<]*)</t[dh]>", row)
            for row in re.findall(r"<tr>(.*?)</tr>", html)]


def test_the_page_shows_a_row_per_rank_and_the_slowest():
    """The page's Step time section: a row per rank with its step time and parts in ms
    (the hand counts, to the µs), the rank with the longest steps marked, and who arrived
    last at the gloo collectives (by hand: the latest start of each call per collective)."""
    html = step_time_section(merge([traceconv.load(p) for p in DDP]))
    header, *rows = _table(html)
    assert header == ["rank", "steps", "per step ms",
                      *(f"{part} ms (share)" for part in PARTS)]
    expected = [step_time_by_hand(p) for p in DDP]
    for row, (rank, window, parts) in zip(rows, expected, strict=True):
        assert row[1] == "1" and row[2] == f"{window / 1e6:.3f}"
        assert [cell.split(" ")[0] for cell in row[3:]] == [
            f"{parts[part] / 1e6:.3f}" for part in PARTS]
        assert row[0].startswith(f"rank {rank}")
    slowest = max(expected, key=lambda e: e[1])[0]
    assert [r[0] for r in rows if "slowest" in r[0]] == [f"rank {slowest} (slowest)"]
    assert f"Longest steps: <b>rank {slowest}</b>" in html
    calls: dict[tuple[str, int], dict[int, int]] = {}
    for path in DDP:
        rank, events = read_rank(path)
        seen: dict[str, int] = {}
        for e in sorted((e for e in events if e["name"].startswith("gloo:")
                         and e.get("cat") != "gpu_user_annotation"), key=lambda e: e["ts"]):
            n = seen[e["name"]] = seen.get(e["name"], -1) + 1
            calls.setdefault((e["name"], n), {})[rank] = _ns(e["ts"])
    last = [max(starts, key=starts.get) for starts in calls.values()]
    counts = sorted(((last.count(r), r) for r in set(last)), key=lambda c: (-c[0], c[1]))
    assert ", ".join(f"rank {r} at {n:,}" for n, r in counts) in html


def test_a_merged_output_read_back_gets_the_same_rows(tmp_path):
    """``batch --merge`` output read back keeps its ranks (the inputs' process ranges):
    the same rows as the ranks merged in memory."""
    out = tmp_path / "merged.pftrace"
    merged = merge([traceconv.load(p) for p in DDP[:2]])
    traceconv.save(merged, out)
    assert rank_step_times(traceconv.load(out)) == rank_step_times(merged)


@pytest.mark.integration
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_chromium_draws_a_bar_per_rank_at_1280(tmp_path):
    """The Step time section in the report's page at 1280 px: four bars, each rank's row of
    pixels holding the compute blue and the communication green; no console error."""
    section = step_time_section(merge([traceconv.load(p) for p in DDP]))
    page = tmp_path / "report.html"
    page.write_text(report_page("4 ranks", "", [("Step time", section)]))
    png = tmp_path / "report.png"
    run = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
         f"--user-data-dir={tmp_path / 'ud'}", f"--screenshot={png}", "--window-size=1280,800",
         page.as_uri()], capture_output=True, text=True, timeout=120, check=True)
    assert [line for line in run.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line
            or "Failed to load resource" in line] == []
    pixels = decode_png(png.read_bytes())[:, :, :3].astype(int)

    def rows_with(rgb: tuple[int, int, int]) -> np.ndarray:
        return np.flatnonzero((np.abs(pixels - rgb).sum(axis=2) < 12).sum(axis=1) > 20)

    blue, green = rows_with((0x4E, 0x79, 0xA7)), rows_with((0x59, 0xA1, 0x4F))
    bars = np.split(blue, np.flatnonzero(np.diff(blue) > 1) + 1)   # runs of pixel rows
    assert len(bars) == len(DDP) and all(np.isin(bar, green).all() for bar in bars)


def test_a_step_of_bookkeeping_instructions_is_other_work():
    """Found by the fuzz run: MIGraphX bookkeeping instructions (``@param``, ``load``) are
    "other" work, which the step-time breakdown had no part for (KeyError). The parts still
    add up to the step window, and other work is drawn, as the report draws it on the
    critical path."""
    from traceconv.report.step_time import rank_step_times

    path = Path(__file__).parent / "data" / "migraphx" / "trace_eval_2019_ouput_typo.txt"
    trace = traceconv.load(path)
    (times,) = rank_step_times(trace)
    parts = dict(times.parts)
    assert sum(parts.values()) == times.window_ns
    assert "other work" in parts
    assert parts["other work"] > 0
    from traceconv.report import render_report

    assert "Step time" in render_report(trace)

"""The HTML report's memory pane: allocated and reserved over time with the moment that
matters marked, the numbers at it (equal to the replay of the snapshot's plain data, see
tests/test_memory_command.py) and the sites live then; as headless Chromium draws it."""

from __future__ import annotations

import pickle
import re
import subprocess

import numpy as np
import pytest

import traceconv
from tests.conftest import SAMPLES
from tests.test_memflow_browser import CHROMIUM, decode_png
from tests.test_memory_command import BUNDLED, first_peak, live_at, plain_document, replay, with_oom
from traceconv.report import render_report
from traceconv.report.memory_pane import memory_pane

RED = (214, 39, 40)   # the moment's dashed line (#d62728)
ALLOCATED, RESERVED = (78, 121, 167), (242, 142, 43)   # the two curves (#4e79a7, #f28e2b)


def at_that_moment(html: str, row: str) -> int:
    """The exact byte count of ``row`` in the pane's table."""
    found = re.search(rf'<td class="name">{re.escape(row)}</td><td class="n">([\d,]+) B', html)
    assert found, row
    return int(found[1].replace(",", ""))


def memory_section(html: str) -> str:
    return html[html.index("<h2>Memory</h2>"):html.index("<h3>Memory flow</h3>")]


@pytest.mark.slow
def test_the_pane_states_the_replayed_peak():
    html = memory_pane(traceconv.load(BUNDLED[0]))
    blocks, segments = replay(plain_document(BUNDLED[0]), 0)
    start = min(t for b in blocks + segments for t in b[:2] if t is not None)
    at = first_peak(blocks, segments)
    assert "The moment that matters: the first peak of allocated bytes" in html
    assert at_that_moment(html, "allocated") == live_at(blocks, at, start)
    assert at_that_moment(html, "reserved") == live_at(segments, at, start)
    assert at_that_moment(html, "fragmentation (reserved − allocated)") == (
        live_at(segments, at, start) - live_at(blocks, at, start))
    # the plot: allocated and reserved, the moment marked, then the top sites (10 and the rest)
    assert html.count("<svg") == 1 and html.count("<path") == 2 and "stroke-dasharray" in html
    sites = html[html.index("Sites live at that moment"):]
    assert sites.count("<tr>") == 1 + 10 + 1 and "more sites)" in sites
    assert "resnet.py:269 _forward_impl" in sites


@pytest.mark.slow
def test_the_pane_marks_the_oom(tmp_path):
    document = plain_document(BUNDLED[0])
    position = len(document["device_traces"][0]) // 2
    target = tmp_path / "oom.pickle"
    target.write_bytes(pickle.dumps(with_oom(document, position, 3 << 30), protocol=4))
    html = memory_pane(traceconv.load(target))
    assert "The moment that matters: the out-of-memory event" in html
    assert at_that_moment(html, "requested") == 3 << 30
    assert at_that_moment(html, "device free") == 123_456_768
    assert ">OOM</text>" in html
    assert re.search(r"largest free block fits the request</td><td class=\"n\">no<", html)


def test_a_format_without_sites_says_so():
    """(In the whole report: the pane is its memory section.)"""
    html = memory_section(render_report(traceconv.load(SAMPLES / "rpd" / "matmul_result.rpd")))
    assert "does not record where blocks were allocated (5 live blocks)" in html
    assert "(unnamed)" not in html and "Sites live at that moment" not in html


def test_the_most_allocated_devices_first():
    """XPlane: eight BFC allocators; the pane shows the six with the most allocated at their
    peaks (replayed off the wire) and says how many more there are."""
    from tests.test_memory_sources import XPLANE, paired_peak, xplane_memory_events

    events = xplane_memory_events(XPLANE)
    peaks = {name: paired_peak([e[1:] for e in events if e[0] == name])
             for name in {e[0] for e in events}}
    html = memory_pane(traceconv.load(XPLANE))
    shown = re.findall(r"<h3>([^<]*)</h3>", html)
    assert len(peaks) == 8 and len(shown) == 6 and "2 more devices" in html
    assert [peaks[name] for name in shown] == sorted(peaks.values(), reverse=True)[:6]


def test_a_dump_without_history_has_numbers_but_no_plot():
    html = memory_pane(traceconv.load(BUNDLED[1]))
    assert "the state the input records (no allocation times)" in html
    assert "<svg" not in html and "No allocation history" in html
    assert at_that_moment(html, "allocated") > 0


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_chromium_draws_the_curves_and_the_moment(tmp_path):
    """Only the memory section on a page (so the plot lies at a known height): the two
    curves and the red dashed moment line are on screen, the line right of the plot's
    left edge and left of its right edge."""
    from traceconv.report.page import page

    page_file = tmp_path / "pane.html"
    page_file.write_text(page("memory", "", [("Memory", memory_pane(
        traceconv.load(BUNDLED[0])))]))
    png = tmp_path / "pane.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--hide-scrollbars", f"--user-data-dir={tmp_path / 'ud'}",
                    f"--screenshot={png}", "--window-size=1100,900", page_file.as_uri()],
                   capture_output=True, timeout=120, check=True)
    pixels = decode_png(png.read_bytes())[:, :, :3].astype(int)

    def where(color: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
        return np.nonzero((np.abs(pixels - color) <= 24).all(axis=2))

    red_y, red_x = where(RED)
    assert len(red_y) > 100   # a dashed line across the plot's height
    assert red_y.max() - red_y.min() > 150
    for color in (ALLOCATED, RESERVED):
        ys, xs = where(color)
        assert len(ys) > 300 and xs.min() < red_x.min() < xs.max()

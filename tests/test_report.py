"""The HTML report: sections from the analyses, self-contained, and clean in a real browser."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import traceconv
from tests.test_memflow_browser import CHROMIUM, decode_png
from traceconv.cli import app
from traceconv.report import render_report

ROOT = Path(__file__).parent.parent
STREAMS = ROOT / "samples" / "torch" / "streams_graph_nccl_cuda.pt.trace.json.gz"
PADDLE = ROOT / "samples" / "paddle" / "report_gpu_before.txt"


MS_PER_UNIT = {"s": 1e3, "ms": 1.0, "µs": 1e-3, "ns": 1e-6}
DURATION = r"([\d,.]+) (s|ms|µs|ns)\b"


def ms_value(html: str, label: str) -> float:
    """The duration written after ``label:``, in ms (a lone duration has its own unit)."""
    number, unit = re.search(rf"{label}: {DURATION}", html).groups()
    return float(number.replace(",", "")) * MS_PER_UNIT[unit]


def test_timeline_report_sections_and_numbers():
    html = render_report(traceconv.load(STREAMS))
    for heading in ("Run", "Step time", "Top ops and kernels", "Advice", "Memory",
                    "Critical path"):
        assert f"<h2>{heading}</h2>" in html
    assert "NVIDIA H100 80GB HBM3" in html and "sync-copy" in html
    with gzip.open(STREAMS) as f:
        events = json.load(f)["traceEvents"]
    pageable = sum(e["dur"] for e in events if e.get("cat") == "gpu_memcpy"
                   and "Pageable" in e["name"]) / 1000
    copies = sum(e["dur"] for e in events if e.get("cat") in ("gpu_memcpy", "gpu_memset")) / 1000
    # the step-time bar charges copies their own time: at least the pageable ones, at most all
    assert pageable <= ms_value(html, "memcpy") <= copies
    parts = [ms_value(html, p) for p in ("compute", "memcpy", "communication", "host", "idle")]
    number, unit = re.search(rf"1 step, {DURATION}", html).groups()
    window = float(number.replace(",", "")) * MS_PER_UNIT[unit]
    # each figure has 4 significant digits: off by at most half its 4th digit
    assert abs(sum(parts) - window) <= 5e-4 * (sum(parts) + window)
    # self-contained: no script, no external resource
    assert "<script" not in html and "src=" not in html and 'href="http' not in html
    assert html.count("<svg") >= 5   # bars, live bytes, memory flow, path strip


def test_statistics_report_has_advice_but_no_timeline_sections():
    html = render_report(traceconv.load(PADDLE))
    assert "framework-overhead" in html
    assert "<h2>Step time</h2>" not in html and "<h2>Critical path</h2>" not in html


def test_statistics_report_lists_each_rows_calls():
    """A statistics file states its calls: the report's op table shows them (the file's
    own ``Calls`` column, read with ``csv``)."""
    import csv

    path = ROOT / "tests" / "data" / "rocprof" / "dalg24__kokkos__results.stats.csv"
    with path.open(newline="") as f:
        rows = list(csv.reader(f))[1:]
    # (the file's names hold unquoted commas: the numbers are the last four cells)
    calls = sorted(int(r[-4]) for r in rows)
    html = render_report(traceconv.load(path))
    top = html[html.index("<h2>Top ops and kernels</h2>"):html.index("<h2>Advice</h2>")]
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", top)
    column = headers.index("calls")
    cells = [re.findall(r"<td[^>]*>([^<]*)</td>", row)
             for row in re.findall(r"<tr>(.*?)</tr>", top)[1:]]
    assert sorted(int(c[column].replace(",", "")) for c in cells) == calls


def test_cli_writes_the_page_or_fails_cleanly(tmp_path):
    out = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["report", str(STREAMS), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("<!DOCTYPE html>")
    bad = CliRunner().invoke(app, ["report", str(tmp_path / "nope.json"), "-o",
                                   str(tmp_path / "x.html")])
    assert bad.exit_code == 1 and not (tmp_path / "x.html").exists()


@pytest.mark.integration
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_chromium_renders_it_without_console_errors(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render_report(traceconv.load(STREAMS)))
    png = tmp_path / "report.png"
    run = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
         f"--user-data-dir={tmp_path / 'ud'}", f"--screenshot={png}", "--window-size=1280,1400",
         page.as_uri()], capture_output=True, text=True, timeout=120, check=True)
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line or
               "Uncaught" in line or "Failed to load resource" in line]
    assert console == []
    pixels = decode_png(png.read_bytes())[:, :, :3]
    assert pixels.shape[:2] == (1400, 1280)
    # the step-time bar's colours are on screen: compute blue and memcpy orange
    flat = pixels.reshape(-1, 3).astype(int)
    for rgb in ((0x4E, 0x79, 0xA7), (0xF2, 0x8E, 0x2B)):
        assert (np.abs(flat - rgb).sum(axis=1) < 12).sum() > 1000

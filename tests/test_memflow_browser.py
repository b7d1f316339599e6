"""The memory-flow SVG as a real browser shows it (headless Chromium screenshot).

Skips when no ``chromium`` is installed (CI installs Debian's package). The PNG is decoded
here with zlib + numpy (8-bit RGB/RGBA, the only kind Chromium writes for screenshots).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib

import numpy as np
import pytest

import traceconv

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

RAW = "torch_memory/memory_timeline.raw.json.gz"   # under tests/data


def decode_png(data: bytes) -> np.ndarray:
    """Pixels of an 8-bit, non-interlaced RGB or RGBA PNG as an (h, w, channels) array."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, [], None
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0
    bpp = 3 if color == 2 else 4
    rows = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8).reshape(height, -1)
    out = np.zeros((height, width * bpp), np.int64)
    previous = np.zeros(width * bpp, np.int64)
    for y in range(height):
        kind, line = rows[y, 0], rows[y, 1:].astype(np.int64)
        if kind == 0:
            current = line
        elif kind == 2:
            current = (line + previous) % 256
        elif kind == 1:   # Sub: a running sum per channel
            current = np.cumsum(line.reshape(-1, bpp), axis=0).ravel() % 256
        else:             # Average, Paeth: depend on the pixel just decoded
            current = line.copy()
            for x in range(len(line)):
                left = current[x - bpp] if x >= bpp else 0
                up = previous[x]
                if kind == 3:
                    current[x] = (line[x] + (left + up) // 2) % 256
                else:
                    corner = previous[x - bpp] if x >= bpp else 0
                    p = left + up - corner
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                    pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                    current[x] = (line[x] + pred) % 256
        out[y] = current
        previous = current
    return out.reshape(height, width, bpp).astype(np.uint8)


def screenshot(svg, png, tmp_path, width: int, height: int) -> np.ndarray:
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--hide-scrollbars", f"--user-data-dir={tmp_path / 'ud'}",
                    f"--screenshot={png}", f"--window-size={width},{height}",
                    svg.as_uri()], check=True, capture_output=True, timeout=120)
    return decode_png(png.read_bytes())


@pytest.mark.integration
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_chromium_shows_the_blocks(data, tmp_path):
    trace = traceconv.load(data / RAW, format="torch_memory")
    svg = tmp_path / "cnn.svg"
    trace.memflow_svg(svg, color_by="category", width=800, height=500)
    pixels = screenshot(svg, tmp_path / "cnn.png", tmp_path, 800, 500)[:, :, :3]
    assert pixels.shape == (500, 800, 3)
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50        # not blank
    plot = pixels[152:454, 118:534].reshape(-1, 3).astype(int)       # the block area
    # activations (#f28e2b), gradients (#4e79a7), parameters (#59a14f) cover real area
    for hex_color, least in (("f28e2b", 0.15), ("4e79a7", 0.002), ("59a14f", 0.01)):
        rgb = np.array([int(hex_color[i:i + 2], 16) for i in (0, 2, 4)])
        share = (np.abs(plot - rgb).sum(axis=1) < 12).mean()
        assert share > least, hex_color
    # the live-bytes curve (#d62728) is drawn above the blocks
    curve = pixels[44:131, 118:534].reshape(-1, 3).astype(int)
    assert (np.abs(curve - [0xD6, 0x27, 0x28]).sum(axis=1) < 40).sum() > 200

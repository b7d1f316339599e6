"""The input layer judges the bytes it actually reads (``traceconv/io.py`` ``Source``,
``traceconv/spool.py``): the decompressed bytes of a compressed input and the bytes of
standard input, a FIFO or a device are held to ``--max-bytes`` and to the memory check as
they are read, and one that passes a limit is one line naming the byte where it did, with
nothing written. An input that yields its bytes once is kept on disk beyond 64 MiB, not in
memory.

Expected values by construction: the bombs are generated here (a Chrome object holding one
event, then spaces), so the byte where a limit is passed is the limit itself; the memory
available is made up so that the content that fits is a round number of bytes (Chrome JSON
read whole at 0.85x its size above 100 MiB, ``benchmarks/README.md``); a real gzip's content
size comes from Python's own ``gzip`` module; piped bytes are compared with the same file
converted by name.
"""

from __future__ import annotations

import gzip
import io
import os
import random
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
import traceconv.memory_check as memory_check
import traceconv.spool as spool_module
from tests.cli_errors import one_error_line, run
from traceconv.cli import app
from traceconv.errors import InputError
from traceconv.spool import Spool

ROOT = Path(__file__).resolve().parent.parent
CNN = ROOT / "samples" / "torch" / "cnn_step5.pt.trace.json"
RESNET_GZ = ROOT / "samples" / "torch" / "resnet18_train_cuda.pt.trace.json.gz"
EVENT = b'{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}'
MiB = 1 << 20


def bomb(tmp_path: Path, spaces: int) -> Path:
    """A gzip of a Chrome trace with one event and ``spaces`` spaces after it."""
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(gzip.compress(b'{"traceEvents": [' + EVENT + b" " * spaces + b"]}", 9))
    return path


@pytest.fixture
def memory_for(monkeypatch):
    """Make the memory available hold exactly ``content`` bytes of Chrome JSON read whole
    (argument texts in memory: 0.85 bytes per byte, above 100 MiB)."""
    def set_to(content: int) -> None:
        available = (100 << 20) + content * 85 // 100
        monkeypatch.setattr(memory_check, "available_memory", lambda: available)
        assert memory_check.memory_limit("chrome", False).content_bytes == content  # type: ignore[union-attr]
    monkeypatch.delenv("TRACECONV_MEMORY_CHECK", raising=False)
    return set_to


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".traceconv-"))


# -- compressed inputs: the decompressed bytes are judged --------------------------------

def test_a_gzip_bomb_stops_at_the_byte_limit_and_writes_nothing(tmp_path: Path):
    path = bomb(tmp_path, 4 * MiB)
    out = tmp_path / "out.pftrace"
    one_error_line(run(str(path), "-o", str(out), "--max-bytes", "1M"),
                   f"{path}:decompressed byte 1048576: content is larger than the 1 MiB limit",
                   "--max-bytes")
    assert not out.exists() and leftovers(tmp_path) == []


def test_a_gzip_bomb_stops_where_its_content_passes_the_memory_available(
        tmp_path: Path, memory_for, monkeypatch):
    path = bomb(tmp_path, 4 * MiB)
    assert path.stat().st_size < 100_000   # (its size alone says nothing)
    memory_for(1_000_000)
    out = tmp_path / "out.pftrace"
    line = one_error_line(run(str(path), "-o", str(out)),
                          f"{path}:decompressed byte 1000000: holding it whole needs more "
                          "than", "TRACECONV_MEMORY_CHECK=off", f"traceconv split {path}")
    # (1,000,000 bytes is 977 KiB; 100 MiB + 850,000 bytes of memory shows as 101 MiB)
    assert "needs more than 101 MiB of memory (its content passes 977 KiB here) and " \
        "101 MiB is available" in line
    assert not out.exists() and leftovers(tmp_path) == []
    with pytest.raises(InputError) as refused:
        traceconv.load(path)
    assert refused.value.location == "decompressed byte 1000000"
    monkeypatch.setenv("TRACECONV_MEMORY_CHECK", "off")
    assert traceconv.load(path).counts()["slices"] == 1


def test_a_real_gzip_is_judged_on_its_content_not_a_guess_from_its_size(memory_for):
    # Kineto JSON compresses 10-15x: a guess of 8x its size would let this one through
    # where it does not fit, and would refuse it where it does
    content = len(gzip.decompress(RESNET_GZ.read_bytes()))
    assert (content, RESNET_GZ.stat().st_size) == (3_495_811, 239_368)
    memory_for(2_000_000)
    with pytest.raises(InputError, match="needs more than") as refused:
        traceconv.load(RESNET_GZ)
    assert refused.value.location == "decompressed byte 2000000"
    memory_for(3_500_000)
    assert traceconv.load(RESNET_GZ).counts()["slices"] > 0


# -- inputs that yield their bytes once -------------------------------------------------

def _endless(fifo: Path) -> threading.Thread:
    """A JSON array that never ends, written into ``fifo`` until its reader goes (not
    ``yes``: a reader refuses its ``y`` at the first byte)."""
    def write() -> None:
        try:
            with open(fifo, "wb") as out:
                out.write(b"[")
                while True:
                    out.write(b"1,\n" * 32768)
        except BrokenPipeError:
            pass
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(("limit", "words"), [
    ("--max-bytes 1M", "byte 1048576: content is larger than the 1 MiB limit"),
    # (of unknown size, judged as held whole: 2 bytes a byte, so 500,000 x 0.85 / 2)
    ("memory", "byte 212500: holding it whole needs more than")])
def test_a_fifo_fed_forever_stops_at_the_limit_and_is_let_go(tmp_path: Path, memory_for,
                                                             limit: str, words: str):
    fifo = tmp_path / "in.json"
    os.mkfifo(fifo)
    if limit == "memory":
        memory_for(500_000)
    writer = _endless(fifo)
    options = limit.split() if limit != "memory" else []
    one_error_line(run("info", str(fifo), "--format", "chrome", *options), f"{fifo}:{words}")
    writer.join(10)
    assert not writer.is_alive(), "the FIFO was not closed"


def test_dev_zero_stops_where_it_passes_the_memory_available(memory_for):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    memory_for(1_000_000)   # (--max-bytes left at 16 GiB; held whole: 1,000,000 x 0.85 / 2)
    one_error_line(run("info", "/dev/zero", "--format", "chrome"),
                   "/dev/zero:byte 425000: holding it whole needs more than")


def test_standard_input_is_judged_as_it_is_read(memory_for):
    assert CNN.stat().st_size > 1_000_000
    memory_for(1_000_000)   # (streamed, and judged as held whole: 1,000,000 x 0.85 / 2)
    result = CliRunner().invoke(app, ["info", "-", "--format", "chrome"],
                                input=CNN.read_bytes())
    one_error_line(result, "<stdin>:byte 425000: holding it whole needs more than")
    result = CliRunner().invoke(app, ["info", "-", "--max-bytes", "100K"],
                                input=CNN.read_bytes())
    one_error_line(result, "<stdin>:byte 102400: content is larger than the 100 KiB limit")


@pytest.mark.slow
@pytest.mark.parametrize("name", [CNN, RESNET_GZ], ids=["json", "gzip"])
def test_a_trace_piped_in_converts_to_the_same_bytes(tmp_path: Path, name: Path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    by_name, piped = tmp_path / "by_name.json", tmp_path / "piped.json"
    subprocess.run([sys.executable, "-m", "traceconv", str(name), "-o", str(by_name)],
                   check=True, env=env, capture_output=True, timeout=120)
    subprocess.run(f"cat {name} | {sys.executable} -m traceconv - -o {piped}", shell=True,
                   check=True, env=env, capture_output=True, timeout=120)
    # the same bytes but for the input's name, which the output records
    assert piped.read_bytes() == by_name.read_bytes().replace(
        f'"source_file":"{name.name}"'.encode(), b'"source_file":"<stdin>"', 1)


# -- the spool: read again, from disk beyond IN_MEMORY -----------------------------------

class _Counting(io.RawIOBase):
    """``size`` bytes of a fixed pattern, made as they are read (none held)."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(range(256)) * (n // 256) + bytes(range(n % 256))
        self.left -= n
        return n


def test_the_spool_reads_alike_for_every_reader_in_memory_and_on_disk(monkeypatch):
    monkeypatch.setattr(spool_module, "IN_MEMORY", 1 << 20)
    data = random.Random(7).randbytes(3 << 20)
    spool = Spool(io.BytesIO(data), "pipe", 4 << 20, lambda at: InputError(f"past {at}"))
    first, second = spool.reader(), spool.reader()
    assert first.read(100_000) == data[:100_000]
    assert spool.size < len(data)   # (read only as far as a reader asked)
    assert second.read() == data
    assert first.read() == data[100_000:]
    first.seek(2_500_000)
    assert first.read(10) == data[2_500_000:2_500_010]
    assert spool.reader().seek(0, io.SEEK_END) == len(data)


def test_the_spool_keeps_a_big_input_on_disk(monkeypatch):
    monkeypatch.setattr(spool_module, "IN_MEMORY", 1 << 20)
    size = 32 << 20
    spool = Spool(io.BufferedReader(_Counting(size)), "pipe", size, lambda at: InputError("x"))
    tracemalloc.start()
    try:
        with spool.reader() as stream:
            while stream.read(1 << 16):
                pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert spool.size == size
    assert peak < 8 << 20   # (1 MiB pieces, buffers and what is held: not the 32 MiB read)
    with spool.reader() as again:
        again.seek(size - 256)
        assert again.read() == bytes(range(256))


def test_the_spool_refuses_every_reader_past_its_limit():
    spool = Spool(io.BytesIO(b"x" * 10), "pipe", 4, lambda at: InputError(f"past byte {at}"))
    for _ in range(2):
        with pytest.raises(InputError, match="past byte 4"):
            spool.reader().read()

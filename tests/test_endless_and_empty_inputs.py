"""Inputs that never end, or that hold only names and settings: one line, exit 1.

An endless stream (``/dev/zero``, a pipe that keeps writing) is refused at its first byte
that no reader can read, or once what a reader holds whole passes the memory available;
an input of names or a run's settings alone is "nothing read", not an empty output.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import traceconv
from traceconv import memory_check
from traceconv.errors import InputError
from traceconv.formats.chrome import stream as chrome_stream
from traceconv.io import Source
from traceconv.memory_check import BASE_BYTES, MemoryLimit

SEED_ET = Path(__file__).parent / "data" / "seeds" / "torch_et.json"


class _Zeros(io.RawIOBase):
    """NUL bytes without end, counting what was read."""

    def __init__(self) -> None:
        self.read_so_far = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        view[:] = bytes(len(view))
        self.read_so_far += len(view)
        return len(view)


def test_a_chrome_reader_given_an_endless_stream_stops_at_its_first_byte() -> None:
    zeros = _Zeros()
    with pytest.raises(chrome_stream.DocumentError) as caught:
        chrome_stream.read_document(io.BufferedReader(zeros))
    assert (caught.value.line, caught.value.column) == (1, 1)   # (NUL: byte one, by hand)
    assert zeros.read_so_far <= 2 * chrome_stream.CHUNK


@pytest.mark.slow
def test_dev_zero_as_chrome_is_one_line_at_1_1() -> None:
    """(was: read until killed, 5.4 GB at 126 s)"""
    done = subprocess.run([sys.executable, "-m", "traceconv", "info", "/dev/zero",
                           "--format", "chrome"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "traceconv: error: /dev/zero:1:1: not valid JSON: unexpected character, expected a "
        "JSON value"]


def test_content_of_unknown_size_held_whole_is_bounded_by_the_memory_available(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Any format read whole (here one with no measured peak): two bytes held per byte
    read, so with 1 MiB left above the interpreter's, the refusal comes at 512 KiB."""
    zeros = _Zeros()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(zeros)))
    source = Source("-")
    source.held_limit = MemoryLimit("torch-et", False, BASE_BYTES + (1 << 20), held_whole=True)
    with pytest.raises(InputError) as caught:
        source.read_bytes()
    assert caught.value.location == "byte 524288"
    assert "holding it whole needs more than" in str(caught.value)
    assert zeros.read_so_far <= (524288 + (1 << 20)) * 2   # (a piece or two past it)
    source.close()


class _Endless(io.RawIOBase):
    """``head``, then one piece without end, again and again (``yes LINE``)."""

    def __init__(self, head: bytes, piece: bytes) -> None:
        self.left, self.piece = head, piece

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        while len(self.left) < len(view):
            self.left += self.piece * (len(view) // len(self.piece) + 1)
        view[:], self.left = self.left[:len(view)], self.left[len(view):]
        return len(view)


# a format's own head, then what repeats in it: (head, piece)
ENDLESS = {
    "migraphx": (b"", b"@0 = hip::hip_allocate_memory[shape=float_type, {1}] -> float_type\n"),
    "paddle-summary": (b"", b"conv2d  12  0.5\n"),
    "chrome": (b'{"traceEvents":[', b'{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"a"},'),
}


@pytest.mark.parametrize("format_name", ENDLESS)
def test_an_endless_stream_read_by_a_streaming_reader_stops_where_it_passes_what_fits(
        monkeypatch: pytest.MonkeyPatch, format_name: str) -> None:
    """(was: read until killed, memory growing) A reader that streams (text lines, Chrome
    events) keeps what it reads; content of unknown size is judged as content held whole,
    two bytes per byte read: with 1 MiB left above the interpreter's, refused at 512 KiB."""
    endless = io.BufferedReader(_Endless(*ENDLESS[format_name]))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(endless))
    monkeypatch.setattr(memory_check, "available_memory", lambda: BASE_BYTES + (1 << 20))
    monkeypatch.delenv("TRACECONV_MEMORY_CHECK", raising=False)
    with pytest.raises(InputError) as caught:
        traceconv.load("-", format=format_name)
    assert (caught.value.file, caught.value.location) == ("<stdin>", "byte 524288")


# Inputs of names or settings alone, each written by hand: (name, content)
NAMES_ONLY = [
    ("meta.json", {"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1,
                                    "args": {"name": "x"}}]}),
    ("et.json", {**{k: v for k, v in json.loads(SEED_ET.read_text()).items() if k != "nodes"},
                 "nodes": []}),
    ("e.profile.json", [{"count": 0}]),
]


@pytest.mark.parametrize(("name", "content"), NAMES_ONLY, ids=[n for n, _ in NAMES_ONLY])
def test_names_or_settings_alone_are_nothing_read(tmp_path: Path, name: str,
                                                  content: object) -> None:
    path = tmp_path / name
    path.write_text(json.dumps(content))
    out = tmp_path / "out.pftrace"
    done = subprocess.run([sys.executable, "-m", "traceconv", "convert", str(path), "-o",
                           str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"traceconv: error: {path}: nothing read:")
    assert not out.exists()


def test_a_meminfo_shaped_object_without_chunks_is_nothing_read(tmp_path: Path) -> None:
    path = tmp_path / "junk.json"
    path.write_text('{"opr": {}, "chunk": {}}')
    from traceconv.api import load

    with pytest.raises(InputError, match="nothing read"):
        load(path, format="megengine-meminfo")

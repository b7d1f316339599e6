"""A JSON trace too big to convert whole on this machine is refused before it is read,
with what to run instead (``traceconv/cli/memory_check.py``).

Expected values: the estimate's factors are the peaks measured in ``benchmarks/README.md``
("Bigger inputs"); the available memory is made up by hand (files in the kernel's formats).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
import traceconv.memory_check as memory_check
from tests.test_cli import CNN, run
from traceconv.cli import app
from traceconv.memory_check import available_memory, needed_memory

MiB = 1 << 20
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def little_memory(monkeypatch):
    """A machine with 1 MiB available."""
    monkeypatch.setattr(memory_check, "available_memory", lambda: MiB)


def test_a_trace_that_cannot_fit_is_refused_in_one_line(tmp_path: Path, little_memory):
    out = tmp_path / "cnn.pftrace"
    result = run(str(CNN), "-o", str(out))
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"traceconv: error: {CNN}: ")
    needed = int(CNN.stat().st_size * 0.85) + 100 * MiB   # the in-memory factor: < 1 GiB
    assert f"needs about {needed / MiB:.0f} MiB of memory and 1 MiB is available" in lines[0]
    for advice in (f"traceconv overview {CNN}", f"traceconv split {CNN}",
                   "TRACECONV_MEMORY_CHECK=off"):
        assert advice in lines[0]
    assert not out.exists() and not list(tmp_path.iterdir())


def test_no_memory_check_tries_anyway(tmp_path: Path, little_memory):
    out = tmp_path / "cnn.pftrace"
    result = run(str(CNN), "-o", str(out), "--no-memory-check")
    assert result.exit_code == 0, result.stderr
    assert out.stat().st_size > 0


def test_every_command_that_reads_whole_is_checked(tmp_path: Path, little_memory, monkeypatch):
    for command in (["info"], ["summary"], ["advise"]):
        result = run(*command, str(CNN))
        assert result.exit_code == 1, command
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "needs about" in lines[0], command
        assert lines[0].endswith("TRACECONV_MEMORY_CHECK=off in the environment"), command
    monkeypatch.setenv("TRACECONV_MEMORY_CHECK", "off")
    assert run("info", str(CNN)).exit_code == 0


def test_the_api_refuses_too(little_memory):
    with pytest.raises(traceconv.InputError, match="needs about .* of memory"):
        traceconv.load(CNN)
    assert traceconv.load(CNN, memory_check=False).counts()["slices"] > 0


def test_a_pftrace_that_cannot_fit_is_refused_with_perfettos_own_reader_named(
        tmp_path: Path, little_memory):
    """A .pftrace reads at about 3x its size (its args are values, never text): refused
    in one line that names Perfetto's trace_processor_shell, not split (which reads JSON)."""
    pftrace = tmp_path / "cnn.pftrace"
    assert run(str(CNN), "-o", str(pftrace), "--no-memory-check").exit_code == 0
    result = run("info", str(pftrace))
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    needed = int(2.8 * pftrace.stat().st_size) + 100 * MiB
    assert len(lines) == 1 and f"needs about {needed / MiB:.0f} MiB" in lines[0]
    assert "trace_processor_shell" in lines[0] and "split" not in lines[0]
    assert needed_memory(pftrace.stat().st_size, "perfetto", False) == needed


def test_inputs_whose_peak_is_not_measured_are_not_checked(tmp_path: Path, little_memory):
    snapshot = ROOT / "samples" / "torch" / "resnet18_train_snapshot.pickle.gz"
    assert run("info", str(snapshot)).exit_code == 0
    assert needed_memory(snapshot.stat().st_size, "torch-snapshot", False) is None


def test_spilled_arguments_change_the_estimate():
    size = CNN.stat().st_size
    assert needed_memory(size, "chrome", True) == int(size * 0.33) + 100 * MiB


@pytest.mark.parametrize("meminfo, limit, current, expected", [
    ("MemTotal: 16 kB\nMemAvailable: 8 kB\n", "max\n", "0\n", 8 * 1024),   # no cgroup limit
    ("MemAvailable: 8 kB\n", "10000\n", "4000\n", 6000),                   # the container's
    ("MemAvailable: 1 kB\n", "10000\n", "4000\n", 1024),                   # the machine's
    ("MemAvailable: x kB\n", "1000\n", "4000\n", 0),                       # over its limit
    (None, None, None, None),                                             # neither known
])
def test_available_memory(tmp_path: Path, meminfo, limit, current, expected):
    for name, text in (("meminfo", meminfo), ("memory.max", limit), ("memory.current", current)):
        if text is not None:
            (tmp_path / name).write_text(text)
    assert available_memory(tmp_path / "meminfo", tmp_path) == expected


def _tiny_events_xplane(path: Path, events: int) -> Path:
    """An XSpace of one host line of ``events`` empty XEvents (``22 00``), by hand."""
    def varint(value: int) -> bytes:
        out = bytearray()
        while value > 0x7F:
            out.append(value & 0x7F | 0x80)
            value >>= 7
        return bytes([*out, value])

    line = b"\x12\x06worker" + b"\x22\x00" * events
    plane = b"\x12\x09/host:CPU\x1a" + varint(len(line)) + line
    path.write_bytes(b"\x0a" + varint(len(plane)) + plane)
    return path


def test_a_protobuf_of_tiny_messages_is_refused_by_its_rows(tmp_path: Path, monkeypatch):
    """200,000 two-byte XEvents: 0.4 MB whose rows take about 20 times more than its bytes
    (each event a slice: 160 bytes measured per event above 28 per byte). Where the bytes
    alone would fit, the events are counted and the refusal names the input in one line,
    given by name, gzipped or on standard input."""
    import gzip

    path = _tiny_events_xplane(tmp_path / "tiny.xplane.pb", 200_000)
    size = path.stat().st_size
    by_size = int(28 * size) + 100 * MiB
    needed = by_size + 160 * 200_000             # the events, by construction
    monkeypatch.delenv("TRACECONV_MEMORY_CHECK", raising=False)
    monkeypatch.setattr(memory_check, "available_memory", lambda: by_size + MiB)
    gz = tmp_path / "tiny.xplane.pb.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    for name, piped in ((str(path), None), (str(gz), None), ("-", path.read_bytes())):
        result = CliRunner().invoke(app, ["info", "--format", "xplane", name], input=piped,
                                    catch_exceptions=False)
        assert result.exit_code == 1, name
        lines = result.stderr.strip().splitlines()
        shown = "<stdin>" if name == "-" else name
        assert len(lines) == 1 and lines[0].startswith(f"traceconv: error: {shown}: ")
        assert f"needs about {needed / MiB:.0f} MiB of memory" in lines[0]
        assert "TRACECONV_MEMORY_CHECK=off" in lines[0]
    monkeypatch.setattr(memory_check, "available_memory", lambda: needed + MiB)
    assert run("info", str(path)).exit_code == 0


def test_the_rows_are_counted_only_when_the_size_cannot_decide(tmp_path: Path, monkeypatch):
    """No walk of content that fits even if every message were two bytes, nor of a file
    whose bytes alone do not fit (refused unread); otherwise one walk, of the bytes the
    reader reads: a compressed file is decompressed whole once, not again to count."""
    import gzip

    import traceconv.formats.protowire.counting as counting
    from traceconv.io import Source

    walks: list[str] = []
    real_count = counting.count_elements
    monkeypatch.setattr(counting, "count_elements", lambda cls, data, paths: walks.append(
        cls.__name__) or real_count(cls, data, paths))
    whole_reads: list[int] = []
    real_read = Source._read
    monkeypatch.setattr(Source, "_read", lambda self, size: whole_reads.append(size) or
                        real_read(self, size))
    monkeypatch.delenv("TRACECONV_MEMORY_CHECK", raising=False)
    path = _tiny_events_xplane(tmp_path / "tiny.xplane.pb", 1000)
    gz = tmp_path / "tiny.xplane.pb.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    size = path.stat().st_size
    most = int(28 * size) + 100 * MiB + 160 * (size // 2)

    def load(name: Path, available: int) -> None:
        monkeypatch.setattr(memory_check, "available_memory", lambda: available)
        traceconv.load(name, "xplane")

    load(path, most)
    load(gz, most)
    with pytest.raises(traceconv.InputError, match="needs about"):
        load(path, MiB)
    assert walks == []
    whole_reads.clear()
    load(path, most - 1)   # (its 1,000 events fit: 160 bytes less than the bound's 1,012)
    load(gz, most - 1)
    assert walks == ["XSpace", "XSpace"] and whole_reads.count(-1) == 2


def test_rows_counted_in_a_real_file_agree_with_the_protobuf_runtime(shared_samples: Path):
    """The walk's count of a real XPlane's events against the protobuf runtime's decode of
    the whole file."""
    from protobuf_runtime import runtime_classes

    from traceconv.formats.protowire.counting import count_elements
    from traceconv.formats.xplane.proto import MESSAGES, XSpace

    data = (shared_samples / "xplane" / "openxla__xprof__tpu_inference_2.xplane.pb").read_bytes()
    space = runtime_classes("memcheck_xplane", MESSAGES)["XSpace"].FromString(data)
    events = sum(len(line.events) for plane in space.planes for line in plane.lines)
    assert events > 20_000
    assert count_elements(XSpace, data, ("planes.lines.events",)) == {
        "planes.lines.events": events}


@pytest.mark.parametrize("name, factor", [
    ("resnet50ish_static_profile.json", 6.7),   # (the profile grown 50x and 300x: 6.9)
    ("resnet50ish_static_mem_info/StaticMemoryInfo.json", 5.8),   # (grown: 6.0)
])
def test_a_megengine_document_that_cannot_fit_is_refused(tmp_path: Path, little_memory,
                                                         name: str, factor: float):
    """MegEngine's JSON documents are decoded whole, at about 6-7 times their size
    (``benchmarks/megengine_grown.py``): refused before they are read, in one line."""
    import gzip

    plain = tmp_path / name
    plain.parent.mkdir(exist_ok=True)
    plain.write_bytes(gzip.decompress((ROOT / "tests" / "data" / "megengine" /
                                       f"{name}.gz").read_bytes()))
    result = run("info", str(plain))
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    needed = int(factor * plain.stat().st_size) + 100 * MiB
    assert len(lines) == 1 and lines[0].startswith(f"traceconv: error: {plain}: ")
    assert f"needs about {needed / MiB:.0f} MiB of memory and 1 MiB is available" in lines[0]
    assert "convert it on a machine with more memory" in lines[0]

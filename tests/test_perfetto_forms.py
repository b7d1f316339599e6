"""Perfetto's ``traceconv`` forms (issue 24): ``json IN [OUT]``, ``text IN [OUT]``, and one
clear line for the modes only Perfetto's tool has. Expected values come from the packets
themselves (the ``perfetto`` package's generated classes) and the JSON written.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from google.protobuf import text_format
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace as ProtoTrace

from traceconv.cli import app

ROOT = Path(__file__).resolve().parent.parent
ROCPROF = ROOT / "samples" / "perfetto" / "rocprofv3_hip_taylor.pftrace"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "traceconv", *args], cwd=cwd,
                          capture_output=True, check=False)


def test_tracelens_call_exactly(tmp_path: Path):
    # AMD TraceLens runs exactly `traceconv json in.pftrace out.json`
    shutil.copy(ROCPROF, tmp_path / "in.pftrace")
    done = run("json", "in.pftrace", "out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    events = orjson.loads((tmp_path / "out.json").read_bytes())["traceEvents"]
    phases = Counter(e["ph"] for e in events)
    packets = ProtoTrace.FromString(ROCPROF.read_bytes()).packet
    begins = sum(p.track_event.type == 1 for p in packets if p.HasField("track_event"))
    assert phases["X"] == begins == 867


def test_json_to_standard_output():
    result = CliRunner().invoke(app, ["json", str(ROCPROF)])
    assert result.exit_code == 0
    assert "traceEvents" in orjson.loads(result.stdout_bytes)


def test_text_prints_every_packet(tmp_path: Path):
    result = CliRunner().invoke(app, ["text", str(ROCPROF)])
    assert result.exit_code == 0
    packets = ProtoTrace.FromString(ROCPROF.read_bytes()).packet
    assert result.stdout.count("\npacket {\n") + result.stdout.startswith("packet {\n") \
        == len(packets) == 1886
    # the text parses back to the same packets
    again = text_format.Parse(result.stdout, ProtoTrace())
    assert again == ProtoTrace.FromString(ROCPROF.read_bytes())
    out = tmp_path / "trace.textproto"
    assert CliRunner().invoke(app, ["text", str(ROCPROF), str(out)]).exit_code == 0
    assert out.read_text() == result.stdout


@pytest.mark.parametrize("mode", ["systrace", "profile", "bundle"])
def test_perfetto_only_modes_say_where_to_go(mode: str, tmp_path: Path):
    done = run(mode, str(ROCPROF), "out", cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "Perfetto" in lines[0] and mode in lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_file_named_json_is_still_an_input(tmp_path: Path):
    shutil.copy(ROCPROF, tmp_path / "json")
    done = run("info", "./json", "--json", cwd=tmp_path)
    assert done.returncode == 0 and orjson.loads(done.stdout)["slices"] == 867
    done = run("./json", "--to", "chrome", "-o", "out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = run("json", "./json", "again.json", cwd=tmp_path)
    assert done.returncode == 0 and (tmp_path / "again.json").exists()


def test_not_a_perfetto_trace_is_one_line(tmp_path: Path):
    bad = tmp_path / "bad.pftrace"
    bad.write_bytes(b"\x0a\x05garbage-that-is-not-a-packet")
    for mode in ("json", "text"):
        done = run(mode, str(bad), cwd=tmp_path)
        lines = done.stderr.decode().strip().splitlines()
        assert done.returncode == 1 and len(lines) == 1 and "bad.pftrace" in lines[0], lines


def test_output_is_never_the_input(tmp_path: Path):
    shutil.copy(ROCPROF, tmp_path / "in.pftrace")
    done = run("json", "in.pftrace", "in.pftrace", cwd=tmp_path)
    assert done.returncode == 1
    assert (tmp_path / "in.pftrace").read_bytes() == ROCPROF.read_bytes()


def test_json_reads_standard_input_without_in(tmp_path: Path):
    done = subprocess.run([sys.executable, "-m", "traceconv", "json"], cwd=tmp_path,
                          input=ROCPROF.read_bytes(), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    events = orjson.loads(done.stdout)["traceEvents"]
    assert sum(e["ph"] == "X" for e in events) == 867


def test_text_shows_fields_the_schema_does_not_know():
    """Chrome writes TrackEvent extensions (field 1067, ...) that the ``perfetto`` package's
    schema lacks: ``text`` prints each by its number, as many as the protobuf library finds
    unknown in the real Chromium cut, instead of leaving them out."""
    from google.protobuf.unknown_fields import UnknownFieldSet

    chromium = ROOT / "tests" / "data" / "perfetto" / "chromium150_headless_startup_cut.pftrace"
    packets = ProtoTrace.FromString(chromium.read_bytes()).packet
    unknown = Counter(field.field_number for p in packets if p.HasField("track_event")
                      for field in UnknownFieldSet(p.track_event))
    assert unknown   # (the cut holds some)
    text = CliRunner().invoke(app, ["text", str(chromium)]).stdout
    shown = Counter(line.split()[0].rstrip(":") for line in text.splitlines()
                    if line.startswith("    ") and not line.startswith("     ")
                    and line.split()[0].rstrip(":").isdigit())
    assert {str(n): c for n, c in unknown.items()} == shown

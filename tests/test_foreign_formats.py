"""Files no reader claims but traceconv can name (issue 39): one line saying what the file
is and what to do, exit 1, instead of sending the user to --format when no format reads
it. The files are made here with each format's own marks (a magic, a name, a database
made with sqlite3); the expected lines are written by hand."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from traceconv.cli import app


def _run(path: Path):
    return CliRunner().invoke(app, ["info", str(path)])


@pytest.mark.parametrize(("name", "data", "said"), [
    ("perf.data", b"PERFILE2" + bytes(64), "a Linux perf recording (perf.data): open it in"),
    ("report1.nsys-rep", b"\x00" * 64, "an Nsight Systems report: export it with "
                                       "`nsys export --type sqlite FILE`"),
    ("old.qdrep", b"\x00" * 64, "an Nsight Systems report (.qdrep)"),
    ("kernels.ncu-rep", b"\x00" * 64, "an Nsight Compute report: it holds per-kernel metrics"),
    ("events.out.tfevents.1700000000.host", b"\x00" * 64, "a TensorBoard event file: the "
                                                          "profile is the *.xplane.pb"),
    ("model.onnx", b"\x08\x07" + bytes(64), "an ONNX model: it holds a model, not a profile"),
    ("traces.zip", b"PK\x03\x04" + bytes(64), "a zip archive: unpack it"),
    # (catapult's trivial_systrace.html starts so: the doctype in capitals)
    ("trace.html", b"<!DOCTYPE HTML>\n<!--\nCopyright", "an HTML page (a systrace or "
                                                          "Catapult trace-viewer report?)"),
])
def test_a_known_foreign_file_is_named(tmp_path: Path, name: str, data: bytes, said: str):
    path = tmp_path / name
    path.write_bytes(data)
    result = _run(path)
    assert result.exit_code == 1
    assert result.output == f"traceconv: error: {path}: not a format traceconv reads: " \
        f"{said}{result.output.split(said, 1)[1]}"
    assert result.output.count("\n") == 1 and "--format" not in result.output


def test_an_unknown_database_is_named_with_its_tables(tmp_path: Path):
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.executescript("create table users (id); create table orders (id, user)")
    db.close()
    result = _run(path)
    assert result.exit_code == 1
    assert "an SQLite database that is no export traceconv reads (tables: orders, users)" \
        in result.output


def test_an_unknown_text_still_asks_for_a_format(tmp_path: Path):
    path = tmp_path / "notes.txt"
    path.write_text("shopping list\nmilk\n")
    result = _run(path)
    assert result.exit_code == 1 and "name it with --format" in result.output

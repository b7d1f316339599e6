"""A number column of a profiler database holding something else (text, a blob, a number
beyond 64 bits): the row is left out and counted ``sqlite.malformed_row``, with its table,
rowid and column as the example, for every reader of the shared SQLite layer (nsys, rpd),
instead of one cell refusing the whole file. Expected values: row counts and rowids from
plain sqlite3 on the mutated copies of real files.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import traceconv

ROOT = Path(__file__).parent.parent
SAMPLES = ROOT / "samples"
NSYS = SAMPLES / "nsys" / "mock_rtx3080_nsys2026.1.sqlite"
RPD = SAMPLES / "rpd" / "matmul_result.rpd"
KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"


def mutated(tmp_path: Path, source: Path, sql: str, *parameters: object) -> Path:
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    with sqlite3.connect(path) as db:
        db.execute(sql, parameters)
    return path


def count(path: Path, sql: str) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute(sql).fetchone()[0])


@pytest.mark.parametrize("value", [1e308, "abc", b"\x00\x01\x02\x03"])
def test_a_kernel_with_a_cell_of_the_wrong_type_is_left_out(tmp_path: Path, value: object):
    """The nsys export's first kernel gets a start that is no 64-bit integer: the other
    kernel is read, the one left out is counted and named (table, rowid, column)."""
    path = mutated(tmp_path, NSYS, f"update {KERNEL} set start = ? where rowid = 1", value)
    kernels = count(path, f"select count(*) from {KERNEL}")
    trace = traceconv.load(path)
    read = sum(s.category == "kernel" for s in trace.iter_slices())
    assert (kernels, read) == (2, 1)
    assert trace.diagnostics.count("sqlite.malformed_row") == 1
    [found] = [d for d in trace.diagnostics if d.code == "sqlite.malformed_row"]
    assert str(found.example).startswith(f"{KERNEL} rowid 1, column start: ")


def test_rpd_ops_with_numbers_beyond_64_bits_are_left_out(tmp_path: Path):
    """Every third op of a real rpd trace gets an end of 1e308: those ops (counted with
    sqlite3) are left out and counted, the rest read."""
    path = mutated(tmp_path, RPD, "update rocpd_op set \"end\" = 1e308 where id % 3 = 0")
    bad = count(path, "select count(*) from rocpd_op where typeof(\"end\") = 'real'")
    ops = count(path, "select count(*) from rocpd_op")
    first = count(path, "select min(rowid) from rocpd_op where typeof(\"end\") = 'real'")
    clean = traceconv.load(RPD)
    trace = traceconv.load(path)
    assert bad > 0 and trace.diagnostics.count("sqlite.malformed_row") == bad
    assert len(clean.slices) - len(trace.slices) == bad
    [found] = [d for d in trace.diagnostics if d.code == "sqlite.malformed_row"]
    assert found.example == f"rocpd_op rowid {first}, column end: 1e+308"
    assert ops == 85


def test_the_cli_names_the_code_not_python(tmp_path: Path):
    """Every kernel's start a text: the file is still read, and what is said names the code,
    never Python's conversion error."""
    path = mutated(tmp_path, NSYS, f"update {KERNEL} set start = 'abc'")
    result = subprocess.run([sys.executable, "-m", "traceconv", "info", str(path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    said = result.stdout + result.stderr
    assert result.returncode == 0, said
    assert "2 dropped sqlite.malformed_row" in said
    assert "int()" not in said and "C long" not in said and "Traceback" not in said

"""Names from a trace may hold control characters (a NUL, BEL, ESC): no
command prints one to the terminal, and no markup it writes (HTML, SVG, JUnit XML) holds
one that XML cannot; each shows them the same visible way (``traceconv.terminal`` for
terminals, ``traceconv.markup`` for markup)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from tests.cli_errors import run

# C0 controls but line breaks, DEL, C1 controls: what a terminal would act on
TERMINAL_CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
# what XML 1.0 cannot hold, even escaped
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
HOSTILE = "a\x00b\x07c\x1b[2Jd"


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> list[Path]:
    """Two runs of one op named with control characters, a kernel and a memory block."""
    folder = tmp_path_factory.mktemp("controls")
    paths = []
    for run_number, dur in enumerate((100_000, 150_000)):
        events = [
            {"ph": "X", "name": HOSTILE, "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 0,
             "dur": dur},
            {"ph": "X", "name": "k" + HOSTILE, "cat": "kernel", "pid": 1, "tid": 2, "ts": 10,
             "dur": 5, "args": {"device": 0, "stream": 7}},
            {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1,
             "args": {"Device Id": 0, "Device Type": 1, "Addr": 4096, "Bytes": 512,
                      "Total Allocated": 512, "Total Reserved": 2048}},
            {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 90,
             "args": {"Device Id": 0, "Device Type": 1, "Addr": 4096, "Bytes": -512,
                      "Total Allocated": 0, "Total Reserved": 2048}}]
        path = folder / f"run{run_number}.json"
        path.write_text(json.dumps({"traceEvents": events}))
        paths.append(path)
    return paths


@pytest.mark.parametrize("command", [
    ["info"], ["summary"], ["summary", "--wide"], ["advise"], ["critical-path"], ["memory"]])
def test_no_command_prints_a_control_character(traces: list[Path], command: list[str]):
    result = run(*command, str(traces[0]))
    assert result.exit_code == 0, result.output
    assert not TERMINAL_CONTROLS.search(result.stdout), repr(result.stdout)
    assert "a\\x00b" in result.stdout   # (shown, as an escape)


def test_a_diff_prints_none_and_its_junit_report_is_xml(traces: list[Path]):
    table = run("diff", str(traces[0]), str(traces[1]))
    assert not TERMINAL_CONTROLS.search(table.stdout), repr(table.stdout)
    report = run("diff", str(traces[0]), str(traces[1]), "--report", "junit",
                 "--fail-if", "total:+1%")
    assert not NOT_XML.search(report.stdout)
    ElementTree.fromstring(report.stdout.encode())   # (well-formed)


@pytest.mark.parametrize("command, suffix", [(["report"], ".html"), (["memflow"], ".svg")])
def test_markup_holds_no_character_xml_cannot(traces: list[Path], tmp_path: Path,
                                              command: list[str], suffix: str):
    out = tmp_path / f"out{suffix}"
    result = run(*command, str(traces[0]), "-o", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert not NOT_XML.search(text)
    assert "a\u2400b\u2407c" in text   # (a control shown as its control picture)
    if suffix == ".svg":
        ElementTree.fromstring(out.read_bytes())


def test_the_perfetto_writer_and_markup_write_a_control_as_its_unicode_picture():
    """One stand-in in every output: each C0 control is the Unicode character named "SYMBOL
    FOR" it (the standard's names, read from unicodedata), in a .pftrace string (NUL, the one
    trace_processor cannot hold) as in SVG/HTML/XML text."""
    import unicodedata

    from traceconv.formats.perfetto.wire import utf8
    from traceconv.markup import xml_safe

    names = {"\x00": "NULL", "\x07": "BELL", "\x1b": "ESCAPE", "\x1f": "UNIT SEPARATOR"}
    for control, name in names.items():
        assert unicodedata.name(xml_safe(control)) == f"SYMBOL FOR {name}"
    assert utf8("a\x00b").decode() == xml_safe("a\x00b") == "a\N{SYMBOL FOR NULL}b"

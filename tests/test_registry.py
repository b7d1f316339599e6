"""The format table as people script against it: built-ins always there, plugins through
entry points, names refused or corrected, flavours forceable, unknown options refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from traceconv import registry
from traceconv.cli import app
from traceconv.errors import FormatError
from traceconv.formats.chrome.flavours import FLAVOURS

ROOT = Path(__file__).parent.parent
CNN = ROOT / "samples" / "torch" / "cnn_step5.pt.trace.json"
BUILT_INS = {"chrome", "perfetto", "megengine", "summary", "svg", "migraphx", "paddle-pb"}


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter (the table is process-wide state)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, **env}, check=False)


def test_register_before_first_use_keeps_the_built_ins():
    result = run_python("""
        from traceconv import registry
        registry.register(registry.FormatInfo("mine", "a test format", "json", (".mine",),
                                              reads=True))
        print(" ".join(f.name for f in registry.all_formats()))
    """)
    names = result.stdout.split()
    assert result.returncode == 0, result.stderr
    assert set(names) >= BUILT_INS and names[-1] == "mine"


@pytest.mark.parametrize("first_import", ["traceconv.formats.chrome", "traceconv.formats",
                                          "traceconv.formats.perfetto.writer"])
def test_no_import_order_lets_a_format_take_a_built_in_name(first_import: str):
    """Before: after ``import traceconv.formats.chrome`` the table was still empty, a
    ``register`` took the name ``chrome``, and loading the built-ins then failed."""
    result = run_python(f"""
        import {first_import}
        from traceconv import registry
        from traceconv.errors import FormatError
        try:
            registry.register(registry.FormatInfo("chrome", "an impostor", "json"))
        except FormatError as exc:
            print("refused:", exc)
        print(registry.get("chrome").origin, len(registry.all_formats()))
    """)
    assert result.returncode == 0, result.stderr
    assert "refused: format name 'chrome' is already taken" in result.stdout
    assert f"built-in {len(registry.BUILTINS)}" in result.stdout


def test_the_built_ins_are_data():
    """Knowing the table imports no format module."""
    result = run_python("""
        import sys
        from traceconv import registry
        registry.all_formats(); registry.get("chrome")
        print(sorted(m for m in sys.modules if m.startswith("traceconv.formats")))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_detecting_a_json_imports_no_reader():
    """Before: telling a .json apart imported 22 traceconv modules (every candidate reader,
    the model, numpy); now only the light sniffers."""
    result = run_python("""
        import sys
        from traceconv import registry
        from traceconv.io import Source
        name = registry.detect(Source("samples/torch/cnn_step5.pt.trace.json")).name
        print(name, sorted(m for m in sys.modules if m.startswith("traceconv.")
                           and m not in ("traceconv.errors", "traceconv.io", "traceconv.registry",
                                         "traceconv.plugin_scan",
                                         # (the package's registrations: stdlib only)
                                         "traceconv.implementations", "traceconv.version",
                                         # (stdlib only: opening any file, its encoding)
                                         "traceconv.special_files", "traceconv.text_encoding")))
    """)
    assert result.returncode == 0, result.stderr
    # (export_sniffing: trtexec's exports are .json too; rocprof_sniffing, with the
    # database_sniffing it asks about results.db: rocprof v1's results.json; stdlib only,
    # like sniffing, the key claims they state and key_depths, the walk that finds them;
    # pasted_csv, with the pasted_text and text_lines it reads by: the head a CSV reader's
    # sniffer is given, rocprof's)
    assert result.stdout.split(" ", 1) == ["chrome", "['traceconv.formats', "
                                           "'traceconv.formats.database_sniffing', "
                                           "'traceconv.formats.export_sniffing', "
                                           "'traceconv.formats.key_claims', "
                                           "'traceconv.formats.key_depths', "
                                           "'traceconv.formats.pasted_csv', "
                                           "'traceconv.formats.pasted_text', "
                                           "'traceconv.formats.rocprof_sniffing', "
                                           "'traceconv.formats.sniffing', "
                                           "'traceconv.formats.text_lines']\n"]


def test_duplicate_names_and_aliases_are_refused():
    with pytest.raises(FormatError, match="'chrome' is already taken"):
        registry.register(registry.FormatInfo("chrome", "again", "json"))
    with pytest.raises(FormatError, match="'PFTRACE' is already taken .*perfetto"):
        registry.register(registry.FormatInfo("other", "x", "json", aliases=("PFTRACE",)))
    assert "other" not in [f.name for f in registry.all_formats()]


def make_plugin(folder: Path, body: str) -> None:
    """An installed distribution with one ``traceconv.formats`` entry point."""
    (folder / "tc_plugin.py").write_text(textwrap.dedent(body))
    meta = folder / "tc_plugin-1.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: tc-plugin\nVersion: 1.0\n")
    (meta / "entry_points.txt").write_text("[traceconv.formats]\nlines = tc_plugin:FORMAT\n")


def test_a_plugin_format_reads_through_the_api_and_is_listed(tmp_path: Path):
    make_plugin(tmp_path, '''
        from traceconv.model import Trace
        from traceconv.registry import FormatInfo

        FORMAT = FormatInfo("lines", "one slice per line", "tc_plugin", (".lines",),
                            reads=True)

        def read(source, *, unit_ns=1):
            trace = Trace()
            track = trace.add_track("t", process=trace.add_process("p"))
            for i, line in enumerate(source.read_text().split()):
                trace.add_slice(track, i * unit_ns, unit_ns, line)
            return trace
    ''')
    (tmp_path / "x.lines").write_text("a b c\n")
    result = run_python(f"""
        import json, traceconv
        from traceconv.cli.formats_cmd import formats_dict
        trace = traceconv.load({str(tmp_path / "x.lines")!r}, unit_ns=10)
        print(len(trace.slices), trace.span_ns, trace.metadata.source_format)
        entry = [f for f in formats_dict()["formats"] if f["name"] == "lines"][0]
        print(entry["origin"])
        try:
            traceconv.load({str(tmp_path / "x.lines")!r}, units=10)
        except traceconv.FormatError as exc:
            print(exc)
    """, PYTHONPATH=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "3 30 lines", "plugin tc-plugin",
        "unknown option 'units' for the lines reader; did you mean 'unit_ns'? (it takes: unit_ns)"
    ]


def test_a_broken_plugin_warns_and_the_built_ins_still_work(tmp_path: Path):
    make_plugin(tmp_path, "raise ImportError('missing dependency nsys')\n")
    result = run_python("""
        from traceconv import registry
        print(len(registry.all_formats()))
    """, PYTHONPATH=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) == len(registry.all_formats())
    assert "format plugin 'lines' skipped: missing dependency nsys" in result.stderr


def test_a_mistyped_name_gets_a_suggestion():
    with pytest.raises(FormatError, match=r"unknown format 'perfeto'; did you mean 'perfetto'\?"):
        registry.get("perfeto")
    with pytest.raises(FormatError, match=r"no flavour 'kinet'; did you mean 'kineto'\?"):
        registry.resolve("chrome:kinet")
    with pytest.raises(FormatError, match=r"did you mean 'paddle-summary'\?"):
        registry.resolve("padle_summary")
    result = CliRunner().invoke(app, ["info", str(CNN), "--format", "kinto"])
    assert result.exit_code == 1
    assert "did you mean 'kineto'?" in result.output


def test_flavours_are_listed_and_forceable():
    names = [flavour.name for flavour in FLAVOURS]
    assert {"kineto", "megengine", "paddle-profiler", "paddle-timeline"} <= set(names)
    detected = traceconv.load(CNN)
    assert detected.metadata.attributes["flavour"] == "kineto"
    # forcing another producer's conventions changes what the reader does with the file:
    # MegEngine's flavour does not know Kineto's device categories or its framework name
    forced = traceconv.load(CNN, format="chrome:megengine")
    assert forced.metadata.attributes["flavour"] == "megengine"
    assert forced.metadata.framework == "MegEngine"
    assert traceconv.load(CNN, format="kineto").metadata.attributes["flavour"] == "kineto"
    # `megengine` alone is the MegEngine profile format, not the Chrome flavour
    assert registry.resolve("megengine") == registry.Resolved(registry.get("megengine"))


def test_formats_json_lists_every_format_and_flavour():
    result = CliRunner().invoke(app, ["formats", "--json"])
    data = json.loads(result.output)
    assert [f["name"] for f in data["formats"]] == [f.name for f in traceconv.list_formats()]
    chrome = data["formats"][0]
    assert [f["name"] for f in chrome["flavours"]] == [f"chrome:{f.name}" for f in FLAVOURS]
    assert (chrome["reads"], chrome["writes"], chrome["checks"]) == (True, True, True)
    perfetto = next(f for f in data["formats"] if f["name"] == "perfetto")
    assert (perfetto["reads"], perfetto["writes"], perfetto["checks"]) == (True, True, True)


def test_formats_table_fits_80_columns():
    result = CliRunner().invoke(app, ["formats"], env={"COLUMNS": "80"}, terminal_width=80)
    lines = result.output.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    first_cells = {line.split()[0] for line in lines if line.strip()}
    for info in traceconv.list_formats():
        assert info.name in first_cells   # names are never wrapped
        for flavour in info.flavours():
            assert f"{info.name}:{flavour}" in first_cells


def test_unknown_options_are_refused_before_anything_is_written(tmp_path: Path):
    trace = traceconv.load(CNN)
    out = tmp_path / "x.pftrace"
    with pytest.raises(FormatError, match="unknown option 'workerz' for the perfetto writer; "
                                          r"did you mean 'workers'\?"):
        traceconv.save(trace, out, workerz=3)
    assert not out.exists()
    with pytest.raises(FormatError, match="unknown option 'colour_by' for the svg writer"):
        trace.memflow_svg(tmp_path / "m.svg", colour_by="category")
    with pytest.raises(FormatError, match="unknown option 'flavor' for the chrome reader"):
        traceconv.load(CNN, flavor="kineto")
    with pytest.raises(FormatError, match="unknown option 'tpo' for the summary writer"):
        traceconv.save(trace, tmp_path / "s.summary.txt", tpo=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("info", registry.all_formats(), ids=lambda info: info.name)
def test_every_built_in_states_its_options(info: registry.FormatInfo):
    """No format swallows options silently: each is a keyword parameter or a declared field."""
    module = info.load()
    for role, flag, declared in (("read", info.reads, "READ_OPTIONS"),
                                 ("write", info.writes, "WRITE_OPTIONS")):
        if flag:
            function = getattr(module, role)
            assert registry.option_names(function, getattr(module, declared, None)) is not None


def test_check_goes_through_the_registry(tmp_path: Path):
    trace = traceconv.load(CNN)
    trace.save(tmp_path / "cnn.pftrace")
    (tmp_path / "cnn.pftrace").rename(tmp_path / "renamed.bin")   # content decides
    report = traceconv.check(tmp_path / "renamed.bin")
    assert report.format == "perfetto" and report.ok
    assert report.counts["slices"] >= 2725   # every slice arrives (some on lane tracks)
    with pytest.raises(FormatError, match="cannot check svg files"):
        traceconv.check(CNN, format="svg")


def test_memflow_validation_lives_in_the_api(tmp_path: Path):
    trace = traceconv.load(CNN)
    with pytest.raises(FormatError, match=r"no memory blocks on device 'cuda:7' \(the trace "
                                          r"has: 'CPU'"):
        trace.memflow_svg(tmp_path / "m.svg", device="cuda:7")
    for side in ({"width": 10}, {"width": 10**26}, {"height": 100_001}):
        # (a side of 10^26 pixels had the address axis's break line drawn forever)
        with pytest.raises(FormatError, match="400 to 100,000 pixels across and 300 to "):
            trace.memflow_svg(tmp_path / "m.svg", **side)
    assert not (tmp_path / "m.svg").exists()


def test_errors_before_work(tmp_path: Path):
    """A missing input is reported before "say what to write"; suspicious merges warn."""
    result = CliRunner().invoke(app, ["no/such.json"])
    assert result.exit_code == 1
    assert result.output == "traceconv: error: no/such.json: No such file or directory\n"
    twice = CliRunner().invoke(app, [str(CNN), str(CNN), "-o", str(tmp_path / "x.pftrace")])
    assert twice.exit_code == 0
    assert f"traceconv: warning: {CNN} is given twice: it is merged with itself" in twice.output
    profile = ROOT / "samples" / "megengine" / "convnet_lar_embed_profile.json"
    mixed = CliRunner().invoke(app, [str(CNN), str(profile), "-o", str(tmp_path / "y.pftrace")])
    assert mixed.exit_code == 0
    # Kineto times are unix-epoch ns, MegEngine's process-relative: 56 years apart
    assert ("traceconv: warning: inputs from different frameworks (PyTorch, MegEngine) are "
            "merged onto one clock, which their times need not share (the merged span is "
            "1,795,339,764 s") in mixed.output


# real Perfetto traces under names only Perfetto's reader takes (rocprofv3's opens with
# 0a 5b: a packet tag, then a length that is "[" as text)
PERFETTO_NAMED = sorted(p for folder in (ROOT / "tests" / "data" / "perfetto",
                                         ROOT / "samples" / "perfetto")
                        for p in folder.iterdir()
                        if p.name.endswith((".pftrace", ".perfetto", ".perfetto-trace")))


@pytest.mark.slow
@pytest.mark.parametrize("trace", PERFETTO_NAMED, ids=lambda p: p.name)
def test_a_cut_perfetto_trace_is_read_as_what_its_name_says(tmp_path: Path, trace: Path):
    """Cut to 1..64 bytes, a real trace under its Perfetto name is Perfetto's to read: a
    lone "[" (or nothing) that the content sniff could take for JSON does not overrule the
    name; any error is one line naming the file, never a JSON one, and byte 0 where the cut
    falls inside the first packet (its end read here by hand: tag 0a, varint length)."""
    from traceconv.io import Source

    assert any(p.name.startswith("rocprofv3_") for p in PERFETTO_NAMED)
    data = trace.read_bytes()
    assert data[0] == 0x0A
    length, shift, at = 0, 0, 1
    while True:
        length |= (data[at] & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if data[at - 1] < 0x80:
            break
    first_packet_end = at + length
    suffix = next(s for s in (".pftrace", ".perfetto-trace", ".perfetto") if trace.name.endswith(s))
    for size in range(1, 65):
        path = tmp_path / f"cut{size}{suffix}"
        path.write_bytes(data[:size])
        assert registry.detect(Source(str(path))).name == "perfetto", size
        result = CliRunner().invoke(app, ["info", str(path)])
        if size < first_packet_end:
            assert result.exit_code == 1, size
        if result.exit_code:
            (line,) = result.output.strip().splitlines()
            assert line.startswith(f"traceconv: error: {path}:"), (size, line)
            assert "JSON" not in line, (size, line)
            if size < first_packet_end:
                assert line.startswith(f"traceconv: error: {path}:byte offset 0: "), size


def test_a_confident_content_match_still_overrules_the_name(tmp_path: Path):
    """Chrome JSON saved as .pftrace ("ph" near its start) is read as JSON."""
    path = tmp_path / "misnamed.pftrace"
    path.write_text('[{"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]')
    assert registry.detect(traceconv.io.Source(str(path))).name == "chrome"

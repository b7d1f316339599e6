"""The command line's first ten minutes (issue #28): never destroy an input, never dump
binary into a terminal, start fast, fit the terminal, teach (examples, did-you-mean),
show progress whatever the input, fail clearly, print readable results."""

from __future__ import annotations

import gzip
import importlib.util
import io
import os
import pty
import select
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

import traceconv
from tests.conftest import DATA, SAMPLES
from traceconv.batch import plan
from traceconv.cli import COMMANDS, app
from traceconv.errors import OutputError
from traceconv.output_names import output_name

CNN = SAMPLES / "torch" / "cnn_step5.pt.trace.json"          # 1.1 MB, Kineto, CPU memory
CUDA = SAMPLES / "torch" / "streams_graph_nccl_cuda.pt.trace.json.gz"   # device "CUDA:0"
RESNET = SAMPLES / "torch" / "resnet18_train_cuda.pt.trace.json.gz"
MEGENGINE = SAMPLES / "megengine" / "convnet_lar_embed_profile.json"
PADDLE_A, PADDLE_B = (str(DATA / "paddle" / f"gpu_{w}_report.txt") for w in ("before", "after"))
TRACECONV = [sys.executable, "-m", "traceconv"]


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), env=env)


def one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("traceconv: error: "), result.output
    return lines[0]


@pytest.fixture
def trace_json(tmp_path: Path) -> Path:
    path = tmp_path / "x.json"
    shutil.copy(CNN, path)
    return path


# 1. An output never replaces an input ----------------------------------------------------

def test_default_name_of_chrome_to_chrome_steps_aside(trace_json: Path):
    before = trace_json.read_bytes()
    result = run(str(trace_json), "--to", "chrome")
    assert result.exit_code == 0, result.output
    assert trace_json.read_bytes() == before
    written = trace_json.with_name("x.chrome.json")
    assert orjson.loads(written.read_bytes())["traceEvents"]
    assert result.stderr.strip().splitlines()[-1] == f"wrote {written}"


def _same_file_spellings(path: Path) -> dict[str, Path]:
    link, hard = path.with_name("link.json"), path.with_name("hard.json")
    link.symlink_to(path.name)
    os.link(path, hard)
    return {"same": path, "dotted": path.parent / "." / path.name, "symlink": link,
            "hardlink": hard}


@pytest.mark.parametrize("spelling", ["same", "dotted", "symlink", "hardlink"])
def test_an_output_that_is_the_input_is_refused(trace_json: Path, spelling: str):
    target = _same_file_spellings(trace_json)[spelling]
    before = trace_json.read_bytes()
    for args in ([str(trace_json), "-o", str(target)],
                 ["memflow", str(trace_json), "-o", str(target)],
                 ["report", str(trace_json), "-o", str(target)],
                 ["critical-path", str(trace_json), "--highlight", "-o", str(target)],
                 ["diff", str(CNN), str(trace_json), "-o", str(target)]):
        result = run(*args)
        assert result.exit_code == 1, (args, result.output)
        line = one_error_line(result)
        assert f"{target}: the output would replace the input {trace_json}" in line
    assert trace_json.read_bytes() == before
    assert sorted(p.name for p in trace_json.parent.iterdir()) == [   # nothing written
        "hard.json", "link.json", "x.json"]


def test_the_api_refuses_too(trace_json: Path):
    before = trace_json.read_bytes()
    with pytest.raises(OutputError, match="would replace the input"):
        traceconv.convert(trace_json, trace_json.parent / "." / "x.json")
    trace = traceconv.load(trace_json)
    with pytest.raises(OutputError, match="would replace the input"):
        traceconv.save(trace, trace_json)
    with pytest.raises(OutputError, match="would replace the input"):   # merged: both inputs
        traceconv.save(traceconv.combine([traceconv.load(CNN), trace]), trace_json)
    assert trace_json.read_bytes() == before
    traceconv.save(trace, trace_json.with_name("other.json"))   # anything else is fine


def test_convert_and_batch_share_the_naming_rule(tmp_path: Path):
    names = ["runs/rank0.pt.trace.json.gz", "b/profile.json", "c/report.txt",
             "d/x.paddle_trace.pb", "e/trace"]
    for to in ("perfetto", "chrome", "svg"):
        planned = [t.output for t in plan(names, "out", to)]
        assert planned == [output_name([n], to, outdir="out") for n in names]
        beside = [output_name([n], to) for n in names]
        same = [os.path.basename(p) == os.path.basename(q) for p, q in
                zip(beside, planned, strict=True)]
        # beside its input, b/profile.json as chrome would be the input: it steps aside
        assert same == [True, to != "chrome", True, True, True]
    # hand-written expectations of the rule (the module docstring's)
    assert [output_name([n], "perfetto") for n in names] == [
        "runs/rank0.pftrace", "b/profile.pftrace", "c/report.pftrace", "d/x.pftrace",
        "e/trace.pftrace"]


def test_batch_into_the_inputs_folder_keeps_every_input(tmp_path: Path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    shutil.copy(CNN, a)
    shutil.copy(CNN, b)
    result = run("batch", str(a), str(b), "-o", str(tmp_path), "--to", "chrome", "-j", "1")
    assert result.exit_code == 0, result.output
    assert a.read_bytes() == b.read_bytes() == CNN.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.chrome.json", "a.json", "b.chrome.json", "b.json"]
    merged = run("batch", str(a), "-o", str(tmp_path), "--to", "chrome", "--merge")
    assert merged.exit_code == 0   # merged.json is no input: fine
    tmp_merged = tmp_path / "merged.json"
    refused = run("batch", str(tmp_merged), "-o", str(tmp_path), "--to", "chrome", "--merge")
    assert refused.exit_code == 1 and "would replace the input" in refused.stderr


# 2. Binary formats are never written to a terminal ---------------------------------------

def _run_on_a_terminal(args: list[str], stdin: Path) -> tuple[int, bytes, str]:
    """Run the real command with a pseudo-terminal as standard output."""
    try:
        master, slave = pty.openpty()
    except OSError:   # a sandbox without /dev/ptmx
        pytest.skip("no pseudo-terminals here")
    with stdin.open("rb") as source:
        process = subprocess.Popen(args, stdin=source, stdout=slave, stderr=subprocess.PIPE)
        os.close(slave)
        shown = b""
        while True:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:   # the other side closed
                    break
                if not chunk:
                    break
                shown += chunk
            elif process.poll() is not None:
                break
        stderr = process.stderr.read().decode() if process.stderr else ""
        code = process.wait(timeout=60)
    os.close(master)
    return code, shown, stderr


@pytest.mark.parametrize("args", [["-", "--to", "perfetto"], ["-", "-o", "-", "--to", "perfetto"]],
                         ids=["stdin-no-o", "explicit-stdout"])
def test_no_protobuf_onto_a_terminal(args: list[str]):
    code, shown, stderr = _run_on_a_terminal([*TRACECONV, *args], CNN)
    assert code == 2
    assert shown == b""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "binary" in lines[0] and "-o out.pftrace" in lines[0]


@pytest.mark.slow
def test_binary_to_a_pipe_and_text_to_a_terminal_still_work():
    piped = subprocess.run([*TRACECONV, "-", "--to", "perfetto"], stdin=CNN.open("rb"),
                           capture_output=True, check=False)
    assert piped.returncode == 0 and len(piped.stdout) > 100_000
    code, shown, _ = _run_on_a_terminal([*TRACECONV, "-", "--to", "chrome"], CNN)
    assert code == 0 and b"traceEvents" in shown


# 3. Lazy commands ------------------------------------------------------------------------

def imported(*args: str) -> set[str]:
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "traceconv", *args],
                         capture_output=True, text=True, check=False)
    return {line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


NOT_FOR_INFO = {"networkx", "svgwrite", "dask", "distributed", "concurrent.futures",
                "multiprocessing", "pydantic", "ray"}


def test_info_imports_only_what_it_runs():
    names = imported("info", str(CNN), "--json")
    assert "numpy" in names   # the model's columns: it does run that
    assert not sorted(n for n in names if n in NOT_FOR_INFO or n.split(".")[0] in NOT_FOR_INFO)


@pytest.mark.slow
@pytest.mark.parametrize("command", [None, *sorted(COMMANDS)])
def test_help_imports_no_numpy(command: str | None):
    names = imported(*([command] if command else []), "--help")
    assert "click" in names
    heavy = {"numpy", "networkx", "svgwrite", "dask", "pydantic", "traceconv.model"}
    assert not sorted(n for n in names if n in heavy or n.split(".")[0] in heavy)


def test_option_choices_match_the_analyses():
    from traceconv.analysis.align import MODES
    from traceconv.analysis.summary import AGGREGATES
    from traceconv.cli import options
    from traceconv.formats.memflow_svg import COLOR_BY, HEIGHT_RANGE, WIDTH_RANGE

    assert (options.ALIGN_MODES, options.AGGREGATES, options.COLOR_BY, options.PICTURE_WIDTH,
            options.PICTURE_HEIGHT) == (MODES, AGGREGATES, COLOR_BY, WIDTH_RANGE, HEIGHT_RANGE)


def test_the_command_table_names_every_command():
    from traceconv.cli.app import load_commands

    load_commands()
    assert set(COMMANDS) == set(app.commands)


# 4. Tables fit the terminal; examples; did-you-mean; device names -------------------------

TABLE_COMMANDS = {
    "info": ["info", str(CNN)],
    "info-rank": ["info", str(SAMPLES / "torch/ddp_gloo_rank0.pt.trace.json.gz"),
                  str(SAMPLES / "torch/ddp_gloo_rank1.pt.trace.json.gz")],
    "summary-timeline": ["summary", str(CUDA)],
    "summary-megengine": ["summary", str(MEGENGINE), "--show-host"],
    "summary-ranks": ["summary", str(SAMPLES / "torch/ddp_gloo_rank0.pt.trace.json.gz"),
                      str(SAMPLES / "torch/ddp_gloo_rank1.pt.trace.json.gz")],
    "advise": ["advise", str(CUDA)],
    "critical-path": ["critical-path", str(CUDA)],
    "diff-timeline": ["diff", str(CNN), str(CUDA)],
    "diff-report": ["diff", PADDLE_A, PADDLE_B],
    "check": ["check", str(CNN)],
    "formats": ["formats"],
    "memory": ["memory", str(SAMPLES / "torch/resnet18_train_snapshot.pickle.gz"), "--depth", "3"],
    "memory-change": ["memory", str(SAMPLES / "torch/resnet18_train_snapshot.pickle.gz"),
                      str(SAMPLES / "torch/flexgen_opt_oom_snapshot.pickle.gz")],
}


@pytest.mark.slow
@pytest.mark.parametrize("width", [80, 60])
@pytest.mark.parametrize("name", sorted(TABLE_COMMANDS))
def test_every_table_fits_the_terminal(name: str, width: int):
    result = run(*TABLE_COMMANDS[name], env={"COLUMNS": str(width)})
    assert result.exit_code in (0, 1), result.output   # check exits 1 on errors it lists
    widest = max(len(line) for line in result.stdout.splitlines())
    assert widest <= width, f"{name}: a {widest}-column line in {width} columns"


def test_wide_draws_the_natural_width():
    narrow = run("summary", str(CUDA), env={"COLUMNS": "80"})
    wide = run("summary", str(CUDA), "--wide", env={"COLUMNS": "80"})
    assert max(map(len, narrow.stdout.splitlines())) <= 80
    assert max(map(len, wide.stdout.splitlines())) > 120
    # narrow: columns are hidden (and said so), names elided; numbers stay whole (the
    # README's 45.377ms and 160.404us)
    assert "columns hidden at 80 columns: --wide shows them" in narrow.stdout
    assert "45.377ms" in narrow.stdout and "160.404us" in narrow.stdout
    assert "45.377ms" in wide.stdout and "160.404us" in wide.stdout


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_help_shows_an_example(command: str):
    result = run(command, "--help")
    assert result.exit_code == 0
    spelled = "traceconv " + command
    examples = [line for line in result.stdout.splitlines() if line.strip().startswith(spelled)
                or (command == "convert" and line.strip().startswith("traceconv "))]
    assert examples, f"`traceconv {command} --help` shows no example invocation"


def test_a_mistyped_command_gets_a_suggestion(tmp_path: Path):
    result = run("infos", str(CNN))
    assert result.exit_code == 2
    assert "did you mean 'info'?" in one_error_line(result)
    result = run("critcal-path", str(CNN))
    assert result.exit_code == 2 and "did you mean 'critical-path'?" in result.stderr
    # a real file of that name is an input, not a typo; a far-off name is a missing file
    assert run("nothing-like-a-command.json", "--to", "chrome").stderr.count("No such file") == 1


def test_a_mistyped_format_gets_a_suggestion(trace_json: Path):
    result = run(str(trace_json), "--to", "perfeto")
    assert result.exit_code == 1 and "did you mean 'perfetto'?" in one_error_line(result)
    result = run("batch", str(trace_json), "-o", str(trace_json.parent / "o"), "--to", "chrom")
    assert result.exit_code == 1 and "did you mean 'chrome'?" in result.stderr


def test_device_names_match_whatever_their_case(tmp_path: Path):
    svgs = {}
    for spelling in ("CUDA:0", "cuda:0", "Cuda:0"):
        out = tmp_path / f"{spelling.replace(':', '_')}.svg"
        result = run("memflow", str(RESNET), "--device", spelling, "-o", str(out))
        assert result.exit_code == 0, result.output
        svgs[spelling] = out.read_bytes()
    assert svgs["cuda:0"] == svgs["CUDA:0"] == svgs["Cuda:0"]
    result = run("memflow", str(RESNET), "--device", "cuda:7", "-o", str(tmp_path / "n.svg"))
    assert result.exit_code == 1 and "'CUDA:0'" in result.stderr


# 5. Progress whatever the input ----------------------------------------------------------

def _big_trace(events: int) -> bytes:
    rows = b",".join(b'{"ph":"X","name":"op%d","ts":%d,"dur":1,"pid":1,"tid":1}' % (i, i)
                     for i in range(events))
    return b'{"traceEvents":[' + rows + b"]}"


def _bar_text(paths: list[str], read) -> str:
    from rich.console import Console

    from traceconv.cli.progress import reading

    shown = io.StringIO()
    console = Console(file=shown, force_terminal=True, width=120)
    with reading(paths, enabled=True, console=console) as per_file:
        read(per_file(0))
    return shown.getvalue()


@pytest.mark.slow
def test_progress_of_a_small_gz_that_expands(tmp_path: Path):
    data = _big_trace(400_000)   # ~23 MB of JSON, ~1.5 MB gzipped: under the plain-file mark
    path = tmp_path / "big.json.gz"
    path.write_bytes(gzip.compress(data, 1))
    assert path.stat().st_size < 16 << 20 < len(data)
    shown = _bar_text([str(path)], lambda progress: traceconv.load(path, progress=progress))
    assert "reading big.json.gz" in shown and "→ 2" in shown   # ~23 MiB decompressed
    assert "400,000 events" in shown   # the last figure the reader gave: all of them


@pytest.mark.slow
def test_progress_of_standard_input(monkeypatch: pytest.MonkeyPatch):
    data = _big_trace(400_000)

    class Stdin:
        buffer = io.BytesIO(data)

    monkeypatch.setattr(sys, "stdin", Stdin)
    shown = _bar_text(["-"], lambda progress: traceconv.load("-", progress=progress))
    assert "reading <stdin>" in shown


def test_no_bar_for_a_small_input():
    assert _bar_text([str(CNN)], lambda progress: traceconv.load(CNN, progress=progress)) == ""


# 6. Clear errors, readable results, no files left behind ---------------------------------

@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="dask.distributed is an optional extra")
def test_an_unreachable_dask_scheduler_is_one_line(tmp_path: Path):
    with socket.socket() as probe:   # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = run("batch", str(CNN), "-o", str(tmp_path), "--to", "chrome", "--engine", "dask",
                 "--address", f"tcp://127.0.0.1:{port}", "--connect-timeout", "1")
    assert result.exit_code == 1
    line = one_error_line(result)
    assert f"no scheduler answered at tcp://127.0.0.1:{port} within 1 s" in line
    assert "internal error" not in line


def test_result_types_print_readably():
    trace = traceconv.load(CUDA)
    from traceconv.analysis.advise import advise
    from traceconv.analysis.critical_path import critical_path
    from traceconv.analysis.timeline_diff import timeline_diff

    for value in (trace.diagnostics, traceconv.check(CNN), advise(trace),
                  critical_path(trace), timeline_diff(trace, trace, None), trace):
        text = repr(value)
        assert " object at 0x" not in text and len(text) < 600, text
    assert repr(trace.diagnostics).startswith("<Diagnostics: ")
    assert "chrome.flow_dangling ×" in repr(trace.diagnostics) or len(trace.diagnostics) == 0


def test_outputs_beside_the_samples_are_not_samples(tmp_path: Path, monkeypatch):
    """Running the README's quick start in a checkout writes samples/torch/cnn_step5.pftrace;
    the tests that list samples list what the project holds, so they do not trip on it."""
    import tests.conftest as conftest

    repo = tmp_path / "repo"
    (repo / "samples").mkdir(parents=True)
    shutil.copy(CNN, repo / "samples" / "cnn.pt.trace.json")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "samples"], cwd=repo, check=True)
    (repo / "samples" / "cnn.pftrace").write_bytes(b"written by the README")
    monkeypatch.setattr(conftest, "ROOT", repo)
    assert conftest.bundled_files(repo / "samples") == [repo / "samples" / "cnn.pt.trace.json"]

"""The one way out (issue 33, item 4): every file traceconv writes goes through
:mod:`traceconv.output_files`, and each class of the audit is tried on every writer format
(from the registry) and every command that writes.

Classes: derived names written through planted links; an input replaced through standard
input; an interrupted re-split leaving the old manifest; a full disk, a file where a folder
is expected and a full standard output ending in a traceback or a partial file.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import pickle
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from tests.write_calls import write_calls
from traceconv import output_files, registry, special_files
from traceconv.cli import app
from traceconv.errors import OutputError
from traceconv.outputs import ChosenPath
from traceconv.splitting.route import Spill

ROOT = Path(__file__).resolve().parent.parent
WRITERS = sorted(f.name for f in registry.all_formats() if f.writes)
EXTENSION = {f.name: f.default_extension for f in registry.all_formats() if f.writes}
INPUT = "run.pt.trace.json"     # every name traceconv derives from it starts with "run"
TRACECONV = [sys.executable, "-m", "traceconv"]


def tiny_trace(steps: int) -> bytes:
    """A Kineto trace of ``steps`` steps, each with one op and one memory block: small, and
    enough for every writer (the SVG needs memory blocks, graphml and dot ops)."""
    events = []
    for i in range(steps):
        start = i * 100
        memory = {"Device Type": 0, "Device Id": -1, "Addr": 4096 * (i + 1)}
        events += [
            {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i + 1}", "pid": 1,
             "tid": 1, "ts": start, "dur": 100},
            {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1,
             "ts": start + 10, "dur": 20, "args": {"External id": i + 1}},
            {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1,
             "tid": 1, "ts": start + 12, "args": {**memory, "Bytes": 512}},
            {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1,
             "tid": 1, "ts": start + 90, "args": {**memory, "Bytes": -512}}]
    return json.dumps({"schemaVersion": 1, "traceEvents": events}).encode()


@pytest.fixture
def work(tmp_path: Path, monkeypatch) -> Path:
    """A folder holding ``run.pt.trace.json`` (3 steps), as the current directory."""
    (tmp_path / INPUT).write_bytes(tiny_trace(3))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(special_files, "FIFO_WAIT_SECONDS", 0.2)   # a followed FIFO: fast
    return tmp_path


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def one_error_line(result, *parts: str) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 1, result.output
    assert len(lines) == 1 and lines[0].startswith("traceconv: error: "), result.stderr
    assert "internal error" not in lines[0] and "Traceback" not in result.output
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


def leftovers(folder: Path) -> list[str]:
    """Hidden temporary files or folders of an output left behind."""
    return sorted(p.name for p in folder.rglob(".traceconv-*"))


# -- nothing but the layer writes --------------------------------------------------------

def test_nothing_but_the_output_layer_writes_files():
    layer = ROOT / "traceconv" / "output_files.py"
    found = {f"{path.relative_to(ROOT)}:{line}: {why}"
             for path in sorted((ROOT / "traceconv").rglob("*.py")) if path != layer
             for line, why in write_calls(path.read_text(encoding="utf-8"))}
    assert not found, "write through traceconv.output_files:\n" + "\n".join(sorted(found))
    assert write_calls(layer.read_text(encoding="utf-8"))   # (the finder sees the layer's)


WRITING_SNIPPETS = [
    *(f"open(p, {mode!r})" for mode in ("w", "wb", "a", "ab", "x", "r+", "rb+", "w+b")),
    *(f"open(p, mode={mode!r})" for mode in ("w", "ab")),
    "open(p, m)", "io.open(p, 'w')", "os.fdopen(fd, 'wb')", "gzip.open(p, 'wt')",
    "gzip.GzipFile(fileobj=f, mode='wb')", "lzma.open(p, 'w')", "bz2.open(p, 'wb')",
    "os.open(p, os.O_WRONLY | os.O_CREAT)", "os.open(p, flags=os.O_RDWR)",
    *(f"os.{name}(p)" for name in ("replace", "rename", "remove", "unlink", "makedirs",
                                   "mkdir", "symlink", "chmod", "truncate", "rmdir")),
    *(f"shutil.{name}(a, b)" for name in ("copy", "copy2", "copyfile", "move", "rmtree")),
    *(f"Path(p).{name}(x)" for name in ("write_bytes", "write_text", "touch", "mkdir",
                                        "symlink_to", "unlink", "rename")),
    "np.save(p, a)", "a.tofile(p)", "import tempfile", "from tempfile import mkstemp",
    "from os import replace", "from shutil import move", "tempfile.mkdtemp()",
]


@pytest.mark.parametrize("snippet", WRITING_SNIPPETS)
def test_the_finder_sees_every_way_of_writing(snippet: str):
    assert write_calls(snippet), snippet


@pytest.mark.parametrize("snippet", ["open(p)", "open(p, 'rb')", "open(p, mode='r')",
                                     "gzip.GzipFile(fileobj=f, mode='rb')",
                                     "os.open(p, os.O_RDONLY | os.O_NONBLOCK)", "s.replace('a', 'b')",
                                     "os.stat(p)", "shutil.copyfileobj(a, b)", "import os"])
def test_the_finder_leaves_reading_alone(snippet: str):
    assert write_calls(snippet) == [], snippet


# -- names traceconv chooses are never written through ---------------------------------

def _plant(kind: str, at: Path, victims: Path) -> Callable[[], None]:
    """Put ``kind`` at ``at``; return a check that what it pointed to is untouched."""
    victim = victims / at.name
    if kind == "link":
        victim.write_bytes(b"victim")
        at.symlink_to(victim)
        return lambda: victim.read_bytes() == b"victim" or pytest.fail(f"{victim} changed")
    if kind == "dangling-link":
        at.symlink_to(victim)
        return lambda: not victim.exists() or pytest.fail(f"{victim} was created")
    if kind == "folder-link":
        victim.mkdir()
        at.symlink_to(victim)
        return lambda: not any(victim.iterdir()) or pytest.fail(f"wrote into {victim}")
    assert kind == "fifo"
    os.mkfifo(at)
    return lambda: None


PLANTED = ("link", "dangling-link", "folder-link", "fifo")


def _chosen_cases() -> dict[str, tuple[list[str], list[str]]]:
    """case → (arguments, the names traceconv chooses for it), by the rule of
    :mod:`traceconv.outputs`, written out by hand."""
    cases = {}
    for to in WRITERS:
        ext = EXTENSION[to]
        cases[f"convert-{to}"] = (["convert", INPUT, "--to", to], [f"run{ext}"])
        cases[f"batch-{to}"] = (["batch", INPUT, "-o", "out", "--to", to, "-j", "1"],
                                [f"out/run{ext}"])
        cases[f"batch-merge-{to}"] = (["batch", INPUT, "-o", "out", "--to", to, "--merge",
                                       "-j", "1"], [f"out/merged{ext}"])
    cases["memflow"] = (["memflow", INPUT], ["run.svg"])
    cases["critical-path"] = (["critical-path", INPUT, "--highlight"],
                              ["run_critical_path.pftrace"])
    pieces = [f"out/run-{i}-step{i + 1}.json" for i in range(3)]
    cases["split"] = (["split", INPUT, "--by", "step", "-o", "out"],
                      [*pieces, "out/overview.pftrace", "out/manifest.json"])
    # (one piece per step: --to perfetto would group these small steps into one piece)
    cases["split-perfetto"] = (["split", INPUT, "--by", "step", "-o", "out", "--to", "perfetto",
                                "--target-size", "0"],
                               [*pieces, *(p.replace(".json", ".pftrace") for p in pieces),
                                "out/overview.pftrace", "out/manifest.json"])
    return cases


CHOSEN = _chosen_cases()


@pytest.mark.slow
@pytest.mark.parametrize("kind", PLANTED)
@pytest.mark.parametrize("case", sorted(CHOSEN))
def test_a_chosen_name_is_never_written_through(work: Path, case: str, kind: str):
    args, names = CHOSEN[case]
    victims = work / "victims"
    victims.mkdir()
    (work / "out").mkdir()
    untouched = [_plant(kind, work / name, victims) for name in names]
    result = run(*args)
    assert result.exit_code == 0, result.output
    for check in untouched:
        check()
    kept = [name for name in names if (work / name).exists()]   # (JSON pieces converted
    assert all(stat.S_ISREG(os.lstat(work / n).st_mode) for n in kept), kept  # and removed)
    assert kept and leftovers(work) == []


def test_batch_tasks_keep_the_chosen_mark_on_their_way_to_workers(work: Path):
    # local -j N, dask and ray pickle the tasks to other processes: the mark must survive,
    # the numbered names of repeated stems included
    from traceconv.batch import plan

    tasks = plan([INPUT, f"a/{INPUT}", f"b/{INPUT}"], "out", "chrome")
    assert [t.output for t in tasks] == ["out/run.json", "out/run-2.json", "out/run-3.json"]
    for task in pickle.loads(pickle.dumps(tasks)):
        assert isinstance(task.output, ChosenPath), task


def test_an_output_named_by_the_user_still_writes_through_its_link(work: Path):
    # (the documented rule for -o: the link stays, the file it points to is replaced)
    real = work / "real.json"
    real.write_bytes(b"old")
    (work / "link.json").symlink_to(real)
    assert run(INPUT, "--to", "chrome", "-o", "link.json").exit_code == 0
    assert (work / "link.json").is_symlink() and json.loads(real.read_bytes())["traceEvents"]


# -- an input is never replaced, standard input included ---------------------------------

@contextlib.contextmanager
def stdin_from(path: Path) -> Iterator[bytes]:
    """File descriptor 0 reads ``path`` for the block (as ``< path`` in a shell)."""
    saved = os.dup(0)
    with open(path, "rb") as source:
        os.dup2(source.fileno(), 0)
    try:
        yield path.read_bytes()
    finally:
        os.dup2(saved, 0)
        os.close(saved)


def _stdin_cases() -> dict[str, list[str]]:
    """case → arguments that read standard input and write the file named TARGET."""
    cases = {f"convert-{to}": ["-", "--to", to, "-o", "TARGET"] for to in WRITERS}
    cases |= {"json": ["json", "-", "TARGET"], "report": ["report", "-", "-o", "TARGET"],
              "memflow": ["memflow", "-", "-o", "TARGET"],
              "critical-path": ["critical-path", "-", "--highlight", "-o", "TARGET"],
              "batch-merge": ["batch", "-", "-o", ".", "--to", "chrome", "--merge"]}
    return cases


STDIN_CASES = _stdin_cases()


@pytest.mark.parametrize("spelling", ["same", "hardlink"])
@pytest.mark.parametrize("case", sorted(STDIN_CASES))
def test_the_file_standard_input_reads_is_never_replaced(work: Path, case: str,
                                                         spelling: str):
    source = work / INPUT
    if case == "batch-merge":
        source = source.rename(work / "merged.json")
    target = source if spelling == "same" else work / "hard.json"
    if spelling == "hardlink":
        os.link(source, target)
    args = [str(target.name) if a == "TARGET" else a for a in STDIN_CASES[case]]
    with stdin_from(source) as before:
        result = CliRunner().invoke(app, args, input=before)
    assert result.exit_code == 1, result.output
    assert "would replace the input <stdin>" in result.output
    assert source.read_bytes() == before


def test_perfetto_forms_keep_the_input_read_from_standard_input(work: Path):
    # the audit's reproducer, in a real shell: traceconv json - p.pftrace < p.pftrace
    pftrace = work / "p.pftrace"
    traceconv.convert(work / INPUT, pftrace)
    before = pftrace.read_bytes()
    for form in ("json", "text"):
        done = subprocess.run(f"{' '.join(TRACECONV)} {form} - p.pftrace < p.pftrace",
                              shell=True, cwd=work, capture_output=True, text=True,
                              env=_env(), timeout=120)
        assert done.returncode == 1, done.stderr
        assert done.stderr.strip() == ("traceconv: error: p.pftrace: the output would replace "
                                       "the input <stdin>; choose another output name")
        assert pftrace.read_bytes() == before


def test_standard_output_that_is_the_input_is_refused(work: Path):
    before = (work / INPUT).read_bytes()
    done = subprocess.run(f"{' '.join(TRACECONV)} {INPUT} --to chrome -o - 1<>{INPUT}",
                          shell=True, cwd=work, capture_output=True, text=True, env=_env(),
                          timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip() == (f"traceconv: error: <stdout>: the output would replace the "
                                   f"input {INPUT}; choose another output name")
    assert (work / INPUT).read_bytes() == before


def test_the_api_refuses_standard_inputs_file_too(work: Path):
    script = ("import traceconv\nt = traceconv.load('-')\n"
              f"traceconv.save(t, {INPUT!r}, format='chrome')\n")
    before = (work / INPUT).read_bytes()
    with open(work / INPUT, "rb") as stdin:
        done = subprocess.run([sys.executable, "-c", script], stdin=stdin, cwd=work,
                              capture_output=True, text=True, env=_env(), timeout=120)
    assert done.returncode == 1 and "OutputError" in done.stderr
    assert "would replace the input <stdin>" in done.stderr
    assert (work / INPUT).read_bytes() == before


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}


# -- split: the manifest on disk always describes the pieces beside it ------------------

def _recording(monkeypatch) -> list[tuple[str, str]]:
    """Record, in order, what split writes and removes: ("write" | "remove", file name)."""
    import traceconv.splitting as splitting

    events: list[tuple[str, str]] = []
    real_write, real_remove = splitting.atomic_output, splitting.remove_output

    def write(path, **kwargs):
        events.append(("write", os.path.basename(path)))
        return real_write(path, **kwargs)

    def remove(path, **kwargs):
        events.append(("remove", os.path.basename(path)))
        return real_remove(path, **kwargs)

    real_publish = Spill.publish

    def publish(self, window, target, inputs):   # (a piece is moved into place)
        events.append(("write", os.path.basename(target)))
        return real_publish(self, window, target, inputs)

    monkeypatch.setattr(splitting, "atomic_output", write)
    monkeypatch.setattr(splitting, "remove_output", remove)
    monkeypatch.setattr(Spill, "publish", publish)
    return events


@pytest.mark.parametrize("by", ["step", "time=150us"])
def test_a_resplit_removes_the_old_manifest_first_and_writes_the_new_one_last(
        work: Path, monkeypatch, by: str):
    assert run("split", INPUT, "--by", by, "-o", "out").exit_code == 0
    events = _recording(monkeypatch)
    assert run("split", INPUT, "--by", by, "-o", "out").exit_code == 0
    first_piece = next(i for i, (what, name) in enumerate(events) if name != "manifest.json")
    assert ("remove", "manifest.json") in events[:first_piece]
    assert events[-1] == ("write", "manifest.json")
    assert events.count(("write", "manifest.json")) == 1


@pytest.mark.parametrize("failure", ["interrupt", "full-disk"])
@pytest.mark.parametrize("stop_at", [0, 1, 2])
@pytest.mark.parametrize("to", ["chrome", "perfetto"])
def test_an_interrupted_resplit_leaves_no_manifest(work: Path, monkeypatch, stop_at: int,
                                                   failure: str, to: str):
    # one piece per step (--target-size 0), so that the run can stop between pieces
    one_per_step = ("--target-size", "0")
    assert run("split", INPUT, "--by", "step", "-o", "out", "--to", to,
               *one_per_step).exit_code == 0
    assert (work / "out" / "manifest.json").exists()
    real = Spill.publish
    written = []

    def failing(self, window, target, inputs):   # (a piece is moved into place)
        written.append(target)
        if len(written) > stop_at:
            if failure == "interrupt":
                raise KeyboardInterrupt
            raise OutputError("cannot write: No space left on device", file=target)
        return real(self, window, target, inputs)

    monkeypatch.setattr(Spill, "publish", failing)
    result = run("split", INPUT, "--by", "step", "-o", "out", "--to", to, *one_per_step)
    assert result.exit_code == (130 if failure == "interrupt" else 1), result.output
    assert not (work / "out" / "manifest.json").exists()
    assert leftovers(work) == []


# -- a full disk, a file where a folder is expected, a full standard output -------------

def _writing_cases(out: str, folder: str) -> dict[str, list[str]]:
    """case → arguments of every command that writes: ``out`` is the output file (its
    extension added per format), ``folder`` the output folder."""
    cases = {f"convert-{to}": [INPUT, "--to", to, "-o", out + EXTENSION[to]] for to in WRITERS}
    cases |= {f"batch-{to}": ["batch", INPUT, "-o", folder, "--to", to, "-j", "1"]
              for to in WRITERS}
    cases |= {"split": ["split", INPUT, "-o", folder],
              "report": ["report", INPUT, "-o", out + ".html"],
              "memflow": ["memflow", INPUT, "-o", out + ".svg"],
              "critical-path": ["critical-path", INPUT, "--highlight", "-o", out + ".pftrace"],
              "diff": ["diff", INPUT, INPUT, "-o", out + ".pftrace"],
              "json": ["json", "p.pftrace", out + ".json"],
              "text": ["text", "p.pftrace", out + ".txt"]}
    return cases


WRITING = sorted(_writing_cases("o", "d"))


@pytest.fixture
def with_pftrace(work: Path) -> Path:
    traceconv.convert(work / INPUT, work / "p.pftrace")
    return work


@pytest.mark.parametrize("case", WRITING)
def test_a_file_where_a_folder_is_expected(with_pftrace: Path, case: str):
    work = with_pftrace
    (work / "afile").write_bytes(b"a file")
    for out, folder in (("afile/o", "afile"), ("afile/sub/o", "afile/sub")):
        result = run(*_writing_cases(out, folder)[case])
        line = one_error_line(result, "afile")
        assert "is a file, not a folder" in line or "a file is where the output folder" in line
    assert (work / "afile").read_bytes() == b"a file"


@pytest.mark.parametrize("to", WRITERS)
def test_a_writer_failing_on_a_full_disk_leaves_nothing(work: Path, monkeypatch, to: str):
    module = registry.get(to).load()

    def full(trace, out, **options):
        out.write(b"x" * 4096)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(module, "write", full)
    target = f"o{EXTENSION[to]}"
    one_error_line(run(INPUT, "--to", to, "-o", target),
                   f"{target}: cannot write: No space left on device")
    assert sorted(os.listdir(work)) == [INPUT]
    batch = run("batch", INPUT, "-o", "d", "--to", to, "-j", "1")
    one_error_line(batch, "cannot write: No space left on device")
    assert os.listdir(work / "d") == []


FILE_SIZE_LIMIT_SCRIPT = """
import json, os, resource, signal, sys
from click.testing import CliRunner
from traceconv.cli import app
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write past the limit fails: EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))
results = {}
for case, args in json.loads(sys.argv[1]).items():
    result = CliRunner().invoke(app, args)
    results[case] = [result.exit_code, result.stderr]
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def past_the_file_size_limit(tmp_path_factory) -> tuple[Path, dict[str, list]]:
    """Every writing command run once in a process whose files may not pass 16 bytes: a
    real failing write (EFBIG, as a full disk's ENOSPC) in every writer."""
    work = tmp_path_factory.mktemp("limit")
    (work / INPUT).write_bytes(tiny_trace(3))
    traceconv.convert(work / INPUT, work / "p.pftrace")
    cases = {case: [a.replace("@", case) for a in args]
             for case, args in _writing_cases("@", "@-dir").items()}
    done = subprocess.run([sys.executable, "-c", FILE_SIZE_LIMIT_SCRIPT, json.dumps(cases)],
                          cwd=work, capture_output=True, text=True, env=_env(), timeout=600)
    assert done.returncode == 0, done.stderr
    return work, json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("case", WRITING)
def test_a_failing_write_is_one_line_and_leaves_nothing(past_the_file_size_limit, case: str):
    work, results = past_the_file_size_limit
    exit_code, stderr = results[case]
    lines = stderr.strip().splitlines()
    assert exit_code == 1 and len(lines) == 1, stderr
    assert lines[0].startswith("traceconv: error: ") and "File too large" in lines[0], stderr
    assert case in lines[0]   # the output (or its folder) is named
    partial = [p.name for p in work.rglob(f"{case}*") if p.is_file() and p.stat().st_size]
    assert partial == [] and leftovers(work) == []


STDOUT_CASES = {**{f"convert-{to}": [INPUT, "--to", to, "-o", "-"] for to in WRITERS},
                "json": ["json", "p.pftrace"], "text": ["text", "p.pftrace"],
                "report": ["report", INPUT, "-o", "-"], "info": ["info", INPUT, "--json"],
                "summary": ["summary", INPUT], "formats": ["formats"]}   # (tables printed)

# Each case in a child process of its own (forked from one that imported traceconv once),
# whose standard output is /dev/full (full) or a pipe whose reader is gone (closed): the
# real descriptors and the interpreter's own last flush, as in a shell.
STDOUT_SCRIPT = """
import json, os, sys
from traceconv import registry
from traceconv.cli import main
from traceconv.cli.app import load_commands
load_commands()   # (imported once, before the children)
for info in registry.all_formats():
    info.load()
results = {}
for case, (args, how) in json.loads(sys.argv[1]).items():
    err_read, err_write = os.pipe()
    out_read, out_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(err_write, 2)
        if how == "full":
            os.dup2(os.open("/dev/full", os.O_WRONLY), 1)
        else:
            os.close(out_read)   # nobody reads: the first write fails (EPIPE)
            os.dup2(out_write, 1)
        sys.argv = ["traceconv", *args]
        main()   # (its SystemExit ends the child, through the interpreter's shutdown)
        sys.exit(0)
    os.close(err_write); os.close(out_write); os.close(out_read)
    with open(err_read, "rb") as stderr:
        text = stderr.read().decode()
    results[case] = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), text]
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def writing_to_a_failing_stdout(tmp_path_factory) -> dict[str, list]:
    work = tmp_path_factory.mktemp("stdout")
    (work / INPUT).write_bytes(tiny_trace(3))
    traceconv.convert(work / INPUT, work / "p.pftrace")
    cases = {f"full-{case}": (args, "full") for case, args in STDOUT_CASES.items()}
    cases |= {f"closed-{case}": (STDOUT_CASES[case], "closed")
              for case in ("convert-chrome", "text")}
    done = subprocess.run([sys.executable, "-c", STDOUT_SCRIPT, json.dumps(cases)], cwd=work,
                          capture_output=True, text=True, env=_env(), timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(STDOUT_CASES))
def test_a_full_standard_output_is_one_line(writing_to_a_failing_stdout, case: str):
    exit_code, stderr = writing_to_a_failing_stdout[f"full-{case}"]
    assert exit_code == 1, stderr
    assert stderr == "traceconv: error: <stdout>: cannot write: No space left on device\n"


@pytest.mark.slow
@pytest.mark.parametrize("case", ["convert-chrome", "text"])
def test_a_closed_standard_output_ends_quietly(writing_to_a_failing_stdout, case: str):
    # as other Unix tools do under `| head`: exit 1, nothing on stderr
    exit_code, stderr = writing_to_a_failing_stdout[f"closed-{case}"]
    assert exit_code == 1, stderr
    assert stderr == ""


def test_output_folder_and_remove_output_are_safe(tmp_path: Path):
    victim = tmp_path / "victim"
    victim.write_bytes(b"v")
    link = tmp_path / "manifest.json"
    link.symlink_to(victim)
    output_files.remove_output(link, inputs=())   # the link goes, never its file
    assert not link.is_symlink() and victim.read_bytes() == b"v"
    with pytest.raises(OutputError, match="would replace the input"):
        output_files.remove_output(victim, inputs=[victim])
    assert victim.exists()
    assert output_files.output_folder(tmp_path / "a" / "b") == str(tmp_path / "a" / "b")

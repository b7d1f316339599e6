"""``split --target-size``, empty windows, and pieces handed to workers.

Expected values come from a plain ``json`` read of the input: which time window each event
starts in (``floor((ts - first) / width)``), how many windows hold an event, how many
events there are; the pieces are read back the same way.
"""

from __future__ import annotations

import json
import math
import os
import random
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from traceconv.batch import open_pool, plan
from traceconv.batch.jobs import BatchResult, Task, convert_one
from traceconv.cli import app
from traceconv.splitting import split

ROOT = Path(__file__).resolve().parent.parent
CNN = ROOT / "samples" / "torch" / "cnn_step5.pt.trace.json"


def events_of(path: Path) -> list[dict]:
    return json.loads(path.read_text())["traceEvents"]


def own_events(events: list[dict]) -> list[dict]:
    """The events a piece holds of its own: not the repeated names, not carried copies."""
    return [e for e in events if e.get("ph") != "M"
            and not (isinstance(e.get("args"), dict) and e["args"].get("Pre-existing"))]


def key(e: dict) -> str:
    return json.dumps(e, sort_keys=True)


def pieces(outdir: Path) -> tuple[dict, list[list[dict]]]:
    manifest = json.loads((outdir / "manifest.json").read_text())
    return manifest, [events_of(outdir / p["file"]) for p in manifest["pieces"]]


def time_window_of(events: list[dict], width_us: float) -> tuple[list[int], int]:
    """The window of each event (by its start), and how many windows the span makes."""
    timed = [e["ts"] for e in events if e.get("ph") != "M" and isinstance(e.get("ts"), int | float)]
    first = min(timed)
    ends = [e["ts"] + e.get("dur", 0) if e.get("ph") == "X" else e["ts"] for e in events
            if e.get("ph") != "M" and isinstance(e.get("ts"), int | float)]
    count = math.floor((max(ends) - first) / width_us) + 1
    return [min(math.floor((e["ts"] - first) / width_us), count - 1) for e in events
            if e.get("ph") != "M"], count


@pytest.mark.slow
def test_empty_windows_are_not_written_but_counted(tmp_path):
    whole = events_of(CNN)
    windows, count = time_window_of(whole, 200.0)   # 200 us: many windows hold nothing
    split(CNN, tmp_path, by="time=200us")
    manifest, written = pieces(tmp_path)
    holding = set(windows)
    assert manifest["windows"] == count
    assert len(manifest["pieces"]) == len(holding) < count
    assert manifest["empty_windows"] == count - len(holding)
    assert sorted(p["index"] for p in manifest["pieces"]) == sorted(holding)
    # every event in exactly one piece
    assert Counter(key(e) for p in written for e in own_events(p)) \
        == Counter(key(e) for e in whole if e.get("ph") != "M")


@pytest.mark.parametrize("target", [60_000, 250_000])
def test_target_size_groups_consecutive_windows(tmp_path, target):
    whole = events_of(CNN)
    split(CNN, tmp_path, by="time=1ms", target_size=target)
    manifest, written = pieces(tmp_path)
    windows, _ = time_window_of(whole, 1000.0)
    assert manifest["windows"] == len(manifest["pieces"]) + manifest["empty_windows"]
    assert 1 < len(written) < len(set(windows))
    # every event in exactly one piece, in the piece whose windows hold its start
    assert Counter(key(e) for p in written for e in own_events(p)) \
        == Counter(key(e) for e in whole if e.get("ph") != "M")
    names = [e for e in whole if e.get("ph") == "M"]
    overhead = len(json.dumps(names)) + 2_000   # the names and the envelope, in every piece
    for entry in manifest["pieces"]:
        size = (tmp_path / entry["file"]).stat().st_size
        assert size == entry["bytes"]
        several = "-t" in entry["label"]
        assert size <= target * 1.1 + overhead or not several
    # consecutive pieces could not have been one (about the size asked for)
    sizes = [p["bytes"] for p in manifest["pieces"]]
    assert all(a + b > target * 0.9 for a, b in zip(sizes, sizes[1:], strict=False))


def test_plain_step_split_is_one_piece_per_step_and_then_groups(tmp_path):
    plain = split(CNN, tmp_path / "plain", by="step")
    assert [p["label"] for p in plain["pieces"]] == ["before", "step2", "step3", "step4"]
    converted = split(CNN, tmp_path / "then", by="step", then="perfetto")
    # the input is far below the 32 MB floor: one piece, converted
    assert [p["label"] for p in converted["pieces"]] == ["before-step4"]
    assert converted["converted"]["failed"] == []


def test_a_trace_out_of_time_order_splits_the_same(tmp_path):
    document = json.loads(CNN.read_text())
    random.Random(7).shuffle(document["traceEvents"])
    shuffled = tmp_path / "shuffled.json"
    shuffled.write_text(json.dumps(document))
    split(CNN, tmp_path / "a", by="step")
    split(shuffled, tmp_path / "b", by="step")
    _, ordered = pieces(tmp_path / "a")
    _, mixed = pieces(tmp_path / "b")
    assert [Counter(map(key, own_events(p))) for p in ordered] \
        == [Counter(map(key, own_events(p))) for p in mixed]


def test_a_step_that_never_ends_holds_the_rest(tmp_path):
    events = [{"ph": "X", "name": "ProfilerStep#1", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
              {"ph": "X", "name": "ProfilerStep#2", "ts": 10, "pid": 1, "tid": 1},  # no dur
              {"ph": "B", "name": "open", "ts": 12, "pid": 1, "tid": 1},             # no E
              {"ph": "X", "name": "late", "ts": 5000, "dur": 1, "pid": 1, "tid": 1}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    split(path, tmp_path / "out", by="step")
    manifest, written = pieces(tmp_path / "out")
    assert [p["label"] for p in manifest["pieces"]] == ["step1", "step2"]
    assert manifest["pieces"][1]["end"] is None
    assert [e["name"] for e in written[1]] == ["ProfilerStep#2", "open", "late"]


def dies_on_step3(task: Task) -> BatchResult:
    """Kills its own process on the step3 piece the first time (a marker file beside it
    says it already did), unless the piece's name asks to die every time."""
    marker = task.path + ".died"
    if "step3" in task.path and (not os.path.exists(marker) or "always" in task.path):
        Path(marker).touch()
        os._exit(3)
    return convert_one(task)


@pytest.mark.slow
@pytest.mark.parametrize("always", [False, True])
def test_a_worker_that_dies_is_retried_once_then_named(tmp_path, always):
    outdir = tmp_path / "out"
    manifest = split(CNN, outdir, by="step")
    files = [str(outdir / p["file"]) for p in manifest["pieces"]]
    if always:
        for i, f in enumerate(files):
            files[i] = f.replace("step3", "step3-always")
            os.rename(f, files[i])
    with open_pool(dies_on_step3, "local", jobs=2) as pool:
        for task in plan(files, str(outdir), "perfetto"):
            pool.submit(task)
        results = {Path(r.file).name: r for r in pool.results()}
    assert len(results) == 4
    failed = {name: r.error for name, r in results.items() if r.status != "ok"}
    if always:
        assert list(failed) == ["cnn_step5-2-step3-always.json"]
        assert "cnn_step5-2-step3-always.json" in failed["cnn_step5-2-step3-always.json"]
        assert "\n" not in failed["cnn_step5-2-step3-always.json"]
    else:
        assert failed == {}


@pytest.mark.slow
def test_cli_target_size(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["split", str(CNN), "-o", str(tmp_path), "--target-size",
                                 "2 parsecs"])
    assert result.exit_code == 2 and "--target-size" in result.output
    result = runner.invoke(app, ["split", str(CNN), "-o", str(tmp_path), "--by", "time=10us",
                                 "--target-size", "200kB"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert f"wrote {len(manifest['pieces'])} pieces, overview.pftrace and manifest.json" \
        in result.output


class Recorder:
    """A pool that notes, at each submit, what is on disk (and converts in-process)."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.tasks, self.seen = folder, [], []

    def submit(self, task: Task) -> None:
        self.seen.append((Path(task.path).exists(),
                          sorted(p.name for p in self.folder.glob("*.json"))))
        self.tasks.append(task)

    def results(self):
        return map(convert_one, self.tasks)


def test_each_piece_goes_to_the_workers_as_soon_as_it_is_written(tmp_path, monkeypatch):
    import contextlib

    import traceconv.batch

    recorder = Recorder(tmp_path)
    monkeypatch.setattr(traceconv.batch, "open_pool",
                        lambda *a, **k: contextlib.nullcontext(recorder))
    manifest = split(CNN, tmp_path, by="step", then="perfetto", target_size=0)
    files = [p["file"] for p in manifest["pieces"]]
    # each piece is submitted complete, when only the pieces submitted before it (and
    # no manifest) are on disk (in the order they are complete: splitting/ready.py)
    submitted = [Path(task.path).name for task in recorder.tasks]
    assert sorted(submitted) == sorted(files)
    assert [exists for exists, _ in recorder.seen] == [True] * len(files)
    assert [names for _, names in recorder.seen] == [sorted(submitted[:k + 1])
                                                     for k in range(len(files))]
    assert all(p["converted"].endswith(".pftrace") for p in manifest["pieces"])


@pytest.mark.slow
@pytest.mark.parametrize("always", [False, True])
def test_a_dask_worker_that_dies_is_retried_once_then_named(tmp_path, always):
    pytest.importorskip("dask.distributed")
    outdir = tmp_path / "out"
    manifest = split(CNN, outdir, by="step", overview=False)
    files = [str(outdir / p["file"]) for p in manifest["pieces"]][1:3]   # step2, step3
    if always:
        os.rename(files[1], files[1].replace("step3", "step3-always"))
        files[1] = files[1].replace("step3", "step3-always")
    files.append(str(outdir / manifest["pieces"][3]["file"]))   # step4, after step3
    with open_pool(dies_on_step3, "dask", jobs=1) as pool:
        # all at once: the healthy pieces wait at the scheduler while step3 kills the
        # worker (a worker holds only the task it runs), so none is lost with it
        for task in plan(files, str(outdir), "perfetto"):
            pool.submit(task)
        results = {Path(r.file).name: r for r in pool.results()}
    failed = {name: r.error for name, r in results.items() if r.status != "ok"}
    assert len(results) == 3
    if always:
        assert list(failed) == ["cnn_step5-2-step3-always.json"]
        assert "\n" not in failed["cnn_step5-2-step3-always.json"]
    else:
        assert failed == {}


@pytest.mark.parametrize("full_at", ["routing", "third piece"])
def test_a_full_disk_is_one_line_and_leaves_no_manifest(tmp_path, monkeypatch, full_at):
    """The disk fills while events are routed (no piece appears) or while the third piece
    is ended (the two before it are in place, whole; the third never appears)."""
    import errno
    import io

    from traceconv import output_files

    ends = []

    class Disk(io.FileIO):   # a scratch file on a disk that fills up
        def write(self, data):
            end = bytes(data).endswith(b"\n]}\n")
            if full_at == "routing" or end and len(ends) == 2:
                raise OSError(errno.ENOSPC, "No space left on device")
            ends.extend([self.name] if end else [])
            return super().write(data)

    # (the output layer's own handling runs: only the write to its scratch file fails)
    monkeypatch.setattr(output_files, "open", lambda fd, mode, buffering: Disk(fd, "a"),
                        raising=False)
    result = CliRunner().invoke(app, ["split", str(CNN), "-o", str(tmp_path)])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("traceconv: error:"), result.output
    assert "No space left" in lines[0] or "no space" in lines[0].lower()
    assert not (tmp_path / "manifest.json").exists()
    names = sorted(p.name for p in tmp_path.iterdir())
    if full_at == "routing":
        assert names == []
    else:   # the pieces in place before it are whole JSON; the third was never left behind
        pieces = {"cnn_step5-0-before.json", "cnn_step5-1-step2.json",
                  "cnn_step5-2-step3.json", "cnn_step5-3-step4.json"}
        assert len(names) == 2 and set(names) < pieces
        assert all(events_of(tmp_path / name) for name in names)

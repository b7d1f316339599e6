"""``traceconv batch``: the same bytes on every engine, bad files reported, --merge."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from traceconv.batch import plan
from traceconv.cli import app

RANKS = [f"torch/ddp_gloo_rank{r}.pt.trace.json.gz" for r in range(4)]


def run(*args: str):
    return CliRunner().invoke(app, ["batch", *args])


@pytest.fixture(scope="module")
def inputs(samples: Path) -> list[str]:
    return [str(samples / r) for r in RANKS] + [str(samples / "torch/cnn_step5.pt.trace.json")]


def outputs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.slow
def test_local_and_dask_write_identical_files(tmp_path: Path, inputs: list[str]):
    runs = {}
    for name, options in (("serial", ["-j", "1"]), ("pool", ["-j", "2"]),
                          ("dask", ["--engine", "dask", "-j", "2"])):
        result = run(*inputs, "-o", str(tmp_path / name), "--to", "perfetto", *options, "--json")
        assert result.exit_code == 0, result.output
        report = orjson.loads(result.stdout)
        assert report["failed"] == 0 and [r["status"] for r in report["results"]] == ["ok"] * 5
        runs[name] = outputs(tmp_path / name)
    assert len(runs["serial"]) == 5
    assert runs["serial"] == runs["pool"] == runs["dask"]


def test_same_bytes_as_convert(tmp_path: Path, inputs: list[str]):
    assert run(inputs[0], "-o", str(tmp_path / "b"), "--to", "perfetto", "-j", "1").exit_code == 0
    single = tmp_path / "single.pftrace"
    assert CliRunner().invoke(app, [inputs[0], "-o", str(single)]).exit_code == 0
    assert (tmp_path / "b" / "ddp_gloo_rank0.pftrace").read_bytes() == single.read_bytes()


@pytest.mark.slow
def test_a_bad_file_is_reported_and_the_rest_go_on(tmp_path: Path, inputs: list[str]):
    bad = tmp_path / "broken.json"
    bad.write_bytes(b'{"traceEvents": [{"ph": "X", "ts": ]}')
    result = run(inputs[0], str(bad), inputs[1], "-o", str(tmp_path / "out"),
                 "--to", "chrome", "-j", "2", "--json")
    assert result.exit_code == 1
    report = orjson.loads(result.stdout)
    assert [r["status"] for r in report["results"]] == ["ok", "failed", "ok"]
    assert report["failed"] == 1 and "broken.json" in report["results"][1]["error"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "ddp_gloo_rank0.json", "ddp_gloo_rank1.json"]
    errors = [line for line in result.stderr.splitlines() if line.startswith("traceconv: error")]
    assert len(errors) == 1 and "broken.json" in errors[0] and "Traceback" not in result.output


@pytest.mark.slow
def test_merge_writes_the_aligned_trace_convert_would(tmp_path: Path, inputs: list[str]):
    ranks = inputs[:4]
    result = run(*ranks, "-o", str(tmp_path / "m"), "--to", "perfetto", "--merge", "-j", "2")
    assert result.exit_code == 0, result.output
    assert "(merged)" in result.stdout
    reference = tmp_path / "reference.pftrace"
    assert CliRunner().invoke(app, [*ranks, "-o", str(reference)]).exit_code == 0
    assert (tmp_path / "m" / "merged.pftrace").read_bytes() == reference.read_bytes()


def test_output_names_never_collide():
    tasks = plan(["a/x.json", "b/x.json.gz", "c/x.pt.trace.json"], "out", "chrome")
    assert [t.output for t in tasks] == ["out/x.json", "out/x-2.json", "out/x-3.json"]


@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="ray is installed")
def test_missing_engine_says_what_to_install(tmp_path: Path, inputs: list[str]):
    result = run(inputs[0], "-o", str(tmp_path), "--to", "chrome", "--engine", "ray")
    assert result.exit_code == 1
    assert "pip install 'traceconv[ray]'" in result.stderr and "Traceback" not in result.output


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is an optional extra")
def test_ray_writes_the_same_files(tmp_path: Path, inputs: list[str]):
    for name, options in (("local", ["-j", "1"]), ("ray", ["--engine", "ray", "-j", "2"])):
        result = run(*inputs[:2], "-o", str(tmp_path / name), "--to", "chrome", *options)
        assert result.exit_code == 0, result.output
    assert outputs(tmp_path / "local") == outputs(tmp_path / "ray")


def test_never_overwrites_an_input(tmp_path: Path, samples: Path):
    src = tmp_path / "cnn.json"
    src.write_bytes((samples / "torch/cnn_step5.pt.trace.json").read_bytes())
    before = src.read_bytes()
    # the shared naming rule (traceconv.outputs) steps aside: cnn.json -> cnn.chrome.json
    result = run(str(src), "-o", str(tmp_path), "--to", "chrome", "-j", "1")
    assert result.exit_code == 0, result.output
    assert src.read_bytes() == before
    assert orjson.loads((tmp_path / "cnn.chrome.json").read_bytes())["traceEvents"]


def test_trimming_applies_to_each_input(tmp_path: Path, inputs: list[str]):
    assert run(inputs[4], "-o", str(tmp_path / "b"), "--to", "chrome", "-j", "1",
               "--window", "100ms:200ms", "--only", "^aten::conv").exit_code == 0
    single = tmp_path / "single.json"
    assert CliRunner().invoke(app, [inputs[4], "--window", "100ms:200ms", "--only",
                                    "^aten::conv", "-o", str(single)]).exit_code == 0
    assert (tmp_path / "b" / "cnn_step5.json").read_bytes() == single.read_bytes()
